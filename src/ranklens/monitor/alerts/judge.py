"""Monitors: compare each window of a series with its baseline and judge it (fires, or not, or not judged).

The monitors read reports, not the database: :func:`judge` and :func:`run_monitors` take any object with the
methods of :class:`ReportSource` (the store's :class:`~ranklens.monitor.reports.reports.Reports` is one). The
alerts' lifecycle (open, resolved) is :mod:`ranklens.monitor.alerts.lifecycle`; the webhook
:mod:`ranklens.monitor.alerts.webhook`.
"""

from __future__ import annotations

import datetime as _dt
import functools
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np

from ..._base.renamed import module_aliases
from ...errors import InputError
from ..config import Baseline, MonitorConfig, MonitorSpec
from ..reports.aggregates import StoreAggregate
from ..reports.search import cell_name, crosses, rank_cells, top_entry
from ..reports.slices import NothingToSearch, auto_cells
from ..reports.stats import welch
from ..storage.params import measure_keys, parse_time, series_where, window_delta

__all__ = ["Alert", "ReportSource", "Verdict", "floor_time", "judge", "run_monitors"]


class ReportSource(Protocol):
    """What the monitors read: the configuration, the last time, a report, values of a selection, slices."""

    config: MonitorConfig

    def last_time(self) -> _dt.datetime | None: ...

    def report(self, metrics: Any = ..., window: str = ..., by: Any = ..., where: Mapping[str, Any] | None = ...,
               start: Any = ..., end: Any = ..., *, ci: str | None = ...) -> Any: ...

    def values(self, measure: str, where: Mapping[str, Any] | None, start: Any,
               end: Any) -> tuple[np.ndarray, np.ndarray | None]: ...

    def slices(self, measure: str = ..., start: Any = ..., end: Any = ..., baseline: Any = ...,
               columns: Any = ..., where: Mapping[str, Any] | None = ..., *, by: Any = ..., depth: int = ...,
               min_support: int = ..., correction: str = ...) -> Any: ...

    def series_baseline(self, measure: str, where: Mapping[str, Any] | None, w0: Any = ..., w1: Any = ...,
                        baseline: Any = ...) -> tuple[tuple[np.ndarray, np.ndarray | None], Any]: ...


@dataclass(frozen=True)
class Alert:
    """A monitor that fired for one window of one series (or one slice of it: ``series["slice"]``).

    ``kind`` is what the monitor watches (``"measure"``, ``"signal"``, ``"quality"``), ``severity`` its
    monitor's; ``extra`` holds ``top_slices`` (the root cause: the slices behind it, most harmful first, as
    :data:`ranklens.monitor.reports.search.TOP_FIELDS`) and, once the lifecycle saw it, ``status``,
    ``alert_id`` and ``opened_window``.
    """

    monitor: str
    metric: str
    window_start: str
    window_end: str
    series: dict[str, Any]
    value: float
    baseline: float
    baseline_spec: str
    threshold: float
    n_groups: int
    n_baseline: int
    p_value: float | None
    reason: str
    relative_change: float = math.nan
    extra: dict[str, Any] = field(default_factory=dict)
    kind: str = "measure"
    severity: str = "warning"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for k, v in list(d.items()):
            if isinstance(v, float) and math.isnan(v):
                d[k] = None
        extra = d.pop("extra")
        d.update(extra)
        return d


def floor_time(t: _dt.datetime, window: str) -> _dt.datetime:
    """Start of the hour, day or (ISO, Monday) week holding ``t``, as DuckDB's ``date_trunc``."""
    if window == "hour":
        return t.replace(minute=0, second=0, microsecond=0)
    d = t.replace(hour=0, minute=0, second=0, microsecond=0)
    return d - _dt.timedelta(days=d.weekday()) if window == "week" else d


def _iso(t: Any) -> str:
    return t.isoformat() if hasattr(t, "isoformat") else str(t)


def _fire(spec: MonitorSpec, value: float, base: float) -> tuple[bool, float, str]:
    """(fires, effective threshold, reason) for one window: the strictest limit given decides."""
    return crosses(value, base, threshold=spec.threshold, relative_drop=spec.relative_drop,
                   absolute_drop=spec.absolute_drop)


