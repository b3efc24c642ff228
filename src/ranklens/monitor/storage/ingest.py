"""Ingest: validating a batch of events in SQL (rows quarantined with their reason), loading its served
lists, items and outcomes into the store, and per-group results computed elsewhere.

An ingest batch is one transaction (a crash leaves nothing of it) and is identified by a hash of its
content (ingesting it again adds nothing). New groups are marked stale (``dirty``): their values are
computed by :func:`ranklens.monitor.storage.values.refresh` at the end of the ingest call.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..._base.deps import require
from ..._input.buffers import np_to_arrow
from ...errors import InputError
from .chunk import drop_batches, make_chunk
from .db import fetch_arrow, quote, slice_columns, transaction
from .events import BATCH, ENVIRONMENTS, EVENT_COLUMNS, validate
from .keys import chunk_keys
from .quality_rows import mark_partial, store_row_counts
from .read import Unsplit, batch_hashes, empty_table, read_batch
from .stage import Pipeline, drop_temp

__all__ = ["CHUNK_ROWS", "ENVIRONMENTS", "EVENT_COLUMNS", "IngestSummary", "already_ingested", "ingest_batches",
           "store_chunk", "stored_before"]


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


#: Rows of consecutive Parquet files of one schema loaded together: one transaction, read in parallel.
CHUNK_ROWS = 4_000_000


@dataclass
class _Batch:
    index: int  # position in the call's list of batches
    name: str
    kind: str
    obj: Any
    batch_id: str
    rows: int = 0  # Parquet: rows in the file's metadata
    schema: Any = None  # Parquet: the file's Arrow schema


def ingest_batches(con: Any, batches: list[tuple[str, str, Any]], max_quarantine: float | None = None,
                   advance: Callable[[int], None] = lambda n: None,
                   features: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Ingest batches of events on a connection open for writing; what each did, as entries of
    :class:`IngestSummary`, in the order given.

    Each batch is whole or absent in the store whatever happens. Consecutive Parquet files of one schema
    (up to :data:`CHUNK_ROWS` rows) are loaded together, in one transaction whose statements read and
    write them in parallel; any other batch is one transaction. Row numbers, list ids, what is skipped,
    stored once or updated by late labels are those of ingesting the batches one after the other.

    With ``max_quarantine``, a batch whose quarantined rows are more than that fraction of its rows is
    kept out whole (status ``refused``): nothing of it is stored, not even its quarantine, and it is not
    recorded as ingested (the same file, once fixed or with a higher limit, is ingested as new).

    ``features`` (name -> ``numeric`` or ``categorical``) are stored with the items (columns
    ``feature:<name>`` of ``items``), not as slices.
    """
    out: list[dict[str, Any]] = [{} for _ in batches]
    features = dict(features or {})
    pending: list[_Batch] = []
    flight: list[tuple[list[_Batch], str, Any]] = []  # the chunk being made on the second connection
    pipe = Pipeline(con)

    def land() -> None:  # store the chunk in flight
        if flight:
            chunk, db, made = flight.pop()
            for b, info in zip(chunk, _store_staged(con, pipe, chunk, db, made, max_quarantine, features)):
                out[b.index] = info
            advance(len(chunk))

    def flush() -> None:
        if len(pending) > 1:  # made while the chunk before it is stored
            made = pipe.start([str(b.obj) for b in pending], _sample(pending), pending[0].name, features)
            land()
            flight.append((list(pending), *made))
        elif pending:
            land()
            for b, info in zip(pending, _ingest_chunk(con, pending, max_quarantine, features)):
                out[b.index] = info
            advance(len(pending))
        pending.clear()

    try:
        with batch_hashes(batches) as hashes:  # the next files hashed while a chunk is stored
            for i, ((name, kind, obj), batch_id) in enumerate(zip(batches, hashes)):
                if any(b.batch_id == batch_id for b in pending):
                    flush()  # the same content twice in one call: the second is judged once the first is stored
                if any(b.batch_id == batch_id for chunk, _db, _made in flight for b in chunk):
                    land()
                if stored_before(con, name, batch_id, out, i, advance):
                    continue
                b = _Batch(i, name, kind, obj, batch_id)
                if kind == "parquet":
                    b.schema, b.rows = _parquet_shape(con, name, obj)
                    if pending and (b.schema != pending[0].schema
                                    or sum(p.rows for p in pending) + b.rows > CHUNK_ROWS):
                        flush()
                    pending.append(b)
                    continue
                flush()
                pending.append(b)
                flush()
            flush()
        land()
    except Exception:
        land()  # the chunks before the failure are stored, as when each was stored at once
        raise
    finally:
        pipe.close()
    return out


