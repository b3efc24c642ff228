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
    "check_groups", "factorize", "find_duplicates", "group_table", "hash_bytes", "hash_items", "hash_words",
    "load_word", "lookup_labels", "number_id", "probe", "probe_stamped", "row_of", "run_starts", "same_as_next",
    "same_bytes", "same_id", "seen", "seen_string", "segments", "sparse_size", "table_size", "tail_word",
]

_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)


@njit(cache=True, nogil=True, inline="always")
def load_word(data, q):  # pragma: no cover - compiled
    """The eight bytes ``data[q:q + 8]`` as one little-endian 64-bit word (``q`` unsigned)."""
    w = np.uint64(0)
    s = np.uint64(0)
    for t in range(8):
        w |= np.uint64(data[q + np.uint64(t)]) << s
        s += np.uint64(8)
    return w


@njit(cache=True, nogil=True, inline="always")
def tail_word(data, q, r):  # pragma: no cover - compiled
    """The ``r < 8`` bytes ``data[q:q + r]`` as a little-endian word, its high bytes zero: one load of eight bytes
    masked where they lie inside ``data``, else byte by byte (``q``, ``r`` unsigned)."""
    if q + np.uint64(8) <= np.uint64(data.shape[0]):
        return load_word(data, q) & ((np.uint64(1) << (np.uint64(8) * r)) - np.uint64(1))
    w = np.uint64(0)
    s = np.uint64(0)
    for t in range(r):
        w |= np.uint64(data[q + np.uint64(t)]) << s
        s += np.uint64(8)
    return w


@njit(cache=True, nogil=True, inline="always")
def same_bytes(data_a, pa, data_b, pb, n):  # pragma: no cover - compiled
    """Whether ``data_a[pa:pa + n]`` and ``data_b[pb:pb + n]`` hold the same bytes, compared eight at a time."""
    ua, ub, un = np.uint64(pa), np.uint64(pb), np.uint64(n)  # unsigned: no negative-index check
    p = np.uint64(0)
    while p + np.uint64(8) <= un:
        if load_word(data_a, ua + p) != load_word(data_b, ub + p):
            return False
        p += np.uint64(8)
    return p == un or tail_word(data_a, ua + p, un - p) == tail_word(data_b, ub + p, un - p)


@njit(cache=True, nogil=True, inline="always")
def same_as_next(data, a, b, end):  # pragma: no cover - compiled
    """Whether the ``b - a`` bytes at ``a`` equal those at ``b`` (``a < b``, ``end``: the size of ``data``): up to eight
    bytes with one load each when ``b``'s word lies inside ``data`` (then ``a``'s does too), the bytes past them
    shifted out; else :func:`same_bytes`."""
    ua, ub = np.uint64(a), np.uint64(b)
    n = ub - ua
    if n <= np.uint64(8) and ub + np.uint64(8) <= end:
        if n == np.uint64(0):
            return True
        return ((load_word(data, ua) ^ load_word(data, ub)) << (np.uint64(64) - np.uint64(8) * n)) == np.uint64(0)
    return same_bytes(data, a, data, b, b - a)


