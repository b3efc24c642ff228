"""XGBoost's, LightGBM's and CatBoost's ranking-metric test cases, run through ranklens under each one's
convention.

XGBoost: the cases of ``tests/cpp/metric/test_rank_metric.h`` (github.com/dmlc/xgboost: VerifyPrecision,
VerifyNDCG, VerifyMAP, VerifyNDCGExpGain), with their literal expectations, and the value XGBoost itself
computes in the test (the scores as ``base_margin`` of a booster of zero rounds). LightGBM and CatBoost: the
same small groups (LightGBM's and CatBoost's own metric tests use training data sets, not literal metric
values), plus seeded tie-heavy groups and, for LightGBM, its own examples/lambdarank data, against
``lightgbm.Booster.eval_train`` (``init_score`` = the scores, no boosting round) and
``catboost.utils.eval_metric`` computed in the test.
"""

from __future__ import annotations

import numpy as np
import pytest

import ranklens
from ranklens.evaluate import evaluate_arrays

# (scores, labels, group sizes): test_rank_metric.h's inputs
TWO = ([0.0, 1.0], [0, 1], [2])
FOUR = ([0.1, 0.9, 0.1, 0.9], [0, 0, 1, 1], [4])
SIX = ([0.2, 0.3, 0.4, 0.5, 0.6, 0.7], [0, 1, 0, 0, 1, 1], [6])
GROUPED = ([0.1, 0.9, 0.2, 0.8, 0.4, 1.7], [1, 1, 1, 0, 1, 0], [2, 3, 1])
EXP = ([0.1, 0.2, 0.3, 4.0, 70.0], [10, 0, 0, 1, 5], [5])


def _table(scores, labels, groups):
    pa = pytest.importorskip("pyarrow")
    return pa.table({"query": np.repeat(np.arange(len(groups)), groups), "item": np.arange(len(scores)),
                     "score": np.asarray(scores, dtype=np.float64), "label": np.asarray(labels, dtype=np.float64)})


def _ours(data, measure, convention, **opts) -> float:
    return float(ranklens.evaluate(_table(*data), None, [measure], convention=convention, **opts)[measure])


# -- XGBoost -------------------------------------------------------------------------------------

def _xgb(data, metric, **params) -> float:
    xgb = pytest.importorskip("xgboost")
    scores, labels, groups = data
    d = xgb.DMatrix(np.zeros((len(scores), 1)), label=np.asarray(labels, dtype=np.float32),
                    base_margin=np.asarray(scores, dtype=np.float32))
    d.set_group(groups)
    p = {"objective": "rank:ndcg", "eval_metric": [metric], "eta": 0.0, "nthread": 1, **params}
    bst = xgb.train(p, d, num_boost_round=0)
    return float(bst.eval(d, "d").rsplit(":", 1)[1])


# (test function, data, XGBoost metric, ranklens measure, literal, tolerance of the literal in the C++ test)
XGB_CASES = [
    ("VerifyPrecision", TWO, "pre", "precision", 0.5, 1e-7),
    ("VerifyPrecision", FOUR, "pre", "precision", 0.5, 1e-7),
    ("VerifyPrecision", TWO, "pre@2", "precision@2", 0.5, 1e-7),
    ("VerifyPrecision", FOUR, "pre@2", "P@2", 0.5, 1e-3),
    ("VerifyPrecision", SIX, "pre@4", "P@4", 0.5, 1e-7),
    ("short group (pre@k divides by min(k, n))", ([0.2, 0.3], [0, 1], [2]), "pre@4", "P@4", 0.5, 1e-7),
    ("VerifyNDCG", TWO, "ndcg", "ndcg", 1.0, 1e-10),
    ("VerifyNDCG", FOUR, "ndcg", "ndcg", 0.6509, 1e-3),
    ("VerifyNDCG", TWO, "ndcg@2", "ndcg@2", 1.0, 1e-10),
    ("VerifyNDCG", FOUR, "ndcg@2", "ndcg@2", 0.3868, 1e-3),
    ("VerifyNDCG", TWO, "ndcg-", "ndcg-", 1.0, 1e-10),
    ("VerifyNDCG", FOUR, "ndcg-", "ndcg-", 0.6509, 1e-3),
    ("VerifyNDCG", TWO, "ndcg@2-", "ndcg@2-", 1.0, 1e-10),
    ("VerifyMAP", TWO, "map", "map", 1.0, 1e-6),
    ("VerifyMAP", FOUR, "map", "map", 0.5, 1e-3),
    ("VerifyMAP", GROUPED, "map", "map", 0.8611, 1e-3),
    ("VerifyMAP", TWO, "map@2", "map@2", 1.0, 1e-10),
    ("VerifyMAP", FOUR, "map@2", "map@2", 0.25, 1e-3),
    ("VerifyMAP map- on the grouped case", GROUPED, "map-", "map-", None, None),
    ("VerifyNDCGExpGain", EXP, "ndcg", "ndcg", 0.409738, 1e-6),
]