def stored_before(con: Any, name: str, batch_id: str, out: list[dict[str, Any]], i: int,
                  advance: Callable[[int], None]) -> bool:
    """Whether the store holds batch ``i`` already (its entry then set in ``out``, and counted done)."""
    known = already_ingested(con, name, batch_id)
    if known is not None:
        out[i] = known
        advance(1)
    return known is not None


def already_ingested(con: Any, name: str, batch_id: str) -> dict[str, Any] | None:
    """The summary entry of a batch whose content the store holds already, else None."""
    if not con.execute("SELECT count(*) FROM batches WHERE batch_id = ?", [batch_id]).fetchall()[0][0]:
        return None
    return {"source": name, "batch_id": batch_id, "status": "already ingested", "rows": 0, "ranking_rows": 0,
            "label_rows": 0, "groups": 0, "quarantined": 0, "skipped": 0, "reasons": {}}


def _parquet_shape(con: Any, name: str, path: Any) -> tuple[Any, int]:
    """Arrow schema (as DuckDB reads the file) and row count of a Parquet file."""
    duckdb = require("duckdb")
    try:
        schema = fetch_arrow(con.sql("SELECT * FROM read_parquet(?) LIMIT 0", params=[str(path)])).schema
        rows = con.execute("SELECT coalesce(sum(num_rows), 0) FROM parquet_file_metadata(?)", [str(path)]
                           ).fetchall()[0][0]
    except duckdb.Error as exc:
        raise InputError(f"{name}: cannot be read: {str(exc).splitlines()[0]}") from None
    return schema, int(rows)


def _store_staged(con: Any, pipe: Pipeline, chunk: list[_Batch], db: str, made: Any, max_quarantine: float | None,
                  features: dict[str, str]) -> list[dict[str, Any]]:
    """Store a chunk of Parquet files made on the second connection (:mod:`ranklens.monitor.storage.stage`) in one
    transaction. When it fails (a damaged file), its files are taken again one by one, so that the error names its
    file and the files before it are stored as they would be."""
    duckdb = require("duckdb")
    files = [str(b.obj) for b in chunk]
    try:
        slices = made.result()
        pipe.expose(db, files)
        sample = _sample(chunk)

        def drop(refused: list[int]) -> None:
            pipe.own(db)
            drop_batches(con, refused, sample, slices)

        with transaction(con):
            return store_chunk(con, [(b.name, b.batch_id) for b in chunk], slices, {}, max_quarantine, drop)
    except duckdb.Error:
        pipe.hide()
        return [info for b in chunk for info in _ingest_chunk(con, [b], max_quarantine, features)]
    finally:
        pipe.hide()


def _sample(chunk: list[_Batch]) -> Any:
    """An empty table of a chunk's raw columns (its first file's) and ``_row``."""
    sample = empty_table(chunk[0].schema)
    return sample.append_column("_row", np_to_arrow(np.zeros(0, np.int64)))


