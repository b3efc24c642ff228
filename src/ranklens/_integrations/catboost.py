"""A ranklens measure as a CatBoost custom evaluation metric that knows the query groups.

The public face of this module is :mod:`ranklens.catboost`.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from .._base.renamed import renamed_keywords
from .._defs.conventions import Convention
from .._defs.measures import Measure
from .._defs.presets import get_convention
from ..errors import InvalidParameterError
from .grouped import DataSets, measure_list, metric_name

__all__ = ["CatBoostMetric", "eval_metric"]


def _fingerprint(labels: np.ndarray) -> tuple[int, int]:
    """A data set's key: its number of rows and a checksum of its labels as CatBoost holds them (float32)."""
    lab = np.ascontiguousarray(labels, dtype=np.float32)
    return int(lab.shape[0]), zlib.crc32(lab.tobytes())


def _run_sizes(ids: np.ndarray) -> np.ndarray:
    """Sizes of the runs of equal ids (CatBoost's groups are consecutive rows)."""
    if ids.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    heads = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
    return np.diff(np.append(heads, ids.shape[0])).astype(np.int64)


class CatBoostMetric:
    """A CatBoost custom metric over query groups (see :func:`eval_metric`).

    CatBoost calls ``evaluate(approxes, target, weight)`` and ``get_final_error(error, weight)``;
    the data set is recognised by its labels among those registered with :meth:`add`.
    """

    #: CatBoost compiles a custom metric's methods with numba unless this is set; ours call Python.
    no_jit = True

    def __init__(self, measure: Measure, convention: Convention, prefix: str) -> None:
        self.measure = measure
        self.convention = convention
        self.prefix = prefix
        self.name = metric_name(prefix, measure)
        self._sets: dict[tuple[int, int], tuple[np.ndarray, str]] = {}
        self.data_sets = DataSets()  # each set's problem, built at its first evaluation

    def add(self, data: Any, group_id: Any = None, *, name: str | None = None) -> CatBoostMetric:
        """Register a data set: a ``catboost.Pool`` with group ids, or labels with ``group_id``.

        Returns the metric, so that calls can be chained.
        """
        if group_id is None:
            if not (hasattr(data, "get_label") and hasattr(data, "get_group_id_hash")):
                raise InvalidParameterError(
                    "ranklens.catboost: give a catboost.Pool built with `group_id=`, or labels and `group_id=`."
                )
            labels = np.asarray(data.get_label(), dtype=np.float64)
            ids = np.asarray(data.get_group_id_hash())
            if ids.shape[0] != labels.shape[0]:
                raise InvalidParameterError("ranklens.catboost: the Pool has no group ids; build it with `group_id=`.")
        else:
            labels = np.asarray(data, dtype=np.float64).reshape(-1)
            ids = np.asarray(group_id).reshape(-1)
            if ids.shape[0] != labels.shape[0]:
                raise InvalidParameterError(
                    f"ranklens.catboost: `group_id` has {ids.shape[0]} values for {labels.shape[0]} labels."
                )
        key = _fingerprint(labels)
        sizes = _run_sizes(ids)
        if key in self._sets and not np.array_equal(self._sets[key][0], sizes):
            raise InvalidParameterError(
                "ranklens.catboost: two data sets have the same labels in the same order but different groups; "
                "the metric could not tell them apart."
            )
        self._sets[key] = (sizes, name or f"set {len(self._sets)}")
        return self

    # -- CatBoost's interface ----------------------------------------------------------------------
    def is_max_optimal(self) -> bool:
        return True

    def evaluate(self, approxes: Any, target: Any, weight: Any) -> tuple[float, float]:
        if len(approxes) != 1:
            raise InvalidParameterError("ranklens.catboost: expected one prediction per row (a ranking model).")
        target = np.asarray(target)
        found = self._sets.get(_fingerprint(target))
        if found is None:
            raise InvalidParameterError(
                f"ranklens.catboost: CatBoost evaluated {self.name} on a data set of {target.shape[0]} rows whose "
                "query "
                "groups it was not given; pass every Pool that is trained or evaluated on (training set included) "
                "to ranklens.catboost.eval_metric(...)."
            )
        res = self.data_sets.evaluate([self.measure], self.convention, target, approxes[0], found[0], weight,
                                      how="first", where="the CatBoost data set")
        return float(res.aggregate[self.measure.key]), 1.0

    def get_final_error(self, error: float, weight: float) -> float:
        return error / weight if weight else error

    def __reduce__(self) -> tuple[Any, ...]:  # the class is made per name (see _named)
        return _restore, (self.measure, self.convention, self.prefix, self._sets)

    def __repr__(self) -> str:
        return f"<CatBoostMetric {self.name} convention={self.convention.name!r}, {len(self._sets)} data sets>"


