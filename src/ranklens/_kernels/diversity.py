"""ndeval's greedy ideal list (``idealResult`` of ``ndeval.c``), every query at once.

At each rank the item of largest gain ``sum over its subtopics s of (1 - alpha)^c_s`` (``c_s``: the items relevant
to s placed so far) among the items not yet placed; ties go to the first item in the order given (the caller orders
a query's items by id descending: ndeval's larger docno). An item's gain adds its subtopics in the order given, from
0.0, and a placed item multiplies its subtopics' factors by ``1 - alpha``: the same operations in the same order as
ndeval, so the gains are ndeval's to the last bit.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["greedy_ideal"]


@njit(parallel=True, cache=True, nogil=True)
def greedy_ideal(q_start, d_start, keys, n_keys, alpha):  # pragma: no cover - compiled
    """The gains of every query's greedy ideal list, rank by rank: query ``q``'s items are ``q_start[q]`` to
    ``q_start[q + 1]`` (in tie order), item ``d``'s relevant subtopics the (query, subtopic) keys
    ``keys[d_start[d]:d_start[d + 1]]`` (distinct per query, from 0 to ``n_keys - 1``). ``out[q_start[q] + r]`` is
    the gain of the item placed at 0-based rank ``r`` of query ``q``."""
    n_q = q_start.shape[0] - 1
    n_d = d_start.shape[0] - 1
    out = np.empty(n_d, np.float64)
    factor = np.ones(n_keys, np.float64)
    placed = np.zeros(n_d, np.bool_)
    keep = 1.0 - alpha
    for q in prange(n_q):
        d0, d1 = q_start[q], q_start[q + 1]
        for step in range(d1 - d0):
            best, pick = -1.0, -1
            for d in range(d0, d1):
                if placed[d]:
                    continue
                g = 0.0
                for p in range(d_start[d], d_start[d + 1]):
                    g += factor[keys[p]]
                if g > best:
                    best, pick = g, d
            placed[pick] = True
            out[d0 + step] = best
            for p in range(d_start[pick], d_start[pick + 1]):
                factor[keys[p]] *= keep
    return out
