"""Looks by day: each unit's values cumulated day by day, the arms' statistics at every look, and the
sequential inference of :mod:`ranklens.online.sequential` on them."""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any

import numpy as np

from ._delta import Sums, compare, cuped, ratio, unit_sums
from .sequential import AlwaysValid, GroupSequential, always_valid, group_sequential, repeated_p_value

__all__ = ["daily_sums", "sequential_rows"]


def daily_sums(unit_arm: np.ndarray, list_unit: np.ndarray, list_day: np.ndarray, y: np.ndarray, x: np.ndarray,
               n_days: int, n_arms: int, z: np.ndarray | None = None, rep: np.ndarray | None = None,
               n_reps: int = 1) -> Sums:
    """:class:`Sums` at the end of each day (axis before the arms), of units that have a list by then, each with
    its lists so far; by replication first when ``rep`` (each unit's replication) is given."""
    n_units = len(unit_arm)
    cell = list_unit * n_days + list_day
    yy = np.cumsum(np.bincount(cell, weights=y, minlength=n_units * n_days).reshape(n_units, n_days), axis=1)
    xx = np.cumsum(np.bincount(cell, weights=x, minlength=n_units * n_days).reshape(n_units, n_days), axis=1)
    seen = np.cumsum(np.bincount(cell, minlength=n_units * n_days).reshape(n_units, n_days), axis=1) > 0
    day = np.broadcast_to(np.arange(n_days), (n_units, n_days))
    cells = day if rep is None else rep[:, None] * n_days + day
    zz = None if z is None else np.repeat(np.asarray(z, dtype=np.float64).reshape(n_units, -1), n_days, axis=0)
    s = unit_sums(np.repeat(unit_arm, n_days), yy.ravel(), xx.ravel(), n_arms, zz, cells.ravel(),
                  n_days * n_reps, seen.ravel())
    if rep is None:
        return s
    return Sums(*(a.reshape((n_reps, n_days) + a.shape[1:]) for a in (s.n, s.y, s.x, s.yy, s.xx, s.xy, s.z, s.zz,
                                                                     s.zy, s.zx)))


def _series(s: Sums, covariates: bool, geometric: bool) -> tuple[np.ndarray, np.ndarray]:
    """(value, variance) per look and arm on the measure's scale."""
    m, v = cuped(s)[:2] if covariates else ratio(s)
    if geometric:
        return np.exp(m), v * np.exp(2 * m)
    return m, v


def sequential_rows(design: AlwaysValid | GroupSequential, s: Sums, covariates: bool, geometric: bool,
                    level: float, start: int | None) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    """For each treatment arm: the final row's sequential fields, and its looks (one dict per day)."""
    from ._delta import z_quantile

    val, var = _series(s, covariates, geometric)
    n_arms = val.shape[-1]
    finals, series = [], []
    zc = z_quantile(level)
    for a in range(1, n_arms):
        c = compare(val[:, a], var[:, a], val[:, 0], var[:, 0], zc)
        units = s.n[:, a] + s.n[:, 0]
        ok = np.isfinite(c["se"]) & (c["se"] > 0)
        d, v = c["estimate"], c["se"] ** 2
        looks: list[dict[str, Any]] = []
        if isinstance(design, AlwaysValid):
            last = int(np.flatnonzero(ok)[-1]) if ok.any() else len(d) - 1
            rho = design.rho(float(v[last]), int(units[last]), level)
            av = always_valid(np.where(ok, d, np.nan), np.where(ok, v, np.nan), rho, level)
            rv = c["relative_se"] ** 2
            rrho = AlwaysValid(planned_units=design.planned_units).rho(float(rv[last]), int(units[last]), level) \
                if design.tau is None else rho * float(val[last, 0]) ** 2
            rel = always_valid(np.where(ok, c["relative"], np.nan), np.where(ok, rv, np.nan), rrho, level)
            final = {"p_value": float(av["p_value"][-1]), "ci_low": float(av["ci_low"][-1]),
                     "ci_high": float(av["ci_high"][-1]), "relative_ci_low": float(rel["ci_low"][-1]),
                     "relative_ci_high": float(rel["ci_high"][-1]), "sequential": "always_valid",
                     "significant_at_level": bool(av["reject"][-1]), "mixture_rho": float(rho)}
            for k in range(len(d)):
                looks.append({"p_value": float(av["p_value"][k]), "ci_low": float(av["ci_low"][k]),
                              "ci_high": float(av["ci_high"][k]), "boundary": math.nan})
        else:
            planned = design.planned_units or (int(units[ok][-1]) if ok.any() else 1)
            frac = np.minimum(units / float(planned), 1.0)
            grow = np.r_[True, frac[1:] > np.maximum.accumulate(np.where(ok, frac, 0.0))[:-1]]
            idx = np.flatnonzero(ok & (frac > 0) & grow)
            t = frac[idx]
            bound = np.full(len(d), np.nan)
            final = {"p_value": math.nan, "ci_low": math.nan, "ci_high": math.nan, "relative_ci_low": math.nan,
                     "relative_ci_high": math.nan, "sequential": f"group_sequential ({design.spending})",
                     "significant_at_level": False, "information_fraction": math.nan}
            if len(idx):
                zs = c["z"][idx]
                gs = group_sequential(zs, t, level, design.spending, design.rho)
                bound[idx] = gs["boundary"]
                last, ck = int(idx[-1]), float(gs["boundary"][-1])
                se, rse = float(c["se"][last]), float(c["relative_se"][last])
                final.update({"p_value": repeated_p_value(zs, t, design.spending, design.rho),
                              "ci_low": float(d[last]) - ck * se, "ci_high": float(d[last]) + ck * se,
                              "relative_ci_low": float(c["relative"][last]) - ck * rse,
                              "relative_ci_high": float(c["relative"][last]) + ck * rse,
                              "significant_at_level": bool(gs["crossed"][-1]), "information_fraction": float(t[-1])})
            for k in range(len(d)):
                b = bound[k]
                fin = bool(np.isfinite(b))
                looks.append({"p_value": math.nan, "ci_low": float(d[k] - b * c["se"][k]) if fin else math.nan,
                              "ci_high": float(d[k] + b * c["se"][k]) if fin else math.nan,
                              "boundary": float(b * c["se"][k]) if fin else math.nan})
        for k in range(len(d)):
            looks[k].update({"look": k + 1, "day": _day(start, k), "n_units": int(units[k]),
                             "estimate": float(d[k]), "z": float(c["z"][k]),
                             "fixed_ci_low": float(c["ci_low"][k]), "fixed_ci_high": float(c["ci_high"][k])})
        finals.append(final)
        series.append(looks)
    return finals, series


def _day(start: int | None, k: int) -> str | None:
    if start is None:
        return None
    return (_dt.datetime(1970, 1, 1) + _dt.timedelta(milliseconds=start) + _dt.timedelta(days=k)).date().isoformat()
