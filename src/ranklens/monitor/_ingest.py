"""Ingest: validating a batch of events in SQL (rows quarantined with their reason), loading its served
lists, items and outcomes into the store, and per-group results computed elsewhere.

An ingest batch is one transaction (a crash leaves nothing of it) and is identified by a hash of its
content (ingesting it again adds nothing). New groups are marked stale (``dirty``): their values are
computed by :func:`ranklens.monitor._values.refresh` at the end of the ingest call.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._deps import require
from ..errors import FormatError, InputError, InvalidParameterError
from ..measures import parse_measure
from ._db import Database, metric_columns, quote, slice_columns, transaction
from ._read import Unsplit, batch_hash, read_batch

__all__ = ["ENVIRONMENTS", "EVENT_COLUMNS", "IngestSummary", "ingest_events", "ingest_results"]

EVENT_COLUMNS = ("timestamp", "model", "model_version", "environment", "group_id", "item_id", "rank", "score",
                 "relevance", "labels")
ENVIRONMENTS = ("training", "validation", "production")
_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


@dataclass
class IngestSummary:
    """What an ingest did, batch by batch.

    Attributes
    ----------
    batches : list of dict
        One entry per batch: ``source``, ``batch_id``, ``status`` ("ingested", "already ingested", or
        "refused": more than ``max_quarantine`` of its rows quarantined, nothing stored), ``rows``,
        ``ranking_rows``, ``label_rows``, ``known_label_rows`` (label rows already stored, from this or
        another file: not stored again), ``groups`` (new served lists), ``quarantined``, ``skipped`` (rows
        of groups already in the store), ``reasons`` (quarantine reason -> rows), ``updated_groups``
        (groups whose values changed because of late labels); a refused batch has ``max_quarantine`` and
        ``examples`` (its first quarantined rows: row or line, reason).
    """

    batches: list[dict[str, Any]] = field(default_factory=list)

    def _total(self, key: str) -> int:
        return int(sum(b.get(key, 0) for b in self.batches if b["status"] != "refused"))

    @property
    def rows(self) -> int:
        return self._total("rows")

    @property
    def groups(self) -> int:
        return self._total("groups")

    @property
    def quarantined(self) -> int:
        return self._total("quarantined")

    @property
    def skipped(self) -> int:
        return self._total("skipped")

    @property
    def reasons(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for b in self.batches:
            for r, n in b.get("reasons", {}).items():
                out[r] = out.get(r, 0) + n
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows, "groups": self.groups, "quarantined": self.quarantined, "skipped": self.skipped,
            "reasons": self.reasons, "refused": len(self.refused), "batches": self.batches,
        }

    @property
    def refused(self) -> list[dict[str, Any]]:
        """The batches kept out whole because more than ``max_quarantine`` of their rows were quarantined."""
        return [b for b in self.batches if b["status"] == "refused"]

    def __str__(self) -> str:
        lines = []
        for b in self.batches:
            if b["status"] == "refused":
                lines.append(
                    f"{b['source']}: refused, nothing stored: {b['quarantined']} of {b['rows']} rows "
                    f"({b['quarantined'] / max(b['rows'], 1):.1%}) would be quarantined, more than "
                    f"the max_quarantine limit {b['max_quarantine']:g}"
                )
                for r, n in b.get("reasons", {}).items():
                    lines.append(f"    {n}: {r}")
                for e in b.get("examples", []):
                    where = f"row {e['row']}" if "row" in e else f"line {e['line']}: {e['text']!r}"
                    lines.append(f"    e.g. {where}: {e['reason']}")
                continue
            if b["status"] != "ingested":
                lines.append(f"{b['source']}: {b['status']} (batch {b['batch_id'][:12]}), nothing added")
                continue
            known = b.get("known_label_rows", 0)
            lines.append(
                f"{b['source']}: {b['rows']} rows -> {b['groups']} groups ({b['ranking_rows']} ranked items), "
                f"{b['label_rows']} label rows{f' ({known} already stored)' if known else ''}, "
                f"{b['quarantined']} quarantined, {b['skipped']} skipped"
                + (f", {b['updated_groups']} groups updated by late labels" if b.get("updated_groups") else "")
            )
            for r, n in b.get("reasons", {}).items():
                lines.append(f"    quarantined {n}: {r}")
        return "\n".join(lines)


class _Refused(Exception):
    """A batch over the quarantine limit: its transaction is rolled back; ``info`` says why."""

    def __init__(self, info: dict[str, Any]) -> None:
        super().__init__(info["source"])
        self.info = info


def ingest_events(con: Any, name: str, kind: str, obj: Any, max_quarantine: float | None = None) -> dict[str, Any]:
    """Ingest one batch of events in one transaction, on a connection open for writing; what it did, as
    one entry of :class:`IngestSummary`.

    With ``max_quarantine``, a batch whose quarantined rows are more than that fraction of its rows is
    kept out whole (status ``refused``): nothing of it is stored, not even its quarantine, and it is not
    recorded as ingested (the same file, once fixed or with a higher limit, is ingested as new).
    """
    batch_id = batch_hash(kind, obj)
    if con.execute("SELECT count(*) FROM batches WHERE batch_id = ?", [batch_id]).fetchall()[0][0]:
        return {"source": name, "batch_id": batch_id, "status": "already ingested", "rows": 0,
                "ranking_rows": 0, "label_rows": 0, "groups": 0, "quarantined": 0, "skipped": 0,
                "reasons": {}}
    table, unsplit = read_batch(con, name, kind, obj)
    try:
        with transaction(con):
            info = _load(con, name, batch_id, table, unsplit, max_quarantine)
    except _Refused as refused:
        return refused.info
    return info


def _normalize(name: str, table: Any) -> tuple[str, list[str]]:
    """SQL select list turning the raw batch (registered as _raw) into typed event columns."""
    pa = require("pyarrow")
    cols: dict[str, str] = {}
    for c in table.column_names:
        low = c.strip().lower()
        if low == "_row":
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

def _load(con: Any, name: str, batch_id: str, table: Any, unsplit: Unsplit,
          max_quarantine: float | None = None) -> dict[str, Any]:
    pa = require("pyarrow")
    n = table.num_rows
    table = table.append_column("_row", pa.array(np.arange(n, dtype=np.int64)))
    select, slices = _normalize(name, table)
    con.register("_raw", table)
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
        FROM (SELECT {select} FROM _raw) _ev""")
    # an item twice in one served list, a list mixing rows with and without rank: rare, looked for only
    # when the counts per list say there is one
    # (64-bit hashes: distinct hashes prove distinct rows, so no duplicate is missed; a collision only sends
    # the batch through the exact search)
    n_dup, n_mix = con.execute("""
        SELECT count(*) - count(DISTINCT hash(model, model_version, environment, group_id, item_id)),
               count(DISTINCT hash(model, model_version, environment, group_id, rank_given))
               - count(DISTINCT hash(model, model_version, environment, group_id))
        FROM _v WHERE reason IS NULL AND is_ranking""").fetchall()[0]
    if n_dup:
        _mark_duplicates(con)
    if n_mix:
        _mark_mixed(con)
    # quarantine, with the row as it came
    con.execute("""
        INSERT INTO quarantine
        SELECT ?, ?, v._row + 1, v.reason, to_json(r)
        FROM _v v JOIN _raw r ON r._row = v._row WHERE v.reason IS NOT NULL""", [batch_id, name])
    reasons = dict(con.execute(
        "SELECT reason, count(*) FROM _v WHERE reason IS NOT NULL GROUP BY reason ORDER BY 2 DESC, 1"
    ).fetchall())
    for line, text, why in unsplit:  # lines the CSV reader could not split
        con.execute("INSERT INTO quarantine VALUES (?, ?, ?, ?, ?)",
                    [batch_id, name, line, why, json.dumps({"text": text})])
        reasons[why] = reasons.get(why, 0) + 1
    reasons = dict(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))
    quarantined = int(sum(reasons.values()))
    rows = int(n) + len(unsplit)  # the lines the reader could not make rows of are rows of the batch too
    if max_quarantine is not None and quarantined > max_quarantine * rows:
        first = con.execute("SELECT _row + 1, reason FROM _v WHERE reason IS NOT NULL ORDER BY _row LIMIT 3"
                            ).fetchall()
        examples = [{"row": int(r), "reason": why} for r, why in first]
        examples += [{"line": line, "reason": why, "text": text} for line, text, why in unsplit[:3]]
        raise _Refused({"source": name, "batch_id": batch_id, "status": "refused", "rows": rows,
                        "ranking_rows": 0, "label_rows": 0, "groups": 0, "quarantined": quarantined,
                        "skipped": 0, "reasons": reasons, "max_quarantine": max_quarantine,
                        "examples": examples})
    # new slice columns
    known = slice_columns(con)
    for s in slices:
        if s not in known:
            col = f"s_{s}"
            con.execute(f"ALTER TABLE groups ADD COLUMN {quote(col)} VARCHAR")
            con.execute("INSERT INTO slice_columns VALUES (?, ?)", [s, col])
            known[s] = col
    # served groups: new ones get ids; rows of groups already stored are skipped
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _g AS
        SELECT model, model_version, environment, group_id, min(ts) AS ts, count(*) AS n_items,
               CASE WHEN bool_and(rank_given) THEN 'rank' ELSE 'score' END AS order_by,
               min(_row) AS first_row
        FROM _v WHERE reason IS NULL AND is_ranking GROUP BY ALL""")
    skipped_groups = con.execute("""
        SELECT count(*), coalesce(sum(g.n_items), 0) FROM _g g JOIN groups s
          ON s.model = g.model AND s.model_version = g.model_version AND s.environment = g.environment
         AND s.group_id = g.group_id""").fetchall()[0]
    con.execute("""
        DELETE FROM _g WHERE EXISTS (SELECT 1 FROM groups s WHERE s.model = _g.model
          AND s.model_version = _g.model_version AND s.environment = _g.environment AND s.group_id = _g.group_id)""")
    base = con.execute("SELECT coalesce(max(gid), 0) FROM groups").fetchall()[0][0]
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _gn AS
        SELECT ? + row_number() OVER (ORDER BY ts, model, model_version, environment, group_id) AS gid, *
        FROM _g""", [base])
    slice_sel = "".join(f", v.{quote('s_' + s)}" for s in slices)
    slice_cols = "".join(f", {quote(known[s])}" for s in slices)
    con.execute(f"""
        INSERT INTO groups (gid, model, model_version, environment, group_id, ts, n_items, order_by, source,
                            batch_id, dirty{slice_cols})
        SELECT g.gid, g.model, g.model_version, g.environment, g.group_id, g.ts, g.n_items, g.order_by,
               'events', ?, TRUE{slice_sel}
        FROM _gn g JOIN _v v ON v._row = g.first_row""", [batch_id])
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _items AS
        SELECT s.gid, v.item_id, CAST(v.rank AS INTEGER) AS rank, v.score, v.relevance, v.labels
        FROM _v v JOIN _gn s ON s.model = v.model AND s.model_version = v.model_version
         AND s.environment = v.environment AND s.group_id = v.group_id
        WHERE v.reason IS NULL AND v.is_ranking""")
    # a batch's gids are one range: later reads prune by zone maps
    con.execute("INSERT INTO items SELECT gid, item_id, rank, score FROM _items")
    # label rows: stored once whatever the file they came in (a row equal to a stored one, or to an earlier
    # row of the batch, in group_id, item_id, timestamp, relevance and set of labels, adds nothing)
    label_rows = con.execute("SELECT count(*) FROM _v WHERE reason IS NULL AND NOT is_ranking").fetchall()[0][0]
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _fb_rows AS
        SELECT group_id, item_id, ts, relevance, CASE WHEN len(labels) > 0 THEN list_sort(labels) END AS labels
        FROM _v WHERE reason IS NULL AND NOT is_ranking""")
    # a row repeated within the batch (looked for exactly only when the 64-bit hashes say there may be one)
    if con.execute("SELECT count(*) - count(DISTINCT hash(group_id, item_id, ts, relevance, labels)) FROM _fb_rows"
                   ).fetchall()[0][0]:
        con.execute("CREATE OR REPLACE TEMP TABLE _fb_rows AS SELECT DISTINCT * FROM _fb_rows")
    if label_rows:
        lo_ts, hi_ts = con.execute("SELECT min(ts), max(ts) FROM _fb_rows").fetchall()[0]
        con.execute("""
            DELETE FROM _fb_rows WHERE EXISTS (
              SELECT 1 FROM feedback f WHERE f.ts BETWEEN ? AND ? AND f.group_id = _fb_rows.group_id
                AND f.item_id = _fb_rows.item_id AND f.ts = _fb_rows.ts
                AND f.relevance IS NOT DISTINCT FROM _fb_rows.relevance
                AND (CASE WHEN len(f.labels) > 0 THEN list_sort(f.labels) END) IS NOT DISTINCT FROM _fb_rows.labels)""",
                    [lo_ts, hi_ts])
    new_label_rows = con.execute(
        "INSERT INTO feedback SELECT group_id, item_id, ts, relevance, labels, ? FROM _fb_rows", [batch_id]
    ).fetchall()[0][0]
    n_groups, ranking_rows = con.execute("SELECT count(*), coalesce(sum(n_items), 0) FROM _gn").fetchall()[0]
    # outcomes resolved to lists: in-line ones, this batch's label rows for any list with that
    # group_id, and label rows stored earlier for the lists that arrive now
    # (two joins, not one with an OR: each is a hash join on this batch's rows, not a scan of the store)
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _fb AS
        SELECT g.gid, f.item_id, f.labels, f.relevance
        FROM _fb_rows f JOIN groups g ON g.group_id = f.group_id AND g.source = 'events'
        UNION ALL
        SELECT g.gid, f.item_id, f.labels, f.relevance
        FROM feedback f JOIN _gn g ON g.group_id = f.group_id
        WHERE f.batch_id <> ?""", [batch_id])
    con.execute("""
        INSERT INTO item_labels
        SELECT gid, item_id, unnest(labels), NULL, ? FROM _items WHERE coalesce(len(labels), 0) > 0
        UNION ALL SELECT gid, item_id, NULL, relevance, ? FROM _items WHERE relevance IS NOT NULL
        UNION ALL SELECT gid, item_id, unnest(labels), NULL, ? FROM _fb WHERE coalesce(len(labels), 0) > 0
        UNION ALL SELECT gid, item_id, NULL, relevance, ? FROM _fb WHERE relevance IS NOT NULL""",
                [batch_id] * 4)
    # stored groups that receive labels in this batch: their values are stale until the refresh
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _late AS
        SELECT gid, dirty FROM groups
        WHERE source = 'events' AND batch_id <> ?
          AND group_id IN (SELECT DISTINCT group_id FROM _fb_rows)""", [batch_id])
    updated = con.execute("SELECT count(*) FROM _late").fetchall()[0][0]
    con.execute("UPDATE groups SET dirty = TRUE WHERE gid IN (SELECT gid FROM _late WHERE NOT dirty)")
    con.execute(
        "INSERT INTO batches VALUES (?, 'events', ?, now()::TIMESTAMP, ?, ?, ?, ?, ?, ?)",
        [batch_id, name, rows, int(ranking_rows), int(label_rows), int(n_groups), quarantined, int(skipped_groups[1])],
    )
    return {"source": name, "batch_id": batch_id, "status": "ingested", "rows": rows,
            "ranking_rows": int(ranking_rows), "label_rows": int(label_rows), "groups": int(n_groups),
            "quarantined": quarantined, "skipped": int(skipped_groups[1]),
            "skipped_groups": int(skipped_groups[0]), "known_label_rows": int(label_rows - new_label_rows),
            "reasons": reasons, "updated_groups": int(updated)}



