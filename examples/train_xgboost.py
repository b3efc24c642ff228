"""Train XGBoost rankers with early stopping on ranklens' NDCG@10: ``xgb.train`` and ``XGBRanker``.

    python examples/train_xgboost.py

* ``xgb.train(custom_metric=ranklens.xgboost.custom_metric(...), maximize=True)``: the metric reads the
  query groups of each DMatrix; by default it is XGBoost's own ``ndcg@10``.
* ``XGBRanker`` gives a callable ``eval_metric`` one query at a time, without query ids; pass
  ``callbacks=[ranklens.xgboost.eval_callback(...)]`` instead: it holds the sets with their query ids,
  logs into ``evals_result()`` and early-stops (``best_iteration`` is then used by ``predict``).
"""

import numpy as np
import xgboost as xgb
from lambdarank_data import load

import ranklens.xgboost

X, y, group = load("train")
X_valid, y_valid, group_valid = load("test")

# 1. xgb.train with a custom metric (maximize=True: XGBoost does not know the name)
dtrain, dvalid = xgb.DMatrix(X, y, group=group), xgb.DMatrix(X_valid, y_valid, group=group_valid)
log = {}
booster = xgb.train({"objective": "rank:ndcg", "eval_metric": "ndcg@10", "eta": 0.1, "max_depth": 4, "seed": 0},
                    dtrain, num_boost_round=100, evals=[(dvalid, "valid")],
                    custom_metric=ranklens.xgboost.custom_metric("ndcg@10"), maximize=True,
                    early_stopping_rounds=10, evals_result=log, verbose_eval=False)
gap = np.abs(np.array(log["valid"]["ndcg@10"]) - np.array(log["valid"]["ranklens_ndcg@10"])).max()
print(f"xgb.train: best iteration {booster.best_iteration}, score {booster.best_score:.6f}; largest gap to "
      f"XGBoost's own ndcg@10 (as its log prints them) over {len(log['valid']['ndcg@10'])} rounds: {gap:.1e}")

# 2. XGBRanker: the callback, here on scikit-learn's NDCG@10 (the number to report)
qid = np.repeat(np.arange(len(group)), group)
qid_valid = np.repeat(np.arange(len(group_valid)), group_valid)
callback = ranklens.xgboost.eval_callback([(X_valid, y_valid)], "ndcg@10", convention="sklearn",
                                          eval_qid=[qid_valid], names=["valid"], early_stopping_rounds=10)
ranker = xgb.XGBRanker(n_estimators=100, learning_rate=0.1, max_depth=4, random_state=0, callbacks=[callback])
ranker.fit(X, y, qid=qid)
curve = ranker.evals_result()["valid"]["ranklens_ndcg@10"]
print(f"XGBRanker: {len(curve)} rounds, best iteration {ranker.best_iteration}, "
      f"scikit-learn NDCG@10 {curve[ranker.best_iteration]:.6f}")
