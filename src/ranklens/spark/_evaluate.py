"""The public verb of the Spark engine: :func:`evaluate`, in :func:`ranklens.evaluate`'s argument order."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from .._base.renamed import renamed_keywords
from .._core.plan import Plan, make_plan
from ..conventions import Convention, get_convention
from ..errors import InvalidParameterError
from ..measures import Measure
from ..options import Columns, Formats, split_options
from ._driver import check_depth, check_universe, grouped, max_labels, result
from ._layout import Layout, Q, prepare, refuse_missing_groups
from ._session import is_dataframe, require_pyspark
from ._worker import run as run_chunks

__all__ = ["evaluate"]


@renamed_keywords(rankings="run", metrics="measures")
def evaluate(
    judgments: Any = None,
    run: Any = None,
    measures: str | Measure | Iterable[str | Measure] = ("ndcg@10",),
    *,
    convention: str | Convention | None = None,
    per_query: bool = False,
    group_by: str | Sequence[str] | None = None,
    partitions: int | None = None,
    rows_per_call: int = 200_000,
    **options: Any,
) -> Any:
    """Evaluate rankings held in Spark DataFrames, with the numbers of :func:`ranklens.evaluate`.

    Parameters
    ----------
    judgments : pyspark.sql.DataFrame
        Long table of judgments: query, item, relevance. Co-grouped with the
        rankings by query (and by the ``group_by`` columns it has). Given
        alone (or ``run=`` alone), one table holding the relevance and
        the score (or rank) columns, as a table given alone to
        :func:`ranklens.evaluate` (a null label: not judged; a null score:
        judged, not ranked).
    run : pyspark.sql.DataFrame, optional
        Long table of ranked items: query, item and score (or rank, 1 best) (``rankings=`` is its deprecated name).
    measures : str or list of str, default=("ndcg@10",)
        Measures, as in :func:`ranklens.evaluate` (``metrics=`` is its deprecated name).
    convention : str or Convention, default="ranklens"
        A preset of :data:`ranklens.CONVENTIONS` or a Convention.
    per_query : bool, default=False
        Return a Spark DataFrame of per-query values (columns: the ``group_by``
        columns, the query column, one double column per measure key; null
        where the convention skips the query) instead of the aggregates.
    group_by : str or list of str, optional
        Columns of the rankings (date, model version, slice...) that split
        the evaluation: each group is evaluated as
        ``ranklens.evaluate(judgments of its queries, its rankings)``. When
        the judgments lack a group column, a group sees the judgments of the
        queries it ranks.
    partitions : int, optional
        Partitions of the shuffle by query (default ``spark.sql.shuffle.partitions``).
    rows_per_call : int, default=200_000
        Rows handed to the kernels at once in an executor (whole queries).
    **options
        Convention field overrides and column names (``query_col=``,
        ``item_col=``, ``score_col=``, ``rank_col=``, ``label_col=``), as in
        :func:`ranklens.evaluate`.

    Returns
    -------
    Result or pyspark.sql.DataFrame
        Without ``group_by`` and ``per_query``: a :class:`ranklens.Result` with
        the aggregates, the counts and what was left out (its per-query
        ``values`` stay in Spark: ask ``per_query=True``). With ``group_by``:
        a DataFrame with the group columns, ``queries`` (evaluated queries),
        one column per measure key (the group's aggregate) and
        ``queries:<key>`` (queries in that aggregate). With ``per_query=True``:
        the per-query DataFrame.

    Raises
    ------
    MissingDependencyError
        pyspark is not installed.
    InvalidParameterError, InputError, EmptyQueryError
        As :func:`ranklens.evaluate` does, for the same input.

    Notes
    -----
    Per-query weights are not taken (use the local engine, or weight the
    per-query DataFrame yourself). Errors found while computing (duplicates,
    NaN scores, empty queries under ``empty="error"``...) are raised by the
    action that computes them; on the per-query DataFrame that is the user's
    action, where Spark wraps them (the message is ranklens's).

    Examples
    --------
    >>> import ranklens.spark
    >>> df = spark.createDataFrame(                                          # doctest: +SKIP
    ...     [("x", "a", 5.0, 0), ("x", "b", 4.0, 0), ("x", "c", 3.0, 1), ("x", "d", 2.0, 1), ("x", "e", 1.0, 1)],
    ...     ["query", "item", "score", "relevance"])
    >>> round(ranklens.spark.evaluate(df, measures=["ndcg"])["ndcg"], 5)      # doctest: +SKIP
    0.61828
    >>> ranklens.spark.evaluate(run=df, measures=["ndcg"])["ndcg"] == _   # doctest: +SKIP
    True
    """
    rankings_df, judgments_df, gb, columns, formats, plan = _settings(
        judgments, run, measures, convention, group_by, partitions, rows_per_call, options)
    keys = plan.keys
    lay = Layout(rankings_df, judgments_df, plan, gb, columns, missing=formats.missing)
    if gb:
        refuse_missing_groups(rankings_df, judgments_df, lay)
    prepared = prepare(rankings_df, judgments_df, lay)
    check_universe(prepared, lay)
    labels_max = max_labels(prepared, lay) if lay.need_max else None

    if per_query:
        from pyspark.sql import functions as F

        if plan.check_depth:  # needs the deepest list of every group first (an extra pass)
            check_depth(run_chunks(prepared, lay, "agg", partitions, labels_max, rows_per_call), lay)
        out = run_chunks(prepared, lay, "query", partitions, labels_max, rows_per_call)
        sel = [F.col(a).alias(g) for a, g in zip(lay.gcols, gb)] + [F.col(Q).alias(lay.query)]
        sel += [F.col(f"__rl_v{i}").alias(k) for i, k in enumerate(keys)]
        return out.select(*sel)
    out = run_chunks(prepared, lay, "agg", partitions, labels_max, rows_per_call)
    if gb:
        return grouped(out, lay, prepared)
    return result(out, lay)


def _settings(
    judgments: Any,
    run: Any,
    measures: str | Measure | Iterable[str | Measure],
    convention: str | Convention | None,
    group_by: str | Sequence[str] | None,
    partitions: int | None,
    rows_per_call: int,
    options: dict[str, Any],
) -> tuple[Any, Any, list[str], Columns, Formats, Plan]:
    """The arguments of :func:`evaluate` checked: (rankings table, judgments table or None, group columns,
    column names, formats, plan)."""
    for name, df in (("judgments", judgments), ("run", run)):
        if (df is not None or name == "judgments" and run is None) and not is_dataframe(df):
            raise InvalidParameterError(f"`{name}` must be a pyspark DataFrame; got {type(df).__name__}.")
    require_pyspark()
    # one table (given as either argument) holds both sides; else the rankings lead, judgments join them
    rankings_df, judgments_df = (run, judgments) if run is not None else (judgments, None)
    if not isinstance(rows_per_call, int) or isinstance(rows_per_call, bool) or rows_per_call < 1:
        raise InvalidParameterError(f"`rows_per_call` must be an integer >= 1; got {rows_per_call!r}.")
    if partitions is not None and (not isinstance(partitions, int) or isinstance(partitions, bool) or partitions < 1):
        raise InvalidParameterError(f"`partitions` must be an integer >= 1; got {partitions!r}.")
    if "weights" in options:
        raise InvalidParameterError("`weights` is not supported on Spark; use ranklens.evaluate for weighted means.")
    gb = [group_by] if isinstance(group_by, str) else list(group_by or [])
    columns, formats, overrides = split_options(
        options, own=("measures", "convention", "per_query", "group_by", "partitions", "rows_per_call"))
    if replace(formats, missing="error") != Formats():
        raise InvalidParameterError("`format`, `judgments_format`, `run_format` and `groups` are for files; "
                                    "ranklens.spark.evaluate takes DataFrames.")
    plan = make_plan(get_convention(convention, **overrides), measures)
    if len(set(plan.keys)) != len(plan.keys):
        raise InvalidParameterError(f"a measure is asked twice: {plan.keys}.")
    return rankings_df, judgments_df, gb, columns, formats, plan
