"""Whitespace-separated text split into fields, on raw bytes (TREC qrels and runs).

``split_fields`` finds, for every data line (blank lines and lines whose first
non-blank byte is ``#`` are skipped), the byte span of its first
``max_fields`` fields and the line's 1-based number. ``gather`` copies one
column's bytes into a contiguous buffer with Arrow-style offsets, so the
caller can build an Arrow string array and let Arrow parse numbers and hash
ids. No Python object is created per line.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["gather", "split_fields"]


@njit(cache=True, nogil=True)
def _is_space(c):  # pragma: no cover - compiled
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@njit(cache=True, nogil=True)
def split_fields(buf, max_fields):  # pragma: no cover - compiled
    """Return ``(starts, ends, n_fields, line_no, line_start, line_end)`` for data lines.

    ``starts``/``ends`` have shape ``(n_lines, max_fields)``; fields past
    ``n_fields[i]`` are -1. ``line_start``/``line_end`` bound each line (for
    error messages).
    """
    n = buf.shape[0]
    n_lines = 1
    for i in range(n):
        if buf[i] == 10:
            n_lines += 1
    starts = np.full((n_lines, max_fields), -1, np.int64)
    ends = np.full((n_lines, max_fields), -1, np.int64)
    nf = np.zeros(n_lines, np.int64)
    line_no = np.zeros(n_lines, np.int64)
    lstart = np.zeros(n_lines, np.int64)
    lend = np.zeros(n_lines, np.int64)
    out = 0
    pos = 0
    lineno = 0
    while pos < n:
        lineno += 1
        eol = pos
        while eol < n and buf[eol] != 10:
            eol += 1
        # first non-blank byte
        p = pos
        while p < eol and _is_space(buf[p]):
            p += 1
        if p < eol and buf[p] != 35:  # not blank, not a comment
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
            nf[out] = f
            line_no[out] = lineno
            lstart[out] = pos
            lend[out] = eol
            out += 1
        pos = eol + 1
    return starts[:out], ends[:out], nf[:out], line_no[:out], lstart[:out], lend[:out]


@njit(cache=True, nogil=True)
def gather(buf, starts, ends):  # pragma: no cover - compiled
    """Concatenate the spans ``buf[starts[i]:ends[i]]``; return ``(data, offsets)``."""
    m = starts.shape[0]
    offsets = np.empty(m + 1, np.int32)
    offsets[0] = 0
    total = 0
    for i in range(m):
        total += ends[i] - starts[i]
        offsets[i + 1] = total
    data = np.empty(total, np.uint8)
    k = 0
    for i in range(m):
        for j in range(starts[i], ends[i]):
            data[k] = buf[j]
            k += 1
    return data, offsets
