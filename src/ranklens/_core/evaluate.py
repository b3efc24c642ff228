"""``evaluate``: judgments + run + measures + convention -> :class:`Result`.

The public face of this module is :mod:`ranklens.evaluate`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, overload

import numpy as np

from .._base.renamed import renamed_keywords
from .._defs.conventions import Convention
from .._defs.irmeasures import convention_groups
from .._defs.measures import Measure, parse_measures
from .._defs.presets import get_convention
from .._input.dispatch import is_pathlike
from .._input.groups import group_columns
from .._input.ids import arrow_to_numpy
from .._input.options import load_inputs, split_options
from .._input.tables import table_kind
from ..errors import InvalidParameterError
from .plan import make_plan, run_plan
from .problem import Problem, array_problem, build_problem
from .result import Result, join_results
from .slices import GroupedResult, split_by_group

__all__ = ["GroupedResult", "evaluate", "evaluate_arrays"]

def _weights(weights: Any, qids: np.ndarray) -> np.ndarray | None:
    if weights is None:
        return None
    if isinstance(weights, Mapping):
        # vectorised lookup: the mapping's keys and the evaluated ids, both as strings, matched by Arrow
        import pyarrow as pa
        import pyarrow.compute as pc

        keys = pa.array([str(k) for k in weights.keys()], type=pa.large_string())
        vals = _weight_array(list(weights.values()))
        wanted = pa.array(qids.astype(str).astype(object) if qids.dtype.kind != "O" else qids, type=pa.large_string())
        pos = pc.index_in(wanted, value_set=keys)
        found = ~np.asarray(arrow_to_numpy(pos.is_null()), dtype=bool)
        if not found.all():
            missing = qids[~found][:5]
            raise InvalidParameterError(
                f"`weights` has no weight for {int((~found).sum())} queries ({', '.join(map(str, missing))})."
            )
        w = vals[np.asarray(arrow_to_numpy(pos.fill_null(0)), dtype=np.int64)]
    else:
        w = _weight_array(weights).reshape(-1)
        if w.shape[0] != qids.shape[0]:
            raise InvalidParameterError(
                f"`weights` has {w.shape[0]} values but {qids.shape[0]} queries are evaluated; "
                "pass a mapping {query: weight} to be explicit."
            )
    if not np.isfinite(w).all() or (w < 0).any():
        raise InvalidParameterError("`weights` must be finite and non-negative.")
    return w


def _weight_array(values: Any) -> np.ndarray:
    """``weights`` as float64, or the refusal naming `weights` (text, objects, ragged lists)."""
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        shown = repr(values) if len(repr(values)) <= 60 else repr(values)[:57] + "..."
        raise InvalidParameterError(
            f"`weights` must be numbers (a sequence in the order of the queries, or a mapping {{query: weight}}); "
            f"got {shown}."
        ) from None


@overload
def evaluate(
    judgments: Any,
    run: Any = ...,
    measures: str | Measure | Iterable[str | Measure] = ...,
    *,
    convention: str | Convention | None = ...,
    per_query: bool = ...,
    weights: Mapping[Any, float] | Iterable[float] | None = ...,
    group_by: None = ...,
    **options: Any,
) -> Result: ...


@overload
def evaluate(
    judgments: Any,
    run: Any = ...,
    measures: str | Measure | Iterable[str | Measure] = ...,
    *,
    convention: str | Convention | None = ...,
    per_query: bool = ...,
    weights: Mapping[Any, float] | Iterable[float] | None = ...,
    group_by: str | list[str] | Mapping[Any, Any],
    **options: Any,
) -> GroupedResult: ...


@renamed_keywords(rankings="run", metrics="measures")
def evaluate(
    judgments: Any,
    run: Any = None,
    measures: str | Measure | Iterable[str | Measure] = ("ndcg@10",),
    *,
    convention: str | Convention | None = None,
    per_query: bool = True,
    weights: Mapping[Any, float] | Iterable[float] | None = None,
    group_by: str | list[str] | Mapping[Any, Any] | None = None,
    **options: Any,
) -> Result | GroupedResult:
    """Evaluate ranked lists against relevance judgments.

    Parameters
    ----------
    judgments : path, dict, array-like or table
        Relevance judgments: a TREC qrels / LETOR / CSV / Parquet / JSON Lines
        file, a dict ``{query: {item: label}}``, a 2-D array or list of lists
        of labels (row = query; an array of another library, a torch tensor or
        a JAX array, through DLPack or ``__array__``), or a pandas/polars/pyarrow
        long table. A table that also has a score or rank column may stand alone
        (``run=None``).
    run : path, dict, array-like, table or None
        The run: one system's ranked lists, in the same forms (scores, or ranks
        with 1 best). A 1-D score vector aligns row by row with the judgments.
        (``rankings=`` is its deprecated name.)
    measures : str or list of str, default=("ndcg@10",)
        Measures such as ``"ndcg@10"``, ``"map"``, ``"P.10"``, or in
        ir_measures' language (``"P(rel=2)@10"``, ``ir_measures.nDCG@10``);
        see :mod:`ranklens.measures`. Results are keyed as written (an
        ir_measures object by its ``str()``). (``metrics=`` is its deprecated
        name.)
    convention : str or Convention, default="ranklens"
        A preset name from :data:`ranklens.CONVENTIONS` or a Convention.
    per_query : bool, default=True
        Keep per-query values in the result.
    weights : mapping or array-like, optional
        Per-query weights for the mean (a mapping ``{query: weight}``, or one
        value per evaluated query in the result's query order).
    group_by : str, list of str or mapping, optional
        Slice the evaluation (device, locale, query length): the name of a column of the run's table (pandas,
        polars, Arrow, or a CSV, TSV, Parquet or JSON Lines file; or of the one table holding both sides), or
        several columns (a group is then the tuple of their values, ``res["mobile", "en"]``, one per
        combination present). The result is then a :class:`~ranklens.evaluate.GroupedResult`, one Result per
        group (``res[group]``), each exactly what ``evaluate`` gives on that group's rows: a query whose rows
        fall in two groups is evaluated in each on its rows there. A group's query sees the judgment rows of
        its group when the judgments' table carries the columns, else every judgment of the query. A row
        without a group value (null, NaN, empty text) is refused, naming the row. A mapping
        ``{query: group}``, or a column of the judgments' table when the run has none, gives each query one
        group; queries without one are left out and counted in ``notes``. ``weights`` must then be a mapping.
    **options
        Convention field overrides (``gain="exponential"``, ``ties="input"``,
        ``empty=0``, ...), table column names (``query_col=``,
        ``item_col=``, ``score_col=``, ``rank_col=``, ``label_col=``), file
        formats (``format=``, ``run_format=``, ``groups=``) and ``missing=``:
        a missing (or NaN) label or score is refused (``"error"``, the
        default) or its row left out of that side (``"exclude"``: without a
        label the row is no judgment, without a score it is not ranked),
        counted in ``Result.excluded``; see
        :func:`ranklens.options.split_options`. Any other keyword is refused,
        listing every accepted one.

    Returns
    -------
    Result (GroupedResult with ``group_by``)
        Aggregates, per-query values and what was left out and why.

    Examples
    --------
    The seeds' groups x, y and z (ranks given, linear gains):

    >>> import ranklens
    >>> qrels = {"x": {"a": 0, "b": 0, "c": 1, "d": 1, "e": 1},
    ...          "y": {"f": 1, "g": 0, "h": 1, "i": 0, "j": 1},
    ...          "z": {"k": 1, "l": 0, "m": 0, "n": 0, "o": 0}}
    >>> run = {q: {d: -i for i, d in enumerate(docs)} for q, docs in qrels.items()}
    >>> res = ranklens.evaluate(qrels, run, ["ndcg"])
    >>> round(res["ndcg"], 5)
    0.83458
    >>> {q: round(v, 4) for q, v in res.per_query_dict("ndcg").items()}
    {'x': 0.6183, 'y': 0.8855, 'z': 1.0}
    """
    columns, formats, overrides = split_options(options, own=("measures", "convention", "per_query", "weights",
                                                              "group_by"))
    conv = get_convention(convention, **overrides)
    ms = parse_measures(measures)
    if any(m.spec.subtopics for m in ms):  # judgments per subtopic: ndeval's measures
        from .diversity import evaluate_subtopics

        return evaluate_subtopics(judgments, run, conv, ms, columns, formats,
                                  lambda qids: _weights(weights, qids), per_query)
    groups = [(c, make_plan(c, [ms[i] for i in idx])) for c, idx in convention_groups(conv, ms)]
    j, r = load_inputs(judgments, run, columns, formats)
    if group_by is None:
        # rankings read here from a table or a file are this call's alone: one problem may round their scores in place
        own = len(groups) == 1 and (table_kind(run if run is not None else judgments) is not None
                                    or is_pathlike(run if run is not None else judgments))
        # both sides read here from tables: what their reader found finite is not checked again
        fresh = all(table_kind(x) is not None for x in (judgments, run) if x is not None)
        return _joined(conv, ms, groups, lambda c: build_problem(j, r, c, own=own, fresh=fresh), weights, per_query)
    if weights is not None and not isinstance(weights, Mapping):
        raise InvalidParameterError("`weights` with `group_by` must be a mapping {query: weight}.")
    parts, by, notes = split_by_group(group_by, j, r, judgments, run, columns)
    results = {g: _joined(conv, ms, groups, _problem_of(jg, rg), weights, per_query) for g, (jg, rg) in parts.items()}
    return GroupedResult(results, by, notes, group_columns(group_by))


@renamed_keywords(metrics="measures")
def evaluate_arrays(
    query: Any,
    score: Any,
    label: Any,
    measures: str | Measure | Iterable[str | Measure] = ("ndcg@10",),
    *,
    convention: str | Convention | None = None,
    item: Any = None,
    per_query: bool = True,
    weights: Any = None,
) -> Result:
    """Evaluate flat arrays: one row per ranked item, with its query code, score and label.

    For callers that hold integer query codes and no ids (a monitoring store, a training loop):
    no id is made up or converted. Rows of a query need not be consecutive.

    Parameters
    ----------
    query : array-like of int, shape (n,)
        The query code of each row.
    score : array-like of float, shape (n,)
        Predicted scores (higher ranks first).
    label : array-like of float, shape (n,)
        Relevance labels; a query's labels make its ideal list.
    measures : str or list of str, default=("ndcg@10",)
        Measures, as for :func:`evaluate` (``metrics=`` is its deprecated name).
    convention : str or Convention, default="ranklens"
        As for :func:`evaluate`.
    item : array-like, optional
        Item ids, needed only by conventions that break ties by item id (``ties="item_desc"``...).
    per_query : bool, default=True
        Keep per-query values in the result.
    weights : array-like, optional
        Per-query weights for the mean, one per distinct query code in sorted order.

    Returns
    -------
    Result
        Its ``queries`` are the distinct query codes, sorted.

    Examples
    --------
    Query 7's relevant item is ranked second, query 3's first:

    >>> import ranklens
    >>> res = evaluate_arrays([7, 3, 7, 3], [0.9, 0.8, 0.1, 0.3], [0, 1, 1, 0], ["ndcg", "mrr"])
    >>> res.queries.tolist(), res.per_query_dict("mrr")
    ([3, 7], {3: 1.0, 7: 0.5})
    >>> round(res["ndcg"], 6)  # (1 + 1/log2(3)) / 2
    0.815465
    """
    conv = get_convention(convention)
    ms = parse_measures(measures)
    groups = [(c, make_plan(c, [ms[i] for i in idx])) for c, idx in convention_groups(conv, ms)]
    return _joined(conv, ms, groups, lambda c: array_problem(query, score, label, c, item=item), weights, per_query)


def evaluate_problem(
    problem_of: Callable[[Convention], Problem],
    measures: str | Measure | Iterable[str | Measure],
    *,
    convention: str | Convention | None = None,
    per_query: bool = True,
    weights: Any = None,
) -> Result:
    """Evaluate a problem the caller built (or keeps between calls): ``problem_of(c)`` gives the
    :class:`~ranklens._core.problem.Problem` under convention ``c`` (one call per group of measures computed under one
    convention, see :func:`evaluate`). For ``ranklens trec_eval``, which selects rows of a built problem, and the
    training-loop metrics, which build a data set's problem once and change only its scores.

    Examples
    --------
    >>> from ranklens._core.problem import array_problem
    >>> res = evaluate_problem(lambda c: array_problem([0, 0], [0.2, 0.9], [1, 0], c), "mrr")
    >>> res["mrr"]
    0.5
    """
    conv = get_convention(convention)
    ms = parse_measures(measures)
    groups = [(c, make_plan(c, [ms[i] for i in idx])) for c, idx in convention_groups(conv, ms)]
    return _joined(conv, ms, groups, problem_of, weights, per_query)


def _problem_of(j: Any, r: Any) -> Callable[[Convention], Problem]:
    """The problem of judgments ``j`` and rankings ``r`` under a convention."""
    return lambda c: build_problem(j, r, c)


def _joined(conv: Convention, ms: list[Measure], groups: list[tuple[Convention, Any]],
            problem_of: Callable[[Convention], Problem], weights: Any, per_query: bool) -> Result:
    """Each group of measures evaluated under its convention (one group, unless measures are computed under
    other fields: ir_measures' providers, a measure's own gain mapping), the columns joined in ``ms``' order."""
    results = []
    for c, plan in groups:
        problem = problem_of(c)
        values, empties = run_plan(plan, problem)
        w = _weights(weights, problem.qids)
        results.append(Result.build(plan, problem, values, empties, w, per_query=per_query))
    if len(results) == 1:
        return results[0]
    return join_results(results, [m.key for m in ms], conv)
