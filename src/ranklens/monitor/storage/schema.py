"""The store's tables and their migrations.

Version 1 holds the events: served groups (one row per served list, with its slice values and the stored
per-group values of the tracked measures), their items, late label events, ingested batches and the
quarantine. Version 2 adds the record of fired alerts. Version 3 marks groups whose stored values
are stale (``dirty``) so that values are computed once per ingest call rather than once per batch, and
moves outcomes to ``item_labels``, resolved to the served lists they belong to (reads join integers).
Version 4 gives alerts a lifecycle (``alert_states``: open, resolved; see :mod:`ranklens.monitor.alerts.lifecycle`).
Version 5 adds data quality (partial lists, rows per batch and hour) and alert operations (severity,
acknowledgement, snoozes, deliveries per webhook route).
Version 6 keys items by integers: ``item_keys`` gives each item id text its number ``iid`` (from 1; see
:mod:`ranklens.monitor.storage.keys`), and ``items``, ``item_labels`` and ``feedback`` hold ``iid`` instead of
the text (cheaper to write, to compress and to join); a reader that shows or orders by the item id joins
``item_keys``.
A store is migrated forward, in one transaction per step, the first time a writer opens it.

A store is recognised as ranklens' by a marker in ``meta`` (``application = 'ranklens-monitor'``), written
when the store is created, before ranklens writes anything else into a file: :func:`recognise` tells an
empty file, a store of ours, a store of an earlier ranklens (no marker, but ``meta.schema_version`` and the
tables ``groups``, ``items`` and ``batches``: given the marker by the first writer) and another
application's database, which ranklens refuses to write into or read.
"""

from __future__ import annotations

from typing import Any

__all__ = ["APPLICATION", "EVENT_TABLES", "SCHEMA_VERSION", "mark", "migrate", "recognise", "schema_version"]

#: The tables the ingest side writes (events, their lists and values, the catalogue, ``meta``); every other
#: table (the alerts') is written by ``check`` (see :mod:`ranklens.monitor.storage.swap`). A migration adding
#: a table the ingest writes adds it here.
EVENT_TABLES = frozenset({"meta", "batches", "groups", "items", "feedback", "quarantine", "slice_columns",
                          "metric_columns", "item_labels", "row_counts", "item_keys"})

_V1 = [
    "CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)",
    """CREATE TABLE batches (
        batch_id VARCHAR PRIMARY KEY, kind VARCHAR, source VARCHAR, ingested_at TIMESTAMP,
        rows BIGINT, ranking_rows BIGINT, label_rows BIGINT, groups BIGINT, quarantined BIGINT,
        skipped BIGINT)""",
    """CREATE TABLE groups (
        gid BIGINT PRIMARY KEY, model VARCHAR NOT NULL, model_version VARCHAR NOT NULL,
        environment VARCHAR NOT NULL, group_id VARCHAR NOT NULL, ts TIMESTAMP NOT NULL,
        n_items INTEGER, n_relevant INTEGER, order_by VARCHAR, source VARCHAR NOT NULL,
        batch_id VARCHAR NOT NULL)""",
    """CREATE TABLE items (
        gid BIGINT NOT NULL, item_id VARCHAR NOT NULL, rank INTEGER, score DOUBLE, relevance DOUBLE,
        labels VARCHAR[])""",
    """CREATE TABLE feedback (
        group_id VARCHAR NOT NULL, item_id VARCHAR NOT NULL, ts TIMESTAMP NOT NULL, relevance DOUBLE,
        labels VARCHAR[], batch_id VARCHAR NOT NULL)""",
    """CREATE TABLE quarantine (
        batch_id VARCHAR NOT NULL, source VARCHAR, row_number BIGINT, reason VARCHAR NOT NULL,
        record VARCHAR)""",
    "CREATE TABLE slice_columns (name VARCHAR PRIMARY KEY, col VARCHAR NOT NULL)",
    "CREATE TABLE metric_columns (key VARCHAR PRIMARY KEY, col VARCHAR NOT NULL, fingerprint VARCHAR)",
]

_V2 = [
    """CREATE TABLE alerts (
        fired_at TIMESTAMP, monitor VARCHAR, metric VARCHAR, window_start TIMESTAMP, window_end TIMESTAMP,
        model VARCHAR, model_version VARCHAR, environment VARCHAR, series VARCHAR, value DOUBLE,
        baseline DOUBLE, threshold DOUBLE, p_value DOUBLE, n_groups BIGINT, n_baseline BIGINT,
        reason VARCHAR)""",
]

