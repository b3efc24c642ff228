"""Rank fusion, the parts of a query's fusion that both of its paths share (:mod:`.fusion`).

* the query's documents, numbered as they come through a table of hashed ids probed as :func:`group.probe` does:
  each run's rows are hashed here, a query at a time, into a buffer (FNV-1a of the bytes, or the integer itself, as
  :func:`group.hash_items`), so no hash of every row is written beforehand; the table keeps one hash per document and
  every equal hash is confirmed on the ids (a collision of hashes never joins two documents);
* a run's ranked order, into a buffer (rows already in order, as a run file lists them, are not sorted);
* the fused list's order: descending fused score, ties in order of first appearance (numba's stable argsort of the
  negated scores, NaN last, as one merge sort into buffers reused from query to query), or Condorcet's by the same
  merge sort.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .group import hash_bytes, same_id, table_size

__all__ = ["doc_hash", "doc_hashes", "merge_sort", "new_table", "number_doc", "ranked_order", "sort_desc"]

#: Rows sorted by insertion before the merges of :func:`sort_desc`
_RUN = 16
#: ranx's position of a document a run does not hold, in Condorcet's pairwise votes
_ABSENT = 1_000_000
#: 2**64 / golden ratio: the Fibonacci slot of a hash, as :func:`group.probe` takes it
_FIB = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def new_table(table, m):  # pragma: no cover - compiled
    """An empty table for ``m`` rows in ``table`` (:func:`group.table_size`): its shift and mask."""
    size, shift = table_size(m)
    table[:size] = -1
    return shift, np.uint64(size - 1)


@njit(cache=True, nogil=True, inline="always")
def doc_hash(is_str, ints, offs, data, row):  # pragma: no cover - compiled
    """The 64-bit hash of row ``row``'s id: FNV-1a of its bytes, or the integer itself (as :func:`group.hash_items`)."""
    if is_str:
        return hash_bytes(data, offs[row], offs[row + 1])
    return np.uint64(ints[row])


@njit(cache=True, nogil=True)
def doc_hashes(rows, is_str, ints, offs, data, out):  # pragma: no cover - compiled
    """The hashes of rows ``rows``' ids (:func:`doc_hash`) into ``out`` (returned: ``out[:n]``), in a pass of their
    own before they are probed (hashed in the probing loop, they made it several times slower)."""
    n = rows.shape[0]
    for t in range(n):
        out[t] = doc_hash(is_str, ints, offs, data, rows[t])
    return out[:n]


@njit(cache=True, nogil=True, inline="always")
def number_doc(table, shift, mask, cand_hash, cand_row, n_c, is_str, ints, offs, data, row, h):  # pragma: no cover
    """``(document, n_c)``: the number of row ``row``'s id (hashed ``h``, :func:`doc_hashes`) among the ``n_c``
    documents numbered so far (document ``c``: hashed ``cand_hash[c]``, a row of it ``cand_row[c]``), numbering it
    ``n_c`` when it is new. The table is probed as :func:`group.probe` probes (Fibonacci slot, linear steps, equal
    hashes confirmed on the ids by :func:`group.same_id`), but with one hash per document rather than per row."""
    slot = (h * _FIB) >> shift
    while True:
        c = table[slot]
        if c < 0:
            break
        if cand_hash[c] == h and same_id(is_str, ints, offs, data, cand_row[c], ints, offs, data, row):
            return c, n_c
        slot = (slot + np.uint64(1)) & mask
    table[slot] = n_c
    cand_hash[n_c] = h
    cand_row[n_c] = row
    return n_c, n_c + 1


