"""Tie handling, checked by brute force over every order of the tied items.

For ``ties="average"`` every measure must equal the mean of its value over all orders of the tied
items (all permutations within each group of equal scores, each order equally likely); ``ties="worst"``
and ``ties="best"`` must equal the minimum and maximum over those orders, so
worst <= average <= best. The reference below is plain Python from the definitions (ranklens's
default convention: linear gain, ideal list from all judgments, relevant = label >= 1, negative
label = gain 0, ERR stopping probability (2^g - 1) / 2^max_label).
"""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens

K = 3
MEASURES = [f"ndcg@{K}", f"dcg@{K}", f"map@{K}", f"mrr@{K}", f"P@{K}", f"recall@{K}", f"hit_rate@{K}", f"err@{K}",
            "r_precision", "ndcg", "map", "mrr", "err", "P@10", "hit_rate@1"]
TOL = 1e-12


def _disc(i: int) -> float:
    return 1.0 / math.log2(i + 1)


def measures_of_order(order: list[str], judged: dict[str, float], max_grade: float) -> dict[str, float]:
    """Every measure of one ranked list (no ties left)."""
    labels = [judged.get(d) for d in order]
    gains = [max(lab, 0.0) if lab is not None else 0.0 for lab in labels]
    rel = [1 if (lab is not None and lab >= 1) else 0 for lab in labels]
    ideal = sorted((max(v, 0.0) for v in judged.values()), reverse=True)
    n_rel = sum(1 for v in judged.values() if v >= 1)
    p_stop = [(2.0 ** g - 1.0) / 2.0 ** max_grade for g in gains]

    def dcg(gs, k=None):
        return sum(g * _disc(i) for i, g in enumerate(gs[:k] if k else gs, 1))

    def ndcg(k=None):
        i = dcg(ideal, k)
        return dcg(gains, k) / i if i > 0 else 0.0

    def ap(k=None):
        top = rel[:k] if k else rel
        return sum(sum(top[:i]) / i for i in range(1, len(top) + 1) if top[i - 1]) / n_rel if n_rel else 0.0

    def rr(k=None):
        top = rel[:k] if k else rel
        return next((1.0 / i for i, r in enumerate(top, 1) if r), 0.0)

    def err(k=None):
        total, go_on = 0.0, 1.0
        for i, p in enumerate(p_stop[:k] if k else p_stop, 1):
            total += go_on * p / i
            go_on *= 1.0 - p
        return total

    return {
        f"ndcg@{K}": ndcg(K),
        f"dcg@{K}": dcg(gains, K),
        f"map@{K}": ap(K),
        f"mrr@{K}": rr(K),
        f"P@{K}": sum(rel[:K]) / K,
        f"recall@{K}": sum(rel[:K]) / n_rel if n_rel else 0.0,
        f"hit_rate@{K}": float(any(rel[:K])),
        f"err@{K}": err(K),
        "r_precision": sum(rel[:n_rel]) / n_rel if n_rel else 0.0,
        "ndcg": ndcg(),
        "map": ap(),
        "mrr": rr(),
        "err": err(),
        "P@10": sum(rel[:10]) / 10,
        "hit_rate@1": float(any(rel[:1])),
    }


def all_orders(scores: dict[str, float]):
    """Every ranking consistent with the scores: groups by decreasing score, any order inside a group."""
    groups = [sorted(d for d in scores if scores[d] == s) for s in sorted(set(scores.values()), reverse=True)]
    for parts in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [d for part in parts for d in part]


def brute_force(judged: dict[str, float], scores: dict[str, float], max_grade: float) -> dict[str, tuple]:
    """measure -> (mean, min, max) over every order of the tied items."""
    values: dict[str, list[float]] = {m: [] for m in MEASURES}
    for order in all_orders(scores):
        for m, v in measures_of_order(order, judged, max_grade).items():
            values[m].append(v)
    return {m: (math.fsum(vs) / len(vs), min(vs), max(vs)) for m, vs in values.items()}


def test_reference_by_hand():
    """Two relevant items tied with one non-relevant item at the top: P@1 averages to 2/3."""
    judged = {"a": 1, "b": 0, "c": 2}
    scores = {"a": 1.0, "b": 1.0, "c": 1.0}
    bf = brute_force(judged, scores, max_grade=2)
    assert bf["hit_rate@1"] == (2 / 3, 0.0, 1.0)
    # RR: first relevant at 1 in 4 of 6 orders, at 2 in the 2 orders starting with b
    assert bf["mrr"][0] == pytest.approx((4 * 1 + 2 * 0.5) / 6)
    assert len(list(all_orders(scores))) == 6


# ---------------------------------------------------------------------------------------------
# generated cases
# ---------------------------------------------------------------------------------------------


@st.composite
def queries(draw):
    """1-3 queries; each ranks 1-7 items with scores from a small set (many ties), labels -1..3 or
    unjudged, and sometimes judged items that were never ranked."""
    n_q = draw(st.integers(1, 3))
    qrels: dict = {}
    run: dict = {}
    for q in range(n_q):
        n = draw(st.integers(1, 7))
        n_levels = draw(st.integers(1, 3))
        scores = draw(st.lists(st.integers(0, n_levels - 1), min_size=n, max_size=n))
        labels = draw(st.lists(st.one_of(st.none(), st.integers(-1, 3)), min_size=n, max_size=n))
        items = [f"d{i}" for i in range(n)]
        run[f"q{q}"] = {d: float(s) for d, s in zip(items, scores)}
        judged = {d: lab for d, lab in zip(items, labels) if lab is not None}
        extra = draw(st.lists(st.integers(0, 3), max_size=2))  # judged, not ranked
        judged.update({f"u{i}": lab for i, lab in enumerate(extra)})
        if not any(v >= 1 for v in judged.values()):
            judged["anchor"] = 1  # at least one relevant item (empty queries are tested elsewhere)
        qrels[f"q{q}"] = judged
    return qrels, run


