"""The monitoring store: ranking events in a DuckDB file, per-group values, reports, alerts, root cause.

Every method opens the DuckDB file for its own duration, so another process can ingest between two calls.
A writer holds DuckDB's file lock: a second writer (or a reader) waits up to ``wait`` seconds for it,
then gets :class:`~ranklens.errors.StoreBusyError`. An ingest batch is one transaction (a crash leaves
nothing of it) and is identified by a hash of its content (ingesting it again adds nothing).

The values of the tracked measures (``[evaluation] tracked``) are a per-group cache: a group is marked
stale when its events or late labels arrive, and :meth:`Store.refresh` (run at the end of every ingest
call) computes the stale groups once with the core's kernels. Reads compute stale groups from their
events, so results never depend on the cache. Reports over stored values aggregate a small per-group
table; other measures are computed on demand from the events, a bounded chunk of groups at a time.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._deps import require
from ..errors import FormatError, InputError, InvalidParameterError, StoreBusyError
from ..measures import parse_measure
from . import _schema
from .config import Baseline, MonitorConfig, load_config

__all__ = ["IngestSummary", "Store"]

_BASE_COLS = ("model", "model_version", "environment", "group_id")
_EVENT_COLS = ("timestamp", "model", "model_version", "environment", "group_id", "item_id", "rank", "score",
               "relevance", "labels")
_ENVIRONMENTS = ("training", "validation", "production")
_WINDOWS = ("hour", "day", "week")
_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
_FILE_EXT = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl",
             ".ndjson": "jsonl", ".json": "jsonl"}
_CHUNK_ITEMS = 4_000_000  # items evaluated per chunk when values are computed from events


@dataclass
class IngestSummary:
    """What an ingest did, batch by batch.

    Attributes
    ----------
    batches : list of dict
        One entry per batch: ``source``, ``batch_id``, ``status`` ("ingested" or "already ingested"),
        ``rows``, ``ranking_rows``, ``label_rows``, ``groups`` (new served lists), ``quarantined``,
        ``skipped`` (rows of groups already in the store), ``reasons`` (quarantine reason -> rows),
        ``updated_groups`` (groups whose values changed because of late labels).
    """

    batches: list[dict[str, Any]] = field(default_factory=list)

    def _total(self, key: str) -> int:
        return int(sum(b.get(key, 0) for b in self.batches))

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
            "reasons": self.reasons, "batches": self.batches,
        }

    def __str__(self) -> str:
        lines = []
        for b in self.batches:
            if b["status"] != "ingested":
                lines.append(f"{b['source']}: {b['status']} (batch {b['batch_id'][:12]}), nothing added")
                continue
            lines.append(
                f"{b['source']}: {b['rows']} rows -> {b['groups']} groups ({b['ranking_rows']} ranked items), "
                f"{b['label_rows']} label rows, {b['quarantined']} quarantined, {b['skipped']} skipped"
                + (f", {b['updated_groups']} groups updated by late labels" if b.get("updated_groups") else "")
            )
            for r, n in b.get("reasons", {}).items():
                lines.append(f"    quarantined {n}: {r}")
        return "\n".join(lines)


# -- small helpers -----------------------------------------------------------------------------------------
def _arrow(rel: Any) -> Any:
    f = getattr(rel, "to_arrow_table", None)
    return f() if f is not None else rel.arrow()


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _time(value: Any, name: str) -> _dt.datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, _dt.datetime):
        t = value
    elif isinstance(value, _dt.date):
        t = _dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            t = _dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidParameterError(f"`{name}` must be an ISO date or time like 2026-10-01; got {value!r}.") from None
    elif isinstance(value, np.datetime64):
        t = value.astype("datetime64[us]").item()
    else:
        raise InvalidParameterError(f"`{name}` must be an ISO date or time; got {value!r}.")
    if t.tzinfo is not None:
        t = t.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    return t


def _window_delta(window: str) -> Any:
    return {"hour": _dt.timedelta(hours=1), "day": _dt.timedelta(days=1), "week": _dt.timedelta(days=7)}[window]


def _check_window(window: str) -> str:
    if window not in _WINDOWS:
        raise InvalidParameterError(f"`window` must be hour, day or week; got {window!r}.")
    return window


def _metric_keys(metrics: Any, k: Any = None) -> list[str]:
    if isinstance(metrics, str):
        metrics = [metrics]
    ks = [k] if isinstance(k, int) else list(k or [])
    keys: list[str] = []
    for m in metrics:
        m = str(m)
        if ks and "@" not in m and "." not in m:
            for kk in ks:
                keys.extend(x.key for x in parse_measure(f"{m}@{int(kk)}"))
        else:
            keys.extend(x.key for x in parse_measure(m))
    if not keys:
        raise InvalidParameterError("`metrics` must name at least one measure, e.g. 'ndcg@10'.")
    return list(dict.fromkeys(keys))


def _sha_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def _sha_table(table: Any) -> str:
    pa = require("pyarrow")
    h = hashlib.sha256()

    class _Sink:
        closed = False

        def write(self, b: Any) -> int:
            h.update(b)
            return len(b)

        def flush(self) -> None:
            pass

    sink = pa.PythonFile(_Sink(), mode="w")
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return h.hexdigest()


def _to_arrow(obj: Any, what: str) -> Any:
    pa = require("pyarrow")
    if isinstance(obj, pa.Table):
        return obj
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    mod = type(obj).__module__.split(".")[0]
    if mod == "pandas":
        return pa.Table.from_pandas(obj, preserve_index=False)
    if mod == "polars":
        return obj.to_arrow()
    raise InvalidParameterError(
        f"{what}: expected a file path, a list of paths, or a pandas / polars / pyarrow table; got {type(obj).__name__}."
    )


class Store:
    """A monitoring store in a DuckDB file.

    Parameters
    ----------
    path : str or Path, default="ranklens.duckdb"
        The DuckDB file (created by the first ingest).
    config : path, dict or MonitorConfig, optional
        Attribution, evaluation, baseline and monitors (see :func:`ranklens.monitor.load_config`);
        default: ``ranklens.toml`` in the current directory when present, else the defaults.
    read_only : bool, default=False
        Open the file read-only (the dashboard does); ingesting then raises.
    wait : float, default=30
        Seconds to wait for another process holding the store before :class:`StoreBusyError`.

    Examples
    --------
    >>> import tempfile, os, pyarrow as pa
    >>> from ranklens.monitor import Store
    >>> events = pa.table({
    ...     "timestamp": ["2026-10-01T10:00:00"] * 5, "model": ["m"] * 5, "model_version": ["v1"] * 5,
    ...     "environment": ["production"] * 5, "group_id": ["x"] * 5, "item_id": list("abcde"),
    ...     "rank": [1, 2, 3, 4, 5], "labels": [[], [], ["click"], ["click"], ["click", "buy"]]})
    >>> d = tempfile.mkdtemp()
    >>> st = Store(os.path.join(d, "ranklens.duckdb"))
    >>> print(st.ingest(events))  # doctest: +ELLIPSIS
    table: 5 rows -> 1 groups (5 ranked items), 0 label rows, 0 quarantined, 0 skipped
    >>> rep = st.report(["ndcg@5"], ci=None)
    >>> round(rep.column("value")[0].as_py(), 4)  # the seed's group x: 1.31752 / 2.13093
    0.6183
    """

    def __init__(
        self,
        path: str | Path = "ranklens.duckdb",
        config: Any = None,
        *,
        read_only: bool = False,
        wait: float = 30.0,
    ) -> None:
        self.path = Path(path)
        self.config: MonitorConfig = load_config(config)
        self.read_only = bool(read_only)
        if not isinstance(wait, (int, float)) or wait < 0:
            raise InvalidParameterError(f"`wait` must be a number of seconds >= 0; got {wait!r}.")
        self.wait = float(wait)

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r}, read_only={self.read_only})"

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    # -- connection ----------------------------------------------------------------------------------------
    def _connect(self, write: bool) -> Any:
        duckdb = require("duckdb")
        if write and self.read_only:
            raise InvalidParameterError(f"store {str(self.path)!r} is open read-only; it cannot be written.")
        if not write and not self.path.exists():
            raise InputError(f"store {str(self.path)!r} does not exist; ingest events first (ranklens monitor ingest).")
        deadline = time.monotonic() + self.wait
        delay = 0.02
        while True:
            try:
                con = duckdb.connect(str(self.path), read_only=not write)
                break
            except duckdb.Error as exc:
                text = str(exc)
                if "lock" not in text.lower():
                    raise InputError(f"store {str(self.path)!r} cannot be opened: {text.splitlines()[0]}") from None
                if time.monotonic() >= deadline:
                    holder = re.search(r"PID (\d+)", text)
                    who = f" (process {holder.group(1)})" if holder else ""
                    raise StoreBusyError(
                        f"store {str(self.path)!r} is busy: another process{who} is writing to it; "
                        f"waited {self.wait:g} s (raise --wait, or try again when it is done)"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.25)
        try:
            con.execute("SET TimeZone = 'UTC'")
        except Exception:  # pragma: no cover - ICU not loaded: timestamps are naive UTC anyway
            pass
        version = _schema.schema_version(con)
        if write:
            if version > _schema.SCHEMA_VERSION:
                con.close()
                raise InputError(
                    f"store {str(self.path)!r} has schema version {version}, newer than this ranklens "
                    f"({_schema.SCHEMA_VERSION}); upgrade ranklens."
                )
            _schema.migrate(con)
        elif version != _schema.SCHEMA_VERSION:
            con.close()
            raise InputError(
                f"store {str(self.path)!r} has schema version {version}; this ranklens reads version "
                f"{_schema.SCHEMA_VERSION}. Open it once for writing (e.g. ranklens monitor ingest) to migrate it."
            )
        return con

    # -- catalogue -----------------------------------------------------------------------------------------
    @staticmethod
    def _slices(con: Any) -> dict[str, str]:
        return dict(con.execute("SELECT name, col FROM slice_columns ORDER BY name").fetchall())

    @staticmethod
    def _metric_cols(con: Any) -> dict[str, tuple[str, str]]:
        return {k: (c, f) for k, c, f in con.execute("SELECT key, col, fingerprint FROM metric_columns").fetchall()}

    def _column(self, con: Any, name: str, slices: dict[str, str] | None = None) -> str:
        slices = self._slices(con) if slices is None else slices
        n = str(name).lower()
        if n in _BASE_COLS:
            return n
        if n in slices:
            return _q(slices[n])
        known = ", ".join(list(_BASE_COLS) + sorted(slices))
        raise InvalidParameterError(f"unknown column {name!r}; known: {known}.")

    def _filters(
        self, con: Any, where: Mapping[str, Any] | None, start: Any, end: Any, alias: str = ""
    ) -> tuple[str, list[Any]]:
        p = f"{alias}." if alias else ""
        clauses: list[str] = []
        params: list[Any] = []
        slices = self._slices(con)
        if where is not None and not isinstance(where, Mapping):
            raise InvalidParameterError(f"`where` must be a mapping {{column: value or [values]}}; got {where!r}.")
        for col, val in (where or {}).items():
            c = self._column(con, col, slices)
            vals = list(val) if isinstance(val, (list, tuple, set)) else [val]
            if not vals:
                raise InvalidParameterError(f"`where` gives no value for {col!r}.")
            if any(v is None for v in vals):
                clauses.append(f"({p}{c} IS NULL" + (f" OR {p}{c} IN ({', '.join('?' * (len(vals) - 1))}))" if len(vals) > 1 else ")"))
            else:
                clauses.append(f"{p}{c} IN ({', '.join('?' * len(vals))})")
            params.extend(str(v) for v in vals if v is not None)
        ts, te = _time(start, "start"), _time(end, "end")
        if ts is not None:
            clauses.append(f"{p}ts >= ?")
            params.append(ts)
        if te is not None:
            clauses.append(f"{p}ts < ?")
            params.append(te)
        return (" AND ".join(clauses) if clauses else "TRUE"), params

    # -- ingest --------------------------------------------------------------------------------------------
    def ingest(self, source: Any, *, source_name: str | None = None) -> IngestSummary:
        """Add events to the store: a file, a directory of files, a list of them, or a table.

        Files: Parquet, CSV, TSV, JSON Lines (``.parquet``, ``.csv``, ``.tsv``, ``.jsonl``/``.ndjson``/``.json``).
        Tables: pandas, polars or pyarrow. Each file (or table) is one batch and one transaction; a batch
        whose content was ingested before adds nothing. Rows that fail validation go to the quarantine
        table with their reason; rows of groups already in the store are skipped and counted.

        Returns
        -------
        IngestSummary
        """
        from .._progress import Progress

        summary = IngestSummary()
        sources = self._sources(source, source_name)
        with Progress(len(sources), "ingesting files") as progress:
            for name, kind, obj in sources:
                summary.batches.append(self._ingest_one(name, kind, obj))
                progress.advance()
        self.refresh()
        return summary

    def refresh(self) -> int:
        """Compute and store the tracked values of the groups whose values are stale; returns their number.

        :meth:`ingest` calls it after its batches, so each group is computed once per ingest call however
        many of its batches brought labels. Until then (or after a crash in between) reads compute stale
        groups from their events, so results never depend on it. A configuration whose attribution or
        convention changed makes every stored value stale.
        """
        pa = require("pyarrow")
        con = self._connect(write=True)
        try:
            con.execute("BEGIN TRANSACTION")
            try:
                self._refresh_tracked(con)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
            cols = self._metric_cols(con)
            keys = list(cols)
            done = 0
            dirty = "SELECT gid FROM groups WHERE dirty"
            for lo, hi in self._chunks(con, dirty, ()):
                con.execute("BEGIN TRANSACTION")
                try:
                    gid, values, nrel = self._compute(con, dirty, (), keys, lo, hi)
                    data = {"gid": gid, "n_relevant": nrel.astype(np.int32)}
                    for j, k in enumerate(keys):
                        v = values[:, j]
                        data[cols[k][0]] = pa.array(v, mask=np.isnan(v))
                    con.register("_vals", pa.table(data))
                    sets = ", ".join([f"{_q(cols[k][0])} = _vals.{_q(cols[k][0])}" for k in keys]
                                     + ["n_relevant = _vals.n_relevant", "dirty = FALSE"])
                    con.execute(f"UPDATE groups SET {sets} FROM _vals WHERE groups.gid = _vals.gid")
                    con.unregister("_vals")
                    con.execute(f"UPDATE groups SET dirty = FALSE WHERE dirty AND gid BETWEEN {int(lo)} AND {int(hi)}")
                    con.execute("COMMIT")
                except BaseException:
                    con.execute("ROLLBACK")
                    raise
                done += len(gid)
            return done
        finally:
            con.close()

    def _sources(self, source: Any, source_name: str | None) -> list[tuple[str, str, Any]]:
        if isinstance(source, (str, Path)):
            p = Path(source)
            if p.is_dir():
                files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in _FILE_EXT)
                if not files:
                    raise InputError(f"{p}: no .parquet, .csv, .tsv or .jsonl files in this directory.")
                return [(str(f), _FILE_EXT[f.suffix.lower()], f) for f in files]
            if not p.exists():
                raise InputError(f"{p}: no such file.")
            ext = p.suffix.lower()
            if ext not in _FILE_EXT:
                raise InputError(f"{p}: unknown event file type {ext or '(none)'!r}; use .parquet, .csv, .tsv or .jsonl.")
            return [(str(p), _FILE_EXT[ext], p)]
        if isinstance(source, (list, tuple)):
            out: list[tuple[str, str, Any]] = []
            for s in source:
                out.extend(self._sources(s, source_name))
            return out
        return [(source_name or "table", "table", _to_arrow(source, "source"))]

    def _read(self, con: Any, name: str, kind: str, obj: Any) -> tuple[Any, list[tuple[int | None, str, str]]]:
        """The batch as an Arrow table, and the CSV lines that do not split into the header's fields
        as (line, text, reason), for the quarantine."""
        pa = require("pyarrow")
        duckdb = require("duckdb")
        if kind in ("csv", "tsv"):
            return self._read_csv(name, Path(obj), "\t" if kind == "tsv" else ",")
        try:
            if kind == "table":
                t = obj
            elif kind == "parquet":
                t = _arrow(con.sql("SELECT * FROM read_parquet(?)", params=[str(obj)]))
            else:
                t = _arrow(con.sql("SELECT * FROM read_json(?, format = 'newline_delimited')", params=[str(obj)]))
        except duckdb.Error as exc:
            if kind == "jsonl":
                _raise_json_line(name, Path(obj))
            raise InputError(f"{name}: cannot be read: {str(exc).splitlines()[0]}") from None
        if not isinstance(t, pa.Table):  # pragma: no cover
            t = pa.table(t)
        return t, []

    def _read_csv(self, name: str, path: Path, sep: str) -> tuple[Any, list[tuple[int | None, str, str]]]:
        import csv as _csv

        pa = require("pyarrow")
        pacsv = require("pyarrow.csv")
        with open(path, newline="", encoding="utf-8", errors="replace") as f:
            header = next(_csv.reader(f, delimiter=sep), None)
        if not header:
            raise FormatError("no header line (the event columns are named on the first line)", path=name, line=1)
        bad: list[tuple[int | None, str, str]] = []

        def invalid(row: Any) -> str:
            bad.append((row.number, row.text,
                        f"row has {row.actual_columns} fields, the header has {row.expected_columns}"))
            return "skip"

        try:
            t = pacsv.read_csv(
                path,
                parse_options=pacsv.ParseOptions(delimiter=sep, invalid_row_handler=invalid),
                convert_options=pacsv.ConvertOptions(column_types={h: pa.string() for h in header},
                                                     strings_can_be_null=True),
            )
        except pa.ArrowInvalid as exc:
            raise InputError(f"{name}: cannot be read as {'TSV' if sep == chr(9) else 'CSV'}: {exc}") from None
        if bad and any(n is None for n, _, _ in bad):  # the reader ran in parallel: find the lines
            want = [text for _, text, _ in bad]
            lines: dict[str, list[int]] = {}
            with open(path, encoding="utf-8", errors="replace") as f:
                for i, line in enumerate(f, start=1):
                    line = line.rstrip("\r\n")
                    if line in want:
                        lines.setdefault(line, []).append(i)
            bad = [(n if n is not None else (lines.get(text) or [None]).pop(0), text, why) for n, text, why in bad]
        return t, bad

    def _ingest_one(self, name: str, kind: str, obj: Any) -> dict[str, Any]:
        batch_id = _sha_table(obj) if kind == "table" else _sha_file(obj)
        con = self._connect(write=True)
        try:
            if con.execute("SELECT count(*) FROM batches WHERE batch_id = ?", [batch_id]).fetchall()[0][0]:
                return {"source": name, "batch_id": batch_id, "status": "already ingested", "rows": 0,
                        "ranking_rows": 0, "label_rows": 0, "groups": 0, "quarantined": 0, "skipped": 0,
                        "reasons": {}}
            table, unsplit = self._read(con, name, kind, obj)
            con.execute("BEGIN TRANSACTION")
            try:
                info = self._load(con, name, batch_id, table, unsplit)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
            return info
        finally:
            con.close()

    def _normalize(self, name: str, table: Any) -> tuple[str, list[str]]:
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
        slices = [c for c in cols if c not in _EVENT_COLS]
        for s in slices:
            if not _NAME.match(s) or len(s) > 64:
                raise InputError(
                    f"{name}: slice column {cols[s]!r} must be a name of letters, digits and _ (not starting with a digit)."
                )

        def typ(c: str) -> Any:
            return table.schema.field(cols[c]).type

        def raw(c: str) -> str:
            return f"_raw.{_q(cols[c])}" if c in cols else "NULL"

        def text(c: str) -> str:
            return f"NULLIF(TRIM(CAST({raw(c)} AS VARCHAR)), '')" if c in cols else "CAST(NULL AS VARCHAR)"

        def num(c: str) -> str:
            if c not in cols:
                return "CAST(NULL AS DOUBLE)"
            t = typ(c)
            if pa.types.is_boolean(t):
                return f"TRY_CAST(CAST({raw(c)} AS INTEGER) AS DOUBLE)"
            return f"TRY_CAST(NULLIF(TRIM(CAST({raw(c)} AS VARCHAR)), '') AS DOUBLE)" if pa.types.is_string(t) or pa.types.is_large_string(t) else f"TRY_CAST({raw(c)} AS DOUBLE)"

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
            ts = f"CAST(to_timestamp(CAST({r} AS DOUBLE)) AS TIMESTAMP)"
        else:
            s = f"NULLIF(TRIM(CAST({r} AS VARCHAR)), '')"
            ts = f"COALESCE(CAST(TRY_CAST({s} AS TIMESTAMPTZ) AS TIMESTAMP), TRY_CAST({s} AS TIMESTAMP))"
        if "labels" in cols:
            lt = typ("labels")
            if pa.types.is_list(lt) or pa.types.is_large_list(lt):
                labels = f"list_distinct(list_filter(list_transform({raw('labels')}, lambda l: TRIM(CAST(l AS VARCHAR))), lambda l: l IS NOT NULL AND l <> ''))"
            else:
                labels = f"list_distinct(list_filter(list_transform(string_split(CAST({raw('labels')} AS VARCHAR), '|'), lambda l: TRIM(l)), lambda l: l <> ''))"
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
        select += [f"NULLIF(TRIM(CAST({raw(s)} AS VARCHAR)), '') AS {_q('s_' + s)}" for s in slices]
        return ",\n".join(select), slices

    def _load(self, con: Any, name: str, batch_id: str, table: Any,
              unsplit: list[tuple[int | None, str, str]]) -> dict[str, Any]:
        pa = require("pyarrow")
        n = table.num_rows
        table = table.append_column("_row", pa.array(np.arange(n, dtype=np.int64)))
        select, slices = self._normalize(name, table)
        con.register("_raw", table)
        envs = ", ".join(f"'{e}'" for e in _ENVIRONMENTS)
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
        # an item twice in one served list: the first row counts, the others are quarantined
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
        # every row of a list must be ordered the same way: all with a rank, or all by score
        con.execute("""
            UPDATE _v SET reason = 'group mixes rows with and without rank'
            FROM (SELECT model, model_version, environment, group_id FROM _v
                  WHERE reason IS NULL AND is_ranking
                  GROUP BY ALL HAVING count(*) FILTER (WHERE rank_given) NOT IN (0, count(*))) m
            WHERE _v.reason IS NULL AND _v.is_ranking AND _v.model = m.model AND _v.model_version = m.model_version
              AND _v.environment = m.environment AND _v.group_id = m.group_id""")
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
        # new slice columns
        known = self._slices(con)
        for s in slices:
            if s not in known:
                col = f"s_{s}"
                con.execute(f"ALTER TABLE groups ADD COLUMN {_q(col)} VARCHAR")
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
        slice_sel = "".join(f", v.{_q('s_' + s)}" for s in slices)
        slice_cols = "".join(f", {_q(known[s])}" for s in slices)
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
        label_rows = con.execute("""
            INSERT INTO feedback SELECT group_id, item_id, ts, relevance, labels, ?
            FROM _v WHERE reason IS NULL AND NOT is_ranking""", [batch_id]).fetchall()[0][0]
        n_groups, ranking_rows = con.execute("SELECT count(*), coalesce(sum(n_items), 0) FROM _gn").fetchall()[0]
        # outcomes resolved to lists: in-line ones, this batch's label rows for any list with that
        # group_id, and label rows stored earlier for the lists that arrive now
        con.execute("""
            CREATE OR REPLACE TEMP TABLE _fb AS
            SELECT g.gid, f.item_id, f.labels, f.relevance
            FROM feedback f JOIN groups g ON g.group_id = f.group_id AND g.source = 'events'
            WHERE f.batch_id = ? OR f.group_id IN (SELECT group_id FROM _gn)""", [batch_id])
        con.execute("""
            INSERT INTO item_labels
            SELECT gid, item_id, unnest(labels), NULL, ? FROM _items WHERE coalesce(len(labels), 0) > 0
            UNION ALL SELECT gid, item_id, NULL, relevance, ? FROM _items WHERE relevance IS NOT NULL
            UNION ALL SELECT gid, item_id, unnest(labels), NULL, ? FROM _fb WHERE coalesce(len(labels), 0) > 0
            UNION ALL SELECT gid, item_id, NULL, relevance, ? FROM _fb WHERE relevance IS NOT NULL""",
                    [batch_id] * 4)
        # stored groups that receive labels in this batch: their values are stale until the refresh
        updated = con.execute("""
            UPDATE groups SET dirty = TRUE
            WHERE source = 'events' AND batch_id <> ?
              AND group_id IN (SELECT DISTINCT group_id FROM feedback WHERE batch_id = ?)""",
                              [batch_id, batch_id]).fetchall()[0][0]
        con.execute(
            "INSERT INTO batches VALUES (?, 'events', ?, now()::TIMESTAMP, ?, ?, ?, ?, ?, ?)",
            [batch_id, name, n, int(ranking_rows), int(label_rows), int(n_groups), quarantined, int(skipped_groups[1])],
        )
        return {"source": name, "batch_id": batch_id, "status": "ingested", "rows": int(n),
                "ranking_rows": int(ranking_rows), "label_rows": int(label_rows), "groups": int(n_groups),
                "quarantined": quarantined, "skipped": int(skipped_groups[1]),
                "skipped_groups": int(skipped_groups[0]), "reasons": reasons, "updated_groups": int(updated)}

    # -- per-group values ------------------------------------------------------------------------------------
    def _events(self, con: Any, gid_sql: str, params: Sequence[Any] = (), lo: int | None = None,
                hi: int | None = None) -> Any:
        """Items of the selected groups (gids in [lo, hi] when given): order key, explicit relevance, attribution."""
        rng = f" AND i.gid BETWEEN {int(lo)} AND {int(hi)}" if lo is not None and hi is not None else ""
        grng = f" AND g.gid BETWEEN {int(lo)} AND {int(hi)}" if lo is not None and hi is not None else ""
        # outcomes are resolved to (gid, item) at ingest: integer joins, pruned by gid range; each distinct
        # label of an item adds its attribution value (the _w table), the largest given relevance wins
        pa = require("pyarrow")
        vals = self.config.attribution.label_values()
        con.register("_w", pa.table({"label": pa.array(list(vals), pa.string()),
                                     "weight": pa.array(list(vals.values()), pa.float64())}))
        lrng = rng.replace("i.gid", "l.gid")
        return _arrow(con.sql(f"""
            WITH sel AS (SELECT g.gid, g.order_by FROM groups g WHERE g.gid IN ({gid_sql}){grng}),
            lab AS (SELECT DISTINCT l.gid, l.item_id, l.label FROM item_labels l
                    WHERE l.label IS NOT NULL{lrng} AND l.gid IN (SELECT gid FROM sel)),
            att AS (SELECT lab.gid, lab.item_id, sum(_w.weight) AS attr FROM lab JOIN _w ON _w.label = lab.label
                    GROUP BY ALL),
            rel AS (SELECT l.gid, l.item_id, max(l.relevance) AS relevance FROM item_labels l
                    WHERE l.relevance IS NOT NULL{lrng} AND l.gid IN (SELECT gid FROM sel) GROUP BY ALL)
            SELECT i.gid, i.item_id, i.rank, i.score,
                   CASE WHEN s.order_by = 'rank' THEN -CAST(i.rank AS DOUBLE) ELSE i.score END AS key,
                   rel.relevance, coalesce(att.attr, 0.0) AS attr
            FROM items i JOIN sel s ON i.gid = s.gid
            LEFT JOIN att ON att.gid = i.gid AND att.item_id = i.item_id
            LEFT JOIN rel ON rel.gid = i.gid AND rel.item_id = i.item_id
            WHERE TRUE{rng}""", params=list(params)))

    def _gains(self, events: Any) -> np.ndarray:
        """Gain of each item: its largest explicit relevance, else the attribution of its distinct labels."""
        attr = events.column("attr").to_numpy(zero_copy_only=False).astype(np.float64)
        if self.config.attribution.rule == "binary":
            attr = np.minimum(attr, 1.0)
        rel = events.column("relevance").to_numpy(zero_copy_only=False).astype(np.float64)
        return np.where(np.isnan(rel), attr, rel)

    def _compute(self, con: Any, gid_sql: str, params: Sequence[Any], keys: list[str], lo: int | None = None,
                 hi: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(gid, values[n_groups, n_keys], n_relevant) for the selected groups, computed from the events."""
        pa = require("pyarrow")
        from ..evaluate import evaluate

        ev = self._events(con, gid_sql, params, lo, hi)
        if ev.num_rows == 0:
            return np.zeros(0, np.int64), np.zeros((0, len(keys))), np.zeros(0, np.int64)
        gain = self._gains(ev)
        gid = ev.column("gid").to_numpy(zero_copy_only=False)
        tbl = pa.table({
            "query": gid, "item": np.arange(ev.num_rows, dtype=np.int64),
            "score": ev.column("key").to_numpy(zero_copy_only=False).astype(np.float64), "label": gain,
        })
        res = evaluate(tbl, metrics=keys, convention=self.config.convention_obj(), per_query=True,
                       query_col="query", item_col="item", score_col="score", label_col="label")
        q = np.asarray(res.queries, dtype=np.int64)
        uniq, inv = np.unique(gid, return_inverse=True)
        nrel = np.bincount(inv, weights=(gain > 0).astype(np.float64), minlength=len(uniq)).astype(np.int64)
        values = np.full((len(uniq), len(keys)), np.nan)
        pos = np.searchsorted(uniq, q)
        values[pos] = np.asarray(res.values, dtype=np.float64)
        return uniq, values, nrel

    def _chunks(self, con: Any, gid_sql: str, params: Sequence[Any]) -> list[tuple[int, int]]:
        """Contiguous gid ranges of the selection holding at most about _CHUNK_ITEMS items each."""
        rows = con.execute(f"""
            SELECT min(gid), max(gid) FROM (
              SELECT gid, sum(n_items) OVER (ORDER BY gid) // {_CHUNK_ITEMS} AS part
              FROM groups WHERE gid IN ({gid_sql}) AND n_items IS NOT NULL)
            GROUP BY part ORDER BY 1""", list(params)).fetchall()
        return [(a, b) for a, b in rows if a is not None]

    def _refresh_tracked(self, con: Any) -> None:
        """Add columns for newly tracked measures; a changed attribution or convention makes every value stale."""
        fp = self.config.fingerprint()
        cols = self._metric_cols(con)
        stale = [k for k, (_, f) in cols.items() if f != fp]
        new = [k for k in self.config.tracked if k not in cols]
        for k in new:
            col = f"m{len(cols)}"
            while col in {c for c, _ in cols.values()}:
                col += "_"
            con.execute(f"ALTER TABLE groups ADD COLUMN {_q(col)} DOUBLE")
            con.execute("INSERT INTO metric_columns VALUES (?, ?, ?)", [k, col, fp])
            cols[k] = (col, fp)
        if stale or new:
            con.execute("UPDATE groups SET dirty = TRUE WHERE source = 'events'")
            con.execute("UPDATE metric_columns SET fingerprint = ?", [fp])

    # -- per-group values of a selection --------------------------------------------------------------------
    def _values(
        self, con: Any, keys: list[str], where: Mapping[str, Any] | None, start: Any, end: Any,
        extra: Sequence[str] = (),
    ) -> tuple[Any, np.ndarray]:
        """Selected groups (Arrow table of gid + ``extra`` SQL expressions) and their values[n, len(keys)]."""
        cond, params = self._filters(con, where, start, end)
        cols = self._metric_cols(con)
        fp = self.config.fingerprint()
        stored = [k for k in keys if k in cols and cols[k][1] == fp]
        sel = ", ".join(["gid", "source"] + list(extra) + [f"{_q(cols[k][0])} AS {_q('v:' + k)}" for k in stored])
        groups = _arrow(con.sql(f"SELECT {sel} FROM groups WHERE {cond} ORDER BY gid", params=params))
        values = np.full((groups.num_rows, len(keys)), np.nan)
        for j, k in enumerate(keys):
            if k in stored:
                values[:, j] = groups.column("v:" + k).to_numpy(zero_copy_only=False).astype(np.float64)
        missing = [k for k in keys if k not in stored]
        # measures not stored: computed for every group with events (results ingested from elsewhere have
        # none: their missing measures stay NaN); stored ones: computed again for groups marked stale
        passes = [(missing, "")] if missing else []
        if stored:
            passes.append((stored, " AND dirty"))
        if groups.num_rows:
            gids = groups.column("gid").to_numpy(zero_copy_only=False)
            for todo, extra_cond in passes:
                gid_sql = f"SELECT gid FROM groups WHERE {cond} AND source = 'events'{extra_cond}"
                for lo, hi in self._chunks(con, gid_sql, params):
                    g, v, _ = self._compute(con, gid_sql, params, todo, lo, hi)
                    pos = np.searchsorted(gids, g)
                    for j, k in enumerate(todo):
                        values[pos, keys.index(k)] = v[:, j]
        return groups, values

    # -- reports ---------------------------------------------------------------------------------------------
    def report(
        self,
        metrics: Any = ("ndcg@10",),
        window: str = "day",
        by: Iterable[str] = ("model", "model_version", "environment"),
        where: Mapping[str, Any] | None = None,
        start: Any = None,
        end: Any = None,
        *,
        k: Any = None,
        ci: str | None = "bootstrap",
        confidence: float = 0.95,
        n_resamples: int = 1000,
        seed: int = 0,
    ) -> Any:
        """Mean of each measure per time window and per series.

        Parameters
        ----------
        metrics : str or list of str, default=("ndcg@10",)
            Measure keys (``"ndcg@10"``, ``"map@10"``, ``"mrr@10"``, ``"P@5"``...); with ``k``, names
            without a cutoff are expanded (``metrics=["ndcg"], k=[1, 5, 10]``).
        window : {"hour", "day", "week"}, default="day"
        by : list of str, default=("model", "model_version", "environment")
            Series columns: any of model, model_version, environment, group_id and the slice columns.
        where : mapping, optional
            ``{column: value or [values]}`` filters.
        start, end : str or datetime, optional
            Time range ``[start, end)`` (UTC).
        ci : {"bootstrap", "t", None}, default="bootstrap"
            Confidence interval of each mean: percentile bootstrap over groups, Student's t, or none.

        Returns
        -------
        pyarrow.Table
            ``window``, the ``by`` columns, ``metric``, ``value``, ``n_groups`` (groups counted),
            ``n_excluded`` (groups left out by the empty-list rule), ``ci_low``, ``ci_high``.
        """
        window = _check_window(window)
        keys = _metric_keys(metrics, k)
        by = [str(b).lower() for b in ([by] if isinstance(by, str) else list(by or ()))]
        if ci not in ("bootstrap", "t", None, "none"):
            raise InvalidParameterError(f"`ci` must be 'bootstrap', 't' or None; got {ci!r}.")
        con = self._connect(write=False)
        try:
            slices = self._slices(con)
            exprs = [f"date_trunc('{window}', ts) AS {_q('c:window')}"]
            exprs += [f"{self._column(con, b, slices)} AS {_q('c:' + b)}" for b in by]
            groups, values = self._values(con, keys, where, start, end, exprs)
        finally:
            con.close()
        keycols = ["c:window"] + ["c:" + b for b in by]
        return _aggregate(groups, values, keys, keycols, ["window"] + by, ci, confidence, n_resamples, seed)

    def baseline(self, metric: str = "ndcg@10", baseline: Any = None, where: Mapping[str, Any] | None = None,
                 *, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
        """Value of ``metric`` over the baseline groups (environment or date range), with a bootstrap interval."""
        spec = Baseline.parse(baseline) if baseline is not None else self.config.baseline
        if spec.kind == "previous":
            raise InvalidParameterError("a 'previous window' baseline depends on a window; use report() or check().")
        key = _metric_keys(metric)[0]
        w, s, e = _baseline_selection(spec, where)
        con = self._connect(write=False)
        try:
            _, values = self._values(con, [key], w, s, e)
        finally:
            con.close()
        out = _summary(values[:, 0], confidence, n_resamples, seed)
        out["spec"] = {"kind": spec.kind, "environment": spec.environment, "start": spec.start, "end": spec.end,
                       "where": dict(w or {})}
        out["metric"] = key
        return out

    def groups(self, metric: str = "ndcg@10", start: Any = None, end: Any = None,
               where: Mapping[str, Any] | None = None, order: str = "worst", limit: int = 20) -> Any:
        """Served lists of a selection with their value: the worst (or best) first.

        Returns
        -------
        pyarrow.Table
            ``group_id``, ``model``, ``model_version``, ``environment``, ``timestamp``, the slice columns,
            ``value``, ``n_items``, ``n_relevant``.
        """
        pa = require("pyarrow")
        if order not in ("worst", "best"):
            raise InvalidParameterError(f"`order` must be 'worst' or 'best'; got {order!r}.")
        if not isinstance(limit, int) or limit < 1:
            raise InvalidParameterError(f"`limit` must be an integer >= 1; got {limit!r}.")
        key = _metric_keys(metric)[0]
        con = self._connect(write=False)
        try:
            slices = self._slices(con)
            extra = ["group_id", "model", "model_version", "environment", "ts AS timestamp"]
            extra += [f"{_q(c)} AS {_q(s)}" for s, c in slices.items()]
            extra += ["n_items", "n_relevant"]
            groups, values = self._values(con, [key], where, start, end, extra)
        finally:
            con.close()
        v = values[:, 0]
        counted = ~np.isnan(v)
        o = np.argsort(v if order == "worst" else -v, kind="stable")
        o = o[counted[o]][:limit]
        cols = {c: groups.column(c).take(pa.array(o)) for c in groups.column_names if c not in ("gid", "source")}
        names = ["group_id", "model", "model_version", "environment", "timestamp", *slices]
        out = {n: cols[n] for n in names}
        out["metric"] = pa.array([key] * len(o), pa.string())
        out["value"] = pa.array(v[o])
        out["n_items"] = cols["n_items"]
        out["n_relevant"] = cols["n_relevant"]
        return pa.table(out)

    def explain(self, group_id: Any, model: str | None = None, model_version: str | None = None,
                environment: str | None = None, k: int | None = 10, measure: str = "ndcg") -> Any:
        """The core's :func:`ranklens.explain` table of one served list, with the store's attributed gains."""
        pa = require("pyarrow")
        from ..explain import explain as _explain

        where = {"group_id": str(group_id)}
        for c, v in (("model", model), ("model_version", model_version), ("environment", environment)):
            if v is not None:
                where[c] = v
        con = self._connect(write=False)
        try:
            cond, params = self._filters(con, where, None, None)
            found = con.execute(
                f"SELECT gid, model, model_version, environment, source FROM groups WHERE {cond} ORDER BY gid", params
            ).fetchall()
            if not found:
                raise InputError(f"no served list with group_id {str(group_id)!r}" + (
                    f" and {', '.join(f'{c}={v}' for c, v in where.items() if c != 'group_id')}" if len(where) > 1 else "")
                    + " in the store.")
            if len(found) > 1:
                opts = "; ".join(f"model={m} model_version={v} environment={e}" for _, m, v, e, _ in found[:5])
                raise InputError(f"group_id {str(group_id)!r} was served {len(found)} times ({opts}); "
                                 "say which with model / model_version / environment.")
            gid, source = found[0][0], found[0][4]
            if source != "events":
                raise InputError(f"group_id {str(group_id)!r} came as per-group results (no events): nothing to explain.")
            ev = self._events(con, "SELECT ?", [gid])
        finally:
            con.close()
        gains = self._gains(ev)
        tbl = pa.table({"query": [str(group_id)] * ev.num_rows, "item": ev.column("item_id"),
                        "score": ev.column("key").to_numpy(zero_copy_only=False).astype(np.float64), "label": gains})
        return _explain(tbl, None, str(group_id), k=k, measure=measure, convention=self.config.convention_obj(),
                        query_col="query", item_col="item", score_col="score", label_col="label")

    def compare(self, metric: str = "ndcg@10", a: Mapping[str, Any] | None = None, b: Mapping[str, Any] | None = None,
                *, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
        """Two selections of groups (model versions, windows...) side by side: means, intervals, Welch's test.

        ``a`` and ``b`` are ``{"where": {...}, "start": ..., "end": ...}``. The groups differ, so the test is
        unpaired (Welch's t) and the interval of the difference a bootstrap over each side's groups.
        """
        key = _metric_keys(metric)[0]
        sides = []
        con = self._connect(write=False)
        try:
            for name, sel in (("a", a), ("b", b)):
                sel = dict(sel or {})
                unknown = set(sel) - {"where", "start", "end"}
                if unknown:
                    raise InvalidParameterError(f"`{name}` accepts where, start and end; not {', '.join(sorted(unknown))}.")
                _, v = self._values(con, [key], sel.get("where"), sel.get("start"), sel.get("end"))
                sides.append(v[:, 0][~np.isnan(v[:, 0])])
        finally:
            con.close()
        out: dict[str, Any] = {"metric": key}
        for name, v in zip(("a", "b"), sides):
            out[name] = _summary(v, confidence, n_resamples, seed)
        va, vb = sides
        out.update(_difference(va, vb, confidence, n_resamples, seed))
        return out

    # -- root cause -------------------------------------------------------------------------------------------
    def slices(self, metric: str = "ndcg@10", start: Any = None, end: Any = None, baseline: Any = None,
               columns: Iterable[str] | None = None, where: Mapping[str, Any] | None = None) -> Any:
        """Which slice values explain the change of ``metric`` between the baseline and a window.

        For a slice value v with shares s_b, s_w of the counted groups and means m_b, m_w in the baseline
        and the window, ``contribution = s_w * (m_w - m_b)`` (its groups got worse) and
        ``mix = (s_w - s_b) * m_b`` (there are more or fewer of its groups). Over the values of one column
        they add up to the change of the overall mean. Rows are sorted by contribution, most harmful first.

        The window defaults to the last day in the store; the baseline to the configured one.
        """
        pa = require("pyarrow")
        key = _metric_keys(metric)[0]
        spec = Baseline.parse(baseline) if baseline is not None else self.config.baseline
        con = self._connect(write=False)
        try:
            slices = self._slices(con)
            if columns is None:
                cols = list(slices)
            else:
                cols = [str(c).lower() for c in ([columns] if isinstance(columns, str) else columns)]
                for c in cols:
                    self._column(con, c, slices)
            if not cols:
                raise InputError("the store has no slice columns to break the change down by.")
            s, e = _time(start, "start"), _time(end, "end")
            if s is None and e is None:
                last = con.execute("SELECT max(ts) FROM groups").fetchall()[0][0]
                if last is None:
                    raise InputError("the store is empty.")
                s = _dt.datetime(last.year, last.month, last.day)
                e = s + _dt.timedelta(days=1)
            elif s is None or e is None:
                raise InvalidParameterError("give both `start` and `end` for the window, or neither (the last day).")
            exprs = [f"{self._column(con, c, slices)} AS {_q('c:' + c)}" for c in cols]
            wg, wv = self._values(con, [key], where, s, e, exprs)
            if spec.kind == "previous":
                bw, bs, be = dict(where or {}), s - (e - s), s
            else:
                bw, bs, be = _baseline_selection(spec, where)
            bg, bv = self._values(con, [key], bw, bs, be, exprs)
        finally:
            con.close()
        rows = []
        vw, vb = wv[:, 0], bv[:, 0]
        cw, cb = ~np.isnan(vw), ~np.isnan(vb)
        nw, nb = int(cw.sum()), int(cb.sum())
        if nw == 0 or nb == 0:
            raise InputError(f"no counted groups in the {'window' if nw == 0 else 'baseline'} for {key}.")
        pc = require("pyarrow.compute")
        for c in cols:
            # slice values as integer codes over one dictionary (no Python object per group)
            sw = pc.fill_null(wg.column("c:" + c).cast(pa.string()), "(missing)")
            sb = pc.fill_null(bg.column("c:" + c).cast(pa.string()), "(missing)")
            values_c = pc.unique(pa.chunked_array(sw.chunks + sb.chunks, pa.string())).to_pylist()
            dictionary = pa.array(values_c, pa.string())
            aw = pc.index_in(sw, value_set=dictionary).to_numpy(zero_copy_only=False)
            ab = pc.index_in(sb, value_set=dictionary).to_numpy(zero_copy_only=False)
            present = set(np.unique(aw[cw]).tolist()) | set(np.unique(ab[cb]).tolist())
            for code in sorted(present, key=lambda i: values_c[i]):
                val = values_c[code]
                xw = vw[cw & (aw == code)]
                xb = vb[cb & (ab == code)]
                sw, sb = len(xw) / nw, len(xb) / nb
                mw = float(xw.mean()) if len(xw) else math.nan
                mb = float(xb.mean()) if len(xb) else math.nan
                change = mw - mb if len(xw) and len(xb) else math.nan
                if len(xw) and not len(xb):
                    contrib, mix = 0.0, sw * mw  # a value new in the window only changes the mix
                elif len(xb) and not len(xw):
                    contrib, mix = 0.0, -sb * mb
                else:
                    contrib, mix = sw * change, (sw - sb) * mb
                p = _welch(xw, xb)["p_value"] if len(xw) > 1 and len(xb) > 1 else math.nan
                rows.append({"column": c, "value": str(val), "n_baseline": len(xb), "n_window": len(xw),
                             "baseline_value": mb, "window_value": mw, "change": change, "share_baseline": sb,
                             "share_window": sw, "contribution": contrib, "mix": mix, "p_value": p})
        rows.sort(key=lambda r: (r["contribution"], r["column"], r["value"]))
        total = float(vw[cw].mean() - vb[cb].mean())
        table = pa.Table.from_pylist(rows) if rows else pa.table({})
        meta = {"metric": key, "window_start": s.isoformat(), "window_end": e.isoformat(),
                "baseline": spec.describe(), "window_value": float(vw[cw].mean()),
                "baseline_value": float(vb[cb].mean()), "change": total, "n_window": nw, "n_baseline": nb}
        return table.replace_schema_metadata({"ranklens": json.dumps(meta)})

    # -- monitors ---------------------------------------------------------------------------------------------
    def check(self, at: Any = None, *, all_windows: bool = False, start: Any = None, end: Any = None,
              notify: bool = True, record: bool = True, webhook: str | None = None) -> list[Any]:
        """Evaluate the configured monitors; fired alerts are recorded in the store and sent to the webhook.

        By default each monitor looks at the last window in the store (``at`` picks the window holding that
        time; ``all_windows`` every window in ``[start, end)``).

        Returns
        -------
        list of Alert
        """
        from .alerts import run_monitors, send_webhook

        alerts = run_monitors(self, at=at, all_windows=all_windows, start=start, end=end)
        if alerts and record and not self.read_only:
            self._record(alerts)
        url = webhook or self.config.webhook
        if alerts and notify and url:
            send_webhook(url, alerts)
        return alerts

    def _record(self, alerts: list[Any]) -> None:
        con = self._connect(write=True)
        try:
            con.execute("BEGIN TRANSACTION")
            for a in alerts:
                d = a.to_dict()
                # an alert already recorded for this monitor, window and series is not recorded again
                con.execute(
                    """INSERT INTO alerts SELECT now()::TIMESTAMP, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
                       WHERE NOT EXISTS (SELECT 1 FROM alerts WHERE monitor = ? AND window_start = ? AND series = ?)""",
                    [d["monitor"], d["metric"], _time(d["window_start"], "window"), _time(d["window_end"], "window"),
                     d["series"].get("model"), d["series"].get("model_version"), d["series"].get("environment"),
                     json.dumps(d["series"], sort_keys=True), d["value"], d["baseline"], d["threshold"], d["p_value"],
                     d["n_groups"], d["n_baseline"], d["reason"],
                     d["monitor"], _time(d["window_start"], "window"), json.dumps(d["series"], sort_keys=True)],
                )
            con.execute("COMMIT")
        finally:
            con.close()

    def alerts(self, start: Any = None, end: Any = None) -> Any:
        """Alerts recorded by :meth:`check`, newest first (``[start, end)`` on the window start)."""
        con = self._connect(write=False)
        try:
            clauses, params = [], []
            if _time(start, "start") is not None:
                clauses.append("window_start >= ?")
                params.append(_time(start, "start"))
            if _time(end, "end") is not None:
                clauses.append("window_start < ?")
                params.append(_time(end, "end"))
            cond = " AND ".join(clauses) or "TRUE"
            return _arrow(con.sql(
                f"SELECT fired_at, monitor, metric, window_start AS window, window_end, model, model_version, "
                f"environment, series, value, baseline, threshold, p_value, n_groups, n_baseline, reason "
                f"FROM alerts WHERE {cond} ORDER BY fired_at DESC, window_start DESC", params=params))
        finally:
            con.close()

    # -- results from elsewhere (Spark) -------------------------------------------------------------------------
    def ingest_results(self, source: Any, *, source_name: str | None = None) -> IngestSummary:
        """Add per-group values computed elsewhere (e.g. by :func:`ranklens.spark.evaluate` on a cluster).

        The table has ``timestamp``, ``model``, ``model_version``, ``environment``, ``group_id``, any
        slice columns, and one numeric column per measure named by its key (``ndcg@10``...; null or NaN:
        the group was left out by the empty-list rule). Reports then aggregate these values with the
        store's own. Groups already in the store are skipped; a batch ingested before adds nothing.
        """
        summary = IngestSummary()
        for name, kind, obj in self._sources(source, source_name):
            summary.batches.append(self._ingest_results_one(name, kind, obj))
        return summary

    def _ingest_results_one(self, name: str, kind: str, obj: Any) -> dict[str, Any]:
        pa = require("pyarrow")
        batch_id = _sha_table(obj) if kind == "table" else _sha_file(obj)
        con = self._connect(write=True)
        try:
            if con.execute("SELECT count(*) FROM batches WHERE batch_id = ?", [batch_id]).fetchall()[0][0]:
                return {"source": name, "batch_id": batch_id, "status": "already ingested", "rows": 0,
                        "ranking_rows": 0, "label_rows": 0, "groups": 0, "quarantined": 0, "skipped": 0, "reasons": {}}
            table, unsplit = self._read(con, name, kind, obj)
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
            con.execute("BEGIN TRANSACTION")
            try:
                known = self._slices(con)
                for s in slice_cols:
                    if s not in known:
                        con.execute(f"ALTER TABLE groups ADD COLUMN {_q('s_' + s)} VARCHAR")
                        con.execute("INSERT INTO slice_columns VALUES (?, ?)", [s, "s_" + s])
                        known[s] = "s_" + s
                mcols = self._metric_cols(con)
                for key in metric_cols:
                    if key not in mcols:
                        col = f"m{len(mcols)}"
                        con.execute(f"ALTER TABLE groups ADD COLUMN {_q(col)} DOUBLE")
                        con.execute("INSERT INTO metric_columns VALUES (?, ?, ?)", [key, col, self.config.fingerprint()])
                        mcols[key] = (col, self.config.fingerprint())
                con.register("_res", table)
                tsraw = f"_res.{_q(cols['timestamp'])}"
                t = table.schema.field(cols["timestamp"]).type
                ts = f"CAST({tsraw} AS TIMESTAMP)" if (pa.types.is_timestamp(t) or pa.types.is_date(t)) else \
                    f"COALESCE(CAST(TRY_CAST(CAST({tsraw} AS VARCHAR) AS TIMESTAMPTZ) AS TIMESTAMP), TRY_CAST(CAST({tsraw} AS VARCHAR) AS TIMESTAMP))"
                txt = {c: f"NULLIF(TRIM(CAST(_res.{_q(cols[c])} AS VARCHAR)), '')" for c in ("model", "model_version", "environment", "group_id")}
                bad = con.execute(f"""SELECT count(*) FROM _res WHERE {ts} IS NULL OR {txt['group_id']} IS NULL
                    OR {txt['model']} IS NULL OR {txt['model_version']} IS NULL
                    OR lower({txt['environment']}) NOT IN ('training', 'validation', 'production')""").fetchall()[0][0]
                if bad:
                    raise InputError(f"{name}: {bad} rows lack a valid timestamp, model, model_version, group_id or environment.")
                base = con.execute("SELECT coalesce(max(gid), 0) FROM groups").fetchall()[0][0]
                mset = "".join(f", {_q(mcols[k][0])}" for k in metric_cols)
                mval = "".join(f", CASE WHEN isnan(TRY_CAST(_res.{_q(c)} AS DOUBLE)) THEN NULL ELSE TRY_CAST(_res.{_q(c)} AS DOUBLE) END"
                               for c in metric_cols.values())
                sset = "".join(f", {_q(known[s])}" for s in slice_cols)
                sval = "".join(f", CAST(_res.{_q(cols[s])} AS VARCHAR)" for s in slice_cols)
                before = con.execute("SELECT count(*) FROM groups").fetchall()[0][0]
                con.execute(f"""
                    INSERT INTO groups (gid, model, model_version, environment, group_id, ts, source, batch_id, dirty{mset}{sset})
                    SELECT ? + row_number() OVER (ORDER BY {ts}), {txt['model']}, {txt['model_version']},
                           lower({txt['environment']}), {txt['group_id']}, {ts}, 'results', ?, FALSE{mval}{sval}
                    FROM _res WHERE NOT EXISTS (SELECT 1 FROM groups s WHERE s.model = {txt['model']}
                        AND s.model_version = {txt['model_version']} AND s.environment = lower({txt['environment']})
                        AND s.group_id = {txt['group_id']})""", [base, batch_id])
                added = con.execute("SELECT count(*) FROM groups").fetchall()[0][0] - before
                con.execute("INSERT INTO batches VALUES (?, 'results', ?, now()::TIMESTAMP, ?, 0, 0, ?, 0, ?)",
                            [batch_id, name, table.num_rows, added, table.num_rows - added])
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
            return {"source": name, "batch_id": batch_id, "status": "ingested", "rows": table.num_rows,
                    "ranking_rows": 0, "label_rows": 0, "groups": int(added), "quarantined": 0,
                    "skipped": int(table.num_rows - added), "reasons": {}}
        finally:
            con.close()

    # -- info ---------------------------------------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """What the store holds: counts, time range, models, slice columns, tracked measures."""
        con = self._connect(write=False)
        try:
            one = con.execute("""SELECT (SELECT count(*) FROM groups), (SELECT count(*) FROM items),
                                        (SELECT count(*) FROM feedback), (SELECT count(*) FROM batches),
                                        (SELECT count(*) FROM quarantine), (SELECT min(ts) FROM groups),
                                        (SELECT max(ts) FROM groups)""").fetchall()[0]
            models = [dict(zip(("model", "model_version", "environment", "groups", "first", "last"), r))
                      for r in con.execute("""SELECT model, model_version, environment, count(*), min(ts), max(ts)
                                              FROM groups GROUP BY ALL ORDER BY 1, 2, 3""").fetchall()]
            for m in models:
                m["first"], m["last"] = m["first"].isoformat(), m["last"].isoformat()
            reasons = dict(con.execute("SELECT reason, count(*) FROM quarantine GROUP BY 1 ORDER BY 2 DESC").fetchall())
            return {
                "path": str(self.path), "schema_version": _schema.schema_version(con),
                "groups": one[0], "items": one[1], "labels": one[2], "batches": one[3], "quarantined": one[4],
                "quarantine_reasons": reasons,
                "first": one[5].isoformat() if one[5] else None, "last": one[6].isoformat() if one[6] else None,
                "models": models, "slices": sorted(self._slices(con)),
                "tracked": sorted(self._metric_cols(con)),
            }
        finally:
            con.close()

    def quarantine(self, limit: int = 100) -> Any:
        """Rows that failed validation: batch, source, row number, reason and the row as it came."""
        con = self._connect(write=False)
        try:
            return _arrow(con.sql("SELECT batch_id, source, row_number, reason, record FROM quarantine "
                                  "ORDER BY source, row_number LIMIT ?", params=[int(limit)]))
        finally:
            con.close()


# -- aggregation and statistics (no Python loop over groups; loops over cells) -------------------------------
def _raise_json_line(name: str, path: Path) -> None:
    """Name the first line of a JSON Lines file that is not a JSON object (error path only)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for i, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as exc:
                raise FormatError(f"not valid JSON ({exc.msg})", path=name, line=i, text=line) from None
            if not isinstance(obj, dict):
                raise FormatError("a line must be one JSON object", path=name, line=i, text=line)


def _baseline_selection(spec: Baseline, where: Mapping[str, Any] | None) -> tuple[dict[str, Any], Any, Any]:
    w = dict(where or {})
    if spec.kind == "environment":
        w["environment"] = spec.environment
        return w, None, None
    return w, spec.start, spec.end


def _summary(v: np.ndarray, confidence: float, n_resamples: int, seed: int) -> dict[str, Any]:
    from ..stats import bootstrap_ci

    v = v[~np.isnan(v)]
    if len(v) == 0:
        return {"value": math.nan, "ci_low": math.nan, "ci_high": math.nan, "n_groups": 0}
    if len(v) == 1:
        return {"value": float(v[0]), "ci_low": math.nan, "ci_high": math.nan, "n_groups": 1}
    iv = bootstrap_ci(v, method="percentile", confidence=confidence, n_resamples=n_resamples, seed=seed)
    return {"value": float(v.mean()), "ci_low": iv.low, "ci_high": iv.high, "n_groups": len(v)}


def _welch(a: np.ndarray, b: np.ndarray, alternative: str = "two-sided") -> dict[str, Any]:
    """Welch's unequal-variance t-test of mean(a) - mean(b)."""
    from ..stats import scipy_special

    na, nb = len(a), len(b)
    va, vb = a.var(ddof=1), b.var(ddof=1)
    se2 = va / na + vb / nb
    d = float(a.mean() - b.mean())
    if se2 == 0:
        p = 1.0 if d == 0 else 0.0
        return {"statistic": math.copysign(math.inf, d) if d else 0.0, "df": math.nan, "p_value": p}
    t = d / math.sqrt(se2)
    df = se2 ** 2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
    sp = scipy_special()
    if alternative == "less":
        p = float(sp.stdtr(df, t))
    elif alternative == "greater":
        p = float(sp.stdtr(df, -t))
    else:
        p = float(2 * sp.stdtr(df, -abs(t)))
    return {"statistic": t, "df": df, "p_value": p}


def _difference(a: np.ndarray, b: np.ndarray, confidence: float, n_resamples: int, seed: int) -> dict[str, Any]:
    from ..stats import bootstrap_means

    if len(a) < 2 or len(b) < 2:
        return {"difference": float(a.mean() - b.mean()) if len(a) and len(b) else math.nan,
                "ci_low": math.nan, "ci_high": math.nan, "p_value": math.nan, "test": "welch"}
    ba = bootstrap_means(a.astype(np.float64), n_resamples, seed)[:, 0]
    bb = bootstrap_means(b.astype(np.float64), n_resamples, seed + 1)[:, 0]
    alpha = 1 - confidence
    lo, hi = np.quantile(ba - bb, [alpha / 2, 1 - alpha / 2])
    w = _welch(a, b)
    return {"difference": float(a.mean() - b.mean()), "ci_low": float(lo), "ci_high": float(hi),
            "p_value": w["p_value"], "statistic": w["statistic"], "df": w["df"], "test": "welch"}


def _aggregate(groups: Any, values: np.ndarray, keys: list[str], keycols: list[str], names: list[str],
               ci: str | None, confidence: float, n_resamples: int, seed: int) -> Any:
    pa = require("pyarrow")
    pc = require("pyarrow.compute")
    from ..stats import bootstrap_means, t_interval

    n = groups.num_rows
    if n == 0:
        schema = [pa.field("window", pa.timestamp("us"))] + [pa.field(c, pa.string()) for c in names[1:]]
        schema += [pa.field("metric", pa.string()), pa.field("value", pa.float64()), pa.field("n_groups", pa.int64()),
                   pa.field("n_excluded", pa.int64()), pa.field("ci_low", pa.float64()), pa.field("ci_high", pa.float64())]
        return pa.schema(schema).empty_table()
    # cell id of each group: rows sorted by the key columns, a new cell where any key changes
    sort_keys = [(c, "ascending") for c in keycols]
    order = pc.sort_indices(groups.select(keycols), sort_keys=sort_keys).to_numpy()
    st = groups.select(keycols).take(pa.array(order))
    change = np.zeros(n, dtype=bool)
    change[0] = True
    for c in keycols:
        col = st.column(c).combine_chunks()
        if n > 1:
            a, b = col.slice(1), col.slice(0, n - 1)
            neq = pc.fill_null(pc.not_equal(a, b), True).to_numpy(zero_copy_only=False)
            both_null = (pc.is_null(a).to_numpy(zero_copy_only=False) & pc.is_null(b).to_numpy(zero_copy_only=False))
            change[1:] |= neq & ~both_null
    cell = np.cumsum(change) - 1
    starts = np.flatnonzero(change)
    n_cells = len(starts)
    cells = st.take(pa.array(starts))
    vals = values[order]
    out_rows = {c: [] for c in ["metric", "value", "n_groups", "n_excluded", "ci_low", "ci_high"]}
    idx_rows = []
    ends = np.append(starts[1:], n)
    alpha = 1 - confidence
    for j, key in enumerate(keys):
        v = vals[:, j]
        counted = ~np.isnan(v)
        cnt = np.bincount(cell, weights=counted, minlength=n_cells).astype(np.int64)
        tot = np.bincount(cell, minlength=n_cells).astype(np.int64)
        sums = np.bincount(cell, weights=np.where(counted, v, 0.0), minlength=n_cells)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = sums / cnt
        lo = np.full(n_cells, np.nan)
        hi = np.full(n_cells, np.nan)
        if ci in ("bootstrap", "t"):
            for i in range(n_cells):  # one interval per cell (window x series), not per group
                x = v[starts[i]:ends[i]]
                x = x[~np.isnan(x)]
                if len(x) < 2:
                    continue
                if ci == "t":
                    iv = t_interval(x, confidence)
                    lo[i], hi[i] = iv.low, iv.high
                elif np.all(x == x[0]):
                    lo[i] = hi[i] = x[0]
                else:
                    boot = bootstrap_means(np.ascontiguousarray(x), n_resamples, seed)[:, 0]
                    lo[i], hi[i] = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
        idx_rows.append(np.arange(n_cells))
        out_rows["metric"].append(np.full(n_cells, key, dtype=object))
        out_rows["value"].append(mean)
        out_rows["n_groups"].append(cnt)
        out_rows["n_excluded"].append(tot - cnt)
        out_rows["ci_low"].append(lo)
        out_rows["ci_high"].append(hi)
    idx = np.concatenate(idx_rows)
    # order: window, series, metric in the order asked
    metric_pos = np.concatenate([np.full(n_cells, j) for j in range(len(keys))])
    o = np.lexsort((metric_pos, idx))
    data: dict[str, Any] = {}
    for name, c in zip(names, keycols):
        data[name] = cells.column(c).take(pa.array(idx[o]))
    data["metric"] = pa.array(np.concatenate(out_rows["metric"])[o].tolist(), pa.string())
    for c in ("value", "ci_low", "ci_high"):
        data[c] = pa.array(np.concatenate(out_rows[c])[o], pa.float64())
    for c in ("n_groups", "n_excluded"):
        data[c] = pa.array(np.concatenate(out_rows[c])[o], pa.int64())
    return pa.table(data)
