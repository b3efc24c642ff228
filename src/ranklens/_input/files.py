"""Readers: files into :class:`~ranklens.records.Records` (then :class:`~ranklens.data.Judgments` and
:class:`~ranklens.data.Rankings`).

The public face of this module is :mod:`ranklens.io`.
"""

from __future__ import annotations

import json
import mmap
import os
from pathlib import Path
from typing import Any

from ..errors import FormatError, InputError, InvalidParameterError
from .coerce import nested_records
from .opening import open_bytes
from .records import Judgments, Rankings, Records
from .tables import pick_column, table_records
from .text import is_float, read_predictions, read_svmlight, read_trec_eval_qrels, read_trec_qrels, read_trec_run
from .validate import strip_bom, text_buffer, utf8_text

__all__ = ["FORMATS", "detect_format", "read_arrow_table", "read_judgments", "read_rankings", "read_records",
           "read_table"]

FORMATS = ("trec", "svmlight", "predictions", "csv", "tsv", "parquet", "jsonl", "json")


def _strip_gz(name: str) -> str:
    return name[:-3] if name.lower().endswith(".gz") else name


def detect_format(path: str | os.PathLike[str], head: bytes | None = None) -> str:
    """Guess a file's format from its extension, then from its first lines."""
    p = Path(path)
    name = _strip_gz(p.name.lower())
    for ext, fmt in ((".parquet", "parquet"), (".pq", "parquet"), (".csv", "csv"), (".tsv", "tsv"),
                     (".jsonl", "jsonl"), (".ndjson", "jsonl"), (".json", "json"), (".svmlight", "svmlight"),
                     (".letor", "svmlight"), (".libsvm", "svmlight")):
        if name.endswith(ext):
            return fmt
    if head is None:
        raw = open_bytes(p, mapped=True)
        head = raw[:65536]
    if head[:4] == b"PAR1":
        return "parquet"
    text = strip_bom(bytes(head)).decode("utf-8", errors="replace")
    if not text.strip():
        raise InputError(f"{p}: the file is empty.")
    if all(not ln.strip() or ln.lstrip().startswith("#") for ln in text.splitlines()) and len(head) < 65536:
        raise InputError(f"{p}: the file has only comment lines, no data.")
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if s.startswith("{"):
            return "jsonl"
        if s.startswith("["):
            return "json"
        toks = s.split()
        if len(toks) >= 2 and (toks[1].startswith("qid:") or _is_feature(toks[1])) and is_float(toks[0]):
            return "svmlight"
        if len(toks) == 1 and is_float(toks[0]):
            return "predictions"
        if len(toks) >= 4:
            # a TREC line has a number in its relevance (4 fields) or score (5+) field; a table's header has not
            if is_float(toks[3] if len(toks) == 4 else toks[4]):
                return "trec"
            if "\t" in line:
                return "tsv"
            if "," in line:
                return "csv"
            return "trec"  # the TREC reader names the bad line
        if "\t" in line:
            return "tsv"
        if "," in line:
            return "csv"
        break
    raise FormatError("cannot tell the file's format; pass format= (one of " + ", ".join(FORMATS) + ")", path=str(p))


def _is_feature(tok: str) -> bool:
    a, sep, b = tok.partition(":")
    return bool(sep) and a.isdigit() and is_float(b)


def _read_table(data: bytes | mmap.mmap, path: str, fmt: str, columns: dict[str, Any] | None = None) -> Any:
    import pyarrow as pa

    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            # ParquetFile rather than read_table: read_table imports pyarrow.dataset (a quarter second)
            table = pq.ParquetFile(pa.BufferReader(data)).read()
            _check_parquet_text(table, path)
            return table
        buf = pa.py_buffer(text_buffer(data, path))  # byte-order mark, line endings, UTF-8 (file, line)
        if fmt in ("csv", "tsv"):
            import pyarrow.csv as pcsv

            delim = "\t" if fmt == "tsv" else ","
            header = _csv_header(buf, delim)
            dup = sorted({c for c in header if header.count(c) > 1})
            if dup:
                raise FormatError(f"the header names column(s) {', '.join(map(repr, dup))} more than once",
                                  path=path, line=1, text=delim.join(header))
            # id columns are read as text, so "001" keeps its zeros and "NA" stays an id; value columns as
            # decimal numbers (Arrow would read "0x10" as 16 in an integer column); only an empty cell is null
            ids = _id_columns(header, columns or {}, path)
            types = {c: pa.float64() for c in _value_columns(header, columns or {}, path) if c not in ids}
            types.update({c: pa.string() for c in ids})
            table = pcsv.read_csv(
                pa.BufferReader(buf),
                parse_options=pcsv.ParseOptions(delimiter=delim),
                convert_options=pcsv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                                    null_values=[""]),
            )
            for c in ids:
                table = table.set_column(table.schema.get_field_index(c), c, _int_if_canonical(table.column(c)))
            return table
        if fmt == "jsonl":
            import pyarrow.json as pjson

            _check_jsonl_start(memoryview(buf), path)
            return pjson.read_json(pa.BufferReader(buf))
    except (ValueError, TypeError, KeyError, IndexError, NotImplementedError, OSError) as exc:
        # Arrow's errors (ArrowInvalid is a ValueError...), and what a corrupt Parquet footer gives
        # (UnicodeDecodeError in the metadata); a FormatError of ours passes as it is
        if isinstance(exc, FormatError):
            raise
        raise FormatError(f"cannot read as {fmt}: {_one_line(exc)}", path=path) from None
    raise AssertionError(fmt)


