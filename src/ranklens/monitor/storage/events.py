"""A chunk of ingest batches as validated events, in SQL: **the one place** the quarantine rules are written.

The raw rows (the view ``_raw``) become typed event columns (:func:`event_select`), each row with the reason
it is quarantined or none (the table ``_v``, :func:`validate`). Both engines run it: the local ingest on its
connection, the Spark ingest on each executor's (:mod:`ranklens.monitor.storage.chunk`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..._base.deps import require
from ...errors import InputError
from .db import quote

__all__ = ["BATCH", "ENVIRONMENTS", "EVENT_COLUMNS", "FEATURE_TYPES", "STAGE", "event_select", "feature_column",
           "scope", "slice_select", "text_sql", "validate"]

EVENT_COLUMNS = ("timestamp", "model", "model_version", "environment", "group_id", "item_id", "rank", "score",
                 "relevance", "labels")
ENVIRONMENTS = ("training", "validation", "production")
#: The batch index column of a chunk's raw rows (0, 1, ... in the chunk's order).
BATCH = "_rl_batch"
_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
#: The name prefix of the in-memory databases a chunk's tables are made in by a second connection while the
#: previous chunk is stored (:mod:`ranklens.monitor.storage.stage`).
STAGE = "_ranklens_chunk_stage"
#: The SQL type of a feature's values in the store (``items``), by its kind.
FEATURE_TYPES = {"numeric": "DOUBLE", "categorical": "VARCHAR"}


def feature_column(name: str) -> str:
    """The column of ``items`` holding a feature's values (``feature:<name>``), named apart from every other."""
    return f"feature:{name}"


def scope(con: Any) -> str:
    """How the chunk's tables are created on ``con``: ``"TEMP "`` (the connection's own), or ``""`` on a connection
    whose current database is a staging one (:data:`STAGE`: tables the storing connection reads)."""
    return "" if str(con.execute("SELECT current_database()").fetchall()[0][0]).startswith(STAGE) else "TEMP "


def event_select(name: str, table: Any, features: Mapping[str, str] | None = None) -> tuple[str, list[str]]:
    """SQL select list turning the raw batch (registered as _raw) into typed event columns, and the names of
    its slice columns (typed by :func:`slice_select`: a list's are those of its first row).

    ``features`` (name -> ``numeric`` or ``categorical``, the configuration's ``[signals] features``) are
    columns ``feature:<name>`` of their kind, not slices: a numeric value that is not a finite number, and
    an empty one, are missing (NULL); a feature the batch lacks is missing on all its rows.
    """
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
    features = dict(features or {})
    slices = [c for c in cols if c not in EVENT_COLUMNS and c not in features]
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
        if c not in cols:
            return "CAST(NULL AS VARCHAR)"
        return text_sql(raw(c), pa.types.is_string(typ(c)) or pa.types.is_large_string(typ(c)))

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
                # most lists are missing (ranked rows), empty or hold one clean label (ASCII, no space at either
                # end: TRIM strips only ' ' from ASCII text): taken as they are, without the lambdas
                one = f"{raw('labels')}[1]"
                labels = (f"CASE WHEN {raw('labels')} IS NULL OR len({raw('labels')}) = 0 THEN {raw('labels')} "
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
    for f, kind in sorted(features.items()):
        value = "NULL" if f not in cols else text(f) if kind == "categorical" else \
            f"(CASE WHEN isfinite({num(f)}) THEN {num(f)} END)"
        select.append(f"CAST({value} AS {FEATURE_TYPES[kind]}) AS {quote(feature_column(f))}")
    return ",\n".join(select), slices


def text_sql(column: str, is_text: bool) -> str:
    """A raw column as trimmed text, NULL when empty. TRIM strips spaces (and Unicode spaces): text that is
    ASCII, not empty and starts and ends with another character is taken as it is (most values, and cheaper)."""
    if not is_text:
        return f"NULLIF(TRIM(CAST({column} AS VARCHAR)), '')"
    return (f"CASE WHEN {column} = '' OR starts_with({column}, ' ') OR ends_with({column}, ' ') "
            f"OR strlen({column}) <> length({column}) THEN NULLIF(TRIM({column}), '') ELSE {column} END")


def slice_select(table: Any, slices: list[str], alias: str) -> str:
    """The slice columns ``s_<name>`` of the raw rows ``alias`` (a table with the raw columns), as text."""
    pa = require("pyarrow")
    cols = {c.strip().lower(): c for c in table.column_names}
    out = []
    for s in slices:
        t = table.schema.field(cols[s]).type
        out.append(f"{text_sql(f'{alias}.{quote(cols[s])}', pa.types.is_string(t) or pa.types.is_large_string(t))} "
                   f"AS {quote('s_' + s)}")
    return "".join(", " + x for x in out)


def validate(con: Any, name: str, sample: Any, features: Mapping[str, str] | None = None) -> list[str]:
    """The chunk's rows (the view ``_raw``: raw columns, ``_row``, the batch index) as typed events, each with
    its quarantine reason or none (the table ``_v``); the slice columns. ``sample`` is an empty table with the
    raw columns; ``name`` the source named by an error about them."""
    select, slices = event_select(name, sample, features)
    envs = ", ".join(f"'{e}'" for e in ENVIRONMENTS)
    con.execute(f"""
        CREATE OR REPLACE {scope(con)}TABLE _v AS
        SELECT * EXCLUDE (ts_given, score_given, relevance_given), (rank_given OR score_given) AS is_ranking,
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
