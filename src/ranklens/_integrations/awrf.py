"""Attention-weighted rank fairness (AWRF) and the TREC Fair Ranking 2021-2022 Task 1 score.

Sapiezynski, Zeng, Robertson, Mislove, Wilson, "Quantifying the Impact of User Attention on Fair Group
Representation in Ranked Lists" (WWW 2019 companion) defines AWRF; the TREC Fair Ranking Track used it in 2021 and
2022 (Ekstrand, McDonald, Raj, Johnson: overviews of the TREC 2021 and 2022 Fair Ranking Tracks), with the public
metric code read at fair-trec/trec2021-fair-public@5e2b1d0 (``metrics.py``) and
fair-trec/trec2022-fair-public@6fd105f (``wptrec/metrics/awrf.py``); its numbers on a fixture are in
tests/data/fair-trec/SOURCE.md. Per ranking of n items:

* attention (the track's discount) ``a(r) = 1 / log2(max(r, 2))``: ranks 1 and 2 get 1;
* the ranking's group distribution ``x = sum_r a(r) w(d_r) / sum_r a(r)`` (``w(d)``: the item's weights over the
  groups; items without group labels add nothing), then normalised to sum 1;
* ``AWRF = 1 - JS(x, target)^2`` with ``JS`` the Jensen-Shannon distance in nats (``scipy.spatial.distance.
  jensenshannon``): 1 - the Jensen-Shannon divergence;
* ``nDCG``: binary relevance, the same attention as discount, the ideal the first ``min(L, |relevant|)`` ranks,
  rankings longer than L refused (L = 1000 in 2021, 500 in 2022);
* ``Score = nDCG x AWRF``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._base.runs import run_positions
from .._input.dispatch import as_judgments, as_rankings
from .._input.factorize import factorize_parts
from .._input.fairness import read_group_labels, read_targets
from .._input.ids import one_layout
from ..errors import InputError, InvalidParameterError
from .querytable import QueryTable

__all__ = ["EDITIONS", "awrf"]

#: Per edition of the track: the longest ranking, and what a ranking none of whose items has a group label gets
#: (2021: a uniform distribution, its code's fallback; 2022: no AWRF, the query left out).
EDITIONS = {2021: (1000, "uniform"), 2022: (500, "undefined")}


def _attention(r: np.ndarray) -> np.ndarray:
    return 1.0 / np.log2(np.maximum(r, 2).astype(np.float64))


def _rel_entr(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x log(x / y)``, 0 where x = 0 (scipy.special.rel_entr for x, y >= 0, y > 0 where x > 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0) / np.where(y > 0, y, 1.0)), 0.0)


def js_divergence(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Row-wise Jensen-Shannon divergence (nats) of distributions (rows normalised to sum 1 first, as scipy's
    ``jensenshannon`` does; its distance is the square root of this)."""
    p = p / p.sum(axis=1, keepdims=True)
    q = q / q.sum(axis=1, keepdims=True)
    m = (p + q) / 2.0
    return (_rel_entr(p, m).sum(axis=1) + _rel_entr(q, m).sum(axis=1)) / 2.0


def _target_matrix(target: Any, population: Any, weight: float, groups: list[str], qids: list[str],
                   relevant_mix: np.ndarray | None) -> np.ndarray:
    """The target distribution of each evaluated query over ``groups`` (rows)."""
    index = {g: i for i, g in enumerate(groups)}

    def vector(d: dict[str, float]) -> np.ndarray:
        v = np.zeros(len(groups))
        for g, s in d.items():
            v[index[g]] = s
        return v

    if relevant_mix is not None:
        t = relevant_mix
    else:
        given = read_targets(target)
        if None in given:
            t = np.tile(vector(given[None]), (len(qids), 1))
        else:
            lacking = [q for q in qids if q not in given]
            if lacking:
                raise InputError(f"the targets give no distribution for query {lacking[0]!s} ({len(lacking)} "
                                 "queries without one).")
            t = np.array([vector(given[q]) for q in qids]).reshape(len(qids), len(groups))
    if population is not None:
        pop = read_targets(population)
        if None not in pop:
            raise InvalidParameterError("`population` is one distribution {group: share} for every query.")
        pv = vector(pop[None])
        t = (1.0 - weight) * t / t.sum(axis=1, keepdims=True) + weight * pv / pv.sum()
    return t


