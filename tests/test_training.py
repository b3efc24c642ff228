"""Training-loop metrics, by real training with early stopping on the LightGBM lambdarank sample.

Each peer's own metric, logged beside ours in the same training, is the expected value: LightGBM's
``ndcg@k`` (``evals_result``), XGBoost's ``ndcg@k`` / ``ndcg@k-``, CatBoost's ``NDCG:top=k``; the
scikit-learn scorer is checked against ``sklearn.metrics.ndcg_score`` per query on refitted folds.
"""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import numpy as np
import pytest

import ranklens
import ranklens.catboost
import ranklens.lightgbm
import ranklens.xgboost
from ranklens.errors import InvalidParameterError
from ranklens.evaluate import evaluate_arrays

DATA = Path(__file__).parent / "data" / "lightgbm-lambdarank"
pytestmark = pytest.mark.peer


def _load(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(str(DATA / f"rank.{name}.gz"), n_features=300)
    group = np.loadtxt(DATA / f"rank.{name}.query", dtype=np.int64)
    return X.toarray(), y, group


@pytest.fixture(scope="module")
def train():
    return _load("train")


@pytest.fixture(scope="module")
def test():
    return _load("test")


def _sklearn_ndcg_per_query(y, pred, group, k):
    """scikit-learn's ndcg_score, query by query, averaged (the peer's own definition per query)."""
    from sklearn.metrics import ndcg_score

    out, start = [], 0
    for size in group:
        out.append(ndcg_score([y[start:start + size]], [pred[start:start + size]], k=k))
        start += size
    return float(np.mean(out))


# -- LightGBM ---------------------------------------------------------------------------------------------
def test_lightgbm_feval_equals_lightgbm_ndcg_every_iteration_and_early_stops(train, test):
    lgb = pytest.importorskip("lightgbm")
    X, y, g = train
    Xt, yt, gt = test
    params = {"objective": "lambdarank", "metric": "ndcg", "eval_at": [10], "learning_rate": 0.1,
              "num_leaves": 15, "min_data_in_leaf": 50, "verbose": -1, "num_threads": 1, "deterministic": True,
              "force_row_wise": True, "seed": 0}
    dtrain = lgb.Dataset(X, y, group=g)
    dvalid = lgb.Dataset(Xt, yt, group=gt, reference=dtrain)
    log: dict = {}
    booster = lgb.train(params, dtrain, num_boost_round=40, valid_sets=[dtrain, dvalid], valid_names=["train", "valid"],
                        feval=ranklens.lightgbm.feval("ndcg@10"),
                        callbacks=[lgb.record_evaluation(log), lgb.early_stopping(5, verbose=False)])
    exact = total = 0
    for name in ("train", "valid"):  # train has all-zero queries: LightGBM scores them 1
        theirs, ours = np.array(log[name]["ndcg@10"]), np.array(log[name]["ranklens_ndcg@10"])
        assert len(ours) == len(theirs) >= 6
        # ranklens/lightgbm.py's claim: LightGBM's own values to within a few units in the last place
        assert np.abs(ours - theirs).max() <= 4 * np.finfo(np.float64).eps
        exact, total = exact + int((ours == theirs).sum()), total + len(ours)
    # ... and not always to the last bit (LightGBM multiplies by 1 / log2(i + 2) and by the inverse ideal DCG,
    # then sums query by query): if this fails, every value now agrees bit for bit, and the docstring should say so
    assert exact < total, (exact, total)
    # early stopping: on ranklens' number alone (LightGBM's own metric switched off)
    params_only_ours = dict(params, metric="None")
    log2: dict = {}
    b2 = lgb.train(params_only_ours, dtrain, num_boost_round=40, valid_sets=[dvalid], valid_names=["valid"],
                   feval=ranklens.lightgbm.feval("ndcg@10"),
                   callbacks=[lgb.record_evaluation(log2), lgb.early_stopping(5, verbose=False)])
    curve = np.array(log2["valid"]["ranklens_ndcg@10"])
    assert list(log2["valid"]) == ["ranklens_ndcg@10"]
    assert b2.best_iteration == int(np.argmax(curve)) + 1
    assert len(curve) <= 40 and (len(curve) == 40 or len(curve) == b2.best_iteration + 5)
    assert booster.best_iteration >= 1


def test_lightgbm_feval_other_convention_equals_sklearn_and_works_in_lgbmranker(test, train):
    lgb = pytest.importorskip("lightgbm")
    X, y, g = train
    Xt, yt, gt = test
    metric = ranklens.lightgbm.feval(["ndcg@5", "ndcg@10"], convention="sklearn")
    ranker = lgb.LGBMRanker(n_estimators=8, learning_rate=0.1, num_leaves=15, min_child_samples=50, verbose=-1,
                            n_jobs=1, deterministic=True, force_row_wise=True, random_state=0)
    ranker.fit(X, y, group=g, eval_X=(Xt,), eval_y=(yt,), eval_group=[gt], eval_metric=metric, eval_at=[10],
               callbacks=[lgb.early_stopping(3, verbose=False)])
    res = ranker.evals_result_["valid_0"]
    assert len(res["ranklens_ndcg@10"]) == len(res["ndcg@10"]) >= 4
    # the best iteration's value (the model keeps those trees): scikit-learn's ndcg_score per query
    best = ranker.best_iteration_
    pred = ranker.predict(Xt)
    assert res["ranklens_ndcg@5"][best - 1] == pytest.approx(_sklearn_ndcg_per_query(yt, pred, gt, 5), abs=1e-12)
    assert res["ranklens_ndcg@10"][best - 1] == pytest.approx(_sklearn_ndcg_per_query(yt, pred, gt, 10), abs=1e-12)


def test_a_data_set_is_prepared_once_and_rebuilt_when_it_changes(monkeypatch):
    # the metric as LGBMRanker calls it: (y_true, y_pred, weight, group). By hand (LightGBM's ndcg@2, gain
    # 2**label - 1): q0 = (a: label 1, b: 0), q1 = (c: 0, d: 2)
    import ranklens._integrations.grouped as grouped

    built = []
    real = grouped.array_problem
    monkeypatch.setattr(grouped, "array_problem", lambda *a, **k: built.append(1) or real(*a, **k))
    metric = ranklens.lightgbm.feval("ndcg@2")
    y, group = np.array([1.0, 0.0, 0.0, 2.0]), np.array([2, 2])
    one = 1 / np.log2(3)
    # b above a: DCG(q0) = 1 / log2(3), ideal 1; d above c: 1
    assert metric(y, np.array([0.2, 0.9, 0.1, 0.5]), None, group)[0][1] == pytest.approx((one + 1) / 2, abs=1e-15)
    assert metric(y, np.array([0.9, 0.2, 0.1, 0.5]), None, group)[0][1] == 1.0  # a above b: both ideal
    assert metric(y, np.array([0.9, 0.2, 0.5, 0.1]), None, group)[0][1] == pytest.approx((1 + 1 / np.log2(3)) / 2)
    assert len(built) == 1  # the labels and groups were prepared once, only the scores changed
    y[:2] = [0.0, 1.0]  # the same array, changed in place: b is the relevant one now, ranked second
    assert metric(y, np.array([0.9, 0.2, 0.1, 0.5]), None, group)[0][1] == pytest.approx((one + 1) / 2, abs=1e-15)
    assert len(built) == 2
    # the same labels grouped otherwise: q0 = a alone (label 0: LightGBM scores an all-zero query 1); q1 = b, c, d
    # ranked b (1), d (2), c: DCG@2 = 1 + 3 / log2(3), ideal 3 + 1 / log2(3)
    v = metric(y, np.array([0.9, 0.6, 0.1, 0.5]), None, np.array([1, 3]))[0][1]
    assert len(built) == 3 and v == pytest.approx((1 + (1 + 3 * one) / (3 + one)) / 2, abs=1e-15)
    # a copy, or a pickle, of the metric starts with nothing prepared and gives the same numbers
    again = pickle.loads(pickle.dumps(metric))
    assert again(y, np.array([0.9, 0.2, 0.1, 0.5]), None, group)[0][1] == pytest.approx((one + 1) / 2, abs=1e-15)
    assert len(built) == 4


def test_lightgbm_feval_errors():
    with pytest.raises(InvalidParameterError, match="num_ret"):
        ranklens.lightgbm.feval("num_ret")
    with pytest.raises(InvalidParameterError, match="group"):
        ranklens.lightgbm.feval()(np.array([1.0, 0.0]), np.array([0.3, 0.1]), None, None)
    with pytest.raises(InvalidParameterError, match="add up to 3 rows"):
        ranklens.lightgbm.feval()(np.array([1.0, 0.0]), np.array([0.3, 0.1]), None, np.array([3]))


# -- XGBoost ----------------------------------------------------------------------------------------------
def test_xgboost_custom_metric_equals_xgboost_ndcg_every_round_and_early_stops(train, test):
    xgb = pytest.importorskip("xgboost")
    X, y, g = train
    Xt, yt, gt = test
    dtrain = xgb.DMatrix(X, y, group=g)
    dvalid = xgb.DMatrix(Xt, yt, group=gt)
    params = {"objective": "rank:ndcg", "eval_metric": ["ndcg@10", "ndcg@10-"], "eta": 0.1, "max_depth": 4,
              "nthread": 1, "seed": 0}
    log: dict = {}
    metric = ranklens.xgboost.custom_metric(["ndcg@10-", "ndcg@10"])
    booster = xgb.train(params, dtrain, num_boost_round=40, evals=[(dtrain, "train"), (dvalid, "valid")],
                        custom_metric=metric, maximize=True, early_stopping_rounds=5, evals_result=log,
                        verbose_eval=False)
    for name in ("train", "valid"):  # train has all-zero queries: 1 for ndcg@10, 0 for ndcg@10-
        for key in ("ndcg@10", "ndcg@10-"):
            theirs, ours = np.array(log[name][key]), np.array(log[name][f"ranklens_{key}"])
            assert len(ours) == len(theirs) >= 6
            assert np.abs(ours - theirs).max() <= 1e-6  # both as XGBoost's evaluation log prints them
    # early stopping watched the last metric on the last set: ranklens' ndcg@10 on valid
    curve = np.array(log["valid"]["ranklens_ndcg@10"])
    assert booster.best_iteration == int(np.argmax(curve))
    # full precision: the metric called directly on the best model's predictions, against XGBoost's eval
    pred = booster.predict(dvalid, iteration_range=(0, booster.best_iteration + 1))
    ours = dict(metric(pred, dvalid))["ranklens_ndcg@10"]
    assert ours == pytest.approx(curve[booster.best_iteration], abs=1e-6)


def test_xgbranker_eval_callback_equals_xgboost_ndcg_and_early_stops(train, test):
    xgb = pytest.importorskip("xgboost")
    X, y, g = train
    Xt, yt, gt = test
    qid, qidt = np.repeat(np.arange(len(g)), g), np.repeat(np.arange(len(gt)), gt)
    cb = ranklens.xgboost.eval_callback([(Xt, yt)], "ndcg@10", eval_qid=[qidt], names=["ours"],
                                        early_stopping_rounds=4)
    ranker = xgb.XGBRanker(n_estimators=60, learning_rate=0.3, max_depth=4, n_jobs=1, random_state=0,
                           eval_metric="ndcg@10", callbacks=[cb])
    ranker.fit(X, y, qid=qid, eval_set=[(Xt, yt)], eval_qid=[qidt], verbose=False)
    log = ranker.evals_result()
    theirs, ours = np.array(log["validation_0"]["ndcg@10"]), np.array(log["ours"]["ranklens_ndcg@10"])
    assert len(ours) == len(theirs) >= 5
    assert np.abs(ours - theirs).max() <= 1e-6
    best = int(np.argmax(ours))
    assert ranker.best_iteration == best
    assert len(ours) == best + 5 or len(ours) == 60  # stopped 4 rounds after the best
    # predict uses the best round
    direct = ranker.get_booster().predict(xgb.DMatrix(Xt), iteration_range=(0, best + 1))
    np.testing.assert_array_equal(ranker.predict(Xt), direct)


def test_xgbranker_callable_eval_metric_is_refused_with_the_way_out():
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X, y, qid = rng.normal(size=(30, 3)), rng.integers(0, 3, 30), np.repeat(np.arange(3), 10)
    ranker = xgb.XGBRanker(n_estimators=2, eval_metric=ranklens.xgboost.custom_metric("ndcg@5"))
    with pytest.raises(Exception, match="eval_callback"):
        ranker.fit(X, y, qid=qid, eval_set=[(X, y)], eval_qid=[qid], verbose=False)


# -- CatBoost ---------------------------------------------------------------------------------------------
def test_catboost_eval_metric_equals_catboost_ndcg_every_iteration(train, test):
    catboost = pytest.importorskip("catboost")
    X, y, g = train
    Xt, yt, gt = test
    tr = catboost.Pool(X, y, group_id=np.repeat(np.arange(len(g)), g))
    te = catboost.Pool(Xt, yt, group_id=np.repeat(np.arange(len(gt)), gt))
    metric = ranklens.catboost.eval_metric("ndcg@10", tr, te)
    model = catboost.CatBoostRanker(iterations=40, loss_function="YetiRank", eval_metric=metric,
                                    custom_metric=["NDCG:top=10", "NDCG:top=5;type=Exp"], verbose=0, thread_count=1,
                                    allow_writing_files=False,
                                    random_seed=0)
    model.fit(tr, eval_set=te, early_stopping_rounds=5)
    log = model.get_evals_result()["validation"]
    theirs, ours = np.array(log["NDCG:top=10;type=Base"]), np.array(log["ranklens_ndcg@10"])
    assert len(ours) == len(theirs) >= 6
    assert np.abs(ours - theirs).max() <= 1e-12
    assert model.get_best_iteration() == int(np.argmax(ours))  # early stopping on ranklens' metric
    # the exponential gain, one more CatBoost definition, on the final model's predictions
    exp = ranklens.catboost.eval_metric("ndcg@5", tr, te, gain="exponential")
    pred = model.predict(te)
    value, weight = exp.evaluate((pred,), yt.astype(np.float32), None)
    n_iter = model.tree_count_
    assert exp.get_final_error(value, weight) == pytest.approx(log["NDCG:top=5;type=Exp"][n_iter - 1], abs=1e-12)
    assert pickle.loads(pickle.dumps(metric)).name == "ranklens_ndcg@10"


def test_catboost_several_measures_in_one_fit_equal_staged_predictions(train, test):
    """One eval_metric, several measures: the first is CatBoost's (logged, early-stopped on), all are recorded
    per iteration and data set; each recorded value equals the measure of the model's staged predictions at
    that iteration, and ndcg@10 equals CatBoost's own NDCG:top=10 logged in the same fit."""
    catboost = pytest.importorskip("catboost")
    X, y, g = train
    Xt, yt, gt = test
    qid, qidt = np.repeat(np.arange(len(g)), g), np.repeat(np.arange(len(gt)), gt)
    tr, te = catboost.Pool(X, y, group_id=qid), catboost.Pool(Xt, yt, group_id=qidt)
    measures = ["ndcg@10", "map", "p@5", "rr", "ndcg@5"]
    metric = ranklens.catboost.eval_metric(measures, tr, te, names=["learn", "valid"])
    model = catboost.CatBoostRanker(iterations=30, loss_function="YetiRank", eval_metric=metric,
                                    custom_metric=["NDCG:top=10", "NDCG:top=5"], verbose=0, thread_count=1,
                                    allow_writing_files=False, random_seed=0, use_best_model=False)
    model.fit(tr, eval_set=te, early_stopping_rounds=5)
    log = model.get_evals_result()["validation"]
    rec = metric.history["valid"]  # recorded on the object given, though CatBoost fits with a copy
    assert sorted(metric.history) == ["learn", "valid"] and list(rec) == measures
    n = model.tree_count_
    assert len(rec["ndcg@10"]) == len(log["ranklens_ndcg@10"]) == n >= 6
    assert rec["ndcg@10"] == log["ranklens_ndcg@10"]  # the first measure is CatBoost's number
    assert model.get_best_iteration() == int(np.argmax(rec["ndcg@10"]))
    # CatBoost's own NDCG, where it defines the same measure
    assert np.abs(np.array(rec["ndcg@10"]) - log["NDCG:top=10;type=Base"]).max() <= 1e-12
    assert np.abs(np.array(rec["ndcg@5"]) - log["NDCG:top=5;type=Base"]).max() <= 1e-12
    # every measure, every iteration: ranklens.evaluate on the staged predictions, query by query
    staged = list(model.staged_predict(te, eval_period=1))
    assert len(staged) == n
    for it, pred in enumerate(staged):
        res = evaluate_arrays(qidt, pred, yt, measures, convention="catboost", per_query=False)
        for m in measures:
            assert rec[m][it] == pytest.approx(res[m], abs=1e-12), (m, it)
    # a deep copy records into the same history, a pickle into its own
    assert metric.history is copy.deepcopy(metric).history
    clone = pickle.loads(pickle.dumps(metric))
    assert clone.history == metric.history and clone.history is not metric.history and clone.measures == metric.measures


def test_catboost_metric_errors():
    m = ranklens.catboost.eval_metric("ndcg@3").add([1, 0, 2], group_id=[1, 1, 2])
    with pytest.raises(InvalidParameterError, match="4 rows whose query groups it was not given"):
        m.evaluate((np.zeros(4),), np.zeros(4, np.float32), None)
    with pytest.raises(InvalidParameterError, match="2 names for 0 pools"):
        ranklens.catboost.eval_metric(["ndcg@3", "map"], names=["a", "b"])
    with pytest.raises(InvalidParameterError, match="two data sets are named 'a'"):
        m.add([2, 0, 1], group_id=[1, 1, 2], name="a").add([0, 0, 1], group_id=[1, 1, 2], name="a")
    with pytest.raises(InvalidParameterError, match="group_id"):
        ranklens.catboost.eval_metric("ndcg@3").add([1, 0], group_id=[1])


# -- scikit-learn -----------------------------------------------------------------------------------------
def test_ranking_scorer_in_gridsearchcv_with_groupkfold(test):
    sklearn = pytest.importorskip("sklearn")
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GridSearchCV, GroupKFold

    from ranklens.sklearn import make_ranking_scorer

    X, y, g = test
    qid = np.repeat(np.arange(len(g)), g)
    cv = GroupKFold(n_splits=3)
    grid = {"alpha": [0.1, 100.0]}
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(Ridge(), grid, cv=cv, scoring=make_ranking_scorer("ndcg@10", convention="sklearn"))
        search.fit(X, y, groups=qid)
        splits = list(cv.split(X, y, groups=qid))
    for ci, alpha in enumerate(grid["alpha"]):
        for si, (tr, te) in enumerate(splits):
            pred = Ridge(alpha=alpha).fit(X[tr], y[tr]).predict(X[te])
            _, sizes = np.unique(qid[te], return_counts=True)  # rows of a query are consecutive and sorted
            expected = _sklearn_ndcg_per_query(y[te], pred, sizes, 10)
            assert search.cv_results_[f"split{si}_test_score"][ci] == pytest.approx(expected, abs=1e-12)


def test_ranking_scorer_without_routing_says_how():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.linear_model import Ridge

    from ranklens.sklearn import make_ranking_scorer

    X, y = np.arange(8.0).reshape(4, 2), np.array([1, 0, 0, 1])
    scorer = make_ranking_scorer("ndcg@2")
    est = Ridge().fit(X, y)
    with pytest.raises(InvalidParameterError, match="enable_metadata_routing"):
        scorer(est, X, y)
    with sklearn.config_context(enable_metadata_routing=True):
        value = scorer(est, X, y, groups=[0, 0, 1, 1])
    assert value == pytest.approx(_sklearn_ndcg_per_query(y, est.predict(X), [2, 2], 2), abs=1e-12)
    with pytest.raises(InvalidParameterError, match="one measure"):
        make_ranking_scorer(["ndcg", "map"])


def test_weighted_queries_equal_lightgbm_and_xgboost(train, test):
    """Query weights, with the peers' own quirk (an all-zero query adds 1 unweighted): the train set has 3."""
    lgb = pytest.importorskip("lightgbm")
    xgb = pytest.importorskip("xgboost")
    X, y, g = train
    rng = np.random.default_rng(1)
    qw = rng.uniform(0.5, 2.0, size=len(g))
    row_w = np.repeat(qw, g)
    params = {"objective": "lambdarank", "metric": "ndcg", "eval_at": [5], "verbose": -1, "num_threads": 1,
              "min_data_in_leaf": 50, "deterministic": True, "force_row_wise": True, "seed": 0}
    dtrain = lgb.Dataset(X, y, group=g, weight=row_w)
    log: dict = {}
    lgb.train(params, dtrain, num_boost_round=5, valid_sets=[dtrain], valid_names=["train"],
              feval=ranklens.lightgbm.feval("ndcg@5"), callbacks=[lgb.record_evaluation(log)])
    assert np.abs(np.array(log["train"]["ndcg@5"]) - np.array(log["train"]["ranklens_ndcg@5"])).max() <= 1e-12
    d = xgb.DMatrix(X, y, group=g)
    d.set_weight(qw)  # XGBoost's ranking weights are per group
    xlog: dict = {}
    xgb.train({"objective": "rank:ndcg", "eval_metric": "ndcg@5", "nthread": 1, "max_depth": 3}, d,
              num_boost_round=5, evals=[(d, "train")], custom_metric=ranklens.xgboost.custom_metric("ndcg@5"),
              evals_result=xlog, verbose_eval=False)
    assert np.abs(np.array(xlog["train"]["ndcg@5"]) - np.array(xlog["train"]["ranklens_ndcg@5"])).max() <= 1e-6


def test_metric_modules_do_not_import_the_libraries():
    import subprocess
    import sys

    code = ("import sys, ranklens.lightgbm, ranklens.xgboost, ranklens.catboost, ranklens.sklearn; "
            "print([m for m in ('lightgbm', 'xgboost', 'catboost', 'sklearn') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_query_weights_are_lightgbms_float32_means_in_row_order():
    """Per-query weights by the definition LightGBM uses: a float32 sum of the rows in order, divided in
    float32 by the size; queries of any length in any order, empty ones dropped."""
    from ranklens._integrations.grouped import query_weights

    rng = np.random.default_rng(1)
    sizes = rng.integers(0, 40, 300)
    w = rng.random(int(sizes.sum())) * 3
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    expected = []
    for s, n in zip(starts, sizes):
        if n:
            acc = np.float32(0)
            for x in w[s:s + n].astype(np.float32):
                acc = np.float32(acc + x)
            expected.append(float(np.float32(acc / np.float32(n))))
    assert query_weights(w, sizes, how="lightgbm").tolist() == expected
    assert query_weights(w, sizes, how="first").tolist() == [w[s] for s, n in zip(starts, sizes) if n]
