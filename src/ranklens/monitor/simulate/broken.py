"""The simulator's label-free case: a ranker whose scores break, seen in its scores before its outcomes arrive.

With ``decay="broken_scores"``, from ``decay_start`` the lists of ``decay_slice`` are scored by a broken
model: every score is drawn from ``BROKEN_MEAN + BROKEN_SD * N(0, 1)``, whatever the item's grade (a
feature pipeline that feeds constants, a version shipped with the wrong weights). The lists are served
by decreasing (broken) score, so their order no longer follows the grades and NDCG falls; the outcomes
still follow the items. The score distribution moves at once (``psi(score)``, ``ks(score)``), while
NDCG needs the outcomes, which arrive up to ``max_delay_hours`` later.

In this case the items also have a popularity (:func:`popular_items`: a catalogue of
``POPULAR_CATALOGUE`` items where good items are popular ones more often), so that the signals on items
(``psi(popularity@k)``, ``coverage@k``, ``gini@k``, ``novelty@k``) are steady before the break and move
with it: the broken order serves less popular items at the top.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BROKEN_MEAN", "BROKEN_SD", "POPULAR_CATALOGUE", "broken_scores", "popular_items"]

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


#: Items of the broken-scores case: a catalogue this large, where popular items are more often good.
POPULAR_CATALOGUE = 20_000


def popular_items(rng: np.random.Generator, grade: np.ndarray, row_g: np.ndarray) -> np.ndarray:
    """An item per row (codes in ``[0, POPULAR_CATALOGUE)``), distinct within each list, popular ones more often.

    An item's code is its popularity rank: a row of grade ``g`` draws ``floor(N * u ** (1.5 + 1.5 g))`` with
    ``u`` uniform, so every grade favours the head of the catalogue and good items (higher grades) favour
    it more: a ranker that orders by grade serves popular items first, a broken one does not. Rows whose
    item is already in their list draw again (a few rounds, each over the repeated rows only).

    Examples
    --------
    >>> items = popular_items(np.random.default_rng(0), np.array([0, 3, 3, 1]), np.array([0, 0, 0, 1]))
    >>> len(set(items[:3].tolist())) == 3
    True
    """
    power = 1.5 + 1.5 * grade.astype(np.float64)
    item = np.floor(POPULAR_CATALOGUE * rng.random(grade.shape[0]) ** power).astype(np.int64)
    while True:
        key = row_g.astype(np.int64) * POPULAR_CATALOGUE + item
        order = np.argsort(key, kind="stable")
        repeat = np.zeros(key.shape[0], bool)
        repeat[order[1:]] = key[order[1:]] == key[order[:-1]]
        k = int(repeat.sum())
        if not k:
            return item
        item[repeat] = np.floor(POPULAR_CATALOGUE * rng.random(k) ** power[repeat]).astype(np.int64)
