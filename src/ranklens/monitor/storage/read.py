"""Reading ingest batches: which files (or tables) a source names, each as an Arrow table, and the hash
that identifies a batch (ingesting it again adds nothing).

Files: Parquet, CSV, TSV, JSON Lines. A CSV line that does not split into the header's fields, or that opens
a quote it does not close, is not an error: it is returned with its line number, text and reason, for the
quarantine. A JSON Lines column whose values differ in type from line to line is read as text, value by
value, so that each row is validated on its own.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..._base.deps import require
from ...errors import FormatError, InputError, InvalidParameterError
from .db import fetch_arrow, quote

__all__ = ["FILE_TYPES", "Unsplit", "batch_hash", "batch_hashes", "empty_table", "read_batch", "sources"]

FILE_TYPES = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl",
              ".ndjson": "jsonl", ".json": "jsonl"}

Unsplit = list[tuple[int | None, str, str]]  # (line, text, reason) of CSV lines that did not split


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


def batch_hash(kind: str, obj: Any) -> str:
    """The SHA-256 of a batch: of the file's bytes, or of the table's Arrow IPC stream."""
    return _sha_table(obj) if kind == "table" else _sha_file(obj)


@contextlib.contextmanager
def batch_hashes(batches: list[tuple[str, str, Any]]) -> Iterator[Iterator[str]]:
    """The hashes (:func:`batch_hash`) of the batches ``(name, kind, path or table)``, in their order, computed by
    one thread ahead of the caller, so that the files are read and hashed while the caller stores the batches
    before them (hashlib lets go of the GIL on large buffers). An error is raised where its batch's hash is taken;
    leaving the block stops the hashing of the batches not yet begun."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="ranklens-batch-hash") as pool:
        futures = [pool.submit(batch_hash, kind, obj) for _, kind, obj in batches]
        try:
            yield (f.result() for f in futures)
        finally:
            for f in futures:
                f.cancel()


def empty_table(schema: Any) -> Any:
    """A table of ``schema`` without rows (pyarrow's ``Schema.empty_table`` imports pandas when it is installed:
    a third of a second of every ingest)."""
    pa = require("pyarrow")
    return pa.Table.from_batches([], schema=schema)


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
        f"{what}: expected a file path, a list of paths, or a pandas / polars / pyarrow table; "
        f"got {type(obj).__name__}."
    )


def sources(source: Any, source_name: str | None) -> list[tuple[str, str, Any]]:
    """The batches of a source as (name, kind, path or Arrow table): a file, a directory, a list, a table."""
    if isinstance(source, (str, Path)):
        p = Path(source)
        if p.is_dir():
            files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in FILE_TYPES)
            if not files:
                raise InputError(f"{p}: no .parquet, .csv, .tsv or .jsonl files in this directory.")
            return [(str(f), FILE_TYPES[f.suffix.lower()], f) for f in files]
        if not p.exists():
            raise InputError(f"{p}: no such file.")
        ext = p.suffix.lower()
        if ext not in FILE_TYPES:
            raise InputError(f"{p}: unknown event file type {ext or '(none)'!r}; use .parquet, .csv, .tsv or .jsonl.")
        return [(str(p), FILE_TYPES[ext], p)]
    if isinstance(source, (list, tuple)):
        out: list[tuple[str, str, Any]] = []
        for s in source:
            out.extend(sources(s, source_name))
        return out
    return [(source_name or "table", "table", _to_arrow(source, "source"))]


def read_batch(con: Any, name: str, kind: str, obj: Any) -> tuple[Any, Unsplit]:
    """The batch as an Arrow table, and the CSV lines that do not split into the header's fields
    as (line, text, reason), for the quarantine."""
    pa = require("pyarrow")
    duckdb = require("duckdb")
    if kind in ("csv", "tsv"):
        return _read_csv(name, Path(obj), "\t" if kind == "tsv" else ",")
    try:
        if kind == "table":
            t = obj
        elif kind == "parquet":
            t = fetch_arrow(con.sql("SELECT * FROM read_parquet(?)", params=[str(obj)]))
        else:
            t = _read_jsonl(con, str(obj))
    except duckdb.Error as exc:
        if kind == "jsonl":
            _raise_json_line(name, Path(obj))
        raise InputError(f"{name}: cannot be read: {str(exc).splitlines()[0]}") from None
    if not isinstance(t, pa.Table):  # pragma: no cover
        t = pa.table(t)
    return t, []


