"""trec_eval's measures of judged rows and of interpolated precision on one query's rows in ranked order: bpref,
inferred AP, iprec_at_recall and 11pt_avg, written as trec_eval 10.0's C source computes them (see
:mod:`.positions` for the arrays; :mod:`.trec_more` for its experimental, set and cutoff measures).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .positions import group_end

__all__ = ["bpref_sum", "infap_sum", "iprec_at", "pt11_at"]


@njit(cache=True)
def bpref_sum(score, lab, lo, hi, ties, level, big_r, n_nonrel, negative_judged):  # pragma: no cover
    """Sum over the relevant rows of ``1 - min(N, R) / min(n_nonrel, R)``, N the judged non-relevant rows
    above (1 when N is 0): trec_eval's bpref before the division by R.

    Rows without a label (NaN) are skipped, and so are negative labels (trec_eval's "in the pool but not
    judged") unless ``negative_judged`` (ranx: non-relevant). In a tie group, the number of the group's
    non-relevant rows above one of its relevant rows is uniform on 0..b (b: the group's non-relevant rows),
    so the expectation over the group's orders is a mean over b + 1 values.
    """
    denom = min(n_nonrel, big_r)
    total = 0.0
    before = 0
    i = lo
    while i < hi:
        j = group_end(score, i, hi, ties)
        a = 0
        b = 0
        for t in range(i, j):
            v = lab[t]
            if math.isnan(v) or (v < 0.0 and not negative_judged):
                continue
            if v >= level:
                a += 1
            else:
                b += 1
        if a > 0:
            e = 0.0
            for u in range(b + 1):
                x = before + u
                e += 1.0 if (x == 0 or denom == 0) else 1.0 - min(x, big_r) / denom
            total += a * e / (b + 1)
        before += b
        i = j
    return total


_INFAP_EPSILON = 0.00001  # trec_eval.h


@njit(cache=True)
def infap_sum(lab, lo, hi, level):  # pragma: no cover - compiled
    """trec_eval's inferred AP before the division by R, on rows in ranked order: NaN = not in the pool
    (skipped, but counted in the rank), negative = in the pool but not judged."""
    rel_so_far = 0
    nonrel = 0
    unjudged = 0
    total = 0.0
    for j in range(hi - lo):
        v = lab[lo + j]
        if math.isnan(v):
            continue
        if v < 0.0:
            unjudged += 1
            continue
        if v < level:
            nonrel += 1
            continue
        rel_so_far += 1
        if j == 0:
            total += 1.0
        else:
            fj = float(j)
            total += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((rel_so_far - 1 + nonrel + unjudged) / fj) * (
                (rel_so_far - 1 + _INFAP_EPSILON) / (rel_so_far - 1 + nonrel + 2 * _INFAP_EPSILON))
    return total


@njit(cache=True, inline="always")
def _recall_cut(recall, big_r, v9):  # pragma: no cover - compiled
    """The number of relevant items a recall level stands for: C's lround (trec_eval 10) or
    ``(long)(x + 0.9)`` (trec_eval 9)."""
    x = recall * big_r
    if v9:
        return int(x + 0.9)
    f = math.floor(x)
    return int(f + 1.0) if x - f >= 0.5 else int(f)


@njit(cache=True)
def iprec_at(rel, lo, hi, recall, big_r, v9):  # pragma: no cover - compiled
    """Interpolated precision at a recall level (trec_eval's iprec_at_recall), rows in ranked order:
    the largest precision at or below the rank where the level's number of relevant items is reached
    (0 when the list never reaches it)."""
    n = hi - lo
    if n == 0:
        return 0.0
    cut = _recall_cut(recall, big_r, v9)
    nrr = 0
    for t in range(lo, hi):
        if rel[t] > 0.0:
            nrr += 1
    if cut > nrr:
        return 0.0
    ip = nrr / n
    rsf = nrr
    i = n
    while i > 0 and rsf > 0:
        precis = rsf / i
        if ip < precis:
            ip = precis
        if rel[lo + i - 1] > 0.0:
            if rsf == cut:
                return ip
            rsf -= 1
        i -= 1
    return ip


@njit(cache=True)
def pt11_at(rel, lo, hi, big_r, v9):  # pragma: no cover - compiled
    """trec_eval's 11pt_avg: interpolated precision at the recall levels 0.0, 0.1, ... 1.0, averaged
    (summed from the highest level down, as trec_eval sums)."""
    levels = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    total = 0.0
    for t in range(10, -1, -1):
        total += iprec_at(rel, lo, hi, levels[t], big_r, v9)
    return total / 11.0
