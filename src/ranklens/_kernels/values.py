"""One query's value of one measure, from its rows in ranked order: each family's arithmetic in its own inline
function, called by code from :func:`graded_value` (the DCG family, ERR, trec_eval's gain measures) and
:func:`binary_value` (the measures of a relevance level). :func:`ranklens._kernels.fused.evaluate_queries`
orders the rows once per query and calls one of the two per measure.

The codes are :data:`ranklens._kernels.codes.MEASURES` (``GRADED`` and ``BINARY``), the codes the measure
registry uses (``tests/test_registry.py`` checks the two sets are one); ``api.evaluate_queries`` refuses any
other code before the kernel runs. The arrays are one query's (see :mod:`ranklens._kernels.positions`): ``ss``
the ordered rows' scores, ``sl`` their labels (NaN: not judged), ``g`` their gains, ``rel`` 1.0 at the relevance
level, ``ig`` the ideal gains descending, ``src`` the labels the ideal list is made of; ``cut`` rows ordered of
``n`` ranked, ``k`` the cutoff (0: none), ``depth`` the rows it reaches.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .binary import ap_sum, auc_at, hit_at, rel_in_top, rr_at
from .codes import (
    AP,
    AP_MIN,
    AUC,
    BPREF,
    BPREF_NEG,
    DCG,
    ERR,
    F_SET,
    G_GAIN,
    GAIN_EXP,
    GAIN_LINEAR,
    HIT,
    IDCG,
    INFAP,
    IPREC,
    IPREC_V9,
    JUDGED,
    NDCG,
    NUM_REL,
    NUM_REL_RET,
    NUM_RET,
    P_DEPTH,
    PT11,
    PT11_V9,
    RBP,
    RBP_GAIN,
    RBP_TREC,
    RECALL,
    RNDCG,
    RPREC,
    RR,
    TIES_NONE,
    P,
)
from .graded import dcg_at, err_at, idcg_at, rbp_at
from .trec import bpref_sum, infap_sum, iprec_at, pt11_at
from .trec_more import any_at, binary_more, graded_more

__all__ = ["binary_value", "graded_value", "is_graded", "label_gain"]


@njit(cache=True, inline="always")
def label_gain(lab, kind, neg_zero, thr, map_keys, map_vals):  # pragma: no cover - compiled
    """The gain of a label (0 for NaN, and for a negative label when ``neg_zero``; labels below ``thr`` 0)."""
    if math.isnan(lab):
        return 0.0
    if lab < 0.0 and neg_zero:
        return 0.0
    if lab < thr:
        lab = 0.0
    if kind == GAIN_LINEAR:
        return lab
    if kind == GAIN_EXP:
        return 2.0**lab - 1.0
    p = np.searchsorted(map_keys, lab)
    if p < map_keys.shape[0] and map_keys[p] == lab:
        return map_vals[p]
    return lab


@njit(cache=True, inline="always")
def is_graded(code):  # pragma: no cover - compiled
    """Whether :func:`graded_value` computes the measure ``code`` (codes.GRADED)."""
    return code == DCG or code == IDCG or code == NDCG or code == ERR or G_GAIN <= code <= RNDCG


# -- the graded families -------------------------------------------------------------------------------------

@njit(cache=True, inline="always")
def _ndcg(ss, g, ig, cut, depth, nil, ikd, ties, disc, empty_mode, positive):  # pragma: no cover - compiled
    """NDCG, and whether the query is empty under ``empty_mode`` (2 / 3: ideal DCG 0 / not above 0)."""
    v = 0.0
    idcg = idcg_at(ig, 0, nil, ikd, disc)
    if idcg != 0.0:
        v = dcg_at(ss, g, 0, cut, depth, ties, disc) / idcg
    if empty_mode == 2:
        return v, idcg == 0.0
    if empty_mode == 3:
        return v, not idcg > 0.0
    return v, not positive


@njit(cache=True, inline="always")
def _err(ss, sl, rel, cut, depth, ties, err_denom):  # pragma: no cover - compiled
    """ERR: stopping probabilities ``(2**label - 1) / err_denom`` in ``rel``; shared ranks taken in order."""
    for t in range(cut):
        lab = 0.0 if math.isnan(sl[t]) else max(sl[t], 0.0)
        rel[t] = (2.0**lab - 1.0) / err_denom
    return err_at(ss, rel, 0, cut, depth, ties if ties != 2 else TIES_NONE)


@njit(cache=True)
def graded_value(code, k, n, ss, sl, g, ig, nil, rel, src, ni, cut, ties, disc, empty_mode, err_denom,
                 level):  # pragma: no cover - compiled
    """``(value, empty)`` of a graded measure (``g`` and ``ig`` computed for its gain)."""
    depth = n if k <= 0 else min(k, n)
    ikd = nil if k <= 0 else min(k, nil)
    positive = nil > 0 and ig[0] > 0.0
    if code == DCG:
        return dcg_at(ss, g, 0, cut, depth, ties, disc), False
    if code == IDCG:
        return idcg_at(ig, 0, nil, ikd, disc), False
    if code == NDCG:
        return _ndcg(ss, g, ig, cut, depth, nil, ikd, ties, disc, empty_mode, positive)
    if code == ERR:
        return _err(ss, sl, rel, cut, depth, ties, err_denom), not positive
    # trec_eval's G, ndcg_rel, Rndcg (Rndcg: also empty without an item at the level)
    return graded_more(code, g, ig, nil, cut), not positive or (code == RNDCG and not any_at(src, ni, level))


# -- the families of a relevance level ---------------------------------------------------------------------

@njit(cache=True, inline="always")
def _share(ss, rel, cut, depth, denom, ties):  # pragma: no cover - compiled
    """Relevant rows in the top ``depth`` over ``denom`` (precision, recall, R-precision, Judged); 0 at 0."""
    if denom > 0:
        return rel_in_top(ss, rel, 0, cut, depth, ties) / denom
    return 0.0


@njit(cache=True, inline="always")
def _ap(ss, rel, cut, depth, big_r, ties, by_depth):  # pragma: no cover - compiled
    """Average precision over R, or (``by_depth``: XGBoost, LightGBM, CatBoost) over min(R, depth)."""
    if by_depth:
        if big_r > 0 and depth > 0:
            return ap_sum(ss, rel, 0, cut, depth, ties) / min(big_r, depth)
        return 0.0
    if big_r > 0:
        return ap_sum(ss, rel, 0, cut, depth, ties) / big_r
    return 0.0


@njit(cache=True, inline="always")
def _judged(ss, sl, rel, cut, depth, ties):  # pragma: no cover - compiled
    """Share of judged rows in the top ``depth`` (``rel`` overwritten: 1.0 for a judged row)."""
    for t in range(cut):
        rel[t] = 0.0 if math.isnan(sl[t]) else 1.0
    return _share(ss, rel, cut, depth, depth, ties)


@njit(cache=True, inline="always")
def _rbp_trec(ss, sl, g, src, ni, cut, depth, ties, p):  # pragma: no cover - compiled
    """trec_eval 10's rbp: the label over the query's largest label when above 1 as gain (``g`` overwritten)."""
    top_label = 1.0
    for t in range(ni):
        top_label = max(top_label, src[t])
    for t in range(cut):
        g[t] = 0.0 if math.isnan(sl[t]) else max(sl[t], 0.0) / top_label
    return rbp_at(ss, g, 0, cut, depth, ties, p)


@njit(cache=True, inline="always")
def _f_set(ss, rel, cut, depth, denom, big_r, ties, x):  # pragma: no cover - compiled
    """trec_eval's F measure ``(x + 1) P R / (x P + R)`` of the top ``depth`` rows (P over ``denom``)."""
    if big_r > 0 and denom > 0:
        h = rel_in_top(ss, rel, 0, cut, depth, ties)
        if h > 0.0:
            pr = h / denom
            rc = h / big_r
            return (x + 1.0) * pr * rc / (x * pr + rc)
    return 0.0


