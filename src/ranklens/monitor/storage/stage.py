"""The local ingest's two chunks in flight: a chunk of Parquet files is validated and made into its chunk tables
(:mod:`ranklens.monitor.storage.chunk`) on a second connection, in a thread, while the writer's connection stores
the chunk before it.

The second connection (a cursor of the writer's DuckDB) makes the tables in an in-memory database of its own
(two, used in turn: one for the chunk being made, one for the chunk being stored), with the same SQL as ever
(:func:`ranklens.monitor.storage.events.scope`); the writer's connection reads them through temporary views of
the usual names (``_v``, ``_items``, ``_fb_rows``, ``_q``, ``_nb``, ``_nh``) and a copy of ``_g`` (the store
step marks lists in it). Nothing of the store is read or written by the second connection, so what is stored,
and in which order, is what storing the chunks one after the other stores. DuckDB's statements of both
connections share its threads: the cores idle during one connection's statements work for the other's.
"""

from __future__ import annotations

import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from .chunk import make_chunk
from .events import BATCH, STAGE, validate

__all__ = ["STAGED", "Pipeline", "drop_temp", "raw_view"]

#: The chunk tables read through views from the staging database (``_g`` is copied: the store step updates it).
STAGED = ("_v", "_items", "_fb_rows", "_q", "_nb", "_nh")


def raw_view(files: list[str]) -> str:
    """The statement making the view ``_raw`` of a chunk of Parquet files: raw columns, ``_row`` (the row's
    number in its file) and the batch index (the file's position)."""
    listed = "[" + ", ".join("'" + v.replace("'", "''") + "'" for v in files) + "]"
    return f"""CREATE OR REPLACE TEMP VIEW _raw AS
        SELECT * EXCLUDE (file_row_number), file_row_number AS _row, CAST(file_index AS INTEGER) AS {BATCH}
        FROM read_parquet({listed}, file_row_number = true)"""


def drop_temp(con: Any, names: tuple[str, ...]) -> None:
    """Drop the temporary tables and views of these names that ``con`` has."""
    listed = ", ".join(f"'{n}'" for n in names)
    for name, kind in con.execute(f"""
            SELECT table_name, 'TABLE' FROM duckdb_tables() WHERE temporary AND table_name IN ({listed})
            UNION ALL SELECT view_name, 'VIEW' FROM duckdb_views() WHERE temporary AND view_name IN ({listed})
            """).fetchall():
        con.execute(f"DROP {kind} temp.main.{name}")


class Pipeline:
    """Chunks made on a second connection of ``con`` (:meth:`start`), each then read by ``con``
    (:meth:`expose`); :meth:`close` waits for the work started and frees the staging databases."""

    def __init__(self, con: Any) -> None:
        self.con = con
        self.cursor: Any = None
        self.pool: ThreadPoolExecutor | None = None
        token = uuid.uuid4().hex[:12]
        self.dbs = [f"{STAGE}{k}_{token}" for k in (0, 1)]
        self.turn = 0

    def _open(self) -> None:
        for db in self.dbs:
            self.con.execute(f"ATTACH ':memory:' AS {db}")
        self.cursor = self.con.cursor()
        tz = self.con.execute("SELECT current_setting('TimeZone')").fetchall()[0][0]
        self.cursor.execute(f"SET TimeZone = '{tz}'")  # the typing of text times is the writer's
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="ranklens-chunk")

    def start(self, files: list[str], sample: Any, name: str, features: dict[str, str]) -> tuple[str, Future[Any]]:
        """Make the chunk tables of ``files`` (``sample``: an empty table of their raw columns) in the next staging
        database, in the thread; the database and the future of the chunk's slice columns."""
        if self.pool is None:
            self._open()
        assert self.pool is not None
        db = self.dbs[self.turn % 2]
        self.turn += 1
        return db, self.pool.submit(self._make, db, files, sample, name, features)

    def _make(self, db: str, files: list[str], sample: Any, name: str, features: dict[str, str]) -> list[str]:
        cur = self.cursor
        cur.execute(f"USE {db}")
        cur.execute(raw_view(files))
        slices = validate(cur, name, sample, features)
        make_chunk(cur, sample, slices)
        return slices

    def expose(self, db: str, files: list[str]) -> None:
        """The chunk tables made in ``db`` under their usual names on the writer's connection (and its ``_raw``)."""
        con = self.con
        con.execute(raw_view(files))
        drop_temp(con, (*STAGED, "_g"))
        for t in STAGED:
            con.execute(f"CREATE TEMP VIEW {t} AS SELECT * FROM {db}.main.{t}")
        con.execute(f"CREATE TEMP TABLE _g AS SELECT * FROM {db}.main._g")

    def own(self, db: str) -> None:
        """The chunk tables as the writer's own temporary tables (a store step that changes them: batches kept
        out by ``max_quarantine``)."""
        con = self.con
        drop_temp(con, STAGED)
        for t in ("_v", "_fb_rows", "_q", "_nb", "_nh"):
            con.execute(f"CREATE TEMP TABLE {t} AS SELECT * FROM {db}.main.{t}")

    def hide(self) -> None:
        """The writer's views of a chunk dropped (after its transaction)."""
        drop_temp(self.con, (*STAGED, "_g", "_raw"))

    def close(self) -> None:
        if self.pool is None:
            return
        self.pool.shutdown(wait=True)
        self.cursor.close()
        for db in self.dbs:
            self.con.execute(f"DETACH DATABASE IF EXISTS {db}")
        self.pool = None
