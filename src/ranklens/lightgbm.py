"""ranklens measures as LightGBM evaluation metrics: ``feval`` of ``lgb.train``, ``eval_metric`` of ``LGBMRanker``.

>>> import ranklens.lightgbm
>>> metric = ranklens.lightgbm.feval("ndcg@10")       # LightGBM's own ndcg@10, to the last bit
>>> metric = ranklens.lightgbm.feval(["ndcg@10", "map@10"], convention="trec_eval")  # any measure and convention

``lgb.train(params, train_set, valid_sets=[valid], feval=metric, callbacks=[lgb.early_stopping(20)])``
early-stops on it (set ``"metric": "None"`` in ``params`` to stop on ranklens' number alone);
``LGBMRanker().fit(X, y, group=..., eval_set=[...], eval_group=[...], eval_metric=metric)`` takes the
same object. Each call is one :func:`ranklens.evaluate` over the whole data set (no loop over queries).

This module does not import lightgbm: a metric reads the labels, groups and weights LightGBM hands it.
"""

from ._integrations.lightgbm import (
    LightGBMMetric,
    feval,
)

__all__ = [
    "LightGBMMetric",
    "feval",
]