def _ingest_chunk(con: Any, chunk: list[_Batch], max_quarantine: float | None,
                  features: dict[str, str]) -> list[dict[str, Any]]:
    """One batch in one transaction, read as an Arrow table."""
    if not chunk:
        return []
    b = chunk[0]
    table, unsplit = read_batch(con, b.name, b.kind, b.obj)
    table = table.append_column("_row", np_to_arrow(np.arange(table.num_rows, dtype=np.int64)))
    con.register("_raw_table", table)
    con.execute(f"CREATE OR REPLACE TEMP VIEW _raw AS SELECT *, 0 AS {BATCH} FROM _raw_table")
    try:
        with transaction(con):
            return _load(con, chunk, empty_table(table.schema), {0: unsplit}, max_quarantine, features)
    finally:
        con.execute("DROP VIEW IF EXISTS _raw")
        con.unregister("_raw_table")


def _per_batch(con: Any, sql: str, params: list[Any] | None = None) -> dict[int, Any]:
    """{batch index: value} of a query returning (batch index, value) rows."""
    return {int(b): v for b, v in con.execute(sql, params or []).fetchall()}


def _load(con: Any, chunk: list[_Batch], sample: Any, unsplit: dict[int, Unsplit],
          max_quarantine: float | None, features: dict[str, str]) -> list[dict[str, Any]]:
    """Validate and store a chunk's batches (the view ``_raw``: raw columns, ``_row``, the batch index)."""
    slices = validate(con, chunk[0].name, sample, features)
    make_chunk(con, sample, slices)
    return store_chunk(con, [(b.name, b.batch_id) for b in chunk], slices, unsplit, max_quarantine,
                       lambda refused: drop_batches(con, refused, sample, slices))


def store_chunk(con: Any, chunk: list[tuple[str, str]], slices: list[str], unsplit: dict[int, Unsplit],
                max_quarantine: float | None, drop: Callable[[list[int]], None]) -> list[dict[str, Any]]:
    """Store a chunk's batches ((source, batch id) each, in the order of their index ``_b``) from the chunk
    tables (:mod:`ranklens.monitor.storage.chunk`), whichever engine made them; what each batch did, as
    entries of :class:`IngestSummary`. ``drop(batches)`` makes the chunk tables again without the batches kept
    out by ``max_quarantine``. The new lists get their ids here (``_gn``: ``gid``, ``li``, ...)."""
    con.execute("CREATE OR REPLACE TEMP TABLE _bt (b INTEGER, batch_id VARCHAR, source VARCHAR)")
    con.executemany("INSERT INTO _bt VALUES (?, ?, ?)", [[j, bid, name] for j, (name, bid) in enumerate(chunk)])
    infos = _batch_infos(con, chunk, unsplit, max_quarantine)
    refused = [j for j, info in enumerate(infos) if info["status"] == "refused"]
    if refused:  # kept out whole: nothing of them is stored, not even their quarantine
        if len(refused) == len(chunk):
            return infos
        drop(refused)
    keep = [j for j in range(len(chunk)) if j not in refused]
    _store_quarantine(con, chunk, keep, unsplit)
    chunk_keys(con)  # the item ids' numbers (``_ik``)
    base = con.execute("SELECT coalesce(max(gid), 0) FROM groups").fetchall()[0][0]
    skipped = _store_lists(con, slices, base)
    mark_partial(con)  # lists that lost rows to the quarantine (data quality, storage/quality_rows.py)
    store_row_counts(con, keep, {j: len(lines) for j, lines in unsplit.items()})
    label_rows, new_label_rows, updated = _store_labels(con, base)
    made = {int(b): (int(n), int(k)) for b, n, k in con.execute(
        "SELECT _b, count(*), sum(n_items) FROM _gn GROUP BY _b").fetchall()}
    for j in keep:
        info = infos[j]
        n_groups, ranking_rows = made.get(j, (0, 0))
        n_skipped_groups, n_skipped = skipped.get(j, (0, 0))
        info.update(ranking_rows=ranking_rows, label_rows=int(label_rows.get(j, 0)), groups=n_groups,
                    skipped=n_skipped, skipped_groups=n_skipped_groups,
                    known_label_rows=int(label_rows.get(j, 0) - new_label_rows.get(j, 0)),
                    updated_groups=int(updated.get(j, 0)))
        con.execute("INSERT INTO batches VALUES (?, 'events', ?, now()::TIMESTAMP, ?, ?, ?, ?, ?, ?)",
                    [info["batch_id"], info["source"], info["rows"], ranking_rows, info["label_rows"], n_groups,
                     info["quarantined"], n_skipped])
    return infos