def _read_jsonl(con: Any, path: str) -> Any:
    """A JSON Lines file as an Arrow table. A column whose values differ in type from line to line (an epoch
    number among ISO strings, a rank given as 2 and as "3") is read as text, value by value: each row is then
    validated on its own. DuckDB infers the types from the first lines; when a later line contradicts them,
    the whole file is read again to infer them."""
    duckdb = require("duckdb")
    try:
        rel = con.sql("SELECT * FROM read_json(?, format = 'newline_delimited')", params=[path])
        t = _json_as_text(con, rel)
    except duckdb.Error:
        rel = con.sql("SELECT * FROM read_json(?, format = 'newline_delimited', sample_size = -1)", params=[path])
        t = _json_as_text(con, rel)
    return t


def _json_as_text(con: Any, rel: Any) -> Any:
    """The relation as Arrow, its mixed-type (JSON) columns turned into text value by value: a JSON string
    gives its text, a list of labels its labels joined by ``|``, any other value its JSON text."""
    cols = []
    for name, typ in zip(rel.columns, rel.types):
        c = quote(name)
        if str(typ) != "JSON":
            cols.append(c)
            continue
        arr = (f"WHEN 'ARRAY' THEN array_to_string(from_json({c}, '[\"VARCHAR\"]'), '|') "
               if name.strip().lower() == "labels" else "")
        cols.append(f"CASE json_type({c}) WHEN 'VARCHAR' THEN json_extract_string({c}, '$') WHEN 'NULL' THEN NULL "
                    f"{arr}ELSE CAST({c} AS VARCHAR) END AS {c}")
    if all(str(t) != "JSON" for t in rel.types):
        return fetch_arrow(rel)
    return fetch_arrow(rel.select(", ".join(cols)))


def _unclosed_quotes(data: bytes) -> tuple[bytes, Unsplit]:
    """Lines with an odd number of double quotes (a quote opened and not closed): each would swallow the
    lines after it into one value. They are blanked (the reader skips empty lines, so the line numbers of
    the others stay those of the file) and returned as (line, text, reason)."""
    if b'"' not in data:
        return data, []
    lines = data.split(b"\n")
    bad: Unsplit = []
    for i, line in enumerate(lines):
        if line.count(b'"') % 2:
            bad.append((i + 1, line.rstrip(b"\r").decode("utf-8", "replace"), "unclosed quote"))
            lines[i] = b""
    if not bad:
        return data, []
    return b"\n".join(lines), bad


def _read_csv(name: str, path: Path, sep: str) -> tuple[Any, Unsplit]:
    import csv as _csv

    pa = require("pyarrow")
    pacsv = require("pyarrow.csv")
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        header = next(_csv.reader(f, delimiter=sep), None)
    if not header:
        raise FormatError("no header line (the event columns are named on the first line)", path=name, line=1)
    data, bad = _unclosed_quotes(path.read_bytes())
    if bad and bad[0][0] == 1:
        raise FormatError("the header line has an unclosed quote", path=name, line=1, text=bad[0][1])

    def invalid(row: Any) -> str:
        bad.append((row.number, row.text,
                    f"row has {row.actual_columns} fields, the header has {row.expected_columns}"))
        return "skip"

    try:
        # every field is text, and only an empty field is missing: "NaN", "null" or "NA" are values, which
        # the validation judges (a NaN score is quarantined, not taken for a missing one)
        t = pacsv.read_csv(
            pa.BufferReader(data),
            parse_options=pacsv.ParseOptions(delimiter=sep, invalid_row_handler=invalid),
            convert_options=pacsv.ConvertOptions(column_types={h: pa.string() for h in header},
                                                 strings_can_be_null=True, null_values=[""],
                                                 quoted_strings_can_be_null=False),
        )
    except pa.ArrowInvalid as exc:
        raise InputError(f"{name}: cannot be read as {'TSV' if sep == chr(9) else 'CSV'}: {exc}") from None
    if bad and any(n is None for n, _, _ in bad):  # the reader ran in parallel: find the lines
        want = [text for _, text, _ in bad]
        lines: dict[str, list[int | None]] = {}
        with open(path, encoding="utf-8", errors="replace") as f:
            for i, line in enumerate(f, start=1):
                line = line.rstrip("\r\n")
                if line in want:
                    lines.setdefault(line, []).append(i)
        bad = [(n if n is not None else (lines.get(text) or [None]).pop(0), text, why) for n, text, why in bad]
    return t, bad


def _raise_json_line(name: str, path: Path) -> None:
    """Name the first line of a JSON Lines file that is not a JSON object (error path only)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for i, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise FormatError(f"not valid JSON ({exc.msg})", path=name, line=i, text=line) from None
            if not isinstance(obj, dict):
                raise FormatError("a line must be one JSON object", path=name, line=i, text=line)
