"""One vocabulary (#28 point 4, docs/glossary.md): the new spellings, and the old ones still working for one release
with a DeprecationWarning that names the new one (and the same result)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

import ranklens
import ranklens.catboost
import ranklens.lightgbm
import ranklens.xgboost
from ranklens.errors import InvalidParameterError
from ranklens.evaluate import evaluate_arrays

QRELS = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"d": 1, "e": 0}, "q3": {"f": 1, "g": 1}}
BM25 = {"q1": {"a": 1.0, "b": 2.0, "c": 0.5}, "q2": {"d": 0.2, "e": 0.9}, "q3": {"f": 0.3, "g": 0.8}}
DENSE = {"q1": {"a": 3.0, "b": 1.0, "c": 2.0}, "q2": {"d": 0.9, "e": 0.2}, "q3": {"f": 0.8, "g": 0.3}}


def _old(fn, *args, new: str, **kwargs):
    """Call with an old spelling: exactly one DeprecationWarning, naming the new spelling; returns the value."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = fn(*args, **kwargs)
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert len(deprecations) == 1, [str(w.message) for w in caught]
    message = str(deprecations[0].message)
    assert f"`{new}`" in message and "deprecated" in message, message
    assert deprecations[0].filename == __file__  # points at the caller's line
    return value


