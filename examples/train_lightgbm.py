"""Train a LightGBM ranker with early stopping on ranklens' NDCG@10 (LightGBM's own definition).

    python examples/train_lightgbm.py

``ranklens.lightgbm.feval`` plugs into ``lgb.train(feval=...)`` and ``LGBMRanker.fit(eval_metric=...)``;
by default it reproduces LightGBM's ``ndcg@10`` exactly, and any other measure or convention
(e.g. scikit-learn's NDCG, the one you will report) can be monitored and early-stopped on instead.
"""

import lightgbm as lgb
import numpy as np
from lambdarank_data import load

import ranklens.lightgbm

X, y, group = load("train")
X_valid, y_valid, group_valid = load("test")
params = {"objective": "lambdarank", "metric": "ndcg", "eval_at": [10], "learning_rate": 0.1, "num_leaves": 15,
          "min_data_in_leaf": 50, "verbose": -1, "seed": 0, "deterministic": True, "force_row_wise": True,
          "num_threads": 2}

# 1. lgb.train: LightGBM's ndcg@10 and ranklens' side by side: the same numbers
train_set = lgb.Dataset(X, y, group=group)
valid_set = lgb.Dataset(X_valid, y_valid, group=group_valid, reference=train_set)
log = {}
booster = lgb.train(params, train_set, num_boost_round=100, valid_sets=[valid_set], valid_names=["valid"],
                    feval=ranklens.lightgbm.feval("ndcg@10"),
                    callbacks=[lgb.record_evaluation(log), lgb.early_stopping(10, verbose=False)])
gap = np.abs(np.array(log["valid"]["ndcg@10"]) - np.array(log["valid"]["ranklens_ndcg@10"])).max()
print(f"lgb.train: best iteration {booster.best_iteration}, ndcg@10 {booster.best_score['valid']['ndcg@10']:.6f}; "
      f"largest gap to LightGBM's own ndcg@10 over {len(log['valid']['ndcg@10'])} iterations: {gap:.1e}")

# 2. early stopping on the number you will report: scikit-learn's NDCG@10 (linear gain, ties averaged)
report = ranklens.lightgbm.feval("ndcg@10", convention="sklearn", prefix="sklearn_")
booster = lgb.train(dict(params, metric="None"), train_set, num_boost_round=100, valid_sets=[valid_set],
                    valid_names=["valid"], feval=report, callbacks=[lgb.early_stopping(10, verbose=False)])
print(f"early-stopped on scikit-learn's NDCG@10: best iteration {booster.best_iteration}, "
      f"{booster.best_score['valid']['sklearn_ndcg@10']:.6f}")

# 3. the scikit-learn API
ranker = lgb.LGBMRanker(n_estimators=100, learning_rate=0.1, num_leaves=15, min_child_samples=50, verbose=-1,
                        random_state=0, n_jobs=2)
ranker.fit(X, y, group=group, eval_X=(X_valid,), eval_y=(y_valid,), eval_group=[group_valid],
           eval_metric=ranklens.lightgbm.feval(["ndcg@10", "map@10"], convention="trec_eval"), eval_at=[10],
           callbacks=[lgb.early_stopping(10, verbose=False)])
print(f"LGBMRanker: best iteration {ranker.best_iteration_}, "
      + ", ".join(f"{k} {v:.4f}" for k, v in ranker.best_score_["valid_0"].items()))
