"""Rank fusion: several runs' rows of one query -> one fused list, per query in one pass.

The rows of every run come grouped by query and run (per query and run, a range of positions in the runs'
rows one after the other, so a query's rows are the first run's rows in input order, then the second
run's...). Per query: each run's rows are put in ranked order (numba's quicksort of the negated scores,
the order a ``ranx.Run`` gives its documents when it is built, or a stable sort keeping tied rows in input
order; rows already in that order are kept without sorting), normalised (``NORM_*``), gathered per
document (an open-addressing table of the 64-bit hashes of the query's item ids, equal hashes confirmed on
the ids themselves, so a collision never joins two documents), and fused (``FUSE_*``) into one score per
document; the documents are written in descending fused score (ties in order of first appearance: first run
holding them, then rank there). The methods that sum over the runs holding a document add each row to its
document's sums as it comes (:func:`_fuse_sums`); med, the Borda and Condorcet methods and norm ``borda`` fill
matrices documents x runs first (:func:`_fuse_query`). Both number, order and sort with :mod:`.fusion_parts`, in
buffers allocated once per chunk of queries. Definitions: ranx 0.3.21's
``ranx.fuse`` (``ranx/fusion/*.py``, ``ranx/normalization/*.py``), read, not copied; see
:mod:`ranklens._integrations.fusion` for the formulas.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .codes import (
    FUSE_ANZ,
    FUSE_BORDA,
    FUSE_CONDORCET,
    FUSE_GMNZ,
    FUSE_ISR,
    FUSE_LOG_ISR,
    FUSE_LOGN_ISR,
    FUSE_MAX,
    FUSE_MED,
    FUSE_MIN,
    FUSE_MIXED,
    FUSE_MNZ,
    FUSE_RBC,
    FUSE_RRF,
    FUSE_SUM,
    FUSE_TIES_QUICKSORT,
    FUSE_TIES_STABLE,
    FUSE_W_BORDA,
    FUSE_W_CONDORCET,
    FUSE_WMNZ,
    FUSE_WSUM,
    NORM_BORDA,
    NORM_MAX,
    NORM_MIN_MAX,
    NORM_MIN_MAX_INVERTED,
    NORM_RANK,
    NORM_SUM,
    NORM_ZMUV,
)
from .fusion_parts import doc_hashes, merge_sort, new_table, number_doc, ranked_order, sort_desc
from .group import row_of
from .positions import CHUNKS, chunk_queries

__all__ = ["fuse_queries", "fusion_outputs", "take_strings"]

#: ranx's score of a missing document in CombMAX / CombMIN
_FLOOR, _CEIL = -1e9, 1e9
#: ranx's smallest denominator of a normalisation
_EPS = 1e-9


@njit(cache=True, nogil=True)
def _normalise(s, o, norm, n_c, out):  # pragma: no cover - compiled
    """Normalised scores of one run's rows ``s`` (input order), ranked order ``o``, into ``out``."""
    n = s.shape[0]
    if n == 0:
        return
    lo = s[o[0]]
    hi = s[o[0]]
    total = 0.0
    for p in range(n):  # in ranked order, as ranx reads a sorted run's values
        v = s[o[p]]
        lo = min(lo, v)
        hi = max(hi, v)
        total += v
    if norm == NORM_MIN_MAX or norm == NORM_MIN_MAX_INVERTED:
        den = max(hi - lo, _EPS)
        for i in range(n):
            out[i] = (s[i] - lo) / den if norm == NORM_MIN_MAX else (hi - s[i]) / den
    elif norm == NORM_MAX:
        den = max(hi, _EPS)
        for i in range(n):
            out[i] = s[i] / den
    elif norm == NORM_SUM:
        den = max(total - lo * n, _EPS)
        for i in range(n):
            out[i] = (s[i] - lo) / den
    elif norm == NORM_ZMUV:
        mean = total / n
        var = 0.0
        for p in range(n):
            d = s[o[p]] - mean
            var += d * d
        den = max(math.sqrt(var / n), _EPS)
        for i in range(n):
            out[i] = (s[i] - mean) / den
    elif norm == NORM_RANK:
        for p in range(n):
            out[o[p]] = 1.0 - p / n
    elif norm == NORM_BORDA:
        for p in range(n):
            out[o[p]] = 1.0 - p / n_c
    else:
        for i in range(n):
            out[i] = s[i]


