"""Train a CatBoost ranker with early stopping on ranklens' NDCG@10 (CatBoost's own ``NDCG:top=10``).

    python examples/train_catboost.py

CatBoost gives a custom metric no group ids: ``ranklens.catboost.eval_metric`` is given the pools up
front (the training pool too: CatBoost evaluates the metric on it) and recognises each by its labels.
"""

import catboost
import numpy as np
from lambdarank_data import load

import ranklens.catboost

X, y, group = load("train")
X_valid, y_valid, group_valid = load("test")
train = catboost.Pool(X, y, group_id=np.repeat(np.arange(len(group)), group))
valid = catboost.Pool(X_valid, y_valid, group_id=np.repeat(np.arange(len(group_valid)), group_valid))

metric = ranklens.catboost.eval_metric("ndcg@10", train, valid)
model = catboost.CatBoostRanker(iterations=200, loss_function="YetiRank", eval_metric=metric,
                                custom_metric=["NDCG:top=10"], random_seed=0, verbose=0, allow_writing_files=False)
model.fit(train, eval_set=valid, early_stopping_rounds=10)
log = model.get_evals_result()["validation"]
gap = np.abs(np.array(log["NDCG:top=10;type=Base"]) - np.array(log["ranklens_ndcg@10"])).max()
print(f"CatBoostRanker: best iteration {model.get_best_iteration()}, "
      f"ranklens_ndcg@10 {model.get_best_score()['validation']['ranklens_ndcg@10']:.6f}; "
      f"largest gap to CatBoost's NDCG:top=10 over {len(log['ranklens_ndcg@10'])} iterations: {gap:.1e}")