@dataclass(frozen=True)
class Verdict:
    """One monitor's verdict on one window of one series (or slice).

    ``status`` is ``"fired"`` (``alert`` holds the alert), ``"ok"`` (judged, the condition does not hold),
    ``"provisional"`` (the window's labels are not mature: not judged), ``"too few groups"`` (fewer
    counted lists than ``min_groups``: not judged), ``"no baseline"`` (not judged), ``"nothing to search"`` (an
    automatic-slice monitor with no slice column left to search: every one it names is fixed in the series by
    its ``by`` or ``where``, or the store has none; not judged) or ``"incomplete"`` (a count over a window the
    store has not seen to its end: not judged).
    """

    monitor: str
    metric: str
    series: dict[str, Any]
    window_start: _dt.datetime
    window_end: _dt.datetime
    status: str
    alert: Alert | None = None
    value: float = math.nan
    baseline: float = math.nan
    baseline_spec: str = ""
    threshold: float = math.nan
    n_groups: int = 0
    n_baseline: int = 0
    p_value: float | None = None
    reason: str = ""
    kind: str = "measure"
    severity: str = "warning"

    @property
    def judged(self) -> bool:
        """The window was judged (fired or ok); the others change no alert's state."""
        return self.status in ("fired", "ok")


def run_monitors(reports: ReportSource, at: Any = None, *, all_windows: bool = False, start: Any = None,
                 end: Any = None, monitors: Any = None) -> list[Alert]:
    """Evaluate ``reports.config.monitors`` (or ``monitors``) and return the alerts that fire.

    By default each monitor looks at the last window in the store (``at`` picks the window holding that
    time; ``all_windows`` every window in ``[start, end)``). Provisional windows (labels not mature) are
    never judged: see :func:`judge` for every verdict, including the windows left out and why.
    """
    return [j.alert for j in judge(reports, at, all_windows=all_windows, start=start, end=end, monitors=monitors)
            if j.alert is not None]


def judge(reports: ReportSource, at: Any = None, *, all_windows: bool = False, start: Any = None,
          end: Any = None, monitors: Any = None, mature_until: _dt.datetime | None = None) -> list[Verdict]:
    """Every monitor's verdict on each window (and series) it looks at, in window order per monitor.

    Parameters are those of :func:`run_monitors`; with ``mature_until`` (and neither ``at`` nor
    ``all_windows``) each monitor looks at its last window ending at or before that time (its latest
    mature window) instead of the last window in the store. A window whose report row is ``provisional``
    is not judged (status ``"provisional"``), nor one with fewer than ``min_groups`` counted lists.
    """
    specs = list(monitors if monitors is not None else reports.config.monitors)
    if not specs:
        raise InputError("no monitors are configured: add [[monitors]] to ranklens.toml (see docs/monitoring.md).")
    last = reports.last_time()
    if last is None:
        raise InputError("the store is empty: ingest events first.")
    out: list[Verdict] = []
    for spec in specs:
        key = measure_keys(spec.metric)[0]
        agg = StoreAggregate.of(key)
        delta = window_delta(spec.window)
        if all_windows:
            s, e = parse_time(start, "start"), parse_time(end, "end")
        elif at is None and mature_until is not None:
            e = floor_time(mature_until, spec.window)  # [e - delta, e) is the last window ending by then
            s = e - delta
        else:
            t = parse_time(at, "at") or last
            s = floor_time(t, spec.window)
            e = s + delta
        rep = reports.report([key], window=spec.window, by=spec.by, where=spec.where, start=s, end=e, ci=None)
        bspec: Baseline = spec.baseline or reports.config.baseline
        base_cache: dict[Any, Any] = {}
        for row in rep.to_pylist():
            series = {b: row[b] for b in spec.by}
            w0 = row["window"]
            w1 = w0 + delta
            verdict = functools.partial(Verdict, spec.name, key, series, w0, w1, severity=spec.severity)

            if row.get("provisional"):
                out.append(verdict("provisional"))
                continue
            if row["n_groups"] < spec.min_groups:
                out.append(verdict("too few groups"))
                continue
            where = series_where(spec.where, series)
            if spec.slices == "auto":  # each slice of the series judged on its own (reports/search.py)
                out.extend(_judge_slices(reports, spec, key, series, where, w0, w1, bspec))
                continue
            ck = (bspec, tuple(sorted((k, str(v)) for k, v in where.items())),
                  (w0, w1) if bspec.kind == "previous" else None)
            if ck not in base_cache:  # the baseline rule of the series: ranklens.monitor.reports.baseline
                base_cache[ck] = reports.series_baseline(key, where, w0, w1, bspec)[0]
            bvals, bw = base_cache[ck]
            if len(bvals) == 0:
                out.append(verdict("no baseline"))
                continue
            base = agg.value(bvals, bw)
            value = float(row["value"])
            fires, thr, why = _fire(spec, value, base)
            p = None
            if fires and spec.significance is not None:
                wvals, ww = reports.values(key, where, w0, w1)
                if len(wvals) > 1 and len(bvals) > 1:  # on the aggregate's test values (gm_map: the logarithms)
                    p = welch(agg.test_values(wvals, ww), agg.test_values(bvals, bw), alternative="less")["p_value"]
                    fires = p < spec.significance
                else:
                    fires = False
            if not fires:
                ok = f"{key} = {value:.4f} over {row['n_groups']} groups, not {why}" if why else ""
                if ok and p is not None:
                    ok += f" with significance (Welch p = {p:.3g} >= {spec.significance:g})"
                out.append(verdict("ok", None, value, base, bspec.describe(), thr, int(row["n_groups"]), len(bvals),
                                   p, ok))
                continue
            top = _top_slices(reports, key, w0, w1, bspec, where, spec.min_support)
            out.append(verdict("fired", Alert(
                monitor=spec.name, metric=key, window_start=_iso(w0), window_end=_iso(w1), series=series,
                value=value, baseline=base, baseline_spec=bspec.describe(), threshold=thr,
                n_groups=int(row["n_groups"]), n_baseline=len(bvals), p_value=p,
                reason=f"{key} = {value:.4f} over {row['n_groups']} groups, {why}"
                + (f" (Welch p = {p:.3g} < {spec.significance:g})" if p is not None else ""),
                relative_change=(value - base) / base if base else math.nan,
                extra={"top_slices": top}, severity=spec.severity,
            )))
    return out


