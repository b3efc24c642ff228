"""The measure registry: one :class:`MeasureSpec` per family, with its rules per convention.

:data:`REGISTRY` holds, per family, its spellings (ours, trec_eval's, ir_measures', ranx's), its kernel code,
whether it takes a cutoff, is graded or summed, the name trec_eval prints, and its rules per convention
(:class:`ConventionRule`: a refusal, or another definition; both classes are defined in :mod:`.spec`, the
diversity families in :mod:`.diversity`). Which families each preset's peer has is not
here: each preset declares it (:data:`ranklens._defs.presets.PEERS`, an allow-list), and :func:`rule_for`
refuses what its peer has not, naming the preset and the peer. Parsing is in :mod:`ranklens._defs.parse`; the
public names are importable from :mod:`ranklens.measures`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .._kernels import codes as K
from .conventions import Convention
from .diversity import diversity_families
from .presets import OWN as _OWN
from .presets import undeclared
from .spec import MAX_CUTOFF, NDCG_ONLY, PARAM_RANGES, ConventionRule, MeasureSpec, param_refusal

if TYPE_CHECKING:
    from .parse import Measure

# MeasureSpec, ConventionRule and the parameter ranges are defined in .spec; importable from here as before
__all__ = ["FAMILIES", "MAX_CUTOFF", "PARAM_RANGES", "REGISTRY", "ConventionRule", "MeasureSpec", "param_refusal",
           "rule_for"]


def _differs(convention: str, how: str, cutoff: bool | None = None) -> ConventionRule:
    """A refusal: the peer defines the measure differently and ranklens does not reproduce it."""
    return ConventionRule("name", convention, cutoff=cutoff, refuse=f"does not reproduce {how}; {_OWN}")


def _base() -> dict[str, MeasureSpec]:
    return {s.family: s for s in [
        MeasureSpec("ndcg", "normalised discounted cumulative gain", K.NDCG,
                    ("ndcg", "ndcg_cut"), graded=True, gain_suffix=True, trec_name="ndcg", trec_cut="ndcg_cut",
                    empty_when="no_gain", default_cutoff=True),
        MeasureSpec("dcg", "discounted cumulative gain", K.DCG, ("dcg",), graded=True, gain_suffix=True,
                    trec_name="dcg", trec_cut="dcg", empty_when="never", scored_note=False),
        MeasureSpec("idcg", "ideal discounted cumulative gain", K.IDCG, ("idcg",), graded=True, gain_suffix=True,
                    trec_name="idcg", trec_cut="idcg", empty_when="never", scored_note=False),
        MeasureSpec("map", "average precision (mean over queries: MAP)", K.AP, ("map", "ap", "map_cut"),
                    trec_name="map", trec_cut="map_cut"),
        MeasureSpec("mrr", "reciprocal rank of the first relevant item (mean: MRR)", K.RR,
                    ("mrr", "rr", "recip_rank"), trec_name="recip_rank", trec_cut="recip_rank"),
        MeasureSpec("precision", "precision: relevant items in the top k / k (without k: set_P)", K.P,
                    ("precision", "p", "prec"), trec_name="set_P", trec_cut="P"),
        MeasureSpec("recall", "recall: relevant items in the top k / relevant items (without k: set_recall)",
                    K.RECALL, ("recall", "r"), trec_name="set_recall", trec_cut="recall"),
        MeasureSpec("hit_rate", "hit rate: 1 if a relevant item is in the top k", K.HIT,
                    ("hit_rate", "hit", "success", "hitrate"), trec_name="hit_rate", trec_cut="success"),
        MeasureSpec("hits", "hits: number of relevant items in the top k (ranx; averaged over queries)",
                    K.NUM_REL_RET, ("hits",), trec_name="hits", trec_cut="hits"),
        MeasureSpec("err", "expected reciprocal rank (Chapelle et al. 2009, cascade model)", K.ERR, ("err",),
                    graded=True, trec_name="err", trec_cut="err", empty_when="no_gain"),
        MeasureSpec("r_precision", "precision at R, R = number of relevant items", K.RPREC,
                    ("r_precision", "rprec", "r-precision"), cutoff=False, trec_name="Rprec"),
        MeasureSpec("f1", "F measure of the top k (of the whole list without k: set_F): (1 + beta) P R / (beta P "
                    "+ R), beta 1 unless written", K.F_SET, ("f1", "f"), trec_name="set_F", trec_cut="f1",
                    param_name="beta", default_param=1.0),
        MeasureSpec("rbp", "rank-biased precision: (1 - p) sum of rel_i p^(i-1), persistence p (0.8 unless written)",
                    K.RBP, ("rbp",), trec_name="rbp", trec_cut="rbp", param_name="p", default_param=0.8),
        MeasureSpec("bpref", "binary preference: relevant items above the first R judged non-relevant ones",
                    K.BPREF, ("bpref",), cutoff=False, trec_name="bpref", judged_only=True),
        MeasureSpec("infap", "inferred AP (Yilmaz & Aslam), labels -1 = in the pool but not sampled", K.INFAP,
                    ("infap",), cutoff=False, trec_name="infAP", judged_only=True),
        MeasureSpec("judged", "share of judged items in the top k (unjudged: not in the judgments)", K.JUDGED,
                    ("judged",), trec_name="judged", trec_cut="judged", empty_when="never", scored_note=False,
                    judged_only=True),
        MeasureSpec("iprec", "interpolated precision at a recall level (iprec_at_recall_0.50)", K.IPREC,
                    ("iprec_at_recall", "iprec"), cutoff=False, trec_name="iprec_at_recall", param_name="recall"),
        MeasureSpec("11pt_avg", "interpolated precision averaged over the recall levels 0.0, 0.1, ... 1.0",
                    K.PT11, ("11pt_avg", "11-pt_avg", "11pt"), cutoff=False, trec_name="11pt_avg"),
        MeasureSpec("gm_map", "average precision, geometric mean over queries (of max(AP, 0.00001))", K.AP,
                    ("gm_map", "gm_ap"), cutoff=False, trec_name="gm_map", aggregate="geometric"),
        MeasureSpec("auc", "ROC AUC of the (top k) items of each list (ties 1/2), mean over lists with both "
                    "classes", K.AUC, ("auc",), trec_name="auc", trec_cut="auc", empty="skip"),
        MeasureSpec("gauc", "GroupAUC: ROC AUC per list, weighted by the list's impressions (items scored), "
                    "lists with one class left out", K.AUC, ("gauc", "groupauc", "group_auc"), trec_name="gauc",
                    trec_cut="gauc", empty="skip", weighting="impressions"),
        MeasureSpec("gm_bpref", "bpref, geometric mean over queries (of max(bpref, 0.00001))", K.BPREF,
                    ("gm_bpref",), cutoff=False, trec_name="gm_bpref", aggregate="geometric", judged_only=True),
        MeasureSpec("rprec_mult", "precision at (long)(x R + 0.9) items, x a multiple of R (1 unless written)",
                    K.RPREC_MULT, ("rprec_mult",), cutoff=False, trec_name="Rprec_mult", param_name="mult",
                    default_param=1.0),
        MeasureSpec("relative_p", "relative precision: relevant items in the top k / min(k, R) (without k: "
                    "set_relative_P, / min(items ranked, R))", K.REL_P, ("relative_p",),
                    trec_name="set_relative_P", trec_cut="relative_P"),
        MeasureSpec("set_map", "set MAP: relevant ranked items squared / (items ranked x R)", K.SET_MAP,
                    ("set_map",), cutoff=False, trec_name="set_map"),
        MeasureSpec("utility", "utility: relevant ranked items minus non-relevant ranked items (trec_eval's "
                    "default coefficients 1, -1, 0, 0)", K.UTILITY, ("utility",), cutoff=False, trec_name="utility",
                    empty_when="never"),
        MeasureSpec("bing", "binary G: 1 / log2(2 + non-relevant items above) summed over the relevant items, / R",
                    K.BING, ("bing",), cutoff=False, trec_name="binG"),
        MeasureSpec("g", "trec_eval's normalised gain G: gain / log2(2 + ideal cost - gain so far), summed, / the "
                    "ideal gain", K.G_GAIN, ("g",), cutoff=False, graded=True, trec_name="G", empty_when="no_gain"),
        MeasureSpec("ndcg_rel", "nDCG averaged at the ranks of the items of positive gain (at the list's end for "
                    "those not ranked)", K.NDCG_REL, ("ndcg_rel",), cutoff=False, graded=True, trec_name="ndcg_rel",
                    empty_when="no_gain"),
        MeasureSpec("rndcg", "nDCG averaged at the R levels (ranks where the ideal gain changes) and the list's end",
                    K.RNDCG, ("rndcg",), cutoff=False, graded=True, trec_name="Rndcg"),
        MeasureSpec("unj", "share of unjudged items (no label, or a negative one) in the top k, / k", K.UNJ, ("unj",),
                    trec_name="unj", trec_cut="unj", empty_when="never", scored_note=False, judged_only=True),
        MeasureSpec("rbp_resid", "RBP's residual: its largest rise were every unjudged item relevant (p 0.9 unless "
                    "written)", K.RBP_RESID, ("rbp_resid",), cutoff=False, trec_name="rbp_resid", empty_when="never",
                    scored_note=False, param_name="p", default_param=0.9, judged_only=True),
        MeasureSpec("num_nonrel_judged_ret", "number of ranked items judged non-relevant (summed over queries)",
                    K.NONREL_JUDGED, ("num_nonrel_judged_ret",), cutoff=False, summed=True,
                    trec_name="num_nonrel_judged_ret", empty_when="never", judged_only=True),
        MeasureSpec("num_ret", "number of ranked items (summed over queries)", K.NUM_RET, ("num_ret",), summed=True,
                    trec_name="num_ret", empty_when="never"),
        MeasureSpec("num_rel", "number of relevant items (summed over queries)", K.NUM_REL, ("num_rel",),
                    cutoff=False, summed=True, trec_name="num_rel", empty_when="never"),
        MeasureSpec("num_rel_ret", "number of relevant ranked items (summed over queries)", K.NUM_REL_RET,
                    ("num_rel_ret",), summed=True, trec_name="num_rel_ret", empty_when="never"),
    ]}


def _peer_rules(b: dict[str, MeasureSpec]) -> dict[str, tuple[ConventionRule, ...]]:
    """Per family: for the presets whose peer has it (:data:`ranklens._defs.presets.PEERS`), the peer's own
    definition when it differs from ranklens', or a refusal saying how ranklens falls short of it.

    A preset whose peer has a family and no rule here computes ranklens' definition, which is then the peer's own
    (the conformance tests check each such pair against the real peer). What a peer has not is refused by
    :func:`rule_for`, from the declaration.
    """
    # trec_eval: mrr@k is recip_rank of the run cut at k (trec_eval -M k; test_real_data checks it); P and
    # recall without a cutoff are set_P and set_recall (tests/peer_suites/test_ir_measures_suite.py: SetP, SetR)
    # XGBoost: map@k = sum of precision at the relevant ranks in the first min(k, n) / min(R, k), a group
    # without relevant item scores 1 (0 with "map-"), plain "map" is cut at 32; pre@k = hits / min(k, n); both
    # a plain weighted mean (unlike its ndcg).
    xgb_map = replace(b["map"], code=K.AP_MIN, default_cutoff=True, binary_labels=True, weighting="weighted")
    xgb_pre = replace(b["precision"], code=K.P_DEPTH, default_cutoff=True, binary_labels=True, empty=0.0,
                      weighting="weighted")
    # LightGBM map@k: / min(R, min(k, n)), a query without relevant item scores 1, weighted as it should be
    lgb_map = replace(b["map"], code=K.AP_MIN, weighting="weighted")
    # CatBoost (border 0.5: relevant = label > 0.5): PrecisionAt / min(k, n), RecallAt (1 without relevant
    # item), MAP / min(R, k') (0 without relevant item), all three ignoring group weights; MRR group-weighted
    cb_p = replace(b["precision"], code=K.P_DEPTH, empty=0.0, weighting="unweighted")
    cb_r = replace(b["recall"], empty=1.0, weighting="unweighted")
    cb_map = replace(b["map"], code=K.AP_MIN, empty=0.0, weighting="unweighted")
    cb_mrr = replace(b["mrr"], empty=0.0)
    use = ConventionRule
    # torchmetrics 1.9's RetrievalMAP, MRR, Precision, Recall (a relevant item scored 0 or less is no hit; MAP over
    # the hits in the top k), RPrecision and HitRate: binary targets, tied scores in torch's undefined order
    def tm(spec: MeasureSpec, code: int | None = None) -> MeasureSpec:
        return replace(spec, code=spec.code if code is None else code, binary_labels=True, untied_only=True,
                       positive_scores=code is not None)

    out: dict[str, tuple[ConventionRule, ...]] = {
        "ndcg": (),
        "dcg": (),
        "idcg": (),
        "map": (
            _differs("lightgbm", "LightGBM's MAP without a cutoff (LightGBM reports map@k for each k of eval_at): "
                     "write map@k", cutoff=False),
            use("name", "lightgbm", use=lgb_map),
            use("name", "xgboost", use=xgb_map),
            use("name", "catboost", use=cb_map),
            use("name", "torchmetrics", use=tm(b["map"], K.TM_AP)),
        ),
        "mrr": (
            # ir_measures' RR@k (its msmarco provider: ties by id ascending, double scores): _irmeasures.provider
            use("name", "catboost", use=cb_mrr),
            use("name", "torchmetrics", use=tm(b["mrr"], K.TM_RR)),
        ),
        "precision": (
            use("name", "xgboost", use=xgb_pre),
            use("name", "catboost", use=cb_p),
            use("name", "torchmetrics", use=tm(b["precision"], K.TM_P)),
        ),
        "recall": (
            use("name", "catboost", use=cb_r),
            use("name", "torchmetrics", use=tm(b["recall"], K.TM_RECALL)),
        ),
        "hit_rate": (use("name", "torchmetrics", use=tm(b["hit_rate"])),),
        "hits": (),
        "err": (
            # ir_measures' ERR@k is gdeval's (_irmeasures.provider); without a cutoff: _irmeasures.refusal
            _differs("catboost", "CatBoost's ERR (the raw label taken as the stopping probability)"),
            _differs("gdeval", "gdeval's ERR without a cutoff (gdeval.pl reports err@k): write err@k",
                     cutoff=False),
        ),
        "r_precision": (use("name", "torchmetrics", use=tm(b["r_precision"])),),
        **_new_rules(b),
        "num_ret": (),
        "num_rel": (),
        "num_rel_ret": (),
    }
    # ir_measures' NumRel: 0 for a judged query missing from the run (its Evaluator's default value)
    out["num_rel"] += (use("name", "ir_measures", use=replace(b["num_rel"], unranked_zero=True)),)
    return out


#: ranx writes RBP's persistence where ranklens writes a cutoff: its ``rbp.95`` is ``float("0." + "95")``
_RANX_RBP = "; ranx reads rbp.95 as persistence 0.95, written rbp(p=0.95) here"


def _ordered_only(name: str, preset: str = "trec_eval") -> ConventionRule:
    """A refusal under averaged ties: the measure's expectation over the orders of tied items is not computed."""
    return ConventionRule("ties", "average", refuse=f"averages tied items, and {name}'s expectation over the orders "
                          "of tied items is not computed: set a tie order (ties='item_desc' as trec_eval, 'item_asc' "
                          f"or 'input'), or use convention='{preset}'")


