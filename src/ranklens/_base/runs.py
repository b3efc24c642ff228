"""Runs of equal values in a sorted array: where each starts, how long it is, each element's place in it."""

from __future__ import annotations

import numpy as np

__all__ = ["run_positions"]


def run_positions(*keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(starts, lengths, positions)`` of the runs of equal consecutive rows of ``keys`` (arrays of one length,
    sorted together): each run's first index and length, and every row's 0-based place in its run.

    >>> s, n, p = run_positions(np.array([4, 4, 7, 9, 9, 9]))
    >>> s.tolist(), n.tolist(), p.tolist()
    ([0, 2, 3], [2, 1, 3], [0, 1, 0, 0, 1, 2])
    """
    n = keys[0].shape[0]
    head = np.zeros(n, np.bool_)
    head[:1] = True
    for k in keys:
        head[1:] |= k[1:] != k[:-1]
    starts = np.flatnonzero(head)
    lengths = np.diff(np.append(starts, n))
    return starts, lengths, np.arange(n) - np.repeat(starts, lengths)