@pytest.mark.parametrize("test, data, metric, measure, literal, tol", XGB_CASES,
                         ids=[f"{c[0]}-{c[2]}-{len(c[1][0])}" for c in XGB_CASES])
def test_xgboost_case(test, data, metric, measure, literal, tol):
    expected = _xgb(data, metric)
    if literal is not None:
        assert expected == pytest.approx(literal, abs=tol)
    assert _ours(data, measure, "xgboost") == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("metric, measure", [("pre@2", "P@2"), ("map", "map"), ("map@2", "map@2")])
def test_xgboost_graded_labels_refused(metric, measure):
    # XGBoost refuses pre and map on graded labels ("can only be used with binary labels"): ranklens too
    xgb = pytest.importorskip("xgboost")
    data = ([0.1, 0.9, 0.1, 0.9], [0, 0, 2, 1], [4])
    with pytest.raises(xgb.core.XGBoostError, match="binary labels"):
        _xgb(data, metric)
    with pytest.raises(ranklens.errors.RanklensError, match="binary labels"):
        _ours(data, measure, "xgboost")


def test_xgboost_ndcg_linear_gain():
    # VerifyNDCGExpGain: ndcg_exp_gain=false gives 0.695694; the predictions equal to the labels give 1
    expected = _xgb(EXP, "ndcg", ndcg_exp_gain=False)
    assert expected == pytest.approx(0.695694, abs=1e-6)
    assert _ours(EXP, "ndcg", "xgboost", gain="linear") == pytest.approx(expected, abs=1e-6)
    perfect = (EXP[1], EXP[1], EXP[2])
    assert _xgb(perfect, "ndcg") == pytest.approx(1.0, abs=1e-6)
    assert _ours(perfect, "ndcg", "xgboost") == pytest.approx(1.0, abs=1e-12)


def test_xgboost_mismatched_lengths_refused():
    # EXPECT_ANY_THROW(GetMetricEval(metric, {0, 1}, {}, ...)): scores without labels
    with pytest.raises(ranklens.errors.RanklensError):
        evaluate_arrays(np.array([0, 0]), np.array([0.0, 1.0]), np.array([]), ["ndcg"], convention="xgboost")


# -- LightGBM and CatBoost on the same groups and on seeded tie-heavy groups ---------------------

def _random_groups(seed: int, n_groups: int = 40):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 9, size=n_groups)
    n = int(sizes.sum())
    labels = rng.choice([0, 0, 0, 1, 1, 2, 3], size=n)
    scores = rng.integers(0, 4, size=n) / 2.0  # few distinct values: ties in most groups
    return scores.tolist(), labels.tolist(), sizes.tolist()


def _lgb(data, metric: str, k: int) -> float:
    lgb = pytest.importorskip("lightgbm")
    scores, labels, groups = data
    ds = lgb.Dataset(np.zeros((len(scores), 1)), label=np.asarray(labels, dtype=np.float64), group=groups,
                     init_score=np.asarray(scores, dtype=np.float64), params={"verbose": -1}, free_raw_data=False)
    params = {"objective": "lambdarank", "metric": metric, "eval_at": [k], "verbose": -1, "num_threads": 1,
              "min_data_in_leaf": 1, "min_data_in_bin": 1}
    bst = lgb.Booster(params=params, train_set=ds)
    (row,) = [r for r in bst.eval_train() if r[1] == f"{metric}@{k}"]
    return float(row[2])


