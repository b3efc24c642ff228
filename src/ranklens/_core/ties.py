"""Ties of scores within a query, for the tie rule by item id: which rows need their item bytes, and offsets into
those bytes over all rows (the kernels compare items only within runs of equal scores); and the duplicate check
of items with the tie check in one pass over each query's rows (:func:`group_checks`)."""

from __future__ import annotations

import numpy as np

from .._input.buffers import string_chunk_buffers
from .._input.ids import ArrowIds, BufferIds, IdArray, IdColumn, NarrowArrowIds, arrow_string_chunks, take_ids
from .._input.validate import any_where
from .._kernels.api import check_groups, find_duplicates

__all__ = ["clashes", "group_checks", "scatter_offsets", "tied_rows"]


def tied_rows(start: np.ndarray, end: np.ndarray, idx: np.ndarray, key: np.ndarray,
              tied: np.ndarray | None = None) -> np.ndarray:
    """The rows (ascending) of the groups in which two rows have equal scores: the duplicate check run on the
    scores' bits (-0.0 made 0.0 first; NaN is refused before), unless ``tied`` says which groups have ties
    (:func:`group_checks`). Only these rows' item ids are ever compared by the tie rule by item id (the kernels
    compare items within runs of equal scores)."""
    if tied is None:
        tied = clashes(start, end, idx, _score_bits(key)) >= 0
    g = np.flatnonzero(tied)
    lengths = end[g] - start[g]
    pos = np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(start[g] - (np.cumsum(lengths) - lengths),
                                                                    lengths)
    return np.sort(idx[pos] if idx.size else pos)


def _score_bits(key: np.ndarray) -> np.ndarray:
    """The scores' bits, equal for equal scores (-0.0 made 0.0 first; NaN is refused before)."""
    # block by block, no mask of every row; the sign looked at only when some score is zero
    if any_where(lambda b: b == 0.0, key) and any_where(lambda b: (b == 0.0) & np.signbit(b), key):
        key = key + 0.0
    return np.ascontiguousarray(key).view(np.uint64)


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


def group_checks(items: IdArray, start: np.ndarray, end: np.ndarray, idx: np.ndarray, key: np.ndarray,
                 ties: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """Per group, the first row whose item an earlier row of the group has (else -1) and, with ``ties``, whether
    two of its rows have equal scores: one pass over each group's rows, items hashed on the way in the buffers
    they are held in (Arrow's chunks and 32-bit offsets as they are). None when the ids are not held as string
    buffers or the groups' rows are not contiguous (``idx`` given): the caller checks them apart."""
    spans = _spans(items)
    if spans is None or idx.size:
        return None
    n_g = start.shape[0]
    dup, tied = np.full(n_g, -1, np.int64), np.zeros(n_g, np.bool_)
    # the kernel makes -0.0 0.0 on the way (no pass over the scores first); without ties it reads no score
    scores = np.ascontiguousarray(key, np.float64) if ties else np.zeros(1, np.float64)
    firsts = np.array([pos for pos, _, _ in spans] + [int(end.max(initial=0)) + 1], np.int64)
    which = np.searchsorted(firsts, start, side="right") - 1  # the buffer each group starts in
    inside = end <= firsts[which + 1]  # and ends in
    sel_all = np.flatnonzero(inside)
    sel_all = sel_all[np.argsort(which[sel_all], kind="stable")]
    bounds = np.searchsorted(which[sel_all], np.arange(len(spans) + 1))
    parts = []
    for k, (pos, offs, data) in enumerate(spans):  # the groups inside one buffer, read there
        sel = sel_all[bounds[k]:bounds[k + 1]]
        if sel.size:
            parts.append((sel, start[sel], end[sel], pos, offs, data, dup[sel], tied[sel]))
    check_groups([p[1:] for p in parts], scores, ties)
    for sel, *_, d, t in parts:
        dup[sel], tied[sel] = d, t
    across = np.flatnonzero(~inside & (end - start > 1))  # a group across two buffers: its rows' ids copied
    if across.size:
        lengths = end[across] - start[across]
        first = np.cumsum(lengths) - lengths
        rows = np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(start[across] - first, lengths)
        ((_, offs, data),) = _spans(take_ids(items, rows)) or []
        d, t = dup[across], tied[across]
        check_groups([(first, first + lengths, 0, offs, data, d, t)], scores[rows] if ties else scores, ties)
        dup[across] = np.where(d >= 0, rows[np.maximum(d, 0)], -1)
        tied[across] = t
    return dup, tied


def _spans(ids: IdArray) -> list[tuple[int, np.ndarray, np.ndarray]] | None:
    """String ids as they are held, without a copy: per buffer ``(its first row, offsets (int32 or int64), data)``;
    None for ids not held as string buffers (integers, Python objects)."""
    col = IdColumn.of(ids)
    if isinstance(col, (BufferIds, ArrowIds)):
        return [(0, *col.buffers())]
    if not isinstance(col, NarrowArrowIds):
        return None
    out, pos = [], 0
    for c in arrow_string_chunks(col.values) or []:
        if len(c):
            out.append((pos, *string_chunk_buffers(c)))
            pos += len(c)
    return out
