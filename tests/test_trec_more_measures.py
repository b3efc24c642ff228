"""trec_eval's other measures (#22 point 1, ``-m all_trec``): gm_bpref, Rprec_mult, utility, binG, G,
ndcg_rel, Rndcg, relative_P / set_relative_P, set_map, num_nonrel_judged_ret, unj, rbp_resid.

Expected numbers come from outside ranklens: pytrec_eval (trec_eval 9's C code, run here) for those trec_eval
9 has, under the ``trec_eval`` preset, on generated tie-heavy runs with graded and -1 labels; hand
computations from trec_eval's definitions (its ``m_*.c`` files) on small cases, in trec_eval's order and
averaged over the orders of tied items. trec_eval 10's own outputs and its C program are compared in
tests/test_trec_eval_cli.py.
"""

from __future__ import annotations

import math
from itertools import permutations, product

import numpy as np
import pytest

import ranklens
from ranklens.errors import InvalidParameterError

pytrec_eval = pytest.importorskip("pytrec_eval")

#: pytrec_eval's key -> the ranklens measure
PEER = {
    "Rprec_mult_0.20": "Rprec_mult(mult=0.2)", "Rprec_mult_1.00": "Rprec_mult", "Rprec_mult_2.00": "Rprec_mult(mult=2)",
    "utility": "utility", "binG": "binG", "G": "G", "ndcg_rel": "ndcg_rel", "Rndcg": "Rndcg",
    "relative_P_5": "relative_P.5", "relative_P_30": "relative_P@30", "set_relative_P": "set_relative_P",
    "set_map": "set_map", "num_nonrel_judged_ret": "num_nonrel_judged_ret",
}


def _case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for t in range(int(rng.integers(3, 9))):
        docs = [f"d{d:03d}" for d in rng.choice(300, size=int(rng.integers(2, 50)), replace=False)]
        judged = docs[: int(rng.integers(1, len(docs) + 1))]
        qrels[f"q{t}"] = {d: int(rng.choice([-1, 0, 0, 1, 2, 3])) for d in judged}
        qrels[f"q{t}"][judged[0]] = int(rng.choice([0, 1, 2]))  # trec_eval needs a label of 0 or more
        ranked = docs[int(rng.integers(0, 3)):] + [f"u{i}" for i in range(int(rng.integers(0, 5)))]
        run[f"q{t}"] = {d: float(rng.integers(0, 4)) if seed % 2 else round(float(rng.normal()), 2) for d in ranked}
    return qrels, run


@pytest.mark.parametrize("seed", range(6))
def test_trec_eval_9_measures_match_pytrec_eval(seed: int) -> None:
    qrels, run = _case(seed)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"Rprec_mult", "utility", "binG", "G", "ndcg_rel", "Rndcg",
                                                   "relative_P", "set_relative_P", "set_map",
                                                   "num_nonrel_judged_ret", "gm_bpref"}).evaluate(run)
    res = ranklens.evaluate(qrels, run, [*PEER.values(), "gm_bpref"], convention="trec_eval")
    ours = {str(q): row for q, row in zip(res.queries, res.values)}
    assert sorted(ours) == sorted(theirs)
    for q, values in theirs.items():
        for key, measure in PEER.items():
            assert ours[q][res.keys.index(measure)] == pytest.approx(values[key], rel=1e-12, abs=1e-12), (q, key)
        # gm_bpref: trec_eval keeps log(max(bpref, 0.00001)) per query; ranklens the bpref itself
        got = ours[q][res.keys.index("gm_bpref")]
        assert math.log(max(got, 1e-5)) == pytest.approx(values["gm_bpref"], rel=1e-12, abs=1e-12), q
    logs = [v["gm_bpref"] for v in theirs.values()]
    assert res["gm_bpref"] == pytest.approx(math.exp(sum(logs) / len(logs)), rel=1e-12)


# -- hand computations from trec_eval's definitions ---------------------------------------------------------

NAN = float("nan")


def _defs(labels: list[float], judged: list[float], k: int) -> dict[str, float]:
    """The measures of one ranked list (labels in order; NaN: not in the qrels, -1: in the pool, unjudged)
    from trec_eval's definitions, relevance level 1; ``judged``: every label of the query's qrels."""
    n = len(labels)
    rel = [x >= 1 for x in labels]
    big_r = sum(x >= 1 for x in judged)
    a = sum(rel)
    cut = int(0.5 * big_r + 0.9)  # Rprec_mult.0.5
    nonrel_above, bing = 0, 0.0
    for r in rel:
        if r:
            bing += 1 / math.log2(2 + nonrel_above)
        else:
            nonrel_above += 1
    p = 0.9
    unjudged = [math.isnan(x) or x < 0 for x in labels]
    resid = p**n + (1 - p) * sum(p**i for i, u in enumerate(unjudged) if u) if any(unjudged) else 0.0
    return {
        "Rprec_mult(mult=0.5)": sum(rel[:cut]) / cut if cut else 0.0,
        "utility": a - (n - a),
        f"relative_P@{k}": sum(rel[:k]) / min(k, big_r),
        "set_relative_P": a / min(n, big_r),
        "set_map": a * a / (n * big_r),
        "binG": bing / big_r,
        f"unj@{k}": sum(unjudged[:k]) / k,
        "rbp_resid": resid,
        "num_nonrel_judged_ret": sum(0 <= x < 1 for x in labels if not math.isnan(x)),
    }


