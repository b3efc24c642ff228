"""Ties of scores within a query, for the tie rule by item id: which rows need their item bytes, and offsets into
those bytes over all rows (the kernels compare items only within runs of equal scores)."""

from __future__ import annotations

import numpy as np

from .._kernels.api import find_duplicates

__all__ = ["clashes", "scatter_offsets", "tied_rows"]


def tied_rows(start: np.ndarray, end: np.ndarray, idx: np.ndarray, key: np.ndarray) -> np.ndarray:
    """The rows (ascending) of the groups in which two rows have equal scores: the duplicate check run on the
    scores' bits (-0.0 made 0.0 first; NaN is refused before). Only these rows' item ids are ever compared by
    the tie rule by item id (the kernels compare items within runs of equal scores)."""
    zero = key == 0.0
    if zero.any() and np.signbit(key[zero]).any():
        key = key + 0.0
    g = np.flatnonzero(clashes(start, end, idx, np.ascontiguousarray(key).view(np.uint64)) >= 0)
    lengths = end[g] - start[g]
    pos = np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(start[g] - (np.cumsum(lengths) - lengths),
                                                                    lengths)
    return np.sort(idx[pos] if idx.size else pos)


def scatter_offsets(sub_offs: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """Offsets over ``n`` rows into the bytes of ``rows`` (ascending; ``sub_offs``: their offsets, one after
    the other): row ``rows[k]`` spans ``sub_offs[k]:sub_offs[k + 1]``; the other rows are never read (their
    entries stay 0 and the zeroed pages are never touched)."""
    offs = np.zeros(n + 1, np.int64)
    offs[rows] = sub_offs[:-1]
    offs[rows + 1] = sub_offs[1:]  # a row right after another of ``rows`` starts where that one ends: same value
    return offs


def clashes(start: np.ndarray, end: np.ndarray, idx: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    """Per group, a row whose hash another row of the group has, or -1 (the duplicate check on the hashes alone)."""
    none = np.zeros(2, np.int64)
    return find_duplicates(start, end, idx, hashes, False, hashes.view(np.int64), none, np.zeros(1, np.uint8))
