"""ranklens on Spark: the numbers of :func:`ranklens.evaluate`, computed on a cluster.

Spark brings the rows of each query together (a shuffle by the query key, plus
any ``group_by`` columns, sorted within partitions); the executors then hand
whole queries, many at a time, as Arrow batches to the same code the local
engine runs (:func:`ranklens._problem.build_problem` and
:func:`ranklens.evaluate.compute_values`, i.e. the numba kernels). No metric
arithmetic is written in Spark SQL: Spark only moves rows and sums the
per-query values the kernels return.

What depends on more than one query is computed globally first, exactly as the
local engine does on the whole input: the largest label (ERR's default maximum
grade), and Evidently's "cutoff beyond the deepest rank" check. The query
universe of the convention (judged, ranked, both, intersection, same) is decided
per query, so it needs no global step.

Examples
--------
On Parquet files of a data lake (not run here: see the function's example for one that runs)::

    from pyspark.sql import SparkSession
    import ranklens.spark

    spark = SparkSession.builder.master("local[2]").getOrCreate()
    runs = spark.read.parquet("runs.parquet")
    qrels = spark.read.parquet("qrels.parquet")
    res = ranklens.spark.evaluate(runs, qrels, ["ndcg@10", "map"], convention="trec_eval")
    res["ndcg@10"]

>>> import ranklens.spark

Anything but a Spark DataFrame is refused (and without pyspark installed, the
error says ``pip install 'ranklens[spark]'``):

>>> ranklens.spark.evaluate(None)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ranklens.errors.InvalidParameterError: `rankings_df` must be a pyspark DataFrame; got NoneType.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from ._deps import require
from ._problem import Exclusion, build_problem
from .conventions import Convention, get_convention
from .data import _pick, split_table
from .errors import EmptyQueryError, InputError, InvalidParameterError, RanklensError
from .evaluate import _rule, check_measures, compute_values
from .measures import Measure, parse_measures
from .result import _XGB_MAX_MEAN, Result

__all__ = ["evaluate", "session"]

# internal column names (a prefix no user column is expected to have)
_Q, _ITEM, _SCORE, _RANK, _LABEL, _SIDE, _ROW = (
    "__rl_q", "__rl_item", "__rl_score", "__rl_rank", "__rl_label", "__rl_side", "__rl_row",
)
_KIND, _NQ, _TOP, _REASON, _MEAS, _COUNT, _EX = (
    "__rl_kind", "__rl_nq", "__rl_top", "__rl_reason", "__rl_measure", "__rl_count", "__rl_examples",
)
_SIDE_RANKED, _SIDE_JUDGED = 0, 1
_KIND_PARTIAL, _KIND_NOTE, _KIND_SKIP, _KIND_EMPTY = 0, 1, 2, 3
#: the order in which build_problem reports its notes
_NOTE_ORDER = (
    "ranked but not judged: left out",
    "judged but not ranked: left out",
    "judged but not ranked: scored as an empty ranking",
    "ranked but not judged",
)
_N_EXAMPLES = 20
_ERROR_LINE = re.compile(r"ranklens\.errors\.(\w+): (.*)")


def session(master: str = "local[*]", app_name: str = "ranklens", config: dict[str, Any] | None = None,
            **conf: Any) -> Any:
    """A SparkSession whose Python workers run this interpreter (``PYSPARK_PYTHON``).

    Parameters
    ----------
    master : str, default="local[*]"
        Spark master URL (``local[2]``, ``yarn``, ``spark://host:7077``...).
    app_name : str, default="ranklens"
        Application name.
    config : dict, optional
        Spark settings by their exact names (``{"spark.executorEnv.PYSPARK_PYTHON": ...}``).
    **conf
        Spark settings; ``_`` in a keyword stands for ``.`` (``spark_sql_shuffle_partitions=4``).

    Returns
    -------
    pyspark.sql.SparkSession

    Examples
    --------
    Starting a JVM is not done in a doctest; the tests run it::

        spark = ranklens.spark.session("local[2]", spark_ui_enabled="false")
    """
    require("pyspark")
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    b = SparkSession.builder.master(master).appName(app_name)
    settings = {k.replace("_", "."): v for k, v in conf.items()}
    settings.update(config or {})
    for k, v in settings.items():
        b = b.config(k, str(v))
    return b.getOrCreate()


# ---------------------------------------------------------------------------------------------------
# preparing the DataFrames
# ---------------------------------------------------------------------------------------------------


def _is_df(obj: Any) -> bool:
    mod = type(obj).__module__ or ""
    return mod.startswith("pyspark.sql") and type(obj).__name__ == "DataFrame"


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


class _Plan:
    """What was asked, resolved against the DataFrames' columns."""

    def __init__(self, rankings_df: Any, judgments_df: Any, measures: list[Measure], conv: Convention,
                 group_by: list[str], columns: dict[str, Any]) -> None:
        self.measures = measures
        self.conv = conv
        self.group_by = group_by
        self.two_tables = judgments_df is not None
        rwhere = "the rankings DataFrame"
        rcols = list(rankings_df.columns)
        self.query = _pick(rcols, "query", columns.get("query_col"), True, rwhere)
        self.item = _pick(rcols, "item", columns.get("item_col"), True, rwhere)
        self.score = _pick(rcols, "score", columns.get("score_col"), False, rwhere)
        self.rank = None if self.score else _pick(rcols, "rank", columns.get("rank_col"), False, rwhere)
        if self.score is None and self.rank is None:
            raise InvalidParameterError(
                f"no score or rank column in {rwhere} (columns: {rcols}); pass `score_col=` or `rank_col=`."
            )
        if self.two_tables:
            jwhere = "the judgments DataFrame"
            jcols = list(judgments_df.columns)
            self.j_query = _pick(jcols, "query", columns.get("query_col"), True, jwhere)
            self.j_item = _pick(jcols, "item", columns.get("item_col"), True, jwhere)
            self.j_label = _pick(jcols, "label", columns.get("label_col"), True, jwhere)
            self.label = None
        else:
            self.label = _pick(rcols, "label", columns.get("label_col"), True, rwhere + " (no judgments_df given)")
        for g in group_by:
            if g not in rcols:
                raise InvalidParameterError(f"`group_by` column {g!r} is not in {rwhere}; columns: {rcols}.")
            if g in (self.query, self.item, self.score, self.rank, self.label):
                raise InvalidParameterError(f"`group_by` column {g!r} is the query, item, score, rank or label column.")
        if len(set(group_by)) != len(group_by):
            raise InvalidParameterError(f"`group_by` repeats a column: {group_by}.")
        clash = [m.key for m in measures if m.key in group_by or m.key == self.query]
        if clash:
            raise InvalidParameterError(f"measure key {clash[0]!r} is also a column name of the output.")
        self.gcols = [f"__rl_g{i}" for i in range(len(group_by))]
        self.keys = self.gcols + [_Q]
        self.need_max = any(m.family == "err" for m in measures) and conv.err_max_grade is None
        self.check_depth = conv.k_beyond_longest == "error"
        # the executors never stop on the Evidently check: it needs the deepest list of all queries
        self.exec_conv = conv.replace(k_beyond_longest="allow") if self.check_depth else conv


def _prepare(rankings_df: Any, judgments_df: Any, plan: _Plan) -> Any:
    """One long DataFrame (rankings rows, then judgments rows) with internal column names."""
    from pyspark.sql import functions as F

    p = plan
    rank_key = F.col(p.score).cast("double") if p.score else F.col(p.rank).cast("double")
    gsel = [F.col(g).alias(a) for g, a in zip(p.group_by, p.gcols)]
    if not p.two_tables:
        return rankings_df.select(
            *gsel, _id_col(rankings_df, p.query).alias(_Q), _id_col(rankings_df, p.item).alias(_ITEM),
            rank_key.alias(_SCORE), F.col(p.label).cast("double").alias(_LABEL),
            F.lit(_SIDE_RANKED).cast("byte").alias(_SIDE), F.monotonically_increasing_id().alias(_ROW),
        )
    jdf = judgments_df
    rq, jq = _common_type(rankings_df, p.query, jdf, p.j_query)
    ri, ji = _common_type(rankings_df, p.item, jdf, p.j_item)
    ranked = rankings_df.select(
        *gsel, rq.alias(_Q), ri.alias(_ITEM), rank_key.alias(_SCORE), F.lit(None).cast("double").alias(_LABEL),
        F.lit(_SIDE_RANKED).cast("byte").alias(_SIDE), F.monotonically_increasing_id().alias(_ROW),
    )
    in_j = [g for g in p.group_by if g in jdf.columns]
    judged = jdf.select(
        *[F.col(g).alias(a) for g, a in zip(p.group_by, p.gcols) if g in in_j],
        jq.alias(_Q), ji.alias(_ITEM), F.lit(None).cast("double").alias(_SCORE),
        F.col(p.j_label).cast("double").alias(_LABEL),
        F.lit(_SIDE_JUDGED).cast("byte").alias(_SIDE), F.monotonically_increasing_id().alias(_ROW),
    )
    if len(in_j) < len(p.group_by):
        # the judgments do not carry every group column: each group is evaluated against the
        # judgments of the queries it ranks
        on = [a for g, a in zip(p.group_by, p.gcols) if g in in_j] + [_Q]
        groups = ranked.select(*p.gcols, _Q).distinct()
        judged = judged.join(groups, on=on, how="inner")
    return ranked.unionByName(judged.select(*ranked.columns))


# ---------------------------------------------------------------------------------------------------
# the executors' side: whole queries -> build_problem -> compute_values
# ---------------------------------------------------------------------------------------------------


def _changes(cols: Sequence[Any]) -> np.ndarray:
    """``True`` where a row's key differs from the previous row's (null equals null); row 0 is True."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(cols[0]) if cols else 0
    out = np.zeros(n, dtype=bool)
    if n == 0:
        return out
    out[0] = True
    for c in cols:
        if isinstance(c, pa.ChunkedArray):
            c = c.combine_chunks()
        a, b = c.slice(1), c.slice(0, n - 1)
        ne = pc.not_equal(a, b)
        if c.null_count:
            an, bn = pc.is_null(a), pc.is_null(b)
            ne = pc.if_else(pc.and_(an, bn), False, pc.if_else(pc.or_(an, bn), True, ne))
        out[1:] |= np.asarray(ne.to_numpy(zero_copy_only=False), dtype=bool)
    return out


def _id_text(x: Any) -> str:
    """An id as the local engine prints it (float ids that are integers are integers there)."""
    return str(int(x)) if isinstance(x, float) and x.is_integer() else str(x)


def _sentinel_items(item_type: Any, m: int) -> Any:
    import pyarrow as pa

    if pa.types.is_integer(item_type):
        return pa.array(np.arange(m, dtype=np.int64)).cast(item_type)
    if pa.types.is_floating(item_type):
        return pa.array(np.arange(m, dtype=np.float64)).cast(item_type)
    return pa.array([str(i) for i in range(m)]).cast(item_type)


def _deepest(problem: Any, measures: list[Measure], conv: Convention) -> np.ndarray:
    """Per query: the deepest rank that counts for Evidently's cutoff check (see evaluate._check_k_beyond_deepest)."""
    from ._kernels import api
    from ._kernels import codes as K
    from .evaluate import _GRADED

    lengths = problem.lengths
    last, positive = api.list_stats(problem.r_start, problem.r_end, problem.r_idx, problem.score, problem.label)
    deepest = lengths.astype(np.float64)
    if problem.ties == K.TIES_SHARED_RANK:
        deepest = np.where(lengths > 0, np.floor(lengths - (last - 1) / 2.0), 0)
    if any(_rule(m, conv) == "skip" for m in measures if m.family in _GRADED):
        deepest = np.where(positive, deepest, 0)
    return deepest


class _Worker:
    """The function handed to ``mapInArrow``: a picklable closure over the plan's small facts."""

    def __init__(self, plan: _Plan, mode: str, out_schema: Any, max_labels: dict[Any, float] | None,
                 rows_per_call: int) -> None:
        self.measures = plan.measures
        self.conv = plan.exec_conv
        self.gcols = plan.gcols
        self.two_tables = plan.two_tables
        self.rank_only = plan.score is None
        self.mode = mode
        self.out_schema = out_schema
        self.max_labels = max_labels
        self.rows_per_call = rows_per_call
        self.check_depth = plan.check_depth
        self.n_examples = _N_EXAMPLES if not plan.group_by else 0

    # -- streaming whole queries -----------------------------------------------------------------
    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        try:  # one kernel thread per Spark task core: tasks run side by side
            from pyspark import TaskContext

            from ._threads import set_threads

            ctx = TaskContext.get()
            set_threads(max(1, int(ctx.cpus()) if ctx is not None else 1))
        except Exception:  # pragma: no cover - outside a task
            pass
        pending: list[Any] = []
        n_pending = 0
        keys = self.gcols + [_Q]
        for b in batches:
            if b.num_rows == 0:
                continue
            pending.append(b)
            n_pending += b.num_rows
            if n_pending < self.rows_per_call:
                continue
            t = pa.Table.from_batches(pending)
            # rows come sorted by key: the last query may go on in the next batch, keep it
            cut = int(np.flatnonzero(_changes([t.column(k) for k in keys]))[-1])
            if cut == 0:
                continue  # one query so far
            yield from self._chunk(t.slice(0, cut).combine_chunks())
            rest = t.slice(cut)
            pending, n_pending = rest.to_batches(), rest.num_rows
        if pending:
            yield from self._chunk(pa.Table.from_batches(pending).combine_chunks())

    def _chunk(self, t: Any) -> Iterator[Any]:
        if self.max_labels is not None and self.gcols:
            # ERR's maximum grade is per group: one problem per group of the chunk
            gch = _changes([t.column(g) for g in self.gcols])
            starts = np.append(np.flatnonzero(gch), t.num_rows)
            for a, b in zip(starts[:-1], starts[1:]):
                yield from self._problem(t.slice(int(a), int(b - a)))
        else:
            yield from self._problem(t)

    # -- one problem -------------------------------------------------------------------------------
    def _problem(self, t: Any) -> Iterator[Any]:
        import pyarrow as pa

        keys = self.gcols + [_Q]
        ch = _changes([t.column(k) for k in keys])
        codes = np.cumsum(ch) - 1
        first = np.flatnonzero(ch)  # first row of each query
        nq = first.shape[0]
        sentinel = nq
        m = max(1, self.conv.min_items)
        item_col = t.column(_ITEM)
        s_items = _sentinel_items(item_col.type, m)
        s_order = np.arange(m, 0, -1, dtype=np.float64) if not self.rank_only else np.arange(1, m + 1, dtype=np.float64)
        side = np.asarray(t.column(_SIDE).to_numpy(), dtype=np.int8)
        key_name = "rank" if self.rank_only else "score"
        if self.two_tables:
            rmask = side == _SIDE_RANKED
            jmask = ~rmask
            r_tbl = pa.table({
                "query": np.append(codes[rmask], np.full(m, sentinel)),
                "item": pa.concat_arrays([item_col.filter(pa.array(rmask)).combine_chunks(), s_items]),
                key_name: np.append(t.column(_SCORE).filter(pa.array(rmask)).combine_chunks()
                                    .to_numpy(zero_copy_only=False), s_order),
            })
            j_tbl = pa.table({
                "query": np.append(codes[jmask], [sentinel]),
                "item": pa.concat_arrays([item_col.filter(pa.array(jmask)).combine_chunks(), s_items.slice(0, 1)]),
                "label": pa.concat_arrays([t.column(_LABEL).filter(pa.array(jmask)).combine_chunks(),
                                           pa.array([1.0])]),
            })
            _, r = split_table(r_tbl, need="rankings", query_col="query", item_col="item",
                               source="the rankings DataFrame", **{f"{key_name}_col": key_name})
            j, _ = split_table(j_tbl, need="judgments", query_col="query", item_col="item", label_col="label",
                               source="the judgments DataFrame")
        else:
            s_label = np.zeros(m)
            s_label[0] = 1.0
            tbl = pa.table({
                "query": np.append(codes, np.full(m, sentinel)),
                "item": pa.concat_arrays([item_col.combine_chunks(), s_items]),
                key_name: pa.concat_arrays([t.column(_SCORE).combine_chunks(), pa.array(s_order)]),
                "label": pa.concat_arrays([t.column(_LABEL).combine_chunks(), pa.array(s_label)]),
            })
            j, r = split_table(tbl, need="both", query_col="query", item_col="item", label_col="label",
                               source="the rankings DataFrame", **{f"{key_name}_col": key_name})
        assert j is not None and r is not None
        problem = build_problem(j, r, self.conv)
        if self.max_labels is not None:
            gkey = tuple(t.column(g)[0].as_py() for g in self.gcols)
            problem.max_label = self.max_labels.get(gkey, 0.0)  # a group without judgments: no label
        values, empties = compute_values(problem, self.measures, self.conv)
        qcodes = np.asarray(problem.qids, dtype=np.int64)
        keep = qcodes != sentinel  # the sentinel is always evaluated (judged and ranked), and dropped here
        qcodes, values, empties = qcodes[keep], values[keep], empties[keep]
        rows = first[qcodes]  # a row of each evaluated query, in query order
        if self.mode == "query":
            yield self._query_rows(t, rows, values)
        else:
            top = _deepest(problem, self.measures, self.conv)[keep] if self.check_depth else None
            yield from self._partials(t, rows, qcodes, first, values, empties, problem.notes, top)

    def _query_rows(self, t: Any, rows: np.ndarray, values: np.ndarray) -> Any:
        import pyarrow as pa

        idx = pa.array(rows)
        cols = [t.column(g).take(idx) for g in self.gcols] + [t.column(_Q).take(idx)]
        for i in range(values.shape[1]):
            v = values[:, i]
            cols.append(pa.array(v, mask=np.isnan(v), type=pa.float64()))
        return pa.RecordBatch.from_arrays([c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in cols],
                                          schema=self.out_schema)

    def _partials(self, t: Any, rows: np.ndarray, qcodes: np.ndarray, first: np.ndarray, values: np.ndarray,
                  empties: np.ndarray, notes: list[Exclusion], top: np.ndarray | None) -> Iterator[Any]:
        import pyarrow as pa

        n_m = values.shape[1]
        if rows.shape[0] == 0:
            gid = np.zeros(0, np.int64)
            g_rows = np.zeros(0, np.int64)
        elif self.gcols:
            gch = _changes([t.column(g).take(pa.array(rows)) for g in self.gcols])
            gid = np.cumsum(gch) - 1
            g_rows = rows[np.flatnonzero(gch)]
        else:
            gid = np.zeros(rows.shape[0], np.int64)
            g_rows = rows[:1]
        n_g = g_rows.shape[0]
        valid = ~np.isnan(values)
        out: dict[str, Any] = {}
        for g in self.gcols:
            out[g] = t.column(g).take(pa.array(g_rows))
        out[_KIND] = np.full(n_g, _KIND_PARTIAL, np.int32)
        out[_NQ] = np.bincount(gid, minlength=n_g).astype(np.int64)
        tops = np.zeros(n_g)
        if top is not None and n_g:
            np.maximum.at(tops, gid, top)
        out[_TOP] = tops
        for i in range(n_m):
            out[f"__rl_n{i}"] = np.bincount(gid, weights=valid[:, i], minlength=n_g).astype(np.int64)
            out[f"__rl_s{i}"] = np.bincount(gid, weights=np.where(valid[:, i], values[:, i], 0.0), minlength=n_g)
        extra: list[dict[str, Any]] = []
        if self.n_examples:
            qvals = t.column(_Q)

            def ex(mask_rows: np.ndarray) -> list[str]:
                return [_id_text(x) for x in qvals.take(pa.array(mask_rows[: self.n_examples])).to_pylist()]

            for note in notes:
                code_rows = first[np.array([int(e) for e in note.examples], dtype=np.int64)]
                extra.append({_KIND: _KIND_NOTE, _REASON: note.reason, _COUNT: note.count, _EX: ex(code_rows)})
            for i, meas in enumerate(self.measures):
                skipped = ~valid[:, i]
                if skipped.any():
                    extra.append({_KIND: _KIND_SKIP, _MEAS: i, _COUNT: int(skipped.sum()), _EX: ex(rows[skipped])})
                emp = empties[:, i] & valid[:, i]
                if emp.any() and meas.family not in ("dcg", "idcg"):
                    extra.append({_KIND: _KIND_EMPTY, _MEAS: i, _COUNT: int(emp.sum()), _EX: ex(rows[emp])})
        n_x = len(extra)
        arrays = []
        for f in self.out_schema:
            v = out.get(f.name)
            if v is None:
                base = pa.nulls(n_g, type=f.type)
            elif isinstance(v, pa.ChunkedArray):
                base = v.combine_chunks()
            elif isinstance(v, pa.Array):
                base = v
            else:
                base = pa.array(v, type=f.type)
            base = base.cast(f.type)
            if n_x:
                base = pa.concat_arrays([base, pa.array([x.get(f.name) for x in extra], type=f.type)])
            arrays.append(base)
        yield pa.RecordBatch.from_arrays(arrays, schema=self.out_schema)


def _arrow_schema(spark_schema: Any, timezone: str) -> Any:
    from pyspark.sql.pandas.types import to_arrow_schema

    try:
        return to_arrow_schema(spark_schema, timezone=timezone, prefers_large_types=False)
    except TypeError:  # pragma: no cover - pyspark 3.5's signature
        return to_arrow_schema(spark_schema)


def _run(prepared: Any, plan: _Plan, mode: str, partitions: int | None, max_labels: dict[Any, float] | None,
         rows_per_call: int) -> Any:
    from pyspark.sql import types as T

    gfields = [prepared.schema[g] for g in plan.gcols]
    qfield = prepared.schema[_Q]
    if mode == "query":
        fields = [T.StructField(f.name, f.dataType, True) for f in gfields + [qfield]]
        fields += [T.StructField(f"__rl_v{i}", T.DoubleType(), True) for i in range(len(plan.measures))]
    else:
        fields = [T.StructField(f.name, f.dataType, True) for f in gfields]
        fields += [T.StructField(_KIND, T.IntegerType(), True), T.StructField(_NQ, T.LongType(), True),
                   T.StructField(_TOP, T.DoubleType(), True)]
        for i in range(len(plan.measures)):
            fields += [T.StructField(f"__rl_n{i}", T.LongType(), True), T.StructField(f"__rl_s{i}", T.DoubleType(), True)]
        fields += [T.StructField(_REASON, T.StringType(), True), T.StructField(_MEAS, T.IntegerType(), True),
                   T.StructField(_COUNT, T.LongType(), True), T.StructField(_EX, T.ArrayType(T.StringType()), True)]
    schema = T.StructType(fields)
    tz = prepared.sparkSession.conf.get("spark.sql.session.timeZone") or "UTC"
    worker = _Worker(plan, mode, _arrow_schema(schema, tz), max_labels, rows_per_call)
    n = partitions or int(prepared.sparkSession.conf.get("spark.sql.shuffle.partitions"))
    grouped = prepared.repartition(n, *plan.keys).sortWithinPartitions(*plan.keys, _SIDE, _ROW)
    import warnings

    with warnings.catch_warnings():  # pyspark warns about pandas >= 3 here, though mapInArrow uses no pandas
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
        return grouped.mapInArrow(worker, schema)


# ---------------------------------------------------------------------------------------------------
# errors raised inside the executors come back as ranklens errors
# ---------------------------------------------------------------------------------------------------


class _Reraise:
    """Turn a Spark-wrapped ranklens error (raised in an executor) back into the ranklens error."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, et: Any, exc: Any, tb: Any) -> bool:
        if exc is None or isinstance(exc, RanklensError):
            return False
        text = str(exc)
        found = _ERROR_LINE.findall(text)
        if not found:
            return False
        from . import errors

        name, message = found[-1]
        cls = getattr(errors, name, InputError)
        raise cls(message.strip()) from None


def _deps_check() -> None:
    require("pyspark")


def _with_per_query(res: Result, per_query_df: Any) -> Result:
    """The Result with its per-query values filled from the per-query DataFrame (for printing; small inputs)."""
    keys = res.keys
    rows = _collect(per_query_df)
    qcol = per_query_df.columns[0]
    qids = [r[qcol] for r in rows]
    integral = all(isinstance(q, int) for q in qids)
    order = sorted(range(len(rows)), key=lambda i: qids[i] if integral else str(qids[i]))
    values = np.array([[math.nan if rows[i][k] is None else rows[i][k] for k in keys] for i in order],
                      dtype=np.float64).reshape(len(rows), len(keys))
    queries = np.array([qids[i] for i in order], dtype=np.int64 if integral else object)
    return Result(res.measures, res.aggregate, queries, values, res.counted, res.excluded, res.convention, None,
                  per_query=True)


def _collect(df: Any) -> list[Any]:
    with _Reraise():
        return df.collect()


def _check_universe(prepared: Any, plan: _Plan) -> None:
    """The two conventions that refuse a query missing from one side: counted over all queries at once."""
    from pyspark.sql import functions as F

    conv = plan.conv
    if not plan.two_tables or not (conv.queries == "same" or (conv.missing_ranking == "error" and conv.queries != "judged")):
        return
    flags = prepared.groupBy(*plan.keys).agg(
        F.max((F.col(_SIDE) == _SIDE_JUDGED).cast("int")).alias("j"),
        F.max((F.col(_SIDE) == _SIDE_RANKED).cast("int")).alias("r"),
    ).filter(F.col("j") != F.col("r")).cache()
    try:
        with _Reraise():
            counts = {(r["j"], r["r"]): r["n"] for r in flags.groupBy("j", "r").agg(F.count("*").alias("n")).collect()}
            n_j, n_r = counts.get((1, 0), 0), counts.get((0, 1), 0)
            if not n_j and not n_r:
                return

            def ex(j: int) -> str:
                rows = flags.filter(F.col("j") == j).select(_Q).distinct().orderBy(_Q).limit(5).collect()
                return ", ".join(str(r[_Q]) for r in rows)

        if conv.queries == "same":
            raise InputError(
                f"convention {conv.name!r} needs the same queries in judgments and rankings: "
                f"{n_j} judged but not ranked ({ex(1) if n_j else ''}), {n_r} ranked but not judged ({ex(0) if n_r else ''})."
            )
        if n_j:
            raise InputError(
                f"convention {conv.name!r}: {n_j} judged queries have no ranking ({ex(1)}); trec_eval 10 stops here "
                "too (use -c, i.e. queries='judged', to score them 0)."
            )
    finally:
        flags.unpersist()


def _max_labels(prepared: Any, plan: _Plan) -> dict[Any, float]:
    """The largest label (after the convention's label rule) of every group's judgments."""
    from pyspark.sql import functions as F

    from ._problem import _label_rule

    side = _SIDE_JUDGED if plan.two_tables else _SIDE_RANKED
    rows = _collect(prepared.filter((F.col(_SIDE) == side) & F.col(_LABEL).isNotNull())
                    .groupBy(*plan.gcols).agg(F.max(_LABEL).alias("m")))
    return {tuple(r[g] for g in plan.gcols): float(_label_rule(np.array([r["m"]], dtype=np.float64), plan.conv)[0])
            for r in rows}


# ---------------------------------------------------------------------------------------------------
# aggregation (what Result.build does, from per-partition sums)
# ---------------------------------------------------------------------------------------------------


def _finish_mean(m: Measure, conv: Convention, n: int, s: float) -> float:
    if m.summed:
        return float(s)
    mean = s / n if n > 0 else math.nan
    if conv.clamp_mean and m.family == "ndcg" and not math.isnan(mean):
        if mean > _XGB_MAX_MEAN:  # pragma: no cover - needs weights, which Spark does not take
            raise InputError(f"convention {conv.name!r}: the mean of {m.key!r} is {mean!r} > 1.")
        mean = min(1.0, mean)
    return mean


def _check_depth(plan: _Plan, tops: dict[Any, float]) -> None:
    for gkey, top_f in tops.items():
        top = int(top_f)
        for m in plan.measures:
            if m.k is not None and m.k > top:
                where = f" (group {dict(zip(plan.group_by, gkey))})" if plan.group_by else ""
                raise InvalidParameterError(
                    f"convention {plan.conv.name!r}: cutoff {m.k} of {m.key!r} is beyond the deepest rank ({top}) of "
                    f"the lists that count{where}; Evidently raises KeyError here (ValueError when no list counts)."
                )


def _sort_examples(ex: Iterable[str], integral: bool) -> tuple[str, ...]:
    uniq = set(ex)
    key = (lambda s: int(s) if s.lstrip("-").isdigit() else float(s)) if integral else None
    return tuple(sorted(uniq, key=key)[:_N_EXAMPLES])


def _result(rows: list[Any], plan: _Plan, integral: bool) -> Result:
    measures, conv = plan.measures, plan.conv
    n_m = len(measures)
    n = [0] * n_m
    s = [0.0] * n_m
    nq = 0
    top = 0.0
    notes: dict[str, list[Any]] = {}
    mnotes: dict[tuple[int, int], list[Any]] = {}
    for r in rows:
        kind = r[_KIND]
        if kind == _KIND_PARTIAL:
            nq += r[_NQ]
            top = max(top, r[_TOP])
            for i in range(n_m):
                n[i] += r[f"__rl_n{i}"]
                s[i] += r[f"__rl_s{i}"]
        elif kind == _KIND_NOTE:
            acc = notes.setdefault(r[_REASON], [0, []])
            acc[0] += r[_COUNT]
            acc[1].extend(r[_EX])
        else:
            acc = mnotes.setdefault((r[_MEAS], kind), [0, []])
            acc[0] += r[_COUNT]
            acc[1].extend(r[_EX])
    if nq == 0:
        raise InputError("no query to evaluate: the judgments and the rankings have no query in common.")
    if plan.check_depth:
        _check_depth(plan, {(): top})
    for i, m in enumerate(measures):
        if (i, _KIND_EMPTY) in mnotes and _rule(m, conv) == "error":
            cnt, ex = mnotes[(i, _KIND_EMPTY)]
            raise EmptyQueryError(  # pragma: no cover - raised in the executors first
                f"{cnt} queries have no relevant item for {m.key!r} ({', '.join(_sort_examples(ex, integral)[:5])}); "
                f"convention {conv.name!r} says empty='error'."
            )
    excluded: list[Exclusion] = []
    order = {r: i for i, r in enumerate(_NOTE_ORDER)}
    for reason in sorted(notes, key=lambda x: order.get(x, len(order))):
        cnt, ex = notes[reason]
        excluded.append(Exclusion(reason, int(cnt), _sort_examples(ex, integral)))
    by_reason: dict[tuple[str, int, tuple[str, ...]], list[str]] = {}
    aggregate, counted = {}, {}
    for i, m in enumerate(measures):
        counted[m.key] = int(n[i])
        aggregate[m.key] = _finish_mean(m, conv, n[i], s[i])
        if (i, _KIND_SKIP) in mnotes:
            cnt, ex = mnotes[(i, _KIND_SKIP)]
            by_reason.setdefault(("no relevant item: skipped (not in the mean)", int(cnt),
                                  _sort_examples(ex, integral)), []).append(m.key)
        if (i, _KIND_EMPTY) in mnotes:
            cnt, ex = mnotes[(i, _KIND_EMPTY)]
            reason = f"no relevant item: scored {float(_rule(m, conv)):g} by the convention"
            by_reason.setdefault((reason, int(cnt), _sort_examples(ex, integral)), []).append(m.key)
    for (reason, count, ids), keys in by_reason.items():
        excluded.append(Exclusion(reason, count, ids, tuple(keys)))
    return Result(measures, aggregate, np.zeros(0, dtype=object), np.zeros((0, n_m)), counted, excluded, conv,
                  None, per_query=False)


def _grouped(out: Any, plan: _Plan, keep_top: bool = False) -> Any:
    from pyspark.sql import functions as F

    parts = out.filter(F.col(_KIND) == _KIND_PARTIAL)
    aggs = [F.sum(_NQ).alias(_NQ), F.max(_TOP).alias(_TOP)]
    for i in range(len(plan.measures)):
        aggs += [F.sum(f"__rl_n{i}").alias(f"__rl_n{i}"), F.sum(f"__rl_s{i}").alias(f"__rl_s{i}")]
    g = parts.groupBy(*plan.gcols).agg(*aggs)
    sel = [F.col(a).alias(name) for a, name in zip(plan.gcols, plan.group_by)]
    sel.append(F.col(_NQ).alias("queries"))
    if keep_top:
        sel.append(F.col(_TOP))
    for i, m in enumerate(plan.measures):
        n_i, s_i = F.col(f"__rl_n{i}"), F.col(f"__rl_s{i}")
        if m.summed:
            v = s_i
        else:
            v = s_i / n_i
            if plan.conv.clamp_mean and m.family == "ndcg":
                v = F.least(F.lit(1.0), v)  # XGBoost's Finalize
            v = F.when(n_i > 0, v)  # no query counted: null (NaN locally)
        sel.append(v.alias(m.key))
        sel.append(n_i.alias(f"queries:{m.key}"))
    return g.select(*sel)


# ---------------------------------------------------------------------------------------------------
# the public verb
# ---------------------------------------------------------------------------------------------------


def evaluate(
    rankings_df: Any,
    judgments_df: Any = None,
    metrics: str | Measure | Iterable[str | Measure] = ("ndcg@10",),
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
    rankings_df : pyspark.sql.DataFrame
        Long table of ranked items: query, item and score (or rank, 1 best)
        columns; with ``judgments_df=None`` it also holds the relevance column
        (a null label: not judged; a null score: judged, not ranked), as a
        table given alone to :func:`ranklens.evaluate`.
    judgments_df : pyspark.sql.DataFrame, optional
        Long table of judgments: query, item, relevance. Co-grouped with the
        rankings by query (and by the ``group_by`` columns it has).
    metrics : str or list of str, default=("ndcg@10",)
        Measures, as in :func:`ranklens.evaluate`.
    convention : str or Convention, default="ranklens"
        A preset of :data:`ranklens.CONVENTIONS` or a Convention.
    per_query : bool, default=False
        Return a Spark DataFrame of per-query values (columns: the ``group_by``
        columns, the query column, one double column per measure key; null
        where the convention skips the query) instead of the aggregates.
    group_by : str or list of str, optional
        Columns of ``rankings_df`` (date, model version, slice...) that split
        the evaluation: each group is evaluated as
        ``ranklens.evaluate(judgments of its queries, its rankings)``. When
        ``judgments_df`` lacks a group column, a group sees the judgments of the
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
    >>> round(ranklens.spark.evaluate(df, metrics=["ndcg"])["ndcg"], 5)      # doctest: +SKIP
    0.61828
    """
    if not _is_df(rankings_df):
        raise InvalidParameterError(f"`rankings_df` must be a pyspark DataFrame; got {type(rankings_df).__name__}.")
    require("pyspark")
    if judgments_df is not None and not _is_df(judgments_df):
        raise InvalidParameterError(f"`judgments_df` must be a pyspark DataFrame; got {type(judgments_df).__name__}.")
    if not isinstance(rows_per_call, int) or isinstance(rows_per_call, bool) or rows_per_call < 1:
        raise InvalidParameterError(f"`rows_per_call` must be an integer >= 1; got {rows_per_call!r}.")
    if partitions is not None and (not isinstance(partitions, int) or isinstance(partitions, bool) or partitions < 1):
        raise InvalidParameterError(f"`partitions` must be an integer >= 1; got {partitions!r}.")
    if "weights" in options:
        raise InvalidParameterError("`weights` is not supported on Spark; use ranklens.evaluate for weighted means.")
    gb = [group_by] if isinstance(group_by, str) else list(group_by or [])
    column_keys = {"query_col", "item_col", "score_col", "rank_col", "label_col"}
    columns = {k: v for k, v in options.items() if k in column_keys}
    overrides = {k: v for k, v in options.items() if k not in column_keys}
    conv = get_convention(convention, **overrides)
    measures = parse_measures(metrics)
    check_measures(measures, conv)
    keys = [m.key for m in measures]
    if len(set(keys)) != len(keys):
        raise InvalidParameterError(f"a measure is asked twice: {keys}.")
    plan = _Plan(rankings_df, judgments_df, measures, conv, gb, columns)
    prepared = _prepare(rankings_df, judgments_df, plan)
    _check_universe(prepared, plan)
    max_labels = _max_labels(prepared, plan) if plan.need_max else None

    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if per_query:
        if plan.check_depth:  # needs the deepest list of every group first (an extra pass)
            parts = (_run(prepared, plan, "agg", partitions, max_labels, rows_per_call)
                     .filter(F.col(_KIND) == _KIND_PARTIAL).groupBy(*plan.gcols).agg(F.max(_TOP).alias(_TOP)))
            _check_depth(plan, {tuple(r[a] for a in plan.gcols): r[_TOP] for r in _collect(parts)})
        out = _run(prepared, plan, "query", partitions, max_labels, rows_per_call)
        sel = [F.col(a).alias(g) for a, g in zip(plan.gcols, gb)] + [F.col(_Q).alias(plan.query)]
        sel += [F.col(f"__rl_v{i}").alias(m.key) for i, m in enumerate(measures)]
        return out.select(*sel)
    out = _run(prepared, plan, "agg", partitions, max_labels, rows_per_call)
    if gb:
        res = _grouped(out, plan, keep_top=plan.check_depth)
        if plan.check_depth:
            _check_depth(plan, {tuple(r[g] for g in gb): r[_TOP] for r in _collect(res)})
            res = res.drop(_TOP)
        return res
    integral = isinstance(prepared.schema[_Q].dataType, (T.LongType, T.DoubleType))  # numeric ids sort as numbers
    return _result(_collect(out), plan, integral)
