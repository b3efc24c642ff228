"""Resampling kernels: sign-flip randomization and bootstrap means, parallel over resamples.

The random numbers are counter-based: draw ``j`` of resample ``r`` is ``splitmix64(key + r * width + j)``,
so every resample is a pure function of ``(key, r)`` and the results are identical for any thread
count, without materialising an ``n_resamples x n`` matrix of draws.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["bootstrap_means", "sign_flip_exceed", "splitmix64"]

_C1 = np.uint64(0x9E3779B97F4A7C15)
_C2 = np.uint64(0xBF58476D1CE4E5B9)
_C3 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_ONE = np.uint64(1)
_INV53 = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True, inline="always")
def splitmix64(counter):
    """SplitMix64's output function applied to ``counter`` (a uint64)."""
    z = counter * _C1
    z = (z ^ (z >> _S30)) * _C2
    z = (z ^ (z >> _S27)) * _C3
    return z ^ (z >> _S31)


@njit(cache=True, parallel=True)
def sign_flip_exceed(d, observed, tol, key, n_resamples):
    """For each resample and column, whether ``|sum(s_i * d[i, c])| >= |observed[c]| - tol[c]``.

    ``d`` has shape ``(n, m)`` (one column per pair of systems); the signs ``s_i`` of query ``i`` in
    resample ``r`` are the bits of ``splitmix64(key + r * n_words + i // 64)``, shared by the columns.
    Returns an ``(n_resamples, m)`` uint8 array.
    """
    n, m = d.shape
    n_words = (n + 63) // 64
    out = np.zeros((n_resamples, m), dtype=np.uint8)
    for r in prange(n_resamples):
        acc = np.zeros(m, dtype=np.float64)
        base = key + np.uint64(r) * np.uint64(n_words)
        for w in range(n_words):
            bits = splitmix64(base + np.uint64(w))
            lo = w * 64
            hi = min(lo + 64, n)
            for i in range(lo, hi):
                s = 1.0 - 2.0 * float(bits & _ONE)
                for c in range(m):
                    acc[c] += s * d[i, c]
                bits = bits >> _ONE
        for c in range(m):
            if abs(acc[c]) >= abs(observed[c]) - tol[c]:
                out[r, c] = 1
    return out


@njit(cache=True, parallel=True)
def bootstrap_means(x, key, n_resamples):
    """Means of ``n_resamples`` bootstrap resamples of the rows of ``x`` (shape ``(n, m)``).

    Row ``j`` of resample ``r`` is ``floor(u * n)`` with ``u`` the top 53 bits of
    ``splitmix64(key + r * n + j)`` as a fraction; the columns share the rows drawn (a paired
    resample). Returns an ``(n_resamples, m)`` float64 array.
    """
    n, m = x.shape
    out = np.empty((n_resamples, m), dtype=np.float64)
    for r in prange(n_resamples):
        acc = np.zeros(m, dtype=np.float64)
        base = key + np.uint64(r) * np.uint64(n)
        for j in range(n):
            u = splitmix64(base + np.uint64(j)) >> _S11
            i = int(float(u) * _INV53 * n)
            if i >= n:
                i = n - 1
            for c in range(m):
                acc[c] += x[i, c]
        for c in range(m):
            out[r, c] = acc[c] / n
    return out