def _mark_duplicates(con: Any) -> None:
    """An item twice in one served list: the first row counts, the others are quarantined."""
    con.execute("""
        UPDATE _v SET reason = 'duplicate item in group'
        FROM (SELECT _row FROM (
                SELECT _row, row_number() OVER (PARTITION BY model, model_version, environment, group_id, item_id
                                                ORDER BY _row) AS k
                FROM _v WHERE reason IS NULL AND is_ranking
                  AND (model, model_version, environment, group_id, item_id) IN (
                      SELECT (model, model_version, environment, group_id, item_id) FROM _v
                      WHERE reason IS NULL AND is_ranking GROUP BY ALL HAVING count(*) > 1)) WHERE k > 1) d
        WHERE _v._row = d._row""")


def _mark_mixed(con: Any) -> None:
    """Every row of a list must be ordered the same way: all with a rank, or all by score."""
    con.execute("""
        UPDATE _v SET reason = 'group mixes rows with and without rank'
        FROM (SELECT model, model_version, environment, group_id FROM _v
              WHERE reason IS NULL AND is_ranking
              GROUP BY ALL HAVING count(*) FILTER (WHERE rank_given) NOT IN (0, count(*))) m
        WHERE _v.reason IS NULL AND _v.is_ranking AND _v.model = m.model AND _v.model_version = m.model_version
          AND _v.environment = m.environment AND _v.group_id = m.group_id""")