def _new_rules(b: dict[str, MeasureSpec]) -> dict[str, tuple[ConventionRule, ...]]:
    """Rules of the families added for IR researchers (#22): bpref ... GroupAUC."""
    use = ConventionRule
    return {
        # ranx counts negative labels as judged non-relevant (trec_eval: in the pool, not judged)
        "bpref": (use("name", "ranx", use=replace(b["bpref"], code=K.BPREF_NEG)),),
        "infap": (_ordered_only("infAP"),),
        # ir_measures' judged provider orders by double scores, ties by item id ascending, and divides by
        # min(k, list length)
        "judged": tuple(ConventionRule("name", "ir_measures", also=((field, value),),
                                       refuse=f"{why} as trec_eval, but ir_measures computes Judged with its judged "
                                       "provider, which orders by double scores, ties by item id ascending: add "
                                       f"ties='item_asc', score_precision='float64'; {_OWN}")
                        for field, value, why in (("ties", "item_desc", "orders ties by item id descending"),
                                                  ("score_precision", "float32", "rounds scores to float32"))),
        # trec_eval 10's rbp (m_rbp.c): persistence 0.9 unless given, graded: the label, rescaled to [0, 1] by the
        # query's largest label when above 1 (the level -l plays no part); ranx's: the label as gain (labels
        # below its level 0)
        "rbp": (_differs("ir_measures", "ir_measures' RBP (computed by cwl_eval or trectools)"),
                ConventionRule("name", "ranx", cutoff=True, refuse=f"reproduces ranx, whose rbp takes no cutoff (the "
                               f"whole list{_RANX_RBP}); {_OWN}"),
                use("name", "trec_eval10", use=replace(b["rbp"], code=K.RBP_TREC, graded=True, default_param=0.9)),
                use("name", "ranx", use=replace(b["rbp"], code=K.RBP_GAIN, graded=True))),
        "f1": (),
        # trec_eval 9 (and pytrec_eval, under ir_measures) round the level's number of relevant items up from .1
        "iprec": (use("name", "trec_eval", use=replace(b["iprec"], code=K.IPREC_V9)),
                  use("name", "ir_measures", use=replace(b["iprec"], code=K.IPREC_V9)),
                  _ordered_only("interpolated precision")),
        "11pt_avg": (use("name", "trec_eval", use=replace(b["11pt_avg"], code=K.PT11_V9)),
                     _ordered_only("11pt_avg")),
        "gm_map": (),
        "auc": (),
        "gauc": (),
        **_trec_only_rules(),
    }