LGB_DATA = [("two", TWO), ("four", FOUR), ("six", SIX), ("grouped", GROUPED), ("exp", EXP),
            ("random", _random_groups(18))]


@pytest.mark.parametrize("k", [1, 2, 3, 5])
@pytest.mark.parametrize("name, data", LGB_DATA, ids=[d[0] for d in LGB_DATA])
def test_lightgbm_ndcg(name, data, k):
    assert _ours(data, f"ndcg@{k}", "lightgbm") == pytest.approx(_lgb(data, "ndcg", k), abs=1e-9)


@pytest.mark.parametrize("k", [1, 2, 3, 5])
@pytest.mark.parametrize("name, data", LGB_DATA, ids=[d[0] for d in LGB_DATA])
def test_lightgbm_map(name, data, k):
    assert _ours(data, f"map@{k}", "lightgbm") == pytest.approx(_lgb(data, "map", k), abs=1e-9)


def _cb(data, metric: str) -> float:
    cb_utils = pytest.importorskip("catboost.utils")
    scores, labels, groups = data
    gid = np.repeat(np.arange(len(groups)), groups).tolist()
    return float(cb_utils.eval_metric(list(map(float, labels)), list(map(float, scores)), metric, group_id=gid)[0])


CB_DATA = [("four", FOUR), ("six", SIX), ("exp", EXP), ("random", _random_groups(19))]


CB_METRICS = [("NDCG:top=3", "ndcg@3"), ("NDCG", "ndcg"), ("NDCG:top=1", "ndcg@1"), ("DCG:top=3", "dcg@3"),
              ("PrecisionAt:top=3", "P@3"), ("RecallAt:top=3", "recall@3"), ("MAP:top=3", "map@3"),
              ("MRR:top=3", "mrr@3"), ("MRR", "mrr")]
CB_CASES = [(n, d, m, ours) for n, d in CB_DATA for m, ours in CB_METRICS]


@pytest.mark.parametrize("name, data, metric, measure", CB_CASES, ids=[f"{c[0]}-{c[2]}" for c in CB_CASES])
def test_catboost(name, data, metric, measure):
    assert _ours(data, measure, "catboost") == pytest.approx(_cb(data, metric), abs=1e-9)


@pytest.mark.parametrize("name, data", CB_DATA, ids=[d[0] for d in CB_DATA])
def test_catboost_err_refused(name, data):
    # CatBoost's ERR takes the raw label as the stopping probability: not reproduced, so refused, never a
    # different number (CatBoost itself gives one: 0.5 on the four-item group, 3.0 on labels up to 10)
    assert np.isfinite(_cb(data, "ERR:top=3"))
    with pytest.raises(ranklens.errors.RanklensError, match="ERR"):
        _ours(data, "err@3", "catboost")


def _lambdarank(split: str):
    """LightGBM's own examples/lambdarank data (tests/data/lightgbm-lambdarank, SOURCE.md): labels, query sizes and
    the predictions of the model described there."""
    import gzip
    from pathlib import Path

    d = Path(__file__).resolve().parents[1] / "data" / "lightgbm-lambdarank"
    with gzip.open(d / f"rank.{split}.gz", "rt") as f:
        labels = [float(line.split(None, 1)[0]) for line in f]
    groups = [int(x) for x in (d / f"rank.{split}.query").read_text().split()]
    pred = [float(x) for x in (d / f"rank.{split}.pred").read_text().split()]
    return pred, labels, groups


@pytest.mark.parametrize("k", [1, 3, 5, 10])
@pytest.mark.parametrize("split", ["train", "test"])
def test_lightgbm_ndcg_on_its_example_data(split, k):
    data = _lambdarank(split)
    assert _ours(data, f"ndcg@{k}", "lightgbm") == pytest.approx(_lgb(data, "ndcg", k), abs=1e-12)


@pytest.mark.parametrize("k", [1, 3, 5, 10])
@pytest.mark.parametrize("split", ["train", "test"])
def test_lightgbm_map_on_its_example_data(split, k):
    data = _lambdarank(split)
    assert _ours(data, f"map@{k}", "lightgbm") == pytest.approx(_lgb(data, "map", k), abs=1e-12)
