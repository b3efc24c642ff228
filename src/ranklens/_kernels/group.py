"""Grouping rows by query, hashing item ids, joining rankings to judgments.

Items are never put in a global dictionary: within a query, rows are matched
by a 64-bit hash of the item id (its bytes, or the integer itself) and every
hash match is confirmed byte by byte, so a collision can never join two
different items.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["factorize", "find_duplicates", "hash_items", "lookup_labels", "run_heads", "segments"]

_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)


@njit(cache=True, nogil=True)
def run_heads(offs, data, lo, hi, out):  # pragma: no cover - compiled
    """``out[i]`` for ``lo <= i < hi``: whether string ``i`` (bytes ``data[offs[i]:offs[i + 1]]``)
    starts a run, i.e. differs from string ``i - 1``; returns how many do."""
    heads = 0
    for i in range(lo, hi):
        new = True
        if i > 0:
            a = offs[i - 1]
            b = offs[i]
            size = b - a
            if offs[i + 1] - b == size:
                new = False
                ua, ub = np.uint64(a), np.uint64(b)  # unsigned: no negative-index check per byte
                for t in range(np.uint64(size)):
                    if data[ua + t] != data[ub + t]:
                        new = True
                        break
        out[i] = new
        heads += new
    return heads


@njit(cache=True, nogil=True)
def segments(codes, n_groups):  # pragma: no cover - compiled
    """Group rows by code. Returns ``(start, end, idx)`` per group (``idx`` empty when
    rows of each group are already contiguous, in which case start/end index rows directly)."""
    n = codes.shape[0]
    start = np.zeros(n_groups, np.int64)
    end = np.zeros(n_groups, np.int64)
    seen = np.zeros(n_groups, np.bool_)
    contiguous = True
    i = 0
    while i < n:
        c = codes[i]
        if seen[c]:
            contiguous = False
            break
        seen[c] = True
        j = i + 1
        while j < n and codes[j] == c:
            j += 1
        start[c] = i
        end[c] = j
        i = j
    if contiguous:
        return start, end, np.empty(0, np.int64)
    counts = np.zeros(n_groups + 1, np.int64)
    for i in range(n):
        counts[codes[i] + 1] += 1
    for g in range(n_groups):
        counts[g + 1] += counts[g]
    for g in range(n_groups):
        start[g] = counts[g]
        end[g] = counts[g + 1]
    fill = counts[:n_groups].copy()
    idx = np.empty(n, np.int64)
    for i in range(n):  # stable: input order kept inside a group
        c = codes[i]
        idx[fill[c]] = i
        fill[c] += 1
    return start, end, idx


@njit(cache=True, nogil=True)
def _row(idx, p):  # pragma: no cover - compiled
    return p if idx.shape[0] == 0 else idx[p]


@njit(parallel=True, cache=True, nogil=True)
def hash_items(is_str, ints, offs, data):  # pragma: no cover - compiled
    """64-bit hash per row: FNV-1a of the id's bytes, or the integer id itself."""
    if not is_str:
        return ints.astype(np.uint64)
    n = offs.shape[0] - 1
    out = np.empty(n, np.uint64)
    for i in prange(n):
        h = _FNV_OFFSET
        for p in range(np.uint64(offs[i]), np.uint64(offs[i + 1])):
            h = (h ^ np.uint64(data[p])) * _FNV_PRIME
        out[i] = h
    return out


_FIB = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio: Fibonacci hashing spreads any ids


@njit(cache=True, nogil=True, inline="always")
def _table_size(m):  # pragma: no cover - compiled
    """Slots (a power of two, at least 2m) and the shift taking a 64-bit product to a slot."""
    size = 4
    bits = 2
    while size < 2 * m:
        size *= 2
        bits += 1
    return size, np.uint64(64 - bits)


@njit(cache=True, nogil=True, inline="always")
def _same2(is_str, ints_a, offs_a, data_a, a, ints_b, offs_b, data_b, b):  # pragma: no cover - compiled
    if not is_str:
        return ints_a[a] == ints_b[b]
    pa = offs_a[a]
    pb = offs_b[b]
    la = offs_a[a + 1] - pa
    if la != offs_b[b + 1] - pb:
        return False
    ua, ub = np.uint64(pa), np.uint64(pb)  # unsigned: no negative-index check per byte
    for t in range(np.uint64(la)):
        if data_a[ua + t] != data_b[ub + t]:
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _same(is_str, ints, offs, data, a, b):  # pragma: no cover - compiled
    return _same2(is_str, ints, offs, data, a, ints, offs, data, b)