@njit(cache=True, inline="always")
def _bpref(ss, sl, src, ni, cut, ties, level, big_r, ideal_judged, neg_j):  # pragma: no cover - compiled
    """bpref (``neg_j``: ranx's, negative labels judged non-relevant)."""
    n_nonrel = 0
    if ideal_judged:
        for t in range(ni):
            if src[t] < level and (src[t] >= 0.0 or neg_j):
                n_nonrel += 1
    else:
        for t in range(cut):
            if not math.isnan(sl[t]) and sl[t] < level and (sl[t] >= 0.0 or neg_j):
                n_nonrel += 1
    v = 0.0
    if big_r > 0:
        v = bpref_sum(ss, sl, 0, cut, ties, level, big_r, n_nonrel, neg_j) / big_r
        if neg_j and n_nonrel == 0 and v > 0.0:
            # ranx divides by min(R, N) = 0: 0 / 0 for a relevant item retrieved
            v = math.nan
    return v


@njit(cache=True, inline="always")
def _relevant(sl, rel, src, ni, cut, level):  # pragma: no cover - compiled
    """``rel`` of the ordered rows at the relevance level, and R: the relevant labels of the ideal list's source."""
    for t in range(cut):
        rel[t] = 1.0 if (not math.isnan(sl[t]) and sl[t] >= level) else 0.0
    big_r = 0
    for t in range(ni):
        if src[t] >= level:
            big_r += 1
    return big_r


