"""Ties of scores within a query, for the tie rule by item id: which rows need their item bytes, and offsets into
those bytes over all rows (the kernels compare items only within runs of equal scores); and the duplicate check
of items with the tie check in one pass over each query's rows (:func:`group_checks`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._input.buffers import string_chunk_buffers, zeros_array
from .._input.chunks import ChunkedValues
from .._input.factorize import RunCodes
from .._input.ids import (
    ArrowIds,
    BufferIds,
    IdArray,
    IdColumn,
    NarrowArrowIds,
    arrow_string_chunks,
    id_length,
    take_ids,
)
from .._input.validate import any_where
from .._kernels.api import GroupPart, check_groups, find_duplicates, start_check_groups

#: Scores as one array, or held as an Arrow column's chunks.
Key = np.ndarray | ChunkedValues

__all__ = ["clashes", "group_checks", "run_checks", "scatter_offsets", "start_group_checks", "start_run_checks",
           "tied_rows"]


def tied_rows(start: np.ndarray, end: np.ndarray, idx: np.ndarray, key: Key,
              tied: np.ndarray | None = None) -> np.ndarray:
    """The rows (ascending) of the groups in which two rows have equal scores: the duplicate check run on the
    scores' bits (-0.0 made 0.0 first; NaN is refused before), unless ``tied`` says which groups have ties
    (:func:`group_checks`). Only these rows' item ids are ever compared by the tie rule by item id (the kernels
    compare items within runs of equal scores)."""
    if tied is None:
        tied = clashes(start, end, idx, _score_bits(key.flat() if isinstance(key, ChunkedValues) else key)) >= 0
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
    offs = zeros_array(n + 1, np.int64)  # ordinary pages: only the few written are cleared
    offs[rows] = sub_offs[:-1]
    offs[rows + 1] = sub_offs[1:]  # a row right after another of ``rows`` starts where that one ends: same value
    return offs


def clashes(start: np.ndarray, end: np.ndarray, idx: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    """Per group, a row whose hash another row of the group has, or -1 (the duplicate check on the hashes alone)."""
    none = np.zeros(2, np.int64)
    return find_duplicates(start, end, idx, hashes, False, hashes.view(np.int64), none, np.zeros(1, np.uint8))


def group_checks(items: IdArray, start: np.ndarray, end: np.ndarray, idx: np.ndarray, key: Key,
                 ties: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """Per group, the first row whose item an earlier row of the group has (else -1) and, with ``ties``, whether
    two of its rows have equal scores: one pass over each group's rows, items hashed on the way in the buffers
    they are held in (Arrow's chunks and 32-bit offsets as they are). None when the ids are not held as string
    buffers or the groups' rows are not contiguous (``idx`` given): the caller checks them apart."""
    wait = start_group_checks(items, start, end, idx, key, ties)
    return None if wait is None else wait()


def start_group_checks(items: IdArray, start: np.ndarray, end: np.ndarray, idx: np.ndarray, key: Key,
                       ties: bool) -> Callable[[], tuple[np.ndarray, np.ndarray]] | None:
    """:func:`group_checks` started on the kernels' threads without waiting for them: returns the wait for its
    result (None as there), so that the caller numbers the query ids meanwhile. Groups in the order of their rows
    (``start`` nondecreasing: a table's runs of query ids) are handed to the kernel as slices, each buffer's one."""
    spans = _spans(items)
    if spans is None or idx.size:
        return None
    n_g = start.shape[0]
    dup, tied = np.full(n_g, -1, np.int64), np.zeros(n_g, np.bool_)
    # the kernel makes -0.0 0.0 (no pass over the scores first); without ties it reads no score
    keys, round32 = _span_keys(key, spans, ties)
    firsts = np.array([pos for pos, _, _ in spans] + [int(end.max(initial=0)) + 1], np.int64)
    which = np.searchsorted(firsts, start, side="right") - 1  # the buffer each group starts in
    inside = end <= firsts[which + 1]  # and ends in
    parts: list[GroupPart] = []
    back: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # results the kernel writes into copies
    if n_g < 2 or bool((start[1:] >= start[:-1]).all()):  # in row order: a buffer's groups are one slice (a view)
        bounds = np.searchsorted(which, np.arange(len(spans) + 1))
        for k, (pos, offs, data) in enumerate(spans):
            a, b = int(bounds[k]), int(bounds[k + 1])
            b -= int(b > a and not inside[b - 1])  # only the last group of a buffer may go on into the next
            if b > a:
                parts.append((start[a:b], end[a:b], pos, offs, data, *keys[k], dup[a:b], tied[a:b]))
    else:
        sel_all = np.flatnonzero(inside)
        sel_all = sel_all[np.argsort(which[sel_all], kind="stable")]
        bounds = np.searchsorted(which[sel_all], np.arange(len(spans) + 1))
        for k, (pos, offs, data) in enumerate(spans):  # the groups inside one buffer, read there
            sel = sel_all[bounds[k]:bounds[k + 1]]
            if sel.size:
                back.append((sel, dup[sel], tied[sel]))
                parts.append((start[sel], end[sel], pos, offs, data, *keys[k], back[-1][1], back[-1][2]))
    running = start_check_groups(parts, ties, round32)

    def wait() -> tuple[np.ndarray, np.ndarray]:
        running()
        for sel, d, t in back:
            dup[sel], tied[sel] = d, t
        _across(items, start, end, inside, key, (ties, round32), dup, tied)
        return dup, tied

    return wait


def start_run_checks(items: IdArray, lengths: np.ndarray | None, key: Key,
                      ties: bool) -> Callable[[], tuple[np.ndarray, np.ndarray]] | None:
    """:func:`start_group_checks` of the runs of ``lengths`` rows (None: no runs): a table's runs of query ids,
    checked while the ids are numbered (:func:`ranklens._input.factorize.cut_runs`, ``number_runs``): each query's
    rows when no query comes in two runs (:func:`run_checks`). None also when the columns' lengths differ (refused
    later)."""
    if lengths is None or int(lengths.sum()) != key.shape[0] or id_length(items) != key.shape[0]:
        return None
    bounds = np.zeros(lengths.shape[0] + 1, np.int64)
    np.cumsum(lengths, out=bounds[1:])
    return start_group_checks(items, bounds[:-1], bounds[1:], np.empty(0, np.int64), key, ties)


def run_checks(checking: Callable[[], tuple[np.ndarray, np.ndarray]], codes: RunCodes, n_all: int,
                sel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The checks of the runs (:func:`start_run_checks`) as the groups ``sel`` (query codes) have them, when each
    query is one run (its rows contiguous; ``codes``: the runs' query codes, ``n_all`` of them)."""
    dup, tied = checking()
    run_of = np.zeros(n_all, np.int64)
    run_of[codes.codes] = np.arange(codes.codes.shape[0], dtype=np.int64)
    g = run_of[sel]
    return dup[g], tied[g]


def _span_keys(key: np.ndarray | ChunkedValues, spans: list[tuple[int, np.ndarray, np.ndarray]],
               ties: bool) -> tuple[list[tuple[np.ndarray, int]], bool]:
    """Per buffer of item ids, the scores its groups read and the row of their first (``key[row - kbase]``): the
    key's chunk where the key's chunks are the ids' buffers' rows, else the key as one array; and whether the kernel
    rounds them to float32 as it reads them (:attr:`ChunkedValues.round32`). Without ``ties``, no score."""
    if not ties:
        return [(np.zeros(1, np.float64), 0)] * len(spans), False
    if isinstance(key, ChunkedValues):
        if key.bounds[:-1].tolist() == [pos for pos, _, _ in spans]:
            return [(c, int(b)) for c, b in zip(key.chunks, key.bounds[:-1])], key.round32
        return [(key.flat(), 0)] * len(spans), False
    return [(np.ascontiguousarray(key, np.float64), 0)] * len(spans), False


def _across(items: IdArray, start: np.ndarray, end: np.ndarray, inside: np.ndarray, key: np.ndarray | ChunkedValues,
            how: tuple[bool, bool], dup: np.ndarray, tied: np.ndarray) -> None:
    """The checks of the groups across two buffers: their rows' ids copied, checked there, written into ``dup``,
    ``tied`` (``how``: whether ties are checked, and the scores rounded to float32 as they are read)."""
    ties, round32 = how
    across = np.flatnonzero(~inside & (end - start > 1))
    if not across.size:
        return
    lengths = end[across] - start[across]
    first = np.cumsum(lengths) - lengths
    rows = np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(start[across] - first, lengths)
    ((_, offs, data),) = _spans(take_ids(items, rows)) or []
    d, t = dup[across], tied[across]
    scores = (key.take(rows) if isinstance(key, ChunkedValues) else key[rows]) if ties else np.zeros(1)
    check_groups([(first, first + lengths, 0, offs, data, scores, 0, d, t)], ties, round32 and ties)
    dup[across] = np.where(d >= 0, rows[np.maximum(d, 0)], -1)
    tied[across] = t


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
