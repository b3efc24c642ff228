"""From judgments + rankings + a convention to the flat arrays the kernels take.

No Python loop over queries or rows: query ids are dictionary-encoded once
(Arrow's hash), rows are grouped by query with a counting sort (or not moved
at all when they already come grouped), and items are matched inside each
query by hash in compiled code (:mod:`ranklens._kernels.group`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._ids import (
    IdArray,
    as_ids,
    factorize_parts,
    hash_ids,
    id_length,
    ids_to_numpy,
    is_str_ids,
    kernel_ids,
    narrow_strings,
    take_ids,
    unify_ids,
)
from ._kernels.api import find_duplicates, hash_items, lookup_labels, order, segments
from ._kernels.codes import (
    ORDER_BEST,
    ORDER_INPUT,
    ORDER_ITEM_ASC,
    ORDER_ITEM_DESC,
    ORDER_QUICKSORT,
    ORDER_WORST,
    TIES_AVERAGE,
    TIES_NONE,
    TIES_SHARED_RANK,
)
from .conventions import Convention
from .data import Judgments, Rankings
from .errors import InputError

__all__ = ["Exclusion", "Problem", "build_problem", "query_view"]


@dataclass(frozen=True)
class Exclusion:
    """Queries left out of (or scored specially in) an evaluation, and why."""

    reason: str
    count: int
    examples: tuple[str, ...] = ()
    measures: tuple[str, ...] = ()

    def __str__(self) -> str:
        ex = ", ".join(self.examples[:5]) + (", ..." if self.count > 5 else "")
        scope = f" [{', '.join(self.measures)}]" if self.measures else ""
        return f"{self.count} quer{'y' if self.count == 1 else 'ies'}: {self.reason}{scope} ({ex})"


@dataclass
class Problem:
    """A joined evaluation problem, grouped by query (rows are not reordered).

    Query ``q``'s ranked rows are ``r_idx[r_start[q]:r_end[q]]`` (or the rows
    ``r_start[q]:r_end[q]`` themselves when ``r_idx`` is empty); likewise
    its judgments through ``j_*``.
    """

    qids: np.ndarray  # ids of the evaluated queries, sorted
    r_start: np.ndarray
    r_end: np.ndarray
    r_idx: np.ndarray
    score: np.ndarray  # per ranked row (after precision rounding)
    label: np.ndarray  # per ranked row, NaN = unjudged (after label rules)
    r_item: IdArray
    j_start: np.ndarray
    j_end: np.ndarray
    j_idx: np.ndarray
    j_label: np.ndarray
    j_item: IdArray
    order_mode: int
    ties: int
    item_offs: np.ndarray  # item bytes for id tie-breaks (else dummies)
    item_data: np.ndarray
    max_label: float
    notes: list[Exclusion] = field(default_factory=list)

    @property
    def n_queries(self) -> int:
        return int(self.r_start.shape[0])

    @property
    def lengths(self) -> np.ndarray:
        return self.r_end - self.r_start


def _bad_rows(mask: np.ndarray, qid: Any, item: Any) -> str:
    idx = np.flatnonzero(mask)[:3]
    q = ids_to_numpy(take_ids(as_ids(qid), idx))
    it = ids_to_numpy(take_ids(as_ids(item), idx)) if item is not None else None
    parts = [f"query {q[t]!s}" + (f" item {it[t]!s}" if it is not None else "") for t in range(len(idx))]
    return "; ".join(parts)


#: Rows per block when a check or a rounding of a whole column runs block by block (no full-size temporaries).
_BLOCK = 1 << 20


def _fractional(label: np.ndarray) -> int:
    """How many values are not whole numbers (block by block: no temporary as large as the column)."""
    count = 0
    for a in range(0, label.shape[0], _BLOCK):
        part = label[a:a + _BLOCK]
        count += int(np.count_nonzero(part != np.trunc(part)))
    return count


def _via_float32(x: np.ndarray) -> np.ndarray:
    """``x`` rounded to float32 and back to float64, block by block."""
    out = np.empty(x.shape[0], np.float64)
    for a in range(0, x.shape[0], _BLOCK):
        out[a:a + _BLOCK] = x[a:a + _BLOCK].astype(np.float32)
    return out


def _label_rule(label: np.ndarray, conv: Convention, fractional: int | None = None) -> np.ndarray:
    """Labels under the convention's precision (``fractional``: the count, when known already)."""
    if conv.label_precision == "int":
        return label if (fractional if fractional is not None else _fractional(label)) == 0 else np.trunc(label)
    if conv.label_precision == "float32":
        return _via_float32(label)
    return label


