"""Each convention preset against the real peer library, run here on generated inputs.

Every expected number below is computed by the peer inside the test (see ``_peers.py``); the only
arithmetic done on the test side is averaging per-query values for peers that return per-query
values and leave the mean to the caller (pytrec_eval, scikit-learn on lists of different lengths),
and a few expectations written out from the definition (marked as such).

Inputs come from ``_gen.py`` (fixed seeds): ties, float32-only ties, all-zero queries, single items,
k beyond the list, judged items missing from the ranking, negative and fractional labels, lists
longer than 15 (ranx's quicksort) and 32 (XGBoost's default cutoff), per-query weights.
"""

from __future__ import annotations

import numpy as np
import pytest

import ranklens
from _gen import SEED, Query, f32_tie_only, has_exact_tie, judged_cases, list_cases, long_table, qrels_dict, run_dict
from _peers import (
    EVIDENTLY_PYTHON,
    EvidentlyEnvMissing,
    catboost_eval,
    evidently_eval,
    evidently_eval_many,
    ir_measures_calc,
    lightgbm_eval,
    pytrec_eval,
    ranx_calc,
    sklearn_per_query,
    torchmetrics_eval,
    xgboost_eval,
)

pytestmark = pytest.mark.peer

TOL = 1e-9
TOL_F32 = 1e-6  # torchmetrics computes in float32


# -- helpers ---------------------------------------------------------------------------------------

def close(ours: dict, theirs: dict, what: str, tol: float | dict[str, float] = TOL) -> None:
    """Same query set, and every per-query value within ``tol`` (one for all, or one per query)."""
    assert theirs, f"{what}: the peer returned no per-query value"
    only_ours = sorted(set(ours) - set(theirs))
    only_theirs = sorted(set(theirs) - set(ours))
    assert not only_ours and not only_theirs, (
        f"{what}: query sets differ; only ranklens: {only_ours[:8]}, only peer: {only_theirs[:8]}")
    bad = [(q, ours[q], theirs[q]) for q in theirs
           if not abs(ours[q] - theirs[q]) <= (tol[q] if isinstance(tol, dict) else tol)]
    assert not bad, f"{what}: {len(bad)}/{len(theirs)} queries differ (query, ranklens, peer): {bad[:6]}"


def close1(ours: float, theirs: float, what: str, tol: float = TOL) -> None:
    assert abs(ours - theirs) <= tol, f"{what}: ranklens {ours!r} != peer {theirs!r}"


def differs(ours: dict, theirs: dict, tol: float = TOL) -> int:
    """Number of common queries whose values differ (used to show that a quirk is exercised)."""
    return sum(1 for q in theirs if q in ours and abs(ours[q] - theirs[q]) > tol)


def dicts(qs: list[Query]) -> tuple[dict, dict]:
    """Judgments and rankings dicts of list-style cases (every ranked item judged)."""
    j = {q.qid: {i: float(v) for i, v in zip(q.items, q.labels)} for q in qs}
    r = {q.qid: {i: float(s) for i, s in zip(q.items, q.scores)} for q in qs}
    return j, r


def weights_for(qs: list[Query], seed: int, choices=(0.25, 0.5, 1.0, 2.0, 3.0)) -> dict[str, float]:
    # dyadic weights: exact in float32, where LightGBM and XGBoost keep them
    rng = np.random.default_rng(seed)
    return {q.qid: float(rng.choice(choices)) for q in qs}


# -- the generated data really has what the suite claims -------------------------------------------

def test_generated_cases_are_rich():
    qs = list_cases(SEED, 200, negative=True, fractional=True)
    count = {
        "exact ties": sum(has_exact_tie(q.scores) for q in qs),
        "float32-only ties": sum(f32_tie_only(q.scores) for q in qs),
        "all-zero": sum(not (q.labels != 0).any() for q in qs),
        "single item": sum(q.n == 1 for q in qs),
        "ties in > 15 items": sum(q.n > 15 and has_exact_tie(q.scores) for q in qs),
        "> 32 items": sum(q.n > 32 for q in qs),
        "negative labels": sum((q.labels < 0).any() for q in qs),
        "fractional labels": sum((q.labels != np.trunc(q.labels)).any() for q in qs),
    }
    assert all(v >= 5 for v in count.values()), count
    jq = judged_cases(SEED, 200)
    jcount = {
        "judged, not ranked": sum(bool(q.extra) for q in jq),
        "ranked, not judged": sum(np.isnan(q.labels).any() for q in jq),
        "only judged": sum(not q.in_run for q in jq),
        "only ranked": sum(not q.in_qrels for q in jq),
    }
    assert all(v >= 5 for v in jcount.values()), jcount


# -- scikit-learn ----------------------------------------------------------------------------------

SK_KS = [1, 3, 5, 10, 50, None]


def _key(k, name="ndcg"):
    return name if k is None else f"{name}@{k}"