def ingest_results(db: Database, fingerprint: str, name: str, kind: str, obj: Any) -> dict[str, Any]:
    """Ingest one batch of per-group results (values computed elsewhere) in one transaction."""
    pa = require("pyarrow")
    batch_id = batch_hash(kind, obj)
    with db.writing() as con:
        if con.execute("SELECT count(*) FROM batches WHERE batch_id = ?", [batch_id]).fetchall()[0][0]:
            return {"source": name, "batch_id": batch_id, "status": "already ingested", "rows": 0,
                    "ranking_rows": 0, "label_rows": 0, "groups": 0, "quarantined": 0, "skipped": 0, "reasons": {}}
        table, unsplit = read_batch(con, name, kind, obj)
        if unsplit:
            line, text, why = unsplit[0]
            raise FormatError(why, path=name, line=line, text=text)
        cols = {c.strip().lower(): c for c in table.column_names}
        for req in ("timestamp", "model", "model_version", "environment", "group_id"):
            if req not in cols:
                raise InputError(f"{name}: missing column {req!r} for per-group results.")
        metric_cols, slice_cols = {}, []
        for low, c in cols.items():
            if low in ("timestamp", "model", "model_version", "environment", "group_id"):
                continue
            try:
                parsed = parse_measure(c)
                if len(parsed) != 1:
                    raise InvalidParameterError(c)
                metric_cols[parsed[0].key] = c
            except InvalidParameterError:
                if not _NAME.match(low):
                    raise InputError(f"{name}: column {c!r} is neither a measure key nor a slice name.") from None
                slice_cols.append(low)
        if not metric_cols:
            raise InputError(f"{name}: no measure columns (e.g. 'ndcg@10') in the per-group results.")
        with transaction(con):
            known = slice_columns(con)
            for s in slice_cols:
                if s not in known:
                    con.execute(f"ALTER TABLE groups ADD COLUMN {quote('s_' + s)} VARCHAR")
                    con.execute("INSERT INTO slice_columns VALUES (?, ?)", [s, "s_" + s])
                    known[s] = "s_" + s
            mcols = metric_columns(con)
            for key in metric_cols:
                if key not in mcols:
                    col = f"m{len(mcols)}"
                    con.execute(f"ALTER TABLE groups ADD COLUMN {quote(col)} DOUBLE")
                    con.execute("INSERT INTO metric_columns VALUES (?, ?, ?)", [key, col, fingerprint])
                    mcols[key] = (col, fingerprint)
            con.register("_res", table)
            tsraw = f"_res.{quote(cols['timestamp'])}"
            t = table.schema.field(cols["timestamp"]).type
            if pa.types.is_timestamp(t) or pa.types.is_date(t):
                ts = f"CAST({tsraw} AS TIMESTAMP)"
            else:
                ts = (f"COALESCE(CAST(TRY_CAST(CAST({tsraw} AS VARCHAR) AS TIMESTAMPTZ) AS TIMESTAMP), "
                      f"TRY_CAST(CAST({tsraw} AS VARCHAR) AS TIMESTAMP))")
            txt = {c: f"NULLIF(TRIM(CAST(_res.{quote(cols[c])} AS VARCHAR)), '')"
                   for c in ("model", "model_version", "environment", "group_id")}
            bad = con.execute(f"""SELECT count(*) FROM _res WHERE {ts} IS NULL OR {txt['group_id']} IS NULL
                OR {txt['model']} IS NULL OR {txt['model_version']} IS NULL
                OR lower({txt['environment']}) NOT IN ('training', 'validation', 'production')""").fetchall()[0][0]
            if bad:
                raise InputError(
                    f"{name}: {bad} rows lack a valid timestamp, model, model_version, group_id or environment."
                )
            base = con.execute("SELECT coalesce(max(gid), 0) FROM groups").fetchall()[0][0]
            mset = "".join(f", {quote(mcols[k][0])}" for k in metric_cols)
            mval = "".join(f", CASE WHEN isnan(TRY_CAST(_res.{quote(c)} AS DOUBLE)) THEN NULL "
                           f"ELSE TRY_CAST(_res.{quote(c)} AS DOUBLE) END" for c in metric_cols.values())
            sset = "".join(f", {quote(known[s])}" for s in slice_cols)
            sval = "".join(f", CAST(_res.{quote(cols[s])} AS VARCHAR)" for s in slice_cols)
            before = con.execute("SELECT count(*) FROM groups").fetchall()[0][0]
            con.execute(f"""
                INSERT INTO groups (gid, model, model_version, environment, group_id, ts, source, batch_id,
                                    dirty{mset}{sset})
                SELECT ? + row_number() OVER (ORDER BY {ts}), {txt['model']}, {txt['model_version']},
                       lower({txt['environment']}), {txt['group_id']}, {ts}, 'results', ?, FALSE{mval}{sval}
                FROM _res WHERE NOT EXISTS (SELECT 1 FROM groups s WHERE s.model = {txt['model']}
                    AND s.model_version = {txt['model_version']} AND s.environment = lower({txt['environment']})
                    AND s.group_id = {txt['group_id']})""", [base, batch_id])
            added = con.execute("SELECT count(*) FROM groups").fetchall()[0][0] - before
            con.execute("INSERT INTO batches VALUES (?, 'results', ?, now()::TIMESTAMP, ?, 0, 0, ?, 0, ?)",
                        [batch_id, name, table.num_rows, added, table.num_rows - added])
        return {"source": name, "batch_id": batch_id, "status": "ingested", "rows": table.num_rows,
                "ranking_rows": 0, "label_rows": 0, "groups": int(added), "quarantined": 0,
                "skipped": int(table.num_rows - added), "reasons": {}}
