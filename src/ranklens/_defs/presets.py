"""The named conventions (presets): each peer's choices as a :class:`~ranklens.conventions.Convention`, and
:func:`get_convention`, which finds one by name and applies field overrides.

The public face of this module is :mod:`ranklens.conventions`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidParameterError
from .conventions import Convention

__all__ = ["CONVENTIONS", "OWN", "PEERS", "Peer", "get_convention", "undeclared"]

#: CatBoost's default border: a label above 0.5 is relevant (the smallest double above 0.5 as a level)
_ABOVE_HALF = math.nextafter(0.5, 1.0)

_TREC9 = Convention(
    name="trec_eval",
    gain="linear",
    ties="item_desc",
    score_precision="float32",
    label_precision="int",
    ideal="judgments",
    negative_labels="zero",
    fractional_labels="error",
    empty=0.0,
    queries="intersection",
    summation="sequential",
    mirrors="trec_eval 9.0.x as run by pytrec_eval-terrier 0.5.11 (ndcg, ndcg_cut, map, P, recall, recip_rank, Rprec)",
    description="trec_eval 9.x / pytrec_eval: float32 scores, ties by item id descending, ideal from all judgments, "
    "mean over queries both judged and ranked",
)

CONVENTIONS: dict[str, Convention] = {
    c.name: c
    for c in [
        Convention(
            name="ranklens",
            mirrors="ranklens default (docs/conventions.md)",
            description="linear gain, ties averaged, ideal from all judgments, queries without relevant items "
            "skipped and reported, judged queries without a ranking score 0",
        ),
        Convention(
            name="sklearn",
            gain="linear",
            ties="average",
            ideal="ranking",
            negative_labels="error",
            empty=0.0,
            queries="ranked",
            min_items=2,
            mirrors="scikit-learn 1.9 ndcg_score / dcg_score (ignore_ties=False)",
            description="scikit-learn ndcg_score: linear gain, ties averaged, ideal from the ranked list, "
            "all-zero lists score 0",
        ),
        _TREC9,
        _TREC9.replace(
            name="trec_eval10",
            score_precision="float64",
            missing_ranking="error",
            mirrors="trec_eval 10.0 without -c",
            description="trec_eval 10.0: as trec_eval 9 but double-precision scores; a judged query "
            "missing from the run is an error",
        ),
        _TREC9.replace(
            name="ir_measures",
            queries="judged",
            mirrors="ir_measures 0.4 nDCG / nDCG@k, AP, RR, P, R (pytrec_eval provider)",
            description="ir_measures: trec_eval 9 per query, mean over every judged query (missing run = 0)",
        ),
        Convention(
            name="gdeval",
            min_items=1,
            gain="exponential",
            ties="item_desc",
            ideal="judgments",
            negative_labels="zero",
            fractional_labels="error",
            label_precision="int",
            max_label=4,
            empty=0.0,
            queries="judged",
            err_max_grade=4,
            round_per_query=5,
            mirrors="gdeval.pl (TREC Web track) via ir_measures nDCG(dcg='exp-log2')@k and ERR@k",
            description="gdeval: 2^rel-1 gain, ties by item id descending, ERR with max grade 4, "
            "per-query values rounded to 5 decimals",
        ),
        Convention(
            name="ranx",
            gain="linear",
            ties="ranx",
            label_precision="int",
            ideal="judgments",
            gain_threshold=1.0,
            negative_labels="keep",
            empty=0.0,
            queries="same",
            mirrors="ranx 0.3.21 with Qrels/Run objects (ndcg, dcg, map, mrr, precision, recall, hits, hit_rate, "
            "r-precision; ndcg_burges for 2^rel-1)",
            description="ranx: labels truncated to int, labels below 1 ignored, numba quicksort tie order",
        ),
        Convention(
            name="lightgbm",
            min_items=1,
            gain="exponential",
            ties="input",
            ideal="ranking",
            negative_labels="error",
            fractional_labels="error",
            max_label=30,
            empty=1.0,
            empty_test="ideal_nonpositive",
            queries="ranked",
            weighting="gbdt",
            max_items=10000,
            mirrors="LightGBM 4.7 ndcg@k and map@k metrics (default label_gain 2^i-1)",
            description="LightGBM: 2^rel-1 gain, ties in input order, ideal from the list, all-zero queries score 1",
        ),
        Convention(
            name="xgboost",
            min_items=1,
            gain="exponential",
            ties="input",
            score_precision="float32",
            label_precision="float32",
            ideal="ranking",
            negative_labels="error",
            fractional_labels="error",
            max_label=31,
            empty=1.0,
            empty_test="ideal_nonpositive",
            queries="ranked",
            default_cutoff=32,
            weighting="gbdt",
            clamp_mean=True,
            mirrors="XGBoost 3.2 ndcg, map, pre (@k; ndcg@k- and map@k- score empty queries 0)",
            description="XGBoost: as LightGBM but float32 scores, plain ndcg cut at 32, mean clamped at 1",
        ),
        Convention(
            name="catboost",
            min_items=1,
            gain="linear",
            ties="worst",
            label_precision="float32",
            ideal="ranking",
            negative_labels="keep",
            relevance_level=_ABOVE_HALF,
            empty=1.0,
            empty_test="ideal_nonpositive",
            queries="ranked",
            mirrors="CatBoost 1.2 NDCG (type=Base, denominator=LogPosition), DCG, PrecisionAt, RecallAt, MAP, MRR "
            "(border 0.5)",
            description="CatBoost: linear gain, float32 labels, tied items least relevant first, queries whose "
            "ideal DCG is not positive score 1",
        ),
        Convention(
            name="torchmetrics",
            min_items=1,
            gain="linear",
            ties="average",
            score_precision="float32",
            label_precision="float32",
            ideal="ranking",
            negative_labels="keep",
            empty=0.0,
            empty_test="label_sum_zero",
            queries="ranked",
            mirrors="torchmetrics 1.9 RetrievalNormalizedDCG (empty_target_action='neg'); agrees to ~1e-7",
            description="torchmetrics: scikit-learn's rule in float32; a list whose labels sum to 0 scores 0",
        ),
        Convention(
            name="evidently",
            min_items=1,
            gain="linear",
            ties="shared_rank",
            ideal="ranking",
            negative_labels="keep",
            empty="skip",
            queries="ranked",
            k_beyond_longest="error",
            mirrors="Evidently 0.7 NDCGKMetric (no_feedback_users=False; True is empty=0, empty_test='ideal_zero')",
            description="Evidently: tied items share their truncated mean rank, users without a positive "
            "label dropped",
        ),
        Convention(
            name="ndeval",
            ties="item_asc",
            negative_labels="zero",
            empty=0.0,
            queries="intersection",
            mirrors="ndeval 4.5 (TREC Web track 2009-2014) as pyndeval 0.0.8 runs it, the provider ir_measures 0.4 "
            "uses for alpha_nDCG, ERR_IA, NRBP, P_IA, AP_IA and StRecall",
            description="ndeval's diversity measures over judgments per subtopic (relevant: a judgment at or above "
            "the level), ties by item id ascending, queries both judged and ranked, no relevant subtopic = 0",
        ),
    ]
}


@dataclass(frozen=True)
class Peer:
    """What a preset's peer has: the measure families it computes, as the preset reproduces them.

    The allow-list of a preset (as an ir_measures provider declares its supported measures): a family it does not
    list, or lists only with (or only without) a cutoff, is refused under the preset with a line naming the
    preset and the peer (:func:`undeclared`). The conformance tests compare each declared pair with the peer.

    Attributes
    ----------
    name : str
        The peer, as refusals name it (``"LightGBM"``).
    measures : str
        Its ranking measures in its own words, named in refusals (``"ndcg@k and map@k"``).
    has : mapping of str to bool or None
        Family (a key of ``ranklens.measures.REGISTRY``) to ``None``: with and without a cutoff; ``True``: with
        a cutoff only; ``False``: without one only.
    names : mapping of str to str
        The peer's own name of a family, where refusals say it (``{"f1": "set_F"}``).
    """

    name: str
    measures: str
    has: Mapping[str, bool | None]
    names: Mapping[str, str] = field(default_factory=dict)


_TREC_MEASURES = ("ndcg, ndcg_cut, map, map_cut, gm_map, P, recall, recip_rank, Rprec, success, bpref, gm_bpref, "
                  "infAP, iprec_at_recall, 11pt_avg, set_P, set_recall, set_F, {}Rprec_mult, utility, binG, G, "
                  "ndcg_rel, Rndcg, relative_P, set_relative_P, set_map, {}num_*")
_TREC9_HAS: dict[str, bool | None] = {
    "ndcg": None, "map": None, "mrr": None, "precision": None, "recall": None, "hit_rate": True,
    "r_precision": False, "num_ret": False, "num_rel": False, "num_rel_ret": False, "bpref": False, "infap": False,
    "iprec": False, "11pt_avg": False, "gm_map": False, "f1": False, "gm_bpref": False, "rprec_mult": False,
    "utility": False, "bing": False, "g": False, "ndcg_rel": False, "rndcg": False, "relative_p": None,
    "set_map": False, "num_nonrel_judged_ret": False,
}
_TREC_NAMES = {"hit_rate": "success", "f1": "set_F", "rbp": "rbp", "unj": "unj"}

#: What the peer of each preset has, by preset name (None: ranklens' own definitions, every family). A preset
#: missing here reproduces NDCG only until its peer's measures are declared.
PEERS: dict[str, Peer | None] = {
    "ranklens": None,
    "sklearn": Peer("scikit-learn", "ndcg_score and dcg_score", {"ndcg": None, "dcg": None}),
    "trec_eval": Peer("trec_eval", _TREC_MEASURES.format("", ""), _TREC9_HAS, _TREC_NAMES),
    "trec_eval10": Peer("trec_eval", _TREC_MEASURES.format("rbp, rbp_resid, ", "unj, "),
                        {**_TREC9_HAS, "rbp": False, "unj": True, "rbp_resid": False}, _TREC_NAMES),
    # RR@k and ERR@k as the providers ir_measures picks for them compute them (msmarco, gdeval); Judged: its
    # judged provider; SetP(relative=True) and SetAP: its pytrec_eval provider's set_relative_P and set_map
    "ir_measures": Peer("ir_measures", "nDCG, AP, RR, P, R, Rprec, Success, Bpref, infAP, IPrec, SetP, SetR, SetF, "
                        "SetAP, Judged, NumRet, NumRel, NumRelRet",
                        {"ndcg": None, "map": None, "mrr": None, "err": True, "precision": None, "recall": None,
                         "hit_rate": True, "r_precision": False, "num_ret": False, "num_rel": False,
                         "num_rel_ret": False, "bpref": False, "infap": False, "iprec": False, "f1": False,
                         "relative_p": False, "set_map": False, "judged": None},
                        {"hit_rate": "success", "f1": "set_F", "relative_p": "SetP(relative=True)"}),
    "gdeval": Peer("gdeval", "ndcg@k and err@k", {"ndcg": True, "err": True}),
    "ranx": Peer("ranx", "ndcg, dcg, map, mrr, precision, recall, f1, hits, hit_rate, r-precision, bpref, rbp",
                 {"ndcg": None, "dcg": None, "map": None, "mrr": None, "precision": None, "recall": None,
                  "hit_rate": None, "hits": None, "r_precision": False, "bpref": False, "f1": None, "rbp": False}),
    "lightgbm": Peer("LightGBM", "ndcg@k and map@k", {"ndcg": None, "map": True}),
    "xgboost": Peer("XGBoost", "ndcg, map, pre", {"ndcg": None, "map": None, "precision": None}),
    "catboost": Peer("CatBoost", "NDCG, DCG, PrecisionAt, RecallAt, MAP, MRR",
                     {"ndcg": None, "dcg": None, "map": None, "mrr": None, "precision": None, "recall": None}),
    # on lists without mixed ties (the registry refuses the others, naming them)
    "torchmetrics": Peer("torchmetrics", "RetrievalNormalizedDCG, RetrievalMAP, RetrievalMRR, RetrievalPrecision, "
                         "RetrievalRecall, RetrievalRPrecision, RetrievalHitRate",
                         {"ndcg": None, "map": None, "mrr": None, "precision": None, "recall": None,
                          "r_precision": False, "hit_rate": None}),
    # dcg: the numerator of its NDCGKMetric (shared ranks), which explain() shows
    "evidently": Peer("Evidently", "NDCGKMetric", {"ndcg": None, "dcg": None}),
    # ndeval 4.5's diversity measures, over judgments per subtopic; k from 1 to 20 (the registry's own refusals)
    "ndeval": Peer("ndeval", "alpha-nDCG@k, alpha-DCG@k, ERR-IA@k, nERR-IA@k, NRBP, nNRBP, MAP-IA, P-IA@k, strec@k",
                   {"alpha_ndcg": True, "alpha_dcg": True, "err_ia": True, "nerr_ia": True, "nrbp": False,
                    "nnrbp": False, "map_ia": False, "p_ia": True, "strec": True}),
}

#: How a refusal says where a number is to be had.
OWN = "convention='ranklens' gives ranklens' own"


def _where(family: str) -> str:
    """Where a number of ``family`` is to be had: ranklens' own, or the preset of the one peer that defines it
    where ranklens' own needs more than its defaults (the diversity measures: ``ndeval``)."""
    only = [name for name, peer in PEERS.items() if peer is not None and family in peer.has]
    if only == ["ndeval"]:
        return "convention='ndeval' gives ndeval's"
    return OWN