def test_sklearn_per_query_and_mean():
    qs = list_cases(SEED + 1, 200, min_len=2, fractional=True)
    j, r = dicts(qs)
    res = ranklens.evaluate(j, r, [_key(k) for k in SK_KS], convention="sklearn")
    for k in SK_KS:
        theirs = sklearn_per_query(qs, k)
        close(res.per_query_dict(_key(k)), theirs, f"sklearn ndcg_score k={k}")
        # ndcg_score's mean over rows (np.average without weights)
        close1(res[_key(k)], float(np.mean(list(theirs.values()))), f"sklearn mean k={k}")


def test_sklearn_matrix_with_sample_weight():
    from sklearn.metrics import ndcg_score

    qs = list_cases(SEED + 11, 120, fixed_len=9, fractional=True)
    y = np.array([q.labels for q in qs])
    s = np.array([q.scores for q in qs])
    w = weights_for(qs, SEED + 11, choices=(0.1, 0.5, 1.0, 2.5, 7.0))
    j, r = dicts(qs)
    res = ranklens.evaluate(j, r, [_key(k) for k in SK_KS], convention="sklearn", weights=w)
    for k in SK_KS:
        theirs = float(ndcg_score(y, s, k=k, sample_weight=[w[q.qid] for q in qs]))
        close1(res[_key(k)], theirs, f"sklearn ndcg_score(sample_weight) k={k}")


def test_sklearn_rejections_are_mirrored():
    from sklearn.metrics import ndcg_score

    neg = {"a": {"x": 1.0, "y": -1.0, "z": 0.0}}
    sc = {"a": {"x": 0.1, "y": 0.3, "z": 0.2}}
    with pytest.raises(ValueError):
        ndcg_score([[1.0, -1.0, 0.0]], [[0.1, 0.3, 0.2]])
    with pytest.raises(ranklens.InputError):
        ranklens.evaluate(neg, sc, ["ndcg@2"], convention="sklearn")
    # a single-item list
    with pytest.raises(ValueError):
        ndcg_score([[1.0]], [[0.5]])
    one = {"a": {"x": 1.0, "y": 0.0}, "b": {"x": 1.0}}
    with pytest.raises(ranklens.InputError):
        ranklens.evaluate(one, {"a": {"x": 0.2, "y": 0.1}, "b": {"x": 0.5}}, ["ndcg"], convention="sklearn")
    # NaN scores
    with pytest.raises(ValueError):
        ndcg_score([[1.0, 0.0]], [[np.nan, 0.5]])
    with pytest.raises(ranklens.InputError):
        ranklens.evaluate({"a": {"x": 1.0, "y": 0.0}}, {"a": {"x": np.nan, "y": 0.5}}, ["ndcg"], convention="sklearn")


# -- trec_eval 9.x (pytrec_eval) -------------------------------------------------------------------

TREC_MEASURES = ["ndcg", "ndcg_cut.1", "ndcg_cut.3", "ndcg_cut.5", "ndcg_cut.10", "ndcg_cut.100", "map", "map_cut.10",
                 "P.1", "P.5", "P.20", "recall.5", "recall.100", "recip_rank", "Rprec", "success.1", "success.10"]
TREC_PARAMS = {"ndcg", "ndcg_cut.1,3,5,10,100", "map", "map_cut.10", "P.1,5,20", "recall.5,100", "recip_rank",
               "Rprec", "success.1,10"}


def _pte_key(key: str) -> str:
    return key.replace(".", "_")


@pytest.fixture(scope="module")
def trec_cases():
    return judged_cases(SEED + 2, 220, negative=True)


def test_trec_eval_per_query_and_mean(trec_cases):
    qrels, run = qrels_dict(trec_cases), run_dict(trec_cases)
    theirs = pytrec_eval(qrels, run, TREC_PARAMS)
    res = ranklens.evaluate(qrels, run, TREC_MEASURES, convention="trec_eval")
    assert len(theirs) >= 150
    for key in TREC_MEASURES:
        per = {q: v[_pte_key(key)] for q, v in theirs.items()}
        close(res.per_query_dict(key), per, f"pytrec_eval {key}")
        # trec_eval's summary: mean over the queries pytrec_eval returns (judged and ranked)
        close1(res[key], float(np.mean(list(per.values()))), f"pytrec_eval mean {key}")


def test_trec_eval_float32_and_docno_ties_matter(trec_cases):
    """The data exercises trec_eval 9's float32 scores and its item-id-descending tie break."""
    qrels, run = qrels_dict(trec_cases), run_dict(trec_cases)
    per = {q: v["ndcg_cut_10"] for q, v in pytrec_eval(qrels, run, {"ndcg_cut.10"}).items()}
    as64 = ranklens.evaluate(qrels, run, ["ndcg@10"], convention="trec_eval", score_precision="float64")
    asc = ranklens.evaluate(qrels, run, ["ndcg@10"], convention="trec_eval", ties="item_asc")
    assert differs(as64.per_query_dict("ndcg@10"), per) >= 3
    assert differs(asc.per_query_dict("ndcg@10"), per) >= 3


