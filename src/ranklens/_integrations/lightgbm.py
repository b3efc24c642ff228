"""ranklens measures as LightGBM evaluation metrics: ``feval`` of ``lgb.train``, ``eval_metric`` of ``LGBMRanker``.

The public face of this module is :mod:`ranklens.lightgbm`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .._base.renamed import renamed_keywords
from .._defs.conventions import Convention
from .._defs.measures import Measure
from .._defs.presets import get_convention
from ..errors import InvalidParameterError
from .grouped import GroupedMetric, measure_list

__all__ = ["LightGBMMetric", "feval", "query_ranker"]


class LightGBMMetric(GroupedMetric):
    """A ranklens evaluation metric LightGBM can call (see :func:`feval`).

    Called as ``metric(preds, dataset)`` by ``lgb.train`` (``feval=``) and as
    ``metric(y_true, y_pred, weight, group)`` by the scikit-learn API (``eval_metric=``); returns one
    ``(name, value, True)`` per measure (higher is better).

    Attributes
    ----------
    measures : list of Measure
    convention : Convention
    names : list of str
        The names LightGBM logs (``prefix + measure key``).
    """

    def __call__(self, preds: Any, data: Any, weight: Any = None, group: Any = None) -> list[tuple[str, float, bool]]:
        if hasattr(data, "get_label") and hasattr(data, "get_group"):  # lgb.train: (preds, Dataset)
            labels, group, weight = data.get_label(), data.get_group(), data.get_weight()
            y_pred = preds
        else:  # the scikit-learn API: (y_true, y_pred, weight, group)
            labels, y_pred = preds, data
        if group is None:
            raise InvalidParameterError(
                "the LightGBM data set has no query groups: build it with `group=` (lgb.Dataset(..., group=sizes), "
                "LGBMRanker.fit(..., group=sizes, eval_group=[sizes, ...]))."
            )
        res = self.data_sets.evaluate(self.measures, self.convention, labels, y_pred, np.asarray(group, dtype=np.int64),
                                      weight, how="lightgbm", where="the LightGBM data set")
        return [(name, float(res.aggregate[m.key]), True) for name, m in zip(self.names, self.measures)]


@renamed_keywords(metrics="measures")
def feval(
    measures: str | Measure | Iterable[str | Measure] = "ndcg@10",
    convention: str | Convention | None = "lightgbm",
    *,
    prefix: str = "ranklens_",
    **overrides: Any,
) -> LightGBMMetric:
    """An evaluation metric for ``lgb.train(feval=...)`` and ``LGBMRanker.fit(eval_metric=...)``.

    Parameters
    ----------
    measures : str or list of str, default="ndcg@10"
        Measures, as for :func:`ranklens.evaluate` (``"ndcg@10"``, ``"map"``, ``"err@20"``...).
    convention : str or Convention, default="lightgbm"
        The default reproduces LightGBM's own ``ndcg@k`` (gain ``2**label - 1``, ties in input order,
        queries without a relevant item score 1, its weighting quirk); any preset or Convention works.
    prefix : str, default="ranklens_"
        Put before each measure key in the names LightGBM logs (``ranklens_ndcg@10``), so that they do
        not collide with LightGBM's own metrics in ``evals_result``.
    **overrides
        Convention field overrides, e.g. ``gain="linear"``.

    Returns
    -------
    LightGBMMetric

    Examples
    --------
    A data set LightGBM would hand the metric (two queries of two rows):

    >>> import numpy as np
    >>> import lightgbm as lgb
    >>> ds = lgb.Dataset(np.arange(4.0).reshape(4, 1), label=[1, 0, 0, 2], group=[2, 2],
    ...                  params={"verbose": -1, "min_data_in_bin": 1}).construct()
    >>> metric = feval("ndcg@2")
    >>> [(name, round(value, 6)) for name, value, _ in metric(np.array([0.2, 0.9, 0.1, 0.5]), ds)]
    [('ranklens_ndcg@2', 0.815465)]
    """
    return LightGBMMetric(measure_list(measures, where="ranklens.lightgbm.feval"),
                          get_convention(convention, **overrides), prefix)


#: The class :func:`query_ranker` builds (once: lightgbm is imported on first use only).
_QUERY_RANKER: Any = None


def _group_sizes(qid: Any, n_rows: int, where: str) -> np.ndarray:
    """The sizes of the runs of equal consecutive query ids (LightGBM's ``group``); a query whose rows are not
    consecutive, or a length other than the rows', is refused."""
    q = np.asarray(qid)
    if q.ndim != 1 or q.shape[0] != n_rows:
        raise InvalidParameterError(f"`{where}` must hold one query id per row ({n_rows} rows); got shape {q.shape}.")
    if n_rows == 0:
        return np.zeros(0, np.int64)
    heads = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    if heads.shape[0] != np.unique(q).shape[0]:
        raise InvalidParameterError(f"`{where}`: the rows of a query must be consecutive (sort the rows by query id); "
                                    "LightGBM reads a query as a run of consecutive rows.")
    return np.diff(np.r_[heads, n_rows]).astype(np.int64)


def _query_ranker_class() -> Any:
    """The class of :func:`query_ranker` (built once, on first use: it subclasses ``lightgbm.LGBMRanker``)."""
    global _QUERY_RANKER
    if _QUERY_RANKER is None:
        from .._base.deps import require

        lgb = require("lightgbm")

        class QueryRanker(lgb.LGBMRanker):  # type: ignore[name-defined]
            """``lightgbm.LGBMRanker`` fitted with one query id per row: ``fit(X, y, qid=ids)`` (the rows of a
            query consecutive), ``eval_qid=ids`` (a tuple for several) beside ``eval_X``/``eval_y``; every other
            parameter is LGBMRanker's. Tunable with ``GridSearchCV`` through metadata routing
            (``set_fit_request(qid=True)``)."""

            def fit(self, X: Any, y: Any, *, qid: Any = None, eval_qid: Any = None, **kwargs: Any) -> Any:
                if qid is None:
                    raise InvalidParameterError("QueryRanker.fit needs `qid`, one query id per row (with "
                                                "GridSearchCV: set_fit_request(qid=True) and fit(..., qid=qid)).")
                if "group" in kwargs or "eval_group" in kwargs:
                    raise InvalidParameterError("QueryRanker.fit takes `qid` and `eval_qid` (one id per row), not "
                                                "`group` and `eval_group`.")
                # the labels of each evaluation set: eval_y=y or a tuple of them (LightGBM 4.6 on), or
                # eval_set=[(X, y), ...]; eval_qid alike (one array of ids, or a tuple or list of them)
                ey = kwargs.get("eval_y")
                eval_ys = (list(ey) if isinstance(ey, tuple) else [ey] if ey is not None else
                           [e[1] for e in kwargs["eval_set"]] if kwargs.get("eval_set") is not None else [])
                if eval_qid is not None and not isinstance(eval_qid, (tuple, list)):
                    eval_qid = [eval_qid]
                if eval_ys:
                    if eval_qid is None or len(eval_qid) != len(eval_ys):
                        raise InvalidParameterError("`eval_qid` must give one query id per row of each evaluation "
                                                    "set.")
                    kwargs["eval_group"] = [_group_sizes(q, len(ey), "eval_qid") for ey, q in zip(eval_ys, eval_qid)]
                return super().fit(X, y, group=_group_sizes(qid, len(y), "qid"), **kwargs)

        QueryRanker.__module__ = __name__  # pickled by name: this module's __getattr__ gives it back
        QueryRanker.__qualname__ = "QueryRanker"
        _QUERY_RANKER = QueryRanker
    return _QUERY_RANKER


def query_ranker(**params: Any) -> Any:
    """A ``lightgbm.LGBMRanker`` (``params`` are its own) whose ``fit`` takes one query id per row (``qid=``, as
    ``XGBRanker``) instead of group sizes, so that scikit-learn's metadata routing can hand each fold its rows'
    ids and ``GridSearchCV`` can tune it with :func:`ranklens.sklearn.make_ranking_scorer`.

    ``fit(X, y, qid=ids, eval_X=..., eval_y=..., eval_qid=ids, **kwargs)``: the rows of a query must be
    consecutive (LightGBM reads a query as a run of rows; refused otherwise); ``eval_qid`` gives the ids of the
    evaluation set (a tuple of them for several); every other argument is ``LGBMRanker.fit``'s.

    Examples
    --------
    >>> import numpy as np, sklearn
    >>> from sklearn.model_selection import GridSearchCV, GroupKFold
    >>> from ranklens.sklearn import make_ranking_scorer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(120, 3)); qid = np.repeat(np.arange(12), 10); y = (X[:, 0] > 0).astype(int)
    >>> ranker = query_ranker(n_estimators=5, min_child_samples=5, verbose=-1, n_jobs=1)
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     search = GridSearchCV(ranker.set_fit_request(qid=True), {"num_leaves": [3, 7]}, cv=GroupKFold(3),
    ...                           scoring=make_ranking_scorer("ndcg@5")).fit(X, y, groups=qid, qid=qid)
    >>> type(search.best_estimator_).__name__, bool(0 < search.best_score_ <= 1)
    ('QueryRanker', True)
    """
    return _query_ranker_class()(**params)


def __getattr__(name: str) -> Any:
    if name == "QueryRanker":  # the class of query_ranker(), by name (pickle)
        return _query_ranker_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