def _batch_infos(con: Any, chunk: list[tuple[str, str]], unsplit: dict[int, Unsplit],
                 max_quarantine: float | None) -> list[dict[str, Any]]:
    """Each batch's entry of :class:`IngestSummary` as far as validation tells (rows, quarantine by reason;
    ``refused`` beyond ``max_quarantine``)."""
    n_rows = _per_batch(con, "SELECT _b, rows FROM _nb")
    why: dict[int, dict[str, int]] = {}
    for b, reason, n in con.execute("SELECT _b, reason, count(*) FROM _q GROUP BY ALL ORDER BY 1, 3 DESC, 2"
                                    ).fetchall():
        why.setdefault(int(b), {})[reason] = int(n)
    infos: list[dict[str, Any]] = []
    for j, (name, batch_id) in enumerate(chunk):
        reasons = dict(why.get(j, {}))
        for _line, _text, r in unsplit.get(j, []):  # lines the CSV reader could not split
            reasons[r] = reasons.get(r, 0) + 1
        reasons = dict(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))
        quarantined = int(sum(reasons.values()))
        # the lines the reader could not make rows of are rows of the batch too
        rows = int(n_rows.get(j, 0)) + len(unsplit.get(j, []))
        info = {"source": name, "batch_id": batch_id, "status": "ingested", "rows": rows,
                "ranking_rows": 0, "label_rows": 0, "groups": 0, "quarantined": quarantined, "skipped": 0,
                "reasons": reasons}
        if max_quarantine is not None and quarantined > max_quarantine * rows:
            first = con.execute("SELECT row_number, reason FROM _q WHERE _b = ? ORDER BY row_number LIMIT 3",
                                [j]).fetchall()
            examples: list[dict[str, Any]] = [{"row": int(r), "reason": w} for r, w in first]
            examples += [{"line": line, "reason": w, "text": text} for line, text, w in unsplit.get(j, [])[:3]]
            info.update(status="refused", max_quarantine=max_quarantine, examples=examples)
        infos.append(info)
    return infos


def _store_quarantine(con: Any, chunk: list[tuple[str, str]], keep: list[int], unsplit: dict[int, Unsplit]) -> None:
    """The quarantined rows of the batches kept, with the row as it came."""
    for j in keep:
        name, batch_id = chunk[j]
        con.execute("INSERT INTO quarantine SELECT ?, ?, row_number, reason, record FROM _q WHERE _b = ?",
                    [batch_id, name, j])
        for line, text, w in unsplit.get(j, []):
            con.execute("INSERT INTO quarantine VALUES (?, ?, ?, ?, ?)",
                        [batch_id, name, line, w, json.dumps({"text": text})])


