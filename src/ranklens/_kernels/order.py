"""Every query's ranked rows (or its first N) in the order of its convention, written out (``ranklens
trec_eval``'s ``-M``, ``-J`` and relstring select and read rows by their place in that order).

The order is the one :func:`fused.evaluate_queries` computes each measure on (:func:`fused.order_into`:
score descending, ties by the convention's rule), so a selection made here and the measures computed
afterwards agree on which rows come first.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .fused import order_into
from .positions import CHUNKS, chunk_queries

__all__ = ["ordered_rows"]


@njit(parallel=True, cache=True, nogil=True)
def ordered_rows(r_start, r_end, r_idx, score, label, order_mode, item_offs, item_data, depth, starts,
                 out):  # pragma: no cover - compiled
    """Write the row numbers of every query's first ``depth`` ranked rows (all of them when ``depth`` is
    negative) in order to ``out[starts[q]:]``; ``r_idx`` empty: the rows ``r_start[q]:r_end[q]`` themselves.
    Returns how many rows were written."""
    n_q = r_start.shape[0]
    n_chunks = min(n_q, CHUNKS)
    written = 0
    for ch in prange(n_chunks):
        q0, q1, size = chunk_queries(ch, n_chunks, r_start, r_end)
        rows_b = np.empty(size, np.int64)
        s_b = np.empty(size, np.float64)
        l_b = np.empty(size, np.float64)
        o_b = np.empty(size, np.int64)
        part = 0
        for q in range(q0, q1):
            n = r_end[q] - r_start[q]
            for t in range(n):
                r = r_start[q] + t if r_idx.shape[0] == 0 else r_idx[r_start[q] + t]
                rows_b[t] = r
                s_b[t] = score[r]
                l_b[t] = label[r]
            o = order_into(s_b[:n], l_b[:n], rows_b[:n], order_mode, item_offs, item_data, o_b)
            m = n if depth < 0 else min(n, depth)
            for t in range(m):
                out[starts[q] + t] = rows_b[o[t]]
            part += m
        written += part
    return written