_V3 = [
    # stored values are a cache: a group is dirty from its ingest (or the arrival of late labels for it)
    # until its values are computed again; reads compute dirty groups from their events
    "ALTER TABLE groups ADD COLUMN dirty BOOLEAN",
    "UPDATE groups SET dirty = (source = 'events' AND n_relevant IS NULL)",
    # outcomes resolved to the served lists they belong to: one row per (list, item, label) or per given
    # relevance; in-line labels and late label rows alike, so that reads join integers, not strings
    """CREATE TABLE item_labels (gid BIGINT NOT NULL, item_id VARCHAR NOT NULL, label VARCHAR,
                                 relevance DOUBLE, batch_id VARCHAR)""",
    """INSERT INTO item_labels
       SELECT gid, item_id, unnest(labels), NULL, NULL FROM items WHERE coalesce(len(labels), 0) > 0
       UNION ALL SELECT gid, item_id, NULL, relevance, NULL FROM items WHERE relevance IS NOT NULL
       UNION ALL SELECT g.gid, f.item_id, unnest(f.labels), NULL, f.batch_id
                 FROM feedback f JOIN groups g ON g.group_id = f.group_id AND g.source = 'events'
                 WHERE coalesce(len(f.labels), 0) > 0
       UNION ALL SELECT g.gid, f.item_id, NULL, f.relevance, f.batch_id
                 FROM feedback f JOIN groups g ON g.group_id = f.group_id AND g.source = 'events'
                 WHERE f.relevance IS NOT NULL""",
    "ALTER TABLE items DROP COLUMN labels",
    "ALTER TABLE items DROP COLUMN relevance",
]

_V4 = [
    # alert lifecycle: an alert opens once per monitor and series, stays open while its condition holds and
    # resolves when a later window no longer fires. `alerts` stays the record of each window that fired, now
    # tied to the alert it belongs to; `alert_states` holds one row per alert. `notified` is the state last
    # delivered to the webhook (a failed delivery is tried again by the next check).
    "ALTER TABLE alerts ADD COLUMN alert_id BIGINT",
    "ALTER TABLE alerts ADD COLUMN top_slices VARCHAR",
    """CREATE TABLE alert_states (
        alert_id BIGINT PRIMARY KEY, monitor VARCHAR NOT NULL, metric VARCHAR, series VARCHAR NOT NULL,
        model VARCHAR, model_version VARCHAR, environment VARCHAR, state VARCHAR NOT NULL,
        opened_window TIMESTAMP, last_window TIMESTAMP, last_window_end TIMESTAMP, n_windows BIGINT,
        resolved_window TIMESTAMP, resolved_window_end TIMESTAMP, resolved_value DOUBLE, resolved_reason VARCHAR,
        opened_at TIMESTAMP, updated_at TIMESTAMP, notified VARCHAR)""",
    # alerts recorded before: consecutive windows of a monitor and series are one alert (gaps and islands);
    # the latest alert of each series stays open (the next check resolves it if its condition stopped)
    """UPDATE alerts SET alert_id = m.id FROM (
         SELECT monitor, series, window_start, dense_rank() OVER (ORDER BY monitor, series, island) AS id FROM (
           SELECT *, sum(brk) OVER (PARTITION BY monitor, series ORDER BY window_start) AS island FROM (
             SELECT monitor, series, window_start, CASE WHEN lag(window_end) OVER (
               PARTITION BY monitor, series ORDER BY window_start) = window_start THEN 0 ELSE 1 END AS brk
             FROM alerts))) m
       WHERE alerts.monitor = m.monitor AND alerts.series = m.series AND alerts.window_start = m.window_start""",
    """INSERT INTO alert_states
       SELECT alert_id, any_value(monitor), any_value(metric), any_value(series), any_value(model),
              any_value(model_version), any_value(environment),
              CASE WHEN alert_id = max(alert_id) OVER (PARTITION BY any_value(monitor), any_value(series))
                   THEN 'open' ELSE 'resolved' END,
              min(window_start), max(window_start), max(window_end), count(*),
              CASE WHEN alert_id = max(alert_id) OVER (PARTITION BY any_value(monitor), any_value(series))
                   THEN NULL ELSE max(window_end) END,
              NULL, NULL, NULL, min(fired_at), max(fired_at), NULL
       FROM alerts GROUP BY alert_id""",
    "UPDATE alert_states SET notified = state",
]

_V5 = [
    # data quality: a list that lost ranking rows to the quarantine is partial (n_lost > 0, left out of the
    # measures by default); the rows of each batch, and those quarantined, per hour of their time (the
    # quarantine rate per window); see ranklens.monitor.storage.quality_rows
    "ALTER TABLE groups ADD COLUMN n_lost INTEGER",
    "CREATE TABLE row_counts (batch_id VARCHAR NOT NULL, hour TIMESTAMP, rows BIGINT, quarantined BIGINT)",
    # alert operations: severity, acknowledgement, snoozes, deliveries to each webhook route
    "ALTER TABLE alert_states ADD COLUMN severity VARCHAR",
    "ALTER TABLE alert_states ADD COLUMN acknowledged_at TIMESTAMP",
    "ALTER TABLE alert_states ADD COLUMN acknowledged_by VARCHAR",
    "ALTER TABLE alert_states ADD COLUMN ack_note VARCHAR",
    "ALTER TABLE alerts ADD COLUMN severity VARCHAR",
    """CREATE TABLE snoozes (monitor VARCHAR NOT NULL, series VARCHAR NOT NULL, alert_id BIGINT,
                             until TIMESTAMP NOT NULL, snoozed_by VARCHAR, note VARCHAR, created_at TIMESTAMP)""",
    """CREATE TABLE deliveries (alert_id BIGINT NOT NULL, state VARCHAR NOT NULL, route VARCHAR NOT NULL,
                                attempted_at TIMESTAMP, ok BOOLEAN, error VARCHAR)""",
]

