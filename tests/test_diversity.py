"""Diversity measures (issue #33, point 3): ndeval's alpha-nDCG@k, alpha-DCG@k, ERR-IA@k, nERR-IA@k, NRBP,
nNRBP, MAP-IA, P-IA@k and subtopic recall over judgments per subtopic, checked against pyndeval (ndeval's C code,
the provider ir_measures uses) run here, against ir_measures' means, and by hand."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import ranklens
from ranklens.errors import InputError, InvalidParameterError

pyndeval = pytest.importorskip("pyndeval")

#: ours -> pyndeval's name (with the same cutoff)
NAMES = {"alpha_ndcg": "alpha-nDCG", "alpha_dcg": "alpha-DCG", "err_ia": "ERR-IA", "nerr_ia": "nERR-IA",
         "p_ia": "P-IA", "strec": "strec", "nrbp": "NRBP", "nnrbp": "nNRBP", "map_ia": "MAP-IA"}
CUT = ("alpha_ndcg", "alpha_dcg", "err_ia", "nerr_ia", "p_ia", "strec")


def _random(seed, n_q=12, ties=True):
    """Judgments per subtopic (grades 0-2, some queries without a relevant subtopic) and a run with tied scores,
    unjudged items, items judged for no subtopic and queries missing on either side."""
    rng = np.random.default_rng(seed)
    qrels, run = [], {}
    for q in range(n_q):
        pool = [f"d{x}" for x in rng.choice(60, size=30, replace=False)]
        for s in range(int(rng.integers(1, 6))):
            for d in rng.choice(pool, size=int(rng.integers(1, 20)), replace=False):
                grade = int(rng.integers(0, 3)) if q % 5 else 0  # queries 0, 5, 10: nothing relevant
                qrels.append((f"q{q}", f"s{q}.{s}", str(d), grade))
    for q in range(2, n_q + 2):  # q0, q1 judged only; q12, q13 ranked only
        docs = rng.choice(70, size=int(rng.integers(1, 45)), replace=False)
        scores = rng.integers(0, 6, size=docs.shape[0]) if ties else rng.random(docs.shape[0])
        run[f"q{q}"] = {f"d{d}": float(s) for d, s in zip(docs, scores)}
    return qrels, run


def _run_tuples(run):
    return [(q, d, s) for q, docs in run.items() for d, s in docs.items()]


def _measures():
    out = []
    for fam in NAMES:
        if fam in CUT:
            out += [(f"{fam}@{k}", f"{NAMES[fam]}@{k}") for k in (1, 2, 5, 10, 20)]
        else:
            out.append((fam, NAMES[fam]))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equal_to_pyndeval_per_query(seed):
    """Every measure at cutoffs 1 (ndeval leaves alpha-DCG@1 and ERR-IA@1 unnormalised), 2, 5, 10 and 20, per
    query, to 1e-13 (the same sums in the same order); ties ordered by id as pyndeval orders them."""
    qrels, run = _random(seed)
    pairs = _measures()
    ref = pyndeval.ndeval(qrels, _run_tuples(run), measures=[p for _, p in pairs])
    res = ranklens.evaluate(qrels, run, [o for o, _ in pairs], convention="ndeval")
    assert sorted(res.per_query_dict(pairs[0][0])) == sorted(ref)  # queries both judged and ranked
    for ours, theirs in pairs:
        got = res.per_query_dict(ours)
        for q, values in ref.items():
            want = values[theirs]
            if math.isnan(want):  # nNRBP of a query without a relevant subtopic: 0/0 in ndeval, NaN here too
                assert ours == "nnrbp" and q not in got
                assert math.isnan(res.values[list(res.queries).index(q), res.keys.index(ours)])
                continue
            assert got[q] == pytest.approx(want, rel=1e-13, abs=1e-15), (ours, q)


def test_alpha_and_relevance_level():
    """alpha written in the name (the greedy ideal list takes it too) and a relevance level of 2."""
    qrels, run = _random(7, ties=False)
    ref = pyndeval.ndeval(qrels, _run_tuples(run), measures=["alpha-nDCG@10", "alpha-DCG@5", "NRBP", "nNRBP"],
                          alpha=0.3)
    ours_ = ["alpha_ndcg@10(alpha=0.3)", "alpha_dcg@5(alpha=0.3)", "nrbp(alpha=0.3)", "nnrbp(alpha=0.3)"]
    res = ranklens.evaluate(qrels, run, ours_, convention="ndeval")
    for ours, theirs in zip(ours_, ["alpha-nDCG@10", "alpha-DCG@5", "NRBP", "nNRBP"]):
        got = res.per_query_dict(ours)
        for q, v in ref.items():
            if not math.isnan(v[theirs]):
                assert got[q] == pytest.approx(v[theirs], rel=1e-13, abs=1e-15)
    ev = pyndeval.RelevanceEvaluator(qrels, ["alpha-nDCG@10", "P-IA@5", "MAP-IA"], relevance_level=2)
    ref2 = ev.evaluate(_run_tuples(run))
    res2 = ranklens.evaluate(qrels, run, ["alpha_ndcg@10", "p_ia@5", "map_ia"], convention="ndeval",
                             relevance_level=2)
    for ours, theirs in zip(["alpha_ndcg@10", "p_ia@5", "map_ia"], ["alpha-nDCG@10", "P-IA@5", "MAP-IA"]):
        got = res2.per_query_dict(ours)
        for q, v in ref2.items():
            assert got[q] == pytest.approx(v[theirs], rel=1e-13, abs=1e-15)


@pytest.mark.parametrize("alpha,beta", [(0.3, 0.8), (0.5, 0.2), (0.7, 1.0), (0.0, 0.0)])
def test_nrbp_beta_equal_to_pyndeval(alpha, beta):
    """NRBP's beta written in the name, as ir_measures' NRBP(alpha=.., beta=..) and ndeval's -alpha/-beta."""
    qrels, run = _random(11, ties=False)
    ref = pyndeval.ndeval(qrels, _run_tuples(run), measures=["NRBP", "nNRBP"], alpha=alpha, beta=beta)
    ours = [f"nrbp(alpha={alpha},beta={beta})", f"nnrbp(beta={beta},alpha={alpha})"]
    res = ranklens.evaluate(qrels, run, ours, convention="ndeval")
    checked = 0
    for o, t in zip(ours, ["NRBP", "nNRBP"]):
        got = res.per_query_dict(o)
        for q, v in ref.items():
            if math.isnan(v[t]):
                assert q not in got
                continue
            assert got[q] == pytest.approx(v[t], rel=1e-13, abs=1e-15), (o, q)
            checked += 1
    assert checked > 10
    if beta != 0.5:  # the parameter is read: the default gives other numbers
        assert res[ours[0]] != ranklens.evaluate(qrels, run, [f"nrbp(alpha={alpha})"], convention="ndeval")[
            f"nrbp(alpha={alpha})"]


