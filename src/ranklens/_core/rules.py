"""A convention's rules on values: labels and scores checked and brought to its precision, list lengths.

Labels (NaN or infinite, negative, fractional, above the maximum the convention accepts) and scores (NaN or
infinite) are refused with the rows they are on; labels are truncated or rounded through float32, scores rounded
through float32, as the convention says; lists longer or shorter than it accepts are refused. Column by column, in
one pass of a kernel on the thread pool (``value_facts``, ``round_f32``) or block by block (no temporary as large as a
column), no loop over rows in Python.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._defs.conventions import Convention
from .._input.chunks import ChunkedValues, held
from .._input.dispatch import Judgments, Rankings
from .._input.ids import as_ids, ids_to_numpy, take_ids
from .._input.validate import BLOCK as _BLOCK
from .._input.validate import any_where
from .._kernels.api import round_f32, value_facts
from ..errors import InputError

__all__ = ["bad_rows", "check_labels", "check_order_key", "check_sizes", "held_labels", "held_order_key", "label_rule"]


def bad_rows(mask: np.ndarray, qid: Any, item: Any) -> str:
    idx = np.flatnonzero(mask)[:3]
    q = ids_to_numpy(take_ids(as_ids(qid), idx))
    it = ids_to_numpy(take_ids(as_ids(item), idx)) if item is not None else None
    parts = [f"query {q[t]!s}" + (f" item {it[t]!s}" if it is not None else "") for t in range(len(idx))]
    return "; ".join(parts)


def _not_finite(x: np.ndarray) -> np.ndarray:
    return ~np.isfinite(x)


def _fractional(label: np.ndarray) -> int:
    """How many values are not whole numbers (block by block: no temporary as large as the column)."""
    count = 0
    for a in range(0, label.shape[0], _BLOCK):
        part = label[a:a + _BLOCK]
        count += int(np.count_nonzero(part != np.trunc(part)))
    return count


def _flat(x: np.ndarray) -> bool:
    """Whether ``x`` is a 1-d C-contiguous float64 array, as the column kernels take it."""
    return x.dtype == np.float64 and x.ndim == 1 and bool(x.flags.c_contiguous)


def _facts(x: np.ndarray, needed: bool, extremes: bool) -> tuple[int, int, int, float] | None:
    """:func:`~ranklens._kernels.api.value_facts` of ``x`` (``(non-finite, fractional, negative, largest)``, on the
    thread pool; ``extremes``: the last two too) when some rule needs them and the kernel takes ``x``; else None (the
    rules then read ``x`` block by block, as they need)."""
    return value_facts(x, extremes) if needed and _flat(x) else None


def _via_float32(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``x`` rounded to float32 and back to float64 into ``out`` (may be ``x``; default: new): on the thread pool
    (``round_f32``), or block by block."""
    out = np.empty(x.shape[0], np.float64) if out is None else out
    if _flat(x) and _flat(out) and out.flags.writeable:
        return round_f32(x, out)
    for a in range(0, x.shape[0], _BLOCK):
        out[a:a + _BLOCK] = x[a:a + _BLOCK].astype(np.float32)
    return out


def label_rule(label: np.ndarray, conv: Convention, fractional: int | None = None) -> np.ndarray:
    """Labels under the convention's precision (``fractional``: the count, when known already)."""
    if conv.label_precision == "int":
        return label if (fractional if fractional is not None else _fractional(label)) == 0 else np.trunc(label)
    if conv.label_precision == "float32":
        return _via_float32(label)
    return label


def check_labels(label: np.ndarray, conv: Convention, where: str, qid: Any, item: Any,
                 finite: bool = False) -> np.ndarray:
    """Labels checked and under the convention's precision (``qid``, ``item``: the rows' ids, for messages;
    ``finite``: the caller's reader found them finite already, in this very array). What the rules read of the
    labels (NaN and infinities, negative, fractional and largest values) is read in one pass when they need it."""
    count_fractional = conv.fractional_labels == "error" or conv.label_precision == "int"
    extremes = conv.negative_labels == "error" or conv.max_label is not None
    facts = _facts(label, not finite or count_fractional or extremes, extremes)
    # block by block without facts; the mask of every row only on the way to errors
    if not finite and (facts[0] > 0 if facts else any_where(_not_finite, label)):
        bad = ~np.isfinite(label)
        raise InputError(
            f"{int(bad.sum())} relevance labels in {where} are NaN or infinite ({bad_rows(bad, qid, item)})."
        )
    if conv.negative_labels == "error" and (facts[2] > 0 if facts else any_where(lambda b: b < 0, label)):
        neg = label < 0
        raise InputError(
            f"convention {conv.name!r} does not accept negative labels; {int(neg.sum())} in {where} "
            f"({bad_rows(neg, qid, item)})."
        )
    fractional = (facts[1] if facts else _fractional(label)) if count_fractional else None
    if conv.fractional_labels == "error" and fractional:
        frac = label != np.trunc(label)
        raise InputError(
            f"convention {conv.name!r} accepts only integer labels; {fractional} fractional in {where} "
            f"({bad_rows(frac, qid, item)}, label {label[np.flatnonzero(frac)[0]]})."
        )
    top = conv.max_label
    if top is not None and (facts[3] > top if facts else any_where(lambda b: b > top, label)):
        big = label > conv.max_label
        raise InputError(
            f"convention {conv.name!r} accepts labels up to {conv.max_label:g}; {int(big.sum())} larger in {where} "
            f"({bad_rows(big, qid, item)})."
        )
    return label_rule(label, conv, fractional)


