"""ranklens measures in XGBoost training: ``custom_metric`` of ``xgb.train``, a callback for ``XGBRanker``.

The public face of this module is :mod:`ranklens.xgboost`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .._base.renamed import renamed_keywords
from .._defs.conventions import Convention
from .._defs.measures import Measure
from .._defs.presets import get_convention
from ..errors import InvalidParameterError
from .grouped import GroupedMetric, measure_list

__all__ = ["XGBoostMetric", "custom_metric", "eval_callback"]

_PER_QUERY_CALL = (
    "XGBRanker calls a callable `eval_metric` once per query, without query ids, so a ranklens metric "
    "cannot be evaluated there; pass `callbacks=[ranklens.xgboost.eval_callback(eval_set, eval_qid=...)]` "
    "to XGBRanker instead (or use xgb.train with custom_metric=)."
)


class XGBoostMetric(GroupedMetric):
    """A ranklens metric for ``xgb.train(custom_metric=...)`` (see :func:`custom_metric`).

    Called as ``metric(predt, dmatrix)``; returns ``[(name, value), ...]``, one per measure.
    """

    @property
    def __name__(self) -> str:  # XGBoost's scikit-learn wrapper names a callable metric by it
        return self.names[0]

    def __call__(self, predt: Any, dmatrix: Any) -> list[tuple[str, float]]:
        if not hasattr(dmatrix, "get_uint_info"):
            raise InvalidParameterError(_PER_QUERY_CALL)
        ptr = np.asarray(dmatrix.get_uint_info("group_ptr"), dtype=np.int64)
        if ptr.size < 2:
            raise InvalidParameterError(
                "the DMatrix has no query groups: build it with `qid=` (or `group=`), as for a ranking objective."
            )
        weights = dmatrix.get_weight()
        res = self.data_sets.evaluate(self.measures, self.convention, dmatrix.get_label(), predt, np.diff(ptr),
                                      weights if weights.size else None, where="the DMatrix")
        return [(name, float(res.aggregate[m.key])) for name, m in zip(self.names, self.measures)]


@renamed_keywords(metrics="measures")
def custom_metric(
    measures: str | Measure | Iterable[str | Measure] = "ndcg@10",
    convention: str | Convention | None = "xgboost",
    *,
    prefix: str = "ranklens_",
    **overrides: Any,
) -> XGBoostMetric:
    """A metric for ``xgb.train(custom_metric=...)``, evaluated over the query groups of each DMatrix.

    Parameters
    ----------
    measures : str or list of str, default="ndcg@10"
        Measures, as for :func:`ranklens.evaluate`.
    convention : str or Convention, default="xgboost"
        The default reproduces XGBoost's ``ndcg@k`` (float32 scores, gain ``2**label - 1``, queries
        without a relevant item score 1; ``ndcg@10-`` scores them 0); any preset or Convention works.
    prefix : str, default="ranklens_"
        Put before each measure key in the logged names. XGBoost's early stopping minimises a metric
        whose name it does not know: pass ``maximize=True`` to ``xgb.train``.
    **overrides
        Convention field overrides.

    Returns
    -------
    XGBoostMetric

    Examples
    --------
    >>> import numpy as np
    >>> import xgboost as xgb
    >>> d = xgb.DMatrix(np.zeros((4, 1)), label=[1, 0, 0, 2], qid=[0, 0, 1, 1])
    >>> custom_metric("ndcg@2")(np.array([0.2, 0.9, 0.1, 0.5], dtype=np.float32), d)  # doctest: +ELLIPSIS
    [('ranklens_ndcg@2', 0.8154648767857...)]
    """
    return XGBoostMetric(measure_list(measures, where="ranklens.xgboost.custom_metric"),
                         get_convention(convention, **overrides), prefix)


_CALLBACK_CLASS: list[type] = []


def _callback_class() -> type:
    """XGBoost's TrainingCallback subclass, made on first use (xgboost imported only then)."""
    if _CALLBACK_CLASS:
        return _CALLBACK_CLASS[0]
    from .._base.deps import require

    xgb = require("xgboost")

    # xgboost, an optional dependency, is imported here at run time: mypy does not know its classes
    class RanklensEvalCallback(xgb.callback.TrainingCallback):  # type: ignore[name-defined]
        """Evaluates ranklens measures on given sets after every round; optional early stopping."""

        def __init__(self, sets: list[tuple[str, Any]], metric: XGBoostMetric,
                     rounds: int | None, data_name: str, stop_metric: str) -> None:
            super().__init__()
            self.sets, self.metric, self.rounds = sets, metric, rounds
            self.data_name, self.stop_metric = data_name, stop_metric
            self.best_score = -np.inf
            self.best_iteration = -1
            self.history: dict[str, dict[str, list[float]]] = {}

        def before_training(self, model: Any) -> Any:
            self.best_score, self.best_iteration, self.history = -np.inf, -1, {}
            return model

        def after_iteration(self, model: Any, epoch: int, evals_log: Any) -> bool:
            score = None
            for name, dmat in self.sets:
                pred = model.predict(dmat, iteration_range=(0, epoch + 1), output_margin=True)
                for metric_key, value in self.metric(pred, dmat):
                    self.history.setdefault(name, {}).setdefault(metric_key, []).append(value)
                    evals_log.setdefault(name, {}).setdefault(metric_key, []).append(value)
                    if name == self.data_name and metric_key == self.stop_metric:
                        score = value
            if self.rounds is None or score is None:
                return False
            if score > self.best_score:
                self.best_score, self.best_iteration = score, epoch
                model.set_attr(best_iteration=str(epoch), best_score=str(score))
            return epoch - self.best_iteration >= self.rounds

    _CALLBACK_CLASS.append(RanklensEvalCallback)
    return RanklensEvalCallback


