"""ranklens measures in XGBoost training: ``custom_metric`` of ``xgb.train``, a callback for ``XGBRanker``.

>>> import ranklens.xgboost
>>> metric = ranklens.xgboost.custom_metric("ndcg@10")  # XGBoost's own ndcg@10 (float32 scores, exp gain)

* ``xgb.train(params, dtrain, evals=[(dvalid, "valid")], custom_metric=metric, maximize=True,
  early_stopping_rounds=20)``: the metric reads the query groups of each DMatrix. Pass
  ``maximize=True``: XGBoost guesses the direction from the name and would minimise ``ranklens_...``.
* ``XGBRanker``: it calls a callable ``eval_metric`` once per query with no query ids, so a ranklens
  metric cannot go there; use :func:`eval_callback` instead:
  ``XGBRanker(callbacks=[ranklens.xgboost.eval_callback([(X_valid, y_valid)], eval_qid=[qid_valid],
  early_stopping_rounds=20)])``. It evaluates the sets it is given after every round (one
  prediction and one :func:`ranklens.evaluate` call per set), logs into ``evals_result()``, stops
  early and sets ``best_iteration``, which ``predict`` then uses. It works with ``xgb.train`` too.

xgboost is imported only by :func:`eval_callback` (a callback must subclass XGBoost's class).
"""

from ._integrations.xgboost import (
    XGBoostMetric,
    custom_metric,
    eval_callback,
)

__all__ = [
    "XGBoostMetric",
    "custom_metric",
    "eval_callback",
]