def test_trec_eval_near_tie_probe():
    """conventions.md probe: scores (1+1e-9, 1.0), relevant first, @1 -> pytrec_eval 0 (float32 tie, docno desc)."""
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0 + 1e-9, "b": 1.0}}
    theirs = pytrec_eval(qrels, run, {"ndcg_cut.1", "P.1"})["q"]
    res = ranklens.evaluate(qrels, run, ["ndcg_cut.1", "P.1"], convention="trec_eval")
    close1(res["ndcg_cut.1"], theirs["ndcg_cut_1"], "near tie ndcg_cut.1")
    close1(res["P.1"], theirs["P_1"], "near tie P.1")


def test_trec_eval_relevance_level(trec_cases):
    """trec_eval -l2: binary measures count labels >= 2 as relevant; ndcg ignores the level."""
    import pytrec_eval as pte

    qrels, run = qrels_dict(trec_cases), run_dict(trec_cases)
    theirs = pte.RelevanceEvaluator(qrels, TREC_PARAMS, relevance_level=2).evaluate(run)
    res = ranklens.evaluate(qrels, run, TREC_MEASURES, convention="trec_eval", relevance_level=2)
    for key in TREC_MEASURES:
        per = {q: v[_pte_key(key)] for q, v in theirs.items()}
        close(res.per_query_dict(key), per, f"pytrec_eval relevance_level=2 {key}")
        close1(res[key], float(np.mean(list(per.values()))), f"pytrec_eval relevance_level=2 mean {key}")


def test_trec_eval_rejects_fractional_labels_like_pytrec_eval():
    with pytest.raises(TypeError):
        pytrec_eval({"q": {"a": 1.5}}, {"q": {"a": 1.0}}, {"ndcg"})
    with pytest.raises(ranklens.InputError):
        ranklens.evaluate({"q": {"a": 1.5}}, {"q": {"a": 1.0}}, ["ndcg"], convention="trec_eval")


# -- trec_eval 10.0 --------------------------------------------------------------------------------

def _dense_rank_run(run: dict) -> dict:
    """Replace each query's scores by their dense rank (small integers, exact in float32).

    trec_eval 10.0 differs from 9.x (pytrec_eval) only in keeping scores as doubles (trec_format.h:
    ``float sim`` -> ``double sim``); ranking by double score equals ranking by the dense rank of the
    double scores, ties (equal doubles) included, so pytrec_eval on this run computes what trec_eval 10
    computes on the original.
    """
    out = {}
    for q, docs in run.items():
        items = list(docs)
        s = np.array([docs[i] for i in items])
        dense = np.unique(s, return_inverse=True)[1].astype(float)
        out[q] = {i: float(d) for i, d in zip(items, dense)}
    return out


def test_trec_eval10_double_scores(trec_cases):
    qs = [q for q in trec_cases if q.in_run]  # trec_eval 10 stops on a judged query without a run
    qrels, run = qrels_dict(qs), run_dict(qs)
    theirs = pytrec_eval(qrels, _dense_rank_run(run), TREC_PARAMS)
    res = ranklens.evaluate(qrels, run, TREC_MEASURES, convention="trec_eval10")
    for key in TREC_MEASURES:
        per = {q: v[_pte_key(key)] for q, v in theirs.items()}
        close(res.per_query_dict(key), per, f"trec_eval10 {key}")
        close1(res[key], float(np.mean(list(per.values()))), f"trec_eval10 mean {key}")
    # and the float32 rounding of trec_eval 9 does change some of these values
    nine = ranklens.evaluate(qrels, run, ["ndcg@10"], convention="trec_eval").per_query_dict("ndcg@10")
    assert differs(nine, res.per_query_dict("ndcg_cut.10")) >= 3


def test_trec_eval10_missing_run_is_an_error():
    # trec_eval 10.0 without -c exits with status 4 when a qrels topic has no results (trec_eval.c:383-390)
    with pytest.raises(ranklens.InputError):
        ranklens.evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}}, ["ndcg"], convention="trec_eval10")


# -- ir_measures -----------------------------------------------------------------------------------

def _ir_measures_pairs():
    from ir_measures import AP, RR, P, R, Rprec, Success, nDCG

    return [("ndcg", nDCG), ("ndcg@1", nDCG @ 1), ("ndcg@3", nDCG @ 3), ("ndcg@10", nDCG @ 10),
            ("ndcg@100", nDCG @ 100), ("map", AP), ("map@10", AP @ 10), ("recip_rank", RR), ("P@1", P @ 1),
            ("P@5", P @ 5), ("recall@5", R @ 5), ("recall@100", R @ 100), ("r_precision", Rprec),
            ("hit_rate@1", Success @ 1), ("hit_rate@10", Success @ 10)]


