"""The baseline of one series: the one rule the monitors, the overview and the slices share.

A series is a set of filter values (``{"model": "ranker", "model_version": "v2", "environment":
"production"}`` plus the monitor's or page's own filters). Its baseline, by the configured kind:

* ``environment`` (default ``training``): the same series in that environment (the filter
  ``environment`` replaced), all its time; when the series' model version has no such lists, the
  model's lists of that environment over all versions (``fallback`` says so);
* ``range``: the same series over the fixed ``[start, end)``;
* ``previous``: the same series over the window before the one judged.

:func:`baseline_candidates` lists the selections to try, in order; the first with a counted value is the
baseline (:meth:`ranklens.monitor.reports.reports.Reports.series_baseline` runs them).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import InvalidParameterError
from ..config import Baseline, MonitorConfig
from ..storage.values import select_values

__all__ = ["BaselineSelection", "baseline_candidates", "select_baseline"]


@dataclass(frozen=True)
class BaselineSelection:
    """The groups of a baseline: filters, time range, and how they were chosen (for the reader)."""

    where: dict[str, Any]
    start: Any
    end: Any
    fallback: bool = False

    def describe(self) -> str:
        """The selection in words: ``environment=training model=ranker model_version=v1``, a range, a note."""
        parts = [f"{k}={'(missing)' if v is None else v}" for k, v in self.where.items()]
        if self.start is not None or self.end is not None:
            parts.append(f"{_iso(self.start)}..{_iso(self.end)}")
        text = " ".join(parts) or "every group"
        return text + (" (the model's versions together: this version has none)" if self.fallback else "")


def _iso(t: Any) -> str:
    return t.isoformat() if isinstance(t, (_dt.date, _dt.datetime)) else str(t or "")


def baseline_candidates(spec: Baseline, where: Mapping[str, Any] | None, w0: Any = None,
                        w1: Any = None) -> list[BaselineSelection]:
    """The selections to try, in order, for the baseline of the series ``where`` judged over ``[w0, w1)``.

    Examples
    --------
    >>> from ranklens.monitor import Baseline
    >>> sel = baseline_candidates(Baseline(), {"model": "m", "model_version": "v2", "environment": "production"})
    >>> [s.describe() for s in sel]  # doctest: +NORMALIZE_WHITESPACE
    ['model=m model_version=v2 environment=training',
     "model=m environment=training (the model's versions together: this version has none)"]
    >>> import datetime as dt
    >>> d = dt.datetime(2026, 10, 2)
    >>> baseline_candidates(Baseline(kind="previous"), {"model": "m"}, d, d + dt.timedelta(days=1))[0].start
    datetime.datetime(2026, 10, 1, 0, 0)
    """
    w = dict(where or {})
    if spec.kind == "environment":
        bw = {k: v for k, v in w.items() if k != "environment"}
        bw["environment"] = spec.environment
        out = [BaselineSelection(bw, None, None)]
        if "model_version" in bw:
            out.append(BaselineSelection({k: v for k, v in bw.items() if k != "model_version"}, None, None,
                                         fallback=True))
        return out
    if spec.kind == "range":
        return [BaselineSelection(w, spec.start, spec.end)]
    if w0 is None or w1 is None:
        raise InvalidParameterError("a 'previous window' baseline depends on a window: give the window's start "
                                    "and end.")
    return [BaselineSelection(w, w0 - (w1 - w0), w0)]


def select_baseline(con: Any, config: MonitorConfig, keys: list[str], spec: Baseline, where: Mapping[str, Any] | None,
                    w0: Any = None, w1: Any = None, extra: Any = ()) -> tuple[Any, np.ndarray, BaselineSelection]:
    """(groups, values, selection) of the first candidate of :func:`baseline_candidates` with a counted value
    of ``keys[0]``; the last candidate (empty) when none has one."""
    cands = baseline_candidates(spec, where, w0, w1)
    for i, sel in enumerate(cands):
        groups, values = select_values(con, config, keys, sel.where, sel.start, sel.end, list(extra))
        if i == len(cands) - 1 or bool((~np.isnan(values[:, 0])).any()):
            return groups, values, sel
    raise AssertionError("unreachable")  # pragma: no cover
