"""Readers: files into :class:`~ranklens.data.Judgments` and :class:`~ranklens.data.Rankings`.

Formats (``format=`` or detected from the extension and the first lines):

``trec``        qrels ``qid iter item label`` or run ``qid Q0 item rank score [tag]``
                (``#`` lines are comments; a ``#`` inside an id is part of it)
``svmlight``    LETOR ``label qid:Q 1:v 2:v ... [# comment]`` for judgments; without
                ``qid:`` the groups come from a ``.query``/``.group`` file beside it
``predictions`` one score per line, aligned with the judgment rows (LETOR)
``csv``/``tsv`` a long table with a header (see :data:`ranklens.data.COLUMN_NAMES`)
``parquet``     a long table
``jsonl``       JSON Lines records of a long table
``json``        ``{query: {item: value}}`` or a list of records

Gzip-compressed files are read transparently. Every parse error names the
file, the line number and the offending text.
"""

from __future__ import annotations

import gzip
import json
import mmap
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ._ids import StrIds, arrow_to_numpy
from .data import Judgments, Rankings, split_table
from .errors import FormatError, InputError, InvalidParameterError

__all__ = ["FORMATS", "detect_format", "read_judgments", "read_rankings"]

FORMATS = ("trec", "svmlight", "predictions", "csv", "tsv", "parquet", "jsonl", "json")


#: Uncompressed files at least this large are mapped into memory instead of read: the pages come
#: from the page cache in one call (MAP_POPULATE) rather than being copied into fresh memory.
MAP_MIN_BYTES = 1 << 20


