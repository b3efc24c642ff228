"""Logs of served items (click logs, interleaving logs, experiment events): one reader for every form.

A log is one row per shown item. :class:`LogTable` takes it as a pandas, polars (eager or lazy) or pyarrow table,
a dict of columns (name -> 1-D array or list), or a file (:func:`read_table_file`: Parquet, CSV, TSV, JSON Lines,
by the name's suffix) and hands out one column at a time, checked by the same rules whatever the form:

* columns are found by name (:meth:`LogTable.find`): the name given (exactly, else ignoring case), or the first
  of a role's usual names present; a missing one is an error naming the role, the log and its columns;
* id columns (:meth:`LogTable.ids`) are numbered by the id machinery of :mod:`ranklens._input.ids`, nothing
  missing, no nested values;
* numeric columns (:meth:`LogTable.numbers`) go through :func:`ranklens._input.validate.numeric` (numbers, not
  text) and the missing / NaN / infinity rule of :func:`ranklens._input.validate.check_values`;
* an error names the log (the file, or the form), the column and the row (0-based, in the order given).

:mod:`ranklens.online` (interleaving logs, A/B events) and :mod:`ranklens.counterfactual` (click logs) read
their logs through this module only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import FormatError, InputError, InvalidParameterError
from .factorize import factorize_parts
from .ids import ids_to_numpy
from .tables import table_kind
from .validate import is_number, numeric

__all__ = ["FILE_FORMATS", "SOURCE_KEY", "LogTable", "file_format", "named", "read_table_file", "shown", "source_name"]

#: File formats a log is read from, by the name's suffix (``.gz`` ignored).
FILE_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl",
                ".ndjson": "jsonl", ".json": "jsonl"}


def shown(value: Any) -> str:
    """A value for a message: a plain Python repr (a whole float as an integer).

    >>> shown(np.float64(2.0)), shown(np.int64(3)), shown("x")
    ('2', '3', "'x'")
    """
    x = value.item() if isinstance(value, np.generic) else value
    if isinstance(x, float) and x.is_integer():
        return repr(int(x))
    return repr(x)


def file_format(path: str, fmt: str | None = None) -> str:
    """``fmt`` if given (one of :data:`FILE_FORMATS`' values), else the format of the name's suffix.

    >>> file_format("log.csv.gz"), file_format("x.data", "tsv")
    ('csv', 'tsv')
    """
    kinds = sorted(set(FILE_FORMATS.values()))
    if fmt is not None:
        if fmt not in kinds:
            raise InvalidParameterError(f"a log's format is one of {', '.join(kinds)}; got {fmt!r}.")
        return fmt
    low = os.fspath(path).lower().removesuffix(".gz")
    for suffix, kind in FILE_FORMATS.items():
        if low.endswith(suffix):
            return kind
    raise InvalidParameterError(f"{path}: cannot tell the log's format from its name; name it .parquet, .csv, .tsv "
                                f"or .jsonl (or pass its format: {', '.join(kinds)}).")


#: The schema metadata key under which a table read from a file keeps the file's name (the ``where`` of its messages,
#: when the table is handed on: :class:`LogTable`, the online experiments' events); Arrow keeps it through ``filter``.
SOURCE_KEY = b"ranklens.source"


def source_name(table: Any, default: str) -> str:
    """The file(s) an Arrow table was read from (:data:`SOURCE_KEY`), else ``default``.

    >>> import pyarrow as pa
    >>> source_name(pa.table({"a": [1]}), "events"), source_name(named(pa.table({"a": [1]}), "x.csv"), "events")
    ('events', 'x.csv')
    """
    meta = getattr(getattr(table, "schema", None), "metadata", None) or {}
    return meta[SOURCE_KEY].decode() if SOURCE_KEY in meta else default


def named(table: Any, name: str) -> Any:
    """The Arrow table with ``name`` as the source its messages name (:func:`source_name`)."""
    return table.replace_schema_metadata({**(table.schema.metadata or {}), SOURCE_KEY: name.encode()})


def read_table_file(path: str | os.PathLike[str], fmt: str | None = None) -> Any:
    """A log file as a pyarrow Table (named by the path: :func:`source_name`); ids and labels read as they are
    written, only an empty CSV cell missing; a file that cannot be parsed is a :class:`~ranklens.errors.FormatError`
    naming it."""
    p = os.fspath(path)
    return named(_read_table_file(p, fmt), p)


def _read_table_file(p: str, fmt: str | None) -> Any:
    import pyarrow as pa

    kind = file_format(p, fmt)
    if not os.path.isfile(p):
        raise FileNotFoundError(2, "No such file or directory" if not os.path.exists(p) else "Not a file", p)
    try:
        if kind == "parquet":
            import pyarrow.parquet as pq

            return pq.ParquetFile(p).read()
        if kind == "jsonl":
            import pyarrow.json as pjson

            return pjson.read_json(p)
        import pyarrow.csv as pcsv

        return pcsv.read_csv(p, parse_options=pcsv.ParseOptions(delimiter="\t" if kind == "tsv" else ","),
                             convert_options=pcsv.ConvertOptions(null_values=[""], strings_can_be_null=False))
    except (pa.ArrowInvalid, ValueError, OSError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise FormatError(f"cannot read as {kind}: {' '.join(str(exc).split())[:200]}", path=p) from None


class LogTable:
    """A log, one column at a time, from any form (see the module).

    Parameters
    ----------
    obj : table, dict of columns, or path
    what : str
        What the log is, for messages (``"interleaving log"``, ``"click log"``...).

    Examples
    --------
    >>> t = LogTable({"session": [1, 1, 2], "click": [0, 1, 0]}, "click log")
    >>> t.where, t.find("session", None, ("group_id", "session")), t.find("click", "Click", ())
    ('the click log (dict of columns)', 'session', 'click')
    >>> t.numbers("click", "click").tolist()
    [0, 1, 0]
    >>> t.ids("session", "session")[0].tolist()
    [0, 0, 1]
    """

    def __init__(self, obj: Any, what: str = "log"):
        path = None
        if isinstance(obj, (str, os.PathLike)):
            path = os.fspath(obj)
            obj = read_table_file(path)
        kind = table_kind(obj)
        if kind is None and isinstance(obj, Mapping):
            kind = "dict"
        if kind is None:
            raise InvalidParameterError(
                f"the {what} must be a pandas, polars or pyarrow table or a dict of columns, or a file path; "
                f"got {type(obj).__name__}.")
        if kind == "polars" and type(obj).__name__ == "LazyFrame":
            obj = obj.collect()
        if kind == "arrow" and type(obj).__name__ == "RecordBatch":
            import pyarrow as pa

            obj = pa.Table.from_batches([obj])
        self.obj, self.kind = obj, kind
        form = "dict of columns" if kind == "dict" else kind + " table"
        self.where = path or source_name(obj, f"the {what} ({form})")
        if kind in ("dict", "pandas"):
            self.keys = {str(c): c for c in (obj if kind == "dict" else obj.columns)}
            self.names = list(self.keys)
        elif kind == "polars":
            self.names = list(obj.columns)
        else:
            self.names = list(obj.schema.names)
        self.rows = -1

    @property
    def num_rows(self) -> int:
        """The number of rows (of the first column, for a dict of columns)."""
        if self.kind == "dict":
            return len(self.obj[self.keys[self.names[0]]]) if self.names else 0
        if self.kind == "polars":
            return int(self.obj.height)
        return int(self.obj.num_rows) if self.kind == "arrow" else len(self.obj)

    # -- columns by name ---------------------------------------------------------------------------------------
    def has(self, col: str) -> bool:
        return col in self.names

    def need(self, col: str, role: str) -> None:
        if col not in self.names:
            raise InvalidParameterError(f"column {col!r} (the {role} column) is not in {self.where}; "
                                        f"columns: {self.names}.")

    def find(self, role: str, given: str | None, defaults: Sequence[str], required: bool = True,
             hint: str | None = None) -> str | None:
        """The column of ``role``: ``given`` (exactly, else the one column equal to it ignoring case; it must
        exist), else the first of ``defaults`` present (ignoring case); None when none is and not ``required``."""
        lower: dict[str, list[str]] = {}
        for n in self.names:
            lower.setdefault(n.lower(), []).append(n)
        if given is not None:
            if given in self.names:
                return given
            same = lower.get(str(given).lower(), [])
            if len(same) == 1:
                return same[0]
            self.need(given, role)
        for cand in defaults:
            if len(lower.get(cand.lower(), [])) == 1:
                return lower[cand.lower()][0]
        if required:
            named = f"name it {' or '.join(defaults[:3])}, or " if defaults else ""
            raise InvalidParameterError(f"no {role} column in {self.where} (columns: {', '.join(self.names)}); "
                                        f"{named}pass `{hint or role + '_col'}=`.")
        return None

    # -- messages ----------------------------------------------------------------------------------------------
    def fail(self, col: str, row: int, msg: str) -> InputError:
        """The error of a bad value: the log, the column, the row (counted from 0, as every row: docs/glossary.md),
        what is wrong."""
        return InputError(f"{self.where}, column {col!r}, row {row}: {msg}")

    def holds(self, col: str, row: int, value: Any, rule: str) -> InputError:
        """The error of a value that breaks ``rule``: the log, the column, the value, the row (0-based)."""
        return InputError(f"{self.where}: column {col!r} holds {shown(value)} at row {row}; {rule}")

    # -- raw columns -------------------------------------------------------------------------------------------
    def _length(self, col: str, n: int) -> None:
        if self.rows < 0:
            self.rows = n
        elif n != self.rows:
            raise InputError(f"{self.where}: column {col!r} has {n} values, the other columns {self.rows}.")

    def raw(self, col: str) -> tuple[Any, np.ndarray | None]:
        """The column as numpy (numbers or objects) or Arrow (ids, text, lists), and its missing rows (None:
        none)."""
        obj = self.obj
        if self.kind == "dict":
            a = obj[self.keys[col]]
            if _is_arrow(a):
                return self._arrow_raw(col, a)
            if not isinstance(a, np.ndarray):
                if isinstance(a, (list, tuple)) and any(isinstance(v, (list, tuple)) for v in a):
                    import pyarrow as pa  # a list of lists (labels per row): Arrow's list type

                    try:
                        return self._arrow_raw(col, pa.array(a))
                    except (pa.ArrowInvalid, pa.ArrowTypeError):
                        raise InputError(f"{self.where}: column {col!r} mixes lists and other values.") from None
                a = np.asarray(a)
            if a.ndim != 1:
                raise InputError(f"{self.where}: column {col!r} must be 1-D; got shape {a.shape}.")
            self._length(col, a.shape[0])
            if a.dtype.kind == "O":
                null = np.asarray(a == None) | np.asarray(a != a)  # noqa: E711 (element-wise: None, or NaN)
                return a, (null if null.any() else None)
            if a.dtype.kind == "f":
                null = np.isnan(a)
                return a, (null if null.any() else None)
            return a, None
        if self.kind == "pandas":
            s = obj[self.keys[col]]
            self._length(col, len(s))
            if s.dtype.kind in "iub":
                return s.to_numpy(), None
            null = s.isna().to_numpy()
            has_null = bool(null.any())
            if s.dtype.kind == "f":
                return s.to_numpy(), (null if has_null else None)
            import pyarrow as pa

            try:
                arr = pa.Array.from_pandas(s)
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                arr = s.to_numpy(dtype=object)
            return arr, (null if has_null else None)
        if self.kind == "polars":
            s = obj[col]
            self._length(col, len(s))
            n_null = s.null_count()
            return s.to_arrow(), (s.is_null().to_numpy() if n_null else None)
        return self._arrow_raw(col, obj.column(col))

    def _arrow_raw(self, col: str, arr: Any) -> tuple[Any, np.ndarray | None]:
        self._length(col, len(arr))
        if arr.null_count:
            import pyarrow.compute as pc

            return arr, np.asarray(pc.is_null(arr).to_numpy(zero_copy_only=False), dtype=bool)
        return arr, None

    def arrow(self, col: str, role: str) -> Any:
        """The column as one pyarrow Array (texts, lists, dictionaries as they are), nothing missing."""
        import pyarrow as pa

        self.need(col, role)
        raw, null = self.raw(col)
        if null is not None:
            row = int(np.flatnonzero(null)[0])
            raise self.fail(col, row, f"the {role} is missing ({int(null.sum())} such rows).")
        if isinstance(raw, np.ndarray):
            try:
                return pa.array(raw)
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                raise InputError(f"{self.where}: column {col!r} mixes values of different types.") from None
        if isinstance(raw, pa.ChunkedArray):
            return raw.combine_chunks() if raw.num_chunks != 1 else raw.chunk(0)
        return raw

    # -- checked columns ---------------------------------------------------------------------------------------
    def ids(self, col: str, role: str) -> tuple[np.ndarray, np.ndarray]:
        """Codes (per row, in order of first appearance) and the distinct values of an id column."""
        self.need(col, role)
        raw, null = self.raw(col)
        if null is not None:
            row = int(np.flatnonzero(null)[0])
            raise self.fail(col, row, f"the {role} is missing ({int(null.sum())} such rows).")
        return self.codes(raw, col, role)

    def codes(self, raw: Any, col: str, role: str) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`ids` of a column already read (:meth:`raw`)."""
        if _is_nested(raw):
            raise InputError(f"{self.where}: column {col!r} holds {raw.type} values; the {role} is one id per row.")
        try:
            (codes,), uniques, _ = factorize_parts([raw], what=f"column {col!r} in {self.where}")
        except InputError:
            raise
        except (TypeError, ValueError) as e:
            raise InputError(f"{self.where}: column {col!r} cannot be read as ids ({e}).") from None
        return np.asarray(codes), ids_to_numpy(uniques)

    def labels(self, col: str, values: tuple[Any, ...], role: str, hint: str = "") -> np.ndarray:
        """Per row, the index in ``values`` of a label column; an unknown or missing label refused."""
        self.need(col, role)
        raw, null = self.raw(col)
        if null is not None:
            row = int(np.flatnonzero(null)[0])
            raise self.fail(col, row, f"the {role} is missing ({int(null.sum())} such rows).")
        index = {v: j for j, v in enumerate(values)}
        distinct, codes = _small_codes(raw)
        if distinct is None:  # any other column: numbered by the id machinery, the distinct labels looked up
            codes, found = self.codes(raw, col, role)
            distinct = found.tolist()
        lookup = np.array([index.get(v, -1) for v in distinct] + [-1], dtype=np.int64)  # the distinct labels only
        out = lookup[codes]
        if out.shape[0] and out.min() < 0:
            row = int(np.flatnonzero(out < 0)[0])
            held = [shown(v) for v in distinct[:6]]
            held = held[:5] + ["..."] if len(held) > 5 else held
            raise self.fail(col, row, f"unknown {role} label {shown(distinct[codes[row]])}; the {role}s are "
                                      f"{', '.join(map(repr, values))}{hint}; the column holds {', '.join(held)}.")
        return out

    def numbers(self, col: str, role: str, missing_ok: bool = False) -> np.ndarray:
        """A numeric column: integers and booleans as they come (nothing missing), anything else as float64 with
        missing values (NaN) refused unless ``missing_ok``, and infinities always; text is no number."""
        self.need(col, role)
        raw, null = self.raw(col)
        if not isinstance(raw, np.ndarray):  # Arrow
            if _is_nested(raw):
                raise InputError(f"{self.where}: column {col!r} holds {raw.type} values; expected numbers.")
            raw = raw.to_numpy() if null is None else raw.to_numpy(zero_copy_only=False)
        if raw.dtype.kind in "iub" and null is None:
            return raw
        if raw.dtype.kind in "OUS" and null is not None:
            raw = np.where(null, np.nan, raw.astype(object))
        try:
            vals = numeric(raw, f"the {role} column {col!r}", self.where)
        except InputError:
            bad = next(i for i, v in enumerate(raw) if isinstance(v, (str, bytes)) or not is_number(v))
            raise self.fail(col, bad, f"the {role} must be a number; found {shown(raw[bad])}.") from None
        bad_rows = np.isinf(vals) if missing_ok else ~np.isfinite(vals)
        if bad_rows.any():
            row = int(np.flatnonzero(bad_rows)[0])
            said = "missing" if np.isnan(vals[row]) else f"{vals[row]}"
            raise self.fail(col, row, f"the {role} is {said} ({int(bad_rows.sum())} such rows): missing, NaN "
                                      f"or infinite values are refused.")
        return vals


def _is_arrow(a: Any) -> bool:
    return (type(a).__module__ or "").startswith("pyarrow") and hasattr(a, "null_count")


def _small_codes(raw: Any) -> tuple[list[Any] | None, np.ndarray]:
    """``(values, codes)`` without hashing every row, for the columns that allow it: Arrow dictionaries
    (pandas categoricals) and integers over a small range; ``(None, ...)`` for any other column."""
    if isinstance(raw, np.ndarray):
        if raw.dtype.kind not in "iu" or raw.shape[0] == 0:
            return None, raw
        lo, hi = int(raw.min()), int(raw.max())
        if hi - lo > 1 << 16:
            return None, raw
        return list(range(lo, hi + 1)), (raw - lo).astype(np.int64)
    import pyarrow as pa

    chunks = raw.chunks if isinstance(raw, pa.ChunkedArray) else [raw]
    if not chunks or not all(pa.types.is_dictionary(c.type) for c in chunks):
        return None, raw
    values: list[Any] = []
    parts = []
    for c in chunks:  # chunk by chunk: each has its own dictionary
        parts.append(np.asarray(c.indices.to_numpy(zero_copy_only=False), dtype=np.int64) + len(values))
        values.extend(c.dictionary.to_pylist())
    return values, np.concatenate(parts)


def _is_nested(raw: Any) -> bool:
    t = getattr(raw, "type", None)
    if t is None:
        return False
    import pyarrow as pa

    return bool(pa.types.is_nested(t))
