"""A chunk of ingest batches as validated events and served lists, in SQL on the connection that ingests it.

The raw rows (the view ``_raw``) become typed event columns (:func:`event_select`), each row with the reason
it is quarantined or none (``_v``, :func:`validate`); the valid ranking rows make the served lists (``_g``,
the new ones ``_gn`` with their ids, their items ``_items``: :func:`find_lists`).
"""

from __future__ import annotations

import re
from typing import Any

from ..._base.deps import require
from ...errors import InputError
from .db import quote

__all__ = ["BATCH", "ENVIRONMENTS", "EVENT_COLUMNS", "event_select", "find_lists", "make_lists", "mark_duplicates",
           "mark_mixed", "validate"]

EVENT_COLUMNS = ("timestamp", "model", "model_version", "environment", "group_id", "item_id", "rank", "score",
                 "relevance", "labels")
ENVIRONMENTS = ("training", "validation", "production")
#: The batch index column of a chunk's raw rows (0, 1, ... in the chunk's order).
BATCH = "_rl_batch"
_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


def event_select(name: str, table: Any) -> tuple[str, list[str]]:
    """SQL select list turning the raw batch (registered as _raw) into typed event columns."""
    pa = require("pyarrow")
    cols: dict[str, str] = {}
    for c in table.column_names:
        low = c.strip().lower()
        if low in ("_row", BATCH):
            continue
        if low in cols:
            raise InputError(f"{name}: column {c!r} appears twice (column names are case-insensitive).")
        cols[low] = c
    for req in ("timestamp", "group_id", "item_id"):
        if req not in cols:
            raise InputError(
                f"{name}: missing column {req!r} (columns: {', '.join(table.column_names)}); see docs/monitoring.md."
            )
    slices = [c for c in cols if c not in EVENT_COLUMNS]
    for s in slices:
        if not _NAME.match(s) or len(s) > 64:
            raise InputError(
                f"{name}: slice column {cols[s]!r} must be a name of letters, digits and _ (not starting with a digit)."
            )

    def typ(c: str) -> Any:
        return table.schema.field(cols[c]).type

    def raw(c: str) -> str:
        return f"_raw.{quote(cols[c])}" if c in cols else "NULL"

    def text(c: str) -> str:
        return f"NULLIF(TRIM(CAST({raw(c)} AS VARCHAR)), '')" if c in cols else "CAST(NULL AS VARCHAR)"

    def num(c: str) -> str:
        if c not in cols:
            return "CAST(NULL AS DOUBLE)"
        t = typ(c)
        if pa.types.is_boolean(t):
            return f"TRY_CAST(CAST({raw(c)} AS INTEGER) AS DOUBLE)"
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return f"TRY_CAST(NULLIF(TRIM(CAST({raw(c)} AS VARCHAR)), '') AS DOUBLE)"
        return f"TRY_CAST({raw(c)} AS DOUBLE)"

    def present(c: str) -> str:
        if c not in cols:
            return "FALSE"
        t = typ(c)
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return f"(NULLIF(TRIM({raw(c)}), '') IS NOT NULL)"
        return f"({raw(c)} IS NOT NULL)"

    tt = typ("timestamp")
    r = raw("timestamp")
    if pa.types.is_timestamp(tt) or pa.types.is_date(tt):
        ts = f"CAST({r} AS TIMESTAMP)"
    elif pa.types.is_integer(tt) or pa.types.is_floating(tt):
        ts = f"CAST(try(to_timestamp(CAST({r} AS DOUBLE))) AS TIMESTAMP)"
    else:  # text, row by row: a number is epoch seconds, anything else ISO-8601
        s = f"NULLIF(TRIM(CAST({r} AS VARCHAR)), '')"
        ts = (f"CASE WHEN TRY_CAST({s} AS DOUBLE) IS NOT NULL "
              f"THEN CAST(try(to_timestamp(TRY_CAST({s} AS DOUBLE))) AS TIMESTAMP) "
              f"ELSE COALESCE(CAST(TRY_CAST({s} AS TIMESTAMPTZ) AS TIMESTAMP), TRY_CAST({s} AS TIMESTAMP)) END")
    if "labels" in cols:
        lt = typ("labels")
        if pa.types.is_list(lt) or pa.types.is_large_list(lt):
            labels = (f"list_distinct(list_filter(list_transform({raw('labels')}, lambda l: TRIM(CAST(l AS VARCHAR))), "
                      "lambda l: l IS NOT NULL AND l <> ''))")
            if pa.types.is_string(lt.value_type) or pa.types.is_large_string(lt.value_type):
                # most lists hold none or one clean label (ASCII, no space at either end: TRIM strips only
                # ' ' from ASCII text): taken as they are, without the lambdas
                one = f"{raw('labels')}[1]"
                labels = (f"CASE WHEN len({raw('labels')}) = 0 THEN {raw('labels')} "
                          f"WHEN len({raw('labels')}) = 1 AND {one} <> '' AND NOT starts_with({one}, ' ') "
                          f"AND NOT ends_with({one}, ' ') AND strlen({one}) = length({one}) THEN {raw('labels')} "
                          f"ELSE {labels} END")
        else:
            labels = (f"list_distinct(list_filter(list_transform(string_split(CAST({raw('labels')} AS VARCHAR), '|'), "
                      "lambda l: TRIM(l)), lambda l: l <> ''))")
    else:
        labels = "CAST(NULL AS VARCHAR[])"
    select = [
        "_raw._row AS _row",
        f"{present('timestamp')} AS ts_given",
        f"{ts} AS ts",
        f"{text('model')} AS model",
        f"{text('model_version')} AS model_version",
        f"LOWER({text('environment')}) AS environment",
        f"{text('group_id')} AS group_id",
        f"{text('item_id')} AS item_id",
        f"{present('rank')} AS rank_given",
        f"{num('rank')} AS rank",
        f"{present('score')} AS score_given",
        f"{num('score')} AS score",
        f"{present('relevance')} AS relevance_given",
        f"{num('relevance')} AS relevance",
        f"{labels} AS labels",
    ]
    select += [f"NULLIF(TRIM(CAST({raw(s)} AS VARCHAR)), '') AS {quote('s_' + s)}" for s in slices]
    return ",\n".join(select), slices


