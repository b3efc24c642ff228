"""The named conventions (presets): each peer's choices as a :class:`~ranklens.conventions.Convention`, and
:func:`get_convention`, which finds one by name and applies field overrides.

The public face of this module is :mod:`ranklens.conventions`.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import InvalidParameterError
from .conventions import Convention

__all__ = ["CONVENTIONS", "get_convention"]

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
    ]
}


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
