"""Moving rows, second step: whole queries to the executors, through the core, and back.

The long DataFrame of :func:`ranklens.spark._layout.prepare` is shuffled by query (plus the group
columns) and sorted within partitions; ``mapInArrow`` hands :class:`Worker` Arrow batches, which it
cuts into chunks of whole queries (about ``rows_per_call`` rows) and gives to the core: the same
``build_problem`` and kernels as the local engine, one call for many queries. It returns either the
per-query values or, per chunk, what the chunk contributes to the aggregates.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .._problem import Exclusion, build_problem
from ..conventions import Convention
from ..data import split_table
from ..evaluate import _rule, compute_values
from ..measures import Measure
from ._layout import (
    COUNT,
    EX,
    ITEM,
    KIND,
    KIND_EMPTY,
    KIND_NOTE,
    KIND_PARTIAL,
    KIND_SKIP,
    LABEL,
    MEAS,
    N_EXAMPLES,
    NQ,
    REASON,
    ROW,
    SCORE,
    SIDE,
    SIDE_RANKED,
    TOP,
    Layout,
    Q,
)

__all__ = ["Worker", "arrow_schema", "changes", "id_text", "run"]


def changes(cols: Sequence[Any]) -> np.ndarray:
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


def id_text(x: Any) -> str:
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
    from .._kernels import api
    from .._kernels import codes as K
    from ..evaluate import _GRADED

    lengths = problem.lengths
    last, positive = api.list_stats(problem.r_start, problem.r_end, problem.r_idx, problem.score, problem.label)
    deepest = lengths.astype(np.float64)
    if problem.ties == K.TIES_SHARED_RANK:
        deepest = np.where(lengths > 0, np.floor(lengths - (last - 1) / 2.0), 0)
    if any(_rule(m, conv) == "skip" for m in measures if m.family in _GRADED):
        deepest = np.where(positive, deepest, 0)
    return deepest


class Worker:
    """The function handed to ``mapInArrow``: a picklable closure over the lay's small facts."""

    def __init__(self, lay: Layout, mode: str, out_schema: Any, max_labels: dict[Any, float] | None,
                 rows_per_call: int) -> None:
        self.measures = lay.measures
        self.conv = lay.exec_conv
        self.gcols = lay.gcols
        self.two_tables = lay.two_tables
        self.rank_only = lay.score is None
        self.mode = mode
        self.out_schema = out_schema
        self.max_labels = max_labels
        self.rows_per_call = rows_per_call
        self.check_depth = lay.check_depth
        self.n_examples = N_EXAMPLES if not lay.group_by else 0

    # -- streaming whole queries -----------------------------------------------------------------
    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        try:  # one kernel thread per Spark task core: tasks run side by side
            from pyspark import TaskContext

            from .._threads import set_threads

            ctx = TaskContext.get()
            set_threads(max(1, int(ctx.cpus()) if ctx is not None else 1))
        except Exception:  # pragma: no cover - outside a task
            pass
        pending: list[Any] = []
        n_pending = 0
        keys = self.gcols + [Q]
        for b in batches:
            if b.num_rows == 0:
                continue
            pending.append(b)
            n_pending += b.num_rows
            if n_pending < self.rows_per_call:
                continue
            t = pa.Table.from_batches(pending)
            # rows come sorted by key: the last query may go on in the next batch, keep it
            cut = int(np.flatnonzero(changes([t.column(k) for k in keys]))[-1])
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
            gch = changes([t.column(g) for g in self.gcols])
            starts = np.append(np.flatnonzero(gch), t.num_rows)
            for a, b in zip(starts[:-1], starts[1:]):
                yield from self._problem(t.slice(int(a), int(b - a)))
        else:
            yield from self._problem(t)

    # -- one problem -------------------------------------------------------------------------------
    def _problem(self, t: Any) -> Iterator[Any]:
        import pyarrow as pa

        keys = self.gcols + [Q]
        ch = changes([t.column(k) for k in keys])
        codes = np.cumsum(ch) - 1
        first = np.flatnonzero(ch)  # first row of each query
        nq = first.shape[0]
        sentinel = nq
        m = max(1, self.conv.min_items)
        item_col = t.column(ITEM)
        s_items = _sentinel_items(item_col.type, m)
        s_order = np.arange(m, 0, -1, dtype=np.float64) if not self.rank_only else np.arange(1, m + 1, dtype=np.float64)
        side = np.asarray(t.column(SIDE).to_numpy(), dtype=np.int8)
        key_name = "rank" if self.rank_only else "score"
        if self.two_tables:
            rmask = side == SIDE_RANKED
            jmask = ~rmask
            r_tbl = pa.table({
                "query": np.append(codes[rmask], np.full(m, sentinel)),
                "item": pa.concat_arrays([item_col.filter(pa.array(rmask)).combine_chunks(), s_items]),
                key_name: np.append(t.column(SCORE).filter(pa.array(rmask)).combine_chunks()
                                    .to_numpy(zero_copy_only=False), s_order),
            })
            j_tbl = pa.table({
                "query": np.append(codes[jmask], [sentinel]),
                "item": pa.concat_arrays([item_col.filter(pa.array(jmask)).combine_chunks(), s_items.slice(0, 1)]),
                "label": pa.concat_arrays([t.column(LABEL).filter(pa.array(jmask)).combine_chunks(),
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
                key_name: pa.concat_arrays([t.column(SCORE).combine_chunks(), pa.array(s_order)]),
                "label": pa.concat_arrays([t.column(LABEL).combine_chunks(), pa.array(s_label)]),
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
        cols = [t.column(g).take(idx) for g in self.gcols] + [t.column(Q).take(idx)]
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
            gch = changes([t.column(g).take(pa.array(rows)) for g in self.gcols])
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
        out[KIND] = np.full(n_g, KIND_PARTIAL, np.int32)
        out[NQ] = np.bincount(gid, minlength=n_g).astype(np.int64)
        tops = np.zeros(n_g)
        if top is not None and n_g:
            np.maximum.at(tops, gid, top)
        out[TOP] = tops
        for i in range(n_m):
            out[f"__rl_n{i}"] = np.bincount(gid, weights=valid[:, i], minlength=n_g).astype(np.int64)
            out[f"__rl_s{i}"] = np.bincount(gid, weights=np.where(valid[:, i], values[:, i], 0.0), minlength=n_g)
        extra: list[dict[str, Any]] = []
        if self.n_examples:
            qvals = t.column(Q)

            def ex(mask_rows: np.ndarray) -> list[str]:
                return [id_text(x) for x in qvals.take(pa.array(mask_rows[: self.n_examples])).to_pylist()]

            for note in notes:
                code_rows = first[np.array([int(e) for e in note.examples], dtype=np.int64)]
                extra.append({KIND: KIND_NOTE, REASON: note.reason, COUNT: note.count, EX: ex(code_rows)})
            for i, meas in enumerate(self.measures):
                skipped = ~valid[:, i]
                if skipped.any():
                    extra.append({KIND: KIND_SKIP, MEAS: i, COUNT: int(skipped.sum()), EX: ex(rows[skipped])})
                emp = empties[:, i] & valid[:, i]
                if emp.any() and meas.family not in ("dcg", "idcg"):
                    extra.append({KIND: KIND_EMPTY, MEAS: i, COUNT: int(emp.sum()), EX: ex(rows[emp])})
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


def arrow_schema(spark_schema: Any, timezone: str) -> Any:
    from pyspark.sql.pandas.types import to_arrow_schema

    try:
        return to_arrow_schema(spark_schema, timezone=timezone, prefers_large_types=False)
    except TypeError:  # pragma: no cover - pyspark 3.5's signature
        return to_arrow_schema(spark_schema)


def run(prepared: Any, lay: Layout, mode: str, partitions: int | None, max_labels: dict[Any, float] | None,
        rows_per_call: int) -> Any:
    """The chunks' output DataFrame: per-query values (``mode=\"query\"``) or per-chunk partial sums and notes."""
    from pyspark.sql import types as T

    gfields = [prepared.schema[g] for g in lay.gcols]
    qfield = prepared.schema[Q]
    if mode == "query":
        fields = [T.StructField(f.name, f.dataType, True) for f in gfields + [qfield]]
        fields += [T.StructField(f"__rl_v{i}", T.DoubleType(), True) for i in range(len(lay.measures))]
    else:
        fields = [T.StructField(f.name, f.dataType, True) for f in gfields]
        fields += [T.StructField(KIND, T.IntegerType(), True), T.StructField(NQ, T.LongType(), True),
                   T.StructField(TOP, T.DoubleType(), True)]
        for i in range(len(lay.measures)):
            fields += [T.StructField(f"__rl_n{i}", T.LongType(), True),
                       T.StructField(f"__rl_s{i}", T.DoubleType(), True)]
        fields += [T.StructField(REASON, T.StringType(), True), T.StructField(MEAS, T.IntegerType(), True),
                   T.StructField(COUNT, T.LongType(), True), T.StructField(EX, T.ArrayType(T.StringType()), True)]
    schema = T.StructType(fields)
    tz = prepared.sparkSession.conf.get("spark.sql.session.timeZone") or "UTC"
    worker = Worker(lay, mode, arrow_schema(schema, tz), max_labels, rows_per_call)
    n = partitions or int(prepared.sparkSession.conf.get("spark.sql.shuffle.partitions"))
    grouped = prepared.repartition(n, *lay.keys).sortWithinPartitions(*lay.keys, SIDE, ROW)
    import warnings

    with warnings.catch_warnings():  # pyspark warns about pandas >= 3 here, though mapInArrow uses no pandas
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
        return grouped.mapInArrow(worker, schema)