def undeclared(convention: Convention, family: str, cutoff: bool) -> str | None:
    """Why the preset ``convention`` does not give ``family`` (written with a cutoff or not), or None.

    None when its peer declares the pair in :data:`PEERS`, and for a convention that is no preset (a name
    outside :data:`CONVENTIONS`: ranklens' definitions under its fields). A preset its peer's measures are not
    declared for gives NDCG only.

    Examples
    --------
    >>> undeclared(get_convention("lightgbm"), "map", cutoff=True) is None
    True
    >>> print(undeclared(get_convention("lightgbm"), "mrr", cutoff=True).replace("; ", ";\\n"))
    reproduces LightGBM, which has no such measure (it has ndcg@k and map@k);
    convention='ranklens' gives ranklens' own
    >>> print(undeclared(get_convention("trec_eval"), "f1", cutoff=True).replace("; ", ";\\n"))
    reproduces trec_eval, whose set_F takes no cutoff;
    convention='ranklens' gives ranklens' own
    """
    if convention.name not in CONVENTIONS:
        return None
    peer = PEERS.get(convention.name, Peer(convention.mirrors or convention.name, "NDCG; its other measures are "
                                           "not declared (ranklens.conventions.PEERS)", {"ndcg": None}))
    if peer is None:
        return None
    if family not in peer.has:
        return f"reproduces {peer.name}, which has no such measure (it has {peer.measures}); {_where(family)}"
    with_cut = peer.has[family]
    if with_cut is None or with_cut == cutoff:
        return None
    name = peer.names.get(family, family)
    if with_cut:
        return f"reproduces {peer.name}, whose {name} needs a cutoff: write {name}@k, or {OWN}"
    return f"reproduces {peer.name}, whose {name} takes no cutoff; {OWN}"


