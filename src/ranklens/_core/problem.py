"""From judgments + rankings + a convention to the flat arrays the kernels take.

No Python loop over queries or rows: query ids are dictionary-encoded once
(:func:`ranklens._input.factorize.factorize_runs`: only the first id of each run of equal
ids is hashed, by Arrow or by a kernel), rows are grouped by query with a counting sort (or not moved
at all when they already come grouped), and items are matched inside each
query by hash in compiled code (:mod:`ranklens._kernels.group`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

import numpy as np

from .._defs.conventions import Convention
from .._input.chunks import ChunkedValues, FlatColumn, held
from .._input.dispatch import Judgments, Rankings
from .._input.factorize import cut_runs, factorize_runs, number_runs
from .._input.forms import array_like
from .._input.ids import (
    IdArray,
    as_ids,
    hash_ids,
    id_length,
    ids_to_numpy,
    is_str_ids,
    kernel_ids,
    narrow_strings,
    same_ids,
    take_ids,
    unify_ids,
)
from .._input.validate import numeric
from .._kernels.api import find_duplicates, hash_items, lookup_labels
from .._kernels.codes import (
    ORDER_BEST,
    ORDER_INPUT,
    ORDER_ITEM_ASC,
    ORDER_ITEM_DESC,
    ORDER_QUICKSORT,
    ORDER_QUICKSORT_REVERSED,
    ORDER_QUICKSORT_TWICE,
    ORDER_WORST,
    TIES_AVERAGE,
    TIES_NONE,
    TIES_SHARED_RANK,
)
from ..errors import InputError
from .rules import check_labels, check_order_key, check_sizes, held_labels, held_order_key, label_rule
from .ties import clashes, group_checks, run_checks, scatter_offsets, start_run_checks, tied_rows

__all__ = [
    "PROBLEM_FIELDS", "Exclusion", "ExclusionReason", "Problem", "array_problem", "build_problem", "label_rule",
    "matrix_problem", "same_problem", "with_scores",
]

#: The convention fields a problem depends on (what :func:`build_problem` and :func:`array_problem` read): two
#: conventions equal in these give the same problem, so one built problem serves both.
PROBLEM_FIELDS = ("label_precision", "negative_labels", "fractional_labels", "max_label", "score_precision",
                  "queries", "missing_ranking", "min_items", "max_items", "ties")


def same_problem(a: Convention, b: Convention) -> bool:
    """Whether conventions ``a`` and ``b`` give the same problem (:data:`PROBLEM_FIELDS`)."""
    return all(getattr(a, f) == getattr(b, f) for f in PROBLEM_FIELDS)


class ExclusionReason(str, Enum):
    """Why queries are left out of an evaluation, or scored by a rule (the value is the reason's text;
    ``NO_RELEVANT_SCORED``'s has the value the queries got, see :attr:`Exclusion.text`)."""

    RANKED_NOT_JUDGED_LEFT_OUT = "ranked but not judged: left out"
    JUDGED_NOT_RANKED_LEFT_OUT = "judged but not ranked: left out"
    JUDGED_NOT_RANKED_EMPTY = "judged but not ranked: scored as an empty ranking"
    RANKED_NOT_JUDGED_KEPT = "ranked but not judged"
    NO_RELEVANT_SKIPPED = "no relevant item: skipped (not in the mean)"
    NO_RELEVANT_SCORED = "no relevant item: scored {value:g} by the convention"
    UNDEFINED_SKIPPED = "undefined for the query under the convention (0 / 0): skipped (not in the mean)"
    MISSING_LABEL_LEFT_OUT = "a missing label: left out of the judgments (missing='exclude')"
    MISSING_SCORE_LEFT_OUT = "a missing score or rank: left out of the rankings (missing='exclude')"

    def __str__(self) -> str:
        return str(self.value)

    @property
    def unit(self) -> str:
        """What an exclusion of this reason counts: ``"row"`` (rows an input left out) or ``"query"``."""
        return "row" if self in (ExclusionReason.MISSING_LABEL_LEFT_OUT, ExclusionReason.MISSING_SCORE_LEFT_OUT) \
            else "query"


@dataclass(frozen=True)
class Exclusion:
    """Queries left out of (or scored specially in) an evaluation, and why.

    Attributes
    ----------
    reason : ExclusionReason
        Why.
    count : int
        How many queries.
    examples : tuple of str
        The first (up to 20) of them, in query order.
    measures : tuple of str
        The measures concerned (empty: all of them).
    value : float or None
        The value the convention gave them (``NO_RELEVANT_SCORED``).
    keys : tuple
        The examples as query ids (not strings), to merge the exclusions of batches in query order.

    Examples
    --------
    >>> str(Exclusion(ExclusionReason.NO_RELEVANT_SCORED, 2, ("q1", "q7"), ("ndcg@10",), value=0.0))
    '2 queries: no relevant item: scored 0 by the convention [ndcg@10] (q1, q7)'
    """

    reason: ExclusionReason
    count: int
    examples: tuple[str, ...] = ()
    measures: tuple[str, ...] = ()
    value: float | None = None
    keys: tuple[Any, ...] = field(default=(), compare=False, repr=False)

    @property
    def text(self) -> str:
        """The reason in words (with the value, for queries scored by the convention)."""
        if self.value is None:
            return str(self.reason.value)
        return str(self.reason.value).format(value=float(self.value))

    def __str__(self) -> str:
        ex = ", ".join(self.examples[:5]) + (", ..." if self.count > 5 else "")
        scope = f" [{', '.join(self.measures)}]" if self.measures else ""
        unit = "row" if self.reason.unit == "row" else "quer"
        plural = {"row": ("", "s"), "quer": ("y", "ies")}[unit][self.count != 1]
        return f"{self.count} {unit}{plural}: {self.text}{scope} ({ex})"


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
    r_item: IdArray
    j_start: np.ndarray
    j_end: np.ndarray
    j_idx: np.ndarray
    j_item: IdArray
    order_mode: int
    ties: int
    item_offs: np.ndarray  # item bytes for id tie-breaks (else dummies)
    item_data: np.ndarray
    max_label: float
    # per ranked row (after precision rounding); it and the labels may be held as an Arrow column's chunks, which
    # the kernels read where they are (``_core.segments``) and any other reader gets as one array (FlatColumn)
    score: FlatColumn[np.ndarray] = FlatColumn()  # required (no default), as every field above
    label: FlatColumn[np.ndarray] = FlatColumn()  # per ranked row, NaN = unjudged (after label rules)
    j_label: FlatColumn[np.ndarray] = FlatColumn()
    notes: list[Exclusion] = field(default_factory=list)
    duplicated: np.ndarray | None = None  # per query, an item twice in its rows or judgments (duplicates="mark")
    by_rank: bool = False  # the rankings give ranks, not scores: ``score`` is minus the rank

    @property
    def lengths(self) -> np.ndarray:
        return self.r_end - self.r_start


def _ordering(conv: Convention, items: IdArray | None, in_ranx_order: bool = False,
              need_items: bool = True) -> tuple[int, int, np.ndarray, np.ndarray]:
    """The kernel's order mode, tie rule and item bytes (for id tie-breaks) under the convention.

    ``in_ranx_order``: the rows come from a ``ranx.Run``, which sorted them when it was built and
    evaluates them in that order (``ranx.evaluate`` sorts a Run again only with ``make_comparable``).
    ``need_items=False``: ``items`` None means no query has tied scores, so no item bytes are needed."""
    ties = conv.ties
    kernel_ties = TIES_NONE
    order_mode = ORDER_INPUT
    item_offs, item_data = np.zeros(2, np.int64), np.zeros(1, np.uint8)
    if ties == "average":
        kernel_ties = TIES_AVERAGE
    elif ties == "shared_rank":
        kernel_ties = TIES_SHARED_RANK
    elif ties in ("item_desc", "item_asc"):
        order_mode = ORDER_ITEM_DESC if ties == "item_desc" else ORDER_ITEM_ASC
        if items is None and not need_items:
            return order_mode, kernel_ties, item_offs, item_data
        if items is None:
            raise InputError(f"convention {conv.name!r} breaks ties by item id (ties={ties!r}): give the item ids.")
        # trec_eval compares ids as strings ("10" < "9"), also when they are integers
        sid = as_ids(items) if is_str_ids(items) else unify_ids(items, as_ids(np.array(["x"], dtype=object)))[0]
        _, _, item_offs, item_data = kernel_ids(sid)
    elif ties == "worst":
        order_mode = ORDER_WORST
    elif ties == "best":
        order_mode = ORDER_BEST
    elif ties == "ranx" and not in_ranx_order:  # what ranx.Run does to a dict's order when it is built
        order_mode = ORDER_QUICKSORT
    elif ties == "ranx_dict":  # what ranx.evaluate does to plain dicts
        order_mode = ORDER_QUICKSORT_REVERSED
    elif ties == "ranx_comparable":  # ranx.evaluate(..., make_comparable=True): the Run's sort, then once more
        order_mode = ORDER_QUICKSORT if in_ranx_order else ORDER_QUICKSORT_TWICE
    return order_mode, kernel_ties, item_offs, item_data


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


def build_problem(j: Judgments, r: Rankings, conv: Convention, *, batch: bool = False,
                  duplicates: str = "error", own: bool = False, fresh: bool = False) -> Problem:
    """Join judgments and rankings under a convention.

    ``batch``: the queries are some of an evaluation's (the Spark engine evaluates chunks of whole
    queries): either side may have no rows and no query may be left to evaluate (then the problem
    has none; its notes say why). ``duplicates="mark"``: an item twice in a query's rows or judgments is
    not refused but marked (:attr:`Problem.duplicated`), for ``ranklens trec_eval``, which stops at that
    query as trec_eval does. ``own``: the caller made ``r`` itself and builds one problem of it, so scores the
    reader copied (:attr:`Rankings.own_scores`) are rounded to the convention's precision over themselves (one
    array of a column's size less to allocate). ``fresh``: the caller made ``j`` and ``r`` itself in this call
    (read from tables), so the arrays their reader found finite (:attr:`Judgments.finite`, :attr:`Rankings.finite`)
    are not checked for NaN and infinities again.
    """
    if len(j) == 0 and not batch:
        raise InputError("the judgments are empty.")
    if len(r) == 0 and not batch and r.empty_qids is None:
        raise InputError("the rankings are empty.")
    if r.qid is None or r.item is None:
        if len(r) != len(j):
            raise InputError(
                f"the scores ({r.source or 'vector'}) have {len(r)} values but the judgments "
                f"({j.source or 'rows'}) have {len(j)} rows; a bare score vector must align row by row."
            )
        r = Rankings(j.qid, j.item, score=r.score, rank=r.rank, source=r.source, label=np.asarray(j.label, float))
    assert r.qid is not None and r.item is not None
    label_j, key = held_labels(j, conv, fresh), held_order_key(r, conv, own, fresh)  # chunks kept where they can be

    # one table holding both sides (the same id arrays, or the same memory: a table given as both): factorise
    # and check once, and the ranked rows' labels are the judgments' own, row for row
    same_rows = (j.qid is r.qid and j.item is r.item) or (
        len(j) == len(r) and same_ids(j.qid, r.qid) and same_ids(j.item, r.item))
    # query codes in order of appearance; `order` lists them by sorted id (the output order)
    by_id = conv.ties in ("item_desc", "item_asc")
    checking = None
    if same_rows:  # one conversion (object arrays of str cost a Python object each)
        cut = cut_runs([r.qid], "query ids")
        ji = ri = as_ids(r.item, "item ids", widen=False)  # Arrow strings hashed as they come, not copied
        checking = start_run_checks(ri, cut[0][1], key, by_id)  # on the kernels' threads while the ids are numbered
        (rqc,), q_all, order = number_runs(cut, "query ids")
        jqc = rqc
    else:
        parts = [j.qid, r.qid] if r.empty_qids is None else [j.qid, r.qid, r.empty_qids]
        (jqc, rqc, *eqc), q_all, order = factorize_runs(parts, "query ids")
        ji, ri = unify_ids(as_ids(j.item, "item ids"), as_ids(r.item, "item ids"))
    nj = len(jqc)
    if id_length(ji) != nj or label_j.shape[0] != nj:
        raise InputError("judgments: query ids, item ids and labels must have the same length.")
    if len(rqc) != key.shape[0] or id_length(ri) != key.shape[0]:
        raise InputError("rankings: query ids, item ids and scores must have the same length.")
    n_all = q_all.shape[0]
    q_uniques = q_all[order]

    judged = jqc.present(n_all)[order]  # in sorted order from here on
    ranked = judged if jqc is rqc else rqc.present(n_all)[order]
    if not same_rows and eqc and conv.min_items == 0:  # a declared empty list is ranked (ranx, pytrec_eval)
        ranked = ranked | eqc[0].present(n_all)[order]
    left_out = [Exclusion(reason, x.count, x.examples, keys=x.examples)
                for side, reason in ((j, ExclusionReason.MISSING_LABEL_LEFT_OUT),
                                     (r, ExclusionReason.MISSING_SCORE_LEFT_OUT))
                for x in side.left_out]
    universe, notes = _query_universe(conv, judged, ranked, q_uniques, batch)
    sel = order[universe]  # codes of the evaluated queries, in output order
    r_start, r_end, r_idx = rqc.groups(n_all, sel)  # no per-row code when each query's rows come as one run
    if jqc is rqc:
        j_start, j_end, j_idx = r_start, r_end, r_idx
    else:
        j_start, j_end, j_idx = jqc.groups(n_all, sel)

    check_sizes(conv, r_end - r_start, q_uniques[universe], ranked[universe])

    if same_rows:
        r_label = label_j
    elif r.label is not None and r.label.shape[0] == key.shape[0]:
        r_label = label_rule(np.asarray(r.label, dtype=np.float64), conv)  # same table: no join needed
    else:
        r_label = None
    # one table: its items checked for duplicates (and its scores for ties) in one pass over each query's rows
    checked = run_checks(checking, rqc, n_all, sel) if checking is not None and not r_idx.size else None
    if same_rows and checked is None:
        checked = group_checks(ri, r_start, r_end, r_idx, key, by_id)
    r_label, duplicated = _ranked_labels(j, r, ji, ri, label_j, r_label, (r_start, r_end, r_idx),
                                         (j_start, j_end, j_idx), duplicates, None if checked is None else checked[0])
    # the tie rule by item id reads item bytes only where two rows of a query have equal scores: only the rows of
    # the queries with such ties get their bytes (not a copy of every item's bytes, from Arrow's chunks)
    tied = tied_rows(r_start, r_end, r_idx, key, None if checked is None else checked[1]) if by_id else None
    order_mode, kernel_ties, item_offs, item_data = _ordering(
        conv, take_ids(ri, tied) if tied is not None and tied.size else None, r.in_ranx_order, need_items=False)
    if tied is not None and tied.size:
        item_offs = scatter_offsets(item_offs, tied, key.shape[0])
    return Problem(
        qids=q_uniques[universe],
        r_start=r_start, r_end=r_end, r_idx=r_idx, score=key, label=r_label, r_item=ri,
        j_start=j_start, j_end=j_end, j_idx=j_idx, j_label=label_j, j_item=ji,
        order_mode=order_mode, ties=kernel_ties, item_offs=item_offs, item_data=item_data,
        max_label=float(label_j.max()) if label_j.size else 0.0, notes=left_out + notes,
        by_rank=held(r, "score") is None, duplicated=duplicated if duplicates == "mark" else None,
    )


def _query_universe(conv: Convention, judged: np.ndarray, ranked: np.ndarray, q_uniques: np.ndarray,
                    batch: bool) -> tuple[np.ndarray, list[Exclusion]]:
    """The queries evaluated under the convention's query rule (a mask over the sorted query ids ``q_uniques``)
    and the exclusions that say which were left out or scored as an empty ranking."""
    notes: list[Exclusion] = []

    def note(reason: ExclusionReason, mask: np.ndarray) -> Exclusion:
        keys = tuple(q_uniques[mask][:20])
        return Exclusion(reason, int(mask.sum()), tuple(str(x) for x in keys), keys=keys)

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
        notes.append(note(ExclusionReason.RANKED_NOT_JUDGED_LEFT_OUT, only_r & ~universe))
    if (only_j & ~universe).any():
        notes.append(note(ExclusionReason.JUDGED_NOT_RANKED_LEFT_OUT, only_j & ~universe))
    if conv.missing_ranking == "error" and conv.queries != "judged" and only_j.any():
        raise InputError(
            f"convention {conv.name!r}: {int(only_j.sum())} judged queries have no ranking "
            f"({', '.join(ids(only_j)[:5])}); trec_eval 10 stops here too (use -c, i.e. queries='judged', "
            "to score them 0)."
        )
    missing = only_j & universe
    if missing.any():
        notes.append(note(ExclusionReason.JUDGED_NOT_RANKED_EMPTY, missing))
    if (only_r & universe).any():
        notes.append(note(ExclusionReason.RANKED_NOT_JUDGED_KEPT, only_r & universe))
    if not universe.any() and not batch:
        raise InputError("no query to evaluate: the judgments and the rankings have no query in common.")
    return universe, notes


def _ranked_labels(j: Judgments, r: Rankings, ji: IdArray, ri: IdArray, label_j: np.ndarray | ChunkedValues,
                   r_label: np.ndarray | ChunkedValues | None, ranked_groups: tuple[np.ndarray, np.ndarray, np.ndarray],
                   judged_groups: tuple[np.ndarray, np.ndarray, np.ndarray],
                   duplicates: str, dup: np.ndarray | None = None) -> tuple[np.ndarray | ChunkedValues, np.ndarray]:
    """The label of every ranked row, found in the judgments of its query by hash unless ``r_label`` holds them
    already (one table holding both sides), and per query whether an item is there twice in its rows or
    judgments: refused on either side with ``duplicates="error"``, marked with ``"mark"`` (``dup``: the ranked
    rows' duplicates found already, per query, by :func:`~ranklens._core.ties.group_checks`)."""
    r_start, r_end, r_idx = ranked_groups
    j_start, j_end, j_idx = judged_groups
    r_hash = hash_ids(ri) if dup is None or r_label is None else np.zeros(0, np.uint64)
    if dup is not None:
        pass
    elif narrow_strings(ri) and not (clashes(r_start, r_end, r_idx, r_hash) >= 0).any():
        dup = np.full(r_start.shape[0], -1, np.int64)  # no two equal hashes in a query: no duplicate either
    else:  # equal hashes confirmed on the ids themselves (Arrow strings kept narrow widened for it)
        dup = find_duplicates(r_start, r_end, r_idx, r_hash, *kernel_ids(ri))
    assert r.qid is not None
    if duplicates == "error":
        _dup_error(dup, r.qid, ri, r.source or "the rankings", "rows")
    duplicated = dup >= 0
    if r_label is not None:
        return r_label, duplicated
    r_is_str, r_int, r_offs, r_data = kernel_ids(ri)
    j_is_str, j_int, j_offs, j_data = kernel_ids(ji)
    j_hash = hash_items(j_is_str, j_int, j_offs, j_data)
    j_dup = find_duplicates(j_start, j_end, j_idx, j_hash, j_is_str, j_int, j_offs, j_data)
    if duplicates == "error":
        _dup_error(j_dup, j.qid, ji, j.source or "the judgments", "judgments")
    duplicated |= j_dup >= 0
    flat = label_j.flat() if isinstance(label_j, ChunkedValues) else label_j
    return lookup_labels(r_start, r_end, r_idx, r_hash, r_int, r_offs, r_data,
                         j_start, j_end, j_idx, j_hash, j_int, j_offs, j_data, flat, r_is_str), duplicated


def array_problem(query: Any, score: Any, label: Any, conv: Convention, *, item: Any = None,
                  where: str = "the arrays") -> Problem:
    """Flat arrays, one row per ranked item with its label, rows in any order -> a :class:`Problem`.

    ``query`` holds integer query codes; ``item`` (optional) item ids, needed only when the
    convention breaks ties by item id (and then checked for duplicates within a query). Every
    query is both judged and ranked; the ideal list is made of its rows' labels.
    """
    q = np.asarray(array_like(query, "`query`"))
    s = numeric(np.asarray(array_like(score, "`score`")), "`score`", where)
    lab = numeric(np.asarray(array_like(label, "`label`")), "`label`", where)
    for name, a in (("query", q), ("score", s), ("label", lab)):
        if a.ndim != 1:
            raise InputError(f"`{name}` must be a 1-D array; got shape {a.shape}.")
    if q.dtype.kind not in "iu":
        raise InputError(f"`query` must hold integer query codes; got dtype {q.dtype}.")
    if not (q.shape[0] == s.shape[0] == lab.shape[0]):
        raise InputError(f"`query`, `score` and `label` must have the same length; got {q.shape[0]}, {s.shape[0]}, "
                         f"{lab.shape[0]}.")
    if q.shape[0] == 0:
        raise InputError(f"{where} are empty.")
    it = None
    if item is not None:
        it = np.asarray(item) if not hasattr(item, "__arrow_c_array__") else item
        if len(it) != q.shape[0]:
            raise InputError(f"`item` must have one id per row ({q.shape[0]}); got {len(it)}.")
    lab = check_labels(lab, conv, where, q, it)
    key = check_order_key(s, conv, "scores", where, q, it)
    (codes,), q_all, order = factorize_runs([q], "query ids")
    start, end, idx = codes.groups(q_all.shape[0], order)
    qids = q_all[order]
    check_sizes(conv, end - start, qids, None)
    ri = as_ids(it, "item ids") if it is not None else np.zeros(0, np.int64)
    if it is not None:
        dup = find_duplicates(start, end, idx, hash_ids(ri), *kernel_ids(ri))
        _dup_error(dup, q, ri, where, "rows")
    order_mode, kernel_ties, item_offs, item_data = _ordering(conv, ri if it is not None else None)
    return Problem(
        qids=qids, r_start=start, r_end=end, r_idx=idx, score=key, label=lab, r_item=ri,
        j_start=start, j_end=end, j_idx=idx, j_label=lab, j_item=ri,
        order_mode=order_mode, ties=kernel_ties, item_offs=item_offs, item_data=item_data,
        max_label=float(lab.max()),
    )


def with_scores(problem: Problem, score: Any, conv: Convention, where: str, query: Any) -> Problem:
    """``problem`` with other scores for its rows (a training loop's new predictions, row for row as the problem
    was built): checked and at the convention's precision as :func:`array_problem` checks them (``query``: the
    rows' query codes, for messages). The kernel orders each query's rows by them."""
    key = check_order_key(np.asarray(score, dtype=np.float64), conv, "scores", where, query, None)
    if key.shape[0] != problem.score.shape[0]:
        raise InputError(f"{where}: {key.shape[0]} scores for {problem.score.shape[0]} rows.")
    return replace(problem, score=key)


def matrix_problem(label: np.ndarray, score: np.ndarray, conv: Convention) -> Problem:
    """Equal-length lists, one per row of two 2-D arrays (labels and scores), taken as they are (no check).

    Row ``q`` is query ``q``; its labels make its ideal list. For the scikit-learn drop-ins, which
    validate their inputs with scikit-learn's own messages first.
    """
    n_q, n = label.shape
    start = np.arange(n_q, dtype=np.int64) * n
    end = start + n
    no_idx = np.empty(0, np.int64)
    lab = label.reshape(-1)
    order_mode, kernel_ties, item_offs, item_data = _ordering(conv, None)
    return Problem(
        qids=np.arange(n_q, dtype=np.int64), r_start=start, r_end=end, r_idx=no_idx, score=score.reshape(-1),
        label=lab, r_item=no_idx, j_start=start, j_end=end, j_idx=no_idx, j_label=lab, j_item=no_idx,
        order_mode=order_mode, ties=kernel_ties, item_offs=item_offs, item_data=item_data,
        max_label=float(lab.max()) if lab.size else 0.0,
    )

