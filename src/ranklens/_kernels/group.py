"""Grouping rows by query, hashing item ids, joining rankings to judgments.

Items are never put in a global dictionary: within a query, rows are matched
by a 64-bit hash of the item id (its bytes, or the integer itself) and every
hash match is confirmed byte by byte, so a collision can never join two
different items.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = [
    "check_groups", "factorize", "find_duplicates", "group_table", "hash_bytes", "hash_items", "lookup_labels",
    "number_id", "probe", "row_of", "run_heads", "same_id", "segments", "table_size",
]

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


@njit(cache=True, nogil=True, inline="always")
def row_of(idx, p):  # pragma: no cover - compiled
    """Row ``p`` of a group reached through ``idx`` (empty ``idx``: the row ``p`` itself)."""
    return p if idx.shape[0] == 0 else idx[p]


@njit(cache=True, nogil=True, inline="always")
def hash_bytes(data, a, b):  # pragma: no cover - compiled
    """FNV-1a of ``data[a:b]`` (:func:`hash_items`' hash of a string id)."""
    h = _FNV_OFFSET
    for p in range(np.uint64(a), np.uint64(b)):
        h = (h ^ np.uint64(data[p])) * _FNV_PRIME
    return h


@njit(parallel=True, cache=True, nogil=True)
def hash_items(is_str, ints, offs, data):  # pragma: no cover - compiled
    """64-bit hash per row: FNV-1a of the id's bytes, or the integer id itself."""
    if not is_str:
        return ints.astype(np.uint64)
    n = offs.shape[0] - 1
    out = np.empty(n, np.uint64)
    for i in prange(n):
        out[i] = hash_bytes(data, offs[i], offs[i + 1])
    return out


_FIB = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio: Fibonacci hashing spreads any ids


@njit(cache=True, nogil=True, inline="always")
def table_size(m):  # pragma: no cover - compiled
    """Slots (a power of two, at least 2m) and the shift taking a 64-bit product to a slot (:func:`probe`)."""
    size = 4
    bits = 2
    while size < 2 * m:
        size *= 2
        bits += 1
    return size, np.uint64(64 - bits)


@njit(cache=True, nogil=True, inline="always")
def group_table(start, end, g):  # pragma: no cover - compiled
    """Group ``g``'s first row and number of rows, and the slots, shift and mask of a table of its rows
    (:func:`table_size`, :func:`probe`)."""
    lo = start[g]
    m = end[g] - lo
    size, shift = table_size(m)
    return lo, m, size, shift, np.uint64(size - 1)


@njit(cache=True, nogil=True, inline="always")
def same_id(is_str, ints_a, offs_a, data_a, a, ints_b, offs_b, data_b, b):  # pragma: no cover - compiled
    """Whether id ``a`` of the first ids and id ``b`` of the second are equal: the integers, or the bytes."""
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
def probe(table, shift, mask, keys, hashes, is_str, ints, offs, data, h, q_ints, q_offs, q_data,
          q):  # pragma: no cover - compiled
    """The slot of an open-addressing table of ids that holds the id of row ``q`` (of ``q_ints, q_offs, q_data``),
    hashed ``h``, or the empty slot (``-1``) where it goes.

    The table (a power of two of slots, :func:`table_size`) holds entries ``e >= 0``, each standing for the row
    ``row_of(keys, e)`` of the ids ``(ints, offs, data)`` hashed ``hashes``. Probing starts at the Fibonacci slot of
    ``h`` (its top bits after a multiplication by 2**64 / golden ratio) and goes on slot by slot (linear); an entry
    matches when its hash equals ``h`` and its id equals the row's, confirmed on the integers or the bytes, so a
    collision of hashes never joins two ids. Every table of ids in the kernels is probed here.
    """
    slot = (h * _FIB) >> shift
    while True:
        e = table[slot]
        if e < 0:
            return slot
        r = row_of(keys, e)
        if hashes[r] == h and same_id(is_str, ints, offs, data, r, q_ints, q_offs, q_data, q):
            return slot
        slot = (slot + np.uint64(1)) & mask


@njit(cache=True, nogil=True, inline="always")
def number_id(table, shift, mask, firsts, n, hashes, is_str, ints, offs, data, r):  # pragma: no cover - compiled
    """``(code, n)``: the number of row ``r``'s id among the ``n`` ids numbered so far in ``table`` (:func:`probe`;
    code ``c`` stands for the row ``firsts[c]``), numbering it ``n`` (``firsts[n] = r``) when it is new."""
    slot = probe(table, shift, mask, firsts, hashes, is_str, ints, offs, data, hashes[r], ints, offs, data, r)
    c = table[slot]
    if c >= 0:
        return c, n
    table[slot] = n
    firsts[n] = r
    return n, n + 1


@njit(cache=True, nogil=True)
def factorize(is_str, ints, offs, data, hashes):  # pragma: no cover - compiled
    """Codes numbering the distinct ids in order of first appearance, and the first row of each.

    One open-addressing table of codes (:func:`probe`: code ``c`` stands for the row ``firsts[c]``), doubled
    whenever it is half full so that its size follows the distinct ids rather than the rows.
    """
    n = hashes.shape[0]
    bits = 10
    table = np.full(1 << bits, -1, np.int64)
    codes = np.empty(n, np.int32)  # as Arrow's dictionary indices (fewer than 2**31 distinct ids)
    firsts = np.empty(n, np.int64)
    m = 0
    shift = np.uint64(64 - bits)
    mask = np.uint64((1 << bits) - 1)
    for r in range(n):
        c, m = number_id(table, shift, mask, firsts, m, hashes, is_str, ints, offs, data, r)
        codes[r] = c
        if 2 * m > table.shape[0]:  # grow: the entries so far into a table twice as large
            old = table
            bits += 1
            shift = np.uint64(64 - bits)
            mask = np.uint64((1 << bits) - 1)
            table = np.full(1 << bits, -1, np.int64)
            for t in range(old.shape[0]):
                c = old[t]
                if c >= 0:
                    f = firsts[c]
                    table[probe(table, shift, mask, firsts, hashes, is_str, ints, offs, data, hashes[f], ints, offs,
                                data, f)] = c
    return codes, firsts[:m].copy()


@njit(parallel=True, cache=True, nogil=True)
def find_duplicates(start, end, idx, hashes, is_str, ints, offs, data):  # pragma: no cover - compiled
    """For each group, the row index of an item that appears twice (-1 if none).

    An open-addressing hash set of the group's rows (:func:`probe`; linear in the group's size).
    """
    n_g = start.shape[0]
    out = np.full(n_g, -1, np.int64)
    rows = np.empty(0, np.int64)  # the table's entries are rows
    for g in prange(n_g):
        lo, m, size, shift, mask = group_table(start, end, g)
        if m < 2:
            continue
        table = np.full(size, -1, np.int64)
        for t in range(m):
            r = row_of(idx, lo + t)
            slot = probe(table, shift, mask, rows, hashes, is_str, ints, offs, data, hashes[r], ints, offs, data, r)
            if table[slot] >= 0:
                out[g] = r
                break
            table[slot] = r
    return out


@njit(parallel=True, cache=True, nogil=True)
def check_groups(start, end, base, offs, data, bits, ties, dup, tied):  # pragma: no cover - compiled
    """One pass over each group's rows: ``dup[g]``, the first row of group ``g`` whose item an earlier row of the
    group has (else left as it is, -1), as :func:`find_duplicates` finds it; with ``ties``, ``tied[g]``: whether two
    of its rows have the same score bits ``bits[row]`` (the caller makes -0.0 0.0). Row ``r``'s item is the string
    ``data[offs[r - base]:offs[r - base + 1]]`` (offsets int64, or int32 as in Arrow's ``string``), hashed on the way:
    no hash array of all rows, no widened offsets. Both sets are tables of :func:`probe`, in scratch arrays allocated
    once per block of groups (not once per group). Returns ``dup``."""
    n_g = start.shape[0]
    if n_g == 0:
        return dup
    longest = 1
    for g in range(n_g):
        longest = max(longest, end[g] - start[g])
    most, _ = table_size(longest)
    none = np.zeros(1, np.int64)
    keys = np.empty(0, np.int64)  # entries are the group's rows 0 .. m - 1
    n_blocks = min(n_g, 64)
    for b in prange(n_blocks):
        hashes = np.empty(longest, np.uint64)
        all_items = np.empty(most, np.int64)
        all_values = np.empty(most if ties else 1, np.int64)
        for g in range(b * n_g // n_blocks, (b + 1) * n_g // n_blocks):
            lo, m, size, shift, mask = group_table(start, end, g)
            if m < 2:
                continue
            g_offs = offs[lo - base:lo - base + m + 1]
            items = all_items[:size]
            items[:] = -1
            values = all_values[:size if ties else 1]
            values[:] = -1
            g_bits = bits[lo:lo + m]
            ints = g_bits.view(np.int64)
            open_dup = True
            open_tie = ties
            for t in range(m):
                if open_dup:
                    h = hash_bytes(data, g_offs[t], g_offs[t + 1])
                    hashes[t] = h
                    slot = probe(items, shift, mask, keys, hashes, True, none, g_offs, data, h, none, g_offs, data, t)
                    if items[slot] >= 0:
                        dup[g] = lo + t
                        open_dup = False
                    else:
                        items[slot] = t
                if open_tie:
                    v = g_bits[t]
                    slot = probe(values, shift, mask, keys, g_bits, False, ints, g_offs, data, v, ints, g_offs, data,
                                 t)
                    if values[slot] >= 0:
                        tied[g] = True
                        open_tie = False
                    else:
                        values[slot] = t
                if not open_dup and not open_tie:
                    break
    return dup


@njit(parallel=True, cache=True, nogil=True)
def lookup_labels(r_start, r_end, r_idx, r_hash, r_int, r_offs, r_data,
                  j_start, j_end, j_idx, j_hash, j_int, j_offs, j_data, j_label, is_str, out):  # pragma: no cover
    """Write into ``out`` (NaN-filled, one slot per ranked row) the label of every ranked row of these
    groups from the judgments of its query; rows not judged keep their NaN. Returns ``out``."""
    n_g = r_start.shape[0]
    rows = np.empty(0, np.int64)  # the table's entries are judged rows
    for g in prange(n_g):
        jl = j_start[g]
        jm = j_end[g] - jl
        rm = r_end[g] - r_start[g]
        if jm == 0 or rm == 0:
            continue
        size, shift = table_size(jm)
        mask = np.uint64(size - 1)
        table = np.full(size, -1, np.int64)  # open addressing (probe): the judged rows of the query
        for t in range(jm):
            r = row_of(j_idx, jl + t)
            slot = probe(table, shift, mask, rows, j_hash, is_str, j_int, j_offs, j_data, j_hash[r], j_int, j_offs,
                         j_data, r)
            if table[slot] < 0:  # an id judged twice: its first row answers
                table[slot] = r
        for t in range(rm):
            row = row_of(r_idx, r_start[g] + t)
            jrow = table[probe(table, shift, mask, rows, j_hash, is_str, j_int, j_offs, j_data, r_hash[row], r_int,
                               r_offs, r_data, row)]
            if jrow >= 0:
                out[row] = j_label[jrow]
    return out
