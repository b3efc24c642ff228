"""Data-quality monitors: traffic volume, labels arriving, quarantined rows, partial lists, as alerts with the
same lifecycle as the others (:mod:`ranklens.monitor.kinds`, :mod:`ranklens.monitor.reports.quality`).

By default (no ``at``, no ``all_windows``) each monitor judges:

* ``volume``: the last *complete* window, the one before the window holding the store's last list (a count
  over a window still being served would look low);
* ``label_arrival``: the last mature window (labels arrive late: a younger window is provisional);
* ``quarantine_rate`` and ``partial_lists``: the window holding the latest rows (a share is meaningful
  on a window in progress: a bad file alerts as soon as it is ingested).

``volume`` and ``label_arrival`` fire when they fall below ``threshold`` or more than ``relative_drop`` /
``absolute_drop`` below their baseline (default ``trailing``: the same window of the 4 weeks before);
``quarantine_rate`` and ``partial_lists`` when they rise above ``threshold``. Shares over fewer than
``min_groups`` lists (rows for the quarantine) are not judged. Each alert names where the change is: the
slices that lost most lists (volume), that hold most of the partial or unlabelled lists, or the files whose
rows were quarantined most (``top_slices``, column ``source``).
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Sequence
from typing import Any

from ..config import Baseline, MonitorSpec
from ..kinds import quality_worse
from ..reports.quality import baseline_value, quality_cells, quality_report, quarantine_sources
from ..reports.search import crosses, rank_cells, top_entry
from ..storage.db import slice_columns
from ..storage.params import parse_time, series_where, window_delta
from .judge import Alert, Verdict, floor_time

__all__ = ["judge_quality_monitors"]

_UNITS = {"volume": "lists", "label_arrival": "lists", "partial_lists": "lists", "quarantine_rate": "rows"}


def _span(con: Any, spec: MonitorSpec, at: Any, all_windows: bool, start: Any, end: Any,
          mature_until: _dt.datetime | None) -> tuple[Any, Any]:
    """The windows ``[s, e)`` a monitor judges (see the module)."""
    delta = window_delta(spec.window)
    if all_windows:
        return parse_time(start, "start"), parse_time(end, "end")
    t = parse_time(at, "at")
    if t is not None:
        s = floor_time(t, spec.window)
        return s, s + delta
    if spec.metric == "quarantine_rate":
        last = con.execute("SELECT max(hour) FROM row_counts").fetchall()[0][0]
    else:
        last = con.execute("SELECT max(ts) FROM groups").fetchall()[0][0]
    if last is None:
        return None, None
    s = floor_time(last, spec.window)
    if spec.metric == "volume":
        s -= delta
    elif spec.metric == "label_arrival" and mature_until is not None:
        s = floor_time(mature_until, spec.window) - delta
    return s, s + delta


def _status(spec: MonitorSpec, w1: _dt.datetime, n: int, last_list: Any,
            mature_until: _dt.datetime | None) -> str | None:
    """Why a window is not judged (None: it is)."""
    if spec.metric == "volume" and (last_list is None or w1 > last_list):
        return "incomplete"
    if spec.metric == "label_arrival" and mature_until is not None and w1 > mature_until:
        return "provisional"
    if spec.metric != "volume" and n < spec.min_groups:
        return "too few groups"
    return None


def _top(con: Any, spec: MonitorSpec, bspec: Baseline, where: dict[str, Any], w0: Any, w1: Any
         ) -> tuple[list[dict[str, Any]], str]:
    """Where the change is (see the module), most harmful first, and a note for the reason."""
    if spec.metric == "quarantine_rate":
        out = []
        total = sum(r["n"] for r in quality_report(con, "quarantine_rate", spec.window, (), None, w0, w1).to_pylist())
        sources = quarantine_sources(con, w0, w1)
        for src in sources:
            out.append(top_entry({"column": "source", "value": src["source"], "window_value": src["share"],
                                  "share_window": src["rows"] / total if total else None, "n_window": src["rows"],
                                  "contribution": -src["quarantined"] / total if total else None}))
        if not sources:
            return out, ""
        first = sources[0]
        reasons = ", ".join(f"{n} {r}" for r, n in first["reasons"].items())
        return out, f"; most in source={first['source']} ({first['share']:.1%} of its {first['rows']} rows: {reasons})"
    cols = list(spec.columns or slice_columns(con))
    cells = quality_cells(con, spec.metric, spec.window, where, w0, bspec, cols, 2, min_support=1)
    top = [top_entry(c) for c in rank_cells(cells, lambda c: c["contribution"], 3)]
    return top, f"; most in {top[0]['slice']}" if top else ""


def judge_quality_monitors(db: Any, specs: Sequence[MonitorSpec], at: Any = None, *, all_windows: bool = False,
                           start: Any = None, end: Any = None, mature_until: _dt.datetime | None = None
                           ) -> list[Verdict]:
    """Every data-quality monitor's verdict on each window and series it looks at (the lifecycle's input)."""
    out: list[Verdict] = []
    with db.reading() as con:
        last_list = con.execute("SELECT max(ts) FROM groups").fetchall()[0][0]
        for spec in specs:
            metric, delta = spec.metric.strip().lower(), window_delta(spec.window)
            worse = quality_worse(metric)
            bspec = spec.baseline or Baseline(kind="trailing")
            s, e = _span(con, spec, at, all_windows, start, end, mature_until)
            if s is None and not all_windows:
                continue
            table = quality_report(con, metric, spec.window, spec.by, spec.where or None, s, e)
            for row in table.to_pylist():
                w0 = row["window"]
                w1 = w0 + delta
                series = {b: row[b] for b in spec.by}
                where = series_where(spec.where, series)
                value, n = float(row["value"]), int(row["n"])
                common: dict[str, Any] = {"kind": "quality", "severity": spec.severity, "n_groups": n}
                why_not = _status(spec, w1, n, last_list, mature_until)
                if why_not:
                    out.append(Verdict(spec.name, metric, series, w0, w1, why_not, **common))
                    continue
                base, n_base, desc = math.nan, 0, bspec.describe()
                if worse == "down" and (spec.relative_drop is not None or spec.absolute_drop is not None):
                    base, n_base = baseline_value(con, metric, bspec, spec.window, where, w0).get((), (math.nan, 0))
                    if math.isnan(base) and spec.threshold is None:
                        out.append(Verdict(spec.name, metric, series, w0, w1, "no baseline", **common))
                        continue
                if worse == "up":
                    fires, thr, why = value > float(spec.threshold or 0), float(spec.threshold or 0), \
                        f"above the threshold {spec.threshold:g}"
                else:
                    fires, thr, why = crosses(value, base, threshold=spec.threshold, relative_drop=spec.relative_drop,
                                              absolute_drop=spec.absolute_drop)
                shown = f"{value:.0f}" if metric == "volume" else f"{value:.4f}"
                head = f"{metric} = {shown} over {n} {_UNITS[metric]}"
                common.update(value=value, baseline=base, baseline_spec=desc, threshold=thr, n_baseline=n_base)
                if not fires:
                    out.append(Verdict(spec.name, metric, series, w0, w1, "ok", reason=f"{head}, not {why}", **common))
                    continue
                top, most = _top(con, spec, bspec, where, w0, w1)
                reason = f"{head}, {why}{most}"
                alert = Alert(monitor=spec.name, metric=metric, window_start=w0.isoformat(),
                              window_end=w1.isoformat(), series=series, value=value, baseline=base,
                              baseline_spec=desc, threshold=thr, n_groups=n, n_baseline=n_base, p_value=None,
                              reason=reason, relative_change=(value - base) / base if base else math.nan,
                              extra={"top_slices": top}, kind="quality", severity=spec.severity)
                out.append(Verdict(spec.name, metric, series, w0, w1, "fired", alert, reason=reason, **common))
    return out
