"""The checks of a monitor's keys (``[[monitors]]`` of ``ranklens.toml``, or a
:class:`~ranklens.monitor.config.MonitorSpec` made in Python): their types, then their values, each refusal one
line naming the monitor and the key.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._defs.conventions import is_finite_number
from .._input.validate import is_number
from ..errors import InvalidParameterError
from .kinds import SEVERITIES, check_limits
from .reports.search import MAX_COLUMNS

if TYPE_CHECKING:
    from .config import MonitorSpec

__all__ = ["WINDOWS", "check_monitor_types", "check_monitor_values", "key_names", "shown"]

#: The windows a monitor judges.
WINDOWS = ("hour", "day", "week")


def shown(v: Any) -> str:
    """``v`` as an error message shows it: its repr (cut at 60 characters), and a hint when it is a number quoted."""
    text = repr(v)
    hint = " (a string: write the number without quotes)" if isinstance(v, str) and is_number(v) else ""
    return (text if len(text) <= 60 else text[:57] + "...") + hint


def key_names(keys: Any) -> str:
    """The keys of a table, sorted, as an error message lists them: plainly, or by their repr when a key holds a
    character that would break the one line (a newline, a control character)."""
    return ", ".join(k if isinstance(k, str) and k.isprintable() else repr(k) for k in sorted(keys, key=str))


def check_monitor_types(m: MonitorSpec) -> None:
    """Refuse a monitor whose keys have the wrong type (a number written as a string, NaN, a list...), in one line
    naming the monitor and the key: the checks after this one compare and parse them."""
    if not isinstance(m.name, str) or not m.name.strip():
        raise InvalidParameterError(f"a monitor's `name` must be a non-empty string; got {shown(m.name)}.")
    who = f"monitor {m.name!r}"
    for key in ("metric", "window"):
        if not isinstance(getattr(m, key), str):
            raise InvalidParameterError(f"{who}: `{key}` must be a string; got {shown(getattr(m, key))}.")
    for key in ("threshold", "relative_drop", "absolute_drop", "significance"):
        v = getattr(m, key)
        if v is not None and not is_finite_number(v):
            raise InvalidParameterError(f"{who}: `{key}` must be a finite number; got {shown(v)}.")
    if isinstance(m.min_groups, bool) or not isinstance(m.min_groups, int):
        raise InvalidParameterError(f"{who}: `min_groups` must be an integer >= 1; got {shown(m.min_groups)}.")
    if not isinstance(m.where, Mapping) or not all(
            isinstance(k, str) and isinstance(v, (str, int, float)) and not isinstance(v, bool)
            and (not isinstance(v, float) or math.isfinite(v)) for k, v in m.where.items()):
        raise InvalidParameterError(f"{who}: `where` must be a table of column = value (a string or a number), "
                                    f"e.g. {{ environment = \"production\" }}; got {shown(m.where)}.")
    if not isinstance(m.by, tuple) or not all(isinstance(c, str) for c in m.by):
        raise InvalidParameterError(f"{who}: `by` must be a list of column names; got {shown(m.by)}.")


def check_monitor_values(m: MonitorSpec) -> None:
    """Refuse a monitor whose keys (of the right types, :func:`check_monitor_types`) have values out of range."""
    who = f"monitor {m.name!r}"
    if m.slices is not None and m.slices != "auto":
        raise InvalidParameterError(f"{who}: `slices` must be \"auto\"; got {m.slices!r}.")
    check_limits(m)  # by the rule of the monitor's kind (measure, signal, data quality)
    if m.window not in WINDOWS:
        raise InvalidParameterError(f"{who}: `window` must be hour, day or week; got {m.window!r}.")
    if m.threshold is None and m.relative_drop is None and m.absolute_drop is None:
        raise InvalidParameterError(f"{who}: give `threshold`, `relative_drop` or `absolute_drop`.")
    for k in ("relative_drop", "absolute_drop", "significance"):
        v = getattr(m, k)
        top = math.inf if k == "absolute_drop" else 1
        if v is not None and not (isinstance(v, (int, float)) and 0 < v < top):
            rng = "> 0" if k == "absolute_drop" else "in (0, 1)"
            raise InvalidParameterError(f"{who}: `{k}` must be a number {rng}; got {v!r}.")
    if not isinstance(m.min_groups, int) or m.min_groups < 1:
        raise InvalidParameterError(f"{who}: `min_groups` must be an integer >= 1.")
    if m.severity not in SEVERITIES:
        raise InvalidParameterError(f"{who}: `severity` must be one of {', '.join(SEVERITIES)}; got {m.severity!r}.")
    if isinstance(m.max_columns, bool) or not isinstance(m.max_columns, int) or not 1 <= m.max_columns <= MAX_COLUMNS:
        raise InvalidParameterError(f"{who}: `max_columns` must be an integer in [1, {MAX_COLUMNS}]; "
                                    f"got {m.max_columns!r}.")
    if isinstance(m.min_support, bool) or not isinstance(m.min_support, int) or m.min_support < 1:
        raise InvalidParameterError(f"{who}: `min_support` must be an integer >= 1.")
    if m.correction not in ("holm", "bh", "none"):
        raise InvalidParameterError(f"{who}: `correction` must be holm, bh or none; got {m.correction!r}.")
