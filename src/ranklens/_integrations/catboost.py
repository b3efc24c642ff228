"""Ranklens measures as one CatBoost custom evaluation metric that knows the query groups.

The public face of this module is :mod:`ranklens.catboost`.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
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
    the data set is recognised by its labels among those registered with :meth:`add`. Each call
    evaluates every measure in one pass, gives CatBoost the first and appends all of them to
    :attr:`history`.

    Attributes
    ----------
    measures : list of Measure
        The measures; the first is the value CatBoost logs, optimises and early-stops on.
    measure : Measure
        The first measure.
    history : dict of str to dict of str to list of float
        ``history[set_name][measure_key]``: one value per evaluation of that data set, in order (one per
        iteration unless CatBoost's ``metric_period`` skips some). Copies made by :func:`copy.deepcopy`
        (CatBoost copies its parameters before fitting) share it; a pickle starts with its own copy.
    """

    #: CatBoost compiles a custom metric's methods with numba unless this is set; ours call Python.
    no_jit = True

    def __init__(self, measures: list[Measure], convention: Convention, prefix: str) -> None:
        self.measures = list(measures)
        self.measure = self.measures[0]
        self.convention = convention
        self.prefix = prefix
        self.name = metric_name(prefix, self.measure)
        self._sets: dict[tuple[int, int], tuple[np.ndarray, str]] = {}
        self.history: dict[str, dict[str, list[float]]] = {}
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
        if name is not None and not isinstance(name, str):
            raise InvalidParameterError(f"ranklens.catboost: `name` must be a string; got {name!r}.")
        taken = {n for k, (_, n) in self._sets.items() if k != key}
        name = name or f"set {len(self._sets)}"
        if name in taken:
            raise InvalidParameterError(f"ranklens.catboost: two data sets are named {name!r}; give each its own "
                                        "`name=`.")
        self._sets[key] = (sizes, name)
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
        res = self.data_sets.evaluate(self.measures, self.convention, target, approxes[0], found[0], weight,
                                      how="first", where="the CatBoost data set")
        record = self.history.setdefault(found[1], {m.key: [] for m in self.measures})
        for m in self.measures:
            record[m.key].append(float(res.aggregate[m.key]))
        return float(res.aggregate[self.measure.key]), 1.0

    def get_final_error(self, error: float, weight: float) -> float:
        return error / weight if weight else error

    def __reduce__(self) -> tuple[Any, ...]:  # the class is made per name (see _named)
        return _restore, (self.measures, self.convention, self.prefix, self._sets, self.history)

    def __deepcopy__(self, memo: Any) -> CatBoostMetric:
        """A copy that records into the same :attr:`history` (CatBoost deep-copies its parameters in ``fit``)."""
        out = _restore(self.measures, self.convention, self.prefix, self._sets, {})
        out.history = self.history
        out.data_sets = self.data_sets
        return out

    def __repr__(self) -> str:
        keys = ", ".join(m.key for m in self.measures)
        return (f"<CatBoostMetric {self.name} ({keys}) convention={self.convention.name!r}, "
                f"{len(self._sets)} data sets>")


def _named(measures: list[Measure], convention: Convention, prefix: str) -> CatBoostMetric:
    """A CatBoostMetric whose class is named after its first measure: CatBoost names a custom metric by its
    class (``get_evals_result()["validation"]["ranklens_ndcg@10"]``)."""
    name = metric_name(prefix, measures[0])
    cls = type(name, (CatBoostMetric,), {"__module__": __name__, "__doc__": CatBoostMetric.__doc__})
    return cls(measures, convention, prefix)


def _restore(measures: list[Measure], convention: Convention, prefix: str, sets: dict[Any, Any],
             history: dict[str, dict[str, list[float]]]) -> CatBoostMetric:
    out = _named(measures, convention, prefix)
    out._sets = dict(sets)
    out.history = {s: {k: list(v) for k, v in h.items()} for s, h in history.items()}
    return out


@renamed_keywords(metric="measure")
def eval_metric(
    measure: str | Measure | Iterable[str | Measure] = "ndcg@10",
    *data: Any,
    convention: str | Convention | None = "catboost",
    prefix: str = "ranklens_",
    names: Iterable[str] | None = None,
    **overrides: Any,
) -> CatBoostMetric:
    """A custom ``eval_metric`` for CatBoost that evaluates ranklens measures over query groups.

    Parameters
    ----------
    measure : str or list of str, default="ndcg@10"
        One measure, or several (a list, or ``"ndcg@10 map p@5"``), as for :func:`ranklens.evaluate`.
        CatBoost's custom metrics give it one number: the first measure, the one CatBoost logs, optimises
        and early-stops on. Every measure is computed in the same pass and recorded, per data set and
        evaluation, in :attr:`CatBoostMetric.history` (CatBoost's ``custom_metric`` refuses Python metric
        objects, so this is the way to follow several ranklens measures in one fit).
    *data : catboost.Pool
        Every data set CatBoost will evaluate the metric on: the training pool (CatBoost evaluates an
        ``eval_metric`` on it too) and the evaluation pools, each built with ``group_id=``. Labels
        with their group ids can be registered later with :meth:`CatBoostMetric.add`.
    names : list of str, optional
        One name per pool in ``data``, the keys of :attr:`CatBoostMetric.history` (default
        ``"set 0"``, ``"set 1"``... in the order given).
    convention : str or Convention, default="catboost"
        The default reproduces CatBoost's ``NDCG:top=k`` (``type=Base``); any preset or Convention works.
    prefix : str, default="ranklens_"
        Put before the measure key in the metric's name.
    **overrides
        Convention field overrides (``gain="exponential"`` gives CatBoost's ``NDCG:type=Exp``).

    Returns
    -------
    CatBoostMetric
        Its class is named after the first measure (``ranklens_ndcg@10``), the name CatBoost gives it in
        ``get_evals_result()`` and ``best_score_``.

    Examples
    --------
    >>> import numpy as np
    >>> m = eval_metric("ndcg@2").add([1, 0, 0, 2], group_id=[7, 7, 9, 9])
    >>> value, weight = m.evaluate((np.array([0.2, 0.9, 0.1, 0.5]),), np.array([1, 0, 0, 2], np.float32), None)
    >>> round(m.get_final_error(value, weight), 6)  # query 7: 1/log2(3); query 9: 1
    0.815465

    Several measures: the first is CatBoost's number, all are recorded.

    >>> m = eval_metric(["ndcg@2", "p@1"]).add([1, 0, 0, 2], group_id=[7, 7, 9, 9], name="valid")
    >>> _ = m.evaluate((np.array([0.2, 0.9, 0.1, 0.5]),), np.array([1, 0, 0, 2], np.float32), None)
    >>> {k: [round(v, 6) for v in vals] for k, vals in m.history["valid"].items()}  # p@1: (0 + 1) / 2
    {'ndcg@2': [0.815465], 'p@1': [0.5]}
    """
    measures = measure_list(measure, where="ranklens.catboost.eval_metric")
    out = _named(measures, get_convention(convention, **overrides), prefix)
    given = None if names is None else ([names] if isinstance(names, str) else list(names))
    if given is not None and len(given) != len(data):
        raise InvalidParameterError(
            f"`names` of ranklens.catboost.eval_metric has {len(given)} names for {len(data)} pools."
        )
    for i, d in enumerate(data):
        out.add(d, name=None if given is None else given[i])
    return out
