"""trec_eval's experimental, set and cutoff measures on one query's rows in ranked order (and torchmetrics' retrieval
measures other than NDCG, :func:`torchmetrics_at`).

:func:`ranklens._kernels.fused.evaluate_queries` calls :func:`graded_more` (G, ndcg_rel, Rndcg: the rows'
gains ``g`` and the ideal gains ``ig``, descending) and :func:`binary_more` (Rprec_mult, utility,
relative_P / set_relative_P, set_map, num_nonrel_judged_ret, unj, rbp_resid, binG: the rows' labels ``sl``,
NaN for an item without judgment, negative for trec_eval's "in the pool but not judged", and ``rel``, 1.0
at the relevance level) with the local arrays of one query. Each follows trec_eval 10.0's C source (its
``m_*.c`` file, named in each docstring) on the rows in their order, written as trec_eval computes it, so
that the same floating-point operations give the same digits. The measures that count items at a depth
(Rprec_mult, utility, relative_P, set_map, num_nonrel_judged_ret, unj) take the expectation over the
orders of tied rows (:func:`ranklens._kernels.binary.rel_in_top`); the others take the rows as ordered.
"""

from __future__ import annotations

import math

from numba import njit

from .binary import ap_sum, rel_in_top, rr_at
from .codes import (
    BING,
    G_GAIN,
    NONREL_JUDGED,
    RBP_RESID,
    REL_P,
    RNDCG,
    RPREC_MULT,
    SET_MAP,
    TM_AP,
    TM_P,
    TM_RR,
    UNJ,
    UTILITY,
)

__all__ = ["any_at", "binary_more", "g_at", "graded_more", "ndcg_rel_at", "rbp_resid_at", "rndcg_at", "torchmetrics_at"]


@njit(cache=True, inline="always")
def _ideal(ig, nil, i):  # pragma: no cover - compiled
    """The ideal gain at 0-based position ``i`` (0 past the ideal list)."""
    return ig[i] if i < nil else 0.0


@njit(cache=True)
def g_at(g, ig, nil, n):  # pragma: no cover - compiled
    """trec_eval's G (``m_G.c``): sum of ``gain / log2(2 + cost - gained)`` over the rows, ``cost`` summing
    the ideal gains (at least 1 per position) and ``gained`` the rows' gains to the row, over the sum of
    the positive ideal gains (0 when there is none)."""
    results_g = 0.0
    sum_results = 0.0
    sum_cost = 0.0
    for i in range(n):
        rg = g[i]
        sum_results += rg
        ideal = _ideal(ig, nil, i)
        sum_cost += ideal if ideal >= 1.0 else 1.0
        if rg != 0.0:  # log2(1) = 0 when the rows gained a cost more than the ideal (an item twice): C's +-inf
            d = math.log2(2.0 + sum_cost - sum_results)
            results_g += rg / d if d != 0.0 else math.copysign(math.inf, rg)
    sum_ideal = 0.0
    for i in range(nil):
        if not ig[i] > 0.0:
            break
        sum_ideal += ig[i]
    return results_g / sum_ideal if sum_ideal > 0.0 else 0.0


@njit(cache=True)
def ndcg_rel_at(g, ig, nil, n):  # pragma: no cover - compiled
    """trec_eval's ndcg_rel (``m_ndcg_rel.c``): nDCG at the rank of each row of positive gain, and for each
    item of positive ideal gain not retrieved the nDCG at the end of the list, averaged over the items of
    positive ideal gain."""
    results_dcg = 0.0
    ideal_dcg = 0.0
    total = 0.0
    n_rel_ret = 0
    n_rel = 0
    ideal = _ideal(ig, nil, 0)
    i = 0
    while i < n and ideal > 0.0:
        rg = g[i]
        if rg != 0.0:
            results_dcg += rg / math.log2(i + 2.0)
        ideal = _ideal(ig, nil, i)
        if ideal > 0.0:
            n_rel += 1
            ideal_dcg += ideal / math.log2(i + 2.0)
        if rg > 0.0:
            total += results_dcg / ideal_dcg
            n_rel_ret += 1
        i += 1
    while i < n:
        rg = g[i]
        if rg != 0.0:
            results_dcg += rg / math.log2(i + 2.0)
        if rg > 0.0:
            total += results_dcg / ideal_dcg
            n_rel_ret += 1
        i += 1
    while ideal > 0.0:
        ideal = _ideal(ig, nil, i)
        if ideal > 0.0:
            n_rel += 1
            ideal_dcg += ideal / math.log2(i + 2.0)
        i += 1
    if ideal_dcg > 0.0:
        total += (n_rel - n_rel_ret) * results_dcg / ideal_dcg
    return total / n_rel if total > 0.0 else 0.0


