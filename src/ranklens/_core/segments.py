"""The fused kernel on scores and labels held as an Arrow table's chunks (:class:`~ranklens._input.chunks.
ChunkedValues`): read where they lie, segment by segment, with no column-sized copy.

The rows are cut at every chunk boundary of either column (the two may be chunked differently) into segments; a
query whose rows lie inside one segment is evaluated there, on views of the chunks (its rows counted from the
segment's first); a query whose rows span a boundary (a few per chunk at most) is evaluated on a copy of its own
rows. Every segment's queries go to the thread pool in one batch (``api.evaluate_segments``); the scores are rounded
to float32 by the kernel as it reads them when the convention says so. Each query's rows, in the same order, meet the
same arithmetic as in one call on the flat columns: the values are the same, bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._input.chunks import ChunkedValues, held
from .._kernels import api
from .problem import Problem

__all__ = ["evaluate_held", "held_columns"]

Column = np.ndarray | ChunkedValues


def held_columns(problem: Problem, ideal_judged: bool) -> tuple[Column, Column] | None:
    """The problem's scores and labels as held, when the kernel can read them segment by segment: one of them held as
    chunks, each query's rows contiguous (no ``r_idx``) and the ideal list made of the ranked rows' labels (not
    ``ideal_judged``); else None (the kernel reads the flat columns)."""
    score, label = held(problem, "score"), held(problem, "label")
    if ideal_judged or problem.r_idx.size or not (isinstance(score, ChunkedValues) or isinstance(label, ChunkedValues)):
        return None
    if len(score) == 0 or len(score) != len(label):
        return None
    return score, label


def _pieces(col: Column) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """A column's chunks and their first rows (one more: the length); an array is one chunk."""
    if isinstance(col, ChunkedValues):
        return col.chunks, col.bounds
    return (col,), np.array([0, col.shape[0]], np.int64)


def _view(chunks: tuple[np.ndarray, ...], bounds: np.ndarray, a: int, b: int) -> np.ndarray:
    """Rows ``a:b`` (inside one chunk) as a view of that chunk."""
    k = int(np.searchsorted(bounds, a, side="right")) - 1
    return chunks[k][a - int(bounds[k]):b - int(bounds[k])]


def _rows(col: Column, a: int, b: int) -> np.ndarray:
    """Rows ``a:b`` (across chunks) as a float64 copy, not rounded."""
    if isinstance(col, ChunkedValues):
        return col.take(np.arange(a, b, dtype=np.int64))
    return np.ascontiguousarray(col[a:b], np.float64)


def evaluate_held(problem: Problem, columns: tuple[Column, Column], tail: tuple[Any, ...]) -> tuple[np.ndarray,
                                                                                                   np.ndarray]:
    """``(values, empty)`` of every query of ``problem`` (``(n_queries, n_measures)``, as ``evaluate_queries``
    gives them) on its scores and labels as held (:func:`held_columns`); ``tail``: the kernel's arguments from
    ``ties`` to ``map_vals``."""
    score, label = columns
    s_chunks, s_bounds = _pieces(score)
    l_chunks, l_bounds = _pieces(label)
    bounds = np.sort(np.concatenate([s_bounds, l_bounds]))
    bounds = bounds[np.concatenate([[True], bounds[1:] != bounds[:-1]])]  # (np.union1d would import numpy.ma)
    n_seg = bounds.shape[0] - 1
    n = int(bounds[-1])
    start, end = problem.r_start, problem.r_end
    seg = np.minimum(np.searchsorted(bounds, start, side="right") - 1, n_seg - 1)
    inside = end <= bounds[seg + 1]
    offs = problem.item_offs
    whole_offs = offs.shape[0] == n + 1  # offsets of every row's item bytes (else the kernel reads none)
    in_seg = np.flatnonzero(inside)
    in_seg = in_seg[np.argsort(seg[in_seg], kind="stable")]
    cut = np.searchsorted(seg[in_seg], np.arange(n_seg + 1))
    groups, segments = [], []
    for k in range(n_seg):
        sel = in_seg[cut[k]:cut[k + 1]]
        if not sel.size:
            continue
        a, b = int(bounds[k]), int(bounds[k + 1])
        groups.append(sel)
        segments.append((start[sel] - a, end[sel] - a, _view(s_chunks, s_bounds, a, b),
                         _view(l_chunks, l_bounds, a, b), offs[a:b + 1] if whole_offs else offs))
    for q in np.flatnonzero(~inside):  # a query across a boundary: its own rows copied
        a, b = int(start[q]), int(end[q])
        groups.append(np.array([q]))
        segments.append((np.zeros(1, np.int64), np.array([b - a], np.int64), _rows(score, a, b), _rows(label, a, b),
                         offs[a:b + 1] if whole_offs else offs))
    round32 = isinstance(score, ChunkedValues) and score.round32
    done = api.evaluate_segments(segments, problem.order_mode, problem.item_data, tail, round32)
    n_m = tail[6].shape[0]
    values, empty = np.empty((start.shape[0], n_m), np.float64), np.empty((start.shape[0], n_m), np.bool_)
    for sel, (v, e) in zip(groups, done):
        values[sel], empty[sel] = v, e
    return values, empty