def _notes(ranked: np.ndarray, n_rel: np.ndarray, no_label: np.ndarray, bad_target: np.ndarray) -> list[str]:
    """What AWRF leaves out, counted: queries without a relevant item or a ranking, rankings without a labelled
    item (``no_label``: where that makes AWRF undefined), targets without mass."""
    notes = []
    skipped = int((ranked & (n_rel == 0)).sum())
    if skipped:
        notes.append(f"{skipped} ranked queries without a relevant item: left out (no nDCG)")
    unranked = int(((n_rel > 0) & ~ranked).sum())
    if unranked:
        notes.append(f"{unranked} queries with relevant items but no ranking: left out")
    if no_label.any():
        notes.append(f"{int(no_label.sum())} rankings without any item with a group label: no AWRF (left out)")
    if bad_target.any():
        notes.append(f"{int(bad_target.sum())} queries whose target has no mass (no relevant item with a group "
                     "label): no AWRF")
    return notes


def awrf(judgments: Any, run: Any, groups: Any, target: Any = "relevant", *, edition: int = 2022,
         population: Any = None, population_weight: float = 0.5, relevance_level: float = 1.0,
         confidence: float = 0.95, ci: str = "bca", n_resamples: int = 10000, seed: int = 0,
         **columns: Any) -> QueryTable:
    """Attention-weighted rank fairness and the TREC Fair Ranking Task 1 score (nDCG x AWRF), per query.

    Parameters
    ----------
    judgments : path, dict, table...
        Relevance (a label at or above ``relevance_level`` is relevant).
    run : path, dict, table...
        One ranking per query (by descending score; tied items in the order given).
    groups : path or mapping
        Group labels of items (lines ``item group [weight]``, ``{item: group}``, ``{item: {group: weight}}``): the
        item's alignment vector over the groups, as the track's page alignments.
    target : "relevant", mapping or path, default="relevant"
        The target distribution over groups: ``"relevant"``, the mean alignment of the query's relevant items;
        one distribution ``{group: share}`` for every query; or one per query ``{query: {group: share}}``
        (a file of lines ``group share`` or ``query group share``).
    edition : {2021, 2022}, default=2022
        The track's year: the longest ranking (1000 / 500) and a ranking without any labelled item (uniform in
        2021's code; left out in 2022's).
    population : mapping or path, optional
        A distribution ``{group: share}`` mixed into every query's target: ``(1 - population_weight) x target +
        population_weight x population`` (the 2021 track's geographic target: the relevant items' distribution
        averaged with the world population, weight 0.5).
    population_weight : float, default=0.5
    relevance_level : float, default=1.0
    confidence, ci, n_resamples, seed
        The intervals of the means (see :class:`QueryTable`).
    **columns
        Table columns and formats of the inputs.

    Returns
    -------
    QueryTable
        ``nDCG``, ``AWRF`` and ``Score`` of every ranked query that has a relevant item, their means and intervals.

    Notes
    -----
    The track's code computes the attention in float32, so its values differ from these (float64) by about
    1e-7. Items without group labels add no attention to any group; as the distribution is normalised, it does
    not matter whether their attention stays in the denominator (2021) or not (2022).

    Examples
    --------
    >>> from ranklens.fairness import awrf
    >>> qrels = {"q": {"a": 1, "c": 1}}
    >>> run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    >>> t = awrf(qrels, run, {"a": "x", "b": "y", "c": "y"}, {"x": 0.5, "y": 0.5}, ci="percentile", n_resamples=10)
    >>> round(t.per_query_dict("AWRF")["q"], 6)  # x: attention 1, y: 1 + 1/log2(3), against 1/2, 1/2
    0.992687
    """
    if edition not in EDITIONS:
        raise InvalidParameterError(f"`edition` must be one of {', '.join(map(str, EDITIONS))}; got {edition!r}.")
    if not 0.0 <= float(population_weight) <= 1.0:
        raise InvalidParameterError(f"`population_weight` must lie in [0, 1]; got {population_weight!r}.")
    longest, unlabelled_rule = EDITIONS[edition]
    j = as_judgments(judgments, **{k: v for k, v in columns.items() if k != "score_col" and k != "rank_col"})
    r = as_rankings(run, **{k: v for k, v in columns.items() if k != "label_col"})
    if r.qid is None or r.item is None:
        raise InputError(f"{r.source or 'the run'} is a bare vector of scores: give query and item ids.")
    labels = read_group_labels(groups)
    (jq, rq), quniq, qorder = factorize_parts(one_layout([j.qid, r.qid]))
    (ji, ri, li), iuniq, _ = factorize_parts(one_layout([j.item, r.item, labels.item]))
    n_q, n_i, n_g = int(quniq.shape[0]), max(int(iuniq.shape[0]), 1), len(labels.groups)
    rel = j.label >= relevance_level
    n_rel = np.bincount(jq[rel], minlength=n_q)
    # each ranked row in order, its attention, relevance and alignment
    order = np.lexsort((-r.order_key(), rq))
    q, it = rq[order].astype(np.int64), ri[order].astype(np.int64)
    _, lengths, pos = run_positions(q)
    too_long = lengths > longest
    if too_long.any():
        first = int(np.flatnonzero(too_long)[0])
        raise InputError(f"query {quniq[q[np.cumsum(lengths)[first] - 1]]!s} ranks {int(lengths[first])} items: the "
                         f"{edition} track's rankings hold at most {longest} (cut the run first).")
    att = _attention(pos + 1)
    relkey = np.sort(jq[rel].astype(np.int64) * n_i + ji[rel])
    found = np.isin(q * n_i + it, relkey, assume_unique=False)
    dcg = np.bincount(q, weights=att * found, minlength=n_q)
    ideal_att = np.cumsum(_attention(np.arange(1, longest + 1)))
    ideal = np.where(n_rel > 0, ideal_att[np.minimum(np.maximum(n_rel, 1), longest) - 1], 0.0)
    A = np.zeros((n_i, n_g))
    np.add.at(A, (li.astype(np.int64), labels.group), labels.weight)
    labelled = np.zeros(n_i, np.bool_)
    labelled[li] = True
    x = np.zeros((n_q, n_g))
    np.add.at(x, q, att[:, None] * A[it])
    any_label = np.bincount(q, weights=labelled[it], minlength=n_q) > 0
    ranked = np.bincount(q, minlength=n_q) > 0
    evaluated = ranked & (n_rel > 0)
    sel = qorder[evaluated[qorder]]
    qids = [str(v) for v in quniq[sel].tolist()]
    mix = None
    if isinstance(target, str) and target == "relevant":
        mix = np.zeros((n_q, n_g))
        np.add.at(mix, jq[rel], A[ji[rel]])
        mix = mix[sel]
    t = _target_matrix(target, population, float(population_weight), list(labels.groups), qids, mix)
    xs = x[sel].copy()
    no_label = ~any_label[sel]
    if unlabelled_rule == "uniform":
        xs[no_label] = 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        fair = 1.0 - js_divergence(xs, t)
    if unlabelled_rule == "undefined":
        fair[no_label] = np.nan
    bad_target = ~(t.sum(axis=1) > 0)
    fair[bad_target] = np.nan
    ndcg = dcg[sel] / ideal[sel]
    values = np.column_stack([ndcg, fair, ndcg * fair])
    notes = _notes(ranked, n_rel, no_label & (unlabelled_rule == "undefined"), bad_target)
    settings = {"edition": edition, "target": target if isinstance(target, str) else "given",
                "population_weight": float(population_weight) if population is not None else None,
                "relevance_level": relevance_level, "groups": labels.source}
    return QueryTable.build(["nDCG", "AWRF", "Score"], quniq[sel], values, confidence=confidence, ci=ci,
                            n_resamples=n_resamples, seed=seed, settings=settings, notes=notes,
                            title=f"attention-weighted rank fairness (TREC Fair Ranking {edition}, Task 1)")