@njit(cache=True, nogil=True)
def _fused(c, vals, present, pos, n_r, n_c, n_runs, method, weights, par, buf):  # pragma: no cover - compiled
    """The fused score of candidate ``c`` (its normalised value, presence and position in every run; the
    matrices candidates x runs, flattened)."""
    total = 0.0
    n = 0
    wsum = 0.0
    best = -np.inf
    worst = np.inf
    for r in range(n_runs):
        at = c * n_runs + r
        if present[at]:
            v = vals[at]
            if method == FUSE_RRF:
                v = 1.0 / (par[0] + pos[at] + 1.0)
            elif method == FUSE_ISR or method == FUSE_LOG_ISR or method == FUSE_LOGN_ISR:
                v = 1.0 / ((pos[at] + 1.0) ** 2)
            elif method == FUSE_RBC:
                v = (1.0 - par[3]) * par[3] ** pos[at]
            elif method == FUSE_BORDA or method == FUSE_W_BORDA:
                v = float(n_c - pos[at])
            buf[n] = v
            n += 1
        elif method == FUSE_BORDA or method == FUSE_W_BORDA:
            v = (n_c - n_r[r] + 1) / 2
        elif method == FUSE_MAX:
            v = _FLOOR
        elif method == FUSE_MIN:
            v = _CEIL
        else:
            v = 0.0
        if method == FUSE_WSUM or method == FUSE_W_BORDA:
            total += weights[r] * v
        elif method == FUSE_MIXED:
            if present[at]:
                total += v * weights[r]
        elif present[at] or method == FUSE_SUM or method == FUSE_RRF or method == FUSE_RBC \
                or method == FUSE_BORDA:
            total += v
        if present[at]:
            wsum += weights[r]
        best = max(best, v)
        worst = min(worst, v)
    if method == FUSE_MED:
        m = buf[:n]
        m.sort()
        h = n // 2
        return m[h] if n % 2 == 1 else (m[h - 1] + m[h]) / 2
    return _finish(method, total, n, wsum, best, worst, par)


@njit(cache=True, nogil=True, inline="always")
def _finish(method, total, n, wsum, best, worst, par):  # pragma: no cover - compiled
    """A document's fused score from its sums over the runs (``total``: of its values, weighted for the weighted
    methods; ``n``: the runs holding it; ``wsum``: their weights; ``best``, ``worst``: its largest and smallest
    values, the missing ones counted)."""
    if method == FUSE_MNZ or method == FUSE_ISR:
        return total * n
    if method == FUSE_GMNZ:
        return total * float(n) ** par[1]
    if method == FUSE_ANZ:
        return total / n
    if method == FUSE_LOG_ISR:
        return total * math.log(n)
    if method == FUSE_LOGN_ISR:
        return total * math.log(n + par[2])
    if method == FUSE_WMNZ:
        return total * wsum
    if method == FUSE_MIXED:
        return total * math.sqrt(n)
    if method == FUSE_MAX:
        return best
    if method == FUSE_MIN:
        return worst
    return total


@njit(cache=True, nogil=True)
def _candidates(rows, m, is_str, ints, offs, data, cand, w):  # pragma: no cover - compiled
    """Number the distinct documents of a query's rows ``rows[:m]`` into ``cand`` (:func:`fusion_parts.number_doc`;
    ``w``: the chunk's work buffers, :func:`_buffers`). Returns their number."""
    table, cand_hash, cand_row = w[0], w[1], w[2]
    shift, mask = new_table(table, m)
    hashes = doc_hashes(rows[:m], is_str, ints, offs, data, w[10])
    n_c = 0
    for t in range(m):
        c, n_c = number_doc(table, shift, mask, cand_hash, cand_row, n_c, is_str, ints, offs, data, rows[t], hashes[t])
        cand[t] = c
    return n_c