def _quiet(fn, *args, **kwargs):
    """Call with the new spelling: no DeprecationWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        return fn(*args, **kwargs)


def test_evaluate_measures_and_run():
    new = _quiet(ranklens.evaluate, QRELS, run=BM25, measures=["mrr", "ndcg@2"])
    # by hand: q1 ranks b(0) a(1) c(2) -> first relevant at 2; q2 e(0) d(1) -> 2; q3 g(1) -> 1
    assert new["mrr"] == pytest.approx((1 / 2 + 1 / 2 + 1) / 3)
    old_m = _old(ranklens.evaluate, QRELS, BM25, metrics=["mrr", "ndcg@2"], new="measures=")
    old_r = _old(ranklens.evaluate, QRELS, rankings=BM25, measures=["mrr", "ndcg@2"], new="run=")
    for old in (old_m, old_r):
        assert old.to_dict(per_query=True) == new.to_dict(per_query=True)


def test_evaluate_arrays_measures():
    args = ([7, 3, 7, 3], [0.9, 0.8, 0.1, 0.3], [0, 1, 1, 0])
    new = _quiet(evaluate_arrays, *args, measures=["mrr"])
    assert new.per_query_dict("mrr") == {3: 1.0, 7: 0.5}  # by hand
    old = _old(evaluate_arrays, *args, metrics=["mrr"], new="measures=")
    assert old.to_dict(per_query=True) == new.to_dict(per_query=True)


def test_both_spellings_at_once_are_refused():
    with pytest.raises(InvalidParameterError, match="`measures` given twice"):
        ranklens.evaluate(QRELS, BM25, metrics=["mrr"], measures=["mrr"])
    with pytest.raises(InvalidParameterError, match="`run` given twice"):
        ranklens.evaluate(QRELS, run=BM25, rankings=BM25)


def test_explain_run():
    new = _quiet(ranklens.explain, QRELS, run=DENSE, query="q1", k=3)
    old = _old(ranklens.explain, QRELS, rankings=DENSE, query="q1", k=3, new="run=")
    assert old.to_dict() == new.to_dict()


def test_compare_measures_attribute_rows_and_json():
    runs = {"bm25": BM25, "dense": DENSE}
    c = _quiet(ranklens.compare, QRELS, runs, measures=["mrr"], n_resamples=99)
    old = _old(ranklens.compare, QRELS, runs, metrics=["mrr"], n_resamples=99, new="measures=")
    assert old.to_dict() == c.to_dict()
    assert c.measures == ["mrr"]
    assert _old(lambda: c.metrics, new="measures") == ["mrr"]
    row = _quiet(c.row, "dense", measure="mrr")
    assert row["measure"] == "mrr" and "metric" not in row
    assert _old(lambda: row["metric"], new="['measure']") == "mrr"
    assert _old(c.row, "dense", metric="mrr", new="measure=") is row
    # JSON and CSV: the key is `measure`, the list `measures`; no `metric` left
    d = json.loads(c.to_json())
    assert d["measures"] == ["mrr"] and {r["measure"] for r in d["rows"]} == {"mrr"}
    assert "metric" not in d and all("metric" not in r for r in d["rows"])
    assert c.to_csv().splitlines()[0].startswith("measure,run,baseline,")
    # the diff by hand: dense ranks the relevant first in q1 and q2 (1, 1), q3 too; bm25 gets 1/2, 1/2, 1
    assert row["diff"] == pytest.approx(((1 - 1 / 2) + (1 - 1 / 2) + (1 - 1)) / 3)


def test_p_value_and_scipys_pvalue():
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(5)
    a, b = rng.random(30), rng.random(30)
    r = ranklens.stats.paired_t(a, b)
    assert r.pvalue == r.p_value
    assert r.pvalue == pytest.approx(scipy_stats.ttest_rel(a, b).pvalue, rel=1e-12)


def test_interleaving_outcomes_have_the_pvalue_alias():
    from ranklens.online import interleaving_outcome

    from_log = {"impression": [0, 0, 1, 2], "team": ["a", "b", "a", "a"], "click": [1, 0, 1, 1]}
    pa = pytest.importorskip("pyarrow")
    out = interleaving_outcome(pa.table(from_log))
    assert out.pvalue == out.p_value and not math.isnan(out.pvalue)


def test_training_loop_metrics_measures():
    labels = np.array([1.0, 0, 0, 2])
    preds = np.array([0.2, 0.9, 0.1, 0.5])

    class DS:
        def get_label(self):
            return labels

        def get_group(self):
            return np.array([2, 2])

        def get_weight(self):
            return None

    new = _quiet(ranklens.lightgbm.feval, measures="ndcg@2")
    old = _old(ranklens.lightgbm.feval, metrics="ndcg@2", new="measures=")
    assert old(preds, DS()) == new(preds, DS())
    pytest.importorskip("catboost")
    m_new = _quiet(ranklens.catboost.eval_metric, measure="ndcg@2")
    m_old = _old(ranklens.catboost.eval_metric, metric="ndcg@2", new="measure=")
    assert type(m_old).__name__ == type(m_new).__name__
    pytest.importorskip("xgboost")
    _old(ranklens.xgboost.custom_metric, metrics="ndcg@2", new="measures=")


def test_cutoff_curves_measures():
    from ranklens.plot import cutoff_curves

    new = _quiet(cutoff_curves, QRELS, {"bm25": BM25}, measures=["ndcg@2"], ks=[1, 2])
    old = _old(cutoff_curves, QRELS, {"bm25": BM25}, metrics=["ndcg@2"], ks=[1, 2], new="measures=")
    assert old == new


def test_simulation_truth_runs():
    from ranklens.online import simulate

    sim = simulate({"control": {"q": {"a": 1, "b": 2}}}, judgments={"q": {"a": 1, "b": 0}}, n_users=10, k=2, seed=0)
    target = {"target": {"q": {"b": 1.0, "a": 0.5}}}
    new = _quiet(sim.truth, "clicks@2", runs=target)
    old = _old(sim.truth, "clicks@2", rankings=target, new="runs=")
    assert old.value("clicks@2", "target") == new.value("clicks@2", "target")


def test_ranking_scorer_measure():
    pytest.importorskip("sklearn")
    from ranklens.sklearn import make_ranking_scorer

    _quiet(make_ranking_scorer, measure="ndcg@5")
    _old(make_ranking_scorer, metric="ndcg@5", new="measure=")


def test_group_by_all_pairs_gates_and_two_stage_use_the_vocabulary():
    groups = {"q1": "a", "q2": "a", "q3": "b"}
    new = _quiet(ranklens.evaluate, QRELS, run=BM25, measures=["mrr"], group_by=groups)
    old = _old(ranklens.evaluate, QRELS, rankings=BM25, measures=["mrr"], group_by=groups, new="run=")
    # by hand: group a is q1 and q2, each first relevant at rank 2; group b is q3, relevant first
    assert new["a"]["mrr"] == pytest.approx(0.5) and new["b"]["mrr"] == 1.0
    assert all(old[g].to_dict() == new[g].to_dict() for g in ("a", "b"))
    runs = {"bm25": BM25, "dense": DENSE, "same": BM25}
    pairs = _quiet(ranklens.compare, QRELS, runs, measures=["mrr"], pairs="all", n_resamples=99)
    old_pairs = _old(ranklens.compare, QRELS, runs, metrics=["mrr"], pairs="all", n_resamples=99, new="measures=")
    assert old_pairs.to_dict() == pairs.to_dict() and pairs.measures == ["mrr"]
    c = _quiet(ranklens.compare, QRELS, {"bm25": BM25, "dense": DENSE}, measures=["mrr"], baseline="dense",
               n_resamples=99)
    drop = c.drops({"mrr": 0.1})[0]  # 1 - (1/2 + 1/2 + 1) / 3 = 1/3 > 0.1
    assert drop["measure"] == "mrr" and drop["drop"] == pytest.approx(1 / 3) and "metric" not in drop
    cand = {q: dict(items) for q, items in DENSE.items()}
    t_new = _quiet(ranklens.two_stage, QRELS, cand, run=BM25, k=2, ci="t")
    t_old = _old(ranklens.two_stage, QRELS, cand, ranking=BM25, k=2, ci="t", new="run=")
    assert t_old.to_dict() == t_new.to_dict()