def _check_jsonl_start(buf: memoryview, path: str) -> None:
    """The first record of a JSON Lines file must be an object (pyarrow's reader crashes the process on a
    file whose first line is ``null``; other first values it refuses, less clearly)."""
    n = len(buf)
    pos, step = 0, 1 << 16
    while pos < n:
        chunk = buf[pos:pos + step].tobytes()
        rest = chunk.lstrip(b" \t\r\n")
        if rest:
            if rest[:1] != b"{":
                skipped = chunk[:len(chunk) - len(rest)]
                line = bytes(buf[:pos]).count(b"\n") + skipped.count(b"\n") + 1
                text = rest.split(b"\n", 1)[0].decode("utf-8", errors="replace")
                raise FormatError("a JSON Lines record must be an object {column: value, ...}", path=path,
                                  line=line, text=text)
            return
        pos += step
    raise InputError(f"{path}: the file is empty.")


def _one_line(exc: BaseException) -> str:
    """An exception's message on one line (Arrow's span several)."""
    return " ".join(str(exc).split())


def _check_parquet_text(table: Any, path: str) -> None:
    """Refuse a Parquet string column holding bytes that are not UTF-8 (Parquet does not check them)."""
    import pyarrow as pa

    for name, col in zip(table.column_names, table.columns):
        if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
            continue
        try:
            col.validate(full=True)
        except pa.ArrowInvalid:
            row = 0
            for chunk in col.chunks:  # error path only: find the row
                for i in range(len(chunk)):
                    try:
                        chunk[i].as_py()
                    except UnicodeDecodeError:
                        raise FormatError(f"column {name!r}, row {row + i}: not UTF-8 text", path=path) from None
                row += len(chunk)
            raise FormatError(f"column {name!r}: not UTF-8 text", path=path) from None


def _csv_header(data: Any, delim: str) -> list[str]:
    import csv

    raw = memoryview(data).tobytes()[:1 << 20]
    nl = raw.find(b"\n")
    first = raw[:nl if nl >= 0 else len(raw)].decode("utf-8", errors="replace").rstrip("\r")
    return next(csv.reader([first], delimiter=delim), [])


def _id_columns(names: list[str], columns: dict[str, Any], path: str) -> list[str]:
    """The header's query and item columns (as split_table will pick them)."""
    out = []
    for role in ("query", "item"):
        try:
            c = pick_column(names, role, columns.get(f"{role}_col"), False, path)
        except InvalidParameterError:
            c = None  # reported by split_table, with the table's columns
        if c is not None and c not in out and names.count(c) == 1:
            out.append(c)
    return out


def _value_columns(names: list[str], columns: dict[str, Any], path: str) -> list[str]:
    """The header's label, score and rank columns (as split_table will pick them)."""
    out = []
    for role in ("label", "score", "rank"):
        try:
            c = pick_column(names, role, columns.get(f"{role}_col"), False, path)
        except InvalidParameterError:
            c = None  # reported by split_table, with the table's columns
        if c is not None and c not in out:
            out.append(c)
    return out


