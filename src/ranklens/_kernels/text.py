"""Whitespace-separated text split into fields, on raw bytes (TREC qrels and runs, LETOR, predictions).

``split_fields`` finds, for every data line (blank lines and lines whose first
non-blank byte is ``#`` are skipped), the byte span of its first
``max_fields`` fields and the line's 1-based number; the buffer is cut into
chunks at line ends and the chunks are scanned in parallel. ``gather`` copies
one column's bytes into a contiguous buffer with Arrow-style offsets, so the
caller can build an Arrow string array and let Arrow parse numbers and hash
ids. No Python object is created per line.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["gather", "parse_floats", "split_fields"]


@njit(cache=True, nogil=True, inline="always")
def _is_space(c):  # pragma: no cover - compiled
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@njit(cache=True, nogil=True)
def _scan(buf, lo, hi, max_fields, fill, out0, lineno0, starts, ends, nf, line_no, lstart, lend):  # pragma: no cover
    """Scan lines of ``buf[lo:hi]``; count (fill=False) or record (fill=True) the data lines.

    Returns ``(data lines, all lines)`` of the chunk.
    """
    out = out0
    lineno = lineno0
    pos = lo
    while pos < hi:
        lineno += 1
        eol = pos
        while eol < hi and buf[eol] != 10:
            eol += 1
        p = pos
        while p < eol and _is_space(buf[p]):
            p += 1
        if p < eol and buf[p] != 35:  # not blank, not a comment
            if fill:
                f = 0
                while p < eol:
                    while p < eol and _is_space(buf[p]):
                        p += 1
                    if p >= eol:
                        break
                    s = p
                    while p < eol and not _is_space(buf[p]):
                        p += 1
                    if f < max_fields:
                        starts[out, f] = s
                        ends[out, f] = p
                    f += 1
                for g in range(f, max_fields):
                    starts[out, g] = -1
                    ends[out, g] = -1
                nf[out] = f
                line_no[out] = lineno
                lstart[out] = pos
                lend[out] = eol
            out += 1
        pos = eol + 1
    return out - out0, lineno - lineno0


@njit(parallel=True, cache=True, nogil=True)
def split_fields(buf, max_fields):  # pragma: no cover - compiled
    """Return ``(starts, ends, n_fields, line_no, line_start, line_end, n_lines)`` for data lines.

    ``starts``/``ends`` have shape ``(data lines, max_fields)``; fields past
    ``n_fields[i]`` are -1. ``line_start``/``line_end`` bound each line (for
    error messages); ``n_lines`` counts every line of the buffer, data or not.
    """
    n = buf.shape[0]
    n_chunks = 1 if n < (1 << 20) else 64
    bounds = np.empty(n_chunks + 1, np.int64)
    bounds[0] = 0
    bounds[n_chunks] = n
    for c in range(1, n_chunks):
        p = max(c * (n // n_chunks), bounds[c - 1])
        while p < n and buf[p - 1] != 10:
            p += 1
        bounds[c] = p
    # one pass over the fields: room for every line (a cheap newline count), then the data lines
    # written at their chunk's offset; blank and comment lines leave gaps, closed afterwards
    n_lines = np.zeros(n_chunks, np.int64)
    for c in prange(n_chunks):
        n_lines[c] = _count_lines(buf, bounds[c], bounds[c + 1])
    first = np.zeros(n_chunks, np.int64)
    for c in range(1, n_chunks):
        first[c] = first[c - 1] + n_lines[c - 1]
    cap = first[n_chunks - 1] + n_lines[n_chunks - 1]
    starts = np.empty((cap, max_fields), np.int64)
    ends = np.empty((cap, max_fields), np.int64)
    nf = np.empty(cap, np.int64)
    line_no = np.empty(cap, np.int64)
    lstart = np.empty(cap, np.int64)
    lend = np.empty(cap, np.int64)
    data_lines = np.zeros(n_chunks, np.int64)
    for c in prange(n_chunks):
        d, _ = _scan(buf, bounds[c], bounds[c + 1], max_fields, True, first[c], first[c],
                     starts, ends, nf, line_no, lstart, lend)
        data_lines[c] = d
    total = data_lines.sum()
    if total == cap:
        return starts, ends, nf, line_no, lstart, lend, cap
    out = 0
    for c in range(n_chunks):
        for t in range(first[c], first[c] + data_lines[c]):
            if out != t:
                starts[out] = starts[t]
                ends[out] = ends[t]
                nf[out] = nf[t]
                line_no[out] = line_no[t]
                lstart[out] = lstart[t]
                lend[out] = lend[t]
            out += 1
    return (starts[:total].copy(), ends[:total].copy(), nf[:total].copy(), line_no[:total].copy(),
            lstart[:total].copy(), lend[:total].copy(), cap)


@njit(cache=True, nogil=True)
def _count_lines(buf, lo, hi):  # pragma: no cover - compiled
    c = 0
    for i in range(lo, hi):
        c += buf[i] == 10
    if hi > lo and buf[hi - 1] != 10:
        c += 1
    return c


_POW10 = np.array([10.0**i for i in range(23)])  # exact doubles
_MAX_MANTISSA = (1 << 53) // 10 - 1


@njit(cache=True, nogil=True)
def _parse_float(buf, lo, hi):  # pragma: no cover - compiled
    """``(value, ok)`` of the decimal number ``buf[lo:hi]`` when it has the exact fast path.

    ``[+-]digits[.digits][(e|E)[+-]digits]`` whose digits form an integer m < 2**53 and whose decimal
    exponent e has |e| <= 22: then m and 10**|e| are exact doubles and one multiplication or division
    rounds correctly (Clinger 1990), the same double as strtod. Anything else: ok=False (the caller
    parses those rows another way).
    """
    p = lo
    neg = False
    if p < hi and (buf[p] == 45 or buf[p] == 43):
        neg = buf[p] == 45
        p += 1
    m = 0
    digits = 0
    exp10 = 0
    while p < hi and 48 <= buf[p] <= 57:
        if m > _MAX_MANTISSA:
            return 0.0, False
        m = m * 10 + (buf[p] - 48)
        digits += 1
        p += 1
    if p < hi and buf[p] == 46:
        p += 1
        while p < hi and 48 <= buf[p] <= 57:
            if m > _MAX_MANTISSA:
                return 0.0, False
            m = m * 10 + (buf[p] - 48)
            exp10 -= 1
            digits += 1
            p += 1
    if digits == 0:
        return 0.0, False
    if p < hi and (buf[p] == 101 or buf[p] == 69):
        p += 1
        eneg = False
        if p < hi and (buf[p] == 45 or buf[p] == 43):
            eneg = buf[p] == 45
            p += 1
        e = 0
        ed = 0
        while p < hi and 48 <= buf[p] <= 57:
            if ed >= 4:
                return 0.0, False
            e = e * 10 + (buf[p] - 48)
            ed += 1
            p += 1
        if ed == 0:
            return 0.0, False
        exp10 += -e if eneg else e
    if p != hi:
        return 0.0, False
    v = float(m)
    if m != 0:
        if 0 <= exp10 <= 22:
            v = v * _POW10[exp10]
        elif -22 <= exp10 < 0:
            v = v / _POW10[-exp10]
        else:
            return 0.0, False
    return (-v if neg else v), True


@njit(parallel=True, cache=True, nogil=True)
def parse_floats(buf, starts, ends):  # pragma: no cover - compiled
    """Parse the spans ``buf[starts[i]:ends[i]]`` as decimal numbers: ``(values, ok)``.

    ``ok[i]`` is False where the text is not a plain decimal number with the exact fast path (see
    :func:`_parse_float`); those rows are left to a general parser.
    """
    n = starts.shape[0]
    out = np.empty(n, np.float64)
    ok = np.empty(n, np.bool_)
    for i in prange(n):
        v, good = _parse_float(buf, starts[i], ends[i])
        out[i] = v
        ok[i] = good
    return out, ok


@njit(parallel=True, cache=True, nogil=True)
def gather(buf, starts, ends):  # pragma: no cover - compiled
    """Concatenate the spans ``buf[starts[i]:ends[i]]``; return ``(data, offsets)``."""
    m = starts.shape[0]
    offsets = np.empty(m + 1, np.int64)
    offsets[0] = 0
    total = 0
    for i in range(m):
        total += ends[i] - starts[i]
        offsets[i + 1] = total
    data = np.empty(total, np.uint8)
    for i in prange(m):
        k = offsets[i]
        for j in range(starts[i], ends[i]):
            data[k] = buf[j]
            k += 1
    return data, offsets
