"""Statistics over groups: a mean with its bootstrap interval and Welch's unequal-variance t-test (the
other aggregates, their intervals and differences: :mod:`ranklens.monitor.reports.aggregates`).

The groups of two selections differ (other lists, other days), so tests are unpaired. Resampling runs in
:mod:`ranklens.stats`'s kernels (a seed gives the same numbers on any thread count).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._core.intervals import bootstrap_ci
from ..._core.stats import scipy_special

__all__ = ["summary", "welch"]


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