def _trec_only_rules() -> dict[str, tuple[ConventionRule, ...]]:
    """Rules of trec_eval's other measures (#22: -m all_trec; the presets whose peer has them: PEERS): the ones
    read in ranked order refuse averaged ties."""
    names = {"bing": "binG", "g": "G", "ndcg_rel": "ndcg_rel", "rndcg": "Rndcg", "rbp_resid": "rbp_resid"}
    out: dict[str, tuple[ConventionRule, ...]] = {}
    for f in ("gm_bpref", "rprec_mult", "relative_p", "set_map", "utility", "bing", "g", "ndcg_rel", "rndcg", "unj",
              "rbp_resid", "num_nonrel_judged_ret"):
        out[f] = (_ordered_only(names[f], "trec_eval10" if f == "rbp_resid" else "trec_eval"),) if f in names else ()
    return out


def _registry() -> dict[str, MeasureSpec]:
    b = _base()
    rules = _peer_rules(b)
    gd_ndcg = _differs("gdeval", "gdeval's nDCG without a cutoff (gdeval.pl reports ndcg@k): write ndcg@k",
                       cutoff=False)
    out = {}
    for family, spec in b.items():
        extra = rules[family] + ((gd_ndcg,) if family == "ndcg" else ())
        tail = () if family in ("ndcg", "dcg", "idcg") else (NDCG_ONLY,)
        out[family] = replace(spec, rules=extra + tail)
    return {**out, **diversity_families()}