def _check_labels(j: Judgments, conv: Convention) -> np.ndarray:
    label = np.asarray(j.label, dtype=np.float64)
    where = j.source or "the judgments"
    bad = ~np.isfinite(label)
    if bad.any():
        raise InputError(f"{int(bad.sum())} relevance labels in {where} are NaN or infinite ({_bad_rows(bad, j.qid, j.item)}).")
    if conv.negative_labels == "error" and (label < 0).any():
        neg = label < 0
        raise InputError(
            f"convention {conv.name!r} does not accept negative labels; {int(neg.sum())} in {where} "
            f"({_bad_rows(neg, j.qid, j.item)})."
        )
    fractional = _fractional(label) if conv.fractional_labels == "error" or conv.label_precision == "int" else None
    if conv.fractional_labels == "error" and fractional:
        frac = label != np.trunc(label)
        raise InputError(
            f"convention {conv.name!r} accepts only integer labels; {fractional} fractional in {where} "
            f"({_bad_rows(frac, j.qid, j.item)}, label {label[np.flatnonzero(frac)[0]]})."
        )
    if conv.max_label is not None and (label > conv.max_label).any():
        big = label > conv.max_label
        raise InputError(
            f"convention {conv.name!r} accepts labels up to {conv.max_label:g}; {int(big.sum())} larger in {where} "
            f"({_bad_rows(big, j.qid, j.item)})."
        )
    return _label_rule(label, conv, fractional)