def test_nrbp_beta_by_hand():
    """test_by_hand's list (gains 1, 1.5, 0 at ranks 1-3; N = 2) with beta 0.8, alpha 0.5:
    (1 - 0.5 x 0.8) / 2 x (1 + 1.5 x 0.8)."""
    qrels = [("q1", "1", "a", 1), ("q1", "2", "a", 1), ("q1", "2", "b", 1), ("q1", "1", "c", 1)]
    res = ranklens.evaluate(qrels, {"q1": {"b": 3.0, "a": 2.0, "x": 1.0}}, ["nrbp(beta=0.8)"], convention="ndeval")
    assert res["nrbp(beta=0.8)"] == pytest.approx((1 - 0.5 * 0.8) / 2 * (1 + 1.5 * 0.8), rel=1e-15)


def test_nnrbp_of_a_query_without_relevant_subtopic_is_nan_under_ndeval():
    """ndeval's nNRBP of such a query is 0/0 (pyndeval: NaN); under the ndeval preset it is NaN too, left out of
    the mean; the other measures score 0 there (ndeval's), and other conventions follow their empty rule."""
    qrels = [("q1", "1", "a", 1), ("q1", "2", "b", 1), ("q2", "1", "c", 0)]
    run = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0, "d": 0.5}}
    ref = pyndeval.ndeval(qrels, _run_tuples(run), measures=["nNRBP", "NRBP", "alpha-nDCG@5"])
    assert math.isnan(ref["q2"]["nNRBP"]) and ref["q2"]["NRBP"] == 0.0
    res = ranklens.evaluate(qrels, run, ["nnrbp", "nrbp", "alpha_ndcg@5"], convention="ndeval")
    assert res.per_query_dict("nnrbp") == {"q1": pytest.approx(ref["q1"]["nNRBP"], rel=1e-13)}
    assert res.counted["nnrbp"] == 1 and res["nnrbp"] == pytest.approx(ref["q1"]["nNRBP"], rel=1e-13)
    assert res.per_query_dict("nrbp")["q2"] == 0.0 and res.per_query_dict("alpha_ndcg@5")["q2"] == 0.0
    other = ranklens.evaluate(qrels, run, ["nnrbp"], ties="item_asc", empty=0.0)
    assert other.per_query_dict("nnrbp")["q2"] == 0.0


