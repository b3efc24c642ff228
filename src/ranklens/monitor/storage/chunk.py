"""A chunk of ingest batches made into what an ingest stores, without the store: the *chunk tables*.

Both engines make them with this SQL (on DuckDB): the local ingest over a chunk's raw rows, the Spark ingest
on each executor over a partition's rows (every row of a ``group_id`` in one partition), the driver then
gathering the partitions' tables; :mod:`ranklens.monitor.storage.ingest` stores them (what depends on the
store: lists already stored, ids, late labels). From the validated events ``_v``
(:func:`ranklens.monitor.storage.events.validate`):

* ``_g``: the served lists, one row per batch and list: ``li`` (the list's number in the chunk), ``_b``,
  ``model``, ``model_version``, ``environment``, ``group_id``, ``ts`` (its earliest row), ``n_items``,
  ``order_by`` (``rank`` or ``score``), ``first_row``, ``skip`` (the list came in an earlier batch of the
  chunk), and the slice columns ``s_<name>`` of its first row;
* ``_items``: the items of the lists not skipped: ``li``, ``_b``, ``item_id``, ``rank``, ``score``,
  ``relevance``, ``labels`` and the feature columns ``feature:<name>`` (:func:`feature_names`);
* ``_fb_rows``: the valid label rows, each once (kept by the first batch holding it): ``_b``, ``group_id``,
  ``item_id``, ``ts``, ``relevance``, ``labels`` (sorted; NULL when none);
* ``_q``: the quarantined rows: ``_b``, ``row_number`` (1-based), ``reason``, ``record`` (the row as it came,
  JSON, without the internal ``_row`` and batch index), and ``model``, ``model_version``, ``environment``,
  ``group_id``, ``is_ranking`` as far as the row gives them (the list it may belong to: partial lists);
* ``_nb``: per batch, ``_b``, ``rows`` and ``label_rows`` (valid label rows, repeats included);
* ``_nh``: per batch and hour of the rows' time (``hour``, NULL for a row without a usable time), ``_b``,
  ``rows`` and ``quarantined`` (the quarantine rate per window, :mod:`ranklens.monitor.storage.quality_rows`).

An item twice in one list, a list mixing rows with and without rank: their rows are quarantined
(:func:`mark_duplicates`, :func:`mark_mixed`) and the lists made again without them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._input.buffers import chunked_to_numpy
from ..._kernels.dispatch import call
from .db import fetch_arrow, quote
from .events import BATCH, scope, slice_select

__all__ = ["CHUNK_TABLES", "KEY_HASH", "LIST_HASH", "drop_batches", "feature_names", "label_rows", "lists",
           "make_chunk", "make_lists", "mark_duplicates", "mark_mixed", "quarantine_rows", "repeats"]

#: The chunk tables, as both engines make them.
CHUNK_TABLES = ("_g", "_items", "_fb_rows", "_q", "_nb", "_nh")
#: A list's number ``li`` in the chunk tables (:func:`make_lists`): the hash of its batch and ``group_id``, or when
#: two lists of the chunk share that, the hash of its whole key.
LIST_HASH = "hash(_b, group_id)"
KEY_HASH = "hash(_b, model, model_version, environment, group_id)"


def make_chunk(con: Any, sample: Any, slices: list[str]) -> None:
    """The chunk tables from ``_v`` and the raw rows ``_raw`` (the slice values of each list's first row, the
    quarantined rows as they came); ``sample``: an empty table with the raw columns."""
    lists(con, sample, slices)
    label_rows(con)
    quarantine_rows(con, sample.column_names)
    con.execute(f"""CREATE OR REPLACE {scope(con)}TABLE _nb AS
        SELECT _b, count(*) AS rows, count(*) FILTER (WHERE reason IS NULL AND NOT is_ranking) AS label_rows
        FROM _v GROUP BY _b""")
    con.execute(f"""CREATE OR REPLACE {scope(con)}TABLE _nh AS
        SELECT _b, date_trunc('hour', ts) AS hour, count(*) AS rows, count(*) FILTER (WHERE reason IS NOT NULL)
               AS quarantined
        FROM _v GROUP BY ALL""")


def drop_batches(con: Any, batches: list[int], sample: Any, slices: list[str]) -> None:
    """The chunk tables made again without the rows of ``batches`` (kept out whole by ``max_quarantine``)."""
    listed = ", ".join(str(int(b)) for b in batches)
    for t in ("_v", "_q", "_nb", "_nh"):
        con.execute(f"DELETE FROM {t} WHERE _b IN ({listed})")
    make_lists(con, sample, slices)
    label_rows(con)


def lists(con: Any, sample: Any, slices: list[str]) -> None:
    """``_g`` and ``_items`` (:func:`make_lists`), made again without the rows of a list that holds an item
    twice or mixes rows with and without rank (those rows are quarantined)."""
    make_lists(con, sample, slices)
    # an item twice in one served list, a list mixing rows with and without rank: rare, looked for in the
    # lists just made (the items of the lists by their numbers; all rows when a list came twice), and the
    # lists made again when there is one (64-bit hashes: distinct hashes prove distinct rows, so no
    # duplicate is missed; a collision only sends the chunk through the exact search)
    n_mix, n_skip = con.execute("SELECT count(*) FILTER (WHERE mixed), count(*) FILTER (WHERE skip) FROM _g"
                                ).fetchall()[0]
    if n_skip:
        n_dup = repeats(con, """SELECT hash(_b, model, model_version, environment, group_id, item_id) FROM _v
                                WHERE reason IS NULL AND is_ranking""")
    else:
        n_dup = repeats(con, "SELECT hash(li, item_id) FROM _items")
    if n_dup:
        mark_duplicates(con)
    if n_mix:
        mark_mixed(con)
    if n_dup or n_mix:
        make_lists(con, sample, slices)


def make_lists(con: Any, sample: Any, slices: list[str]) -> None:
    """The chunk's served lists (``_g``: one row per batch and list, ``skip`` when the list came in an
    earlier batch of the chunk, ``mixed`` when its rows are not all ordered the same way, the slice values of
    its first row, read from ``_raw``) and the items of the lists not skipped (``_items``).

    A list's number ``li`` is a 64-bit hash of its key, so that ``_items`` is a view of ``_v`` (not a join written
    out): of the batch and ``group_id`` alone (:data:`LIST_HASH`: a third of the cost per row of hashing the whole
    key) when no two lists of the chunk share it, else of the whole key (batch, model, version, environment,
    group_id: :data:`KEY_HASH`, lists of one ``group_id`` served by several models); when two lists still share a
    hash (rare), the lists are numbered and their items joined instead.
    """
    con.execute(f"""
        CREATE OR REPLACE {scope(con)}TABLE _g AS
        SELECT g.*{slice_select(sample, slices, "r")} FROM (
          SELECT {LIST_HASH} AS li, _b, model, model_version, environment, group_id, min(ts) AS ts,
                 count(*) AS n_items, CASE WHEN bool_and(rank_given) THEN 'rank' ELSE 'score' END AS order_by,
                 min(_row) AS first_row, bool_and(rank_given) <> bool_or(rank_given) AS mixed, FALSE AS skip
          FROM _v WHERE reason IS NULL AND is_ranking GROUP BY _b, model, model_version, environment, group_id) g
        {f"JOIN _raw r ON r.{BATCH} = g._b AND r._row = g.first_row" if slices else ""}""")
    # a list in two batches of the chunk (rare: looked for when the hashes of the lists say there may be one)
    if con.execute("SELECT count(*) - count(DISTINCT hash(model, model_version, environment, group_id)) FROM _g"
                   ).fetchall()[0][0]:
        con.execute("""
            UPDATE _g SET skip = TRUE FROM (
              SELECT model, model_version, environment, group_id, min(_b) AS first FROM _g GROUP BY ALL
              HAVING count(*) > 1) d
            WHERE _g.model = d.model AND _g.model_version = d.model_version AND _g.environment = d.environment
              AND _g.group_id = d.group_id AND _g._b > d.first""")
    key = LIST_HASH
    if _shared(con):  # lists of one batch and group_id (several models or versions): hashed by the whole key
        key = KEY_HASH
        con.execute(f"UPDATE _g SET li = {key}")
    _drop(con, "_items")
    cols = "v._b, v.item_id, CAST(v.rank AS INTEGER) AS rank, v.score, v.relevance, v.labels" + "".join(
        f", v.{quote(c)}" for c in feature_names(con))
    if not _shared(con):
        n_skip = con.execute("SELECT count(*) FROM _g WHERE skip").fetchall()[0][0]
        skipped = f" AND {key} NOT IN (SELECT li FROM _g WHERE skip)" if n_skip else ""
        con.execute(f"""CREATE {scope(con)}VIEW _items AS SELECT {key} AS li, {cols} FROM _v v
                        WHERE v.reason IS NULL AND v.is_ranking{skipped}""")
        return
    con.execute(f"CREATE OR REPLACE {scope(con)}TABLE _g AS SELECT row_number() OVER () AS li, * EXCLUDE (li) FROM _g")
    con.execute(f"""
        CREATE {scope(con)}TABLE _items AS
        SELECT s.li, {cols}
        FROM _v v JOIN _g s ON s._b = v._b AND s.model = v.model AND s.model_version = v.model_version
         AND s.environment = v.environment AND s.group_id = v.group_id
        WHERE v.reason IS NULL AND v.is_ranking AND NOT s.skip""")


def repeats(con: Any, sql: str) -> int:
    """How many of the 64-bit hashes a query gives (one per row) repeat an earlier one: 0 proves the rows hashed
    distinct (the kernel ``count_repeats``: a count of distinct values, without DuckDB's hash table of them)."""
    h = chunked_to_numpy(fetch_arrow(con.sql(sql)).column(0), np.uint64)
    return int(call("count_repeats", h))


def _drop(con: Any, name: str) -> None:
    """Drop the chunk table ``name`` (``_items``, ``_fb_rows``), a view or a table: ``DROP VIEW IF EXISTS`` of a table
    is an error, which would abort the ingest's transaction."""
    db = "temp" if scope(con) else con.execute("SELECT current_database()").fetchall()[0][0]
    for (kind,) in con.execute("""SELECT 'VIEW' FROM duckdb_views() WHERE view_name = ? AND database_name = ?
        UNION ALL SELECT 'TABLE' FROM duckdb_tables() WHERE table_name = ? AND database_name = ?""",
                               [name, db, name, db]).fetchall():
        con.execute(f"DROP {kind} {name}")


def _shared(con: Any) -> bool:
    """Whether two lists of ``_g`` share a number ``li``."""
    return bool(con.execute("SELECT count(*) - count(DISTINCT li) FROM _g").fetchall()[0][0])


def feature_names(con: Any) -> list[str]:
    """The feature columns (``feature:<name>``) of the validated events ``_v``."""
    return [d[0] for d in con.execute("SELECT * FROM _v LIMIT 0").description if d[0].startswith("feature:")]


def mark_duplicates(con: Any) -> None:
    """An item twice in one served list: the first row counts, the others are quarantined."""
    con.execute("""
        UPDATE _v SET reason = 'duplicate item in group'
        FROM (SELECT _b, _row FROM (
                SELECT _b, _row, row_number() OVER (PARTITION BY _b, model, model_version, environment, group_id,
                                                    item_id ORDER BY _row) AS k
                FROM _v WHERE reason IS NULL AND is_ranking
                  AND (_b, model, model_version, environment, group_id, item_id) IN (
                      SELECT (_b, model, model_version, environment, group_id, item_id) FROM _v
                      WHERE reason IS NULL AND is_ranking GROUP BY ALL HAVING count(*) > 1)) WHERE k > 1) d
        WHERE _v._b = d._b AND _v._row = d._row""")


def mark_mixed(con: Any) -> None:
    """Every row of a list must be ordered the same way: all with a rank, or all by score."""
    con.execute("""
        UPDATE _v SET reason = 'group mixes rows with and without rank'
        FROM (SELECT _b, model, model_version, environment, group_id FROM _v
              WHERE reason IS NULL AND is_ranking
              GROUP BY ALL HAVING count(*) FILTER (WHERE rank_given) NOT IN (0, count(*))) m
        WHERE _v.reason IS NULL AND _v.is_ranking AND _v._b = m._b AND _v.model = m.model
          AND _v.model_version = m.model_version AND _v.environment = m.environment AND _v.group_id = m.group_id""")


def label_rows(con: Any) -> None:
    """``_fb_rows``: the valid label rows, a row repeated in the chunk (same ``group_id``, ``item_id``, time,
    relevance and set of labels) kept once, by the first batch that has it."""
    # a view of ``_v``: its few reads cost less than writing the rows again (0.13 s against 0.30 s per 1.5 million)
    _drop(con, "_fb_rows")
    con.execute(f"""
        CREATE {scope(con)}VIEW _fb_rows AS
        SELECT _b, group_id, item_id, ts, relevance,
               CASE WHEN len(labels) = 1 THEN labels WHEN len(labels) > 1 THEN list_sort(labels) END AS labels
        FROM _v WHERE reason IS NULL AND NOT is_ranking""")  # one label (most rows): sorted as it is, no list_sort
    # looked for exactly only when the 64-bit hashes say there may be one
    if repeats(con, "SELECT hash(group_id, item_id, ts, relevance, labels) FROM _fb_rows"):
        con.execute(f"""CREATE OR REPLACE {scope(con)}TABLE _fb_once AS
            SELECT min(_b) AS _b, group_id, item_id, ts, relevance, labels FROM _fb_rows GROUP BY ALL""")
        _drop(con, "_fb_rows")
        con.execute("ALTER TABLE _fb_once RENAME TO _fb_rows")


def quarantine_rows(con: Any, raw_columns: list[str]) -> None:
    """``_q``: the quarantined rows with their reason, the row as it came (its raw columns as JSON; the row
    number is ``row_number``, not a field of the record) and the list it names."""
    rec = ", ".join(f"{quote(c)} := r.{quote(c)}" for c in raw_columns if c not in ("_row", BATCH))
    if not con.execute("SELECT count(*) FROM _v WHERE reason IS NOT NULL").fetchall()[0][0]:
        con.execute(f"""CREATE OR REPLACE {scope(con)}TABLE _q (_b INTEGER, row_number BIGINT, reason VARCHAR,
            record VARCHAR, model VARCHAR, model_version VARCHAR, environment VARCHAR, group_id VARCHAR,
            is_ranking BOOLEAN)""")
        return
    con.execute(f"""
        CREATE OR REPLACE {scope(con)}TABLE _q AS
        SELECT v._b, v._row + 1 AS row_number, v.reason, to_json(struct_pack({rec})) AS record,
               v.model, v.model_version, v.environment, v.group_id, v.is_ranking
        FROM (SELECT _b, _row, reason, model, model_version, environment, group_id, is_ranking FROM _v
              WHERE reason IS NOT NULL) v
        JOIN _raw r ON r._row = v._row AND r.{BATCH} = v._b""")
