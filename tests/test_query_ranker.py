"""``ranklens.lightgbm.query_ranker`` (issue #33 point 8): LGBMRanker fitted with one query id per row, so that
GridSearchCV tunes it through metadata routing with ranklens' scorer; and the XGBRanker route, which takes
``qid`` itself. Expectations from LightGBM itself (the same booster as ``LGBMRanker.fit(group=sizes)``) and from
scikit-learn's ``ndcg_score`` in a cross-validation loop written out here."""

from __future__ import annotations

import numpy as np
import pytest

lgb = pytest.importorskip("lightgbm")
sklearn = pytest.importorskip("sklearn")
xgb = pytest.importorskip("xgboost")

from sklearn.base import clone  # noqa: E402
from sklearn.metrics import ndcg_score  # noqa: E402
from sklearn.model_selection import GridSearchCV, GroupKFold  # noqa: E402

import ranklens.lightgbm  # noqa: E402
from ranklens.errors import InvalidParameterError  # noqa: E402
from ranklens.sklearn import make_ranking_scorer  # noqa: E402

PARAMS = {"n_estimators": 8, "min_child_samples": 5, "verbose": -1, "n_jobs": 1, "deterministic": True,
          "force_row_wise": True}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(240, 4))
    qid = np.repeat(np.arange(24), 10)
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5) + (X[:, 2] > 1.2)
    return X, y, qid


def _manual_cv(make, X, y, qid, fit):
    """Mean over GroupKFold folds of the mean over the fold's queries of scikit-learn's ndcg_score@5."""
    scores = []
    for train, test in GroupKFold(n_splits=3).split(X, y, qid):
        model = fit(make(), X[train], y[train], qid[train])
        pred = model.predict(X[test])
        per_q = [ndcg_score([y[test][qid[test] == q]], [pred[qid[test] == q]], k=5) for q in np.unique(qid[test])]
        scores.append(np.mean(per_q))
    return float(np.mean(scores))


def test_query_ranker_is_lgbmranker_with_group_sizes(data):
    X, y, qid = data
    QueryRanker = ranklens.lightgbm.query_ranker
    ours = QueryRanker(**PARAMS).fit(X, y, qid=qid)
    theirs = lgb.LGBMRanker(**PARAMS).fit(X, y, group=np.full(24, 10))
    assert np.array_equal(ours.predict(X), theirs.predict(X))
    assert type(clone(ours)) is type(ours) and type(ours).__name__ == "QueryRanker"
    assert clone(ours).get_params()["n_estimators"] == 8
    import pickle

    again = pickle.loads(pickle.dumps(ours))  # the class is found again by name
    assert type(again) is type(ours) and np.array_equal(again.predict(X), ours.predict(X))


def test_grid_search_through_metadata_routing_equals_the_loop_by_hand(data):
    X, y, qid = data
    QueryRanker = ranklens.lightgbm.query_ranker
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(QueryRanker(**PARAMS).set_fit_request(qid=True), {"num_leaves": [3, 7]},
                              cv=GroupKFold(n_splits=3), scoring=make_ranking_scorer("ndcg@5", convention="sklearn"))
        search.fit(X, y, groups=qid, qid=qid)
        xsearch = GridSearchCV(xgb.XGBRanker(n_estimators=8, n_jobs=1).set_fit_request(qid=True),
                               {"max_depth": [2, 4]}, cv=GroupKFold(n_splits=3),
                               scoring=make_ranking_scorer("ndcg@5", convention="sklearn"))
        xsearch.fit(X, y, groups=qid, qid=qid)
    for i, leaves in enumerate([3, 7]):
        by_hand = _manual_cv(lambda leaves=leaves: lgb.LGBMRanker(**PARAMS, num_leaves=leaves), X, y, qid,
                             lambda m, a, b, q: m.fit(a, b, group=np.unique(q, return_counts=True)[1]))
        assert search.cv_results_["mean_test_score"][i] == pytest.approx(by_hand, abs=1e-12)
    for i, depth in enumerate([2, 4]):
        by_hand = _manual_cv(lambda depth=depth: xgb.XGBRanker(n_estimators=8, n_jobs=1, max_depth=depth), X, y, qid,
                             lambda m, a, b, q: m.fit(a, b, qid=q))
        assert xsearch.cv_results_["mean_test_score"][i] == pytest.approx(by_hand, abs=1e-12)


def test_query_ranker_refuses_what_lightgbm_would_misread(data):
    X, y, qid = data
    QueryRanker = ranklens.lightgbm.query_ranker
    with pytest.raises(InvalidParameterError, match="consecutive"):
        QueryRanker(**PARAMS).fit(X, y, qid=np.tile(np.arange(24), 10))
    with pytest.raises(InvalidParameterError, match="needs `qid`"):
        QueryRanker(**PARAMS).fit(X, y)
    with pytest.raises(InvalidParameterError, match="one query id per row"):
        QueryRanker(**PARAMS).fit(X, y, qid=qid[:-1])
    # an evaluation set by query ids too: LightGBM logs ranklens' metric on it, as with eval_group=sizes
    fit, held = qid < 18, qid >= 18
    model = QueryRanker(**PARAMS).fit(X[fit], y[fit], qid=qid[fit], eval_X=X[held], eval_y=y[held],
                                      eval_qid=qid[held], eval_metric=ranklens.lightgbm.feval("ndcg@5"))
    ref = lgb.LGBMRanker(**PARAMS).fit(X[fit], y[fit], group=np.full(18, 10), eval_X=X[held], eval_y=y[held],
                                       eval_group=[np.full(6, 10)], eval_metric=ranklens.lightgbm.feval("ndcg@5"))
    assert model.evals_result_["valid_0"]["ranklens_ndcg@5"] == ref.evals_result_["valid_0"]["ranklens_ndcg@5"]
    with pytest.raises(InvalidParameterError, match="eval_qid"):
        QueryRanker(**PARAMS).fit(X[fit], y[fit], qid=qid[fit], eval_X=X[held], eval_y=y[held])
