"""The result of an evaluation: aggregates, per-query values, and what was left out."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ._problem import Exclusion
from .conventions import Convention
from .errors import InputError
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

    def to_dict(self, per_query: bool | None = None) -> dict[str, Any]:
        """``{"aggregate": {...}, "per_query": {...}, "counted": ..., "excluded": [...], "convention": name}``."""
        d: dict[str, Any] = {"aggregate": dict(self.aggregate)}
        if per_query if per_query is not None else self.has_per_query:
            d["per_query"] = {str(q): v for q, v in self.per_query_dict().items()}
        d["counted"] = dict(self.counted)
        d["excluded"] = [
            {"reason": e.reason, "count": e.count, "examples": list(e.examples), "measures": list(e.measures)}
            for e in self.excluded
        ]
        d["convention"] = self.convention.name
        return d

    def to_json(self, per_query: bool | None = None) -> str:
        return json.dumps(self.to_dict(per_query), indent=2, allow_nan=True)

    def to_pandas(self) -> Any:
        """Per-query values as a pandas DataFrame (one column per measure, index = query)."""
        from ._deps import require

        pd = require("pandas")
        return pd.DataFrame(self.values, index=pd.Index(list(self.queries), name="query"), columns=self.keys)

    def to_polars(self) -> Any:
        """Per-query values as a polars DataFrame (a ``query`` column, then one per measure)."""
        from ._deps import require

        pl = require("polars")
        data: dict[str, Any] = {"query": [str(q) for q in self.queries]}
        for c, k in enumerate(self.keys):
            data[k] = self.values[:, c]
        return pl.DataFrame(data).fill_nan(None)

    # -- display --------------------------------------------------------
    def table(self, digits: int = 4) -> str:
        """A plain-text table of the aggregates (and what was left out)."""
        width = max([len("measure")] + [len(k) for k in self.keys])
        lines = [f"{'measure':<{width}}  {'value':>10}  {'queries':>7}"]
        lines.append("-" * len(lines[0]))
        for k in self.keys:
            v = self.aggregate[k]
            shown = f"{v:.{digits}f}" if not float(v).is_integer() or not k.startswith("num_") else f"{int(v)}"
            lines.append(f"{k:<{width}}  {shown:>10}  {self.counted[k]:>7}")
        lines.append(f"convention: {self.convention.name}")
        for e in self.excluded:
            lines.append(f"note: {e}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        agg = ", ".join(f"{k}={v:.4f}" for k, v in self.aggregate.items())
        return f"<Result {agg} over {len(self.queries)} queries, convention={self.convention.name!r}>"

    def __str__(self) -> str:
        return self.table()


def _py(q: Any) -> Any:
    return q.item() if isinstance(q, np.generic) else q