def test_ir_measures_per_query_and_mean(trec_cases):
    qrels, run = qrels_dict(trec_cases), run_dict(trec_cases)
    pairs = _ir_measures_pairs()
    per, agg = ir_measures_calc("pytrec_eval", [m for _, m in pairs], qrels, run)
    res = ranklens.evaluate(qrels, run, [k for k, _ in pairs], convention="ir_measures")
    only_judged = {q.qid for q in trec_cases if q.in_qrels and not q.in_run}
    only_ranked = {q.qid for q in trec_cases if q.in_run and not q.in_qrels}
    assert len(only_judged) >= 5 and len(only_ranked) >= 5
    for key, m in pairs:
        # judged queries without a run are scored 0 (ir_measures fills them), ranked-only ones are ignored
        assert only_judged <= set(per[str(m)]) and not only_ranked & set(per[str(m)])
        close(res.per_query_dict(key), per[str(m)], f"ir_measures {m}")
        close1(res[key], agg[str(m)], f"ir_measures aggregate {m}")


def test_ir_measures_gains_and_rel_options(trec_cases):
    """nDCG(gains={...}) remaps the qrels labels before pytrec_eval (labels not in the mapping keep
    theirs); P/AP/R(rel=2) raise the relevance level of one measure."""
    from ir_measures import AP, RR, P, R, nDCG

    qrels, run = qrels_dict(trec_cases), run_dict(trec_cases)
    gains = {0: 1, 1: 2, 2: 5, 3: 7, 4: 15}
    g_measures = [nDCG(gains=gains), nDCG(gains=gains) @ 5, nDCG(gains=gains) @ 20]
    g_keys = ["ndcg", "ndcg@5", "ndcg@20"]
    per, agg = ir_measures_calc("pytrec_eval", g_measures, qrels, run)
    res = ranklens.evaluate(qrels, run, g_keys, convention="ir_measures", gain=gains)
    for key, m in zip(g_keys, g_measures):
        close(res.per_query_dict(key), per[str(m)], f"ir_measures {m}")
        close1(res[key], agg[str(m)], f"ir_measures aggregate {m}")
    r_measures = [P(rel=2) @ 5, AP(rel=2), R(rel=2) @ 10, RR(rel=2)]
    r_keys = ["P@5(rel=2)", "map(rel=2)", "recall@10(rel=2)", "recip_rank(rel=2)"]
    per, agg = ir_measures_calc("pytrec_eval", r_measures, qrels, run)
    res = ranklens.evaluate(qrels, run, r_keys, convention="ir_measures")
    for key, m in zip(r_keys, r_measures):
        close(res.per_query_dict(key), per[str(m)], f"ir_measures {m}")
        close1(res[key], agg[str(m)], f"ir_measures aggregate {m}")


# -- gdeval (ir_measures nDCG(dcg='exp-log2')@k and ERR@k) ------------------------------------------

GD_KS = [1, 3, 5, 10, 20]


def test_gdeval_per_query_and_mean():
    from ir_measures import ERR, nDCG

    qs = judged_cases(SEED + 3, 200, negative=True, max_label=4)
    qrels, run = qrels_dict(qs), run_dict(qs)
    measures = [nDCG(dcg="exp-log2") @ k for k in GD_KS] + [ERR @ k for k in GD_KS]
    keys = [f"ndcg@{k}" for k in GD_KS] + [f"err@{k}" for k in GD_KS]
    per, agg = ir_measures_calc("gdeval", measures, qrels, run)
    res = ranklens.evaluate(qrels, run, keys, convention="gdeval")
    only_judged = {q.qid for q in qs if q.in_qrels and not q.in_run}
    no_positive = {q.qid for q in qs if q.in_qrels and q.in_run and not any(v > 0 for v in q.judged().values())}
    assert only_judged and no_positive
    for key, m in zip(keys, measures):
        # gdeval prints nothing for a topic without a positive judgment nor for one without a run;
        # ir_measures fills both with 0
        assert all(per[str(m)][q] == 0.0 for q in only_judged | no_positive)
        close(res.per_query_dict(key), per[str(m)], f"gdeval {m}")
        close1(res[key], agg[str(m)], f"gdeval aggregate {m}")


def test_gdeval_rejects_labels_above_4():
    import subprocess

    from ir_measures import nDCG

    qrels, run = {"1": {"a": 5, "b": 0}}, {"1": {"a": 1.0, "b": 0.5}}
    with pytest.raises(subprocess.CalledProcessError):
        ir_measures_calc("gdeval", [nDCG(dcg="exp-log2") @ 5], qrels, run)
    with pytest.raises(ranklens.InputError):
        ranklens.evaluate(qrels, run, ["ndcg@5"], convention="gdeval")


# -- ranx ------------------------------------------------------------------------------------------

RANX_PAIRS = [("ndcg", "ndcg"), ("ndcg@1", "ndcg@1"), ("ndcg@3", "ndcg@3"), ("ndcg@5", "ndcg@5"),
              ("ndcg@10", "ndcg@10"), ("ndcg@100", "ndcg@100"), ("ndcg_burges", "ndcg_burges"),
              ("ndcg_burges@5", "ndcg_burges@5"), ("ndcg_burges@20", "ndcg_burges@20"), ("map", "map"),
              ("map@10", "map@10"), ("mrr", "mrr"), ("mrr@5", "mrr@5"), ("P@5", "precision@5"),
              ("P@20", "precision@20"), ("recall@10", "recall@10"), ("hit_rate@5", "hit_rate@5"),
              ("r_precision", "r-precision")]


