"""The result of an evaluation: aggregates, per-query values, and what was left out.

The public face of this module is :mod:`ranklens.result`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._defs.conventions import Convention
from .._defs.measures import Measure
from ..errors import InputError, InvalidParameterError
from .plan import Plan, check_cutoffs
from .problem import Exclusion, ExclusionReason, Problem
from .schema import check_digits, flat_dict, result_dict, result_html, result_table, to_json

__all__ = ["MIN_GEO_MEAN", "Exclusion", "ExclusionReason", "Partial", "Result", "combine", "impressions",
           "join_results", "list_weights"]

#: XGBoost's ``Finalize`` (rank_metric.cc): ``CHECK_LE(score, 1.0 + kRtEps)`` with ``kRtEps = 1e-6f``
XGB_MAX_MEAN = 1.0 + float(np.float32(1e-6))
#: trec_eval's ``MIN_GEO_MEAN``: values below it count as it in a geometric mean (trec_eval.h)
MIN_GEO_MEAN = 0.00001
#: Examples kept per exclusion (the first in query order).
N_EXAMPLES = 20

#: A note: how many queries, and the first ``N_EXAMPLES`` of them (ids, in query order).
Note = tuple[int, tuple[Any, ...]]
_NONE: Note = (0, ())


def _note(qids: np.ndarray, mask: np.ndarray) -> Note:
    count = int(mask.sum())
    return (count, tuple(qids[mask][:N_EXAMPLES])) if count else _NONE


def _merge(a: Note, b: Note) -> Note:
    if not a[0]:
        return b
    if not b[0]:
        return a
    return a[0] + b[0], tuple(sorted(a[1] + b[1])[:N_EXAMPLES])


@dataclass
class Partial:
    """What a batch of queries contributes to a result; batches add up with :func:`combine`.

    Per measure (arrays in the plan's measure order): ``weighted`` is the sum of weight x value over the
    queries counted (a plain sum for measures summed over queries; under ``weighting="gbdt"``, over the
    counted queries that are not empty), ``unweighted`` the sum of the values of counted empty queries
    under ``weighting="gbdt"`` (0 otherwise), ``weight`` the sum of the counted queries' weights and
    ``counted`` their number. ``skipped`` and ``scored`` are, per measure, the queries without a relevant
    item left out of the mean or scored by the empty rule; ``notes`` the queries left out (or scored as an
    empty ranking) by the convention's query rule. ``deepest`` is the deepest rank of the lists that count
    for the convention's cutoff check (None: checked already). ``undefined``: per measure, the queries
    that have a relevant item but no value under the convention (ranx's bpref without a judged
    non-relevant item: 0 / 0), left out of the mean.
    """

    queries: int
    weighted: np.ndarray
    unweighted: np.ndarray
    weight: np.ndarray
    counted: np.ndarray
    skipped: list[Note]
    scored: list[Note]
    notes: dict[ExclusionReason, Note] = field(default_factory=dict)
    deepest: float | None = None
    undefined: list[Note] = field(default_factory=list)

    @classmethod
    def from_values(
        cls,
        plan: Plan,
        qids: np.ndarray,
        values: np.ndarray,
        empties: np.ndarray,
        weights: np.ndarray | None = None,
        notes: Sequence[Exclusion] = (),
        deepest: float | None = None,
        lengths: np.ndarray | None = None,
    ) -> Partial:
        """The contribution of queries ``qids`` (sorted) with per-query ``values`` and ``empties``
        (:func:`ranklens._core.plan.run_plan`), per-query ``weights`` (None: 1), the exclusions of their
        problem (``Problem.notes``) and their ranked lists' lengths (``Problem.lengths``: the impressions
        GroupAUC weighs each list by; needed only for such a measure).

        A measure aggregated by a geometric mean (gm_map) adds ``log(max(value, 0.00001))``.
        """
        n_m = len(plan.measures)
        n_q = values.shape[0]
        w = np.ones(n_q) if weights is None else weights
        ones = np.ones(n_q)
        weighted, unweighted, weight = np.zeros(n_m), np.zeros(n_m), np.zeros(n_m)
        counted = np.zeros(n_m, np.int64)
        skipped: list[Note] = []
        scored: list[Note] = []
        undefined: list[Note] = []
        total = _sequential_sum if plan.convention.summation == "sequential" else np.sum
        for i, m in enumerate(plan.measures):
            v = values[:, i]
            valid = ~np.isnan(v)
            counted[i] = int(valid.sum())
            if plan.specs[i].aggregate == "geometric":
                v = np.log(np.maximum(v, MIN_GEO_MEAN))  # NaN stays NaN
            if m.summed:
                weighted[i] = total(v[valid])
            else:
                how = plan.specs[i].weighting or plan.convention.weighting  # a definition may override it
                if how == "impressions":
                    wv = impressions(plan, i, lengths, n_q)[valid]
                else:
                    wv = (ones if how == "unweighted" else w)[valid]
                weight[i] = wv.sum()
                if how == "gbdt":
                    emp = empties[:, i][valid]
                    weighted[i] = total(wv[~emp] * v[valid][~emp])
                    unweighted[i] = total(v[valid][emp])
                else:
                    weighted[i] = total(wv * v[valid])
            skipped.append(_note(qids, ~valid & empties[:, i]))
            undefined.append(_note(qids, ~valid & ~empties[:, i]))
            scored.append(_note(qids, empties[:, i] & valid) if plan.specs[i].scored_note else _NONE)
        by_reason: dict[ExclusionReason, Note] = {}
        for e in notes:
            by_reason[e.reason] = _merge(by_reason.get(e.reason, _NONE),
                                         (e.count, e.keys or tuple(e.examples)))
        return cls(n_q, weighted, unweighted, weight, counted, skipped, scored, by_reason, deepest, undefined)


def _per_measure(notes: list[Note], n_m: int) -> list[Note]:
    """A per-measure list of notes, empty ones when a partial has none (made before the field existed)."""
    return notes if len(notes) == n_m else [_NONE] * n_m


def _sequential_sum(x: np.ndarray) -> float:
    """One value after the other, as trec_eval adds per-query values (``summation="sequential"``)."""
    return float(np.cumsum(x)[-1]) if x.shape[0] else 0.0


def impressions(plan: Plan, i: int, lengths: np.ndarray | None, n_q: int) -> np.ndarray:
    """Per query, the number of items measure ``i`` of ``plan`` is computed over: the list's length, at most
    the measure's cutoff (GroupAUC's weights)."""
    if lengths is None or len(lengths) != n_q:
        raise InvalidParameterError(f"{plan.measures[i].key}: weighs each list by its number of items, which this "
                                    "evaluation path does not pass (lengths).")
    return list_weights(lengths, int(plan.cutoffs[i]))


def list_weights(lengths: Any, k: int | None) -> np.ndarray:
    """GroupAUC's weight of each list: its number of items, at most the cutoff ``k`` (None or 0: no cutoff).

    Examples
    --------
    >>> list_weights([3, 12, 7], 5).tolist()
    [3.0, 5.0, 5.0]
    """
    out = np.asarray(lengths, dtype=np.float64)
    return np.minimum(out, k) if k else out


def combine(partials: Sequence[Partial]) -> Partial:
    """The contribution of several batches of distinct queries: sums, counts and examples merged.

    Associative: batches may be combined in any grouping (Spark partitions, then their totals).

    Examples
    --------
    >>> import numpy as np
    >>> from ranklens import get_convention
    >>> from ranklens._core.plan import make_plan
    >>> plan = make_plan(get_convention("ranklens"), ["ndcg"])
    >>> a = Partial.from_values(plan, np.array([1, 2]), np.array([[0.5], [np.nan]]), np.array([[False], [True]]))
    >>> b = Partial.from_values(plan, np.array([3]), np.array([[1.0]]), np.array([[False]]))
    >>> Result.from_partial(plan, combine([a, b]))["ndcg"]  # (0.5 + 1) / 2, query 2 skipped
    0.75
    """
    if not partials:
        raise InvalidParameterError("combine: no partial result to combine.")
    out = partials[0]
    n_m = len(out.skipped)
    for p in partials[1:]:
        notes = dict(out.notes)
        for reason, n in p.notes.items():
            notes[reason] = _merge(notes.get(reason, _NONE), n)
        depths = [d for d in (out.deepest, p.deepest) if d is not None]
        deepest = max(depths) if depths else None
        out = Partial(
            out.queries + p.queries, out.weighted + p.weighted, out.unweighted + p.unweighted, out.weight + p.weight,
            out.counted + p.counted, [_merge(a, b) for a, b in zip(out.skipped, p.skipped)],
            [_merge(a, b) for a, b in zip(out.scored, p.scored)], notes, deepest,
            [_merge(a, b) for a, b in zip(_per_measure(out.undefined, n_m), _per_measure(p.undefined, n_m))],
        )
    return out


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
        plan: Plan,
        problem: Problem,
        values: np.ndarray,
        empties: np.ndarray,
        weights: np.ndarray | None = None,
        *,
        per_query: bool = True,
    ) -> Result:
        """The result of one problem: its values (:func:`ranklens._core.plan.run_plan`) aggregated."""
        partial = Partial.from_values(plan, problem.qids, values, empties, weights, problem.notes,
                                      lengths=problem.lengths)
        return cls.from_partial(plan, partial, problem.qids, values, weights, per_query=per_query)

    @classmethod
    def from_partial(
        cls,
        plan: Plan,
        partial: Partial,
        qids: np.ndarray | None = None,
        values: np.ndarray | None = None,
        weights: np.ndarray | None = None,
        per_query: bool = False,
    ) -> Result:
        """The result of (combined) partial results: means, counts and exclusions.

        ``qids`` and ``values`` are the per-query values when they were kept (else the result has none).
        """
        conv = plan.convention
        if partial.queries == 0:
            raise InputError("no query to evaluate: the judgments and the rankings have no query in common.")
        if partial.deepest is not None and plan.check_depth:
            check_cutoffs(plan, int(partial.deepest))
        aggregate: dict[str, float] = {}
        counted: dict[str, int] = {}
        for i, m in enumerate(plan.measures):
            counted[m.key] = int(partial.counted[i])
            if m.summed:
                aggregate[m.key] = float(partial.weighted[i])
                continue
            den = float(partial.weight[i])
            num = float(partial.weighted[i] + partial.unweighted[i])  # unweighted: 0 unless "gbdt" weighting
            mean = num / den if den > 0 else math.nan
            if plan.specs[i].aggregate == "geometric":
                mean = math.exp(mean)  # trec_eval's gm_map: exp of the mean of the logs
            if conv.clamp_mean and m.family == "ndcg" and not math.isnan(mean):
                if mean > XGB_MAX_MEAN:
                    raise InputError(
                        f"convention {conv.name!r}: the mean of {m.key!r} is {mean!r} > 1 (queries "
                        "without relevant items add 1 unweighted while their weight stays in the denominator); "
                        "XGBoost stops here ('Invalid output score, might be caused by invalid query group "
                        "weight'). Use weighting='weighted' for a proper weighted mean."
                    )
                mean = min(1.0, mean)
            aggregate[m.key] = mean
        excluded = [_exclusion(reason, partial.notes[reason]) for reason in ExclusionReason if reason in partial.notes]
        # the same queries for the same reason: one exclusion naming its measures
        by_reason: dict[tuple[ExclusionReason, Any, Note], list[str]] = {}
        for i, m in enumerate(plan.measures):
            if partial.skipped[i][0]:
                by_reason.setdefault((ExclusionReason.NO_RELEVANT_SKIPPED, None, partial.skipped[i]), []).append(m.key)
            undefined = _per_measure(partial.undefined, len(plan.measures))[i]
            if undefined[0]:
                by_reason.setdefault((ExclusionReason.UNDEFINED_SKIPPED, None, undefined), []).append(m.key)
            if partial.scored[i][0]:
                value = float(plan.rules[i])
                by_reason.setdefault((ExclusionReason.NO_RELEVANT_SCORED, value, partial.scored[i]), []).append(m.key)
        for (reason, value, note), keys in by_reason.items():
            excluded.append(_exclusion(reason, note, tuple(keys), value))
        n_m = len(plan.measures)
        q = qids if qids is not None else np.zeros(0, dtype=object)
        v = values if values is not None else np.zeros((0, n_m))
        return cls(list(plan.measures), aggregate, q, v, counted, excluded, conv, weights,
                   per_query if qids is not None else False)

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
            return flat_dict(self, prefix)
        if style != "nested":
            raise InvalidParameterError(f"`style` must be 'nested' or 'flat'; got {style!r}.")
        return result_dict(self, per_query)

    def to_json(self, per_query: bool | None = None) -> str:
        """:meth:`to_dict` as strict JSON (NaN as null)."""
        return to_json(self, per_query=per_query)

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
        from .._base.deps import require

        pd = require("pandas")
        data = self._frame_columns(kind)
        index = "query" if kind == "per_query" else "measure"
        return pd.DataFrame({k: v for k, v in data.items() if k != index},
                            index=pd.Index(data[index], name=index))

    def to_polars(self, kind: str = "per_query") -> Any:
        """A polars DataFrame: a ``query`` column then one per measure (null where a query is skipped), or
        with ``kind="aggregate"`` the columns ``measure``, ``value``, ``queries``."""
        from .._base.deps import require

        pl = require("polars")
        data = self._frame_columns(kind)
        if kind == "per_query":
            data["query"] = [str(q) for q in data["query"]]
        return pl.DataFrame(data).fill_nan(None)

    # -- display --------------------------------------------------------
    def table(self, digits: int = 4) -> str:
        """A plain-text table of the aggregates (and what was left out): ``render(result, "table")``."""
        return result_table(self, check_digits(digits))

    def _repr_html_(self) -> str:
        return result_html(self)

    def __repr__(self) -> str:
        agg = ", ".join(f"{k}={v:.4f}" for k, v in self.aggregate.items())
        return f"<Result {agg} over {len(self.queries)} queries, convention={self.convention.name!r}>"

    def __str__(self) -> str:
        return self.table()


def join_results(parts: Sequence[Result], keys: Sequence[str], convention: Convention) -> Result:
    """Results of the same queries for different measures, as one result with the measures in ``keys``' order.

    For measures computed under different conventions of the same queries (ir_measures' providers: see
    :func:`ranklens._defs.irmeasures.convention_groups`): the exclusions of the query rule are the first part's
    (every part has the same), those of a measure its part's.
    """
    first = parts[0]
    for p in parts[1:]:
        if not np.array_equal(p.queries, first.queries) or p.has_per_query != first.has_per_query:
            raise InvalidParameterError(
                f"measures {', '.join(p.keys)} are computed over other queries than {', '.join(first.keys)} "
                f"(conventions {p.convention.name!r} and {first.convention.name!r}); evaluate them apart.")
    where = {k: (p, i) for p in parts for i, k in enumerate(p.keys)}
    measures = [where[k][0].measures[where[k][1]] for k in keys]
    n_q = first.values.shape[0]
    values = np.column_stack([where[k][0].values[:, where[k][1]] for k in keys]) if n_q else np.zeros((0, len(keys)))
    excluded = [e for e in first.excluded if not e.measures]
    excluded += [e for p in parts for e in p.excluded if e.measures]
    return Result(measures, {k: where[k][0].aggregate[k] for k in keys}, first.queries, values,
                  {k: where[k][0].counted[k] for k in keys}, excluded, convention, first.weights, first.has_per_query)


def _exclusion(reason: ExclusionReason, note: Note, measures: tuple[str, ...] = (), value: float | None = None,
               ) -> Exclusion:
    return Exclusion(reason, note[0], tuple(str(q) for q in note[1]), measures, value, keys=note[1])


def _py(q: Any) -> Any:
    return q.item() if isinstance(q, np.generic) else q
