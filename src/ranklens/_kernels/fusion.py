"""Rank fusion: several runs' rows of one query -> one fused list, per query in one pass.

The rows of every run come grouped by query (``(start, end, idx)`` of :func:`group.segments` over the
concatenation of the runs, so a query's rows are the first run's rows in input order, then the second
run's...). Per query: each run's rows are put in ranked order (numba's quicksort of the negated scores,
the order a ``ranx.Run`` gives its documents when it is built, or a stable sort keeping tied rows in input
order), normalised (``NORM_*``), gathered per document (a sort of the 64-bit hashes of the query's item ids, equal
hashes confirmed on the ids themselves, so a collision never joins two documents), and
fused (``FUSE_*``) into one score per document; the documents are written in descending fused score (ties
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

__all__ = ["fuse_queries"]

#: ranx's position of a document a run does not hold, in Condorcet's pairwise votes
_ABSENT = 1_000_000
#: ranx's score of a missing document in CombMAX / CombMIN
_FLOOR, _CEIL = -1e9, 1e9
#: ranx's smallest denominator of a normalisation
_EPS = 1e-9


@njit(cache=True, nogil=True)
def _at(idx, p):  # pragma: no cover - compiled
    return p if idx.shape[0] == 0 else idx[p]


@njit(cache=True, nogil=True)
def _order(s, stable):  # pragma: no cover - compiled
    """Ranked order of scores ``s``: numba's quicksort of the negated scores (ranx), or stable (tied rows
    keep their order)."""
    neg = np.empty(s.shape[0], np.float64)
    for i in range(s.shape[0]):
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
    gets the weight of every other run)."""
    xv = 0.0
    yv = 0.0
    for r in range(n_runs):
        px = pos[x, r] if present[x, r] else _ABSENT
        py = pos[y, r] if present[y, r] else _ABSENT
        if px < py:
            xv += weights[r]
        else:
            yv += weights[r]
    return xv >= yv


@njit(cache=True, nogil=True)
def _condorcet(init, pos, present, weights, n_runs):  # pragma: no cover - compiled
    """Candidates ``init`` sorted by the pairwise vote: a bottom-up stable merge sort (when the vote is a
    consistent total order, the one order every comparison sort gives)."""
    n = init.shape[0]
    a = init.copy()
    b = np.empty(n, np.int64)
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
    """The fused score of candidate ``c`` (its normalised value, presence and position in every run)."""
    total = 0.0
    n = 0
    wsum = 0.0
    best = -np.inf
    worst = np.inf
    for r in range(n_runs):
        if present[c, r]:
            v = vals[c, r]
            if method == FUSE_RRF:
                v = 1.0 / (par[0] + pos[c, r] + 1.0)
            elif method == FUSE_ISR or method == FUSE_LOG_ISR or method == FUSE_LOGN_ISR:
                v = 1.0 / ((pos[c, r] + 1.0) ** 2)
            elif method == FUSE_RBC:
                v = (1.0 - par[3]) * par[3] ** pos[c, r]
            elif method == FUSE_BORDA or method == FUSE_W_BORDA:
                v = float(n_c - pos[c, r])
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
            if present[c, r]:
                total += v * weights[r]
        elif present[c, r] or method == FUSE_SUM or method == FUSE_RRF or method == FUSE_RBC \
                or method == FUSE_BORDA:
            total += v
        if present[c, r]:
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
def _same_id(is_str, ints, offs, data, a, b):  # pragma: no cover - compiled
    """Whether rows ``a`` and ``b`` hold the same id (integers, or the bytes of strings)."""
    if not is_str:
        return ints[a] == ints[b]
    la = offs[a + 1] - offs[a]
    if offs[b + 1] - offs[b] != la:
        return False
    for t in range(la):
        if data[offs[a] + t] != data[offs[b] + t]:
            return False
    return True


@njit(cache=True, nogil=True)
def _candidates(rows, hashes, is_str, ints, offs, data, cand):  # pragma: no cover - compiled
    """Number the distinct documents of a query's rows into ``cand`` (rows grouped by the hash of their id,
    every id in a group of equal hashes compared byte by byte); returns their number."""
    m = rows.shape[0]
    h = np.empty(m, np.uint64)
    for t in range(m):
        h[t] = hashes[rows[t]]
    by_hash = np.argsort(h, kind="mergesort")
    n_c = 0
    j0 = 0
    while j0 < m:
        j1 = j0 + 1
        while j1 < m and h[by_hash[j1]] == h[by_hash[j0]]:
            j1 += 1
        first_c = n_c
        for j in range(j0, j1):
            t = by_hash[j]
            c = -1
            for j2 in range(j0, j):  # a hash collision leaves more than one document here: confirm the bytes
                t2 = by_hash[j2]
                if cand[t2] >= first_c and _same_id(is_str, ints, offs, data, rows[t], rows[t2]):
                    c = cand[t2]
                    break
            if c < 0:
                c = n_c
                n_c += 1
            cand[t] = c
        j0 = j1
    return n_c