def validate(con: Any, name: str, sample: Any) -> list[str]:
    """The chunk's rows (the view ``_raw``: raw columns, ``_row``, the batch index) as typed events, each with
    its quarantine reason or none (the table ``_v``); the slice columns. ``sample`` is an empty table with the
    raw columns; ``name`` the source named by an error about them."""
    select, slices = event_select(name, sample)
    envs = ", ".join(f"'{e}'" for e in ENVIRONMENTS)
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE _v AS
        SELECT *, (rank_given OR score_given) AS is_ranking,
          CASE
            WHEN group_id IS NULL THEN 'missing group_id'
            WHEN item_id IS NULL THEN 'missing item_id'
            WHEN NOT ts_given THEN 'missing timestamp'
            WHEN ts IS NULL THEN 'timestamp is not a date or time'
            WHEN rank_given AND (rank IS NULL OR rank <> floor(rank) OR rank < 1 OR rank > 1000000000)
              THEN 'rank is not a positive integer'
            WHEN score_given AND (score IS NULL OR isnan(score) OR isinf(score))
              THEN 'score is not a finite number'
            WHEN relevance_given AND (relevance IS NULL OR isnan(relevance) OR isinf(relevance) OR relevance < 0)
              THEN 'relevance is not a number >= 0'
            WHEN (rank_given OR score_given) AND model IS NULL THEN 'missing model'
            WHEN (rank_given OR score_given) AND model_version IS NULL THEN 'missing model_version'
            WHEN (rank_given OR score_given) AND environment IS NULL THEN 'missing environment'
            WHEN (rank_given OR score_given) AND environment NOT IN ({envs})
              THEN 'environment is not training, validation or production'
            WHEN NOT (rank_given OR score_given) AND NOT relevance_given AND coalesce(len(labels), 0) = 0
              THEN 'no rank, score, labels or relevance'
          END AS reason
        FROM (SELECT _raw.{BATCH} AS _b, {select} FROM _raw) _ev""")
    return slices


def find_lists(con: Any, base: int) -> None:
    """The chunk's served lists (:func:`make_lists`), made again without the rows of a list that holds an item
    twice or mixes rows with and without rank (those rows are quarantined)."""
    make_lists(con, base)
    # an item twice in one served list, a list mixing rows with and without rank: rare, looked for in the
    # lists just made (the items of new lists by their integer ids; all rows when some lists are skipped),
    # and the lists made again when there is one (64-bit hashes: distinct hashes prove distinct rows, so no
    # duplicate is missed; a collision only sends the chunk through the exact search)
    n_mix, n_skip = con.execute("SELECT count(*) FILTER (WHERE mixed), count(*) FILTER (WHERE skip) FROM _g"
                                ).fetchall()[0]
    if n_skip:
        n_dup = con.execute("""SELECT count(*) - count(DISTINCT hash(_b, model, model_version, environment,
            group_id, item_id)) FROM _v WHERE reason IS NULL AND is_ranking""").fetchall()[0][0]
    else:
        n_dup = con.execute("SELECT count(*) - count(DISTINCT hash(gid, item_id)) FROM _items").fetchall()[0][0]
    if n_dup:
        mark_duplicates(con)
    if n_mix:
        mark_mixed(con)
    if n_dup or n_mix:
        make_lists(con, base)


def make_lists(con: Any, base: int) -> None:
    """The chunk's served lists (``_g``: one row per batch and list, ``skip`` when the list is stored
    already or came in an earlier batch of the chunk, ``mixed`` when its rows are not all ordered the same
    way), the new ones with their ids from ``base + 1`` (``_gn``) and their items (``_items``)."""
    # served groups: new ones get ids; rows of groups already stored (or in an earlier batch of the chunk)
    # are skipped
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _g AS
        SELECT g.*,
               EXISTS (SELECT 1 FROM groups s WHERE s.model = g.model AND s.model_version = g.model_version
                       AND s.environment = g.environment AND s.group_id = g.group_id) AS skip
        FROM (SELECT _b, model, model_version, environment, group_id, min(ts) AS ts, count(*) AS n_items,
                     CASE WHEN bool_and(rank_given) THEN 'rank' ELSE 'score' END AS order_by,
                     min(_row) AS first_row, bool_and(rank_given) <> bool_or(rank_given) AS mixed
              FROM _v WHERE reason IS NULL AND is_ranking GROUP BY ALL) g""")
    # a list in two batches of the chunk (rare: looked for when the hashes of the lists say there may be one)
    if con.execute("SELECT count(*) - count(DISTINCT hash(model, model_version, environment, group_id)) FROM _g"
                   ).fetchall()[0][0]:
        con.execute("""
            UPDATE _g SET skip = TRUE FROM (
              SELECT model, model_version, environment, group_id, min(_b) AS first FROM _g GROUP BY ALL
              HAVING count(*) > 1) d
            WHERE _g.model = d.model AND _g.model_version = d.model_version AND _g.environment = d.environment
              AND _g.group_id = d.group_id AND _g._b > d.first""")
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _gn AS
        SELECT ? + row_number() OVER (ORDER BY _b, ts, model, model_version, environment, group_id) AS gid,
               * EXCLUDE (skip, mixed)
        FROM _g WHERE NOT skip""", [base])
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _items AS
        SELECT s.gid, s._b, v.item_id, CAST(v.rank AS INTEGER) AS rank, v.score, v.relevance, v.labels
        FROM _v v JOIN _gn s ON s._b = v._b AND s.model = v.model AND s.model_version = v.model_version
         AND s.environment = v.environment AND s.group_id = v.group_id
        WHERE v.reason IS NULL AND v.is_ranking""")


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
