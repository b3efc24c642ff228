"""Statistics over groups: a mean with its bootstrap interval, Welch's unequal-variance t-test, the
interval of a difference between two selections, and the interval of each cell of a report.

The groups of two selections differ (other lists, other days), so tests are unpaired. Resampling runs in
:mod:`ranklens.stats`'s kernels (a seed gives the same numbers on any thread count).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..stats import bootstrap_ci, bootstrap_means, scipy_special, t_interval

__all__ = ["cell_intervals", "difference", "summary", "welch"]


def summary(v: np.ndarray, confidence: float, n_resamples: int, seed: int) -> dict[str, Any]:
    """Mean of the counted values (NaN: left out) with its percentile bootstrap interval over groups.

    Examples
    --------
    >>> import numpy as np
    >>> summary(np.array([0.5, np.nan]), 0.95, 100, 0)
    {'value': 0.5, 'ci_low': nan, 'ci_high': nan, 'n_groups': 1}
    """
    v = v[~np.isnan(v)]
    if len(v) == 0:
        return {"value": math.nan, "ci_low": math.nan, "ci_high": math.nan, "n_groups": 0}
    if len(v) == 1:
        return {"value": float(v[0]), "ci_low": math.nan, "ci_high": math.nan, "n_groups": 1}
    iv = bootstrap_ci(v, method="percentile", confidence=confidence, n_resamples=n_resamples, seed=seed)
    return {"value": float(v.mean()), "ci_low": iv.low, "ci_high": iv.high, "n_groups": len(v)}


def welch(a: np.ndarray, b: np.ndarray, alternative: str = "two-sided") -> dict[str, Any]:
    """Welch's unequal-variance t-test of mean(a) - mean(b) (``scipy.stats.ttest_ind(a, b, equal_var=False)``).

    Examples
    --------
    >>> import numpy as np
    >>> r = welch(np.array([1.0, 2.0, 3.0, 4.0]), np.array([2.0, 4.0, 6.0]))
    >>> [round(float(r[k]), 4) for k in ("statistic", "df", "p_value")]  # t = -1.5 / sqrt(5/12 + 4/3)
    [-1.1339, 3.2347, 0.3338]

    (``scipy.stats.ttest_ind([1, 2, 3, 4], [2, 4, 6], equal_var=False)``: statistic -1.1339, df 3.2347,
    p-value 0.3338.)
    """
    na, nb = len(a), len(b)
    va, vb = a.var(ddof=1), b.var(ddof=1)
    se2 = va / na + vb / nb
    d = float(a.mean() - b.mean())
    if se2 == 0:
        p = 1.0 if d == 0 else 0.0
        return {"statistic": math.copysign(math.inf, d) if d else 0.0, "df": math.nan, "p_value": p}
    t = d / math.sqrt(se2)
    df = se2 ** 2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
    sp = scipy_special()
    if alternative == "less":
        p = float(sp.stdtr(df, t))
    elif alternative == "greater":
        p = float(sp.stdtr(df, -t))
    else:
        p = float(2 * sp.stdtr(df, -abs(t)))
    return {"statistic": t, "df": df, "p_value": p}


def difference(a: np.ndarray, b: np.ndarray, confidence: float, n_resamples: int, seed: int) -> dict[str, Any]:
    """mean(a) - mean(b) with a percentile interval from bootstrapping each side's groups, and Welch's test."""
    if len(a) < 2 or len(b) < 2:
        return {"difference": float(a.mean() - b.mean()) if len(a) and len(b) else math.nan,
                "ci_low": math.nan, "ci_high": math.nan, "p_value": math.nan, "test": "welch"}
    ba = bootstrap_means(a.astype(np.float64), n_resamples, seed)[:, 0]
    bb = bootstrap_means(b.astype(np.float64), n_resamples, seed + 1)[:, 0]
    alpha = 1 - confidence
    lo, hi = np.quantile(ba - bb, [alpha / 2, 1 - alpha / 2])
    w = welch(a, b)
    return {"difference": float(a.mean() - b.mean()), "ci_low": float(lo), "ci_high": float(hi),
            "p_value": w["p_value"], "statistic": w["statistic"], "df": w["df"], "test": "welch"}


def cell_intervals(v: np.ndarray, starts: np.ndarray, ends: np.ndarray, ci: str | None, confidence: float,
                   n_resamples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of the mean of each cell ``v[starts[i]:ends[i]]`` (NaN: left out): percentile bootstrap
    over the cell's groups (``ci="bootstrap"``), Student's t (``"t"``), or none (NaN)."""
    n_cells = len(starts)
    lo = np.full(n_cells, np.nan)
    hi = np.full(n_cells, np.nan)
    if ci not in ("bootstrap", "t"):
        return lo, hi
    alpha = 1 - confidence
    for i in range(n_cells):  # one interval per cell (window x series), not per group
        x = v[starts[i]:ends[i]]
        x = x[~np.isnan(x)]
        if len(x) < 2:
            continue
        if ci == "t":
            iv = t_interval(x, confidence)
            lo[i], hi[i] = iv.low, iv.high
        elif np.all(x == x[0]):
            lo[i] = hi[i] = x[0]
        else:
            boot = bootstrap_means(np.ascontiguousarray(x), n_resamples, seed)[:, 0]
            lo[i], hi[i] = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
    return lo, hi
