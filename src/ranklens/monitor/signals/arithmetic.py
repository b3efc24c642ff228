"""The label-free signals' definitions on flat arrays: the PSI of two histograms, the two-sample KS test, the
Gini coefficient of exposures, the intra-list diversity per list (``docs/monitoring.md``, "Signals without
labels"; what each signal counts: :mod:`ranklens.monitor.signals.compute`)."""

from __future__ import annotations

import math

import numpy as np

from ..._base.deps import require
from .features import shares

__all__ = ["EPSILON", "POSITION_BINS", "gini", "ild_per_list", "ks_asymptotic", "psi"]

#: Share given to an empty bin in the PSI (Evidently's rule), so that the logarithm stays finite.
EPSILON = 1e-4
#: Positions 1..POSITION_BINS each have a bin in psi(position); deeper ones share one more.
POSITION_BINS = 20


def psi(window_counts: np.ndarray, baseline_counts: np.ndarray) -> float:
    """Population stability index of two histograms over the same bins (empty shares -> EPSILON).

    Examples
    --------
    >>> round(psi(np.array([30, 70]), np.array([50, 50])), 6)  # (0.3-0.5) ln(0.3/0.5) + (0.7-0.5) ln(0.7/0.5)
    0.16946
    """
    both = shares(window_counts, baseline_counts)
    if both is None:
        return math.nan
    w, r = both
    w[w == 0] = EPSILON
    r[r == 0] = EPSILON
    return float(np.sum((w - r) * np.log(w / r)))


def ks_asymptotic(window: np.ndarray, baseline: np.ndarray) -> tuple[float, float]:
    """(D, p-value) of the two-sample Kolmogorov-Smirnov test, two-sided, Smirnov's asymptotic p-value.

    Examples
    --------
    >>> d, p = ks_asymptotic(np.array([1.0, 2.0, 3.0]), np.array([1.5, 2.5, 3.5, 4.5]))
    >>> round(d, 4)
    0.5
    """
    require("scipy")
    import scipy.stats as scipy_stats

    a = np.sort(np.asarray(window, dtype=np.float64))
    b = np.sort(np.asarray(baseline, dtype=np.float64))
    n, m = a.shape[0], b.shape[0]
    if n == 0 or m == 0:
        return math.nan, math.nan
    x = np.concatenate([a, b])
    d = float(np.max(np.abs(np.searchsorted(a, x, side="right") / n - np.searchsorted(b, x, side="right") / m)))
    big, small = max(n, m), min(n, m)
    en = big * small / (big + small)
    p = float(np.clip(scipy_stats.kstwo.sf(d, np.round(en)), 0.0, 1.0))
    return d, p


def gini(exposure: np.ndarray) -> float:
    """Gini coefficient of the exposures of the items served (Evidently's: ``(n - 1)`` in the denominator).

    Examples
    --------
    >>> gini(np.array([5, 5, 5])), gini(np.array([0, 0, 9]))
    (0.0, 1.0)
    """
    c = np.sort(np.asarray(exposure, dtype=np.float64))
    n = c.shape[0]
    if n < 2 or c.sum() == 0:
        return math.nan
    i = np.arange(1, n + 1)
    return float(np.sum((2 * i - n - 1) * c) / ((n - 1) * c.sum()))


def ild_per_list(list_code: np.ndarray, attribute_code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(list codes, ILD) of the lists with at least two attributed items: the share of distinct-attribute pairs.

    ``list_code`` and ``attribute_code`` are one entry per item (attribute -1: none, left out).

    Examples
    --------
    >>> ild_per_list(np.array([0, 0, 0, 1, 1]), np.array([0, 0, 1, 2, -1]))  # list 0: pairs aa, ab, ab
    (array([0]), array([0.66666667]))
    """
    ok = attribute_code >= 0
    lc, ac = np.asarray(list_code)[ok].astype(np.int64), np.asarray(attribute_code)[ok].astype(np.int64)
    if lc.shape[0] == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    key = lc * (int(ac.max()) + 1) + ac
    uk, cnt = np.unique(key, return_counts=True)
    owner = uk // (int(ac.max()) + 1)
    lists, inv = np.unique(owner, return_inverse=True)
    n = np.bincount(inv, weights=cnt)
    same = np.bincount(inv, weights=cnt * (cnt - 1.0))
    keep = n >= 2
    return lists[keep], 1.0 - same[keep] / (n[keep] * (n[keep] - 1.0))