def _top_slices(reports: ReportSource, key: str, w0: Any, w1: Any, bspec: Baseline, where: dict[str, Any],
                min_support: int, n: int = 3) -> list[dict[str, Any]]:
    """The slices (values, and pairs of values) contributing most to the drop of this window: the root cause,
    by the slice search (:mod:`ranklens.monitor.reports.search`)."""
    try:
        tab = reports.slices(key, start=w0, end=w1, baseline=bspec, where=where, min_support=min_support)
    except InputError:  # no slice columns, or nothing counted on one side
        return []
    return [top_entry(r) for r in rank_cells(tab.to_pylist(), lambda r: r["contribution"], n)]


def _judge_slices(reports: ReportSource, spec: MonitorSpec, key: str, series: dict[str, Any], where: dict[str, Any],
                  w0: Any, w1: Any, bspec: Baseline) -> list[Verdict]:
    """An automatic-slice monitor on one window of one series: every slice with the support, against its own
    baseline, the p-values of their drops adjusted together; a verdict per slice tested."""
    try:
        tab = reports.slices(key, start=w0, end=w1, baseline=bspec, columns=spec.columns, where=where, by=(),
                             depth=spec.max_columns, min_support=spec.min_support, correction=spec.correction)
    except NothingToSearch as exc:  # e.g. `columns` names only the series' split column
        return [Verdict(spec.name, key, series, w0, w1, "nothing to search", severity=spec.severity,
                        reason=f"{spec.name}: {exc}")]
    except InputError:
        return [Verdict(spec.name, key, series, w0, w1, "no baseline", severity=spec.severity)]
    rows = [r for r in tab.to_pylist() if r]
    cells = auto_cells(rows, spec.correction, threshold=spec.threshold, relative_drop=spec.relative_drop,
                       absolute_drop=spec.absolute_drop, significance=spec.significance)
    tested = sum(1 for c in cells if not math.isnan(c["p_drop"]))
    how = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "not"}[spec.correction]
    out = []
    for c in cells:
        name = cell_name(c)
        common = {"value": float(c["window_value"]), "baseline": float(c["baseline_value"]),
                  "baseline_spec": f"{bspec.describe()}, {name}", "threshold": float(c["limit"]),
                  "n_groups": int(c["n_window"]), "n_baseline": int(c["n_baseline"]), "p_value": c["p_drop_adjusted"]}
        p = (f" (Welch p = {c['p_drop_adjusted']:.3g}, {how}-adjusted over {tested} slices"
             + (f", < {spec.significance:g})" if spec.significance is not None else ")"))
        head = f"{key} in {name} = {c['window_value']:.4f} over {c['n_window']} groups"
        cell_series = {**series, "slice": name}
        if not c["fires"]:
            out.append(Verdict(spec.name, key, cell_series, w0, w1, "ok", None, severity=spec.severity,
                               reason=f"{head}, not {c['why']}{p}" if c["why"] else head, **common))
            continue
        reason = f"{head}, {c['why'].replace('the baseline', 'its baseline')}{p}"
        alert = Alert(monitor=spec.name, metric=key, window_start=_iso(w0), window_end=_iso(w1), series=cell_series,
                      reason=reason, relative_change=float(c["relative_change"]),
                      extra={"top_slices": [top_entry(c)]}, severity=spec.severity, **common)
        out.append(Verdict(spec.name, key, cell_series, w0, w1, "fired", alert, severity=spec.severity,
                           reason=reason, **common))
    return out


__getattr__ = module_aliases(__name__, Judgement=("Verdict", Verdict))  # the old name, for one release
