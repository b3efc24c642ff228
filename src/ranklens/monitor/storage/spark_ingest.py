"""The ingest's events -> served lists reduction on Spark (``ranklens monitor ingest --engine spark``).

The files are read on the driver by the local ingest's own reader (:func:`ranklens.monitor.storage.read.read_batch`:
the same typing, the same CSV lines that do not split), consecutive batches of one schema make one chunk, as in
the local ingest. Each chunk's rows go to Spark, are shuffled by their ``group_id`` (every row of a served list
and its label rows in one partition: the key drops all white space, coarser than the validation's trimming), and
each executor makes the chunk tables of its partition (:mod:`ranklens.monitor.storage.chunk`: validation,
quarantine, lists, items, label rows) with the same SQL on its own DuckDB, from the rows cast back to the
file's Arrow schema. The driver gathers the partitions' tables and stores them with
:func:`ranklens.monitor.storage.ingest.store_chunk`, as the local ingest does: what depends on the store
(list ids, lists already stored, late labels) is decided there. So the store holds the same contents after
either engine (``tests/monitor/test_spark_ingest.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from ..._base.deps import require
from .chunk import CHUNK_TABLES, make_chunk
from .db import duckdb_connect, fetch_arrow, quote, transaction
from .events import BATCH, event_select, validate
from .ingest import store_chunk, stored_before
from .read import Unsplit, batch_hashes, empty_table, read_batch

__all__ = ["ingest_batches_spark", "reduce_partition"]

#: The rows an executor answers with: one per chunk table, its Arrow IPC stream.
_OUT_COLUMNS = ["table", "ipc"]


def reduce_partition(rows: Any, schema: Any, name: str, features: Mapping[str, str]) -> dict[str, Any]:
    """The chunk tables (name -> Arrow table) of a partition's raw rows (an Arrow table with the raw columns,
    ``_row`` and the batch index), cast to the chunk's Arrow ``schema`` first."""
    table = rows.cast(schema) if rows.num_rows else empty_table(schema)
    sample = empty_table(schema).drop_columns([BATCH])
    con = duckdb_connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        con.register("_raw_table", table)
        con.execute("CREATE TEMP VIEW _raw AS SELECT * FROM _raw_table")
        slices = validate(con, name, sample, features)
        make_chunk(con, sample, slices)
        return {t: fetch_arrow(con.sql(f"SELECT * FROM {t}")) for t in CHUNK_TABLES}
    finally:
        con.close()


def _executor(schema_ipc: bytes, name: str, features: dict[str, str]) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The function each executor runs on its partition (mapInArrow): its chunk tables as IPC streams."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        schema = pa.ipc.read_schema(pa.py_buffer(schema_ipc))
        got = list(batches)
        rows = pa.Table.from_batches(got) if got else empty_table(schema)
        out = reduce_partition(rows, schema, name, features)
        blobs = []
        for t in CHUNK_TABLES:
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, out[t].schema) as w:
                w.write_table(out[t])
            blobs.append(sink.getvalue().to_pybytes())
        yield pa.record_batch([pa.array(list(CHUNK_TABLES)), pa.array(blobs, pa.binary())], names=_OUT_COLUMNS)

    return run


def _group_key(schema: Any) -> str:
    """The raw column holding ``group_id`` (column names are matched as the validation matches them)."""
    return next(c for c in schema.names if c.strip().lower() == "group_id")


def _reduce_on_spark(spark: Any, rows: Any, name: str, features: dict[str, str], partitions: int) -> dict[str, Any]:
    """The chunk tables of ``rows`` (raw columns, ``_row``, batch index), made by Spark's executors and gathered
    (each with the column ``part``: the partition that made it)."""
    pa = require("pyarrow")
    from pyspark.sql import functions as F

    schema = rows.schema
    df = spark.createDataFrame(rows)
    gid = _group_key(schema)
    key = F.regexp_replace(F.col(f"`{gid}`").cast("string"), r"(?U)\s", "")
    df = df.repartition(partitions, key)
    got = df.mapInArrow(_executor(schema.serialize().to_pybytes(), name, features), "table string, ipc binary"
                        ).collect()
    parts: dict[str, list[Any]] = {t: [] for t in CHUNK_TABLES}
    for k, r in enumerate(got):
        t = pa.ipc.open_stream(pa.py_buffer(r["ipc"])).read_all()
        parts[r["table"]].append(t.append_column("part", pa.array(np.full(t.num_rows, k // len(CHUNK_TABLES),
                                                                          np.int64))))
    return {t: pa.concat_tables(v) for t, v in parts.items()}


