"""Diversity measures over subtopic judgments, as ndeval computes them (the TREC Web track's tool, 2009-2014).

ndeval 4.5 (``ndeval.c``, read in pyndeval 0.0.8, which ir_measures runs for these measures). Per query, with
the judgments per subtopic made binary (relevant: a judgment at or above the relevance level), N the number of
subtopics with a relevant item (others are ignored), and ``c_s(r)`` the number of items relevant to subtopic s
ranked above rank r, the gain at rank r (from 1) is ``g(r) = sum over s of J(d_r, s) (1 - alpha)^c_s(r)``:

* ``alpha_dcg@k``: ``sum_{r<=k} g(r) / log2(r + 1)``, divided by the same sum of an "ideal ideal" list whose
  gain at rank r is ``N (1 - alpha)^(r-1)``; ``alpha_ndcg@k``: the run's sum divided by that of the **greedy
  ideal list** (at each rank the judged item of largest gain, ties to the larger item id; ndeval's comment: the
  exact problem is NP-complete), and 0 where the run's sum is 0.
* ``err_ia@k`` / ``nerr_ia@k``: the same with the discount ``1 / r``.
* ``nrbp``: ``(1 - (1 - alpha) beta) / N * sum_r g(r) beta^(r-1)`` over the whole list; ``nnrbp``: divided by
  the ideal list's.
* ``map_ia``: the mean over the N subtopics of the average precision of each (its relevant items counted at
  their ranks, divided by its number of relevant items), over the whole list.
* ``p_ia@k``: relevant (item, subtopic) pairs in the top k divided by ``k N`` (k also when the list is shorter);
  ``strec@k``: the share of the N subtopics with a relevant item in the top k.

ndeval computes to rank 20: cutoffs run from 1 to 20. ndeval leaves ``alpha_dcg@1`` and ``err_ia@1``
unnormalised (its normalising loop starts at rank 2), and so does this module. alpha is 0.5 unless written
(``alpha_ndcg@10(alpha=0.3)``, ``nrbp(alpha=0.3)``; it is also the greedy ideal list's), NRBP's beta 0.5 unless
written (``nrbp(alpha=0.3,beta=0.8)``, as ir_measures' ``NRBP(alpha=0.3, beta=0.8)`` and ndeval's ``-alpha`` and
``-beta``; each from 0 to 1); as in ir_measures, ERR-IA, P-IA, MAP-IA and strec take alpha 0.5. A query with no
relevant subtopic scores 0 under ndeval, except nNRBP, 0/0 = NaN: under ``convention="ndeval"`` that query's
nNRBP is NaN and left out of the mean (counted among the skipped queries; ndeval's own mean line would print
NaN); under other conventions the measures follow the convention's ``empty`` rule. Sums run in ndeval's order
(ranks ascending, subtopics in order of first appearance), so the values are ndeval's to the last bit or
nearly.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._base.runs import run_positions
from .._defs.conventions import Convention
from .._defs.parse import Measure
from .._input.factorize import factorize_parts
from .._input.ids import IdColumn, one_layout, take_ids
from .._input.options import Columns, Formats, load_inputs
from .._input.subtopics import SubtopicJudgments, read_subtopics
from .._kernels.api import greedy_ideal
from ..errors import InvalidParameterError
from .plan import empty_values, make_plan
from .problem import Problem, build_problem
from .result import Result

__all__ = ["DEPTH", "SUBTOPIC_TIES", "evaluate_subtopics", "ndeval_values"]

#: ndeval's largest cutoff (its ``DEPTH``).
DEPTH = 20
#: The tie orders the diversity measures take (ndeval orders by the run's ranks; pyndeval by score, then id).
SUBTOPIC_TIES = ("item_asc", "item_desc", "input")
_ALPHA = 0.5


def evaluate_subtopics(judgments: Any, rankings: Any, conv: Convention, ms: list[Measure], columns: Columns,
                       formats: Formats, weights_of: Callable[[np.ndarray], Any], per_query: bool) -> Result:
    """The diversity measures ``ms`` of ``rankings`` against subtopic judgments, as a :class:`Result`.

    The queries evaluated, duplicates, score precision and tie order follow the convention as for every
    measure (the judgments seen as each (query, item)'s largest judgment); the values are ndeval's.
    ``weights_of``: the per-query weights of the evaluated query ids."""
    plain = [m.key for m in ms if not m.spec.subtopics]
    if plain:
        raise InvalidParameterError(f"{', '.join(plain)}: the diversity measures read judgments per subtopic and are "
                                    "evaluated apart; ask for the others in another call.")
    plan = make_plan(conv, ms)
    if conv.ties not in SUBTOPIC_TIES:
        raise InvalidParameterError(f"convention {conv.name!r} orders ties by {conv.ties!r}; the diversity measures "
                                    f"take an order ({', '.join(SUBTOPIC_TIES)}); not {', '.join(m.key for m in ms)}.")
    for m in ms:
        _check_cutoff(m)
    kw = columns.judgments_kwargs()
    sub = read_subtopics(judgments, format=formats.judgments, query_col=kw.get("query_col"),
                         item_col=kw.get("item_col"), label_col=kw.get("label_col"))
    j, r = load_inputs(sub.judgments(), rankings, columns,
                       Formats(judgments=None, run=formats.run, groups=formats.groups, missing=formats.missing))
    problem = build_problem(j, r, conv)
    values, empties = ndeval_values(problem, r.item, sub, conv, ms)
    empty_values(plan, problem.qids, values, empties)
    return Result.build(plan, problem, values, empties, weights_of(problem.qids), per_query=per_query)


def _check_cutoff(m: Measure) -> None:
    if m.spec.cutoff and m.k is None:
        raise InvalidParameterError(f"measure {m.key!r}: ndeval computes {m.family} at a cutoff from 1 to {DEPTH}: "
                                    f"write {m.family}@{DEPTH}.")
    if m.k is not None and not 1 <= m.k <= DEPTH:
        raise InvalidParameterError(f"measure {m.key!r}: ndeval computes to rank {DEPTH}; the cutoff runs from 1 "
                                    f"to {DEPTH}.")


def _ranked_rows(problem: Problem, items: Any, ties: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every evaluated query's ranked rows in rank order: (query index, row of the rankings, 0-based rank)."""
    lengths = problem.r_end - problem.r_start
    q = np.repeat(np.arange(lengths.shape[0]), lengths)
    src = problem.r_start[q] + (np.arange(q.shape[0]) - np.repeat(np.cumsum(lengths) - lengths, lengths))
    row = problem.r_idx[src] if problem.r_idx.shape[0] else src
    if ties == "input":
        tie = row
    else:  # ids compared as strings (byte order, as strcmp and Python's str)
        col = IdColumn.of(items)
        (codes,), _, order = factorize_parts([col.values if col.is_str else col.as_strings()])
        place = np.empty(order.shape[0], np.int64)
        place[order] = np.arange(order.shape[0])
        tie = place[codes[row]] if ties == "item_asc" else -place[codes[row]]
    order = np.lexsort((tie, -problem.score[row], q))
    q, row = q[order], row[order]
    return q, row, run_positions(q)[2]


def _powers(x: float, n: int) -> np.ndarray:
    """``x**0, x**1, ...`` (n of them) by repeated multiplication, as ndeval updates its gains."""
    out = np.empty(max(n, 1), np.float64)
    acc = 1.0
    for i in range(out.shape[0]):
        out[i] = acc
        acc *= x
    return out


def _greedy(pq: np.ndarray, pdoc: np.ndarray, pplace: np.ndarray, pkey: np.ndarray, psub: np.ndarray,
            alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ndeval's greedy ideal list of every query (the kernel :func:`ranklens._kernels.api.greedy_ideal`): at each
    rank the relevant item of largest gain, ties to the larger item id. Relevant pairs: query ``pq``, item ``pdoc``
    (a code unique over queries) and the place of its id in the id order, (query, subtopic) key ``pkey`` and
    subtopic ``psub``. Returns, per placed item, its query, its 0-based rank and its gain."""
    if not pdoc.shape[0]:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    docs, first, tdoc = np.unique(pdoc, return_index=True, return_inverse=True)
    dq = pq[first]
    dorder = np.lexsort((-pplace[first], dq))  # by query, larger ids first: the first of equal gains wins
    slot = np.empty(docs.shape[0], np.int64)
    slot[dorder] = np.arange(docs.shape[0])
    tdoc, dq = slot[tdoc.reshape(-1)], dq[dorder]
    by_doc = np.lexsort((psub, tdoc))  # an item's gain adds its subtopics in their order
    tdoc, tkey = tdoc[by_doc], np.ascontiguousarray(pkey[by_doc], dtype=np.int64)
    d_start = np.zeros(docs.shape[0] + 1, np.int64)
    np.cumsum(np.bincount(tdoc, minlength=docs.shape[0]), out=d_start[1:])
    starts, counts, rank = run_positions(dq)
    q_start = np.append(starts, docs.shape[0]).astype(np.int64)
    gains = greedy_ideal(q_start, d_start, tkey, int(tkey.max()) + 1, float(alpha))
    return dq.astype(np.int64), rank.astype(np.int64), gains


def ndeval_values(problem: Problem, items: Any, sub: SubtopicJudgments, conv: Convention,
                  ms: list[Measure]) -> tuple[np.ndarray, np.ndarray]:
    """Per evaluated query (``problem.qids``) the value of each diversity measure, and where the query has no
    relevant subtopic (``empties``)."""
    n_q = problem.qids.shape[0]
    rq, row, rpos = _ranked_rows(problem, items, conv.ties)
    (sq, eq), _, _ = factorize_parts(one_layout([sub.qid, np.asarray(problem.qids)]))
    qpos = np.full(int(max(sq.max(initial=-1), eq.max(initial=-1))) + 1, -1, np.int64)
    qpos[eq] = np.arange(n_q)
    (si, ri), _, iorder = factorize_parts(one_layout([sub.item, take_ids(items, row)]))
    n_i = int(iorder.shape[0])
    iplace = np.empty(n_i, np.int64)
    iplace[iorder] = np.arange(n_i)
    rkey = rq.astype(np.int64) * n_i + ri  # sorted by query, unique within it
    rsort = np.argsort(rkey, kind="stable")
    values = np.zeros((n_q, len(ms)), np.float64)
    empties = np.zeros((n_q, len(ms)), np.bool_)
    groups: dict[tuple[float, float], list[int]] = {}
    for i, m in enumerate(ms):
        level = m.relevance_level if m.relevance_level is not None else conv.relevance_level
        groups.setdefault((_alpha(m), float(level)), []).append(i)
    for (alpha, level), cols in groups.items():
        keep = (sub.label >= level) & (qpos[sq] >= 0)
        pq, pi, ps = qpos[sq[keep]], si[keep], sub.subtopic[keep]
        n_s = int(ps.max()) + 1 if ps.shape[0] else 1
        keys, pkey = np.unique(pq * n_s + ps, return_inverse=True)
        n_sub = np.bincount(keys // n_s, minlength=n_q)  # N: the subtopics with a relevant item
        n_rel = np.bincount(pkey, minlength=keys.shape[0]).astype(np.float64)
        # the relevant pairs of ranked items
        want = pq.astype(np.int64) * n_i + pi
        at = np.minimum(np.searchsorted(rkey[rsort], want), max(rkey.shape[0] - 1, 0))
        found = rkey[rsort][at] == want if rkey.shape[0] else np.zeros(want.shape[0], np.bool_)
        prow = rsort[at[found]]
        run = _Ranked(rq, rpos, prow, pkey[found], ps[found], alpha)
        iq, ir, ig = _greedy(pq, want, iplace[pi], pkey, ps, alpha)
        by_rank = np.lexsort((ir, iq))
        iq, ir, ig = iq[by_rank], ir[by_rank], ig[by_rank]
        ideal = _Ranked(iq, ir, None, None, None, alpha, gains=ig)
        for c in cols:
            values[:, c] = _measure(ms[c], run, ideal, n_sub, n_rel, keys // n_s, n_q, alpha)
        empties[:, cols] = (n_sub == 0)[:, None]
    return values, empties


def _alpha(m: Measure) -> float:
    if m.family in ("alpha_ndcg", "alpha_dcg", "nrbp", "nnrbp") and m.param is not None:
        return float(m.param)
    return _ALPHA


class _Ranked:
    """A ranked list of every query (rows by query, then rank) with each row's gain; for the run, also its
    relevant pairs (row, (query, subtopic) key) and how many items relevant to that subtopic rank above."""

    def __init__(self, q: np.ndarray, pos: np.ndarray, prow: np.ndarray | None, pkey: np.ndarray | None,
                 psub: np.ndarray | None, alpha: float, gains: np.ndarray | None = None) -> None:
        self.q, self.pos = q, pos
        if gains is not None:
            self.g = gains
            return
        assert prow is not None and pkey is not None and psub is not None
        order = np.lexsort((pos[prow], pkey))
        seen = np.empty(order.shape[0], np.int64)
        seen[order] = run_positions(pkey[order])[2]
        pw = _powers(1.0 - alpha, int(seen.max()) + 1 if seen.shape[0] else 1)
        by_row = np.lexsort((psub, prow))  # ndeval adds a row's subtopics in their order
        self.g = np.bincount(prow[by_row], weights=pw[seen[by_row]], minlength=q.shape[0])
        self.prow, self.pkey, self.seen, self.order = prow, pkey, seen, order

    def total(self, weights: np.ndarray, n_q: int, k: int | None = None) -> np.ndarray:
        """Per query the sum over its rows (ranks below ``k``) of gain x ``weights[rank]``, rank after rank."""
        if k is None:
            return np.bincount(self.q, weights=self.g * weights[self.pos], minlength=n_q)
        keep = self.pos < k
        return np.bincount(self.q[keep], weights=self.g[keep] * weights[self.pos[keep]], minlength=n_q)


def _discounts(kind: str) -> np.ndarray:
    if kind == "dcg":  # ndeval's discount(i): log(2) / log(i + 2), 1 at the first rank
        return np.array([1.0] + [math.log(2.0) / math.log(i + 2.0) for i in range(1, DEPTH)])
    return np.array([1.0 / (i + 1) for i in range(DEPTH)])


def _ideal_ideal(n_sub: np.ndarray, disc: np.ndarray, k: int, alpha: float) -> np.ndarray:
    """ndeval's "ideal ideal" normaliser at cutoff k: sum_{i<k} N (1 - alpha)^i disc(i), added rank after rank."""
    gain = n_sub.astype(np.float64)
    total = gain * disc[0]
    for i in range(1, k):
        gain = gain * (1.0 - alpha)
        total = total + gain * disc[i]
    return total


def _measure(m: Measure, run: _Ranked, ideal: _Ranked, n_sub: np.ndarray, n_rel: np.ndarray, key_q: np.ndarray,
             n_q: int, alpha: float) -> np.ndarray:
    fam, k = m.family, m.k
    n = n_sub.astype(np.float64)
    has = n_sub > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        if fam in ("alpha_dcg", "alpha_ndcg", "err_ia", "nerr_ia"):
            assert k is not None
            dcg_disc = _discounts("dcg")
            disc = dcg_disc if fam.startswith("alpha") else _discounts("err")
            ii = _ideal_ideal(n_sub, disc, k, alpha) if k > 1 else np.ones(n_q)
            value = run.total(disc, n_q, k) / ii
            if fam in ("alpha_ndcg", "nerr_ia"):
                # set where the run's alpha-DCG@k is not 0, as ndeval does
                nonzero = run.total(dcg_disc, n_q, k) != 0
                value = np.where(nonzero, value / (ideal.total(disc, n_q, k) / ii), 0.0)
        elif fam in ("nrbp", "nnrbp"):
            longest = int(max(run.pos.max(initial=0), ideal.pos.max(initial=0))) + 1
            beta = m.option("beta")
            decay = _powers(beta, longest)
            value = run.total(decay, n_q) * ((1 - (1 - alpha) * beta) / n)
            if fam == "nnrbp":
                value = value / (ideal.total(decay, n_q) * ((1 - (1 - alpha) * beta) / n))
        elif fam == "map_ia":
            order = run.order  # pairs by (query, subtopic), then rank
            key = run.pkey[order]
            share = (run.seen[order] + 1) / (run.pos[run.prow[order]] + 1.0)
            per_sub = np.bincount(key, weights=share, minlength=n_rel.shape[0])
            value = np.bincount(key_q, weights=per_sub / n_rel, minlength=n_q) / n
        elif fam in ("p_ia", "strec"):
            assert k is not None
            top = run.pos[run.prow] < k
            if fam == "strec":
                top &= run.seen == 0
            count = np.bincount(run.q[run.prow[top]], minlength=n_q).astype(np.float64)
            value = count / (k * n_sub) if fam == "p_ia" else count / n
        else:  # pragma: no cover - the registry's subtopic families are all above
            raise InvalidParameterError(f"{m.key}: not a diversity measure")
    return np.where(has, value, 0.0)
