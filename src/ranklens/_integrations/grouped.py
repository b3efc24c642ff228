"""Flat label / score arrays with group sizes or query ids -> :func:`ranklens.evaluate`.

The common core of the training-loop metrics (:mod:`ranklens.lightgbm`, :mod:`ranklens.xgboost`,
:mod:`ranklens.catboost`, :func:`ranklens.sklearn.make_ranking_scorer`): the data a booster holds
(labels, predictions, group sizes or pointers, weights) are evaluated in one
:func:`ranklens.evaluate.evaluate_arrays` call (items numbered by row). Group sizes become query codes
with ``np.repeat``; nothing loops over queries in Python.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.problem import Problem, array_problem
from .._core.result import Result
from .._defs.conventions import Convention
from .._defs.measures import Measure, parse_measures
from .._defs.presets import get_convention
from .._input.factorize import factorize_parts
from ..errors import InvalidParameterError

__all__ = ["DataSets", "GroupedMetric", "evaluate_grouped", "measure_list", "metric_name", "query_ids", "query_weights"]


def measure_list(given: str | Measure | Iterable[str | Measure], *, where: str) -> list[Measure]:
    """Parse the measures of a training-loop metric; refuse counts summed over queries."""
    if given is None:
        raise InvalidParameterError(f"`measures` of {where} is missing; give e.g. 'ndcg@10'.")
    measures = parse_measures(given)
    if not measures:
        raise InvalidParameterError(f"`measures` of {where} is empty; give e.g. 'ndcg@10'.")
    for m in measures:
        if m.summed:
            raise InvalidParameterError(
                f"`measures` of {where}: {m.key!r} is a count summed over queries, not a mean to monitor."
            )
    return measures


@dataclass(eq=False)
class _Prepared:
    """One data set as a training loop hands it over, built into a problem once: what it was built from
    (copies, to recognise the set), the query code of each row (for messages), the problem, the query weights."""

    label: np.ndarray
    sizes: np.ndarray
    row_weights: np.ndarray | None
    qid: np.ndarray
    problem: Problem
    weights: np.ndarray | None


class DataSets:
    """The data sets a training-loop metric is called on, each built into a problem once.

    A booster calls its metric after every round with new predictions and the same labels, groups and weights:
    the problem of a data set (query codes, label checks, the rows grouped by query) is built at its first call
    and kept; later calls put the new scores in (checked, at the convention's precision) and run the kernel,
    which orders each query's rows by them. A set is recognised by its labels, group sizes and weights
    themselves (compared at every call, a few tens of microseconds): arrays changed in place, or another data
    set with the same labels but other groups, build a new problem. The last ``keep`` sets are kept; a copy or
    a pickle starts empty.
    """

    def __init__(self, keep: int = 4) -> None:
        self.keep = keep
        self._sets: list[_Prepared] = []

    def __getstate__(self) -> dict[str, Any]:
        return {"keep": self.keep}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["keep"])  # type: ignore[misc]  # an empty cache

    def evaluate(self, measures: list[Measure], convention: Convention, label: Any, score: Any, sizes: Any,
                 row_weights: Any = None, *, how: str = "lightgbm", where: str = "the data") -> Result:
        """``measures`` of ``score`` on the set of ``label`` with consecutive queries of ``sizes`` rows and
        ``row_weights`` (per row, or per query; see :func:`query_weights`, ``how``)."""
        from .._core.evaluate import evaluate_problem
        from .._core.problem import same_problem, with_scores

        label = np.asarray(label, dtype=np.float64).reshape(-1)
        score = _one_score_per_row(score, label.shape[0], where)
        sizes = np.asarray(sizes)
        w = None if row_weights is None else np.asarray(row_weights, dtype=np.float64).reshape(-1)
        found = self._find(label, sizes, w)
        if found is None:
            q = query_ids(label.shape[0], group=sizes, where=where)
            found = _Prepared(label.copy(), sizes.copy(), None if w is None else w.copy(), q,
                              array_problem(q, np.zeros(label.shape[0]), label, convention,
                                            item=np.arange(label.shape[0], dtype=np.int64), where=where),
                              query_weights(w, np.asarray(sizes, dtype=np.int64), how=how))
            self._sets = [found, *self._sets][:self.keep]
        problem = with_scores(found.problem, score, convention, where, found.qid)

        def problem_of(c: Convention) -> Problem:
            if same_problem(c, convention):
                return problem
            return array_problem(found.qid, score, label, c, item=np.arange(label.shape[0], dtype=np.int64),
                                 where=where)

        return evaluate_problem(problem_of, measures, convention=convention, per_query=False,
                                weights=found.weights)

    def _find(self, label: np.ndarray, sizes: np.ndarray, w: np.ndarray | None) -> _Prepared | None:
        for i, p in enumerate(self._sets):
            pw = p.row_weights
            same_w = pw is None if w is None else pw is not None and np.array_equal(pw, w)
            if same_w and np.array_equal(p.label, label) and np.array_equal(p.sizes, sizes):
                if i:
                    self._sets.insert(0, self._sets.pop(i))
                return p
        return None


class GroupedMetric:
    """What a booster's metric object holds: the measures, the convention, the names it logs, and the data
    sets it was called on, each built once (:class:`DataSets`)."""

    def __init__(self, measures: list[Measure], convention: Convention, prefix: str) -> None:
        self.measures = measures
        self.convention = convention
        self.names = [metric_name(prefix, m) for m in measures]
        self.data_sets = DataSets()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {', '.join(self.names)} convention={self.convention.name!r}>"


def _one_score_per_row(y_score: Any, n: int, where: str) -> np.ndarray:
    """Predictions as one float64 score per row (a column vector accepted), ``n`` of them."""
    score = np.asarray(y_score, dtype=np.float64)
    if score.ndim != 1:
        if score.ndim == 2 and score.shape[1] == 1:
            score = score[:, 0]
        else:
            raise InvalidParameterError(f"{where}: predictions must be one score per row; got shape {score.shape}.")
    if score.shape[0] != n:
        raise InvalidParameterError(f"{where}: {n} labels but {score.shape[0]} predictions.")
    return score


def metric_name(prefix: str, measure: Measure) -> str:
    """The name a booster shows for a measure: ``prefix + key``, with no space or colon (XGBoost splits
    its evaluation log on both)."""
    name = f"{prefix}{measure.key}"
    if any(c.isspace() or c == ":" for c in name):
        name = "".join("_" if (c.isspace() or c == ":") else c for c in name)
    return name


def query_ids(n: int, *, group: Any = None, qid: Any = None, where: str = "the data") -> np.ndarray:
    """One query id per row, from group sizes (consecutive rows) or from per-row ids.

    Examples
    --------
    >>> query_ids(5, group=[2, 3]).tolist()
    [0, 0, 1, 1, 1]
    """
    if (group is None) == (qid is None):
        raise InvalidParameterError(
            f"{where}: give either `group` (sizes of consecutive queries) or `qid` (one id per row)."
        )
    if group is not None:
        sizes = np.asarray(group)
        whole = sizes.dtype.kind in "iuf" and np.all(sizes == np.round(sizes))
        if sizes.ndim != 1 or sizes.dtype.kind not in "iuf" or (sizes < 0).any() or not whole:
            raise InvalidParameterError(f"{where}: `group` must be a 1-D array of non-negative whole query sizes.")
        sizes = sizes.astype(np.int64)
        if int(sizes.sum()) != n:
            raise InvalidParameterError(
                f"{where}: `group` sizes add up to {int(sizes.sum())} rows but there are {n} labels and predictions."
            )
        return np.repeat(np.arange(sizes.shape[0], dtype=np.int64), sizes)
    ids = np.asarray(qid)
    if ids.ndim != 1 or ids.shape[0] != n:
        raise InvalidParameterError(f"{where}: `qid` must have one id per row ({n}); got shape {ids.shape}.")
    return ids


def query_weights(row_weights: Any, sizes: np.ndarray, *, how: str = "lightgbm") -> np.ndarray | None:
    """Per-query weights from per-row weights over consecutive queries of ``sizes`` rows (empty -> None).

    ``how="lightgbm"``: the mean row weight of a query as LightGBM computes it (``Metadata``: a float32
    sum in row order divided in float32 by the size; a loop over positions, never over queries);
    ``"first"``: its first row's (a group weight repeated on every row, as CatBoost stores it).
    Weights already one per query (XGBoost's group weights) are kept as they are.

    Examples
    --------
    >>> query_weights([0.1, 0.1, 0.1, 2.0], np.array([3, 1]), how="lightgbm").tolist()  # float32, as LightGBM
    [0.10000000149011612, 2.0]
    """
    w = np.asarray(row_weights if row_weights is not None else [], dtype=np.float64).reshape(-1)
    if w.size == 0:
        return None
    sizes = np.asarray(sizes, dtype=np.int64)
    if w.shape[0] == sizes.shape[0]:  # already one per query (XGBoost's group weights)
        return w[sizes > 0]
    if w.shape[0] != int(sizes.sum()):
        raise InvalidParameterError(
            f"weights: {w.shape[0]} values for {sizes.shape[0]} queries of {int(sizes.sum())} rows."
        )
    nz = sizes > 0
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))[nz]
    sizes = sizes[nz]
    if how == "first":
        return w[starts]
    if how != "lightgbm":
        raise InvalidParameterError(f"`how` must be 'lightgbm' or 'first'; got {how!r}.")
    w32 = w.astype(np.float32)
    # queries longest first, so that the queries still going at position p are a prefix: each row is
    # added once (O(rows)), position by position, in row order within each query
    order = np.argsort(-sizes, kind="stable")
    st, sz = starts[order], sizes[order]
    acc = np.zeros(sz.shape[0], dtype=np.float32)
    neg = -sz
    for p in range(int(sz[0]) if sz.size else 0):
        k = int(np.searchsorted(neg, -p, side="left"))  # queries longer than p
        acc[:k] += w32[st[:k] + p]
    out = np.empty(sz.shape[0], dtype=np.float64)
    out[order] = acc / sz.astype(np.float32)
    return out


def evaluate_grouped(
    y_true: Any,
    y_score: Any,
    measures: str | Measure | Iterable[str | Measure],
    *,
    group: Any = None,
    qid: Any = None,
    weights: np.ndarray | None = None,
    convention: str | Convention | None = None,
    per_query: bool = False,
    where: str = "the data",
    **overrides: Any,
) -> Result:
    """Evaluate flat labels and scores whose rows are grouped by query (sizes or ids).

    Parameters
    ----------
    y_true, y_score : array-like of shape (n,)
        Labels and predicted scores, row by row.
    measures : str or list of str
        Measures, as for :func:`ranklens.evaluate`.
    group : array-like of int, optional
        Sizes of consecutive queries (LightGBM's ``group``, XGBoost's ``group``).
    qid : array-like, optional
        One query id per row (rows of a query need not be consecutive).
    weights : ndarray, optional
        One weight per query, in the order of the queries' ids (for ``group``: the group order).
    convention : str or Convention, optional
        As for :func:`ranklens.evaluate`.
    per_query : bool, default=False
        Keep per-query values in the result.
    where : str
        How to name the data in error messages.
    **overrides
        Convention field overrides.

    Examples
    --------
    >>> res = evaluate_grouped([1, 0, 0, 2], [0.2, 0.9, 0.1, 0.5], "ndcg@2", group=[2, 2], convention="lightgbm")
    >>> round(res["ndcg@2"], 6)  # query 0: (1/log2(3)) / 1; query 1: 1
    0.815465
    """
    from .._core.evaluate import evaluate_arrays

    label = np.asarray(y_true, dtype=np.float64).reshape(-1)
    score = _one_score_per_row(y_score, label.shape[0], where)
    q = query_ids(label.shape[0], group=group, qid=qid, where=where)
    names = None
    if q.dtype.kind not in "iu":  # ids of any kind -> codes in the ids' sorted order
        (codes,), uniques, order = factorize_parts([q], "query ids")
        rank = np.empty(order.shape[0], dtype=np.int64)
        rank[order] = np.arange(order.shape[0])
        q, names = rank[codes], uniques[order]
    conv = get_convention(convention, **overrides)
    res = evaluate_arrays(q, score, label, measures, convention=conv, item=np.arange(label.shape[0], dtype=np.int64),
                          per_query=per_query, weights=weights)
    if names is not None:
        res.queries = names[res.queries]
    return res