def _map_file(path: Path) -> mmap.mmap | None:
    """The file mapped read-only, or None (small, not a regular file, compressed, or mmap refused)."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if not (st.st_mode & 0o170000 == 0o100000 and st.st_size >= MAP_MIN_BYTES):
                return None
            if os.name == "posix":
                m = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0),
                              prot=mmap.PROT_READ)
            else:
                m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None  # read_bytes below gives the error, if any
    if m[:2] == b"\x1f\x8b":
        m.close()
        return None
    return m


def _open_bytes(path: Path, mapped: bool = False) -> bytes | mmap.mmap:
    """The bytes of a file (gzip decompressed); with ``mapped``, large plain files as a read-only
    ``mmap`` (which supports ``len``, slicing and the buffer protocol, as bytes do)."""
    if mapped:
        m = _map_file(path)
        if m is not None:
            return m
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file.") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a file.") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied.") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise FormatError(f"corrupt gzip data ({exc})", path=str(path)) from None
    return data


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
        raw = _open_bytes(p, mapped=True)
        head = raw[:65536]
    if head[:4] == b"PAR1":
        return "parquet"
    text = head.decode("utf-8", errors="replace")
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
        toks = s.split()
        if len(toks) >= 2 and (toks[1].startswith("qid:") or _is_feature(toks[1])) and _is_float(toks[0]):
            return "svmlight"
        if len(toks) == 1 and _is_float(toks[0]):
            return "predictions"
        if len(toks) >= 4:
            # a TREC line has a number in its relevance (4 fields) or score (5+) field; a table's header has not
            if _is_float(toks[3] if len(toks) == 4 else toks[4]):
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
    return bool(sep) and a.isdigit() and _is_float(b)


def _is_float(tok: str) -> bool:
    try:
        float(tok)
    except ValueError:
        return False
    return True


def _lines(data: bytes, path: str):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise FormatError(f"not UTF-8 text (byte {exc.start})", path=path, line=line) from None
    return text.splitlines()


def _split(data: bytes, path: str, max_fields: int) -> tuple[np.ndarray, ...]:
    """Fields of every data line (compiled; no Python object per line)."""
    from ._kernels.api import split_fields

    buf = np.frombuffer(data, dtype=np.uint8)
    if buf.size == 0:
        buf = np.zeros(1, np.uint8)
    return (buf, *split_fields(buf, max_fields))


def _line_text(buf: np.ndarray, ls: np.ndarray, le: np.ndarray, i: int) -> str:
    return bytes(buf[ls[i]:le[i]]).decode("utf-8", errors="replace")


def _str_column(buf: np.ndarray, st: np.ndarray, en: np.ndarray, c: int, path: str, ln: np.ndarray) -> Any:
    """Column ``c`` as an Arrow large_string array (UTF-8 checked)."""
    import pyarrow as pa

    from ._kernels.api import gather

    data, offs = gather(buf, st[:, c], en[:, c])
    arr = pa.LargeStringArray.from_buffers(len(offs) - 1, pa.py_buffer(offs.astype(np.int64)), pa.py_buffer(data))
    try:
        arr.validate(full=True)
    except pa.ArrowInvalid:
        for i in range(len(offs) - 1):  # error path only: find the line
            try:
                bytes(data[offs[i]:offs[i + 1]]).decode("utf-8")
            except UnicodeDecodeError:
                raise FormatError("not UTF-8 text", path=path, line=int(ln[i])) from None
    return arr


def _finish_numbers(vals: np.ndarray, ok: np.ndarray, buf: np.ndarray,
                    spans: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], what: str, path: str,
                    error: Callable[[str, int], FormatError], finite: bool) -> np.ndarray:
    """Complete a column parsed by the compiled parser (``vals`` where ``ok``): the other rows (more
    than 19 significant digits, subnormal or overflowing values, inf/nan, bad text) through Arrow's
    parser; ``spans(rows)`` gives their byte spans, ``error(message, row)`` the error to raise."""
    from ._kernels.api import gather

    rest = np.flatnonzero(~ok)
    if rest.size:
        import pyarrow as pa
        import pyarrow.compute as pc

        st, en = spans(rest)
        data, offs = gather(buf, st, en)
        arr = pa.LargeStringArray.from_buffers(rest.size, pa.py_buffer(offs), pa.py_buffer(data))
        try:
            vals[rest] = arrow_to_numpy(pc.cast(arr, pa.float64()))
        except pa.ArrowInvalid:
            for x, r in enumerate(rest):  # error path only
                tok = bytes(buf[st[x]:en[x]]).decode("utf-8", errors="replace")
                if not _is_float(tok):
                    raise error(f"{what} {tok!r} is not a number", int(r)) from None
            raise FormatError(f"cannot read the {what} column", path=path) from None  # pragma: no cover
    if finite:
        bad = ~np.isfinite(vals)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            st, en = spans(np.array([i]))
            tok = bytes(buf[st[0]:en[0]]).decode("utf-8", errors="replace")
            raise error(f"{what} is {tok}; scores and labels must be finite", i)
    return vals


def _num_column(buf: np.ndarray, st: np.ndarray, en: np.ndarray, c: int, what: str, path: str,
                ln: np.ndarray, ls: np.ndarray, le: np.ndarray, finite: bool = True) -> np.ndarray:
    """Column ``c`` of split lines parsed as float64, correctly rounded; errors name the line."""
    from ._kernels.api import parse_floats

    vals, ok = parse_floats(buf, st[:, c], en[:, c])
    return _finish_numbers(
        vals, ok, buf, lambda rows: (st[rows, c], en[rows, c]), what, path,
        lambda msg, i: FormatError(msg, path=path, line=int(ln[i]), text=_line_text(buf, ls, le, i)), finite)


class _Columns:
    """The data lines of a TREC file scanned into columns (:func:`_kernels.api.scan_columns`)."""

    def __init__(self, data: bytes | mmap.mmap, path: str, fields: dict[int, str]):
        from ._kernels.api import scan_columns

        self.path = path
        self.buf = np.frombuffer(data, dtype=np.uint8) if len(data) else np.full(1, 10, np.uint8)
        kind = np.zeros(max(fields) + 1, np.int64)
        col = np.zeros_like(kind)
        self.str_col: dict[int, int] = {}
        self.num_col: dict[int, int] = {}
        for f, what in sorted(fields.items()):
            table = self.str_col if what == "str" else self.num_col
            kind[f] = 1 if what == "str" else 2
            col[f] = table[f] = len(table)
        (self.lstart, self.nf, self.soffs, self.sdata, self.nvals,
         self.nok) = scan_columns(self.buf, kind, col, len(self.str_col), len(self.num_col))

    def __len__(self) -> int:
        return int(self.lstart.shape[0])

    def line_no(self, i: int) -> int:
        return int(np.count_nonzero(self.buf[:self.lstart[i]] == 10)) + 1

    def line_text(self, i: int) -> str:
        s = int(self.lstart[i])
        nl = np.flatnonzero(self.buf[s:] == 10)
        e = s + int(nl[0]) if nl.size else self.buf.shape[0]
        return bytes(self.buf[s:e]).decode("utf-8", errors="replace")

    def error(self, message: str, i: int) -> FormatError:
        return FormatError(message, path=self.path, line=self.line_no(i), text=self.line_text(i))

    def strings(self, f: int) -> StrIds:
        """Field ``f`` as :class:`~ranklens.data.StrIds` over the scanned bytes (UTF-8 checked: ASCII by
        numpy, anything else by Arrow)."""
        j = self.str_col[f]
        offs = self.soffs[j]
        ids = StrIds(offs, self.sdata[j, :int(offs[-1])])
        if not (ids.data >= 128).any():
            return ids
        import pyarrow as pa

        try:
            ids.to_arrow().validate(full=True)
        except pa.ArrowInvalid:
            data = ids.data
            for i in range(offs.shape[0] - 1):  # error path only: find the line
                try:
                    bytes(data[offs[i]:offs[i + 1]]).decode("utf-8")
                except UnicodeDecodeError:
                    raise FormatError("not UTF-8 text", path=self.path, line=self.line_no(i)) from None
        return ids

    def numbers(self, f: int, what: str, finite: bool = True) -> np.ndarray:
        """Field ``f`` as float64, correctly rounded (:func:`_finish_numbers`)."""
        from ._kernels.api import field_spans

        j = self.num_col[f]
        return _finish_numbers(self.nvals[j], self.nok[j], self.buf,
                               lambda rows: field_spans(self.buf, self.lstart[rows], f), what, self.path,
                               self.error, finite)


def _read_trec_qrels(data: bytes | mmap.mmap, path: str) -> Judgments:
    c = _Columns(data, path, {0: "str", 2: "str", 3: "num"})
    if len(c) == 0:
        raise InputError(f"{path}: no judgments in the file.")
    bad = c.nf != 4
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        # trec_eval refuses such lines too ("Malformed line"); a run given as judgments lands here
        hint = " (this looks like a run line: give the judgments first, the run second)" if c.nf[i] >= 6 else ""
        raise c.error(f"expected 4 fields 'query iteration item relevance', got {c.nf[i]}{hint}", i)
    labels = c.numbers(3, "relevance")
    return Judgments(c.strings(0), c.strings(2), labels, source=path)


def _read_trec_run(data: bytes | mmap.mmap, path: str) -> Rankings:
    # the rank column is not read: the score orders the list, and trec_eval ignores the rank too
    c = _Columns(data, path, {0: "str", 2: "str", 4: "num"})
    if len(c) == 0:
        raise InputError(f"{path}: no ranked items in the file.")
    bad = c.nf < 5
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise c.error(f"expected 6 fields 'query Q0 item rank score tag', got {c.nf[i]}", i)
    return Rankings(c.strings(0), c.strings(2), score=c.numbers(4, "score"), source=path)


def _group_file(path: Path) -> Path | None:
    for suffix in (".query", ".group", ".qid"):
        cand = Path(str(path) + suffix)
        if cand.exists():
            return cand
        cand = path.with_suffix(suffix)
        if cand.exists():
            return cand
    return None


def _read_svmlight(data: bytes, path: str, groups: str | os.PathLike[str] | None) -> Judgments:
    buf, st, en, nf, ln, ls, le = _split(data, path, 2)
    # a line whose first field starts a comment is no data
    keep = buf[st[:, 0]] != ord("#")
    if not keep.all():
        st, en, nf, ln, ls, le = st[keep], en[keep], nf[keep], ln[keep], ls[keep], le[keep]
    if nf.size == 0:
        raise InputError(f"{path}: no rows in the file.")
    labels = _num_column(buf, st, en, 0, "label", path, ln, ls, le)
    n = labels.shape[0]
    s1 = st[:, 1]
    has2 = (nf >= 2) & (en[:, 1] - s1 >= 4)
    s1c = np.where(has2, s1, 0)
    is_qid = has2 & (buf[s1c] == ord("q")) & (buf[s1c + 1] == ord("i")) & (buf[s1c + 2] == ord("d")) & (
        buf[s1c + 3] == ord(":"))
    if is_qid.any():
        if not is_qid.all():
            i = int(np.flatnonzero(~is_qid)[0])
            raise FormatError("line without qid: in a file that uses qid:", path=path, line=int(ln[i]),
                              text=_line_text(buf, ls, le, i))
        empty = en[:, 1] - s1 == 4
        if empty.any():
            i = int(np.flatnonzero(empty)[0])
            raise FormatError("empty qid:", path=path, line=int(ln[i]), text=_line_text(buf, ls, le, i))
        st2 = st.copy()
        st2[:, 1] += 4
        qid_arr: Any = _str_column(buf, st2, en, 1, path, ln)
    else:
        first = buf[np.where(nf >= 2, s1, 0)]
        bad = (nf >= 2) & (first != ord("#")) & ((first < ord("0")) | (first > ord("9")))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            tok = bytes(buf[s1[i]:en[i, 1]]).decode("utf-8", "replace")
            raise FormatError(f"expected 'qid:Q' or 'index:value', got {tok!r}", path=path, line=int(ln[i]),
                              text=_line_text(buf, ls, le, i))
        gpath = Path(groups) if groups is not None else _group_file(Path(path))
        if gpath is None:
            raise FormatError(
                "no qid: fields and no group file (.query or .group beside it); pass groups=FILE", path=path
            )
        sizes = []
        for gl, gline in enumerate(_lines(_open_bytes(gpath), str(gpath)), 1):
            if not gline.strip():
                continue
            try:
                sizes.append(int(gline.strip()))
            except ValueError:
                raise FormatError("group size is not an integer", path=str(gpath), line=gl, text=gline) from None
        if sum(sizes) != n:
            raise InputError(f"{gpath}: group sizes add up to {sum(sizes)} but {path} has {n} rows.")
        qid_arr = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    # items are the row numbers of the file (0-based), so predictions align by row
    return Judgments(qid_arr, np.arange(n, dtype=np.int64), labels, source=path)


def _read_predictions(data: bytes, path: str) -> Rankings:
    buf, st, en, nf, ln, ls, le = _split(data, path, 2)
    if nf.size == 0:
        raise InputError(f"{path}: no scores in the file.")
    bad = nf != 1
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise FormatError("expected one score per line", path=path, line=int(ln[i]), text=_line_text(buf, ls, le, i))
    return Rankings(None, None, score=_num_column(buf, st, en, 0, "score", path, ln, ls, le), source=path)


def _read_table(data: bytes | mmap.mmap, path: str, fmt: str, columns: dict[str, Any] | None = None) -> Any:
    import pyarrow as pa

    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            # ParquetFile rather than read_table: read_table imports pyarrow.dataset (a quarter second)
            return pq.ParquetFile(pa.BufferReader(data)).read()
        if fmt in ("csv", "tsv"):
            import pyarrow.csv as pcsv

            delim = "\t" if fmt == "tsv" else ","
            # id columns are read as text, so "001" keeps its zeros and "NA" stays an id
            ids = _id_columns(_csv_header(data, delim), columns or {}, path)
            table = pcsv.read_csv(
                pa.BufferReader(data),
                parse_options=pcsv.ParseOptions(delimiter=delim),
                convert_options=pcsv.ConvertOptions(column_types={c: pa.string() for c in ids},
                                                    strings_can_be_null=False),
            )
            for c in ids:
                table = table.set_column(table.schema.get_field_index(c), c, _int_if_canonical(table.column(c)))
            return table
        if fmt == "jsonl":
            import pyarrow.json as pjson

            return pjson.read_json(pa.BufferReader(data))
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError) as exc:
        raise FormatError(f"cannot read as {fmt}: {exc}", path=path) from None
    raise AssertionError(fmt)


def _csv_header(data: bytes | mmap.mmap, delim: str) -> list[str]:
    import csv

    nl = data.find(b"\n")
    first = bytes(data[:nl if nl >= 0 else len(data)]).decode("utf-8", errors="replace").lstrip("\ufeff").rstrip("\r")
    return next(csv.reader([first], delimiter=delim), [])


def _id_columns(names: list[str], columns: dict[str, Any], path: str) -> list[str]:
    """The header's query and item columns (as split_table will pick them)."""
    from .data import _pick

    out = []
    for role in ("query", "item"):
        try:
            c = _pick(names, role, columns.get(f"{role}_col"), False, path)
        except InvalidParameterError:
            c = None  # reported by split_table, with the table's columns
        if c is not None and c not in out and names.count(c) == 1:
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
    try:
        obj = json.loads(data.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        raise FormatError(f"invalid JSON: {exc}", path=path, line=line) from None
    if isinstance(obj, list):
        import pyarrow as pa

        return pa.Table.from_pylist(obj)
    if isinstance(obj, dict):
        return obj
    raise FormatError("JSON must be {query: {item: value}} or a list of records", path=path)


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
    p = Path(path)
    data = _open_bytes(p, mapped=True)
    fmt = _check_format(format) or detect_format(p, data[:65536])
    src = str(path)
    if fmt == "trec":
        return _read_trec_qrels(data, src)
    if fmt in ("svmlight", "json"):
        data = bytes(data)
    if fmt == "svmlight":
        return _read_svmlight(data, src, groups)
    if fmt == "predictions":
        raise InputError(f"{src}: a file of bare scores has no relevance labels; it can only be the run.")
    obj = _read_json(data, src) if fmt == "json" else _read_table(data, src, fmt, columns)
    if isinstance(obj, dict):
        from .data import as_judgments

        j = as_judgments(obj)
        return Judgments(j.qid, j.item, j.label, source=src)
    j, _ = split_table(obj, need="judgments", source=src, **columns)
    assert j is not None
    return j


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
    p = Path(path)
    data = _open_bytes(p, mapped=True)
    fmt = _check_format(format) or detect_format(p, data[:65536])
    src = str(path)
    if fmt == "trec":
        return _read_trec_run(data, src)
    if fmt in ("predictions", "json"):
        data = bytes(data)
    if fmt == "predictions":
        return _read_predictions(data, src)
    if fmt == "svmlight":
        raise InputError(f"{src}: a LETOR file holds labels, not a ranking; give it as the judgments and the "
                         "predictions file as the run.")
    obj = _read_json(data, src) if fmt == "json" else _read_table(data, src, fmt, columns)
    if isinstance(obj, dict):
        from .data import as_rankings

        r = as_rankings(obj)
        return Rankings(r.qid, r.item, score=r.score, source=src)
    _, r = split_table(obj, need="rankings", source=src, **columns)
    assert r is not None
    return r


def read_table(path: str | os.PathLike[str], *, format: str | None = None, **columns: Any) -> tuple[Judgments | None, Rankings | None]:
    """Read a long table that may hold both the relevance and the score/rank columns."""
    p = Path(path)
    data = _open_bytes(p, mapped=True)
    fmt = _check_format(format) or detect_format(p, data[:65536])
    if fmt == "json":
        data = bytes(data)
    if fmt not in ("csv", "tsv", "parquet", "jsonl", "json"):
        raise InputError(f"{path}: a {fmt} file holds either judgments or a ranking, not both.")
    obj = _read_json(data, str(path)) if fmt == "json" else _read_table(data, str(path), fmt, columns)
    if isinstance(obj, dict):
        raise InputError(f"{path}: a {{query: {{item: value}}}} JSON holds either judgments or a ranking, not both.")
    return split_table(obj, need="both", source=str(path), **columns)


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