def test_means_equal_to_ir_measures():
    """ir_measures (its pyndeval provider) averages over every judged query, a query missing from the run
    scoring 0: ndeval's -c, queries='judged' here."""
    ir_measures = pytest.importorskip("ir_measures")
    pd = pytest.importorskip("pandas")
    qrels, run = _random(3)
    qdf = pd.DataFrame(qrels, columns=["query_id", "iteration", "doc_id", "relevance"])
    rdf = pd.DataFrame(_run_tuples(run), columns=["query_id", "doc_id", "score"])
    theirs = [ir_measures.parse_measure(m) for m in ("alpha_nDCG@10", "alpha_DCG@5", "ERR_IA@20", "nERR_IA@10",
                                                     "NRBP", "AP_IA", "P_IA@10", "StRecall@10")]
    agg = ir_measures.calc_aggregate(theirs, qdf, rdf)
    ours = ["alpha_ndcg@10", "alpha_dcg@5", "err_ia@20", "nerr_ia@10", "nrbp", "map_ia", "p_ia@10", "strec@10"]
    res = ranklens.evaluate(qdf, run, ours, convention="ndeval", queries="judged")
    for o, t in zip(ours, theirs):
        assert res[o] == pytest.approx(agg[t], rel=1e-12), o


def test_by_hand():
    """q1: subtopics 1 and 2; a is relevant to both, b to 2, c to 1; run b, a, x (x unjudged). alpha 0.5:
    g(1) = 1 (b: subtopic 2), g(2) = 1 (a: subtopic 1, new) + 0.5 (subtopic 2, seen once), g(3) = 0.
    The greedy ideal: a (2), then b or c (0.5 each; the larger id, c), then b (still 0.5: subtopic 2 seen once)."""
    qrels = [("q1", "1", "a", 1), ("q1", "2", "a", 1), ("q1", "2", "b", 1), ("q1", "1", "c", 1), ("q1", "1", "z", 0)]
    run = {"q1": {"b": 3.0, "a": 2.0, "x": 1.0}}
    res = ranklens.evaluate(qrels, run, ["alpha_ndcg@3", "alpha_dcg@3", "err_ia@3", "p_ia@3", "strec@1", "map_ia",
                                         "nrbp"], convention="ndeval")
    l3, l4 = math.log2(3), math.log2(4)
    run_dcg = 1 + 1.5 / l3
    ideal_dcg = 2 + 0.5 / l3 + 0.5 / l4
    assert res["alpha_ndcg@3"] == pytest.approx(run_dcg / ideal_dcg, rel=1e-15)
    assert res["alpha_dcg@3"] == pytest.approx(run_dcg / (2 + 1 / l3 + 0.5 / l4), rel=1e-15)  # N (1-a)^(r-1)
    assert res["err_ia@3"] == pytest.approx((1 + 1.5 / 2) / (2 + 1 / 2 + 0.5 / 3), rel=1e-15)
    assert res["p_ia@3"] == pytest.approx(3 / (3 * 2))  # pairs (b,2), (a,1), (a,2)
    assert res["strec@1"] == 0.5
    # subtopic 1: a at rank 2 (1/2), c unranked: AP 0.25 of R 2; subtopic 2: b at 1, a at 2: (1 + 1) / 2 = 1
    assert res["map_ia"] == pytest.approx((0.25 + 1.0) / 2)
    assert res["nrbp"] == pytest.approx((1 - 0.5 * 0.5) / 2 * (1 + 1.5 * 0.5), rel=1e-15)