def _named(measure: Measure, convention: Convention, prefix: str) -> CatBoostMetric:
    """A CatBoostMetric whose class is named after the metric: CatBoost names a custom metric by its
    class (``get_evals_result()["validation"]["ranklens_ndcg@10"]``)."""
    name = metric_name(prefix, measure)
    cls = type(name, (CatBoostMetric,), {"__module__": __name__, "__doc__": CatBoostMetric.__doc__})
    return cls(measure, convention, prefix)


def _restore(measure: Measure, convention: Convention, prefix: str, sets: dict[Any, Any]) -> CatBoostMetric:
    out = _named(measure, convention, prefix)
    out._sets = dict(sets)
    return out


@renamed_keywords(metric="measure")
def eval_metric(
    measure: str | Measure = "ndcg@10",
    *data: Any,
    convention: str | Convention | None = "catboost",
    prefix: str = "ranklens_",
    **overrides: Any,
) -> CatBoostMetric:
    """A custom ``eval_metric`` for CatBoost that evaluates one ranklens measure over query groups.

    Parameters
    ----------
    measure : str, default="ndcg@10"
        One measure (CatBoost's custom metrics give one number), as for :func:`ranklens.evaluate`.
    *data : catboost.Pool
        Every data set CatBoost will evaluate the metric on: the training pool (CatBoost evaluates an
        ``eval_metric`` on it too) and the evaluation pools, each built with ``group_id=``. Labels
        with their group ids can be registered later with :meth:`CatBoostMetric.add`.
    convention : str or Convention, default="catboost"
        The default reproduces CatBoost's ``NDCG:top=k`` (``type=Base``); any preset or Convention works.
    prefix : str, default="ranklens_"
        Put before the measure key in the metric's name.
    **overrides
        Convention field overrides (``gain="exponential"`` gives CatBoost's ``NDCG:type=Exp``).

    Returns
    -------
    CatBoostMetric
        Its class is named after the metric (``ranklens_ndcg@10``), the name CatBoost gives it in
        ``get_evals_result()`` and ``best_score_``.

    Examples
    --------
    >>> import numpy as np
    >>> m = eval_metric("ndcg@2").add([1, 0, 0, 2], group_id=[7, 7, 9, 9])
    >>> value, weight = m.evaluate((np.array([0.2, 0.9, 0.1, 0.5]),), np.array([1, 0, 0, 2], np.float32), None)
    >>> round(m.get_final_error(value, weight), 6)  # query 7: 1/log2(3); query 9: 1
    0.815465
    """
    if not isinstance(measure, (str, Measure)):
        raise InvalidParameterError(
            "`measure` of ranklens.catboost.eval_metric must be one measure (CatBoost's custom metrics give one "
            "number); "
            f"got {measure!r}. Make one metric per measure."
        )
    measures = measure_list(measure, where="ranklens.catboost.eval_metric")
    out = _named(measures[0], get_convention(convention, **overrides), prefix)
    for d in data:
        out.add(d)
    return out
