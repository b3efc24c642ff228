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

__all__ = ["LightGBMMetric", "feval"]


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