def check_order_key(key: np.ndarray, conv: Convention, what: str, where: str, qid: Any, item: Any,
                    in_place: bool = False, finite: bool = False) -> np.ndarray:
    """Scores (or ranks as an order key) checked and under the convention's precision (``in_place``: rounded over
    ``key`` itself, which the caller owns, instead of into a new array; ``finite``: as for :func:`check_labels`)."""
    if not finite and (value_facts(key, False)[0] > 0 if _flat(key) else any_where(_not_finite, key)):
        bad = ~np.isfinite(key)
        raise InputError(f"{int(bad.sum())} {what} in {where} are NaN or infinite ({bad_rows(bad, qid, item)}).")
    if conv.score_precision == "float32":
        key = _via_float32(key, key if in_place else None)
    return key


def held_labels(j: Judgments, conv: Convention, fresh: bool) -> np.ndarray | ChunkedValues:
    """The judgments' labels checked and under the convention's precision (:func:`check_labels`; ``fresh``: the
    caller made ``j`` itself in this call). Labels held as an Arrow column's chunks stay so when the rules refuse none
    and change none (no truncation of a fractional label, no float32 rounding): the chunks are then the labels.
    Otherwise the labels as one array go through :func:`check_labels` (the same refusals, in the same words)."""
    chunked = held(j, "label")
    if isinstance(chunked, ChunkedValues) and conv.label_precision != "float32":
        bad, fractional, negative, top = chunked.facts(negative=conv.negative_labels == "error")
        refused = (conv.negative_labels == "error" and negative) or (conv.max_label is not None
                                                                     and top > conv.max_label)
        changed = fractional and (conv.fractional_labels == "error" or conv.label_precision == "int")
        if not bad and not refused and not changed:
            return chunked
    label = np.asarray(j.label, dtype=np.float64)
    return check_labels(label, conv, j.source or "the judgments", j.qid, j.item,
                        finite=fresh and j.finite and label is j.label)


def held_order_key(r: Rankings, conv: Convention, own: bool, fresh: bool) -> np.ndarray | ChunkedValues:
    """The rankings' order key checked and under the convention's precision (:func:`check_order_key`; ``own``,
    ``fresh``: as for ``build_problem``). Scores held as an Arrow column's chunks stay so when none is NaN or
    infinite, read rounded to float32 where the convention says (:meth:`ChunkedValues.rounded`: by the kernels, as
    they read them)."""
    chunked = held(r, "score")
    if isinstance(chunked, ChunkedValues) and not chunked.nonfinite():
        return chunked.rounded() if conv.score_precision == "float32" else chunked
    return check_order_key(np.asarray(r.order_key(), dtype=np.float64), conv,
                           "scores" if r.score is not None else "ranks", r.source or "the rankings", r.qid, r.item,
                           in_place=own and r.own_scores and r.score is not None and r.score.dtype == np.float64,
                           finite=fresh and r.finite)


def check_sizes(conv: Convention, lengths: np.ndarray, qids: np.ndarray, ranked: np.ndarray | None) -> None:
    """The convention's limits on list lengths (``ranked``: which queries have a ranked list; None: all)."""
    if conv.max_items is not None and lengths.size and lengths.max() > conv.max_items:
        big = np.flatnonzero(lengths > conv.max_items)
        raise InputError(
            f"convention {conv.name!r} accepts at most {conv.max_items} items per query; "
            f"query {qids[big[0]]} has {lengths[big[0]]}."
        )
    if conv.min_items > 1:
        small = lengths < conv.min_items
        if ranked is not None:
            small &= ranked
        if small.any():
            raise InputError(
                f"convention {conv.name!r} needs at least {conv.min_items} items per ranked list "
                f"(scikit-learn: 'Computing NDCG is only meaningful when there is more than 1 document'); "
                f"query {qids[np.flatnonzero(small)[0]]} has {lengths[np.flatnonzero(small)[0]]}."
            )
