"""Positions, tie groups and chunks of queries: what the per-measure arithmetic of every family shares.

:func:`ranklens._kernels.fused.evaluate_queries` orders a query's rows and calls each family's arithmetic
(:mod:`.graded`: DCG, ERR, RBP; :mod:`.binary`: the measures of a relevance level; :mod:`.trec`: bpref,
infAP, interpolated precision; :mod:`.trec_more`) on its local arrays (rows ``lo:hi``):

* ``score``  - the ordering score, used only to find groups of tied rows (:func:`group_end`);
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

A measure whose normaliser is zero yields 0 there; the caller applies the
convention's rule for such queries. Nothing there aggregates over queries.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .codes import TIES_NONE

__all__ = ["CHUNKS", "chunk_queries", "discounts", "group_end"]

#: Chunks of queries per call of a per-query kernel: enough to balance threads, few buffer allocations.
CHUNKS = 256


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
def group_end(score, i, hi, ties):  # pragma: no cover - compiled
    """The end of the tie group starting at row ``i`` (``i + 1`` under ``TIES_NONE``)."""
    j = i + 1
    if ties != TIES_NONE:
        s = score[i]
        while j < hi and score[j] == s:
            j += 1
    return j


@njit(cache=True, inline="always")
def chunk_queries(ch, n_chunks, r_start, r_end):  # pragma: no cover - compiled
    """Chunk ``ch`` of ``n_chunks``: its queries ``q0:q1`` and its longest list (>= 1), to size its buffers."""
    n_q = r_start.shape[0]
    q0 = ch * n_q // n_chunks
    q1 = (ch + 1) * n_q // n_chunks
    size = 1
    for q in range(q0, q1):
        size = max(size, r_end[q] - r_start[q])
    return q0, q1, size
