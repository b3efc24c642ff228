"""The graded family on one query's rows in ranked order: DCG (and its table of terms), the ideal DCG, ERR and
rank-biased precision, each the expectation over the orders of tied rows (see :mod:`.positions` for the arrays
and the tie modes).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .codes import TIES_SHARED_RANK
from .positions import group_end

__all__ = ["dcg_at", "dcg_table", "err_at", "idcg_at", "rbp_at"]


@njit(cache=True)
def dcg_at(score, gain, lo, hi, depth, ties, disc):  # pragma: no cover - compiled
    """DCG to ``depth``; ``disc[p]`` is the discount of position ``p`` (:func:`discounts`)."""
    total = 0.0
    pos = 0
    i = lo
    while i < hi and pos < depth:
        j = group_end(score, i, hi, ties)
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
        j = group_end(score, i, n, ties)
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
def err_at(score, p, lo, hi, depth, ties):  # pragma: no cover - compiled
    total = 0.0
    go_on = 1.0  # probability that the user reaches the current group
    pos = 0
    i = lo
    while i < hi and pos < depth:
        j = group_end(score, i, hi, ties)
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


@njit(cache=True)
def rbp_at(score, gain, lo, hi, depth, ties, p):  # pragma: no cover - compiled
    """Rank-biased precision to ``depth``: ``(1 - p) * sum of gain * p**(position - 1)``; a tie group's
    mean gain at each of its positions (the expectation over its orders)."""
    total = 0.0
    pos = 0
    i = lo
    while i < hi and pos < depth:
        j = group_end(score, i, hi, ties)
        m = j - i
        sg = 0.0
        for t in range(i, j):
            sg += gain[t]
        if sg != 0.0:
            last = min(pos + m, depth)
            ws = 0.0
            for q in range(pos, last):
                ws += p**q
            total += sg / m * ws
        pos += m
        i = j
    return (1.0 - p) * total