@pytest.fixture(scope="module")
def ranx_cases():
    return judged_cases(SEED + 4, 200, negative=True, fractional=True, partial_queries=False)


@pytest.mark.slow
def test_ranx_per_query_and_mean(ranx_cases):
    qrels = qrels_dict(ranx_cases, cast=float)  # ranx's Qrels truncate labels to int itself
    run = run_dict(ranx_cases)
    per, agg = ranx_calc(qrels, run, [m for _, m in RANX_PAIRS])
    res = ranklens.evaluate(qrels, run, [k for k, _ in RANX_PAIRS], convention="ranx")
    for key, m in RANX_PAIRS:
        close(res.per_query_dict(key), per[m], f"ranx {m}")
        close1(res[key], agg[m], f"ranx aggregate {m}")


def test_ranx_quicksort_order_matters(ranx_cases):
    """Lists of > 15 tied items: ranx's Run order is numba's quicksort, not the input order."""
    qrels, run = qrels_dict(ranx_cases, cast=float), run_dict(ranx_cases)
    per, _ = ranx_calc(qrels, run, ["ndcg@10"])
    inp = ranklens.evaluate(qrels, run, ["ndcg@10"], convention="ranx", ties="input").per_query_dict("ndcg@10")
    assert differs(inp, per["ndcg@10"]) >= 3


def test_ranx_run_object_is_evaluated_in_the_order_it_keeps(ranx_cases):
    """A ranx.Run sorts its rows when it is built and ranx evaluates that order as it is: given the
    Run itself (not its dict), ranklens must not sort the ties again."""
    from ranx import Qrels, Run, evaluate

    qrels, run = qrels_dict(ranx_cases, cast=float), run_dict(ranx_cases)
    metrics = [m for _, m in RANX_PAIRS]
    r = Run.from_dict(run)
    evaluate(Qrels.from_dict(qrels), r, metrics)
    res = ranklens.evaluate(Qrels.from_dict(qrels), Run.from_dict(run), [k for k, _ in RANX_PAIRS],
                            convention="ranx")
    for key, m in RANX_PAIRS:
        close(res.per_query_dict(key), {q: float(v) for q, v in r.scores[m].items()}, f"ranx Run {m}")


@pytest.mark.slow
def test_ranx_needs_the_same_queries():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}, "q3": {"c": 1.0}}
    with pytest.raises(AssertionError):
        ranx_calc(qrels, run, ["ndcg@3"])
    with pytest.raises(ranklens.InputError):
        ranklens.evaluate(qrels, run, ["ndcg@3"], convention="ranx")
    # make_comparable is ranx's way out; ranklens's is queries="judged"
    _, agg = ranx_calc(qrels, run, ["ndcg@3"], make_comparable=True)
    res = ranklens.evaluate(qrels, run, ["ndcg@3"], convention="ranx", queries="judged")
    close1(res["ndcg@3"], agg["ndcg@3"], "ranx make_comparable")


# -- LightGBM --------------------------------------------------------------------------------------

LGB_KS = [1, 3, 5, 10, 20, 100]


@pytest.fixture(scope="module")
def gbdt_cases():
    return list_cases(SEED + 5, 200, long_len=60)


def test_lightgbm_per_query_and_mean(gbdt_cases):
    per, agg = lightgbm_eval(gbdt_cases, LGB_KS)
    res = ranklens.evaluate(long_table(gbdt_cases), None, [f"ndcg@{k}" for k in LGB_KS], convention="lightgbm")
    for k in LGB_KS:
        close(res.per_query_dict(f"ndcg@{k}"), per[f"ndcg@{k}"], f"lightgbm ndcg@{k}")
        close1(res[f"ndcg@{k}"], agg[f"ndcg@{k}"], f"lightgbm mean ndcg@{k}")


@pytest.mark.parametrize("choices", [(0.25, 0.5, 1.0, 2.0, 3.0), (0.25,), (4.0, 0.5)])
def test_lightgbm_weighted_mean(gbdt_cases, choices):
    """Query weights; an all-zero query adds 1 to the sum unweighted (rank_metric.hpp), which the
    'gbdt' weighting reproduces and a plain weighted mean does not."""
    w = weights_for(gbdt_cases, SEED + 50, choices)
    _, agg = lightgbm_eval(gbdt_cases, LGB_KS, weights=w, per_query=False)
    table = long_table(gbdt_cases)
    keys = [f"ndcg@{k}" for k in LGB_KS]
    res = ranklens.evaluate(table, None, keys, convention="lightgbm", weights=w)
    plain = ranklens.evaluate(table, None, keys, convention="lightgbm", weights=w, weighting="weighted")
    for key in keys:
        close1(res[key], agg[key], f"lightgbm weighted {key}")
        assert abs(plain[key] - agg[key]) > 1e-6, key


