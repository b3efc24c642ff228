"""Every measure under every preset: the peer's own definition checked against the real peer, or a refusal.

Measures beside NDCG (NDCG itself: ``test_presets.py``). Every expected number is computed by the peer
inside the test (``_peers.py``); the cases come from ``_gen.py`` (fixed seeds; ties, float32-only ties,
all-zero queries, single items, lists longer than 32...). The table ``PEER_HAS`` below is written from
the peers' documentation and source (see docs/conventions.md), apart from the product's declaration
(``ranklens.conventions.PEERS``), which must equal it; each pair it lists is compared with the peer, each
pair it does not list must be refused with a line naming the convention and the measure.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import ranklens
from _gen import SEED, Query, judged_cases, list_cases, long_table, qrels_dict, run_dict
from _peers import catboost_eval, lightgbm_eval, ranx_calc, xgboost_eval
from ranklens.measures import REGISTRY

pytestmark = pytest.mark.peer

TOL = 1e-9

#: (convention, family, with a cutoff) pairs that each preset's peer has (None: with and without a cutoff)
#: refused under averaged ties (ranklens, sklearn): their expectation over tie orders is not computed
ORDERED_ONLY = ("infap", "iprec", "11pt_avg", "bing", "g", "ndcg_rel", "rndcg", "rbp_resid")
#: the diversity measures: judgments per subtopic, ndeval's (tests/test_diversity.py checks them against pyndeval)
DIVERSITY = tuple(f for f, spec in REGISTRY.items() if spec.subtopics)
PEER_HAS: dict[str, dict[str, bool | None]] = {
    "ranklens": {f: None for f in REGISTRY if f not in ORDERED_ONLY + DIVERSITY},
    "sklearn": {"ndcg": None, "dcg": None},
    "trec_eval": {"ndcg": None, "map": None, "mrr": None, "precision": None, "recall": None, "hit_rate": True,
                  "r_precision": False, "num_ret": False, "num_rel": False, "num_rel_ret": False, "bpref": False,
                  "infap": False, "iprec": False, "11pt_avg": False, "gm_map": False, "f1": False,
                  # trec_eval's other measures (tests/test_trec_more_measures.py): relative_P.k and set_relative_P
                  "gm_bpref": False, "rprec_mult": False, "utility": False, "bing": False, "g": False,
                  "ndcg_rel": False, "rndcg": False, "relative_p": None, "set_map": False,
                  "num_nonrel_judged_ret": False},
    # RR@k and ERR@k: as the providers ir_measures picks for them compute them (msmarco, gdeval)
    "ir_measures": {"ndcg": None, "map": None, "mrr": None, "err": True, "precision": None, "recall": None,
                    "hit_rate": True, "r_precision": False, "num_ret": False, "num_rel": False, "num_rel_ret": False,
                    "bpref": False, "infap": False, "iprec": False, "f1": False,
                    "relative_p": False, "set_map": False,  # SetP(relative=True), SetAP
                    "judged": None},  # ir_measures' judged provider (tests/test_ir_measures_lang.py)
    "gdeval": {"ndcg": True, "err": True},
    "ranx": {"ndcg": None, "dcg": None, "map": None, "mrr": None, "precision": None, "recall": None,
             "hit_rate": None, "hits": None, "r_precision": False, "bpref": False, "f1": None, "rbp": False},
    "lightgbm": {"ndcg": None, "map": True},
    "xgboost": {"ndcg": None, "map": None, "precision": None},
    "catboost": {"ndcg": None, "dcg": None, "map": None, "mrr": None, "precision": None, "recall": None},
    "torchmetrics": {"ndcg": None, "map": None, "mrr": None, "precision": None, "recall": None, "r_precision": False,
                     "hit_rate": None},  # on lists without mixed ties (tests/test_peer_retrieval.py)
    "evidently": {"ndcg": None, "dcg": None},  # dcg: the numerator of its NDCG (tests/test_explain.py)
    "ndeval": {f: REGISTRY[f].cutoff for f in DIVERSITY},  # k from 1 to 20; NRBP, nNRBP, MAP-IA without
}
PEER_HAS["trec_eval10"] = {**PEER_HAS["trec_eval"], "rbp": False, "unj": True, "rbp_resid": False}


def test_the_presets_declare_what_this_table_lists():
    """The product's allow-lists (ranklens.conventions.PEERS) are this test's table, kept apart on purpose: a
    pair declared there and not here (or the other way) fails here, before any refusal is derived from it."""
    from ranklens.conventions import PEERS

    assert set(PEERS) == set(ranklens.CONVENTIONS)
    assert PEERS["ranklens"] is None  # ranklens' own definitions: every family (tie refusals follow the field)
    for conv, peer in PEERS.items():
        if conv != "ranklens":
            assert dict(peer.has) == PEER_HAS[conv], conv


def test_a_new_preset_gives_ndcg_only_until_its_peer_is_declared(monkeypatch):
    """A preset added with its fields alone computes NDCG and refuses every other measure, naming the preset and
    its peer; declaring what its peer has (PEERS) lets those pairs through, and those only."""
    from ranklens.conventions import PEERS, Peer

    new = ranklens.Convention(name="newpeer", gain="exponential", ties="input", ideal="ranking", empty=0.0,
                              mirrors="NewPeer 1.0 ndcg@k")
    monkeypatch.setitem(ranklens.CONVENTIONS, "newpeer", new)
    j = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"x": 1, "y": 0}}
    r = {"q1": {"a": 0.3, "b": 0.5, "c": 0.1}, "q2": {"x": 1.0, "y": 0.2}}
    # NDCG by hand: q1 ranks b, a, c: (3 / log2(3) + 1 / 2) / (3 + 1 / log2(3)); q2: 1
    res = ranklens.evaluate(j, r, ["ndcg"], convention="newpeer")
    q1 = (3 / np.log2(3) + 1 / 2) / (3 + 1 / np.log2(3))
    close(res.per_query_dict("ndcg"), {"q1": q1, "q2": 1.0}, "newpeer ndcg", 1e-12)
    n_refused = 0
    for family, spec in REGISTRY.items():
        for cut in ((False, True) if spec.cutoff else (False,)):
            if family == "ndcg":
                continue
            m = _spelled(family, cut)
            with pytest.raises(ranklens.InvalidParameterError) as err:
                ranklens.evaluate(j, r, [m], convention="newpeer")
            line = str(err.value)
            assert line.startswith("convention 'newpeer' reproduces NewPeer 1.0 ndcg@k") and line.endswith(
                f"; not {m}."), line
            n_refused += 1
    assert n_refused > 40
    # declared: map with a cutoff only, precision with and without
    monkeypatch.setitem(PEERS, "newpeer", Peer("NewPeer", "ndcg@k, map@k and precision", {
        "ndcg": None, "map": True, "precision": None}))
    res = ranklens.evaluate(j, r, ["map@3", "precision", "P@1"], convention="newpeer")
    # by hand: q1's relevant a, c at ranks 2, 3 (AP (1/2 + 2/3) / 2), q2's x first; P: 2/3 and 1/2; P@1: 0, 1
    close(res.per_query_dict("map@3"), {"q1": (1 / 2 + 2 / 3) / 2, "q2": 1.0}, "newpeer map@3", 1e-12)
    close(res.per_query_dict("precision"), {"q1": 2 / 3, "q2": 1 / 2}, "newpeer precision", 1e-12)
    close(res.per_query_dict("P@1"), {"q1": 0.0, "q2": 1.0}, "newpeer P@1", 1e-12)
    for m, words in (("map", "reproduces NewPeer, whose map needs a cutoff"),
                     ("mrr@3", "reproduces NewPeer, which has no such measure (it has ndcg@k, map@k and precision)")):
        with pytest.raises(ranklens.InvalidParameterError, match=re.escape(f"convention 'newpeer' {words}")):
            ranklens.evaluate(j, r, [m], convention="newpeer")


def close(ours: dict, theirs: dict, what: str, tol: float = TOL) -> None:
    assert theirs, f"{what}: the peer returned no per-query value"
    assert set(ours) == set(theirs), f"{what}: query sets differ"
    bad = [(q, ours[q], theirs[q]) for q in theirs if not abs(ours[q] - theirs[q]) <= tol]
    assert not bad, f"{what}: {len(bad)}/{len(theirs)} queries differ (query, ranklens, peer): {bad[:6]}"


def close1(ours: float, theirs: float, what: str, tol: float = TOL) -> None:
    assert abs(ours - theirs) <= tol, f"{what}: ranklens {ours!r} != peer {theirs!r}"


def weights_for(qs: list[Query], seed: int, choices=(0.5, 1.0, 2.0, 3.0)) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    return {q.qid: float(rng.choice(choices)) for q in qs}


# -- every pair: the peer's or refused ----------------------------------------------------------------

def _spelled(family: str, cut: bool) -> str:
    if family == "iprec":
        return "iprec@0.5"  # "iprec" alone is trec_eval's 11 levels
    return f"{family}@3" if cut else family


@pytest.mark.slow
def test_every_pair_is_the_peers_or_refused():
    j = {"q1": {"a": 1, "b": 0, "c": 1}, "q2": {"x": 1, "y": 0}}
    r = {"q1": {"a": 0.3, "b": 0.5, "c": 0.1}, "q2": {"x": 1.0, "y": 0.2}}
    assert set(PEER_HAS) == set(ranklens.CONVENTIONS)
    n_refused = 0
    for conv in ranklens.CONVENTIONS:
        for family, spec in REGISTRY.items():
            for cut in ((False, True) if spec.cutoff else (False,)):
                m = _spelled(family, cut)
                has = family in PEER_HAS[conv] and PEER_HAS[conv][family] in (None, cut)
                if has:
                    judged = [(q, "1", d, g) for q, docs in j.items() for d, g in docs.items()] if (
                        REGISTRY[family].subtopics) else j
                    res = ranklens.evaluate(judged, r, [m], convention=conv)
                    assert np.isfinite(res[m]), (conv, m)
                else:
                    with pytest.raises(ranklens.InvalidParameterError) as err:
                        ranklens.evaluate(j, r, [m], convention=conv)
                    line = str(err.value)
                    assert "\n" not in line and line.startswith(f"convention {conv!r} ") and line.endswith(
                        f"; not {m}."), line
                    tie_refusal = family in ORDERED_ONLY + DIVERSITY and conv == "ranklens"
                    # the line says how to get a number: ranklens' own, a tie order, ndeval's, or another spelling
                    assert ("set a tie order" if tie_refusal else "convention='ranklens'") in line or (
                        "write " in line) or (family in DIVERSITY and "convention='ndeval'" in line), line
                    n_refused += 1
    assert n_refused > 100


def test_refusal_lines_say_why():
    def why(conv, m):
        with pytest.raises(ranklens.InvalidParameterError) as err:
            ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, [m], convention=conv)
        return str(err.value)

    assert why("lightgbm", "mrr@5") == (
        "convention 'lightgbm' reproduces LightGBM, which has no such measure (it has ndcg@k and map@k); "
        "convention='ranklens' gives ranklens' own; not mrr@5.")
    assert "LightGBM reports map@k" in why("lightgbm", "map")
    # ir_measures' RR@k and ERR@k are computed as its msmarco and gdeval providers compute them
    # (tests/test_ir_measures_lang.py); ERR without a cutoff has no provider there
    res = ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["mrr@10"], convention="ir_measures", ties="item_asc")
    assert res["mrr@10"] == 1.0
    assert "no provider for ERR without a cutoff" in why("ir_measures", "err")
    assert "RetrievalNormalizedDCG, RetrievalMAP" in why("torchmetrics", "err@10")
    assert "ranx, which has no such measure" in why("ranx", "err@5")
    assert "trec_eval, which has no such measure" in why("trec_eval", "hits@5")


# -- ranx: hits@k is a count ---------------------------------------------------------------------

RANX_EXTRA = [("hits", "hits"), ("hits@1", "hits@1"), ("hits@5", "hits@5"), ("hits@20", "hits@20"),
              ("hit_rate", "hit_rate"), ("hit_rate@3", "hit_rate@3"), ("dcg", "dcg"), ("dcg@5", "dcg@5"),
              ("dcg_burges@5", "dcg_burges@5"), ("P", "precision"), ("recall", "recall"), ("mrr@3", "mrr@3"),
              ("map@5", "map@5"), ("r_precision", "r-precision")]


@pytest.mark.slow
def test_ranx_hits_and_the_rest():
    qs = judged_cases(SEED + 40, 150, negative=True, fractional=True, partial_queries=False)
    qrels, run = qrels_dict(qs, cast=float), run_dict(qs)
    per, agg = ranx_calc(qrels, run, [m for _, m in RANX_EXTRA])
    res = ranklens.evaluate(qrels, run, [k for k, _ in RANX_EXTRA], convention="ranx")
    for key, m in RANX_EXTRA:
        close(res.per_query_dict(key), per[m], f"ranx {m}")
        close1(res[key], agg[m], f"ranx aggregate {m}")
    # a count, not a rate: some query has more than one hit in its top 5
    assert max(per["hits@5"].values()) >= 2


# -- scikit-learn dcg_score ----------------------------------------------------------------------------

def test_sklearn_dcg_score():
    from sklearn.metrics import dcg_score

    qs = list_cases(SEED + 42, 120, min_len=2, fractional=True)
    j = {q.qid: {i: float(v) for i, v in zip(q.items, q.labels)} for q in qs}
    r = {q.qid: {i: float(s) for i, s in zip(q.items, q.scores)} for q in qs}
    for k in (1, 3, 10, None):
        key = "dcg" if k is None else f"dcg@{k}"
        res = ranklens.evaluate(j, r, [key], convention="sklearn")
        theirs = {q.qid: float(dcg_score([q.labels], [q.scores], k=k)) for q in qs}
        close(res.per_query_dict(key), theirs, f"sklearn dcg_score k={k}")


# -- XGBoost map and pre -------------------------------------------------------------------------------

XGB_METRICS = ["map", "map@1", "map@3", "map@10", "map@40", "map@5-", "map-", "pre", "pre@1", "pre@3", "pre@10",
               "pre@50"]


def _ours_xgb(m: str) -> str:
    return m.replace("pre", "precision")


@pytest.fixture(scope="module")
def binary_cases():
    return list_cases(SEED + 43, 160, max_label=1, long_len=60)


def test_xgboost_map_and_pre(binary_cases):
    per, agg = xgboost_eval(binary_cases, XGB_METRICS)
    res = ranklens.evaluate(long_table(binary_cases), None, [_ours_xgb(m) for m in XGB_METRICS], convention="xgboost")
    for m in XGB_METRICS:
        close(res.per_query_dict(_ours_xgb(m)), per[m], f"xgboost {m}")
        close1(res[_ours_xgb(m)], agg[m], f"xgboost mean {m}", 1e-6)  # XGBoost prints float32 means


def test_xgboost_map_and_pre_weighted(binary_cases):
    w = weights_for(binary_cases, SEED + 44, choices=(1.0, 2.0, 3.0))
    _, agg = xgboost_eval(binary_cases, XGB_METRICS, weights=w, per_query=False)
    res = ranklens.evaluate(long_table(binary_cases), None, [_ours_xgb(m) for m in XGB_METRICS],
                            convention="xgboost", weights=w)
    for m in XGB_METRICS:
        close1(res[_ours_xgb(m)], agg[m], f"xgboost weighted {m}", 1e-6)


def test_xgboost_graded_labels_refused_for_map_and_pre():
    import xgboost as xgb

    q = Query("1", ["a", "b", "c"], np.array([0.3, 0.2, 0.1]), np.array([1.0, 2.0, 0.0]))
    for m in ("map@3", "pre@3"):
        with pytest.raises(xgb.core.XGBoostError, match="binary"):
            xgboost_eval([q], [m])
        with pytest.raises(ranklens.InputError, match="binary labels"):
            ranklens.evaluate(long_table([q]), None, [_ours_xgb(m)], convention="xgboost")
    # ndcg takes graded labels in both
    xgboost_eval([q], ["ndcg@3"])
    ranklens.evaluate(long_table([q]), None, ["ndcg@3"], convention="xgboost")


# -- LightGBM map@k ------------------------------------------------------------------------------------

def _lgb_map(qs, eval_at, weights=None, per_query=True):
    return lightgbm_eval(qs, eval_at, weights=weights, per_query=per_query, metric="map")


LGB_KS = [1, 3, 5, 10, 40]


@pytest.mark.slow
def test_lightgbm_map(binary_cases):
    qs = list_cases(SEED + 45, 150, max_label=3, long_len=50)
    per, agg = _lgb_map(qs, LGB_KS)
    res = ranklens.evaluate(long_table(qs), None, [f"map@{k}" for k in LGB_KS], convention="lightgbm")
    for k in LGB_KS:
        close(res.per_query_dict(f"map@{k}"), per[f"map@{k}"], f"lightgbm map@{k}")
        close1(res[f"map@{k}"], agg[f"map@{k}"], f"lightgbm mean map@{k}")
    w = weights_for(qs, SEED + 46)
    _, agg = _lgb_map(qs, LGB_KS, weights=w, per_query=False)
    res = ranklens.evaluate(long_table(qs), None, [f"map@{k}" for k in LGB_KS], convention="lightgbm", weights=w)
    for k in LGB_KS:
        close1(res[f"map@{k}"], agg[f"map@{k}"], f"lightgbm weighted map@{k}")


# -- CatBoost PrecisionAt, RecallAt, MAP, MRR, DCG ----------------------------------------------------

def _cb(name: str, top: int | None) -> str:
    return name if top is None else f"{name}:top={top}"


CB = [("precision", "PrecisionAt"), ("recall", "RecallAt"), ("map", "MAP"), ("mrr", "MRR"), ("dcg", "DCG")]
CB_TOPS = [1, 3, 10, None]


@pytest.fixture(scope="module")
def catboost_cases():
    return list_cases(SEED + 47, 120, negative=True, fractional=True, long_len=40)


@pytest.mark.slow
def test_catboost_measures(catboost_cases):
    table = long_table(catboost_cases)
    w = weights_for(catboost_cases, SEED + 48)
    for fam, name in CB:
        keys = [fam if t is None else f"{fam}@{t}" for t in CB_TOPS]
        res = ranklens.evaluate(table, None, keys, convention="catboost")
        resw = ranklens.evaluate(table, None, keys, convention="catboost", weights=w)
        for key, top in zip(keys, CB_TOPS):
            metric = _cb(name, top) if name != "PrecisionAt" or top is not None else "PrecisionAt:top=-1"
            if name == "RecallAt" and top is None:
                metric = "RecallAt:top=-1"
            per, agg = catboost_eval(catboost_cases, metric)
            close(res.per_query_dict(key), per, f"catboost {metric}")
            close1(res[key], agg, f"catboost mean {metric}")
            _, aggw = catboost_eval(catboost_cases, metric, weights=w, per_query=False)
            close1(resw[key], aggw, f"catboost group_weight {metric}")