def get_convention(convention: str | Convention | None = None, **overrides: Any) -> Convention:
    """Return a named convention (or the given one), with optional field overrides.

    Parameters
    ----------
    convention : str, Convention or None
        A name from ``CONVENTIONS`` (``None`` means ``"ranklens"``).
    **overrides
        Fields to change, e.g. ``gain="exponential"``.

    Examples
    --------
    >>> from ranklens import get_convention
    >>> get_convention("lightgbm").gain
    'exponential'
    >>> get_convention("ranklens", empty=0).empty
    0
    """
    if convention is None:
        conv = CONVENTIONS["ranklens"]
    elif isinstance(convention, Convention):
        conv = convention
    elif isinstance(convention, str):
        key = convention.strip().lower().replace("-", "_")
        aliases = {"scikit_learn": "sklearn", "pytrec_eval": "trec_eval", "trec_eval9": "trec_eval",
                   "default": "ranklens", "lgb": "lightgbm", "xgb": "xgboost", "ir_measure": "ir_measures"}
        key = aliases.get(key, key)
        if key not in CONVENTIONS:
            raise InvalidParameterError(
                f"unknown convention {convention!r}; valid conventions: {', '.join(sorted(CONVENTIONS))}."
            )
        conv = CONVENTIONS[key]
    else:
        raise InvalidParameterError(f"`convention` must be a name or a Convention; got {type(convention).__name__}.")
    return conv.replace(**overrides) if overrides else conv