def test_lightgbm_rejections_are_mirrored():
    import lightgbm as lgb

    for bad in (-1.0, 1.5, 31.0):  # negative, fractional, beyond the 31-entry default label_gain
        q = Query("1", ["a", "b", "c"], np.array([0.3, 0.2, 0.1]), np.array([1.0, bad, 0.0]))
        with pytest.raises(lgb.basic.LightGBMError):
            lightgbm_eval([q], [3])
        with pytest.raises(ranklens.InputError):
            ranklens.evaluate(long_table([q]), None, ["ndcg@3"], convention="lightgbm")
    # a query of more than 10000 rows
    n = 10001
    big = Query("1", [f"d{i}" for i in range(n)], np.linspace(1, 0, n), (np.arange(n) % 3 == 0).astype(float))
    with pytest.raises(lgb.basic.LightGBMError):
        lightgbm_eval([big], [3], per_query=False)
    with pytest.raises(ranklens.InputError):
        ranklens.evaluate(long_table([big]), None, ["ndcg@3"], convention="lightgbm")


# -- XGBoost ---------------------------------------------------------------------------------------

XGB_METRICS = ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "ndcg@20", "ndcg@100", "ndcg", "ndcg@5-", "ndcg@100-",
               "ndcg-"]


def test_xgboost_per_query_and_mean(gbdt_cases):
    per, agg = xgboost_eval(gbdt_cases, XGB_METRICS)
    assert any(q.n > 32 for q in gbdt_cases)
    res = ranklens.evaluate(long_table(gbdt_cases), None, XGB_METRICS, convention="xgboost")
    for m in XGB_METRICS:
        close(res.per_query_dict(m), per[m], f"xgboost {m}")
        close1(res[m], agg[m], f"xgboost mean {m}")


def test_xgboost_float32_scores_matter(gbdt_cases):
    per, _ = xgboost_eval(gbdt_cases, ["ndcg@5"])
    as64 = ranklens.evaluate(long_table(gbdt_cases), None, ["ndcg@5"], convention="xgboost",
                             score_precision="float64")
    assert differs(as64.per_query_dict("ndcg@5"), per["ndcg@5"]) >= 3


@pytest.mark.parametrize("choices", [(0.25, 0.5, 1.0, 2.0, 3.0), (0.25,), (4.0, 0.5)])
def test_xgboost_weighted_mean(gbdt_cases, choices):
    """Group weights with the same unweighted-1 quirk as LightGBM. A mean above 1 (+1e-6) is an error
    in XGBoost (CHECK in Finalize), not clamped; ranklens's preset raises there too."""
    import xgboost as xgb

    w = weights_for(gbdt_cases, SEED + 60, choices)
    table = long_table(gbdt_cases)
    refused = 0
    for m in XGB_METRICS:
        try:
            _, agg = xgboost_eval(gbdt_cases, [m], weights=w, per_query=False)
        except xgb.core.XGBoostError as exc:
            assert "Invalid output score" in str(exc)
            refused += 1
            with pytest.raises(ranklens.InputError):
                ranklens.evaluate(table, None, [m], convention="xgboost", weights=w)
            continue
        res = ranklens.evaluate(table, None, [m], convention="xgboost", weights=w)
        close1(res[m], agg[m], f"xgboost weighted {m}")
        plain = ranklens.evaluate(table, None, [m], convention="xgboost", weights=w, weighting="weighted")
        if not m.endswith("-"):  # "-" variants score empty groups 0: no quirk to see
            assert abs(plain[m] - agg[m]) > 1e-6, m
    # weights of 1/4 push the 'ndcg' means past 1: XGBoost refuses them
    assert (refused > 0) == (choices == (0.25,)), refused


def test_xgboost_linear_gain_with_negative_and_fractional_labels():
    qs = list_cases(SEED + 61, 150, negative=True, fractional=True)
    metrics = ["ndcg@1", "ndcg@5", "ndcg@10", "ndcg", "ndcg@5-"]
    per, agg = xgboost_eval(qs, metrics, params={"ndcg_exp_gain": False})
    res = ranklens.evaluate(long_table(qs), None, metrics, convention="xgboost", gain="linear",
                            negative_labels="keep", fractional_labels="keep", max_label=None)
    for m in metrics:
        close(res.per_query_dict(m), per[m], f"xgboost linear {m}")
        close1(res[m], agg[m], f"xgboost linear mean {m}")


def test_xgboost_rejections_are_mirrored():
    import xgboost as xgb

    for bad in (-1.0, 1.5, 32.0):
        q = Query("1", ["a", "b", "c"], np.array([0.3, 0.2, 0.1]), np.array([1.0, bad, 0.0]))
        with pytest.raises(xgb.core.XGBoostError):
            xgboost_eval([q], ["ndcg@3"])
        with pytest.raises(ranklens.InputError):
            ranklens.evaluate(long_table([q]), None, ["ndcg@3"], convention="xgboost")


# -- CatBoost --------------------------------------------------------------------------------------

CB_TOPS = [1, 3, 5, 10, 100, None]


