"""Ranklens measures as one CatBoost custom evaluation metric that knows the query groups.

CatBoost hands a custom metric the predictions, labels and weights of a data set, never its group
ids. :func:`eval_metric` is given the pools (training and evaluation) up front and recognises each
data set CatBoost evaluates by its labels (their number and a checksum), so each call is one
:func:`ranklens.evaluate` over the whole set, grouped by query:

>>> import ranklens.catboost
>>> # metric = ranklens.catboost.eval_metric("ndcg@10", train_pool, valid_pool)
>>> # CatBoostRanker(loss_function="YetiRank", eval_metric=metric).fit(train_pool, eval_set=valid_pool,
>>> #                                                                   early_stopping_rounds=20)

Several measures in one fit: ``eval_metric(["ndcg@10", "map", "p@5"], train_pool, valid_pool,
names=["train", "valid"])`` gives CatBoost the first (it logs, optimises and early-stops on it) and records
every measure at every evaluation in ``metric.history["valid"]["map"]`` (a list, one value per iteration).

The default convention reproduces CatBoost's own ``NDCG:top=10`` (linear gain, tied items least
relevant first, queries whose ideal DCG is not positive score 1). This module does not import
catboost: it reads the pools through their methods.
"""

from ._integrations.catboost import (
    CatBoostMetric,
    eval_metric,
)

__all__ = [
    "CatBoostMetric",
    "eval_metric",
]