@njit(cache=True, nogil=True)
def ranked_order(s, stable, o, neg):  # pragma: no cover - compiled
    """Ranked order of scores ``s`` into ``o`` (returned: ``o[:n]``; ``neg``: a work buffer): numba's quicksort of the
    negated scores (ranx), or stable (tied rows keep their order). Rows already in that order (strictly decreasing
    scores; for a stable sort, never increasing), as a run file lists them, are not sorted: the sort would give them
    back as they are."""
    n = s.shape[0]
    ranked = True
    for i in range(1, n):
        if s[i] > s[i - 1] or (s[i] == s[i - 1] and not stable):
            ranked = False
            break
    out = o[:n]
    if ranked:
        for i in range(n):
            out[i] = i
        return out
    m = neg[:n]
    for i in range(n):
        m[i] = -s[i]
    if stable:
        out[:] = np.argsort(m, kind="mergesort")
    else:
        out[:] = np.argsort(m)
    return out


@njit(cache=True, nogil=True, inline="always")
def _lt(x, y):  # pragma: no cover - compiled
    """numba's and numpy's order of floats: NaN after every number."""
    return x < y or (y != y and x == x)


@njit(cache=True, nogil=True)
def _first(x, y, pos, present, weights, n_runs):  # pragma: no cover - compiled
    """Condorcet's vote: whether ``x`` goes before ``y`` (ranx: x's votes >= y's, where x gets a run's
    weight when it is ranked above y there, a document a run does not hold sitting at 1,000,000, and y
    gets the weight of every other run). ``pos`` and ``present`` are candidates x runs, flattened."""
    xv = 0.0
    yv = 0.0
    for r in range(n_runs):
        px = pos[x * n_runs + r] if present[x * n_runs + r] else _ABSENT
        py = pos[y * n_runs + r] if present[y * n_runs + r] else _ABSENT
        if px < py:
            xv += weights[r]
        else:
            yv += weights[r]
    return xv >= yv


@njit(cache=True, nogil=True, inline="always")
def _left(x, y, neg, pos, present, weights, n_runs, vote):  # pragma: no cover - compiled
    """Whether ``x`` (the left one) goes first: by Condorcet's vote, or unless ``neg[y]`` is smaller."""
    if vote:
        return _first(x, y, pos, present, weights, n_runs)
    return not _lt(neg[y], neg[x])


@njit(cache=True, nogil=True)
def merge_sort(a, b, n, run, neg, pos, present, weights, n_runs, vote):  # pragma: no cover - compiled
    """``a[:n]`` sorted (``b``: a work buffer; returns the one holding the result): runs of ``run`` sorted by
    insertion, then bottom-up merges, stable; by Condorcet's vote (``vote``: when the vote is a consistent total
    order, the one order every comparison sort gives) or by ascending ``neg`` (NaN last)."""
    for lo in range(0, n, run):
        hi = min(lo + run, n)
        for i in range(lo + 1, hi):
            x = a[i]
            j = i
            while j > lo and not _left(a[j - 1], x, neg, pos, present, weights, n_runs, vote):
                a[j] = a[j - 1]
                j -= 1
            a[j] = x
    width = run
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if _left(a[i], a[j], neg, pos, present, weights, n_runs, vote):
                    b[k] = a[i]
                    i += 1
                else:
                    b[k] = a[j]
                    j += 1
                k += 1
            while i < mid:
                b[k] = a[i]
                i += 1
                k += 1
            while j < hi:
                b[k] = a[j]
                j += 1
                k += 1
        a, b = b, a
        width *= 2
    return a


@njit(cache=True, nogil=True)
def sort_desc(key, n, neg, a, b):  # pragma: no cover - compiled
    """Positions ``0:n`` in descending ``key``, ties in position order (numba's stable argsort of ``-key``, NaN last),
    in the buffers ``a`` and ``b`` (:func:`merge_sort`, runs of 16); returns the one holding the result."""
    for i in range(n):
        neg[i] = -key[i]
        a[i] = i
    none = np.empty(0, np.int64)
    return merge_sort(a, b, n, _RUN, neg, none, np.empty(0, np.bool_), np.empty(0, np.float64), 0, False)