def _int_if_canonical(col: Any) -> Any:
    """Text ids that are all plain integers (no sign, no leading zero) become int64, as JSON would give."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(col) == 0:
        return col
    plain = pc.match_substring_regex(col, r"^(0|-?[1-9][0-9]{0,17})$")
    if pc.all(plain).as_py():
        return pc.cast(col, pa.int64())
    return col


def _read_json(data: bytes, path: str) -> Any:
    text = utf8_text(data, path)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(f"invalid JSON: {exc.msg} (column {exc.colno})", path=path, line=exc.lineno) from None
    except RecursionError:
        raise FormatError("invalid JSON: nested too deeply", path=path) from None
    except ValueError as exc:  # a number too long to read (Python's limit on integer digits)
        raise FormatError(f"invalid JSON: {_one_line(exc)}", path=path) from None
    if isinstance(obj, list):
        import pyarrow as pa

        bad = next((i for i, r in enumerate(obj) if not isinstance(r, dict)), None)
        if bad is not None:
            raise FormatError(f"a JSON list must hold records {{column: value}}; element {bad} is "
                              f"{type(obj[bad]).__name__} {_short(obj[bad])}", path=path)
        try:
            return pa.Table.from_pylist(obj)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError) as exc:
            raise FormatError(f"cannot read the JSON records as a table: {_one_line(exc)}", path=path) from None
    if isinstance(obj, dict):
        return obj
    raise FormatError("JSON must be {query: {item: value}} or a list of records", path=path)


def _short(x: Any) -> str:
    t = repr(x)
    return t if len(t) <= 60 else t[:57] + "..."


def read_arrow_table(path: str | os.PathLike[str], format: str | None = None) -> Any:
    """A CSV, TSV, Parquet or JSON Lines file as an Arrow table (every column, as the table readers read it)."""
    data = open_bytes(Path(path), mapped=True)
    fmt = _check_format(format) or detect_format(Path(path), data[:65536])
    if fmt not in ("csv", "tsv", "parquet", "jsonl"):
        raise InputError(f"{path}: a {fmt} file is not a table (CSV, TSV, Parquet or JSON Lines).")
    return _read_table(data, str(path), fmt)


def read_records(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    groups: str | os.PathLike[str] | None = None,
    need: str = "both",
    missing: str = "error",
    **columns: Any,
) -> Records:
    """Read a file into :class:`~ranklens.records.Records`: every reader goes through here.

    Parameters
    ----------
    path : str or path
        The file (gzip allowed).
    format : str, optional
        One of :data:`FORMATS`; detected when omitted.
    groups : path, optional
        Group sizes for a LETOR file without ``qid:`` (default: a ``.query``
        or ``.group`` file beside it).
    need : {"judgments", "rankings", "both"}
        The role of the file: a TREC file is read as qrels or as a run by
        it, and a table must have the columns of that role ("both": a long
        table holding the relevance and the score or rank columns).
    missing : {"error", "exclude"}
        A missing label, score or rank in a table (an empty CSV cell, a JSON ``null``, a null of Parquet) or a
        ``{query: {item: value}}`` JSON: refused (default), or its row left out of that side and counted
        (:data:`ranklens._input.validate.MISSING`).
    **columns
        ``query_col=``, ``item_col=``, ``score_col=``, ``rank_col=``,
        ``label_col=`` for tables.

    Examples
    --------
    >>> import tempfile, os
    >>> from ranklens.io import read_records
    >>> p = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(p, "w").write("query,item,relevance,score\\nq1,d1,2,0.5\\nq1,d2,,0.7\\n")
    >>> rec = read_records(p, missing="exclude")
    >>> rec.judgments().label.tolist(), rec.rankings().score.tolist(), rec.left_out[0].examples
    ([2.0], [0.5, 0.7], ('query q1 item d2',))
    """
    p = Path(path)
    data = open_bytes(p, mapped=True)
    fmt = _check_format(format) or detect_format(p, data[:65536])
    src = str(path)
    if need == "both" and fmt not in ("csv", "tsv", "parquet", "jsonl", "json"):
        raise InputError(f"{path}: a {fmt} file holds either judgments or a ranking, not both.")
    if fmt == "trec":
        return read_trec_qrels(data, src) if need == "judgments" else read_trec_run(data, src)
    if fmt == "svmlight":
        if need == "rankings":
            raise InputError(f"{src}: a LETOR file holds labels, not a ranking; give it as the judgments and the "
                             "predictions file as the run.")
        return read_svmlight(bytes(data), src, groups, open_bytes)
    if fmt == "predictions":
        if need == "judgments":
            raise InputError(f"{src}: a file of bare scores has no relevance labels; it can only be the run.")
        return read_predictions(bytes(data), src)
    obj = _read_json(bytes(data), src) if fmt == "json" else _read_table(data, src, fmt, columns)
    if isinstance(obj, dict):
        if need == "both":
            raise InputError(
                f"{path}: a {{query: {{item: value}}}} JSON holds either judgments or a ranking, not both.")
        return nested_records(obj, need, source=src, missing=missing)
    return table_records(obj, need=need, source=src, locate=_row_locator(data, fmt), missing=missing, **columns)


def read_judgments(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    groups: str | os.PathLike[str] | None = None,
    **columns: Any,
) -> Judgments:
    """Read judgments from a file.

    Parameters
    ----------
    path : str or path
        The file (gzip allowed).
    format : str, optional
        One of :data:`FORMATS`; detected when omitted.
    groups : path, optional
        Group sizes for a LETOR file without ``qid:`` (default: a ``.query``
        or ``.group`` file beside it).
    **columns
        ``query_col=``, ``item_col=``, ``label_col=`` for tables.

    Examples
    --------
    >>> import tempfile, os
    >>> from ranklens import read_judgments
    >>> p = os.path.join(tempfile.mkdtemp(), "qrels.txt")
    >>> _ = open(p, "w").write("q1 0 d1 2\\nq1 0 d2 0\\n")
    >>> read_judgments(p).label.tolist()
    [2.0, 0.0]
    """
    return read_records(path, format=format, groups=groups, need="judgments", **columns).judgments()


def read_trec_eval_judgments(path: str | os.PathLike[str]) -> tuple[Judgments, str | None]:
    """A TREC qrels file as trec_eval 10 reads it: each label is C's ``atol`` of its text (``1.5`` is 1, ``2x``
    is 2, ``x`` is 0), for ``ranklens trec_eval``. Returns the judgments and, when a label is read as another
    number than the one written, a line saying so (how many, and the first).

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "qrels")
    >>> _ = open(p, "w").write("q1 0 d1 1.5\\nq1 0 d2 0\\n")
    >>> j, note = read_trec_eval_judgments(p)
    >>> j.label.tolist(), note.endswith("line 1: '1.5' as 1")
    ([1.0, 0.0], True)
    """
    records, note = read_trec_eval_qrels(open_bytes(Path(path), mapped=True), str(path))
    return records.judgments(), note


def read_trec_eval_run(path: str | os.PathLike[str]) -> Rankings:
    """A TREC run for ``ranklens trec_eval``: as :func:`read_rankings` reads it, each column held in arrays of
    its own (the query ids can be freed once they are codes; less memory, a little more time)."""
    return read_trec_run(open_bytes(Path(path), mapped=True), str(path), compact=True).rankings()


def read_rankings(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    **columns: Any,
) -> Rankings:
    """Read ranked lists from a file (TREC run, predictions, or a table).

    Examples
    --------
    >>> import tempfile, os
    >>> from ranklens import read_rankings
    >>> p = os.path.join(tempfile.mkdtemp(), "run.txt")
    >>> _ = open(p, "w").write("q1 Q0 d1 1 2.5 sys\\nq1 Q0 d2 2 1.5 sys\\n")
    >>> read_rankings(p).score.tolist()
    [2.5, 1.5]
    """
    return read_records(path, format=format, need="rankings", **columns).rankings()


def read_table(path: str | os.PathLike[str], *, format: str | None = None,
               **columns: Any) -> tuple[Judgments | None, Rankings | None]:
    """Read a long table that may hold both the relevance and the score/rank columns."""
    rec = read_records(path, format=format, need="both", **columns)
    return (rec.judgments() if rec.has_labels else None), (rec.rankings() if rec.has_order else None)


def _row_locator(data: Any, fmt: str) -> Any:
    """``locate(row)`` for a table read from a text file: the row's line and text (error path only;
    CSV and TSV rows follow a header line, JSON Lines rows skip blank lines)."""
    if fmt not in ("csv", "tsv", "jsonl"):
        return None

    def locate(row: int) -> tuple[str, int | None, str | None]:
        lines = utf8_text(bytes(data), "").replace("\r\n", "\n").replace("\r", "\n").split("\n")
        nums = [n for n, ln in enumerate(lines) if ln.strip()]
        k = row + (1 if fmt != "jsonl" else 0)
        if k < len(nums):
            return f"line {nums[k] + 1}", nums[k] + 1, lines[nums[k]]
        return f"row {row}", None, None

    return locate


def _check_format(fmt: str | None) -> str | None:
    if fmt is None:
        return None
    f = fmt.lower()
    if f in ("qrels", "run", "trec_run", "trec_qrels"):
        f = "trec"
    if f in ("letor", "libsvm"):
        f = "svmlight"
    if f == "ndjson":
        f = "jsonl"
    if f not in FORMATS:
        raise InvalidParameterError(f"`format` must be one of {', '.join(FORMATS)}; got {fmt!r}.")
    return f


