"""From judgments + rankings + a convention to the flat arrays the kernels take.

Everything here is vectorised numpy: no Python loop over queries or rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._ids import factorize, is_integer_ids, to_str_ids
from ._kernels.measures import TIES_AVERAGE, TIES_NONE, TIES_SHARED_RANK
from ._kernels.order import QUICKSORT_NEG, STABLE, sort_segments
from .conventions import Convention
from .data import Judgments, Rankings
from .errors import InputError

__all__ = ["Exclusion", "Problem", "build_problem", "gains_for", "ideal_for"]


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
    """A joined, ordered evaluation problem; rows are in ranked order per query."""

    qids: np.ndarray  # ids of the evaluated queries (universe), in output order
    offsets: np.ndarray  # ranked rows per query, shape (n_q + 1,)
    score: np.ndarray  # ranked-order scores (after precision rounding)
    label: np.ndarray  # ranked-order labels, NaN = unjudged
    item: np.ndarray  # ranked-order item ids (original values)
    j_offsets: np.ndarray  # judgments per query
    j_label: np.ndarray  # judged labels per query (any order)
    j_item: np.ndarray
    ties: int  # kernel tie mode
    max_label: float  # largest judged label (for ERR)
    notes: list[Exclusion] = field(default_factory=list)
    missing_ranking: np.ndarray | None = None  # bool per query: judged, not ranked

    @property
    def n_queries(self) -> int:
        return int(self.offsets.shape[0] - 1)


def _bad_rows(mask: np.ndarray, qid: np.ndarray, item: np.ndarray | None) -> str:
    idx = np.flatnonzero(mask)[:3]
    parts = [f"query {qid[i]!s}" + (f" item {item[i]!s}" if item is not None else "") for i in idx]
    return "; ".join(parts)


def _check_labels(j: Judgments, conv: Convention) -> np.ndarray:
    label = j.label
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
    if conv.fractional_labels == "error":
        frac = label != np.trunc(label)
        if frac.any():
            raise InputError(
                f"convention {conv.name!r} accepts only integer labels; {int(frac.sum())} fractional in {where} "
                f"({_bad_rows(frac, j.qid, j.item)}, label {label[np.flatnonzero(frac)[0]]})."
            )
    if conv.max_label is not None and (label > conv.max_label).any():
        big = label > conv.max_label
        raise InputError(
            f"convention {conv.name!r} accepts labels up to {conv.max_label:g}; {int(big.sum())} larger in {where} "
            f"({_bad_rows(big, j.qid, j.item)})."
        )
    if conv.label_precision == "int":
        label = np.trunc(label)
    elif conv.label_precision == "float32":
        label = label.astype(np.float32).astype(np.float64)
    return label


def _unify(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if is_integer_ids(a) and is_integer_ids(b):
        return a.astype(np.int64, copy=False), b.astype(np.int64, copy=False)
    return to_str_ids(a), to_str_ids(b)


def _duplicates(keys: np.ndarray) -> np.ndarray:
    """Indices (into keys) of rows whose key appeared before."""
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    dup = np.zeros(keys.shape[0], dtype=bool)
    dup[order[1:]] = sk[1:] == sk[:-1]
    return dup


def build_problem(j: Judgments, r: Rankings, conv: Convention) -> Problem:
    """Join judgments and rankings under a convention; order each query's list."""
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
        r = Rankings(j.qid, j.item, score=r.score, rank=r.rank, source=r.source)
    assert r.qid is not None and r.item is not None
    label_j = _check_labels(j, conv)
    key = r.order_key()
    bad = ~np.isfinite(key)
    if bad.any():
        what = "scores" if r.score is not None else "ranks"
        raise InputError(
            f"{int(bad.sum())} {what} in {r.source or 'the rankings'} are NaN or infinite "
            f"({_bad_rows(bad, r.qid, r.item)})."
        )
    if conv.score_precision == "float32":
        key = key.astype(np.float32).astype(np.float64)

    jq, rq = _unify(j.qid, r.qid)
    ji, ri = _unify(j.item, r.item)
    nj = jq.shape[0]
    q_codes, q_uniques = factorize(np.concatenate([jq, rq]))
    i_codes, _ = factorize(np.concatenate([ji, ri]))
    n_items = int(i_codes.max()) + 1
    jqc, rqc = q_codes[:nj], q_codes[nj:]
    jic, ric = i_codes[:nj], i_codes[nj:]
    n_all = q_uniques.shape[0]

    jkey = jqc * n_items + jic
    rkey = rqc * n_items + ric
    dup = _duplicates(jkey)
    if dup.any():
        raise InputError(
            f"{int(dup.sum())} duplicate (query, item) judgments in {j.source or 'the judgments'} "
            f"({_bad_rows(dup, jq, ji)}); each item may be judged once per query."
        )
    dup = _duplicates(rkey)
    if dup.any():
        raise InputError(
            f"{int(dup.sum())} duplicate (query, item) rows in {r.source or 'the rankings'} "
            f"({_bad_rows(dup, rq, ri)}); each item may appear once in a query's ranking."
        )

    judged = np.bincount(jqc, minlength=n_all) > 0
    ranked = np.bincount(rqc, minlength=n_all) > 0
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
    if not universe.any():
        raise InputError("no query to evaluate: the judgments and the rankings have no query in common.")

    # dense universe index for every query code (-1 outside)
    uidx = np.full(n_all, -1, dtype=np.int64)
    uidx[universe] = np.arange(int(universe.sum()), dtype=np.int64)
    n_q = int(universe.sum())

    # ranked rows: label lookup
    order_j = np.argsort(jkey, kind="stable")
    sk = jkey[order_j]
    pos = np.searchsorted(sk, rkey)
    pos_c = np.minimum(pos, sk.shape[0] - 1)
    hit = sk[pos_c] == rkey
    r_label = np.where(hit, label_j[order_j[pos_c]], np.nan)

    # keep rows of queries in the universe, grouped by query, input order kept
    ru = uidx[rqc]
    keep = ru >= 0
    rows = np.flatnonzero(keep)
    rows = rows[np.argsort(ru[rows], kind="stable")]
    counts = np.bincount(ru[rows], minlength=n_q)
    offsets = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])

    if conv.max_items is not None and counts.max() > conv.max_items:
        big = np.flatnonzero(counts > conv.max_items)
        raise InputError(
            f"convention {conv.name!r} accepts at most {conv.max_items} items per query; "
            f"query {q_uniques[universe][big[0]]} has {counts[big[0]]}."
        )
    if conv.min_items > 1:
        small = (counts < conv.min_items) & ranked[universe]
        if small.any():
            raise InputError(
                f"convention {conv.name!r} needs at least {conv.min_items} items per ranked list "
                f"(scikit-learn: 'Computing NDCG is only meaningful when there is more than 1 document'); "
                f"query {q_uniques[universe][np.flatnonzero(small)[0]]} has {counts[np.flatnonzero(small)[0]]}."
            )

    g_score = key[rows]
    g_label = r_label[rows]
    g_item_code = ric[rows]

    # tie handling -> kernel inputs
    ties = conv.ties
    mode = STABLE
    use_key = False
    tie_key = np.zeros(1, dtype=np.float64)
    kernel_ties = TIES_NONE
    if ties == "average":
        kernel_ties = TIES_AVERAGE
    elif ties == "shared_rank":
        kernel_ties = TIES_SHARED_RANK
    elif ties in ("item_desc", "item_asc"):
        if is_integer_ids(ri):  # trec_eval compares ids as strings: "10" < "9"
            g_item_code, _ = factorize(to_str_ids(ri[rows]))
        code = g_item_code.astype(np.float64)
        use_key, tie_key = True, (-code if ties == "item_desc" else code)
    elif ties in ("worst", "best"):
        lab = np.where(np.isnan(g_label), 0.0, g_label)
        use_key, tie_key = True, (lab if ties == "worst" else -lab)
    elif ties == "ranx":
        mode = QUICKSORT_NEG
    perm = sort_segments(offsets, g_score, tie_key if use_key else g_score, use_key, mode)

    # judgments of universe queries, grouped
    ju = uidx[jqc]
    jrows = np.flatnonzero(ju >= 0)
    jrows = jrows[np.argsort(ju[jrows], kind="stable")]
    jcounts = np.bincount(ju[jrows], minlength=n_q)
    j_offsets = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(jcounts, out=j_offsets[1:])

    orig_items = r.item[rows][perm]
    return Problem(
        qids=q_uniques[universe],
        offsets=offsets,
        score=g_score[perm],
        label=g_label[perm],
        item=orig_items,
        j_offsets=j_offsets,
        j_label=label_j[jrows],
        j_item=j.item[jrows],
        ties=kernel_ties,
        max_label=float(label_j.max()),
        notes=notes,
        missing_ranking=missing[universe],
    )