def test_definitions_by_hand_in_trec_eval_order() -> None:
    # q: ranked d1..d7 by score; d5 not in the qrels, d6 in the pool unjudged (-1); x1, x2 relevant, not ranked
    labels = [0, 2, 1, 0, NAN, -1, 1]
    qrels = {"q": {"d1": 0, "d2": 2, "d3": 1, "d4": 0, "d6": -1, "d7": 1, "x1": 1, "x2": 3}}
    run = {"q": {f"d{i + 1}": 10.0 - i for i in range(7)}}
    expected = _defs(labels, list(qrels["q"].values()), k=4)
    res = ranklens.evaluate(qrels, run, list(expected), convention="trec_eval10")
    for key, value in expected.items():
        assert res[key] == pytest.approx(value, rel=1e-12), key
    # the numbers themselves: R = 5 (d2, d3, d7, x1, x2), 3 relevant of 7 ranked
    assert (expected["utility"], expected["set_map"], expected[f"relative_P@{4}"]) == (-1, 9 / 35, 0.5)


def _mean_over_orders(labels: list[float], scores: list[float], judged: list[float], k: int) -> dict[str, float]:
    groups: dict[float, list[int]] = {}
    for i, s in enumerate(scores):
        groups.setdefault(s, []).append(i)
    orders = [[i for g in combo for i in g]
              for combo in product(*(list(permutations(groups[s])) for s in sorted(groups, reverse=True)))]
    values = [_defs([labels[i] for i in o], judged, k) for o in orders]
    return {key: sum(v[key] for v in values) / len(values) for key in values[0]}


def test_tied_items_give_the_mean_over_their_orders() -> None:
    # ties across the cutoff k = 3 and the Rprec_mult depth (R = 4: 0.5 R + 0.9 -> 2 items)
    labels = [1, 0, NAN, 2, -1, 0, 1]
    scores = [5.0, 4.0, 4.0, 4.0, 2.0, 2.0, 1.0]
    qrels = {"q": {f"d{i}": int(x) for i, x in enumerate(labels) if not math.isnan(x)} | {"x": 1}}
    run = {"q": {f"d{i}": s for i, s in enumerate(scores)}}
    expected = _mean_over_orders(labels, scores, list(qrels["q"].values()), k=3)
    counted = ["Rprec_mult(mult=0.5)", "utility", "relative_P@3", "set_relative_P", "set_map", "unj@3",
               "num_nonrel_judged_ret"]
    res = ranklens.evaluate(qrels, run, counted)  # ranklens' convention: tied items averaged
    for key in counted:
        assert res[key] == pytest.approx(expected[key], rel=1e-12), key
    assert 0 < res["relative_P@3"] < 1 and 0 < res["unj@3"] < 1  # the tie at rank 2-4 is really cut


@pytest.mark.parametrize("key, convention, words", [
    ("binG", "ranklens", "set a tie order"),
    ("rbp_resid", "ranklens", "set a tie order"),
    ("unj@5", "trec_eval", "has no such measure"),  # new in trec_eval 10
    ("unj", "trec_eval10", "needs a cutoff"),
    ("relative_P@5", "ir_measures", "takes no cutoff"),
    ("G", "sklearn", "has no such measure"),
])
def test_refusals_name_why(key: str, convention: str, words: str) -> None:
    qrels, run = _case(0)
    with pytest.raises(InvalidParameterError, match=words):
        ranklens.evaluate(qrels, run, [key], convention=convention)


@pytest.mark.parametrize("seed", range(3))
def test_ir_measures_set_ap_and_relative_set_p(seed: int) -> None:
    """ir_measures' SetAP and SetP(relative=True) (its pytrec_eval provider: trec_eval 9's set_map and
    set_relative_P), run here, under the ir_measures preset: every judged query, one missing from the run 0."""
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = _case(seed)
    run.pop(sorted(run)[0])  # a judged query the run lacks
    texts = ["SetAP", "SetP(relative=True)", "SetAP(rel=2)", "SetP(rel=2,relative=True)"]
    objs = [ir_measures.parse_measure(t) for t in texts]
    theirs = ir_measures.calc_aggregate(objs, qrels, run)
    per: dict[str, dict[str, float]] = {str(o): {} for o in objs}
    for metric in ir_measures.iter_calc(objs, qrels, run):
        per[str(metric.measure)][metric.query_id] = metric.value
    res = ranklens.evaluate(qrels, run, [str(o) for o in objs], convention="ir_measures")
    for o in objs:
        assert res[str(o)] == pytest.approx(theirs[o], abs=1e-12), o
        ours = res.per_query_dict(str(o))
        assert set(ours) == set(per[str(o)]) == set(qrels), o
        for q, v in per[str(o)].items():
            assert ours[q] == pytest.approx(v, abs=1e-12), (o, q)
    assert any(v > 0 for v in per["SetAP"].values())
