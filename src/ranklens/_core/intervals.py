"""Confidence intervals of a mean: Student's t, and scipy.stats.bootstrap's percentile and BCa intervals on
the resampling kernel (the same resamples for the same seed, however the columns are grouped).

The public face of this module is :mod:`ranklens.stats`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidParameterError
from .stats import STREAM_BOOT, as_vector, check_confidence, check_resamples, check_seed, resample_means, scipy_special

__all__ = ["Interval", "bootstrap_ci", "bootstrap_means", "interval_from_bootstrap", "t_interval"]


@dataclass(frozen=True)
class Interval:
    """A confidence interval ``[low, high]`` around ``estimate`` (a mean, or a mean difference)."""

    estimate: float
    low: float
    high: float
    confidence: float
    method: str
    n: int
    n_resamples: int | None = None
    seed: int | None = None


def t_interval(x: Any, confidence: float = 0.95) -> Interval:
    """Student's t interval of the mean of ``x``: ``mean ± t_{(1+c)/2, n-1} · sd / sqrt(n)``.

    Examples
    --------
    >>> from ranklens.stats import t_interval
    >>> iv = t_interval([0.1, 0.2, 0.3, 0.4])
    >>> round(iv.low, 4), round(iv.high, 4)
    (0.0446, 0.4554)
    """
    v = as_vector(x, "x", 2)
    c = check_confidence(confidence)
    n = v.shape[0]
    mean = float(v.mean())
    sem = float(v.std(ddof=1)) / math.sqrt(n)
    q = float(scipy_special().stdtrit(n - 1, 0.5 + c / 2.0))
    return Interval(mean, mean - q * sem, mean + q * sem, c, "t", n)


def bootstrap_means(x: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Bootstrap means of each column of ``x`` (``(n_resamples, n_columns)``), on the intervals' random stream.

    The stream :func:`bootstrap_ci` and :func:`ranklens.compare` draw from: the same ``seed`` resamples the
    same queries, so intervals computed column by column or all at once agree.

    Examples
    --------
    >>> from ranklens.stats import bootstrap_means
    >>> bootstrap_means(np.array([1.0, 1.0, 1.0]), 4, 0)[:, 0].tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    return resample_means(x, n_resamples, seed, STREAM_BOOT)


def interval_from_bootstrap(x: np.ndarray, boot: np.ndarray, method: str, confidence: float) -> tuple[float, float]:
    """scipy.stats.bootstrap's percentile / BCa interval of the mean from the bootstrap means ``boot``."""
    if x.shape[0] and bool((x == x[0]).all()):  # every resample is the sample itself
        return float(x[0]), float(x[0])
    alpha = (1.0 - confidence) / 2.0
    if method == "percentile":
        lo_q, hi_q = alpha, 1.0 - alpha
    else:
        sp = scipy_special()
        theta = float(x.mean())
        frac = (np.count_nonzero(boot < theta) + np.count_nonzero(boot <= theta)) / (2.0 * boot.shape[0])
        z0 = float(sp.ndtri(frac))
        n = x.shape[0]
        jack = (x.sum() - x) / (n - 1)  # leave-one-out means
        u = (n - 1) * (jack.mean() - jack)
        num = float((u**3).sum()) / n**3
        den = float((u**2).sum()) / n**2
        a_hat = num / 6.0 / den**1.5 if den > 0 else math.nan
        za = float(sp.ndtri(alpha))
        n1, n2 = z0 + za, z0 - za
        lo_q = float(sp.ndtr(z0 + n1 / (1 - a_hat * n1)))
        hi_q = float(sp.ndtr(z0 + n2 / (1 - a_hat * n2)))
        if math.isnan(lo_q) or math.isnan(hi_q):
            return math.nan, math.nan
    lo, hi = np.quantile(boot, [lo_q, hi_q])
    return float(lo), float(hi)


def bootstrap_ci(
    x: Any, method: str = "bca", confidence: float = 0.95, n_resamples: int = 10000, seed: int = 0
) -> Interval:
    """Bootstrap confidence interval of the mean of ``x`` (resampling queries with replacement).

    ``method`` is ``"percentile"`` or ``"bca"`` (bias-corrected and accelerated, scipy's default);
    the formulas are those of ``scipy.stats.bootstrap``. When all values are equal the interval is that
    value (scipy's BCa gives NaN there).

    Examples
    --------
    >>> from ranklens.stats import bootstrap_ci
    >>> iv = bootstrap_ci([0.1, 0.2, 0.3, 0.4, 0.5, 0.9], method="percentile", seed=3)
    >>> iv.low < 0.4 < iv.high
    True
    """
    if method not in ("percentile", "bca"):
        raise InvalidParameterError(f"`method` must be 'percentile' or 'bca'; got {method!r}.")
    v = as_vector(x, "x", 2)
    c, n_resamples, seed = check_confidence(confidence), check_resamples(n_resamples), check_seed(seed)
    boot = bootstrap_means(v, n_resamples, seed)[:, 0]
    lo, hi = interval_from_bootstrap(v, boot, method, c)
    return Interval(float(v.mean()), lo, hi, c, method, v.shape[0], n_resamples, seed)
