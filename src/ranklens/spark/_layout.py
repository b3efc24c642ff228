"""Moving rows, first step: which user columns play which role, and one long DataFrame of internal columns.

The rankings (and the judgments, when they are a separate table) become one DataFrame with a side
marker and the input row order, under internal column names (a prefix no user column is expected to
have); :mod:`ranklens.spark._worker` then shuffles it by query and hands whole queries to the core.
"""

from __future__ import annotations

from typing import Any

from .._core.plan import Plan
from .._input.tables import pick_column
from ..errors import InputError, InvalidParameterError
from ..options import Columns

__all__ = [
    "ITEM", "LABEL", "PARTIAL", "Q", "ROW", "SCORE", "SIDE", "SIDE_JUDGED", "SIDE_RANKED", "Layout", "prepare",
    "refuse_missing_groups",
]

# internal column names
Q, ITEM, SCORE, LABEL, SIDE, ROW = "__rl_q", "__rl_item", "__rl_score", "__rl_label", "__rl_side", "__rl_row"
#: the executors' output of aggregates: a pickled ranklens.result.Partial per chunk and group
PARTIAL = "__rl_partial"
SIDE_RANKED, SIDE_JUDGED = 0, 1


class Layout:
    """What was asked, resolved against the DataFrames' columns."""

    def __init__(self, rankings_df: Any, judgments_df: Any, plan: Plan, group_by: list[str], columns: Columns,
                 missing: str = "error") -> None:
        self.plan = plan
        self.missing = missing  # refused, or rows left out: ranklens._input.validate.MISSING
        self.group_by = group_by
        self.two_tables = judgments_df is not None
        rwhere = "the rankings DataFrame"
        rcols = list(rankings_df.columns)
        self.query = _required(rcols, "query", columns.query, rwhere)
        self.item = _required(rcols, "item", columns.item, rwhere)
        self.score = pick_column(rcols, "score", columns.score, False, rwhere)
        self.rank = None if self.score else pick_column(rcols, "rank", columns.rank, False, rwhere)
        key = self.score or self.rank
        if key is None:
            raise InvalidParameterError(
                f"no score or rank column in {rwhere} (columns: {rcols}); pass `score_col=` or `rank_col=`."
            )
        self.key: str = key  # the ordering column: the score, else the rank
        self.label: str | None = None
        self.j_query = self.j_item = self.j_label = ""
        if self.two_tables:
            jwhere = "the judgments DataFrame"
            jcols = list(judgments_df.columns)
            self.j_query = _required(jcols, "query", columns.query, jwhere)
            self.j_item = _required(jcols, "item", columns.item, jwhere)
            self.j_label = _required(jcols, "label", columns.label, jwhere)
        else:
            self.label = _required(rcols, "label", columns.label, rwhere + " (one table, no judgments)")
        for g in group_by:
            if g not in rcols:
                raise InvalidParameterError(f"`group_by` column {g!r} is not in {rwhere}; columns: {rcols}.")
            if g in (self.query, self.item, self.score, self.rank, self.label):
                raise InvalidParameterError(f"`group_by` column {g!r} is the query, item, score, rank or label column.")
        if len(set(group_by)) != len(group_by):
            raise InvalidParameterError(f"`group_by` repeats a column: {group_by}.")
        clash = [m.key for m in plan.measures if m.key in group_by or m.key == self.query]
        if clash:
            raise InvalidParameterError(f"measure key {clash[0]!r} is also a column name of the output.")
        self.gcols = [f"__rl_g{i}" for i in range(len(group_by))]
        self.keys = self.gcols + [Q]
        # ERR's default maximum grade is the largest label of all judgments (of the group): settled first
        self.need_max = any(m.family == "err" for m in plan.measures) and plan.err_max_grade is None


def _required(columns: list[str], role: str, given: str | None, where: str) -> str:
    """The column playing ``role`` (an error naming the columns when there is none)."""
    found = pick_column(columns, role, given, True, where)
    assert found is not None  # required: pick_column raises instead
    return found


