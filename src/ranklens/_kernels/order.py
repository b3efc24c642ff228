"""Per-query ordering of a ranked list held as flat arrays with offsets.

Kernels here see only numpy arrays and small integers: never a DataFrame, a
file or a Python object. Every function is parallel over queries.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

#: Stable sort by score descending, equal scores by ``key`` ascending, then
#: by input position.
STABLE = 0
#: numba's quicksort ``argsort`` of the negated scores (what ranx's ``Run``
#: does when it sorts a query's documents).
QUICKSORT_NEG = 1

__all__ = ["QUICKSORT_NEG", "STABLE", "sort_segments"]


@njit(parallel=True, cache=True, nogil=True)
def sort_segments(offsets, score, key, use_key, mode):  # pragma: no cover - compiled
    """Return a permutation putting each query's rows in ranked order.

    ``offsets`` has ``n_queries + 1`` entries; rows ``offsets[q]:offsets[q+1]``
    belong to query ``q``. The permutation holds global row indices and never
    moves a row out of its query's slice.
    """
    n_q = offsets.shape[0] - 1
    perm = np.empty(score.shape[0], np.int64)
    for q in prange(n_q):
        lo = offsets[q]
        hi = offsets[q + 1]
        n = hi - lo
        if n == 0:
            continue
        neg = np.empty(n, np.float64)
        if mode == QUICKSORT_NEG:
            for i in range(n):
                neg[i] = -score[lo + i]
            o = np.argsort(neg)
            for i in range(n):
                perm[lo + i] = lo + o[i]
        elif use_key:
            o1 = np.argsort(key[lo:hi], kind="mergesort")
            for i in range(n):
                neg[i] = -score[lo + o1[i]]
            o2 = np.argsort(neg, kind="mergesort")
            for i in range(n):
                perm[lo + i] = lo + o1[o2[i]]
        else:
            already = True
            for i in range(1, n):
                if score[lo + i] > score[lo + i - 1]:
                    already = False
                    break
            if already:
                for i in range(n):
                    perm[lo + i] = lo + i
            else:
                for i in range(n):
                    neg[i] = -score[lo + i]
                o = np.argsort(neg, kind="mergesort")
                for i in range(n):
                    perm[lo + i] = lo + o[i]
    return perm