_V6 = [
    # integer item keys: every item id of the store numbered once (in the order of its first row: items, then
    # outcomes, then label rows), and the three tables that held the text remade with the number, their other
    # columns (a store's feature columns ``feature:<name>`` of ``items`` included) kept as they were
    """CREATE TABLE item_keys (iid INTEGER NOT NULL, item_id VARCHAR NOT NULL)""",
    """INSERT INTO item_keys
       SELECT CAST(row_number() OVER (ORDER BY first, item_id) AS INTEGER), item_id FROM (
         SELECT item_id, min(o) AS first FROM (
           SELECT item_id, 0 AS o FROM items UNION ALL SELECT item_id, 1 FROM item_labels
           UNION ALL SELECT item_id, 2 FROM feedback) GROUP BY item_id)""",
    """CREATE TABLE _items6 AS SELECT i.gid, k.iid, i.* EXCLUDE (gid, item_id)
       FROM items i JOIN item_keys k ON k.item_id = i.item_id""",
    "DROP TABLE items",
    "ALTER TABLE _items6 RENAME TO items",
    """CREATE TABLE _labels6 AS SELECT l.gid, k.iid, l.* EXCLUDE (gid, item_id)
       FROM item_labels l JOIN item_keys k ON k.item_id = l.item_id""",
    "DROP TABLE item_labels",
    "ALTER TABLE _labels6 RENAME TO item_labels",
    """CREATE TABLE _feedback6 AS SELECT f.group_id, k.iid, f.* EXCLUDE (group_id, item_id)
       FROM feedback f JOIN item_keys k ON k.item_id = f.item_id""",
    "DROP TABLE feedback",
    "ALTER TABLE _feedback6 RENAME TO feedback",
    # a table made by CREATE TABLE AS has no constraints: those the tables had are set again
    *(f"ALTER TABLE {t} ALTER COLUMN {c} SET NOT NULL" for t, c in (
        ("items", "gid"), ("items", "iid"), ("item_labels", "gid"), ("item_labels", "iid"),
        ("feedback", "group_id"), ("feedback", "iid"), ("feedback", "ts"), ("feedback", "batch_id"))),
]

MIGRATIONS: list[list[str]] = [_V1, _V2, _V3, _V4, _V5, _V6]
SCHEMA_VERSION = len(MIGRATIONS)


def schema_version(con: Any) -> int:
    """Schema version of an open store (0: empty file)."""
    has_meta = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'meta' AND table_schema = 'main'"
    ).fetchall()[0][0]
    if not has_meta:
        return 0
    rows = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
    row = rows[0] if rows else None
    return int(row[0]) if row else 0


def migrate(con: Any, target: int = SCHEMA_VERSION) -> list[int]:
    """Apply the missing migrations up to ``target``; returns the versions applied."""
    done = []
    current = schema_version(con)
    for v in range(current, target):
        con.execute("BEGIN TRANSACTION")
        try:
            for stmt in MIGRATIONS[v]:
                con.execute(stmt)
            con.execute(
                "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(v + 1)]
            )
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        done.append(v + 1)
    return done


#: The value of ``meta.application`` in a ranklens monitoring store.
APPLICATION = "ranklens-monitor"


def recognise(con: Any) -> tuple[str, list[str]]:
    """What an open DuckDB file holds, before anything is written into it, and its tables.

    ``"empty"`` (no table), ``"ours"`` (the marker), ``"earlier"`` (a store of a ranklens before the marker:
    ``meta`` with a schema version, and the tables ``groups``, ``items``, ``batches``) or ``"foreign"``.
    """
    tables = sorted(r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' AND table_catalog = "
        "current_database()").fetchall())
    if not tables:
        return "empty", tables
    if "meta" in tables:
        cols = {r[0] for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'meta' AND table_schema = 'main' "
            "AND table_catalog = current_database()").fetchall()}
        if {"key", "value"} <= cols:
            rows = dict(con.execute(
                "SELECT key, value FROM meta WHERE key IN ('application', 'schema_version')").fetchall())
            if rows.get("application") == APPLICATION:
                return "ours", tables
            if "application" not in rows and "schema_version" in rows and {"groups", "items", "batches"} <= set(tables):
                return "earlier", tables
    return "foreign", tables


def mark(con: Any) -> None:
    """Write the marker (a new store, or a store of an earlier ranklens)."""
    con.execute("INSERT OR REPLACE INTO meta VALUES ('application', ?)", [APPLICATION])
