"""Arguments shared by the store's readers and the monitors: times, windows, measure keys, baselines."""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

import numpy as np

from ...errors import InvalidParameterError
from ..propensity import parse_store_measure as parse_measure

__all__ = ["MAX_CUTOFF", "WINDOWS", "check_window", "measure_keys", "monitor_refusal", "parse_duration", "parse_time",
           "series_where",
           "renamed", "window_delta"]

WINDOWS = ("hour", "day", "week")
#: The largest cutoff a monitoring request may ask (``ndcg@1000``): a list is rarely longer, and a larger k only
#: costs time (the values are computed from the events when the measure is not tracked).
MAX_CUTOFF = 1000


def parse_time(value: Any, name: str) -> _dt.datetime | None:
    """A naive UTC datetime from an ISO text, a date, a datetime or a numpy datetime64 (None and "" give None).

    Examples
    --------
    >>> parse_time("2026-10-01T12:00:00+02:00", "start")
    datetime.datetime(2026, 10, 1, 10, 0)
    """
    if value is None or value == "":
        return None
    if isinstance(value, _dt.datetime):
        t = value
    elif isinstance(value, _dt.date):
        t = _dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            t = _dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidParameterError(
                f"`{name}` must be an ISO date or time like 2026-10-01; got {value!r}."
            ) from None
    elif isinstance(value, np.datetime64):
        t = value.astype("datetime64[us]").item()
    else:
        raise InvalidParameterError(f"`{name}` must be an ISO date or time; got {value!r}.")
    if t.tzinfo is not None:
        t = t.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    return t


def window_delta(window: str) -> _dt.timedelta:
    """The length of an hour, day or week window."""
    return {"hour": _dt.timedelta(hours=1), "day": _dt.timedelta(days=1), "week": _dt.timedelta(days=7)}[window]


def check_window(window: str) -> str:
    """``window`` when it is hour, day or week; else an error naming ``window``."""
    if window not in WINDOWS:
        raise InvalidParameterError(f"`window` must be hour, day or week; got {window!r}.")
    return window


def measure_keys(measures: Any, k: Any = None) -> list[str]:
    """Measure keys of ``measures`` (a name or a list); with ``k``, names without a cutoff are expanded (those
    of families that take one).

    Examples
    --------
    >>> measure_keys(["ndcg", "map@5"], k=[1, 10])
    ['ndcg@1', 'ndcg@10', 'map@5']
    """
    if isinstance(measures, str):
        measures = [measures]
    ks = [k] if isinstance(k, int) else list(k or [])
    for kk in ks:
        if isinstance(kk, bool) or not isinstance(kk, (int, np.integer)) or not 1 <= kk <= MAX_CUTOFF:
            raise InvalidParameterError(f"`k` must be an integer in [1, {MAX_CUTOFF}]; got {kk!r}.")
    keys: list[str] = []
    for m in measures:
        m = str(m)
        expand = ks and "@" not in m and "." not in m and parse_measure(m)[0].spec.cutoff  # bpref, auc: no k
        parsed = [x for kk in ks for x in parse_measure(f"{m}@{int(kk)}")] if expand else parse_measure(m)
        for x in parsed:
            if x.k is not None and x.k > MAX_CUTOFF:
                raise InvalidParameterError(f"measure {m!r} asks a cutoff of {x.k}: at most {MAX_CUTOFF} in "
                                            "monitoring.")
        keys.extend(x.key for x in parsed)
    if not keys:
        raise InvalidParameterError("`measures` must name at least one measure, e.g. 'ndcg@10'.")
    return list(dict.fromkeys(keys))


def monitor_refusal(key: str) -> str | None:
    """Why a monitor cannot watch measure ``key`` (None: it can).

    The store's reports give every measure with its own aggregate (:mod:`ranklens.monitor.reports.aggregates`);
    a monitor compares a window's aggregate with a baseline's, which means nothing for a count summed over
    the lists (``num_rel_ret``): a window's total grows with its traffic, and the baseline (another
    environment, range or window) served another number of lists.

    Examples
    --------
    >>> monitor_refusal("gm_map") is None, monitor_refusal("num_rel_ret")[:28]
    (True, 'is a count summed over lists')
    """
    if parse_measure(key)[0].spec.summed:
        return ("is a count summed over lists: a window's total grows with the lists it served, so comparing it "
                "with a baseline says nothing of quality; monitor a per-list rate (set_P, set_recall, P@k, "
                "recall@k) and read the totals with `ranklens monitor report`.")
    return None


def renamed(new: Any, old: Any, new_name: str, old_name: str, default: Any = None) -> Any:
    """The value of a keyword renamed by the one vocabulary (``docs/glossary.md``): ``new`` when given, else the
    old keyword's ``old`` with a DeprecationWarning naming the new one (giving both is an error).

    Examples
    --------
    >>> renamed(None, None, "measure", "metric", "ndcg@10")
    'ndcg@10'
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     renamed(None, "map", "measure", "metric"), str(w[0].message)
    ('map', '`metric=` is deprecated: use `measure=` (the old name goes in the next release).')
    """
    if old is None:
        return default if new is None else new
    if new is not None:
        raise InvalidParameterError(f"give `{new_name}=` only (`{old_name}=` is its deprecated name), not both.")
    import warnings

    warnings.warn(f"`{old_name}=` is deprecated: use `{new_name}=` (the old name goes in the next release).",
                  DeprecationWarning, stacklevel=3)
    return old


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(value: Any, name: str = "duration") -> _dt.timedelta:
    """A delay from ``"2d"``, ``"36h"``, ``"90m"``, ``"45s"``, ``"1w"`` (or ``"1d12h"``, or ``0``).

    Examples
    --------
    >>> parse_duration("2d"), parse_duration("1d12h")
    (datetime.timedelta(days=2), datetime.timedelta(days=1, seconds=43200))
    >>> parse_duration("two days", "[labels] maturity")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ranklens.errors.InvalidParameterError: [labels] maturity must be a duration like '2d', '36h' or '90m' ...
    """
    if isinstance(value, _dt.timedelta):
        if value < _dt.timedelta(0):
            raise InvalidParameterError(f"{name} must not be negative; got {value}.")
        return value
    if value == 0 and not isinstance(value, bool):
        return _dt.timedelta(0)
    text = value.strip().lower() if isinstance(value, str) else None
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([smhdw])", text) if text else []
    if not text or not parts or re.sub(r"(\d+(?:\.\d+)?)\s*([smhdw])", "", text).strip():
        raise InvalidParameterError(f"{name} must be a duration like '2d', '36h' or '90m' (units s, m, h, d, w); "
                                    f"got {value!r}.")
    seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    if seconds > 366 * 86400:
        raise InvalidParameterError(f"{name} must be at most a year; got {value!r}.")
    return _dt.timedelta(seconds=seconds)


def series_where(where: Any, series: Any) -> dict[str, Any]:
    """The selection of one series: ``where`` and the series' own values. A missing split value (None) selects
    the lists without a value in that column (``IS NULL``): such lists are a series of their own, judged against
    the lists without one in the baseline, never over every value of the column.

    Examples
    --------
    >>> series_where({"environment": "production"}, {"model": "m", "country": None})
    {'environment': 'production', 'model': 'm', 'country': None}
    """
    out = dict(where or {})
    out.update(series)
    return out
