"""Checks of the simulator's arguments: each error names the argument."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import InvalidParameterError

__all__ = ["check_date", "check_fraction", "check_int", "check_items", "check_slice", "epoch_ms", "fail"]


def fail(name: str, message: str) -> InvalidParameterError:
    """The error of argument ``name``."""
    return InvalidParameterError(f"`{name}` {message}")


#: The largest list a simulated group holds, and the most groups a simulation draws (per day or in all):
#: beyond them the arrays would not fit in memory.
MAX_ITEMS = 10_000
MAX_GROUPS = 10_000_000
MAX_DAYS = 36_600


def check_int(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise fail(name, f"must be an integer from {low} to {high}; got {value!r}.")
    return int(value)


def check_fraction(name: str, value: Any, high_open: bool) -> float:
    ok = isinstance(value, (int, float, np.floating)) and not isinstance(value, bool)
    if ok:
        v = float(value)
        ok = 0.0 <= v < 1.0 if high_open else 0.0 <= v <= 1.0
    if not ok:
        raise fail(name, f"must be a number in [0, 1{')' if high_open else ']'}; got {value!r}.")
    return float(value)


def check_date(name: str, value: Any) -> _dt.datetime:
    if isinstance(value, _dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(_dt.timezone.utc)
        return _dt.datetime(value.year, value.month, value.day)
    if isinstance(value, _dt.date):
        return _dt.datetime(value.year, value.month, value.day)
    if isinstance(value, str):
        try:
            return _dt.datetime.strptime(value.strip(), "%Y-%m-%d")
        except ValueError:
            pass
    raise fail(name, f"must be a date YYYY-MM-DD; got {value!r}.")


def epoch_ms(d: _dt.datetime) -> int:
    return (d - _dt.datetime(1970, 1, 1)) // _dt.timedelta(milliseconds=1)


def check_items(value: Any) -> tuple[int, int]:
    try:
        lo, hi = (int(v) for v in value)
    except (TypeError, ValueError):
        raise fail("items", f"must be a pair (min, max) of list lengths; got {value!r}.") from None
    if not 2 <= lo <= hi <= MAX_ITEMS:
        raise fail("items", f"must satisfy 2 <= min <= max <= {MAX_ITEMS} (a swap needs two items); got {value!r}.")
    return lo, hi


def check_slice(value: Any, slices: Mapping[str, Mapping[str, float]]) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise fail("decay_slice",
                   f"must be a mapping of slice column to value, e.g. {{'country': 'BR'}}; got {value!r}.")
    spec = {}
    for col, val in value.items():
        if col not in slices:
            raise fail("decay_slice", f"names an unknown slice column {col!r} (known: {', '.join(slices)}).")
        if val not in slices[col]:
            raise fail("decay_slice", f"value {val!r} is not a value of {col!r} ({', '.join(slices[col])}).")
        spec[str(col)] = str(val)
    return spec