REGISTRY: dict[str, MeasureSpec] = _registry()


def rule_for(measure: Measure, convention: Convention) -> ConventionRule | None:
    """The rule that decides ``measure`` under ``convention`` (None: the family's own definition).

    In order: a refusal of the preset's own (its peer defines the measure otherwise, or spells it otherwise), the
    refusal derived from what the preset's peer has (:data:`ranklens.conventions.PEERS`: a pair it does not
    declare), then the family's first rule that concerns the convention (another definition, or a refusal that
    follows a field, as ties).

    Examples
    --------
    >>> from ranklens import get_convention
    >>> from ranklens.measures import parse_measure
    >>> rule_for(parse_measure("map@5")[0], get_convention("lightgbm")).use.code == REGISTRY["map"].code
    False
    >>> rule_for(parse_measure("mrr@5")[0], get_convention("lightgbm")).refuse[:40]
    'reproduces LightGBM, which has no such m'
    >>> rule_for(parse_measure("mrr@5")[0], get_convention("ranklens")) is None
    True
    """
    spec = measure.spec
    rules = [r for r in spec.rules if r.applies(convention, measure)]
    own = next((r for r in rules if r.field == "name" and r.refuse is not None), None)
    if own is not None:
        return own
    why = undeclared(convention, spec.family, measure.k is not None)
    if why is not None:
        return ConventionRule("name", convention.name, refuse=why)
    return rules[0] if rules else None

#: family -> description
FAMILIES: dict[str, str] = {f: s.description for f, s in REGISTRY.items()}
