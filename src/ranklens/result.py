"""The result of an evaluation: aggregates, per-query values, and what was left out."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from . import render
from ._problem import Exclusion
from .conventions import Convention
from .errors import InputError, InvalidParameterError
from .measures import Measure

if TYPE_CHECKING:
    from ._problem import Problem

__all__ = ["Result"]

#: XGBoost's ``Finalize`` (rank_metric.cc): ``CHECK_LE(score, 1.0 + kRtEps)`` with ``kRtEps = 1e-6f``
_XGB_MAX_MEAN = 1.0 + float(np.float32(1e-6))


class Result:
    """Values of measures over queries.

    Attributes
    ----------
    measures : list of Measure
        The measures, in the order asked.
    aggregate : dict
        Measure key -> mean over the counted queries (a sum for ``num_*``).
    queries : ndarray
        Ids of the evaluated queries (the rows of ``values``).
    values : ndarray of shape (n_queries, n_measures)
        Per-query values; NaN where a query was skipped for a measure.
    counted : dict
        Measure key -> number of queries in the aggregate.
    excluded : list of Exclusion
        Queries left out, or scored by a rule, and why.
    convention : Convention
        The convention used.
    """

    def __init__(
        self,
        measures: list[Measure],
        aggregate: dict[str, float],
        queries: np.ndarray,
        values: np.ndarray,
        counted: dict[str, int],
        excluded: list[Exclusion],
        convention: Convention,
        weights: np.ndarray | None = None,
        per_query: bool = True,
    ) -> None:
        self.measures = measures
        self.aggregate = aggregate
        self.queries = queries
        self.values = values
        self.counted = counted
        self.excluded = excluded
        self.convention = convention
        self.weights = weights
        self.has_per_query = per_query

    @classmethod
    def build(
        cls,
        problem: Problem,
        measures: list[Measure],
        values: np.ndarray,
        empties: np.ndarray,
        conv: Convention,
        weights: np.ndarray | None,
        *,
        per_query: bool = True,
    ) -> Result:
        n_q = values.shape[0]
        w = np.ones(n_q) if weights is None else weights
        aggregate: dict[str, float] = {}
        counted: dict[str, int] = {}
        excluded = list(problem.notes)
        by_reason: dict[tuple[str, int, tuple[str, ...]], list[str]] = {}  # same queries, same reason: one note
        for i, m in enumerate(measures):
            v = values[:, i]
            valid = ~np.isnan(v)
            counted[m.key] = int(valid.sum())
            if m.summed:
                aggregate[m.key] = float(v[valid].sum())
            else:
                wv = w[valid]
                den = float(wv.sum())
                if conv.weighting == "gbdt":
                    emp = empties[:, i][valid]
                    num = float((wv[~emp] * v[valid][~emp]).sum() + v[valid][emp].sum())
                else:
                    num = float((wv * v[valid]).sum())
                aggregate[m.key] = num / den if den > 0 else math.nan
                if conv.clamp_mean and m.family == "ndcg" and not math.isnan(aggregate[m.key]):
                    if aggregate[m.key] > _XGB_MAX_MEAN:
                        raise InputError(
                            f"convention {conv.name!r}: the mean of {m.key!r} is {aggregate[m.key]!r} > 1 (queries "
                            "without relevant items add 1 unweighted while their weight stays in the denominator); "
                            "XGBoost stops here ('Invalid output score, might be caused by invalid query group "
                            "weight'). Use weighting='weighted' for a proper weighted mean."
                        )
                    aggregate[m.key] = min(1.0, aggregate[m.key])
            skipped = ~valid
            if skipped.any():
                reason = "no relevant item: skipped (not in the mean)"
                ids = tuple(str(q) for q in problem.qids[skipped][:20])
                by_reason.setdefault((reason, int(skipped.sum()), ids), []).append(m.key)
            emp = empties[:, i] & valid
            if emp.any() and m.family not in ("dcg", "idcg"):
                rule = m.empty if m.empty is not None else conv.empty
                reason = f"no relevant item: scored {float(rule):g} by the convention"
                ids = tuple(str(q) for q in problem.qids[emp][:20])
                by_reason.setdefault((reason, int(emp.sum()), ids), []).append(m.key)
        for (reason, count, ids), keys in by_reason.items():
            excluded.append(Exclusion(reason, count, ids, tuple(keys)))
        return cls(measures, aggregate, problem.qids, values, counted, excluded, conv, weights, per_query)

    # -- access ---------------------------------------------------------
    @property
    def keys(self) -> list[str]:
        return [m.key for m in self.measures]

    def __getitem__(self, key: str) -> float:
        try:
            return self.aggregate[key]
        except KeyError:
            raise KeyError(f"{key!r} is not in this result; measures: {', '.join(self.keys)}") from None

    def per_query_dict(self, key: str | None = None) -> dict[Any, Any]:
        """Per-query values: ``{query: value}`` for one measure, else ``{query: {measure: value}}``.

        Skipped queries are left out.
        """
        if key is not None:
            col = self.keys.index(key)
            return {_py(q): float(v) for q, v in zip(self.queries, self.values[:, col]) if not math.isnan(v)}
        out: dict[Any, Any] = {}
        for qi, q in enumerate(self.queries):
            row = {k: float(self.values[qi, c]) for c, k in enumerate(self.keys) if not math.isnan(self.values[qi, c])}
            if row:
                out[_py(q)] = row
        return out

    def to_dict(self, per_query: bool | None = None, *, style: str = "nested", prefix: str = "") -> dict[str, Any]:
        """The result as plain data: the one output schema of :mod:`ranklens.render`.

        Parameters
        ----------
        per_query : bool, optional
            Include per-query values (nested style; default: when the result has them).
        style : {"nested", "flat"}, default="nested"
            ``"nested"``: ``{"aggregate": {...}, "per_query": {...}, "counted": {...}, "excluded": [...],
            "convention": name}`` (NaN as None), as ``ranklens eval -f json`` prints it. ``"flat"``:
            ``{name: mean}`` with names experiment trackers accept (``ndcg@10`` -> ``ndcg_at_10``, see
            :func:`ranklens.measures.flat_name`), for ``mlflow.log_metrics``, ``wandb.log`` or a
            TensorBoard ``add_scalar`` per item.
        prefix : str, default=""
            Put before each flat name (``"valid/"``, ``"test_"``).

        Examples
        --------
        >>> import ranklens
        >>> res = ranklens.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"a": 0.2, "b": 0.9}}, ["ndcg@1", "recall@2"])
        >>> res.to_dict(style="flat", prefix="valid/")
        {'valid/ndcg_at_1': 0.0, 'valid/recall_at_2': 1.0}
        >>> res.to_dict()["counted"]
        {'ndcg@1': 1, 'recall@2': 1}
        """
        if style == "flat":
            return render.flat_dict(self, prefix)
        if style != "nested":
            raise InvalidParameterError(f"`style` must be 'nested' or 'flat'; got {style!r}.")
        return render.result_dict(self, per_query)

    def to_json(self, per_query: bool | None = None) -> str:
        """:meth:`to_dict` as strict JSON (NaN as null)."""
        return render.to_json(self, per_query=per_query)

    def _frame_columns(self, kind: str) -> dict[str, Any]:
        if kind == "aggregate":
            return {"measure": list(self.keys), "value": [self.aggregate[k] for k in self.keys],
                    "queries": [self.counted[k] for k in self.keys]}
        if kind != "per_query":
            raise InvalidParameterError(f"`kind` must be 'per_query' or 'aggregate'; got {kind!r}.")
        if not self.has_per_query:
            raise InvalidParameterError("this result has no per-query values (evaluated with per_query=False).")
        data: dict[str, Any] = {"query": [_py(q) for q in self.queries]}
        for c, k in enumerate(self.keys):
            data[k] = self.values[:, c]
        return data

    def to_pandas(self, kind: str = "per_query") -> Any:
        """A pandas DataFrame: per-query values (index ``query``, one column per measure, NaN where a query
        is skipped) or, with ``kind="aggregate"``, one row per measure (``value``, ``queries``)."""
        from ._deps import require

        pd = require("pandas")
        data = self._frame_columns(kind)
        index = "query" if kind == "per_query" else "measure"
        return pd.DataFrame({k: v for k, v in data.items() if k != index},
                            index=pd.Index(data[index], name=index))

    def to_polars(self, kind: str = "per_query") -> Any:
        """A polars DataFrame: a ``query`` column then one per measure (null where a query is skipped), or
        with ``kind="aggregate"`` the columns ``measure``, ``value``, ``queries``."""
        from ._deps import require

        pl = require("polars")
        data = self._frame_columns(kind)
        if kind == "per_query":
            data["query"] = [str(q) for q in data["query"]]
        return pl.DataFrame(data).fill_nan(None)

    # -- display --------------------------------------------------------
    def table(self, digits: int = 4) -> str:
        """A plain-text table of the aggregates (and what was left out): :func:`ranklens.render.render`."""
        return render.render(self, "table", digits=digits)

    def _repr_html_(self) -> str:
        return render.render(self, "html")

    def __repr__(self) -> str:
        agg = ", ".join(f"{k}={v:.4f}" for k, v in self.aggregate.items())
        return f"<Result {agg} over {len(self.queries)} queries, convention={self.convention.name!r}>"

    def __str__(self) -> str:
        return self.table()


def _py(q: Any) -> Any:
    return q.item() if isinstance(q, np.generic) else q
