"""Monitors on the label-free signals: a ``[[monitors]]`` entry whose ``metric`` is a signal.

``metric = "psi(score)"`` (or ``ks(score)``, ``psi(position)``, ``psi(popularity@10)``, ``coverage@10``,
``gini``, ``novelty@10``, ``ild@10``...) watches the signal of each window of each series against the
same baseline as the NDCG monitors. Distances and ``gini`` fire when the value rises above
``threshold`` (``ks(score)`` also needs ``p < significance`` when given); ``coverage``, ``novelty`` and
``ild`` when it falls below ``threshold`` or more than ``relative_drop`` / ``absolute_drop`` below the
baseline's own value. Windows with fewer than ``min_groups`` served lists are not judged.

Signals need no labels: their windows are never provisional, and they fire as soon as the lists are
served, a label delay before the NDCG of the same window can. Alerts are the same
:class:`~ranklens.monitor.alerts.Alert` records as the NDCG monitors'.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..alerts.judge import Alert, Verdict, floor_time
from ..config import Baseline, MonitorSpec
from ..reports.search import crosses, rank_cells, searched_columns, slice_definitions, top_entry
from ..reports.slices import adjust_p
from ..storage.params import parse_time, series_where, window_delta
from .names import is_signal, parse_signal

__all__ = ["judge_signal_monitors", "run_signal_monitors", "signal_specs"]


def signal_specs(specs: Sequence[MonitorSpec]) -> tuple[list[MonitorSpec], list[MonitorSpec]]:
    """(monitors on measures, monitors on signals) of a configuration, in their order."""
    return [s for s in specs if not is_signal(s.metric)], [s for s in specs if is_signal(s.metric)]


def _limit(spec: MonitorSpec, worse: str, value: float, base: float) -> tuple[bool, float, str]:
    """(fires, effective limit, why) for one window of a signal."""
    if worse == "up":
        thr = float(spec.threshold) if spec.threshold is not None else math.nan
        return bool(value > thr), thr, f"above the threshold {thr:g}"
    return crosses(value, base, threshold=spec.threshold, relative_drop=spec.relative_drop,
                   absolute_drop=spec.absolute_drop)


def _top_slices(compute: Callable[..., Any], sig: Any, spec: MonitorSpec, bspec: Baseline, series: dict[str, Any],
                w0: Any, w1: Any, slices: Sequence[str], n_lists: int, n: int = 3) -> list[dict[str, Any]]:
    """Where the signal moved: the slice search (:mod:`ranklens.monitor.reports.search`) over the values of the
    slice columns and their pairs, each slice's rows against its own baseline (its lists in the series'
    baseline), over at least ``min_support`` lists; ks p-values Holm-adjusted over the slices tested. Ranked by
    the signal (a distance, or the gap to the slice's baseline the worse way) times the slice's share of the
    series' lists: a slice that holds the whole shift outranks its parts (``device=mobile`` before
    ``country=US device=mobile`` when every mobile list moved), and a pair that concentrates it outranks its
    columns (``country=DE device=mobile`` before ``country=DE`` when only that pair moved)."""
    where = series_where(spec.where, series)
    cols = searched_columns(slices, where, spec.by)  # never a column the series fixes
    cells: list[dict[str, Any]] = []
    for d in slice_definitions(cols, 2):
        rows = compute([sig.key], window=spec.window, by=list(d), where=where, start=w0, end=w1,
                       baseline=bspec).to_pylist()
        for r in rows:
            if r["value"] is None or r["n_groups"] < spec.min_support or any(r[c] is None for c in d):
                continue
            base = None if sig.is_distance else r["baseline"]
            gap = r["value"] if sig.is_distance else (r["value"] - base if base is not None else math.nan)
            share = r["n_groups"] / n_lists if n_lists else math.nan
            cells.append({"column": d[0], "value": r[d[0]], "column2": d[1] if len(d) > 1 else None,
                          "value2": r[d[1]] if len(d) > 1 else None, "window_value": r["value"],
                          "baseline_value": base, "change": None if sig.is_distance else gap,
                          "share_window": share, "n_window": r["n_groups"],
                          "n_baseline": r["n_baseline"], "p_value": r["p_value"],
                          "_harm": (-gap if sig.worse == "up" else gap) * share})
    p = np.array([math.nan if c["p_value"] is None else c["p_value"] for c in cells], dtype=np.float64)
    for c, a in zip(cells, adjust_p(p, "holm") if len(p) else p, strict=True):
        c["p_adjusted"] = None if math.isnan(a) else float(a)
    return [top_entry(c, signal=sig.key) for c in rank_cells(cells, lambda c: c["_harm"], n)]


def judge_signal_monitors(compute: Callable[..., Any], specs: Sequence[MonitorSpec], default_baseline: Baseline,
                          last: _dt.datetime, at: Any = None, *, all_windows: bool = False, start: Any = None,
                          end: Any = None, slices: Sequence[str] = ()) -> list[Verdict]:
    """Every signal monitor's verdict on each window and series it looks at (the lifecycle's input).

    ``compute`` is :meth:`ranklens.monitor.Store.signals`. By default each monitor looks at the last
    window in the store (``at`` picks the window holding that time; ``all_windows`` every window in
    ``[start, end)``): signals need no labels, so no window is provisional. A window with fewer than
    ``min_groups`` lists (or no value: no score, no baseline) is ``"too few groups"``; otherwise it is
    ``"fired"`` (with its :class:`Alert`, whose ``top_slices`` name the slices, values of the ``slices``
    columns and their pairs, where the signal is worst, each against its own baseline) or ``"ok"``.
    """
    out: list[Verdict] = []
    for spec in specs:
        sig = parse_signal(spec.metric)
        delta = window_delta(spec.window)
        if all_windows:
            s, e = parse_time(start, "start"), parse_time(end, "end")
        else:
            s = floor_time(parse_time(at, "at") or last, spec.window)
            e = s + delta
        bspec = spec.baseline or default_baseline
        table = compute([sig.key], window=spec.window, by=spec.by, where=spec.where, start=s, end=e, baseline=bspec)
        for row in table.to_pylist():
            w0 = row["window"]
            series = {b: row[b] for b in spec.by}
            value = row["value"]
            base = math.nan if row["baseline"] is None else float(row["baseline"])
            common = {"monitor": spec.name, "metric": sig.key, "series": series, "window_start": w0,
                      "window_end": w0 + delta, "baseline": base, "baseline_spec": bspec.describe(),
                      "kind": "signal", "severity": spec.severity,
                      "n_groups": int(row["n_groups"]), "n_baseline": int(row["n_baseline"]), "p_value": row["p_value"]}
            if value is None or row["n_groups"] < spec.min_groups:
                why = "no value" if value is None else f"{row['n_groups']} lists < min_groups {spec.min_groups}"
                out.append(Verdict(status="too few groups", reason=f"{sig.key}: {why}", **common))
                continue
            fires, thr, why = _limit(spec, sig.worse, float(value), base)
            p = row["p_value"]
            if fires and spec.significance is not None:
                fires = p is not None and p < spec.significance
            counted = "scores" if sig.argument == "score" else "lists" if sig.kind in ("novelty", "ild") else \
                "items" if sig.kind in ("coverage", "gini") else "rows"
            if not fires:
                out.append(Verdict(status="ok", value=float(value), threshold=thr,
                                     reason=f"{sig.key} = {value:.4f} over {row['n_groups']} lists ({row['n']} "
                                            f"{counted}): within the limit", **common))
                continue
            top = _top_slices(compute, sig, spec, bspec, series, w0, w0 + delta, slices, int(row["n_groups"]))
            where_most = (f"; most in {top[0]['slice']} ({sig.key} = {top[0]['window_value']:.4f} over "
                          f"{top[0]['n_window']} lists)") if top else ""
            reason = (f"{sig.key} = {value:.4f} over {row['n_groups']} lists ({row['n']} {counted}), {why}"
                      + (f" (p = {p:.3g} < {spec.significance:g})" if p is not None and spec.significance is not None
                         else "") + where_most + "; label-free")
            alert = Alert(
                monitor=spec.name, metric=sig.key, window_start=w0.isoformat(), window_end=(w0 + delta).isoformat(),
                series=series, value=float(value), baseline=base, baseline_spec=bspec.describe(), threshold=thr,
                n_groups=int(row["n_groups"]), n_baseline=int(row["n_baseline"]), p_value=p, reason=reason,
                relative_change=(float(value) - base) / base if base and not math.isnan(base) else math.nan,
                extra={"signal": {"counted": row["n"], "excluded": row["n_excluded"], "label_free": True},
                       "top_slices": top}, kind="signal", severity=spec.severity,
            )
            out.append(Verdict(status="fired", alert=alert, value=float(value), threshold=thr, reason=reason,
                                 **common))
    return out


def run_signal_monitors(compute: Callable[..., Any], specs: Sequence[MonitorSpec], default_baseline: Baseline,
                        last: _dt.datetime, at: Any = None, *, all_windows: bool = False, start: Any = None,
                        end: Any = None, slices: Sequence[str] = ()) -> list[Alert]:
    """The alerts of :func:`judge_signal_monitors` (its ``"fired"`` verdicts)."""
    return [j.alert for j in judge_signal_monitors(compute, specs, default_baseline, last, at, all_windows=all_windows,
                                                   start=start, end=end, slices=slices) if j.alert is not None]