def _group(codes: np.ndarray, n_all: int, sel: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows grouped by query code (no copy when they come grouped); the groups of ``sel``, in its order."""
    start, end, idx = segments(codes, n_all)
    return start[sel], end[sel], idx


def _pick(ids: Any, rows: np.ndarray) -> np.ndarray:
    """Some ids of a raw id input (numpy, Arrow or a sequence), for messages."""
    if isinstance(ids, np.ndarray):
        return ids[rows]
    if hasattr(ids, "take"):
        return ids_to_numpy(ids.take(rows))
    return np.asarray([ids[int(i)] for i in rows], dtype=object)


def _dup_error(dup: np.ndarray, qid: IdArray, item: IdArray, where: str, what: str) -> None:
    rows = dup[dup >= 0]
    if rows.size:
        q = _pick(qid, rows[:3])
        it = ids_to_numpy(take_ids(item, rows[:3]))
        ex = "; ".join(f"query {a!s} item {b!s}" for a, b in zip(q, it))
        raise InputError(
            f"{rows.size} duplicate (query, item) {what} in {where} ({ex}); each item may appear once per query."
        )


def _hash_clash(start: np.ndarray, end: np.ndarray, idx: np.ndarray, hashes: np.ndarray) -> bool:
    """Whether two rows of one group have the same hash (the duplicate check run on the hashes alone)."""
    none = np.zeros(2, np.int64)
    return bool((find_duplicates(start, end, idx, hashes, False, hashes.view(np.int64), none, np.zeros(1, np.uint8)) >= 0).any())


def build_problem(j: Judgments, r: Rankings, conv: Convention) -> Problem:
    """Join judgments and rankings under a convention."""
    if len(j) == 0:
        raise InputError("the judgments are empty.")
    if len(r) == 0:
        raise InputError("the rankings are empty.")
    if r.qid is None or r.item is None:
        if len(r) != len(j):
            raise InputError(
                f"the scores ({r.source or 'vector'}) have {len(r)} values but the judgments "
                f"({j.source or 'rows'}) have {len(j)} rows; a bare score vector must align row by row."
            )
        r = Rankings(j.qid, j.item, score=r.score, rank=r.rank, source=r.source, label=np.asarray(j.label, float))
    assert r.qid is not None and r.item is not None
    label_j = _check_labels(j, conv)
    key = np.asarray(r.order_key(), dtype=np.float64)
    bad = ~np.isfinite(key)
    if bad.any():
        what = "scores" if r.score is not None else "ranks"
        raise InputError(
            f"{int(bad.sum())} {what} in {r.source or 'the rankings'} are NaN or infinite "
            f"({_bad_rows(bad, r.qid, r.item)})."
        )
    if conv.score_precision == "float32":
        key = _via_float32(key)

    # one table holding both sides (same id arrays): factorise and check once
    same_rows = j.qid is r.qid and j.item is r.item
    # query codes in order of appearance; `order` lists them by sorted id (the output order)
    if same_rows:  # one conversion (object arrays of str cost a Python object each)
        (rqc,), q_all, order = factorize_parts([r.qid], "query ids")
        jqc = rqc
        ji = ri = as_ids(r.item, "item ids", widen=False)  # Arrow strings hashed as they come, not copied
    else:
        (jqc, rqc), q_all, order = factorize_parts([j.qid, r.qid], "query ids")
        ji, ri = unify_ids(as_ids(j.item, "item ids"), as_ids(r.item, "item ids"))
    nj = jqc.shape[0]
    if id_length(ji) != nj or label_j.shape[0] != nj:
        raise InputError("judgments: query ids, item ids and labels must have the same length.")
    if rqc.shape[0] != key.shape[0] or id_length(ri) != key.shape[0]:
        raise InputError("rankings: query ids, item ids and scores must have the same length.")
    n_all = q_all.shape[0]
    q_uniques = q_all[order]

    judged = (np.bincount(jqc, minlength=n_all) > 0)[order]  # in sorted order from here on
    ranked = judged if jqc is rqc else (np.bincount(rqc, minlength=n_all) > 0)[order]
    notes: list[Exclusion] = []

    def ids(mask: np.ndarray) -> tuple[str, ...]:
        return tuple(str(x) for x in q_uniques[mask][:20])

    only_j = judged & ~ranked
    only_r = ranked & ~judged
    if conv.queries == "same" and (only_j.any() or only_r.any()):
        raise InputError(
            f"convention {conv.name!r} needs the same queries in judgments and rankings: "
            f"{int(only_j.sum())} judged but not ranked ({', '.join(ids(only_j)[:5])}), "
            f"{int(only_r.sum())} ranked but not judged ({', '.join(ids(only_r)[:5])})."
        )
    if conv.queries == "judged":
        universe = judged
    elif conv.queries == "ranked":
        universe = ranked
    elif conv.queries == "intersection":
        universe = judged & ranked
    else:
        universe = judged | ranked
    if (only_r & ~universe).any():
        notes.append(Exclusion("ranked but not judged: left out", int((only_r & ~universe).sum()), ids(only_r & ~universe)))
    if (only_j & ~universe).any():
        notes.append(Exclusion("judged but not ranked: left out", int((only_j & ~universe).sum()), ids(only_j & ~universe)))
    if conv.missing_ranking == "error" and conv.queries != "judged" and only_j.any():
        raise InputError(
            f"convention {conv.name!r}: {int(only_j.sum())} judged queries have no ranking "
            f"({', '.join(ids(only_j)[:5])}); trec_eval 10 stops here too (use -c, i.e. queries='judged', "
            "to score them 0)."
        )
    missing = only_j & universe
    if missing.any():
        notes.append(Exclusion("judged but not ranked: scored as an empty ranking", int(missing.sum()), ids(missing)))
    if (only_r & universe).any():
        notes.append(Exclusion("ranked but not judged", int((only_r & universe).sum()), ids(only_r & universe)))
    if not universe.any():
        raise InputError("no query to evaluate: the judgments and the rankings have no query in common.")

    sel = order[universe]  # codes of the evaluated queries, in output order
    r_start, r_end, r_idx = _group(rqc, n_all, sel)
    if jqc is rqc:
        j_start, j_end, j_idx = r_start, r_end, r_idx
    else:
        j_start, j_end, j_idx = _group(jqc, n_all, sel)

    lengths = r_end - r_start
    if conv.max_items is not None and lengths.max() > conv.max_items:
        big = np.flatnonzero(lengths > conv.max_items)
        raise InputError(
            f"convention {conv.name!r} accepts at most {conv.max_items} items per query; "
            f"query {q_uniques[universe][big[0]]} has {lengths[big[0]]}."
        )
    if conv.min_items > 1:
        small = (lengths < conv.min_items) & ranked[universe]
        if small.any():
            raise InputError(
                f"convention {conv.name!r} needs at least {conv.min_items} items per ranked list "
                f"(scikit-learn: 'Computing NDCG is only meaningful when there is more than 1 document'); "
                f"query {q_uniques[universe][np.flatnonzero(small)[0]]} has {lengths[np.flatnonzero(small)[0]]}."
            )

    # duplicates inside a query, and the label of every ranked row
    r_hash = hash_ids(ri)
    if narrow_strings(ri) and not _hash_clash(r_start, r_end, r_idx, r_hash):
        dup = np.full(r_start.shape[0], -1, np.int64)  # no two equal hashes in a query: no duplicate either
    else:  # equal hashes confirmed on the ids themselves (Arrow strings kept narrow widened for it)
        dup = find_duplicates(r_start, r_end, r_idx, r_hash, *kernel_ids(ri))
    _dup_error(dup, r.qid, ri, r.source or "the rankings", "rows")
    if same_rows:
        r_label = label_j
    elif r.label is not None and r.label.shape[0] == key.shape[0]:
        r_label = _label_rule(np.asarray(r.label, dtype=np.float64), conv)  # same table: no join needed
    else:
        r_is_str, r_int, r_offs, r_data = kernel_ids(ri)
        j_is_str, j_int, j_offs, j_data = kernel_ids(ji)
        j_hash = hash_items(j_is_str, j_int, j_offs, j_data)
        _dup_error(find_duplicates(j_start, j_end, j_idx, j_hash, j_is_str, j_int, j_offs, j_data), j.qid, ji,
                   j.source or "the judgments", "judgments")
        r_label = lookup_labels(r_start, r_end, r_idx, r_hash, r_int, r_offs, r_data,
                                j_start, j_end, j_idx, j_hash, j_int, j_offs, j_data, label_j, r_is_str)

    ties = conv.ties
    kernel_ties = TIES_NONE
    order_mode = ORDER_INPUT
    item_offs, item_data = np.zeros(2, np.int64), np.zeros(1, np.uint8)
    if ties == "average":
        kernel_ties = TIES_AVERAGE
    elif ties == "shared_rank":
        kernel_ties = TIES_SHARED_RANK
    elif ties in ("item_desc", "item_asc"):
        # trec_eval compares ids as strings ("10" < "9"), also when they are integers
        sid = as_ids(ri) if is_str_ids(ri) else unify_ids(ri, as_ids(np.array(["x"], dtype=object)))[0]
        _, _, item_offs, item_data = kernel_ids(sid)
        order_mode = ORDER_ITEM_DESC if ties == "item_desc" else ORDER_ITEM_ASC
    elif ties == "worst":
        order_mode = ORDER_WORST
    elif ties == "best":
        order_mode = ORDER_BEST
    elif ties == "ranx":
        order_mode = ORDER_QUICKSORT

    return Problem(
        qids=q_uniques[universe],
        r_start=r_start, r_end=r_end, r_idx=r_idx, score=key, label=r_label, r_item=ri,
        j_start=j_start, j_end=j_end, j_idx=j_idx, j_label=label_j, j_item=ji,
        order_mode=order_mode, ties=kernel_ties, item_offs=item_offs, item_data=item_data,
        max_label=float(label_j.max()), notes=notes,
    )


def _rows(start: int, end: int, idx: np.ndarray) -> np.ndarray:
    return np.arange(start, end) if idx.shape[0] == 0 else idx[start:end]


def query_view(p: Problem, q: int) -> dict[str, Any]:
    """One query's ranked rows in ranked order, and its judged rows (for explain; one query only)."""
    rows = _rows(int(p.r_start[q]), int(p.r_end[q]), p.r_idx)
    s, lab = p.score[rows], p.label[rows]
    o = order(s, lab, rows, p.order_mode, p.item_offs, p.item_data) if rows.size else np.zeros(0, np.int64)
    jrows = _rows(int(p.j_start[q]), int(p.j_end[q]), p.j_idx)
    return {
        "item": ids_to_numpy(take_ids(p.r_item, rows[o])), "score": s[o], "label": lab[o],
        "j_item": ids_to_numpy(take_ids(p.j_item, jrows)), "j_label": p.j_label[jrows],
    }
