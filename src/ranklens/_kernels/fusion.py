"""Rank fusion: several runs' rows of one query -> one fused list, per query in one pass.

The rows of every run come grouped by query and run (per query and run, a range of positions in the runs'
rows one after the other, so a query's rows are the first run's rows in input order, then the second
run's...). Per query: each run's rows are put in ranked order (numba's quicksort of the negated scores,
the order a ``ranx.Run`` gives its documents when it is built, or a stable sort keeping tied rows in input
order; rows already in that order are kept without sorting), normalised (``NORM_*``), gathered per
document (an open-addressing table of the 64-bit hashes of the query's item ids, equal hashes confirmed on
the ids themselves, so a collision never joins two documents), and fused (``FUSE_*``) into one score per
document; the documents are written in descending fused score (ties
in order of first appearance: first run holding them, then rank there). Definitions: ranx 0.3.21's
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
from .group import number_id, row_of, table_size
from .positions import CHUNKS, chunk_queries

__all__ = ["fuse_queries", "take_strings"]

#: ranx's position of a document a run does not hold, in Condorcet's pairwise votes
_ABSENT = 1_000_000
#: ranx's score of a missing document in CombMAX / CombMIN
_FLOOR, _CEIL = -1e9, 1e9
#: ranx's smallest denominator of a normalisation
_EPS = 1e-9


@njit(cache=True, nogil=True)
def _order(s, stable):  # pragma: no cover - compiled
    """Ranked order of scores ``s``: numba's quicksort of the negated scores (ranx), or stable (tied rows
    keep their order). Rows already in that order (strictly decreasing scores; for a stable sort, never
    increasing), as a run file lists them, are not sorted: the sort would give them back as they are."""
    n = s.shape[0]
    ranked = True
    for i in range(1, n):
        if s[i] > s[i - 1] or (s[i] == s[i - 1] and not stable):
            ranked = False
            break
    if ranked:
        return np.arange(n)
    neg = np.empty(n, np.float64)
    for i in range(n):
        neg[i] = -s[i]
    if stable:
        return np.argsort(neg, kind="mergesort")
    return np.argsort(neg)


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


@njit(cache=True, nogil=True)
def _condorcet(a, b, n, pos, present, weights, n_runs):  # pragma: no cover - compiled
    """Candidates ``a[:n]`` sorted by the pairwise vote (``b``: a work buffer): a bottom-up stable merge sort
    (when the vote is a consistent total order, the one order every comparison sort gives). Returns the
    buffer holding the result."""
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if _first(a[i], a[j], pos, present, weights, n_runs):
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
    if method == FUSE_MED:
        m = buf[:n]
        m.sort()
        h = n // 2
        return m[h] if n % 2 == 1 else (m[h - 1] + m[h]) / 2
    return total


@njit(cache=True, nogil=True)
def _candidates(rows, m, hashes, is_str, ints, offs, data, cand, table, cand_row):  # pragma: no cover - compiled
    """Number the distinct documents of a query's rows ``rows[:m]`` into ``cand`` through an open-addressing
    table of their ids (``table``: at least 4m slots; :func:`group.number_id`, so a collision of hashes never joins two
    documents); ``cand_row[c]``: a row of document ``c``. Returns their number."""
    size, shift = table_size(m)
    mask = np.uint64(size - 1)
    tab = table[:size]
    tab[:] = -1
    n_c = 0
    for t in range(m):
        c, n_c = number_id(tab, shift, mask, cand_row, n_c, hashes, is_str, ints, offs, data, rows[t])
        cand[t] = c
    return n_c


@njit(cache=True, nogil=True)
def _fuse_query(q, at, rstart, rend, idx, hashes, is_str, ints, offs, data, score, ties, n_runs, norm, method, weights,
                par, out_row, out_score, rows, cand, table, cand_row, pos, val, n_r, vals, present, cpos, init,
                seen, fused, tmp, buf):  # pragma: no cover - compiled
    """Fuse query ``q`` (its rows in run ``r``: positions ``rstart[q, r]:rend[q, r]``) in the chunk's work buffers;
    write its documents from ``out_*[at]``; return their number, or ``-1 - row`` for a row whose run holds its
    document twice."""
    m = 0
    for r in range(n_runs):
        for p in range(rstart[q, r], rend[q, r]):
            rows[m] = row_of(idx, p)
            m += 1
    n_c = _candidates(rows, m, hashes, is_str, ints, offs, data, cand, table, cand_row)
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
        o = _order(s, ties[r] != FUSE_TIES_QUICKSORT)
        out = val[a:b]
        _normalise(s, o, norm, n_c, out)
        if norm == NORM_MIN_MAX_INVERTED:  # ranx sorts the run again by the inverted values
            ranked = tmp[:b - a]
            for p in range(b - a):
                ranked[p] = out[o[p]]
            o = o[_order(ranked, ties[r] == FUSE_TIES_STABLE)]
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
        ranked_c = _condorcet(table[:n_c], table[n_c:2 * n_c], n_c, cpos, present, weights, n_runs)
        for p in range(n_c):
            fused[ranked_c[p]] = n_c - p
    else:
        for c in range(n_c):
            fused[c] = _fused(c, vals, present, cpos, n_r, n_c, n_runs, method, weights, par, buf)
    neg = tmp[:n_c]
    for p in range(n_c):
        neg[p] = -fused[init[p]]
    final = np.argsort(neg, kind="mergesort")
    for p in range(n_c):
        c = init[final[p]]
        out_row[at + p] = cand_row[c]
        out_score[at + p] = fused[c]
    return n_c


@njit(parallel=True, cache=True, nogil=True)
def fuse_queries(lo, hi, rstart, rend, idx, hashes, is_str, ints, offs, data, score, ties, n_runs, norm, method,
                 weights, par, out_row, out_score, count, first):  # pragma: no cover - compiled
    """Fuse every query (see the module's docstring). Query ``q``'s rows of run ``r`` are the positions
    ``rstart[q, r]:rend[q, r]`` (rows ``idx[p]``, or ``p`` itself when ``idx`` is empty) of the runs' rows one after
    the other: document id ``(is_str, ints, offs, data)`` hashed ``hashes``, score ``score``. ``lo[q]:hi[q]``: the
    query's share of the output (its number of rows); a chunk of queries writes its documents one query after the
    other from the ``lo`` of its first query, so only the slots filled are touched: per query ``q``, ``count[q]``
    documents into ``out_row`` (a row holding the document) and ``out_score`` (its fused score) from slot
    ``first[q]``, or ``count[q] = -1 - row`` when a run holds that row's document twice. ``ties``, per run:
    ``FUSE_TIES_QUICKSORT`` (rows in a dict's order: sorted as ``ranx.Run`` sorts them), ``FUSE_TIES_RANKED``
    (rows already in a ``ranx.Run``'s order: kept; a second sort, after ``min-max-inverted``, is ranx's
    quicksort) or ``FUSE_TIES_STABLE`` (every sort stable: tied rows keep the input order). ``par``: RRF's k,
    CombGMNZ's gamma, logN-ISR's sigma, RBC's phi. Queries are taken in chunks, each allocating its work
    buffers once for its longest query. Returns ``count``."""
    n_q = lo.shape[0]
    n_chunks = min(n_q, CHUNKS)
    for ch in prange(n_chunks):
        q0, q1, size = chunk_queries(ch, n_chunks, lo, hi)
        rows = np.empty(size, np.int64)
        cand = np.empty(size, np.int64)
        table = np.empty(4 * size + 4, np.int64)
        cand_row = np.empty(size, np.int64)
        pos = np.empty(size, np.int64)
        val = np.empty(size, np.float64)
        n_r = np.zeros(n_runs, np.int64)
        vals = np.empty(size * n_runs, np.float64)
        present = np.empty(size * n_runs, np.bool_)
        cpos = np.empty(size * n_runs, np.int64)
        init = np.empty(size, np.int64)
        seen = np.empty(size, np.bool_)
        fused = np.empty(size, np.float64)
        tmp = np.empty(size, np.float64)
        buf = np.empty(n_runs, np.float64)
        at = lo[q0] if q1 > q0 else 0
        for q in range(q0, q1):
            first[q] = at
            count[q] = _fuse_query(q, at, rstart, rend, idx, hashes, is_str, ints, offs, data, score, ties, n_runs,
                                   norm, method, weights, par, out_row, out_score, rows, cand, table, cand_row, pos,
                                   val, n_r, vals, present, cpos, init, seen, fused, tmp, buf)
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
