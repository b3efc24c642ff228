"""Repeated 64-bit values, for the monitor's ingest checks: how many values of an array equal an earlier one.

The ingest looks for a row that repeats another (an item twice in one served list, a label row given twice) through
64-bit hashes of the rows: distinct hashes prove distinct rows, and a repeated hash sends the chunk to the exact
search (:mod:`ranklens.monitor.storage.chunk`). Counting the repeats here replaces DuckDB's ``count(DISTINCT ...)``
(a hash table of every value, about 0.1 s of CPU per million values) by one pass that cuts the values into
buckets by their top bits and one small open-addressing table per bucket that stays in the cache (2.6 million
values: 0.04 s on one thread). Called through ``dispatch.call("count_repeats", h)`` (the caller's own entry point:
importing this file imports numba, which the compiled module spares).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["count_repeats"]

_PER_BUCKET = 1024  # values per bucket on average: a bucket's table (4 x 8 KB) stays in the L1/L2 cache


@njit(cache=True, nogil=True)
def count_repeats(h):  # pragma: no cover - compiled
    """How many values of ``h`` equal an earlier value of ``h`` (``len(h)`` less the number of distinct values)."""
    n = h.shape[0]
    if n < 2:
        return 0
    bits = 0
    while bits < 20 and (np.int64(_PER_BUCKET) << bits) < n:
        bits += 1
    nb = np.int64(1) << bits
    shift = np.uint64(64 - bits)
    one = np.uint64(1)
    starts = np.zeros(nb + 1, np.int64)
    if bits == 0:
        starts[1] = n
    else:
        for i in range(n):
            starts[np.int64(h[i] >> shift) + 1] += 1
        for b in range(nb):
            starts[b + 1] += starts[b]
    part = np.empty(n, np.uint64)
    if bits == 0:
        part[:] = h
    else:
        pos = starts[:nb].copy()
        for i in range(n):
            b = np.int64(h[i] >> shift)
            part[pos[b]] = h[i]
            pos[b] += 1
    biggest = 0
    for b in range(nb):
        biggest = max(biggest, starts[b + 1] - starts[b])
    size = 16
    while size < 2 * biggest:
        size *= 2
    mask = np.uint64(size - 1)
    table = np.empty(size, np.uint64)
    owner = np.full(size, -1, np.int64)  # the bucket whose value a slot holds: no clearing between buckets
    out = 0
    for b in range(nb):
        for i in range(starts[b], starts[b + 1]):
            v = part[i]
            slot = np.int64(v & mask)
            seen = False
            while owner[slot] == b:
                if table[slot] == v:
                    seen = True
                    break
                slot = np.int64((np.uint64(slot) + one) & mask)
            if seen:
                out += 1
            else:
                owner[slot] = b
                table[slot] = v
    return out