@njit(cache=True)
def rndcg_at(g, ig, nil, n):  # pragma: no cover - compiled
    """trec_eval's Rndcg (``m_Rndcg.c``): nDCG at each rank where the ideal gain changes (the R levels) and
    at the end of the list, averaged over those points."""
    results_dcg = 0.0
    ideal_dcg = 0.0
    total = 0.0
    changes = 0
    ideal = _ideal(ig, nil, 0)
    old = ideal
    i = 0
    while i < n and ideal > 0.0:
        rg = g[i]
        ideal = _ideal(ig, nil, i)
        if old != ideal:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                changes += 1
            old = ideal
        if rg != 0.0:
            results_dcg += rg / math.log2(i + 2.0)
        if ideal > 0.0:
            ideal_dcg += ideal / math.log2(i + 2.0)
        i += 1
    if i < n:
        while i < n:
            rg = g[i]
            if rg != 0.0:
                results_dcg += rg / math.log2(i + 2.0)
            i += 1
        if ideal_dcg > 0.0:
            total += results_dcg / ideal_dcg
            changes += 1
    while ideal > 0.0:
        ideal = _ideal(ig, nil, i)
        if old != ideal:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                changes += 1
            old = ideal
        if ideal > 0.0:
            ideal_dcg += ideal / math.log2(i + 2.0)
        i += 1
    return total / changes if changes > 0 else math.nan


@njit(cache=True)
def any_at(src, ni, level):  # pragma: no cover - compiled
    """Whether one of the labels ``src[:ni]`` is at the relevance level."""
    for t in range(ni):
        if src[t] >= level:
            return True
    return False


@njit(cache=True)
def graded_more(code, g, ig, nil, n):  # pragma: no cover - compiled
    """G, ndcg_rel or Rndcg of the ``n`` rows of gains ``g`` (ideal gains ``ig[:nil]``, descending)."""
    if code == G_GAIN:
        return g_at(g, ig, nil, n)
    if code == RNDCG:
        return rndcg_at(g, ig, nil, n)
    return ndcg_rel_at(g, ig, nil, n)


@njit(cache=True)
def rbp_resid_at(sl, n, p):  # pragma: no cover - compiled
    """trec_eval's rbp_resid (``m_rbp_resid.c``): the largest rise of RBP (persistence ``p``) were every
    unjudged row (no label, or a negative one) and every item past the list relevant: ``p**n + (1 - p) *
    sum of p**(position - 1)`` over the unjudged rows; 0 when no row is unjudged."""
    unjudged = 0
    total = 0.0
    cur_p = 1.0
    for i in range(n):
        v = sl[i]
        if math.isnan(v) or v < 0.0:
            unjudged += 1
            total += cur_p
        cur_p = cur_p * p
    return cur_p + (1.0 - p) * total if unjudged > 0 else 0.0


@njit(cache=True)
def _bing(rel, n, big_r):  # pragma: no cover - compiled
    """trec_eval's binG (``m_binG.c``): ``1 / log2(2 + non-relevant rows above)`` summed over the relevant
    rows, over R."""
    total = 0.0
    nonrel = 0
    found = 0
    for i in range(n):
        if rel[i] > 0.0:
            found += 1
            total += 1.0 / math.log2(2.0 + nonrel)
        else:
            nonrel += 1
    return total / big_r if found > 0 and big_r > 0 else 0.0