@njit(cache=True, nogil=True)
def _run_values(a, b, idx, is_str, ints, offs, data, score, tie, norm, w):  # pragma: no cover - compiled
    """One run's rows of a query (positions ``a:b``): their rows into ``w[3]``, the hashes of their ids into ``w[10]``,
    normalised values into ``w[6]`` (input order); returns their ranked order (the sort after ``min-max-inverted``
    included)."""
    rows, s, o, neg, val = w[3][:b - a], w[4][:b - a], w[5], w[7], w[6][:b - a]
    for t in range(b - a):
        rows[t] = row_of(idx, a + t)
        s[t] = score[rows[t]]
    doc_hashes(rows, is_str, ints, offs, data, w[10])
    o = ranked_order(s, tie != FUSE_TIES_QUICKSORT, o, neg)
    _normalise(s, o, norm, 0, val)
    if norm == NORM_MIN_MAX_INVERTED:  # ranx sorts the run again by the inverted values
        for p in range(b - a):
            s[p] = val[o[p]]
        o = o[ranked_order(s, tie == FUSE_TIES_STABLE, w[8], neg)]
    return o


@njit(cache=True, nogil=True)
def _twice(n, is_str, ints, offs, data, w):  # pragma: no cover - compiled
    """``-1 - row`` of the first row (input order) of a run's rows ``w[3][:n]`` whose document an earlier row of the
    run holds (the run's documents numbered again, in input order)."""
    rows = w[3]
    shift, mask = new_table(w[0], n)
    n_c = 0
    for t in range(n):
        before = n_c
        c, n_c = number_doc(w[0], shift, mask, w[1], w[2], n_c, is_str, ints, offs, data, rows[t], w[10][t])
        if c < before:
            return -1 - rows[t]
    return 0


@njit(cache=True, nogil=True)
def _fuse_sums(q, at, rstart, rend, idx, is_str, ints, offs, data, score, ties, n_runs, norm, method, weights, par,
               out_row, out_score, w, acc, n_in, last):  # pragma: no cover - compiled
    """Fuse query ``q`` by a method that sums over the runs holding a document (all but med, the Borda and Condorcet
    methods, and norm ``borda``): each row's value is added to its document's sums as it comes, run after run, in
    ranked order, so the documents are numbered in order of first appearance (``acc``: per document its total,
    weights, largest and smallest value, fused score; ``n_in``: the runs holding it; ``last``: the last). The sums
    run over the runs in order, as :func:`_fused` adds them. Returns what :func:`_fuse_query` does."""
    m = 0
    for r in range(n_runs):
        m += rend[q, r] - rstart[q, r]
    shift, mask = new_table(w[0], m)
    rows, val = w[3], w[6]
    n_c = 0
    for r in range(n_runs):
        a, b = rstart[q, r], rend[q, r]
        o = _run_values(a, b, idx, is_str, ints, offs, data, score, ties[r], norm, w)
        for p in range(b - a):
            t = o[p]
            before = n_c
            c, n_c = number_doc(w[0], shift, mask, w[1], w[2], n_c, is_str, ints, offs, data, rows[t], w[10][t])
            if c == before:
                acc[0, c], acc[1, c], acc[2, c], acc[3, c], n_in[c] = 0.0, 0.0, -np.inf, np.inf, 0
            elif last[c] == r:
                return _twice(b - a, is_str, ints, offs, data, w)
            last[c] = r
            v = val[t]
            if method == FUSE_RRF:
                v = 1.0 / (par[0] + p + 1.0)
            elif method == FUSE_ISR or method == FUSE_LOG_ISR or method == FUSE_LOGN_ISR:
                v = 1.0 / ((p + 1.0) ** 2)
            elif method == FUSE_RBC:
                v = (1.0 - par[3]) * par[3] ** p
            if method == FUSE_WSUM:
                acc[0, c] += weights[r] * v
            elif method == FUSE_MIXED:
                acc[0, c] += v * weights[r]
            else:
                acc[0, c] += v
            acc[1, c] += weights[r]
            acc[2, c] = max(acc[2, c], v)
            acc[3, c] = min(acc[3, c], v)
            n_in[c] += 1
    for c in range(n_c):
        n = n_in[c]
        best = acc[2, c] if n == n_runs else max(acc[2, c], _FLOOR)
        worst = acc[3, c] if n == n_runs else min(acc[3, c], _CEIL)
        acc[4, c] = _finish(method, acc[0, c], n, acc[1, c], best, worst, par)
    final = sort_desc(acc[4], n_c, w[7], w[8], w[9])
    for p in range(n_c):
        c = final[p]
        out_row[at + p] = w[2][c]
        out_score[at + p] = acc[4, c]
    return n_c