@njit(cache=True)
def binary_value(code, k, n, ss, sl, g, rel, src, ni, cut, ties, level, param, kind, neg_zero, gain_thr,
                 map_keys, map_vals, ideal_judged):  # pragma: no cover - compiled
    """``(value, empty, gains_overwritten)`` of a measure of a relevance level; ``gains_overwritten``: ``g`` was
    used for the measure's own gains (RBP's), so the DCG family's must be computed again."""
    depth = n if k <= 0 else min(k, n)
    big_r = _relevant(sl, rel, src, ni, cut, level)
    empty = big_r == 0
    if code == P:
        return _share(ss, rel, cut, depth, n if k <= 0 else k, ties), empty, False
    if code == P_DEPTH:
        return _share(ss, rel, cut, depth, depth, ties), empty, False
    if code == RECALL:
        return _share(ss, rel, cut, depth, big_r, ties), empty, False
    if code == RPREC:
        return _share(ss, rel, cut, min(big_r, n), big_r, ties), empty, False
    if code == HIT:
        return hit_at(ss, rel, 0, cut, depth, ties), empty, False
    if code == RR:
        return rr_at(ss, rel, 0, cut, depth, ties), empty, False
    if code == AP or code == AP_MIN:
        return _ap(ss, rel, cut, depth, big_r, ties, code == AP_MIN), empty, False
    if code == NUM_RET:
        return float(depth), False, False
    if code == NUM_REL:
        return float(big_r), False, False
    if code == NUM_REL_RET:
        return rel_in_top(ss, rel, 0, cut, depth, ties), False, False
    if code == JUDGED:
        return _judged(ss, sl, rel, cut, depth, ties), False, False
    if code == RBP:
        return rbp_at(ss, rel, 0, cut, depth, ties, param), empty, False
    if code == RBP_GAIN:
        for t in range(cut):
            g[t] = label_gain(sl[t], kind, neg_zero, gain_thr, map_keys, map_vals)
        return rbp_at(ss, g, 0, cut, depth, ties, param), empty, True
    if code == RBP_TREC:  # graded: trec_eval computes it whatever the relevance level
        return _rbp_trec(ss, sl, g, src, ni, cut, depth, ties, param), False, True
    if code == F_SET:
        return _f_set(ss, rel, cut, depth, n if k <= 0 else k, big_r, ties, param), empty, False
    if code == BPREF or code == BPREF_NEG:
        return _bpref(ss, sl, src, ni, cut, ties, level, big_r, ideal_judged, code == BPREF_NEG), empty, False
    if code == INFAP:
        return (infap_sum(sl, 0, cut, level) / big_r if big_r > 0 else 0.0), empty, False
    if code == IPREC or code == IPREC_V9:
        return iprec_at(rel, 0, cut, param, big_r, code == IPREC_V9), empty, False
    if code == PT11 or code == PT11_V9:
        return pt11_at(rel, 0, cut, big_r, code == PT11_V9), empty, False
    if code == AUC:
        v, defined = auc_at(ss, rel, 0, cut, depth, ties)
        return v, not defined, False
    # trec_eval's set and cutoff measures, rbp_resid, binG, torchmetrics' (codes.BINARY: api refuses others)
    v, empty = binary_more(code, ss, sl, rel, cut, n, k, big_r, level, param, ties)
    return v, empty, False
