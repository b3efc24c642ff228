"""The simulator's label-free case: a ranker whose scores break, seen in its scores before its outcomes arrive.

With ``decay="broken_scores"``, from ``decay_start`` the lists of ``decay_slice`` are scored by a broken
model: every score is drawn from ``BROKEN_MEAN + BROKEN_SD * N(0, 1)``, whatever the item's grade (a
feature pipeline that feeds constants, a version shipped with the wrong weights). The lists are served
by decreasing (broken) score, so their order no longer follows the grades and NDCG falls; the outcomes
still follow the items. The score distribution moves at once (``psi(score)``, ``ks(score)``), while
NDCG needs the outcomes, which arrive up to ``max_delay_hours`` later.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BROKEN_MEAN", "BROKEN_SD", "broken_scores"]

#: The broken model's scores: a normal distribution of this mean and standard deviation.
BROKEN_MEAN = 2.0
BROKEN_SD = 0.5


def broken_scores(rng: np.random.Generator, score: np.ndarray, hit: np.ndarray) -> np.ndarray:
    """``score`` with the rows of ``hit`` replaced by the broken model's scores (6 decimals, as the others).

    Examples
    --------
    >>> s = broken_scores(np.random.default_rng(0), np.zeros(4), np.array([False, True, True, False]))
    >>> s[0] == 0 and s[3] == 0 and bool(np.all(s[1:3] != 0))
    True
    """
    out = score.copy()
    k = int(hit.sum())
    out[hit] = np.round(BROKEN_MEAN + BROKEN_SD * rng.standard_normal(k), 6)
    return out
