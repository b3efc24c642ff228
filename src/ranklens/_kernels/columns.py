"""Value columns (labels, scores, ranks) in one pass each, on the thread pool: a numeric Arrow chunk read from its own
buffer into its slice of one float64 column; what the rules need to know of a column (non-finite, negative and
fractional values, the largest); scores rounded through float32.

Each kernel works on the rows ``lo:hi`` of its arrays, so that one call is cut into pieces run on several threads;
the values written are those numpy writes (``astype(np.float64)``, ``astype(np.float32)``: the same conversions), so
a column read or rounded here is bit for bit the column read or rounded by numpy.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["BIG", "read_f8", "read_i8", "round_f32", "value_facts"]


@njit(cache=True, nogil=True)
def read_f8(src, out, at):  # pragma: no cover - compiled
    """``src`` (a chunk's float64 values) copied into ``out[at:]``; returns how many are NaN or infinite."""
    bad = 0
    for i in range(src.shape[0]):
        v = src[i]
        out[at + i] = v
        d = v - v  # NaN exactly when v is NaN or infinite: no branch, the loop stays vectorised
        bad += d != d
    return bad


@njit(cache=True, nogil=True)
def read_i8(src, out, at):  # pragma: no cover - compiled
    """``src`` (a chunk's int64 values) as float64 into ``out[at:]`` (rounded to nearest as numpy casts); returns 0
    (no integer is NaN or infinite)."""
    for i in range(src.shape[0]):
        out[at + i] = np.float64(src[i])
    return 0


#: 2 ** 52: from there on every float64 is a whole number, and below it ``(a + BIG) - BIG`` is ``a`` rounded to a whole
#: number (the sum's unit in the last place is 1).
BIG = 4503599627370496.0


@njit(cache=True, nogil=True)
def value_facts(x, extremes, out):  # pragma: no cover - compiled
    """What the rules read of a column: ``out[0]`` how many values are NaN or infinite, ``out[1]`` how many are not
    whole numbers (``v != trunc(v)``: NaN counts, infinities do not), and with ``extremes`` (a second pass) ``out[2]``
    how many are negative and ``out[3]`` the largest (-inf when there is none; NaN is skipped); returns how many
    values were read. No branch and no call per value (``trunc`` is a library call on the machines the module is
    built for), so that each loop is vectorised (the four in one loop are not)."""
    bad = 0
    frac = 0
    for i in range(x.shape[0]):
        v = x[i]
        d = v - v
        bad += d != d
        a = abs(v)
        frac += ((a < BIG) & (((a + BIG) - BIG) != a)) | (v != v)
    out[0] = bad
    out[1] = frac
    neg = 0
    top = -np.inf
    if extremes:
        for i in range(x.shape[0]):
            v = x[i]
            neg += v < 0
            top = v if v > top else top
    out[2] = neg
    out[3] = top
    return x.shape[0]


@njit(cache=True, nogil=True)
def round_f32(src, out):  # pragma: no cover - compiled
    """``src`` rounded to float32 and back, into ``out`` (may be ``src`` itself); returns how many."""
    for i in range(src.shape[0]):
        out[i] = np.float64(np.float32(src[i]))
    return src.shape[0]
