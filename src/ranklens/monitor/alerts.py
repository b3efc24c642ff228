"""Monitors: compare each window of a series with its baseline, fire alerts, send them to a webhook."""

from __future__ import annotations

import datetime as _dt
import json
import math
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from .config import Baseline, MonitorSpec

__all__ = ["Alert", "run_monitors", "send_webhook"]


@dataclass(frozen=True)
class Alert:
    """A monitor that fired for one window of one series."""

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
    """(fires, effective threshold, reason) for one window."""
    limits = []
    if spec.threshold is not None:
        limits.append((float(spec.threshold), f"below the threshold {spec.threshold:g}"))
    if spec.relative_drop is not None and not math.isnan(base):
        limits.append((base * (1 - spec.relative_drop), f"more than {spec.relative_drop:.0%} below the baseline {base:.4f}"))
    if spec.absolute_drop is not None and not math.isnan(base):
        limits.append((base - spec.absolute_drop, f"more than {spec.absolute_drop:g} below the baseline {base:.4f}"))
    if not limits:
        return False, math.nan, ""
    thr, why = max(limits, key=lambda x: x[0])  # the strictest limit decides
    return bool(value < thr), thr, why


def run_monitors(store: Any, at: Any = None, *, all_windows: bool = False, start: Any = None, end: Any = None,
                 monitors: Any = None) -> list[Alert]:
    """Evaluate ``store.config.monitors`` (or ``monitors``) and return the alerts that fire."""
    from .store import _metric_keys, _time, _welch, _window_delta

    specs = list(monitors if monitors is not None else store.config.monitors)
    if not specs:
        raise InputError("no monitors are configured: add [[monitors]] to ranklens.toml (see docs/monitoring.md).")
    info = store.info()
    if info["last"] is None:
        raise InputError("the store is empty: ingest events first.")
    alerts: list[Alert] = []
    for spec in specs:
        key = _metric_keys(spec.metric)[0]
        delta = _window_delta(spec.window)
        if all_windows:
            s, e = _time(start, "start"), _time(end, "end")
        else:
            t = _time(at, "at") if at is not None else _time(info["last"], "last")
            s = floor_time(t, spec.window)
            e = s + delta
        rep = store.report([key], window=spec.window, by=spec.by, where=spec.where, start=s, end=e, ci=None)
        bspec: Baseline = spec.baseline or store.config.baseline
        base_cache: dict[Any, Any] = {}
        for row in rep.to_pylist():
            if row["n_groups"] < spec.min_groups:
                continue
            series = {b: row[b] for b in spec.by}
            w0 = row["window"]
            w1 = w0 + delta
            where = dict(spec.where)
            where.update({k: v for k, v in series.items() if v is not None})
            if bspec.kind == "environment":
                bw = {k: v for k, v in where.items() if k != "environment"}
                bw["environment"] = bspec.environment
                bstart, bend = None, None
                ck = ("env", tuple(sorted(bw.items())))
                if ck not in base_cache:
                    base_cache[ck] = _values(store, key, bw, None, None)
                    if len(base_cache[ck]) == 0 and "model_version" in bw:
                        # no baseline for this version: the model's baseline over all versions
                        bw2 = {k: v for k, v in bw.items() if k != "model_version"}
                        base_cache[ck] = _values(store, key, bw2, None, None)
                bvals = base_cache[ck]
            elif bspec.kind == "range":
                bstart, bend = bspec.start, bspec.end
                bvals = _values(store, key, where, bstart, bend)
            else:
                bvals = _values(store, key, where, w0 - delta, w0)
            if len(bvals) == 0:
                continue
            base = float(bvals.mean())
            value = float(row["value"])
            fires, thr, why = _fire(spec, value, base)
            p = None
            if fires and spec.significance is not None:
                wvals = _values(store, key, where, w0, w1)
                if len(wvals) > 1 and len(bvals) > 1:
                    p = _welch(wvals, bvals, alternative="less")["p_value"]
                    fires = p < spec.significance
                else:
                    fires = False
            if fires:
                top = _top_slices(store, key, w0, w1, bspec, where)
                alerts.append(Alert(
                    monitor=spec.name, metric=key, window_start=_iso(w0), window_end=_iso(w1), series=series,
                    value=value, baseline=base, baseline_spec=bspec.describe(), threshold=thr,
                    n_groups=int(row["n_groups"]), n_baseline=len(bvals), p_value=p,
                    reason=f"{key} = {value:.4f} over {row['n_groups']} groups, {why}"
                    + (f" (Welch p = {p:.3g} < {spec.significance:g})" if p is not None else ""),
                    relative_change=(value - base) / base if base else math.nan,
                    extra={"top_slices": top},
                ))
    return alerts


def _top_slices(store: Any, key: str, w0: Any, w1: Any, bspec: Baseline, where: dict[str, Any], n: int = 3) -> list:
    """The slice values contributing most to the drop of this window (root cause, see Store.slices)."""
    try:
        tab = store.slices(key, start=w0, end=w1, baseline=bspec, where=where)
    except InputError:  # no slice columns, or nothing counted on one side
        return []
    out = []
    for r in tab.to_pylist()[:n]:
        if r["contribution"] < 0:
            out.append({k: r[k] for k in ("column", "value", "baseline_value", "window_value", "change",
                                          "share_window", "contribution")})
    return out


def _values(store: Any, key: str, where: dict[str, Any], start: Any, end: Any) -> np.ndarray:
    con = store._connect(write=False)
    try:
        _, v = store._values(con, [key], where, start, end)
    finally:
        con.close()
    v = v[:, 0]
    return v[~np.isnan(v)]


def send_webhook(url: str, alerts: list[Alert], timeout: float = 10.0) -> None:
    """POST the alerts as JSON (``{"alerts": [...]}``) to ``url``; a failure raises InputError naming the URL."""
    if not url.startswith(("http://", "https://")):
        raise InputError(f"webhook URL must start with http:// or https://; got {url!r}.")
    body = json.dumps({"source": "ranklens", "alerts": [a.to_dict() for a in alerts]}).encode()
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            if resp.status >= 300:
                raise InputError(f"webhook {url} answered HTTP {resp.status}.")
    except urllib.error.HTTPError as exc:
        raise InputError(f"webhook {url} answered HTTP {exc.code}.") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise InputError(f"webhook {url} could not be reached: {reason}.") from None