def _max_grade(qrels: dict) -> float:
    return max(1.0, max(v for judged in qrels.values() for v in judged.values()))


def _evaluate(qrels: dict, run: dict, ties: str) -> dict:
    return ranklens.evaluate(qrels, run, MEASURES, ties=ties).per_query_dict()


SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(queries())
def test_average_is_the_mean_over_all_tie_orders(case):
    qrels, run = case
    got = _evaluate(qrels, run, "average")
    mg = _max_grade(qrels)
    for q in run:
        bf = brute_force(qrels[q], run[q], mg)
        for m in MEASURES:
            assert got[q][m] == pytest.approx(bf[m][0], rel=TOL, abs=TOL), (q, m)


@SETTINGS
@given(queries())
def test_worst_and_best_are_the_min_and_max_over_tie_orders(case):
    qrels, run = case
    worst = _evaluate(qrels, run, "worst")
    avg = _evaluate(qrels, run, "average")
    best = _evaluate(qrels, run, "best")
    mg = _max_grade(qrels)
    for q in run:
        bf = brute_force(qrels[q], run[q], mg)
        for m in MEASURES:
            assert worst[q][m] == pytest.approx(bf[m][1], rel=TOL, abs=TOL), (q, m, "worst")
            assert best[q][m] == pytest.approx(bf[m][2], rel=TOL, abs=TOL), (q, m, "best")
            assert worst[q][m] <= avg[q][m] + TOL and avg[q][m] <= best[q][m] + TOL, (q, m)


@SETTINGS
@given(queries())
def test_without_ties_every_rule_agrees(case):
    qrels, run = case
    # make every score distinct, keeping the order of distinct scores
    distinct = {q: {d: s * 100 + i for i, (d, s) in enumerate(sorted(docs.items()))} for q, docs in run.items()}
    results = [_evaluate(qrels, distinct, t) for t in ("average", "worst", "best", "input", "item_desc")]
    mg = _max_grade(qrels)
    for q in distinct:
        (only,) = list(all_orders(distinct[q]))
        ref = measures_of_order(only, qrels[q], mg)
        for res in results:
            for m in MEASURES:
                assert res[q][m] == pytest.approx(ref[m], rel=TOL, abs=TOL), (q, m)


@SETTINGS
@given(queries())
def test_tie_orders_in_the_input_do_not_matter_for_average(case):
    """Reversing the input order of the items changes nothing under average, worst and best."""
    qrels, run = case
    reversed_run = {q: dict(reversed(list(docs.items()))) for q, docs in run.items()}
    for ties in ("average", "worst", "best"):
        a = _evaluate(qrels, run, ties)
        b = _evaluate(qrels, reversed_run, ties)
        for q in run:
            for m in MEASURES:
                assert a[q][m] == pytest.approx(b[q][m], rel=TOL, abs=TOL), (q, m, ties)


def test_all_tied_list_by_hand():
    """Four items all tied, labels 3, 0, 1, 0: average DCG@2 = mean gain x (d1 + d2)."""
    qrels = {"q": {"a": 3, "b": 0, "c": 1, "d": 0}}
    run = {"q": {"a": 0.5, "b": 0.5, "c": 0.5, "d": 0.5}}
    res = ranklens.evaluate(qrels, run, ["dcg@2", "P@2", "hit_rate@1"], ties="average")
    assert res["dcg@2"] == pytest.approx(1.0 * (1 + 1 / math.log2(3)), rel=TOL)
    assert res["P@2"] == pytest.approx(0.5, rel=TOL)
    assert res["hit_rate@1"] == pytest.approx(0.5, rel=TOL)
    worst = ranklens.evaluate(qrels, run, ["dcg@2", "hit_rate@1"], ties="worst")
    best = ranklens.evaluate(qrels, run, ["dcg@2", "hit_rate@1"], ties="best")
    assert worst["dcg@2"] == 0.0 and worst["hit_rate@1"] == 0.0
    assert best["dcg@2"] == pytest.approx(3 + 1 / math.log2(3), rel=TOL) and best["hit_rate@1"] == 1.0


def test_ties_with_ranks_given():
    """Equal ranks are ties as well (ranks instead of scores)."""
    pd = pytest.importorskip("pandas")
    table = pd.DataFrame({"query": ["q"] * 4, "item": ["a", "b", "c", "d"], "rank": [1, 1, 3, 3],
                          "relevance": [0, 2, 1, 0]})
    res = ranklens.evaluate(table, measures=["dcg", "mrr"], ties="average")
    # top pair {a: 0, b: 2}, bottom pair {c: 1, d: 0}
    expected = 1.0 * (_disc(1) + _disc(2)) + 0.5 * (_disc(3) + _disc(4))
    assert res["dcg"] == pytest.approx(expected, rel=TOL)
    assert res["mrr"] == pytest.approx((1 + 0.5) / 2, rel=TOL)