@njit(cache=True, nogil=True)
def run_starts(offs, data, lo, hi, out):  # pragma: no cover - compiled
    """The rows ``i`` of ``lo <= i < hi`` that start a run, i.e. whose string (bytes ``data[offs[i]:offs[i + 1]]``)
    differs from string ``i - 1`` (row 0 always does), written in order into ``out`` from ``out[lo]`` on; returns
    how many."""
    k = 0
    end = np.uint64(data.shape[0])
    for i in range(lo, hi):
        if i > 0:
            a = offs[i - 1]
            b = offs[i]
            if offs[i + 1] - b == b - a and same_as_next(data, a, b, end):
                continue
        out[lo + k] = i
        k += 1
    return k


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
    for t in range(np.uint64(la)):  # byte by byte: compared eight at a time (same_bytes), the ahead-of-time build of
        if data_a[ua + t] != data_b[ub + t]:  # check_groups, which inlines this, ran eight times slower
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
    collision of hashes never joins two ids. Every table of ids in the kernels is probed here (or in
    :func:`probe_stamped`, this probe of a table whose empty slots are the entries below a stamp), but for
    :func:`seen_string`, the same probe written out for strings hashed by :func:`hash_words`.
    """
    return probe_stamped(table, shift, mask, 0, keys, hashes, is_str, ints, offs, data, h, q_ints, q_offs, q_data, q)


@njit(cache=True, nogil=True, inline="always")
def probe_stamped(table, shift, mask, stamp, keys, hashes, is_str, ints, offs, data, h, q_ints, q_offs, q_data,
                  q):  # pragma: no cover - compiled
    """:func:`probe` of a table whose entries ``e >= stamp`` stand for the rows ``row_of(keys, e - stamp)`` and
    whose entries below ``stamp`` are empty slots: a table reused group after group without being cleared, each
    group's entries above the ones before (:func:`seen`; :func:`probe` is the case ``stamp`` 0, empty slots -1)."""
    slot = (h * _FIB) >> shift
    while True:
        e = table[slot]
        if e < stamp:
            return slot
        r = row_of(keys, e - stamp)
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


_MIX = np.uint64(0xFF51AFD7ED558CCD)  # MurmurHash3's finaliser constant: :func:`hash_words`' multiplier


@njit(cache=True, nogil=True, inline="always")
def hash_words(data, a, b):  # pragma: no cover - compiled
    """A 64-bit hash of ``data[a:b]`` read eight bytes at a time (each word xored in, multiplied, its high half
    folded down): a few operations per word where :func:`hash_bytes` multiplies once per byte. Only
    :func:`check_groups` uses it, on hashes that never leave the kernel (:func:`hash_items` stays FNV-1a)."""
    ua = np.uint64(a)
    n = np.uint64(b - a)
    h = n
    p = np.uint64(0)
    while p + np.uint64(8) <= n:
        h = (h ^ load_word(data, ua + p)) * _MIX
        h ^= h >> np.uint64(32)
        p += np.uint64(8)
    h = (h ^ tail_word(data, ua + p, n - p)) * _MIX  # the last 0-7 bytes
    return h ^ (h >> np.uint64(32))


@njit(cache=True, nogil=True, inline="always")
def sparse_size(m):  # pragma: no cover - compiled
    """:func:`table_size` for a table of ``m`` rows kept at most 1/8 full while ``m`` is small (up to 2**14 rows,
    a table of 1 MB): the first slot probed is then nearly always the answer. Larger groups get 2m slots."""
    return table_size(4 * m if m <= 16384 else m)


@njit(cache=True, nogil=True, inline="always")
def seen(table, shift, mask, stamp, keys, hashes, is_str, ints, offs, data, t):  # pragma: no cover - compiled
    """Whether id ``t`` (of ``ints`` or the strings ``offs, data``, hashed ``hashes[t]``) is one of the ids put in
    ``table`` since ``stamp``; else it is put there, as entry ``stamp + t`` (:func:`probe`: the entries of earlier
    groups, below ``stamp``, are empty slots, so one table serves group after group without being cleared:
    :func:`probe_stamped`)."""
    slot = probe_stamped(table, shift, mask, stamp, keys, hashes, is_str, ints, offs, data, hashes[t], ints, offs,
                         data, t)
    if table[slot] >= stamp:
        return True
    table[slot] = stamp + t
    return False


