"""Ingest of per-group results: values computed elsewhere (e.g. by :func:`ranklens.spark.evaluate` on a
cluster), one batch per transaction, beside the store's own groups."""

from __future__ import annotations

import re
from typing import Any

from ..._base.deps import require
from ..._defs.measures import parse_measure
from ...errors import FormatError, InputError, InvalidParameterError
from .db import Database, metric_columns, quote, slice_columns, transaction
from .read import batch_hash, read_batch

__all__ = ["ingest_results"]

_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


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