def _register(con: Any, tables: dict[str, Any]) -> None:
    """The gathered chunk tables as the store connection's temp tables: per-batch counts summed over the
    partitions; list numbers made unique again when two partitions gave one list the same (rare)."""
    for t, data in tables.items():
        con.register("_part", data)
        con.execute(f"CREATE OR REPLACE TEMP TABLE {t} AS SELECT * FROM _part")
        con.unregister("_part")
    con.execute("CREATE OR REPLACE TEMP TABLE _nb AS SELECT _b, sum(rows) AS rows, sum(label_rows) AS label_rows "
                "FROM _nb GROUP BY _b")
    con.execute("CREATE OR REPLACE TEMP TABLE _nh AS SELECT _b, hour, sum(rows) AS rows, sum(quarantined) AS "
                "quarantined FROM _nh GROUP BY _b, hour")
    if con.execute("SELECT count(*) - count(DISTINCT li) FROM _g").fetchall()[0][0]:
        con.execute("CREATE OR REPLACE TEMP TABLE _g AS SELECT row_number() OVER () AS li2, * FROM _g")
        con.execute("""CREATE OR REPLACE TEMP TABLE _items AS
            SELECT g.li2 AS li, i.* EXCLUDE (li) FROM _items i JOIN _g g ON g.part = i.part AND g.li = i.li""")
        con.execute("CREATE OR REPLACE TEMP TABLE _g AS SELECT li2 AS li, * EXCLUDE (li, li2) FROM _g")
    for t in ("_g", "_items"):
        con.execute(f"ALTER TABLE {t} DROP COLUMN part")


def ingest_batches_spark(con: Any, batches: list[tuple[str, str, Any]], max_quarantine: float | None = None,
                         advance: Callable[[int], None] = lambda n: None, features: Mapping[str, str] | None = None,
                         master: str | None = None, partitions: int | None = None,
                         conf: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """:func:`ranklens.monitor.storage.ingest.ingest_batches` with the reduction on Spark (``master``:
    ``local[2]``, ``spark://host:7077``...; default ``local[*]``; ``conf``: Spark settings by their exact names,
    ``spark.driver.memory``...); the same entries, the same store contents."""
    pa = require("pyarrow")
    from ...spark import session

    spark = session(master or "local[*]", app_name="ranklens-monitor-ingest", config=dict(conf or {}),
                    spark_sql_session_timeZone="UTC", spark_ui_enabled="false")
    n_parts = int(partitions or spark.sparkContext.defaultParallelism)
    feats = dict(features or {})
    out: list[dict[str, Any]] = [{} for _ in batches]
    pending: list[tuple[int, str, str, Any, Unsplit]] = []  # index, name, batch id, table, unsplit lines

    def flush() -> None:
        if not pending:
            return
        chunk = [(name, bid) for _, name, bid, _, _ in pending]
        tables = [t.append_column("_row", pa.array(np.arange(t.num_rows, dtype=np.int64))).append_column(
            BATCH, pa.array(np.full(t.num_rows, j, np.int32))) for j, (_, _, _, t, _) in enumerate(pending)]
        rows = pa.concat_tables(tables)
        unsplit = {j: u for j, (_, _, _, _, u) in enumerate(pending) if u}
        sample = empty_table(pending[0][3].schema).append_column("_row", pa.array([], pa.int64()))
        _, slices = event_select(pending[0][1], sample, feats)

        def make(keep_rows: Any) -> None:
            _register(con, _reduce_on_spark(spark, keep_rows, pending[0][1], feats, n_parts))

        def drop(refused: list[int]) -> None:
            b = rows.column(BATCH).to_numpy()
            make(rows.filter(pa.array(~np.isin(b, refused))))

        with transaction(con):
            make(rows)
            infos = store_chunk(con, chunk, slices, unsplit, max_quarantine, drop)
        for (i, *_), info in zip(pending, infos):
            out[i] = info
        advance(len(pending))
        pending.clear()

    with batch_hashes(batches) as hashes:
        for i, ((name, kind, obj), bid) in enumerate(zip(batches, hashes)):
            if any(p[2] == bid for p in pending):
                flush()
            if stored_before(con, name, bid, out, i, advance):
                continue
            table, unsplit = read_batch(con, name, kind, obj)
            if pending and table.schema != pending[0][3].schema:
                flush()
            pending.append((i, name, bid, table, unsplit))
        flush()
    for t in CHUNK_TABLES:
        con.execute(f"DROP TABLE IF EXISTS {quote(t)}")
    return out