@njit(cache=True, nogil=True)
def _fuse_query(q, at, rstart, rend, idx, is_str, ints, offs, data, score, ties, n_runs, norm, method, weights, par,
                out_row, out_score, w, x):  # pragma: no cover - compiled
    """Fuse query ``q`` (its rows in run ``r``: positions ``rstart[q, r]:rend[q, r]``) in the chunk's work buffers
    (``w``, and ``x``: matrices documents x runs, flattened); write its documents from ``out_*[at]``; return their
    number, or ``-1 - row`` for a row whose run holds its document twice."""
    cand, pos, val, n_r, vals, present, cpos, init, seen, fused, buf = x
    rows, tmp, table, cand_row = w[3], w[4], w[0], w[2]
    m = 0
    for r in range(n_runs):
        for p in range(rstart[q, r], rend[q, r]):
            rows[m] = row_of(idx, p)
            m += 1
    n_c = _candidates(rows, m, is_str, ints, offs, data, cand, w)
    cells = n_c * n_runs
    vals[:cells] = 0.0
    present[:cells] = False
    seen[:n_c] = False
    n_init = 0
    a = 0
    for r in range(n_runs):  # each run's rows: ranked order, normalised values, first appearances
        b = a + rend[q, r] - rstart[q, r]
        n_r[r] = b - a
        s = tmp[:b - a]
        for t in range(a, b):
            s[t - a] = score[rows[t]]
        o = ranked_order(s, ties[r] != FUSE_TIES_QUICKSORT, w[5], w[7])
        out = val[a:b]
        _normalise(s, o, norm, n_c, out)
        if norm == NORM_MIN_MAX_INVERTED:  # ranx sorts the run again by the inverted values
            ranked = tmp[:b - a]
            for p in range(b - a):
                ranked[p] = out[o[p]]
            o = o[ranked_order(ranked, ties[r] == FUSE_TIES_STABLE, w[8], w[7])]
        for p in range(b - a):
            t = a + o[p]
            pos[t] = p
            c = cand[t]
            if not seen[c]:
                seen[c] = True
                init[n_init] = c
                cand_row[c] = rows[t]
                n_init += 1
        for t in range(a, b):
            cell = cand[t] * n_runs + r
            if present[cell]:
                return -1 - rows[t]
            present[cell] = True
            vals[cell] = val[t]
            cpos[cell] = pos[t]
        a = b
    if norm == NORM_BORDA:  # every run gets every candidate (ranx's borda_norm)
        for c in range(n_c):
            for r in range(n_runs):
                if not present[c * n_runs + r]:
                    vals[c * n_runs + r] = 0.5 - (n_r[r] - 1) / (2 * n_c)
                    present[c * n_runs + r] = True
    if method == FUSE_CONDORCET or method == FUSE_W_CONDORCET:
        for p in range(n_c):
            table[p] = init[p]
        ranked_c = merge_sort(table[:n_c], table[n_c:2 * n_c], n_c, 1, w[7], cpos, present, weights, n_runs, True)
        for p in range(n_c):
            fused[ranked_c[p]] = n_c - p
    else:
        for c in range(n_c):
            fused[c] = _fused(c, vals, present, cpos, n_r, n_c, n_runs, method, weights, par, buf)
    key = w[6]
    for p in range(n_c):
        key[p] = fused[init[p]]
    final = sort_desc(key, n_c, w[7], w[8], w[9])
    for p in range(n_c):
        c = init[final[p]]
        out_row[at + p] = cand_row[c]
        out_score[at + p] = fused[c]
    return n_c


@njit(cache=True, nogil=True)
def _buffers(size):  # pragma: no cover - compiled
    """A chunk's work buffers for queries of at most ``size`` rows: a table of documents (:mod:`.fusion_parts`), their
    hashes and rows; a run's rows, scores, order, values; sort buffers; the hashes of the rows."""
    return (np.empty(4 * size + 4, np.int64), np.empty(size, np.uint64), np.empty(size, np.int64),
            np.empty(size, np.int64), np.empty(size, np.float64), np.empty(size, np.int64), np.empty(size, np.float64),
            np.empty(size, np.float64), np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size, np.uint64))