def gains_for(label: np.ndarray, conv: Convention, gain: object) -> np.ndarray:
    """Gain of each label (NaN = unjudged -> 0) under the convention's label rules."""
    lab = np.where(np.isnan(label), 0.0, label)
    if conv.negative_labels == "zero":
        lab = np.maximum(lab, 0.0)
    if conv.gain_threshold is not None:
        lab = np.where(lab >= conv.gain_threshold, lab, 0.0)
    if gain == "linear":
        return lab
    if gain == "exponential":
        return np.exp2(lab) - 1.0
    mapping = dict(gain)  # type: ignore[call-overload]
    keys = np.array(sorted(mapping), dtype=np.float64)
    vals = np.array([mapping[k] for k in sorted(mapping)], dtype=np.float64)
    out = lab.copy()
    if keys.size:
        pos = np.clip(np.searchsorted(keys, lab), 0, keys.size - 1)
        found = keys[pos] == lab
        out[found] = vals[pos[found]]
    # unjudged items, and negative labels under negative_labels="zero", gain nothing whatever the
    # mapping says of level 0 (trec_eval: not in the qrels / not judged -> gain 0)
    out[np.isnan(label)] = 0.0
    if conv.negative_labels == "zero":
        out[label < 0] = 0.0
    return out


def ideal_for(
    p: Problem, conv: Convention, gain: object, level: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Ideal gains (descending per query) with offsets, relevant counts and label sums."""
    if conv.ideal == "judgments":
        offs, labels = p.j_offsets, p.j_label
    else:
        offs, labels = p.offsets, p.label
    g = gains_for(labels, conv, gain)
    n_q = p.n_queries
    qidx = np.repeat(np.arange(n_q, dtype=np.int64), np.diff(offs))
    order = np.lexsort((-g, qidx))
    ideal = g[order]
    lab0 = np.where(np.isnan(labels), 0.0, labels)
    rel = (lab0 >= level).astype(np.int64)
    n_rel = np.bincount(qidx, weights=rel, minlength=n_q).astype(np.int64)
    label_sum = np.bincount(qidx, weights=lab0, minlength=n_q)
    return ideal, offs, n_rel, label_sum
