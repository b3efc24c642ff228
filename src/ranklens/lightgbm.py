"""ranklens measures as LightGBM evaluation metrics: ``feval`` of ``lgb.train``, ``eval_metric`` of ``LGBMRanker``.

>>> import ranklens.lightgbm
>>> metric = ranklens.lightgbm.feval("ndcg@10")       # LightGBM's own ndcg@10 (to within 1e-15, see below)
>>> metric = ranklens.lightgbm.feval(["ndcg@10", "map@10"], convention="trec_eval")  # any measure and convention

``lgb.train(params, train_set, valid_sets=[valid], feval=metric, callbacks=[lgb.early_stopping(20)])``
early-stops on it (set ``"metric": "None"`` in ``params`` to stop on ranklens' number alone);
``LGBMRanker().fit(X, y, group=..., eval_set=[...], eval_group=[...], eval_metric=metric)`` takes the
same object. Each call is one evaluation of the whole data set (no loop over queries); the labels, groups and
weights, which do not change between rounds, are prepared once per data set and only the new scores are ordered.

The default convention is LightGBM's definition of ``ndcg@k``, query by query, and its weighted mean; the
numbers agree with LightGBM's own to within a few units in the last place (1e-15), not always to the last bit:
LightGBM multiplies each gain by ``1 / log2(i + 2)`` and the DCG by the inverse of the ideal DCG, and adds the
queries' values one after the other in each of its threads, where ranklens divides (by ``log(i + 1) / log 2``,
then by the ideal DCG) and adds pairwise (tests/test_training.py counts how many agree to the last bit).

``query_ranker(**params)`` is a ``lightgbm.LGBMRanker`` fitted with one query id per row (``fit(X, y, qid=ids)``,
as ``XGBRanker``) instead of group sizes, so that ``GridSearchCV`` tunes it with
:func:`ranklens.sklearn.make_ranking_scorer` through metadata routing
(``query_ranker(...).set_fit_request(qid=True)``, ``search.fit(X, y, groups=qid, qid=qid)``).

This module does not import lightgbm: a metric reads the labels, groups and weights LightGBM hands it, and
``query_ranker``'s class is built on first use.
"""

from ._integrations.lightgbm import (
    LightGBMMetric,
    feval,
    query_ranker,
)

__all__ = [
    "LightGBMMetric",
    "feval",
    "query_ranker",
]