@njit(parallel=True, cache=True, nogil=True)
def fuse_queries(lo, hi, rstart, rend, idx, is_str, ints, offs, data, score, ties, n_runs, norm, method, weights, par,
                 out_row, out_score, count, first):  # pragma: no cover - compiled
    """Fuse every query (see the module's docstring). Query ``q``'s rows of run ``r`` are the positions
    ``rstart[q, r]:rend[q, r]`` (rows ``idx[p]``, or ``p`` itself when ``idx`` is empty) of the runs' rows one after
    the other: document id ``(is_str, ints, offs, data)``, score ``score``. ``lo[q]:hi[q]``: the query's share of the
    output (its number of rows); a chunk of queries writes its documents one query after the other from the ``lo`` of
    its first query, so only the slots filled are touched: per query ``q``, ``count[q]`` documents into ``out_row`` (a
    row holding the document) and ``out_score`` (its fused score) from slot ``first[q]``, or ``count[q] = -1 - row``
    when a run holds that row's document twice. ``ties``, per run: ``FUSE_TIES_QUICKSORT`` (rows in a dict's order:
    sorted as ``ranx.Run`` sorts them), ``FUSE_TIES_RANKED`` (rows already in a ``ranx.Run``'s order: kept; a second
    sort, after ``min-max-inverted``, is ranx's quicksort) or ``FUSE_TIES_STABLE`` (every sort stable: tied rows keep
    the input order). ``par``: RRF's k, CombGMNZ's gamma, logN-ISR's sigma, RBC's phi. Queries are taken in chunks,
    each allocating its work buffers once for its longest query. Returns ``count``."""
    n_q = lo.shape[0]
    n_chunks = min(n_q, CHUNKS)
    sums = norm != NORM_BORDA and method != FUSE_MED and method != FUSE_BORDA and method != FUSE_W_BORDA \
        and method != FUSE_CONDORCET and method != FUSE_W_CONDORCET
    for ch in prange(n_chunks):
        q0, q1, size = chunk_queries(ch, n_chunks, lo, hi)
        w = _buffers(size)
        at = lo[q0] if q1 > q0 else 0
        if sums:
            acc = np.empty((5, size), np.float64)
            n_in = np.empty(size, np.int64)
            last = np.empty(size, np.int64)
            for q in range(q0, q1):
                first[q] = at
                count[q] = _fuse_sums(q, at, rstart, rend, idx, is_str, ints, offs, data, score, ties, n_runs, norm,
                                      method, weights, par, out_row, out_score, w, acc, n_in, last)
                if count[q] > 0:
                    at += count[q]
        else:
            x = (np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size, np.float64),
                 np.zeros(n_runs, np.int64), np.empty(size * n_runs, np.float64), np.empty(size * n_runs, np.bool_),
                 np.empty(size * n_runs, np.int64), np.empty(size, np.int64), np.empty(size, np.bool_),
                 np.empty(size, np.float64), np.empty(n_runs, np.float64))
            for q in range(q0, q1):
                first[q] = at
                count[q] = _fuse_query(q, at, rstart, rend, idx, is_str, ints, offs, data, score, ties, n_runs, norm,
                                       method, weights, par, out_row, out_score, w, x)
                if count[q] > 0:
                    at += count[q]
    return count


@njit(cache=True, nogil=True)
def take_strings(offs, data, rows):  # pragma: no cover - compiled
    """``(offsets, data)`` of the strings ``rows`` of ``(offs, data)``, one after the other (the fused run's ids:
    one pass, buffers of their exact size)."""
    n = rows.shape[0]
    out_offs = np.empty(n + 1, np.int64)
    out_offs[0] = 0
    for i in range(n):
        out_offs[i + 1] = out_offs[i] + offs[rows[i] + 1] - offs[rows[i]]
    out = np.empty(out_offs[n], np.uint8)
    for i in range(n):
        a = offs[rows[i]]
        b = out_offs[i]
        for t in range(offs[rows[i] + 1] - a):
            out[b + t] = data[a + t]
    return out_offs, out


@njit(cache=True, nogil=True)
def fusion_outputs(n, n_rows):  # pragma: no cover - compiled
    """Uninitialised, from the kernels' allocator: room for ``n`` fused documents ``(rows, scores)`` and for the runs'
    ``n_rows`` scores. A fusion fills only the first slots of each chunk's share of the first two, and pages are given
    on first touch, small ones (numpy asks the system for huge pages for large arrays, and on a first call, before any
    was freed, each can cost a compaction of memory)."""
    return np.empty(n, np.int64), np.empty(n, np.float64), np.empty(n_rows, np.float64)