@njit(cache=True, nogil=True)
def _fuse_query(lo, m, idx, run, hashes, is_str, ints, offs, data, score, ties, n_runs, norm, method, weights, par,
                out_row, out_score):  # pragma: no cover - compiled
    """Fuse one query's ``m`` rows (from slot ``lo``); write its documents from ``out_*[lo]``; return their
    number, or ``-1 - row`` for a row whose run holds its document twice."""
    rows = np.empty(m, np.int64)
    for t in range(m):
        rows[t] = _at(idx, lo + t)
    cand = np.empty(m, np.int64)
    n_c = _candidates(rows, hashes, is_str, ints, offs, data, cand)
    pos = np.empty(m, np.int64)
    val = np.empty(m, np.float64)
    n_r = np.zeros(n_runs, np.int64)
    a = 0
    while a < m:  # each run's rows: ranked order, normalised values
        r = run[rows[a]]
        b = a
        while b < m and run[rows[b]] == r:
            b += 1
        s = np.empty(b - a, np.float64)
        for t in range(a, b):
            s[t - a] = score[rows[t]]
        o = _order(s, ties[r] != FUSE_TIES_QUICKSORT)
        n_r[r] = b - a
        out = np.empty(b - a, np.float64)
        _normalise(s, o, norm, n_c, out)
        if norm == NORM_MIN_MAX_INVERTED:  # ranx sorts the run again by the inverted values
            ranked = np.empty(b - a, np.float64)
            for p in range(b - a):
                ranked[p] = out[o[p]]
            o = o[_order(ranked, ties[r] == FUSE_TIES_STABLE)]
        for p in range(b - a):
            pos[a + o[p]] = p
        for t in range(a, b):
            val[t] = out[t - a]
        a = b
    vals = np.zeros((n_c, n_runs), np.float64)
    present = np.zeros((n_c, n_runs), np.bool_)
    cpos = np.zeros((n_c, n_runs), np.int64)
    first = np.full(n_c, np.iinfo(np.int64).max, np.int64)
    rep = np.empty(n_c, np.int64)
    for t in range(m):
        c = cand[t]
        r = run[rows[t]]
        if present[c, r]:
            return -1 - rows[t]
        present[c, r] = True
        vals[c, r] = val[t]
        cpos[c, r] = pos[t]
        key = r * (m + 1) + pos[t]
        if key < first[c]:
            first[c] = key
            rep[c] = rows[t]
    if norm == NORM_BORDA:  # every run gets every candidate (ranx's borda_norm)
        for c in range(n_c):
            for r in range(n_runs):
                if not present[c, r]:
                    vals[c, r] = 0.5 - (n_r[r] - 1) / (2 * n_c)
                    present[c, r] = True
    init = np.argsort(first, kind="mergesort")
    fused = np.empty(n_c, np.float64)
    if method == FUSE_CONDORCET or method == FUSE_W_CONDORCET:
        ranked = _condorcet(init, cpos, present, weights, n_runs)
        for p in range(n_c):
            fused[ranked[p]] = n_c - p
    else:
        buf = np.empty(n_runs, np.float64)
        for c in range(n_c):
            fused[c] = _fused(c, vals, present, cpos, n_r, n_c, n_runs, method, weights, par, buf)
    neg = np.empty(n_c, np.float64)
    for p in range(n_c):
        neg[p] = -fused[init[p]]
    final = init[np.argsort(neg, kind="mergesort")]
    for p in range(n_c):
        out_row[lo + p] = rep[final[p]]
        out_score[lo + p] = fused[final[p]]
    return n_c


@njit(parallel=True, cache=True, nogil=True)
def fuse_queries(start, end, idx, run, hashes, is_str, ints, offs, data, score, ties, n_runs, norm, method, weights,
                 par, out_row, out_score, count):  # pragma: no cover - compiled
    """Fuse every query (see the module's docstring): rows ``idx`` (or positions) of run ``run``, document id
    ``(is_str, ints, offs, data)`` hashed ``hashes``, score ``score``; per query ``q`` write ``count[q]`` documents into
    ``out_row`` (a row holding the document) and ``out_score`` (its fused score) from slot ``start[q]``,
    or ``count[q] = -1 - row`` when a run holds that row's document twice. ``ties``, per run: ``FUSE_TIES_QUICKSORT``
    (rows in a dict's order: sorted as ``ranx.Run`` sorts them), ``FUSE_TIES_RANKED`` (rows already in a
    ``ranx.Run``'s order: kept; a second sort, after ``min-max-inverted``, is ranx's quicksort) or
    ``FUSE_TIES_STABLE`` (every sort stable: tied rows keep the input order). ``par``: RRF's k, CombGMNZ's
    gamma, logN-ISR's sigma, RBC's phi. Returns ``count``."""
    for q in prange(start.shape[0]):
        count[q] = _fuse_query(start[q], end[q] - start[q], idx, run, hashes, is_str, ints, offs, data, score, ties,
                               n_runs, norm, method, weights, par, out_row, out_score)
    return count