def test_files_and_command_line(tmp_path):
    """ndeval's qrels file (detected as a TREC qrels, or --judgments-format ndeval) and a TREC run."""
    qrels, run = _random(4)
    qpath = tmp_path / "qrels.ndeval"
    qpath.write_text("".join(f"{q} {s} {d} {g}\n" for q, s, d, g in qrels))
    rpath = tmp_path / "run"
    rpath.write_text("".join(f"{q} Q0 {d} {i + 1} {s} tag\n" for q, docs in run.items()
                             for i, (d, s) in enumerate(docs.items())))
    ref = pyndeval.ndeval(qrels, _run_tuples(run), measures=["alpha-nDCG@20", "ERR-IA@10", "MAP-IA"])
    res = ranklens.evaluate(str(qpath), str(rpath), ["alpha_ndcg@20", "err_ia@10", "map_ia"], convention="ndeval")
    for q, v in ref.items():
        assert res.per_query_dict("alpha_ndcg@20")[q] == pytest.approx(v["alpha-nDCG@20"], rel=1e-13)
    cli = [sys.executable, "-m", "ranklens._cli.main", "eval", str(qpath), str(rpath), "--convention", "ndeval",
           "-m", "alpha_ndcg@20", "-m", "map_ia", "--judgments-format", "ndeval", "-f", "json", "-q"]
    done = subprocess.run(cli, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    mean = np.mean([v["MAP-IA"] for v in ref.values()])
    assert json.dumps(data).count("map_ia") and data["aggregate"]["map_ia"] == pytest.approx(mean, rel=1e-12)
    bad = subprocess.run(cli + ["-m", "ndcg@10"], capture_output=True, text=True)
    assert bad.returncode == 2 and "evaluated apart" in bad.stderr


def test_refusals():
    qrels, run = _random(5)
    with pytest.raises(InvalidParameterError, match="reproduces ndeval, which has no such measure .*not ndcg@10"):
        ranklens.evaluate(qrels, run, ["ndcg@10"], convention="ndeval")
    with pytest.raises(InvalidParameterError, match="averages tied items.*convention='ndeval'"):
        ranklens.evaluate(qrels, run, ["alpha_ndcg@10"])
    with pytest.raises(InvalidParameterError, match="pyndeval, that is ndeval"):
        ranklens.evaluate(qrels, run, ["alpha_ndcg@10"], convention="ir_measures")
    with pytest.raises(InvalidParameterError, match="which has no such measure .*convention='ndeval'"):
        ranklens.evaluate(qrels, run, ["strec@10"], convention="trec_eval")
    with pytest.raises(InvalidParameterError, match="cutoff from 1 to 20: write alpha_ndcg@20"):
        ranklens.evaluate(qrels, run, ["alpha_ndcg"], convention="ndeval")
    with pytest.raises(InvalidParameterError, match="computes to rank 20"):
        ranklens.evaluate(qrels, run, ["p_ia@21"], convention="ndeval")
    with pytest.raises(InvalidParameterError, match="alpha must be a redundancy penalty"):
        ranklens.evaluate(qrels, run, ["alpha_ndcg@10(alpha=1.5)"], convention="ndeval")
    for bad in ("nrbp(beta=1.5)", "nnrbp(alpha=0.3,beta=-0.1)", "nrbp(beta=nan)", "nrbp(beta=inf)"):
        with pytest.raises(InvalidParameterError, match="beta must be a patience from 0 to 1"):
            ranklens.evaluate(qrels, run, [bad], convention="ndeval")
    with pytest.raises(InvalidParameterError, match="unknown option 'beta'"):
        ranklens.evaluate(qrels, run, ["alpha_ndcg@10(beta=0.5)"], convention="ndeval")
    with pytest.raises(InvalidParameterError, match="written nrbp\\(alpha=0.3,beta=0.8\\)"):
        ranklens.evaluate(qrels, run, ["NRBP(alpha=0.3,beta=2.0)"], convention="ndeval")  # ir_measures' language
    with pytest.raises(InvalidParameterError, match="with pyndeval.*written alpha_ndcg@k\\(alpha=0.3\\)"):
        ranklens.evaluate(qrels, run, ["alpha_nDCG(alpha=0.3)@10"], convention="ndeval")  # ir_measures' language
    with pytest.raises(InvalidParameterError, match="judgments per subtopic.*got a dict"):
        ranklens.evaluate({"q1": {"a": 1}}, run, ["alpha_ndcg@10"], convention="ndeval")
    with pytest.raises(InputError, match="judged twice for one subtopic"):
        ranklens.evaluate([("q1", "1", "a", 1), ("q1", "1", "a", 0)], run, ["strec@5"], convention="ndeval")
    with pytest.raises(InputError, match="row 1 is not a number"):  # the second record: rows count from 0
        ranklens.evaluate([("q1", "1", "a", 1), ("q1", "1", "b", "1")], run, ["strec@5"], convention="ndeval")
    with pytest.raises(InputError, match=r"row 1 is inf, not a finite number$"):  # a float, not numpy's repr
        ranklens.evaluate([("q1", "1", "a", 1), ("q1", "1", "b", float("inf"))], run, ["strec@5"], convention="ndeval")
    # a custom convention ordering ties computes them (ties by id descending: ndeval's -traditional order)
    res = ranklens.evaluate(qrels, run, ["alpha_ndcg@10"], ties="item_desc")
    assert 0 <= res["alpha_ndcg@10"] <= 1


def test_compare_and_routes_without_subtopics():
    """compare evaluates each run as evaluate does (the same per-query values); routes without judgments per
    subtopic (flat arrays, the training loops, Spark) refuse the diversity measures instead of running the kernel."""
    qrels, run = _random(6)
    other = {q: {d: -s for d, s in docs.items()} for q, docs in run.items()}
    cmp = ranklens.compare(qrels, {"a": run, "b": other}, ["alpha_ndcg@10"], convention="ndeval", n_resamples=200)
    ref = pyndeval.ndeval(qrels, _run_tuples(other), measures=["alpha-nDCG@10"])
    got = dict(zip(cmp.per_query["queries"], cmp.per_query["values"][0][:, cmp.per_query["runs"].index("b")]))
    assert got == pytest.approx({q: v["alpha-nDCG@10"] for q, v in ref.items()}, rel=1e-13)
    from ranklens.evaluate import evaluate_arrays

    with pytest.raises(InvalidParameterError, match="read judgments per subtopic; ranklens.evaluate"):
        evaluate_arrays([1, 1], [0.5, 0.2], [1, 0], ["strec@5"], convention="ndeval", item=["a", "b"])
