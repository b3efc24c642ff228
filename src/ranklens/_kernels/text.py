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

__all__ = ["gather", "split_fields"]


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
    """Return ``(starts, ends, n_fields, line_no, line_start, line_end)`` for data lines.

    ``starts``/``ends`` have shape ``(n_lines, max_fields)``; fields past
    ``n_fields[i]`` are -1. ``line_start``/``line_end`` bound each line (for
    error messages).
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
    dummy2 = np.empty((0, max_fields), np.int64)
    dummy1 = np.empty(0, np.int64)
    data_lines = np.zeros(n_chunks, np.int64)
    all_lines = np.zeros(n_chunks, np.int64)
    for c in prange(n_chunks):
        d, a = _scan(buf, bounds[c], bounds[c + 1], max_fields, False, 0, 0,
                     dummy2, dummy2, dummy1, dummy1, dummy1, dummy1)
        data_lines[c] = d
        all_lines[c] = a
    first_out = np.zeros(n_chunks, np.int64)
    first_line = np.zeros(n_chunks, np.int64)
    for c in range(1, n_chunks):
        first_out[c] = first_out[c - 1] + data_lines[c - 1]
        first_line[c] = first_line[c - 1] + all_lines[c - 1]
    total = first_out[n_chunks - 1] + data_lines[n_chunks - 1]
    starts = np.empty((total, max_fields), np.int64)
    ends = np.empty((total, max_fields), np.int64)
    nf = np.empty(total, np.int64)
    line_no = np.empty(total, np.int64)
    lstart = np.empty(total, np.int64)
    lend = np.empty(total, np.int64)
    for c in prange(n_chunks):
        _scan(buf, bounds[c], bounds[c + 1], max_fields, True, first_out[c], first_line[c],
              starts, ends, nf, line_no, lstart, lend)
    return starts, ends, nf, line_no, lstart, lend


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
