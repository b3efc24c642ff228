"""Moving rows, second step: whole queries to the executors, through the core, and back.

The long DataFrame of :func:`ranklens.spark._layout.prepare` is shuffled by query (plus the group
columns) and sorted within partitions; ``mapInArrow`` hands :class:`Worker` Arrow batches, which it
cuts into chunks of whole queries (about ``rows_per_call`` rows) and gives to the core: the same
``build_problem`` and kernels as the local engine, one call for many queries. It returns either the
per-query values or, per chunk, what the chunk contributes to the aggregates.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .._core.plan import Plan, deepest, make_plan, run_plan
from .._core.problem import Exclusion, Problem, build_problem
from .._input.ids import take_ids
from .._input.tables import table_records
from ..records import Judgments, Rankings
from ..result import Note, Partial
from ._layout import ITEM, LABEL, PARTIAL, ROW, SCORE, SIDE, SIDE_RANKED, Layout, Q

__all__ = ["Worker", "arrow_schema", "changes", "query_ids", "run"]


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


def query_ids(values: Sequence[Any]) -> list[Any]:
    """Query ids as the local engine prints them: a float id that is an integer is an integer there."""
    return [int(x) if isinstance(x, float) and x.is_integer() else x for x in values]


def _row_of_each(problem: Problem, rpos: np.ndarray, jpos: np.ndarray) -> np.ndarray:
    """A row (of the chunk) of each query of ``problem``: its first ranked row, else its first judged one.

    ``rpos``/``jpos``: the chunk's row of each row of the rankings / judgments the problem was built from.
    """
    def first_rows(start: np.ndarray, idx: np.ndarray) -> np.ndarray:
        # rows start:end themselves, or through idx (an empty group's start may be idx's length: clipped)
        return start if idx.shape[0] == 0 else idx[np.minimum(start, idx.shape[0] - 1)]

    has_r = problem.r_end > problem.r_start
    r = first_rows(problem.r_start, problem.r_idx)
    j = first_rows(problem.j_start, problem.j_idx)
    out = np.empty(problem.r_start.shape[0], np.int64)
    out[has_r] = rpos[r[has_r]]
    out[~has_r] = jpos[j[~has_r]]
    return out


class Worker:
    """The function handed to ``mapInArrow``: a picklable closure over the plan and the layout's small facts.

    ``mode="query"``: per-query values. ``mode="agg"``: per chunk (and group), the pickled
    :class:`ranklens.result.Partial` of its queries. ``max_labels``: ERR's maximum grade per group
    (the largest label of the group's judgments, settled globally), given to the plan as the
    convention's ``err_max_grade``.
    """

    def __init__(self, lay: Layout, mode: str, out_schema: Any, max_labels: dict[Any, float] | None,
                 rows_per_call: int) -> None:
        self.plan = lay.plan
        self.conv = lay.plan.convention
        self.gcols = lay.gcols
        self.two_tables = lay.two_tables
        self.rank_only = lay.score is None
        self.mode = mode
        self.out_schema = out_schema
        self.max_labels = max_labels
        self.rows_per_call = rows_per_call
        self.missing = lay.missing

    # -- streaming whole queries -----------------------------------------------------------------
    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        try:  # one kernel thread per Spark task core: tasks run side by side
            from pyspark import TaskContext

            from .._base.threads import set_threads

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
        item_col = t.column(ITEM)
        side = np.asarray(t.column(SIDE).to_numpy(), dtype=np.int8)
        key_name = "rank" if self.rank_only else "score"
        # without groups a query is its id (the core's messages name it); with groups, the same id may be
        # a query of several groups: the chunk's query codes
        query = pa.array(codes) if self.gcols else t.column(Q)
        if self.two_tables:
            ranked = side == SIDE_RANKED
            rmask, jmask = pa.array(ranked), pa.array(~ranked)
            rpos, jpos = np.flatnonzero(ranked), np.flatnonzero(~ranked)
            r_tbl = pa.table({"query": query.filter(rmask), "item": item_col.filter(rmask),
                              key_name: t.column(SCORE).filter(rmask)})
            j_tbl = pa.table({"query": query.filter(jmask), "item": item_col.filter(jmask),
                              "label": t.column(LABEL).filter(jmask)})
            r = j = None
            if r_tbl.num_rows:
                rec = table_records(r_tbl, need="rankings", query_col="query", item_col="item",
                                    source="the rankings DataFrame", missing=self.missing,
                                    **{f"{key_name}_col": key_name})
                r = rec.rankings()
                rpos = rpos if rec.ranked is None else rpos[rec.ranked]
            if j_tbl.num_rows:
                rec = table_records(j_tbl, need="judgments", query_col="query", item_col="item", label_col="label",
                                    source="the judgments DataFrame", missing=self.missing)
                j = rec.judgments()
                jpos = jpos if rec.judged is None else jpos[rec.judged]
            # a side without rows in this chunk: no rows, of the other side's id types
            none = np.zeros(0, np.int64)
            if r is None and j is not None:
                r = Rankings(take_ids(j.qid, none), take_ids(j.item, none), source="the rankings DataFrame",
                             score=np.zeros(0) if key_name == "score" else None,
                             rank=np.zeros(0) if key_name == "rank" else None)
            if j is None and r is not None:
                j = Judgments(take_ids(r.qid, none), take_ids(r.item, none), np.zeros(0),
                              source="the judgments DataFrame")
        else:
            tbl = pa.table({"query": query, "item": item_col, key_name: t.column(SCORE), "label": t.column(LABEL)})
            rec = table_records(tbl, need="both", query_col="query", item_col="item", label_col="label",
                                source="the rankings DataFrame", missing=self.missing, **{f"{key_name}_col": key_name})
            j, r = rec.judgments(), rec.rankings()  # missing="exclude": rows without a label are unjudged, etc.
            every = np.arange(t.num_rows)
            rpos = every if rec.ranked is None else np.flatnonzero(rec.ranked)
            jpos = every if rec.judged is None else np.flatnonzero(rec.judged)
        assert j is not None and r is not None
        plan = self._plan(t)
        # a chunk is some of the evaluation's queries: a side may be empty, or no query evaluated here
        problem = build_problem(j, r, self.conv, batch=True)
        values, empties = run_plan(plan, problem, whole=False)  # the cutoff depth is checked on all chunks
        # the first row of each evaluated query, in the problem's query order
        rows = first[np.searchsorted(first, _row_of_each(problem, rpos, jpos), side="right") - 1]
        if self.mode == "query":
            yield self._query_rows(t, rows, values)
        else:
            top = deepest(plan, problem) if plan.check_depth else None
            yield self._partials(t, plan, rows, first, problem.qids, values, empties, problem.notes, top,
                                 problem.lengths)

    def _plan(self, t: Any) -> Plan:
        """The plan, with ERR's maximum grade of the chunk's group when it is settled globally."""
        if self.max_labels is None:
            return self.plan
        gkey = tuple(t.column(g)[0].as_py() for g in self.gcols)
        top = self.max_labels.get(gkey, 0.0)  # a group without judgments: no label
        return make_plan(self.conv.replace(err_max_grade=max(top, 1.0)), self.plan.measures)

    def _query_rows(self, t: Any, rows: np.ndarray, values: np.ndarray) -> Any:
        import pyarrow as pa

        idx = pa.array(rows)
        cols = [t.column(g).take(idx) for g in self.gcols] + [t.column(Q).take(idx)]
        for i in range(values.shape[1]):
            v = values[:, i]
            cols.append(pa.array(v, mask=np.isnan(v), type=pa.float64()))
        return pa.RecordBatch.from_arrays([c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in cols],
                                          schema=self.out_schema)

    def _partials(self, t: Any, plan: Plan, rows: np.ndarray, first: np.ndarray, qids: np.ndarray,
                  values: np.ndarray, empties: np.ndarray, notes: list[Exclusion], top: np.ndarray | None,
                  lengths: np.ndarray) -> Any:
        """One row per group of the chunk: the group's columns and its pickled :class:`Partial` (``lengths``:
        each query's ranked items, GroupAUC's weights)."""
        import pyarrow as pa

        if self.gcols and not rows.shape[0]:  # a group that evaluates no query is no row of the output
            return pa.RecordBatch.from_arrays([pa.array([], type=f.type) for f in self.out_schema],
                                              schema=self.out_schema)
        if self.gcols:
            gch = changes([t.column(g).take(pa.array(rows)) for g in self.gcols])
            bounds = np.append(np.flatnonzero(gch), rows.shape[0])
        else:  # one group; a chunk that evaluates no query still reports why (its notes)
            bounds = np.array([0, rows.shape[0]])
        qcol = t.column(Q)

        def named(note: Note) -> Note:
            """A note's example queries (at most N_EXAMPLES), by their ids instead of the chunk's codes."""
            count, keys = note
            if not count:
                return note
            return count, tuple(query_ids(qcol.take(pa.array(first[np.asarray(keys, np.int64)])).to_pylist()))

        parts, heads = [], []
        for a, b in zip(bounds[:-1], bounds[1:]):
            depth = None if top is None else float(top[a:b].max()) if b > a else 0.0
            part = Partial.from_values(plan, qids[a:b], values[a:b], empties[a:b], None,
                                       () if self.gcols else notes, depth, lengths=lengths[a:b])
            if self.gcols:  # the problem's queries are the chunk's codes
                part = replace(part, skipped=[named(n) for n in part.skipped],
                               scored=[named(n) for n in part.scored], undefined=[named(n) for n in part.undefined])
            parts.append(pickle.dumps(part))
            heads.append(int(rows[a]) if b > a else 0)
        arrays = [t.column(g).take(pa.array(heads)).combine_chunks() for g in self.gcols]
        arrays.append(pa.array(parts, type=pa.binary()))
        return pa.RecordBatch.from_arrays(arrays, schema=self.out_schema)


def arrow_schema(spark_schema: Any, timezone: str) -> Any:
    from pyspark.sql.pandas.types import to_arrow_schema

    try:
        return to_arrow_schema(spark_schema, timezone=timezone, prefers_large_types=False)
    except TypeError:  # pragma: no cover - pyspark 3.5's signature
        return to_arrow_schema(spark_schema)


def run(prepared: Any, lay: Layout, mode: str, partitions: int | None, max_labels: dict[Any, float] | None,
        rows_per_call: int) -> Any:
    """The chunks' output DataFrame: per-query values (``mode="query"``) or per-chunk partial results."""
    from pyspark.sql import types as T

    gfields = [prepared.schema[g] for g in lay.gcols]
    if mode == "query":
        fields = [T.StructField(f.name, f.dataType, True) for f in gfields + [prepared.schema[Q]]]
        fields += [T.StructField(f"__rl_v{i}", T.DoubleType(), True) for i in range(len(lay.plan.measures))]
    else:
        fields = [T.StructField(f.name, f.dataType, True) for f in gfields]
        fields.append(T.StructField(PARTIAL, T.BinaryType(), False))
    schema = T.StructType(fields)
    tz = prepared.sparkSession.conf.get("spark.sql.session.timeZone") or "UTC"
    worker = Worker(lay, mode, arrow_schema(schema, tz), max_labels, rows_per_call)
    n = partitions or int(prepared.sparkSession.conf.get("spark.sql.shuffle.partitions"))
    grouped = prepared.repartition(n, *lay.keys).sortWithinPartitions(*lay.keys, SIDE, ROW)
    import warnings

    with warnings.catch_warnings():  # pyspark warns about pandas >= 3 here, though mapInArrow uses no pandas
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
        return grouped.mapInArrow(worker, schema)
