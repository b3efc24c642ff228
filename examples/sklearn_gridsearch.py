"""Tune a scikit-learn model by NDCG@10 per query: GridSearchCV, GroupKFold and metadata routing.

    python examples/sklearn_gridsearch.py

``make_ranking_scorer`` asks scikit-learn to route ``groups`` (one query id per row) to it, the same
``groups`` ``GroupKFold`` splits on: folds keep queries whole and each fold is scored query by query.
"""

import numpy as np
import sklearn
from lambdarank_data import load
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, GroupKFold

from ranklens.sklearn import make_ranking_scorer

sklearn.set_config(enable_metadata_routing=True)

X, y, group = load("train")
qid = np.repeat(np.arange(len(group)), group)  # one query id per row
search = GridSearchCV(
    Ridge(),  # a pointwise model; any scikit-learn regressor or pipeline works the same way
    {"alpha": [0.1, 10.0, 1000.0]},
    cv=GroupKFold(n_splits=3),
    # ranklens' default convention: linear gain, ties averaged, queries without a relevant item left out
    # (convention="sklearn" refuses the sample's one-document query, as ndcg_score does)
    scoring={"ndcg@10": make_ranking_scorer("ndcg@10"),
             "map@10": make_ranking_scorer("map@10", convention="trec_eval")},
    refit="ndcg@10",
)
search.fit(X, y, groups=qid)
print(f"best parameters {search.best_params_}: NDCG@10 {search.best_score_:.4f} (mean over folds), "
      f"MAP@10 {search.cv_results_['mean_test_map@10'][search.best_index_]:.4f}")