@njit(cache=True, nogil=True, inline="always")
def seen_string(table, shift, mask, stamp, hashes, offs, data, t):  # pragma: no cover - compiled
    """:func:`seen` of the string ``t`` (``data[offs[t]:offs[t + 1]]``, hashed ``hashes[t]`` by :func:`hash_words`) in a
    table of the strings put there since ``stamp`` (entry ``stamp + t``), written out for strings: the slot is the
    hash's top bits (:func:`hash_words` ends in a multiplication, whose top bits depend on every byte: no Fibonacci
    step), and a hash match is confirmed byte by byte. The ahead-of-time build of :func:`check_groups` runs a sixth
    faster with it than with the general :func:`seen` (10M rows)."""
    h = hashes[t]
    slot = h >> shift
    while True:
        e = table[slot]
        if e < stamp:
            table[slot] = stamp + t
            return False
        r = e - stamp
        if hashes[r] == h:
            pa = offs[r]
            pb = offs[t]
            la = offs[r + 1] - pa
            if la == offs[t + 1] - pb:
                same = True
                for k in range(la):
                    if data[pa + k] != data[pb + k]:
                        same = False
                        break
                if same:
                    return True
        slot = (slot + np.uint64(1)) & mask


@njit(parallel=True, cache=True, nogil=True)
def check_groups(start, end, base, offs, data, key, kbase, round32, ties, dup, tied):  # pragma: no cover - compiled
    """One pass over each group's rows: ``dup[g]``, the first row of group ``g`` whose item an earlier row of the
    group has (else left as it is, -1), as :func:`find_duplicates` finds it; with ``ties``, ``tied[g]``: whether two
    of its rows have equal scores ``key[row - kbase]`` (float64, NaN refused before; ``round32``: rounded to float32
    as they are read, as ``fused.score_at`` reads them): each group's scores copied into a buffer with -0.0 made 0.0
    (``x + 0.0``), then equal bits are equal scores. Row ``r``'s item is the string
    ``data[offs[r - base]:offs[r - base + 1]]`` (offsets int64, or int32 as in Arrow's ``string``), hashed on the way
    (:func:`hash_words`): no hash array of all rows, no widened offsets. Both sets are sparse tables
    (:func:`sparse_size`) reused group after group by stamps (:func:`seen_string`, :func:`seen`), allocated once per
    block of groups and never cleared. Returns ``dup``."""
    n_g = start.shape[0]
    if n_g == 0:
        return dup
    longest = 1
    for g in range(n_g):
        longest = max(longest, end[g] - start[g])
    most, _ = sparse_size(longest)
    keys = np.empty(0, np.int64)  # the entries are the group's rows 0 .. m - 1
    n_blocks = min(n_g, 64)
    for b in prange(n_blocks):
        hashes = np.empty(longest, np.uint64)
        fixed = np.empty(longest if ties else 1, np.float64)  # a group's scores, -0.0 made 0.0
        f_bits = fixed.view(np.uint64)
        f_ints = fixed.view(np.int64)
        items = np.full(most, -1, np.int64)
        values = np.full(most if ties else 1, -1, np.int64)
        stamp = 0  # the entries of the groups before are below it
        for g in range(b * n_g // n_blocks, (b + 1) * n_g // n_blocks):
            lo = start[g]
            m = end[g] - lo
            if m < 2:
                continue
            size, shift = sparse_size(m)
            mask = np.uint64(size - 1)
            g_offs = offs[lo - base:lo - base + m + 1]
            if ties:
                for t in range(m):
                    x = key[lo - kbase + t]
                    if round32:
                        x = np.float64(np.float32(x))
                    fixed[t] = x + 0.0
            open_dup = True
            open_tie = ties
            for t in range(m):
                if open_dup:
                    hashes[t] = hash_words(data, g_offs[t], g_offs[t + 1])
                    if seen_string(items, shift, mask, stamp, hashes, g_offs, data, t):
                        dup[g] = lo + t
                        open_dup = False
                if open_tie and seen(values, shift, mask, stamp, keys, f_bits, False, f_ints, g_offs, data, t):
                    tied[g] = True
                    open_tie = False
                if not open_dup and not open_tie:
                    break
            stamp += m
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
