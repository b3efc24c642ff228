"""Whitespace-separated text on raw bytes (TREC qrels and runs, LETOR, predictions).

Blank lines and lines whose first non-blank byte is ``#`` are skipped. ``scan_cols`` (TREC files) reads every
data line once, straight into columns: string fields appended to Arrow-style byte buffers with offsets, numeric
fields parsed on the way (``_parse_float``: correctly rounded, Clinger's fast path or Eisel-Lemire), the line's
start and field count kept for error messages. ``split_fields`` (LETOR, predictions) finds the byte span of the
first ``max_fields`` fields of every line and its 1-based number; ``gather`` copies one column's bytes into a
contiguous buffer with offsets. The buffer is cut into chunks at line ends, scanned side by side. No Python
object is created per line.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

__all__ = [
    "count_chunks", "count_lines", "field_spans", "gather", "parse_floats", "scan_chunks", "scan_cols", "scan_lines",
    "split_fields",
]


@njit(cache=True, nogil=True, inline="always")
def _is_space(c):  # pragma: no cover - compiled
    """A space other than the newline (one comparison for the bytes of text)."""
    return c <= 32 and (c == 32 or c == 9 or c == 13 or c == 11 or c == 12)


@njit(cache=True, nogil=True, inline="always")
def _ends_field(c):  # pragma: no cover - compiled
    """A space or the newline."""
    return c <= 32 and (c == 10 or _is_space(c))


@njit(cache=True, nogil=True)
def scan_lines(buf, lo, hi, max_fields, fill, out0, lineno0, starts, ends, nf, line_no, lstart,
               lend):  # pragma: no cover - compiled
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

    ``starts``/``ends`` have shape ``(data lines, max_fields)``; fields past ``n_fields[i]`` are -1.
    ``line_start``/``line_end`` bound each line (for error messages); ``n_lines`` counts every line.
    """
    n = buf.shape[0]
    n_chunks = 1 if n < (1 << 20) else 64
    bounds = np.empty(n_chunks + 1, np.int64)
    bounds[0], bounds[n_chunks] = 0, n
    for c in range(1, n_chunks):
        p = max(c * (n // n_chunks), bounds[c - 1])
        while p < n and buf[p - 1] != 10:
            p += 1
        bounds[c] = p
    # room for every line (a newline count), data lines written at their chunk's offset, gaps closed afterwards
    n_lines = np.zeros(n_chunks, np.int64)
    for c in prange(n_chunks):
        n_lines[c] = count_lines(buf, bounds[c], bounds[c + 1])
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
        d, _ = scan_lines(buf, bounds[c], bounds[c + 1], max_fields, True, first[c], first[c],
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


_LO7, _NL8, _ONES = np.uint64(0x7F7F7F7F7F7F7F7F), np.uint64(0x0A0A0A0A0A0A0A0A), np.uint64(0x0101010101010101)


@njit(cache=True, nogil=True)
def count_lines(buf, lo, hi):  # pragma: no cover - compiled
    """Lines of ``buf[lo:hi]`` (a last one without newline counted), eight bytes a step (the ahead-of-time module,
    built for any x86-64, does not vectorise a byte loop): in ``v = word ^ 0x0A..0A`` a newline is a zero byte,
    ``~(((v & 0x7F..) + 0x7F..) | v | 0x7F..)`` sets the top bit of the zero bytes alone, and multiplying those
    bits (shifted to 1) by 0x01..01 sums them in the top byte (at most 8: no carry out of it)."""
    i, end, c = np.uint64(lo), np.uint64(hi), np.uint64(0)  # unsigned: no negative-index check per byte
    while i + np.uint64(8) <= end:
        w = np.uint64(0)
        for k in range(8):  # eight byte loads, merged into one by the compiler
            w |= np.uint64(buf[i + np.uint64(k)]) << np.uint64(8 * k)
        v = w ^ _NL8
        c += ((~(((v & _LO7) + _LO7) | v | _LO7) >> np.uint64(7)) * _ONES) >> np.uint64(56)
        i += np.uint64(8)
    while i < end:
        c += np.uint64(buf[i] == 10)
        i += np.uint64(1)
    return np.int64(c) + (1 if hi > lo and buf[hi - 1] != 10 else 0)


@njit(cache=True, nogil=True)
def scan_cols(buf, lo, hi, kind, col, out0, lstart, nf, soffs, sdata, spos, nvals, nok):  # pragma: no cover
    """Scan the lines of ``buf[lo:hi]`` into columns; return the number of data lines.

    Field ``f`` of a data line (blank and ``#`` lines are skipped) is copied, when ``kind[f] == 1``, to
    the end of string column ``col[f]``: its bytes appended to ``sdata[col[f]]`` at ``spos[col[f]]``
    (advanced in place) and the end position written to ``soffs[col[f], line + 1]``; when
    ``kind[f] == 2`` it is parsed into ``nvals[col[f], line]`` (``nok`` False where
    :func:`_parse_float` leaves it to another parser); ``kind[f] == 3``: C's ``atol`` of it
    (:func:`_parse_atol`, ``nok`` False where the field is not a plain integer). Fields absent from a
    line give an empty string or NaN. Every data line gets its start offset in ``lstart`` and its field
    count (at most 255) in ``nf``.
    """
    one = np.uint64(1)  # positions unsigned: no negative-index check per byte
    out = out0
    pos = np.uint64(lo)
    hi = np.uint64(hi)
    nk = kind.shape[0]
    n_str = soffs.shape[0]
    while pos < hi:
        p = pos
        while p < hi and _is_space(buf[p]):
            p += one
        if p >= hi or buf[p] == 10 or buf[p] == 35:  # blank line or comment: skip it
            while p < hi and buf[p] != 10:
                p += one
            pos = p + one
            continue
        f = 0
        while True:  # p is at the start of a field
            s = p
            while p < hi and not _ends_field(buf[p]):
                p += one
            if f < nk:
                k = kind[f]
                if k == 1:
                    j = col[f]
                    q = np.uint64(spos[j])
                    row = sdata[j]
                    for b in range(s, p):
                        row[q] = buf[b]
                        q += one
                    spos[j] = np.int64(q)
                elif k == 2:
                    v, good = _parse_float(buf, np.int64(s), np.int64(p))
                    nvals[col[f], out] = v
                    nok[col[f], out] = good
                elif k == 3:
                    v, good = _parse_atol(buf, np.int64(s), np.int64(p))
                    nvals[col[f], out] = v
                    nok[col[f], out] = good
            f += 1
            while p < hi and _is_space(buf[p]):
                p += one
            if p >= hi or buf[p] == 10:
                break
        for g in range(f, nk):
            if kind[g] >= 2:
                nvals[col[g], out] = np.nan
                nok[col[g], out] = True
        for j in range(n_str):
            soffs[j, out + 1] = spos[j]
        nf[out] = min(f, 255)
        lstart[out] = np.int64(pos)
        out += 1
        pos = p + one
    return out - out0


@njit(cache=True, inline="always")
def _parse_atol(buf, lo, hi):  # pragma: no cover - compiled
    """C's ``atol`` of the field ``buf[lo:hi]`` (no spaces in it): its leading ``[+-]digits`` (at most 18 digits
    read), as a float; and whether the field is exactly that (a sign, 1 to 18 digits), else the caller reads it
    otherwise (more digits: C saturates) and says so (text after the digits)."""
    p, neg = lo, False
    if p < hi and (buf[p] == 45 or buf[p] == 43):
        neg = buf[p] == 45
        p += 1
    first = p
    v = 0
    while p < hi and p - first < 18 and buf[p] >= 48 and buf[p] <= 57:
        v = v * 10 + np.int64(buf[p] - 48)
        p += 1
    return float(-v if neg else v), p == hi and p > first


@njit(parallel=True, cache=True, nogil=True)
def count_chunks(buf, bounds):  # pragma: no cover - compiled
    """Lines of each chunk ``buf[bounds[c]:bounds[c + 1]]`` (a last line without newline included)."""
    k = bounds.shape[0] - 1
    out = np.empty(k, np.int64)
    for c in prange(k):
        out[c] = count_lines(buf, bounds[c], bounds[c + 1])
    return out


@njit(parallel=True, cache=True, nogil=True)
def scan_chunks(buf, bounds, first, kind, col, lstart, nf, soffs, sdata, spos, nvals, nok):  # pragma: no cover
    """:func:`scan_cols` on every chunk in parallel: chunk ``c`` writes its lines from ``first[c]``
    and its string bytes from ``spos[c]``; returns the data lines of each chunk."""
    k = bounds.shape[0] - 1
    done = np.empty(k, np.int64)
    for c in prange(k):
        done[c] = scan_cols(buf, bounds[c], bounds[c + 1], kind, col, first[c], lstart, nf, soffs, sdata,
                             spos[c], nvals, nok)
    return done


@njit(cache=True, nogil=True)
def field_spans(buf, lstart, field):  # pragma: no cover - compiled
    """``(starts, ends)`` of field ``field`` (0-based) of the lines starting at ``lstart``; -1 if absent."""
    n = lstart.shape[0]
    starts = np.full(n, -1, np.int64)
    ends = np.full(n, -1, np.int64)
    size = buf.shape[0]
    for i in range(n):
        p = lstart[i]
        f = 0
        while p < size and buf[p] != 10:
            while p < size and buf[p] != 10 and _is_space(buf[p]):
                p += 1
            if p >= size or buf[p] == 10:
                break
            s = p
            while p < size and buf[p] != 10 and not _is_space(buf[p]):
                p += 1
            if f == field:
                starts[i] = s
                ends[i] = p
                break
            f += 1
    return starts, ends


_POW10 = np.array([10.0**i for i in range(23)])  # exact doubles
_TWO53 = 1 << 53
_MIN_Q, _MAX_Q = -342, 308  # decimal exponents with a 128-bit power of five below


def _powers_of_five() -> tuple[np.ndarray, np.ndarray]:
    """The 128 leading bits of 5**q for ``_MIN_Q <= q <= _MAX_Q`` as (high, low) words: truncated for
    q >= 0, rounded up for q < 0 (Lemire, "Number parsing at a gigabyte per second", 2021; the
    table of fast_float), computed here with Python integers."""
    out = []
    for q in range(_MIN_Q, 0):
        p5 = 5 ** -q
        z = p5.bit_length() if p5 & (p5 - 1) else p5.bit_length() - 1  # smallest z with 2**z >= p5
        c = 2 ** (z + 127) // p5 + 1 if q >= -27 else 2 ** (2 * z + 128) // p5 + 1
        while c >= 1 << 128:
            c //= 2
        out.append(c)
    for q in range(0, _MAX_Q + 1):
        p5 = 5 ** q
        while p5 < 1 << 127:
            p5 *= 2
        while p5 >= 1 << 128:
            p5 //= 2
        out.append(p5)
    hi = np.array([c >> 64 for c in out], np.uint64)
    lo = np.array([c & ((1 << 64) - 1) for c in out], np.uint64)
    return hi, lo


_P5_HI, _P5_LO = _powers_of_five()
_M32 = np.uint64(0xFFFFFFFF)
_U32 = np.uint64(32)


@njit(cache=True, nogil=True, inline="always")
def _mul128(a, b):  # pragma: no cover - compiled
    """The 128-bit product of two uint64 as (high, low)."""
    a_lo = a & _M32
    a_hi = a >> _U32
    b_lo = b & _M32
    b_hi = b >> _U32
    p0 = a_lo * b_lo
    p1 = a_lo * b_hi
    p2 = a_hi * b_lo
    p3 = a_hi * b_hi
    mid = (p0 >> _U32) + (p1 & _M32) + (p2 & _M32)
    lo = (p0 & _M32) | (mid << _U32)
    hi = p3 + (p1 >> _U32) + (p2 >> _U32) + (mid >> _U32)
    return hi, lo


@njit(cache=True, nogil=True)
def _eisel_lemire(w, q):  # pragma: no cover - compiled
    """``(value, ok)``: w * 10**q correctly rounded, for 0 < w < 2**64 and ``_MIN_Q <= q <= _MAX_Q``.

    Eisel-Lemire (Lemire 2021, with the two-product step proven sufficient for binary64 by Mushtak
    and Lemire 2023), as fast_float computes it. Subnormal and overflowing results: ok=False.
    """
    lz = 0
    t = w
    while t < np.uint64(1) << np.uint64(63):
        t <<= np.uint64(1)
        lz += 1
    w = t
    idx = q - _MIN_Q
    hi, lo = _mul128(w, _P5_HI[idx])
    if (hi & np.uint64(0x1FF)) == np.uint64(0x1FF):
        hi2, _ = _mul128(w, _P5_LO[idx])
        lo2 = lo + hi2
        if hi2 > lo2:
            hi += np.uint64(1)
        lo = lo2
    upper = int(hi >> np.uint64(63))
    shift = np.uint64(upper + 9)
    mantissa = hi >> shift
    power2 = (((152170 + 65536) * q) >> 16) + 63 + upper - lz + 1023
    if power2 <= 0:
        return 0.0, False
    if lo <= np.uint64(1) and -4 <= q <= 23 and (mantissa & np.uint64(3)) == np.uint64(1):
        if (mantissa << shift) == hi:
            mantissa &= ~np.uint64(1)
    mantissa += mantissa & np.uint64(1)
    mantissa >>= np.uint64(1)
    if mantissa >= np.uint64(2) << np.uint64(52):
        mantissa = np.uint64(1) << np.uint64(52)
        power2 += 1
    if power2 >= 0x7FF:
        return 0.0, False
    return math.ldexp(float(mantissa), power2 - 1075), True


@njit(cache=True, nogil=True)
def _parse_float(buf, lo, hi):  # pragma: no cover - compiled
    """``(value, ok)`` of the decimal number ``buf[lo:hi]``, correctly rounded (the double of strtod).

    ``[+-]digits[.digits][(e|E)[+-]digits]`` with at most 19 significant digits (zeros after them
    allowed) forming an integer m, times 10**e: when m < 2**53 and |e| <= 22, m and 10**|e| are exact doubles and one
    multiplication or division rounds correctly (Clinger 1990); otherwise Eisel-Lemire
    (:func:`_eisel_lemire`). More digits, subnormal or overflowing results, inf, nan or other text:
    ok=False (the caller parses those rows another way).
    """
    one = np.uint64(1)  # positions unsigned: no negative-index check per byte
    p = np.uint64(lo)
    hi = np.uint64(hi)
    neg = False
    if p < hi and (buf[p] == 45 or buf[p] == 43):
        neg = buf[p] == 45
        p += one
    m = np.uint64(0)
    digits = 0
    sig = 0
    exp10 = 0
    while p < hi and 48 <= buf[p] <= 57:
        d = buf[p] - 48
        if sig > 0 or d != 0:
            sig += 1
            if sig <= 19:
                m = m * np.uint64(10) + np.uint64(d)
            elif d == 0:  # a 20th+ digit that is a zero: m * 10
                exp10 += 1
            else:
                return 0.0, False
        digits += 1
        p += one
    if p < hi and buf[p] == 46:
        p += one
        while p < hi and 48 <= buf[p] <= 57:
            d = buf[p] - 48
            if sig > 0 or d != 0:
                sig += 1
                if sig <= 19:
                    m = m * np.uint64(10) + np.uint64(d)
                    exp10 -= 1
                elif d != 0:
                    return 0.0, False
            else:
                exp10 -= 1
            digits += 1
            p += one
    if digits == 0:
        return 0.0, False
    if p < hi and (buf[p] == 101 or buf[p] == 69):
        p += one
        eneg = False
        if p < hi and (buf[p] == 45 or buf[p] == 43):
            eneg = buf[p] == 45
            p += one
        e = 0
        ed = 0
        while p < hi and 48 <= buf[p] <= 57:
            if ed >= 4:
                return 0.0, False
            e = e * 10 + (buf[p] - 48)
            ed += 1
            p += one
        if ed == 0:
            return 0.0, False
        exp10 += -e if eneg else e
    if p != hi:
        return 0.0, False
    if m == np.uint64(0):
        return (-0.0 if neg else 0.0), True
    if m < np.uint64(_TWO53) and -22 <= exp10 <= 22:
        v = float(m)
        if exp10 >= 0:
            v = v * _POW10[exp10]
        else:
            v = v / _POW10[-exp10]
        return (-v if neg else v), True
    if exp10 < _MIN_Q or exp10 > _MAX_Q:
        return 0.0, False
    v, good = _eisel_lemire(m, exp10)
    return (-v if neg else v), good


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