def _cb_metric(top, kind="Base"):
    return f"NDCG:type={kind}" if top is None else f"NDCG:top={top};type={kind}"


@pytest.fixture(scope="module")
def catboost_cases():
    return list_cases(SEED + 7, 200, negative=True, fractional=True)


@pytest.mark.parametrize("kind", ["Base", "Exp"])
def test_catboost_per_query_and_mean(catboost_cases, kind):
    table = long_table(catboost_cases)
    gain = "linear" if kind == "Base" else "exponential"
    res = ranklens.evaluate(table, None, [_key(t) for t in CB_TOPS], convention="catboost", gain=gain)
    for top in CB_TOPS:
        per, agg = catboost_eval(catboost_cases, _cb_metric(top, kind))
        close(res.per_query_dict(_key(top)), per, f"catboost {_cb_metric(top, kind)}")
        close1(res[_key(top)], agg, f"catboost mean {_cb_metric(top, kind)}")


def test_catboost_group_weights(catboost_cases):
    w = weights_for(catboost_cases, SEED + 70)
    table = long_table(catboost_cases)
    res = ranklens.evaluate(table, None, [_key(t) for t in CB_TOPS], convention="catboost", weights=w)
    for top in CB_TOPS:
        _, agg = catboost_eval(catboost_cases, _cb_metric(top), weights=w, per_query=False)
        close1(res[_key(top)], agg, f"catboost group_weight {_cb_metric(top)}")


def test_catboost_pessimistic_ties_matter(catboost_cases):
    per, _ = catboost_eval(catboost_cases, _cb_metric(3))
    inp = ranklens.evaluate(long_table(catboost_cases), None, ["ndcg@3"], convention="catboost", ties="input")
    assert differs(inp.per_query_dict("ndcg@3"), per) >= 3


# -- torchmetrics ----------------------------------------------------------------------------------

TM_KS = [1, 3, 5, 10, 100, None]


@pytest.fixture(scope="module")
def torch_cases():
    return list_cases(SEED + 8, 200, negative=True, fractional=True)


def f32_tolerance(q: Query, k: int | None) -> float:
    """How far torchmetrics' float32 sums may be from exact: TOL_F32 relative to each sum's terms.

    NDCG = DCG / IDCG; each sum carries a rounding error of about TOL_F32 times the sum of its terms' absolute
    values, so the value's error is TOL_F32 * (sum|DCG terms| + |NDCG| * sum|IDCG terms|) / |IDCG|. With labels of
    one sign that is 2 * TOL_F32 * |NDCG|; negative labels make IDCG a difference of terms (NDCG of -18 and more
    in these cases) and the bound grows with that cancellation, as float32 arithmetic does.
    """
    lab = q.labels.astype(np.float32).astype(np.float64)
    lab = np.where(np.isnan(lab), 0.0, lab)
    order = np.argsort(-q.scores.astype(np.float32), kind="stable")
    n = len(lab) if k is None else min(k, len(lab))
    disc = 1.0 / np.log2(np.arange(n) + 2.0)
    ranked, ideal = lab[order][:n] * disc, np.sort(lab)[::-1][:n] * disc
    idcg = abs(ideal.sum())
    if idcg == 0.0:
        return TOL_F32
    value = abs(ranked.sum()) / idcg
    return max(TOL_F32, TOL_F32 * (np.abs(ranked).sum() + value * np.abs(ideal).sum()) / idcg)


@pytest.mark.parametrize("action,empty", [("neg", None), ("pos", 1.0), ("skip", "skip")])
def test_torchmetrics_per_query_and_mean(torch_cases, action, empty):
    j, r = dicts(torch_cases)
    over = {} if empty is None else {"empty": empty}
    res = ranklens.evaluate(j, r, [_key(k) for k in TM_KS], convention="torchmetrics", **over)
    # the module's "empty" test (retrieval/base.py): the labels of the query sum to 0
    empty_q = {q.qid for q in torch_cases if q.labels.astype(np.float32).sum(dtype=np.float32) == 0}
    assert len(empty_q) >= 5
    for k in TM_KS:
        per, agg = torchmetrics_eval(torch_cases, k, action)
        # per query: the functional for non-empty queries; the module's action for empty ones
        expected = {q: v for q, v in per.items() if q not in empty_q}
        if action != "skip":
            expected.update({q: (1.0 if action == "pos" else 0.0) for q in empty_q})
        tol = {q.qid: f32_tolerance(q, k) for q in torch_cases}
        close(res.per_query_dict(_key(k)), expected, f"torchmetrics top_k={k} {action}", tol)
        close1(res[_key(k)], agg, f"torchmetrics RetrievalNormalizedDCG top_k={k} {action}",
               float(np.mean(list(tol.values()))))


def test_torchmetrics_float32_ties_matter(torch_cases):
    j, r = dicts(torch_cases)
    per, _ = torchmetrics_eval(torch_cases, 3)
    as64 = ranklens.evaluate(j, r, ["ndcg@3"], convention="torchmetrics", score_precision="float64")
    assert differs(as64.per_query_dict("ndcg@3"), per, 1e-4) >= 3


