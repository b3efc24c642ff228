"""Per-measure arithmetic on one query's rows in ranked order.

:func:`ranklens._kernels.fused.evaluate_queries` orders a query's rows and
calls these helpers on its local arrays (rows ``lo:hi``):

* ``score``  - the ordering score, used only to find groups of tied rows;
* ``gain``   - the graded gain of the row (0 for unjudged rows);
* ``rel``    - 1.0 if the row counts as relevant for binary measures, else 0.0;
* ``p``      - the ERR stopping probability of the row;

and ``ideal`` holds the ideal list's gains in descending order.

Tie modes: ``TIES_NONE`` takes the rows in the given order; ``TIES_AVERAGE``
returns, for every measure, the exact expectation over all orders of each
group of tied rows (McSherry & Najork 2008 for DCG and precision; the same
idea carried to AP, RR, hit rate and ERR); ``TIES_SHARED_RANK`` gives every
row of a tied group the truncated mean position of the group (Evidently's
rule, DCG-family only).

A measure whose normaliser is zero yields 0 here; the caller applies the
convention's rule for such queries. Nothing here aggregates over queries.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .codes import (
    AP,
    DCG,
    ERR,
    HIT,
    IDCG,
    NDCG,
    NUM_REL_RET,
    NUM_RET,
    RECALL,
    RPREC,
    RR,
    TIES_AVERAGE,
    TIES_NONE,
    TIES_SHARED_RANK,
    P,
)

__all__ = [
    "AP",
    "DCG",
    "ERR",
    "HIT",
    "IDCG",
    "NDCG",
    "NUM_REL_RET",
    "NUM_RET",
    "P",
    "RECALL",
    "RPREC",
    "RR",
    "TIES_AVERAGE",
    "TIES_NONE",
    "TIES_SHARED_RANK",
    "ap_sum",
    "dcg_at",
    "dcg_table",
    "discounts",
    "err_at",
    "hit_at",
    "idcg_at",
    "rel_in_top",
    "rr_at",
]


@njit(cache=True, inline="always")
def _disc(pos, ln_base):  # pragma: no cover - compiled
    # 1 / log_base(pos + 1), written as scikit-learn writes it.
    return 1.0 / (math.log(pos + 1.0) / ln_base)


@njit(cache=True)
def discounts(n, ln_base):  # pragma: no cover - compiled
    """``disc[p] = _disc(p)`` for positions ``1 <= p <= n`` (``disc[0]`` unused): one logarithm per
    position per call, not per query."""
    disc = np.zeros(n + 1, np.float64)
    for p in range(1, n + 1):
        disc[p] = _disc(p, ln_base)
    return disc


@njit(cache=True)
def _group_end(score, i, hi, ties):  # pragma: no cover - compiled
    j = i + 1
    if ties != TIES_NONE:
        s = score[i]
        while j < hi and score[j] == s:
            j += 1
    return j


@njit(cache=True)
def dcg_at(score, gain, lo, hi, depth, ties, disc):  # pragma: no cover - compiled
    """DCG to ``depth``; ``disc[p]`` is the discount of position ``p`` (:func:`discounts`)."""
    total = 0.0
    pos = 0
    i = lo
    while i < hi and pos < depth:
        j = _group_end(score, i, hi, ties)
        m = j - i
        if ties == TIES_SHARED_RANK:
            shared = int(pos + (m + 1) / 2.0)
            if shared <= depth:
                d = disc[shared]
                for t in range(i, j):
                    total += gain[t] * d
        else:
            sg = 0.0
            for t in range(i, j):
                sg += gain[t]
            if sg != 0.0:
                last = min(pos + m, depth)
                ds = 0.0
                for p in range(pos + 1, last + 1):
                    ds += disc[p]
                total += sg / m * ds
        pos += m
        i = j
    return total


@njit(cache=True)
def dcg_table(score, gain, depth, ties, disc):  # pragma: no cover - compiled
    """The terms :func:`dcg_at` sums, position by position, for one query's rows in ranked order.

    Returns ``(gain_used, discount, contribution)``: the gain a position is credited with (under
    ``TIES_AVERAGE`` the mean gain of its tie group, as :func:`dcg_at` takes it), its discount
    (under ``TIES_SHARED_RANK`` that of the group's shared rank) and its contribution to DCG at
    ``depth`` (0 from ``depth`` on, and for a shared-rank group whose rank is beyond ``depth``).
    """
    n = score.shape[0]
    used = np.zeros(n, np.float64)
    dsc = np.zeros(n, np.float64)
    contrib = np.zeros(n, np.float64)
    pos = 0
    i = 0
    while i < n:
        j = _group_end(score, i, n, ties)
        m = j - i
        if ties == TIES_SHARED_RANK:
            shared = int(pos + (m + 1) / 2.0)
            for t in range(i, j):
                used[t] = gain[t]
                dsc[t] = disc[shared]
                if shared <= depth:
                    contrib[t] = gain[t] * disc[shared]
        else:
            sg = 0.0
            for t in range(i, j):
                sg += gain[t]
            for t in range(i, j):
                used[t] = gain[t] if m == 1 else sg / m
                dsc[t] = disc[t + 1]
                if t < depth:
                    contrib[t] = used[t] * dsc[t]
        pos += m
        i = j
    return used, dsc, contrib


@njit(cache=True)
def idcg_at(ideal, lo, hi, depth, disc):  # pragma: no cover - compiled
    total = 0.0
    last = min(hi - lo, depth)
    for t in range(last):
        total += ideal[lo + t] * disc[t + 1]
    return total


@njit(cache=True)
def rel_in_top(score, rel, lo, hi, depth, ties):  # pragma: no cover - compiled
    """Expected number of relevant rows among the first ``depth`` positions."""
    total = 0.0
    pos = 0
    i = lo
    while i < hi and pos < depth:
        j = _group_end(score, i, hi, ties)
        m = j - i
        r = 0.0
        for t in range(i, j):
            r += rel[t]
        inside = min(m, depth - pos)
        total += r * inside / m
        pos += m
        i = j
    return total


@njit(cache=True)
def hit_at(score, rel, lo, hi, depth, ties):  # pragma: no cover - compiled
    pos = 0
    i = lo
    while i < hi and pos < depth:
        j = _group_end(score, i, hi, ties)
        m = j - i
        r = 0
        for t in range(i, j):
            if rel[t] > 0.0:
                r += 1
        if r > 0:
            inside = min(m, depth - pos)
            if inside == m:
                return 1.0
            # P(no relevant among the first `inside` of the group)
            none = 1.0
            for u in range(inside):
                none *= (m - r - u) / (m - u)
                if none <= 0.0:
                    none = 0.0
                    break
            return 1.0 - none
        pos += m
        i = j
    return 0.0


@njit(cache=True)
def rr_at(score, rel, lo, hi, depth, ties):  # pragma: no cover - compiled
    pos = 0
    i = lo
    while i < hi and pos < depth:
        j = _group_end(score, i, hi, ties)
        m = j - i
        r = 0
        for t in range(i, j):
            if rel[t] > 0.0:
                r += 1
        if r > 0:
            total = 0.0
            none = 1.0
            for t in range(m - r + 1):
                if pos + t + 1 > depth:
                    break
                total += none * r / (m - t) / (pos + t + 1)
                none *= (m - r - t) / (m - t)
            return total
        pos += m
        i = j
    return 0.0


@njit(cache=True)
def ap_sum(score, rel, lo, hi, depth, ties):  # pragma: no cover - compiled
    """Expected sum of precision at the ranks of relevant rows (before / R)."""
    total = 0.0
    pos = 0
    before = 0.0
    i = lo
    while i < hi and pos < depth:
        j = _group_end(score, i, hi, ties)
        m = j - i
        r = 0.0
        for t in range(i, j):
            r += rel[t]
        if r > 0.0:
            inside = min(m, depth - pos)
            frac = (r - 1.0) / (m - 1.0) if m > 1 else 0.0
            s = 0.0
            for t in range(1, inside + 1):
                s += (before + 1.0 + (t - 1) * frac) / (pos + t)
            total += r / m * s
        before += r
        pos += m
        i = j
    return total


@njit(cache=True)
def err_at(score, p, lo, hi, depth, ties):  # pragma: no cover - compiled
    total = 0.0
    go_on = 1.0  # probability that the user reaches the current group
    pos = 0
    i = lo
    while i < hi and pos < depth:
        j = _group_end(score, i, hi, ties)
        m = j - i
        inside = min(m, depth - pos)
        if m == 1:
            total += go_on * p[i] / (pos + 1)
            go_on *= 1.0 - p[i]
        else:
            # distinct stopping probabilities in the group, with counts
            vals = np.empty(m, np.float64)
            cnts = np.zeros(m, np.int64)
            nv = 0
            for t in range(i, j):
                found = -1
                for v in range(nv):
                    if vals[v] == p[t]:
                        found = v
                        break
                if found < 0:
                    vals[nv] = p[t]
                    cnts[nv] = 1
                    nv += 1
                else:
                    cnts[found] += 1
            # E[ p_x * prod_{y before x in group} (1 - p_y) ] for a uniformly
            # random order: average over the item x at the position and over
            # the random subset of the others in front of it.
            jmax = inside  # subsets of size 0 .. inside-1
            contrib = np.zeros(jmax, np.float64)
            for v in range(nv):
                if vals[v] == 0.0:
                    continue
                mean = np.zeros(jmax, np.float64)  # mean over j-subsets of others
                mean[0] = 1.0
                n_added = 0
                for w in range(nv):
                    c = cnts[w] - 1 if w == v else cnts[w]
                    a = 1.0 - vals[w]
                    for _ in range(c):
                        n_added += 1
                        top = min(n_added, jmax - 1)
                        for jj in range(top, 0, -1):
                            mean[jj] = ((n_added - jj) * mean[jj] + jj * a * mean[jj - 1]) / n_added
                weight = cnts[v] * vals[v] / m
                for jj in range(jmax):
                    contrib[jj] += weight * mean[jj]
            for t in range(inside):
                total += go_on * contrib[t] / (pos + t + 1)
            for t in range(i, j):
                go_on *= 1.0 - p[t]
        pos += m
        i = j
    return total
