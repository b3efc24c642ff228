"""The outcomes of a stored list's items as their attribution, for the monitor's values: which labels each item has.

The monitor stores a list's items (``items``: list number ``gid``, item number ``iid``) and its outcomes apart
(``item_labels``: one row per list, item and label, or per given relevance). The values read
(:func:`ranklens.monitor.storage.values.events`) gives each item the set of its distinct labels and its largest given
relevance. Done in SQL, that was an aggregation of the outcome rows per item and a hash join of every item with it
(about 1.7 s of CPU for 6.4 million items and 3.5 million outcomes); here the items and the outcomes are counted into
their lists (the list numbers of a read are one range of integers), then each list's outcomes look for their items
among its items, a dozen or so, list after list. Called through ``dispatch.call("attribute_labels", ...)``
(importing this file imports numba, which the compiled module spares).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["attribute_labels"]


@njit(cache=True, nogil=True)
def attribute_labels(item_gid, item_iid, lab_gid, lab_iid, lab_bit, lab_rel, weights, g_lo, span):  # pragma: no cover
    """Each item's attribution and relevance from the outcome rows.

    Items ``i`` (list ``item_gid[i]``, item ``item_iid[i]``, the list numbers between ``g_lo`` and
    ``g_lo + span - 1``) and outcome rows ``r`` (``lab_gid[r]``, ``lab_iid[r]``, the number of its label among the
    attribution's ``lab_bit[r]``, -1 for none, and its given relevance ``lab_rel[r]``, NaN for none). An outcome
    reaches every item of its list with its item number; one of another list or item reaches none. Per item: the set
    of its labels (a label given twice counts once) as bits, its attribution the ``weights`` of the bits set added
    in the order of the labels from 0.0 (0.0 without any), and the largest relevance given (NaN without any).
    """
    n = item_gid.shape[0]
    # the items, then the outcomes, counted into their lists (a counting sort: list numbers are one range), so that
    # each list's items and outcomes are read in one place, list after list
    start = np.zeros(span + 1, np.int64)
    for i in range(n):
        start[item_gid[i] - g_lo + 1] += 1
    for g in range(span):
        start[g + 1] += start[g]
    order = np.empty(n, np.int64)
    pos = start[:span].copy()
    for i in range(n):
        g = item_gid[i] - g_lo
        order[pos[g]] = i
        pos[g] += 1
    iid = np.empty(n, np.int64)
    for p in range(n):
        iid[p] = item_iid[order[p]]
    m = lab_gid.shape[0]
    lstart = np.zeros(span + 1, np.int64)
    for r in range(m):
        g = lab_gid[r] - g_lo
        if 0 <= g < span:
            lstart[g + 1] += 1
    for g in range(span):
        lstart[g + 1] += lstart[g]
    lpos = lstart[:span].copy()
    liid = np.empty(lstart[span], np.int64)
    lbit = np.empty(lstart[span], np.int64)
    lrel = np.empty(lstart[span], np.float64)
    for r in range(m):
        g = lab_gid[r] - g_lo
        if 0 <= g < span:
            q = lpos[g]
            liid[q] = lab_iid[r]
            lbit[q] = lab_bit[r]
            lrel[q] = lab_rel[r]
            lpos[g] = q + 1
    mask = np.zeros(n, np.int64)
    best = np.full(n, np.nan)
    one = np.int64(1)
    for g in range(span):
        for q in range(lstart[g], lstart[g + 1]):
            b = lbit[q]
            v = lrel[q]
            for p in range(start[g], start[g + 1]):
                if iid[p] != liid[q]:
                    continue
                if b >= 0:
                    mask[p] |= one << b
                if not np.isnan(v) and (np.isnan(best[p]) or v > best[p]):
                    best[p] = v
    attr = np.empty(n)
    rel = np.empty(n)
    nw = weights.shape[0]
    for p in range(n):
        a = 0.0
        bits = mask[p]
        for j in range(nw):
            if (bits >> j) & one:
                a += weights[j]
        attr[order[p]] = a
        rel[order[p]] = best[p]
    return attr, rel