# -- Evidently (separate environment) --------------------------------------------------------------

EV_KS = [1, 3, 5, 10, 20]


def _evidently(qs, ks, **kw):
    try:
        return evidently_eval(qs, ks, **kw)
    except EvidentlyEnvMissing as exc:
        pytest.fail(str(exc))


@pytest.mark.evidently
@pytest.mark.parametrize("no_feedback_users", [False, True])
def test_evidently_per_user_and_mean(no_feedback_users):
    qs = list_cases(SEED + 9, 150, negative=True, fractional=True, long_len=40)
    ev = _evidently(qs, EV_KS, no_feedback_users=no_feedback_users)
    j, r = dicts(qs)
    # no_feedback_users=True keeps every user: NDCG = DCG/IDCG, 0 when IDCG is 0 (NaN and inf -> 0)
    over = {"empty": 0.0, "empty_test": "ideal_zero"} if no_feedback_users else {}
    kept = {q.qid for q in qs if no_feedback_users or (q.labels > 0).any()}
    for k in EV_KS:
        if ev["aggregate"][str(k)] is None:
            with pytest.raises(ranklens.RanklensError):
                ranklens.evaluate(j, r, [f"ndcg@{k}"], convention="evidently", **over)
            continue
        res = ranklens.evaluate(j, r, [f"ndcg@{k}"], convention="evidently", **over)
        ours = res.per_query_dict(f"ndcg@{k}")
        assert set(ours) == kept, f"evidently k={k}: users kept"
        theirs = ev["per_user"][str(k)]
        assert len(theirs) >= 20
        close({q: ours[q] for q in theirs}, theirs, f"evidently NDCGKMetric per user k={k}")
        close1(res[f"ndcg@{k}"], ev["aggregate"][str(k)], f"evidently NDCGKMetric k={k}")
    assert sum(v is not None for v in ev["aggregate"].values()) >= 3


@pytest.mark.evidently
def test_evidently_edge_cases():
    """Where Evidently raises or drops users, in small hand-made cases (each value from Evidently)."""
    a = Query("1", ["a", "b", "c"], np.array([0.9, 0.5, 0.5]), np.array([0.0, 2.0, 1.0]))  # deepest rank 2
    b = Query("2", ["d", "e", "f", "g"], np.array([0.4, 0.3, 0.2, 0.1]), np.zeros(4))  # no positive label
    c = Query("3", ["h", "i"], np.array([0.7, 0.7]), np.array([1.0, 1.0]))  # NDCG@1 = 2 (shared rank 1)
    cases = {"tie at the end of the longest kept list": [a, c], "longest list has no positive label": [a, b, c],
             "no positive label at all": [b], "two relevant tied on top": [c]}
    ks = [1, 2, 3, 4]
    try:
        answers = evidently_eval_many(list(cases.values()), ks, per_user=False)
    except EvidentlyEnvMissing as exc:
        pytest.fail(str(exc))
    assert sum(v is None for ev in answers for v in ev["aggregate"].values()) >= 4
    for (name, qs), ev in zip(cases.items(), answers):
        j, r = dicts(qs)
        for k in ks:
            want = ev["aggregate"][str(k)]
            if want is None:
                with pytest.raises(ranklens.RanklensError):
                    ranklens.evaluate(j, r, [f"ndcg@{k}"], convention="evidently")
            else:
                res = ranklens.evaluate(j, r, [f"ndcg@{k}"], convention="evidently")
                close1(res[f"ndcg@{k}"], want, f"evidently {name} k={k}")


@pytest.mark.evidently
def test_evidently_environment_is_there():
    # the Evidently peer must run; a missing environment is a failure, never a skip
    assert EVIDENTLY_PYTHON.exists(), (
        f"{EVIDENTLY_PYTHON} is missing: run `make install-test` to create the Evidently peer environment")


def test_ranx_plain_dicts_order_is_ties_ranx_dict(ranx_cases):
    """ranx.evaluate given dicts (no Run) orders ties its own way: ties='ranx_dict' reproduces it."""
    from ranx import evaluate

    qrels, run = qrels_dict(ranx_cases, cast=float), run_dict(ranx_cases)
    metrics = [m for _, m in RANX_PAIRS]
    want = evaluate({q: {d: int(v) for d, v in docs.items()} for q, docs in qrels.items()}, run, metrics,
                    return_mean=False)
    res = ranklens.evaluate(qrels, run, [k for k, _ in RANX_PAIRS], convention="ranx", ties="ranx_dict")
    for key, m in RANX_PAIRS:
        close(res.per_query_dict(key), dict(zip(run, map(float, want[m]), strict=True)), f"ranx dicts {m}")
    # the Run path orders them differently on these tie-heavy lists
    run_order = ranklens.evaluate(qrels, run, ["ndcg@10"], convention="ranx").per_query_dict("ndcg@10")
    assert differs(run_order, dict(zip(run, map(float, want["ndcg@10"]), strict=True))) >= 3