@njit(cache=True, nogil=True)
def factorize(is_str, ints, offs, data, hashes):  # pragma: no cover - compiled
    """Codes numbering the distinct ids in order of first appearance, and the first row of each.

    One open-addressing table of (hash, code), doubled whenever it is half full so that its size
    follows the distinct ids rather than the rows. Probes compare the stored hashes; only equal
    hashes of string ids are confirmed on the bytes (an integer's hash is the integer itself).
    """
    n = hashes.shape[0]
    bits = 10
    size = 1 << bits
    shift = np.uint64(64 - bits)
    mask = np.uint64(size - 1)
    tcode = np.full(size, -1, np.int64)
    thash = np.zeros(size, np.uint64)
    codes = np.empty(n, np.int32)  # as Arrow's dictionary indices (fewer than 2**31 distinct ids)
    firsts = np.empty(n, np.int64)
    m = 0
    for r in range(n):
        h = hashes[r]
        slot = (h * _FIB) >> shift
        while True:
            c = tcode[slot]
            if c < 0:
                tcode[slot] = m
                thash[slot] = h
                firsts[m] = r
                codes[r] = m
                m += 1
                break
            if thash[slot] == h and (not is_str or _same(is_str, ints, offs, data, firsts[c], r)):
                codes[r] = c
                break
            slot = (slot + np.uint64(1)) & mask
        if 2 * m > size:  # grow: the entries so far into a table twice as large
            old_code, old_hash = tcode, thash
            bits += 1
            size = 1 << bits
            shift = np.uint64(64 - bits)
            mask = np.uint64(size - 1)
            tcode = np.full(size, -1, np.int64)
            thash = np.zeros(size, np.uint64)
            for t in range(old_code.shape[0]):
                c = old_code[t]
                if c >= 0:
                    slot = (old_hash[t] * _FIB) >> shift
                    while tcode[slot] >= 0:
                        slot = (slot + np.uint64(1)) & mask
                    tcode[slot] = c
                    thash[slot] = old_hash[t]
    return codes, firsts[:m].copy()


@njit(parallel=True, cache=True, nogil=True)
def find_duplicates(start, end, idx, hashes, is_str, ints, offs, data):  # pragma: no cover - compiled
    """For each group, the row index of an item that appears twice (-1 if none).

    An open-addressing hash set per group (linear in the group's size); equal
    hashes are confirmed on the ids themselves.
    """
    n_g = start.shape[0]
    out = np.full(n_g, -1, np.int64)
    for g in prange(n_g):
        lo = start[g]
        m = end[g] - lo
        if m < 2:
            continue
        size, shift = _table_size(m)
        mask = np.uint64(size - 1)
        table = np.full(size, -1, np.int64)
        for t in range(m):
            r = _row(idx, lo + t)
            h = hashes[r]
            slot = (h * _FIB) >> shift
            while True:
                other = table[slot]
                if other < 0:
                    table[slot] = r
                    break
                if hashes[other] == h and _same(is_str, ints, offs, data, other, r):
                    out[g] = r
                    break
                slot = (slot + np.uint64(1)) & mask
            if out[g] >= 0:
                break
    return out


@njit(parallel=True, cache=True, nogil=True)
def lookup_labels(r_start, r_end, r_idx, r_hash, r_int, r_offs, r_data,
                  j_start, j_end, j_idx, j_hash, j_int, j_offs, j_data, j_label, is_str, out):  # pragma: no cover
    """Write into ``out`` (NaN-filled, one slot per ranked row) the label of every ranked row of these
    groups from the judgments of its query; rows not judged keep their NaN. Returns ``out``."""
    n_g = r_start.shape[0]
    for g in prange(n_g):
        jl = j_start[g]
        jm = j_end[g] - jl
        rm = r_end[g] - r_start[g]
        if jm == 0 or rm == 0:
            continue
        size, shift = _table_size(jm)
        mask = np.uint64(size - 1)
        table = np.full(size, -1, np.int64)  # open addressing: the judged rows of the query
        for t in range(jm):
            r = _row(j_idx, jl + t)
            h = j_hash[r]
            slot = (h * _FIB) >> shift
            while table[slot] >= 0:
                slot = (slot + np.uint64(1)) & mask
            table[slot] = r
        for t in range(rm):
            row = _row(r_idx, r_start[g] + t)
            h = r_hash[row]
            slot = (h * _FIB) >> shift
            while True:
                jrow = table[slot]
                if jrow < 0:
                    break
                if j_hash[jrow] == h and _same2(is_str, r_int, r_offs, r_data, row, j_int, j_offs, j_data, jrow):
                    out[row] = j_label[jrow]
                    break
                slot = (slot + np.uint64(1)) & mask
    return out