@renamed_keywords(metrics="measures")
def eval_callback(
    eval_set: Sequence[tuple[Any, Any]],
    measures: str | Measure | Iterable[str | Measure] = "ndcg@10",
    convention: str | Convention | None = "xgboost",
    *,
    eval_qid: Sequence[Any] | None = None,
    eval_group: Sequence[Any] | None = None,
    names: Sequence[str] | None = None,
    early_stopping_rounds: int | None = None,
    prefix: str = "ranklens_",
    **overrides: Any,
) -> Any:
    """A training callback evaluating ranklens measures on ranked sets after every round.

    For ``XGBRanker(callbacks=[...])`` (and ``xgb.train(callbacks=[...])``): XGBRanker gives a callable
    ``eval_metric`` one query at a time with no query ids; this callback holds the sets with their
    query ids and evaluates each whole set in one call.

    Parameters
    ----------
    eval_set : list of (X, y)
        Feature matrices and labels, as in ``XGBRanker.fit(eval_set=...)``.
    measures : str or list of str, default="ndcg@10"
        Measures, as for :func:`ranklens.evaluate`.
    convention : str or Convention, default="xgboost"
        As for :func:`custom_metric`.
    eval_qid : list of array-like, optional
        One query id per row of each set (rows of a query consecutive), as in ``XGBRanker.fit``.
    eval_group : list of array-like, optional
        Sizes of consecutive queries of each set, instead of ``eval_qid``.
    names : list of str, optional
        Names in ``evals_result()`` (default ``ranklens_0``, ``ranklens_1``...).
    early_stopping_rounds : int, optional
        Stop when the first measure on the last set has not improved for this many rounds; the best
        round becomes the booster's ``best_iteration`` (``XGBRanker.predict`` uses it).
    prefix : str, default="ranklens_"
        Put before each measure key in the logged names.
    **overrides
        Convention field overrides.

    Returns
    -------
    xgboost.callback.TrainingCallback
        Its ``history`` holds ``{set name: {metric name: [value per round]}}``; ``best_iteration``
        and ``best_score`` the early-stopping outcome.

    Examples
    --------
    >>> import numpy as np
    >>> import xgboost as xgb
    >>> rng = np.random.default_rng(0)
    >>> X, y, qid = rng.normal(size=(40, 3)), rng.integers(0, 3, 40), np.repeat(np.arange(4), 10)
    >>> cb = eval_callback([(X, y)], "ndcg@5", eval_qid=[qid])
    >>> ranker = xgb.XGBRanker(n_estimators=3, callbacks=[cb]).fit(X, y, qid=qid)
    >>> len(ranker.evals_result()["ranklens_0"]["ranklens_ndcg@5"])
    3
    """
    from .._base.deps import require

    xgb = require("xgboost")
    metric = custom_metric(measures, convention, prefix=prefix, **overrides)
    if isinstance(eval_set, tuple) or not isinstance(eval_set, Sequence) or not eval_set:
        raise InvalidParameterError("`eval_set` must be a non-empty list of (X, y) pairs.")
    ids = eval_qid if eval_qid is not None else eval_group
    if ids is None or (eval_qid is not None and eval_group is not None):
        raise InvalidParameterError("give either `eval_qid` or `eval_group` (one entry per set of `eval_set`).")
    if len(ids) != len(eval_set):
        raise InvalidParameterError(f"`eval_set` has {len(eval_set)} sets but eval_qid/eval_group has {len(ids)}.")
    names = list(names) if names is not None else [f"ranklens_{i}" for i in range(len(eval_set))]
    if len(names) != len(eval_set) or len(set(names)) != len(names) or any("-" in n for n in names):
        raise InvalidParameterError("`names` must be distinct, one per set, without '-' (XGBoost splits on it).")
    if early_stopping_rounds is not None and (isinstance(early_stopping_rounds, bool) or early_stopping_rounds < 1):
        raise InvalidParameterError(f"`early_stopping_rounds` must be None or >= 1; got {early_stopping_rounds!r}.")
    sets = []
    for name, pair, q in zip(names, eval_set, ids):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise InvalidParameterError("each entry of `eval_set` must be an (X, y) pair.")
        X, y = pair
        kw = {"qid": np.asarray(q)} if eval_qid is not None else {"group": np.asarray(q)}
        sets.append((name, xgb.DMatrix(X, label=y, **kw)))
    return _callback_class()(sets, metric, early_stopping_rounds, names[-1], metric.names[0])