def _common_type(df_a: Any, a: str, df_b: Any, b: str) -> Any:
    """Cast two id columns to one type (strings when they differ, as the local engine unifies ids)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    ta, tb = df_a.schema[a].dataType, df_b.schema[b].dataType
    integral = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
    if isinstance(ta, integral) and isinstance(tb, integral):
        return F.col(a).cast("long"), F.col(b).cast("long")
    if ta == tb:
        return F.col(a), F.col(b)
    numeric = integral + (T.FloatType, T.DoubleType)
    if isinstance(ta, numeric) and isinstance(tb, numeric):
        # integers and floats: doubles, which the executors turn back into integers when they all are,
        # as the local engine does with float ids
        return F.col(a).cast("double"), F.col(b).cast("double")
    return F.col(a).cast("string"), F.col(b).cast("string")


def _id_col(df: Any, c: str) -> Any:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    t = df.schema[c].dataType
    if isinstance(t, (T.ByteType, T.ShortType, T.IntegerType)):
        return F.col(c).cast("long")
    if isinstance(t, (T.StringType, T.LongType, T.DoubleType, T.FloatType)):
        return F.col(c)
    return F.col(c).cast("string")


def prepare(rankings_df: Any, judgments_df: Any, lay: Layout) -> Any:
    """One long DataFrame (rankings rows, then judgments rows) with internal column names."""
    from pyspark.sql import functions as F

    rank_key = F.col(lay.key).cast("double")
    gsel = [F.col(g).alias(a) for g, a in zip(lay.group_by, lay.gcols)]
    if not lay.two_tables:
        return rankings_df.select(
            *gsel, _id_col(rankings_df, lay.query).alias(Q), _id_col(rankings_df, lay.item).alias(ITEM),
            rank_key.alias(SCORE), F.col(lay.label or "").cast("double").alias(LABEL),
            F.lit(SIDE_RANKED).cast("byte").alias(SIDE), F.monotonically_increasing_id().alias(ROW),
        )
    jdf = judgments_df
    rq, jq = _common_type(rankings_df, lay.query, jdf, lay.j_query)
    ri, ji = _common_type(rankings_df, lay.item, jdf, lay.j_item)
    ranked = rankings_df.select(
        *gsel, rq.alias(Q), ri.alias(ITEM), rank_key.alias(SCORE), F.lit(None).cast("double").alias(LABEL),
        F.lit(SIDE_RANKED).cast("byte").alias(SIDE), F.monotonically_increasing_id().alias(ROW),
    )
    in_j = [g for g in lay.group_by if g in jdf.columns]
    judged = jdf.select(
        *[F.col(g).alias(a) for g, a in zip(lay.group_by, lay.gcols) if g in in_j],
        jq.alias(Q), ji.alias(ITEM), F.lit(None).cast("double").alias(SCORE),
        F.col(lay.j_label).cast("double").alias(LABEL),
        F.lit(SIDE_JUDGED).cast("byte").alias(SIDE), F.monotonically_increasing_id().alias(ROW),
    )
    if len(in_j) < len(lay.group_by):
        # the judgments do not carry every group column: each group is evaluated against the
        # judgments of the queries it ranks
        on = [a for g, a in zip(lay.group_by, lay.gcols) if g in in_j] + [Q]
        groups = ranked.select(*lay.gcols, Q).distinct()
        judged = judged.join(groups, on=on, how="inner")
    return ranked.unionByName(judged.select(*ranked.columns))


def refuse_missing_groups(rankings_df: Any, judgments_df: Any, lay: Layout) -> None:
    """A row without a group value (null, NaN or empty text) refused, naming the column and the row's query, as the
    local engine refuses it (:mod:`ranklens._core.slices`): one pass over the group columns, stopped at the first."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    sides = [(rankings_df, "the rankings DataFrame", lay.query)]
    if judgments_df is not None:
        sides.append((judgments_df, "the judgments DataFrame", lay.j_query))
    for df, where, query in sides:
        cols = [g for g in lay.group_by if g in df.columns]
        if not cols:
            continue
        flags: list[Any] = []
        for g in cols:
            t = df.schema[g].dataType
            bad = F.col(g).isNull()
            if isinstance(t, (T.FloatType, T.DoubleType)):
                bad = bad | F.isnan(F.col(g))
            elif isinstance(t, T.StringType):
                bad = bad | (F.length(F.col(g)) == 0)
            flags.append(bad.alias(f"__rl_missing{len(flags)}"))
        hit = df.select(F.col(query).cast("string").alias("q"), *flags).where(
            " OR ".join(f"__rl_missing{i}" for i in range(len(flags)))).limit(1).collect()
        if hit:
            g = cols[next(i for i in range(len(cols)) if hit[0][f"__rl_missing{i}"])]
            raise InputError(f"column {g!r} of {where} has no value in a row of query {hit[0]['q']}: every row needs "
                             "its group.")