@njit(cache=True)
def binary_more(code, ss, sl, rel, cut, n, k, big_r, level, param, ties):  # pragma: no cover - compiled
    """``(value, empty)`` of a binary measure of trec_eval's set and cutoff families on the ``cut`` ordered
    rows (``n`` ranked, ``k`` the cutoff, 0 for none): ``rel`` is overwritten for the counts it needs.

    Rprec_mult: precision at ``(long)(x R + 0.9)`` rows (0 at 0 rows; ``m_Rprec_mult.c``); utility:
    relevant minus non-relevant rows (``m_utility.c``'s default coefficients 1, -1, 0, 0); relative_P:
    relevant rows in the top k over ``min(k, R)`` (set_relative_P: the whole list, ``min(n, R)``); set_map:
    ``rel_ret**2 / (n R)``; num_nonrel_judged_ret: rows labelled 0 or more below the level; unj: rows
    without a label or with a negative one in the top k, over k (``m_unjudged.c``); rbp_resid; binG.
    A query without relevant item is empty for Rprec_mult, relative_P, set_map and binG.
    """
    depth = n if k <= 0 else min(k, n)
    empty = big_r == 0
    v = 0.0
    if code == RPREC_MULT:
        c = int(param * big_r + 0.9)
        if c > 0:
            v = rel_in_top(ss, rel, 0, cut, c, ties) / c
    elif code == UTILITY:
        h = rel_in_top(ss, rel, 0, cut, depth, ties)
        v = h - (depth - h)
        empty = False
    elif code == REL_P:
        denom = min(n if k <= 0 else k, big_r)
        if denom > 0:
            v = rel_in_top(ss, rel, 0, cut, depth, ties) / denom
    elif code == SET_MAP:
        if depth > 0 and big_r > 0:
            h = rel_in_top(ss, rel, 0, cut, depth, ties)
            v = h * h / (float(depth) * float(big_r))
    elif code == NONREL_JUDGED or code == UNJ:
        for t in range(cut):
            x = sl[t]
            if code == UNJ:
                rel[t] = 1.0 if (math.isnan(x) or x < 0.0) else 0.0
            else:
                rel[t] = 1.0 if (not math.isnan(x) and 0.0 <= x < level) else 0.0
        v = rel_in_top(ss, rel, 0, cut, depth, ties)
        if code == UNJ:
            denom = n if k <= 0 else k
            v = v / denom if denom > 0 else 0.0
        empty = False
    elif code == RBP_RESID:
        v = rbp_resid_at(sl, cut, param)
        empty = False
    elif code == BING:
        v = _bing(rel, cut, big_r)
    elif code >= TM_AP:
        v = torchmetrics_at(code, ss, rel, cut, n, k, big_r, ties)
    return v, empty


@njit(cache=True)
def torchmetrics_at(code, ss, rel, cut, n, k, big_r, ties):  # pragma: no cover - compiled
    """torchmetrics 1.9's retrieval_average_precision / reciprocal_rank / precision / recall of one list on the
    ``cut`` rows in order (``ss`` their scores): a relevant row scored 0 or less is no hit (their
    ``torch.where(preds > 0, target, 0)``, ``rel`` overwritten), the top ``k`` rows taken (all for ``k`` 0). AP is
    the mean of the precisions at the hits in the top k (0 without a hit: its denominator is the hits, not R);
    precision the hits over ``k`` (``n`` without a cutoff); recall the hits over ``big_r``, every relevant row of
    the list. The order of tied scores is torch's, which callers refuse (``MeasureSpec.untied_only``)."""
    for t in range(cut):
        if not ss[t] > 0.0:
            rel[t] = 0.0
    depth = n if k <= 0 else min(k, n)
    hits = rel_in_top(ss, rel, 0, cut, depth, ties)
    if code == TM_AP:
        return ap_sum(ss, rel, 0, cut, depth, ties) / hits if hits > 0 else 0.0
    if code == TM_RR:
        return rr_at(ss, rel, 0, cut, depth, ties)
    if code == TM_P:
        denom = n if k <= 0 else k
        return hits / denom if denom > 0 else 0.0
    return hits / big_r if big_r > 0 else 0.0