def _store_lists(con: Any, slices: list[str], base: int) -> dict[int, tuple[int, int]]:
    """The new served lists (with new slice columns), their ids from ``base + 1`` (``_gn``) and their items;
    the lists and rows skipped by batch (stored already, or in an earlier batch of the chunk)."""
    known = slice_columns(con)
    for s in slices:
        if s not in known:
            col = f"s_{s}"
            con.execute(f"ALTER TABLE groups ADD COLUMN {quote(col)} VARCHAR")
            con.execute("INSERT INTO slice_columns VALUES (?, ?)", [s, col])
            known[s] = col
    con.execute("""UPDATE _g SET skip = TRUE WHERE NOT skip AND EXISTS (
        SELECT 1 FROM groups s WHERE s.model = _g.model AND s.model_version = _g.model_version
        AND s.environment = _g.environment AND s.group_id = _g.group_id)""")
    skipped = {int(b): (int(n), int(k)) for b, n, k in con.execute(
        "SELECT _b, count(*), sum(n_items) FROM _g WHERE skip GROUP BY _b").fetchall()}
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _gn AS
        SELECT ? + row_number() OVER (ORDER BY _b, ts, model, model_version, environment, group_id) AS gid,
               * EXCLUDE (skip, mixed)
        FROM _g WHERE NOT skip""", [base])
    slice_sel = "".join(f", g.{quote('s_' + s)}" for s in slices)
    slice_cols = "".join(f", {quote(known[s])}" for s in slices)
    con.execute(f"""
        INSERT INTO groups (gid, model, model_version, environment, group_id, ts, n_items, order_by, source,
                            batch_id, dirty{slice_cols})
        SELECT g.gid, g.model, g.model_version, g.environment, g.group_id, g.ts, g.n_items, g.order_by,
               'events', bt.batch_id, TRUE{slice_sel}
        FROM _gn g JOIN _bt bt ON bt.b = g._b""")
    # a batch's gids are one range: later reads prune by zone maps
    feats = "".join(", " + quote(c) for c in _item_features(con))
    con.execute(f"""INSERT INTO items (gid, iid, rank, score{feats})
                    SELECT g.gid, k.iid, i.rank, i.score{feats} FROM _items i JOIN _gn g USING (li)
                    JOIN _ik k ON k.item_id = i.item_id""")
    return skipped


def _item_features(con: Any) -> list[str]:
    """The feature columns of the chunk's items (``_items``), added to ``items`` when new; a feature stored
    with another kind (numeric, categorical) is an error naming it."""
    types = {"DOUBLE": "numeric", "VARCHAR": "categorical"}
    stored = dict(con.execute("SELECT column_name, data_type FROM information_schema.columns "
                              "WHERE table_name = 'items' AND table_schema = 'main' AND table_catalog = "
                              "current_database()").fetchall())
    new = {d[0]: str(d[1]) for d in con.execute("SELECT * FROM _items LIMIT 0").description
           if d[0].startswith("feature:")}
    out = []
    for col in sorted(new):
        want = "DOUBLE" if new[col] in ("DOUBLE", "NUMBER") else "VARCHAR"
        if col not in stored:
            con.execute(f"ALTER TABLE items ADD COLUMN {quote(col)} {want}")
        elif stored[col] != want:
            raise InputError(f"feature {col.split(':', 1)[1]!r} is {types.get(stored[col], stored[col])} in the "
                             f"store; the configuration makes it {types[want]} ([signals] features). A feature keeps "
                             "its kind: give it another name.")
        out.append(col)
    return out


def _store_labels(con: Any, base: int) -> tuple[dict[int, Any], dict[int, Any], dict[int, Any]]:
    """The label rows (stored once) and every outcome resolved to a list (``item_labels``); lists stored
    before that receive labels marked stale. By batch index: its label rows, those new to the store, the
    lists it updated by late labels."""
    # label rows: stored once whatever the file they came in (a row equal to a stored one, or to an earlier
    # row of the chunk, in group_id, item_id, timestamp, relevance and set of labels, adds nothing)
    # (a row repeated within the chunk is in _fb_rows once, kept by the first batch that has it)
    label_rows = _per_batch(con, "SELECT _b, label_rows FROM _nb WHERE label_rows > 0")
    lo_ts, hi_ts = con.execute("SELECT min(ts), max(ts) FROM _fb_rows").fetchall()[0]
    if label_rows and con.execute("SELECT count(*) FROM feedback WHERE ts BETWEEN ? AND ?", [lo_ts, hi_ts]
                                  ).fetchall()[0][0]:
        # the rows kept made a new table (``_fb_rows`` may be a view of the chunk made on the second connection,
        # storage/stage.py, which cannot be deleted from)
        con.execute("""
            CREATE OR REPLACE TEMP TABLE _fb_kept AS SELECT * FROM _fb_rows r WHERE NOT EXISTS (
              SELECT 1 FROM feedback f JOIN _ik k ON k.iid = f.iid
              WHERE f.ts BETWEEN ? AND ? AND f.group_id = r.group_id
                AND k.item_id = r.item_id AND f.ts = r.ts
                AND f.relevance IS NOT DISTINCT FROM r.relevance
                AND (CASE WHEN len(f.labels) = 1 THEN f.labels WHEN len(f.labels) > 1 THEN list_sort(f.labels) END)
                    IS NOT DISTINCT FROM r.labels)""",
                    [lo_ts, hi_ts])
        drop_temp(con, ("_fb_rows",))
        con.execute("ALTER TABLE _fb_kept RENAME TO _fb_rows")
    # outcomes resolved to lists: in-line ones, this chunk's label rows for any list with that group_id,
    # and label rows stored earlier for the lists that arrive now (two joins, not one with an OR: each is a
    # hash join on this chunk's rows, not a scan of the store); each row is the work of the later of the
    # label's batch and the list's. ``late``: this chunk's label row came in a later batch than its list (a
    # list of an earlier chunk, or of an earlier batch of this one); ``_fbk``: the label rows with item numbers
    con.execute("""CREATE OR REPLACE TEMP TABLE _fbk AS SELECT f._b, f.group_id, k.iid, f.ts, f.relevance, f.labels
                   FROM _fb_rows f JOIN _ik k ON k.item_id = f.item_id""")
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _fb AS
        SELECT g.gid, f.iid, f.labels, f.relevance, greatest(f._b, coalesce(n._b, -1)) AS _b,
               f._b AS label_b, coalesce(n._b, -1) < f._b AS late
        FROM _fbk f
        JOIN groups g ON g.group_id = f.group_id AND g.source = 'events'
        LEFT JOIN _gn n ON n.gid = g.gid
        UNION ALL
        SELECT g.gid, f.iid, f.labels, f.relevance, g._b, NULL, FALSE
        FROM feedback f JOIN _gn g ON g.group_id = f.group_id""")
    # the chunk's label rows are stored after ``_fb`` is made, so its scan of the stored ones does not read them
    # again (no filter on their batch: a batch stored before is never ingested again, :func:`stored_before`)
    con.execute("""INSERT INTO feedback SELECT f.group_id, f.iid, f.ts, f.relevance, f.labels, bt.batch_id
                   FROM _fbk f JOIN _bt bt ON bt.b = f._b""")
    new_label_rows = _per_batch(con, "SELECT _b, count(*) FROM _fbk GROUP BY _b")
    con.execute("""
        INSERT INTO item_labels
        SELECT x.gid, x.iid, x.label, x.relevance, bt.batch_id FROM (
          SELECT g.gid, k.iid, unnest(i.labels) AS label, CAST(NULL AS DOUBLE) AS relevance, i._b
          FROM _items i JOIN _gn g USING (li) JOIN _ik k ON k.item_id = i.item_id WHERE coalesce(len(i.labels), 0) > 0
          UNION ALL SELECT g.gid, k.iid, NULL, i.relevance, i._b FROM _items i JOIN _gn g USING (li)
          JOIN _ik k ON k.item_id = i.item_id WHERE i.relevance IS NOT NULL
          UNION ALL SELECT gid, iid, unnest(labels), NULL, _b FROM _fb WHERE coalesce(len(labels), 0) > 0
          UNION ALL SELECT gid, iid, NULL, relevance, _b FROM _fb WHERE relevance IS NOT NULL) x
        JOIN _bt bt ON bt.b = x._b""")
    # lists stored before a batch that receive labels in it: updated by late labels (every label row of the
    # chunk is in ``_fb``, once with each list of its group_id); those stored before the chunk have stale
    # values until the refresh
    updated = _per_batch(con, "SELECT label_b, count(DISTINCT gid) FROM _fb WHERE late GROUP BY label_b")
    con.execute("""UPDATE groups SET dirty = TRUE WHERE NOT dirty AND source = 'events' AND gid <= ?
                   AND gid IN (SELECT gid FROM _fb WHERE gid <= ?)""", [base, base])
    return label_rows, new_label_rows, updated
