"""Coercion of in-memory inputs into :class:`~ranklens.records.Records`: the one place that knows them.

Accepted forms (for judgments and for rankings alike):

* a dict ``{query: {item: value}}`` (pytrec_eval / ranx style);
* a 2-D array or a list of lists (scikit-learn style: row = query,
  column = item), ragged lists allowed;
* a long table (pandas, polars, pyarrow) with named columns for the query,
  the item, the score or rank, and the relevance (:data:`COLUMN_NAMES`);
* for rankings, a 1-D array or list of scores with one value per judgment
  row (LETOR predictions);
* the forms of other libraries (records, ranx, Hugging Face, rows as dicts),
  first brought to one of the above by :func:`ranklens._input.forms.unwrap`; a list
  holding records is never taken for a matrix.

Files are read by :mod:`ranklens.io`, which hands its tables and JSON dicts to
:func:`table_records` and :func:`nested_records` here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from itertools import chain, compress
from typing import Any, Literal, overload

import numpy as np

from ..errors import InputError, InvalidParameterError
from .buffers import arrow_to_numpy, as_ids, chunked_to_numpy
from .forms import (
    accepted,
    array_like,
    has_records,
    is_ranx_run,
    plain_tuples,
    pyterrier_columns,
    record_columns,
    unwrap,
)
from .ids import id_length
from .records import Records, left_out_rows
from .validate import check_values, numeric

__all__ = [
    "COLUMN_NAMES",
    "MATRIX_SOURCES",
    "is_number",
    "judgment_records",
    "nested_records",
    "pick_column",
    "ranking_records",
    "table_kind",
    "table_records",
]

#: Column names recognised in long tables (compared after lower-casing and
#: replacing runs of non-alphanumerics by ``_``).
COLUMN_NAMES: dict[str, tuple[str, ...]] = {
    "query": ("query", "query_id", "qid", "q_id", "queryid", "group", "group_id", "search_group_id", "topic",
              "topic_id", "user", "user_id", "session", "session_id", "prediction_id", "request_id"),
    "item": ("item", "item_id", "doc", "doc_id", "docid", "docno", "document", "document_id", "passage",
             "passage_id", "pid", "corpus_id"),
    "score": ("score", "scores", "prediction", "predictions", "pred", "y_score", "sim", "similarity",
              "prediction_score"),
    "rank": ("rank", "ranks", "position", "pos", "prediction_rank"),
    "label": ("relevance", "label", "labels", "rel", "gain", "gains", "gains_relevance_score", "y_true",
              "target", "grade", "judgment", "judgement", "relevance_score", "qrel"),
}


#: The source of records read from a 2-D array or a list of lists (row = query, column = item), per side.
MATRIX_SOURCES = {"judgments": "the y_true matrix", "rankings": "the y_score matrix"}


def _table_ids(obj: Any, kind: str, col: str, where: str) -> Any:
    """An id column without Python objects: int64 ndarray, or Arrow strings of any width kept as they
    come (query ids are cut into runs and item ids hashed chunk by chunk before anything is widened)."""
    what = f"id column {col!r} in {where}"
    if kind == "pandas":
        import pyarrow as pa

        s = obj[col]
        if s.dtype.kind in "iub":
            return s.to_numpy().astype(np.int64, copy=False)
        try:
            arr = pa.Array.from_pandas(s)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            raise InputError(f"{what} mixes values of different types; an id is a string or an integer.") from None
        _refuse_nested(arr.type, what)
        return as_ids(arr, what, widen=False)
    if kind == "polars":
        if type(obj).__name__ == "LazyFrame":
            obj = obj.select(col).collect()
        s = obj[col]
        if s.dtype.is_nested():
            raise InputError(f"{what} holds {s.dtype} values; an id is a string or an integer.")
        if s.n_chunks() > 1 and not s.dtype.is_numeric() and s.null_count() == 0:
            # chunk by chunk: Series.to_arrow() rechunks first (a copy of every string, ~10x slower)
            import pyarrow as pa

            return as_ids(pa.chunked_array([c.to_arrow() for c in s.get_chunks()]), what, widen=False)
        return as_ids(s.to_arrow(), what, widen=False)
    _refuse_nested(obj.schema.field(col).type, what)
    return as_ids(obj.column(col), what, widen=False)


def _refuse_nested(t: Any, what: str) -> None:
    """Refuse a column of lists, structs or maps (JSON Lines and Parquet can hold them)."""
    import pyarrow as pa

    if pa.types.is_nested(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_null(t):
        raise InputError(f"{what} holds {t} values; an id is a string or an integer.")


def _norm(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", str(name).lower()).strip("_")


def table_kind(obj: Any) -> str | None:
    """``"pandas"``, ``"polars"`` or ``"arrow"`` for a table of that library, else None."""
    mod = type(obj).__module__ or ""
    name = type(obj).__name__
    if mod.startswith("pandas") and name == "DataFrame":
        return "pandas"
    if mod.startswith("polars") and name in ("DataFrame", "LazyFrame"):
        return "polars"
    if mod.startswith("pyarrow") and name in ("Table", "RecordBatch"):
        return "arrow"
    return None


def _table_columns(obj: Any, kind: str) -> list[str]:
    if kind == "pandas":
        return [str(c) for c in obj.columns]
    if kind == "polars":
        return list(obj.collect_schema().names()) if type(obj).__name__ == "LazyFrame" else list(obj.columns)
    return list(obj.schema.names)


def _table_column(obj: Any, kind: str, col: str, where: str) -> np.ndarray:
    if kind == "pandas":
        s = obj[col]
        if s.dtype.kind in "iufb":
            return s.to_numpy()
        if s.isna().any() and s.dtype.kind != "O":
            return s.to_numpy(dtype=float, na_value=np.nan)
        return s.to_numpy(dtype=object)
    if kind == "polars":
        if type(obj).__name__ == "LazyFrame":
            obj = obj.select(col).collect()
        s = obj[col]
        if s.dtype.is_numeric() and s.n_chunks() > 1:  # read as float64 (numeric): written once, chunk by chunk
            out = np.empty(len(s), np.float64)
            pos = 0
            for c in s.get_chunks():
                out[pos:pos + len(c)] = c.to_numpy() if c.null_count() == 0 else c.cast(float).to_numpy()
                pos += len(c)
            return out
        if s.dtype.is_numeric():
            return s.to_numpy() if s.null_count() == 0 else s.cast(float).to_numpy()
        if s.dtype.is_nested():
            raise InputError(f"column {col!r} in {where} holds {s.dtype} values; expected one number per row.")
        return np.asarray(s.to_list(), dtype=object)
    import pyarrow as pa

    arr = obj.column(col)
    if pa.types.is_nested(arr.type):
        raise InputError(f"column {col!r} in {where} holds {arr.type} values; expected one number per row.")
    is_num = pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type) or pa.types.is_boolean(arr.type)
    if isinstance(arr, pa.ChunkedArray):
        if is_num and arr.num_chunks > 1:  # numbers are read as float64 (numeric): written once, as such
            return chunked_to_numpy(arr, np.float64)
        arr = arr.combine_chunks()
    if is_num:
        if arr.null_count:
            return arrow_to_numpy(arr.cast(pa.float64()))
        return arrow_to_numpy(arr)
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    return np.asarray(arr.to_pylist(), dtype=object)


@overload
def pick_column(columns: list[str], role: str, given: str | None, required: Literal[True], where: str) -> str: ...
@overload
def pick_column(columns: list[str], role: str, given: str | None, required: bool, where: str) -> str | None: ...
def pick_column(columns: list[str], role: str, given: str | None, required: bool, where: str) -> str | None:
    """The column playing ``role`` (query, item, score, rank, label): ``given``, or the first of
    :data:`COLUMN_NAMES` present; None when absent and not ``required``."""
    if given is not None:
        if given not in columns:
            raise InvalidParameterError(f"column {given!r} (the {role} column) is not in {where}; columns: {columns}.")
        return given
    normed = {_norm(c): c for c in columns}
    for cand in COLUMN_NAMES[role]:
        if cand in normed:
            return normed[cand]
    if required:
        raise InvalidParameterError(
            f"no {role} column in {where} (columns: {columns}); name it one of "
            f"{', '.join(COLUMN_NAMES[role][:6])}... or pass `{role}_col=`."
        )
    return None


def is_number(x: Any) -> bool:
    """Whether ``float(x)`` works (a number, or a text of one)."""
    try:
        float(x)
    except (TypeError, ValueError, OverflowError):
        return False
    return True


def _table_nulls(obj: Any, kind: str, col: str) -> np.ndarray:
    """Which rows of a table column are missing (null; for pandas also NaN, its missing value)."""
    if kind == "pandas":
        return np.asarray(obj[col].isna().to_numpy(), dtype=bool)
    if kind == "polars":
        if type(obj).__name__ == "LazyFrame":
            obj = obj.select(col).collect()
        return np.asarray(obj[col].is_null().to_numpy(), dtype=bool)
    import pyarrow.compute as pc

    return np.asarray(pc.is_null(obj.column(col)).to_numpy(zero_copy_only=False), dtype=bool)


#: ``locate(i)`` of a table's row ``i``: where it is, its line in the file (or None) and its text.
Locate = Callable[[int], "tuple[str, int | None, str | None]"]


def _row(i: int) -> tuple[str, int | None, str | None]:
    return f"row {i}", None, None


def _table_values(table: Any, kind: str, col: str, what: str, where: str, locate: Locate | None,
                  missing: str) -> tuple[np.ndarray, np.ndarray | None]:
    """A table's label/score/rank column as float64, and the rows left out (None: none).

    Missing values, NaN and infinities are refused (:func:`~ranklens._input.validate.check_values`); with
    ``missing="exclude"`` the rows whose value is missing or NaN are returned, to be left out of that side."""
    vals = numeric(_table_column(table, kind, col, where), f"{what} ({col!r})", where, locate=locate or _row)
    if np.isfinite(vals).all():
        return vals, None
    null = _table_nulls(table, kind, col)
    return vals, check_values(vals, f"{what} ({col!r})", where, locate=locate or _row, null=null, missing=missing,
                              excludable=True)


def _nested_columns(obj: Mapping[Any, Any], what: str, where: str | None = None, missing: str = "error",
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[Any], np.ndarray | None]:
    # C-level iteration (map / chain / fromiter): no Python-level loop per query or per item
    where = where or f"the {what} dict"
    inner = list(obj.values())
    if not all(map(_is_mapping, inner)):
        q = next(q for q, docs in obj.items() if not isinstance(docs, Mapping))
        err = InvalidParameterError if where == f"the {what} dict" else InputError
        raise err(
            f"{what} dict must map query -> {{item: value}}; query {q!r} maps to {type(obj[q]).__name__}"
            f"{'' if where == f'the {what} dict' else ' in ' + where}."
        )
    lengths = np.fromiter(map(len, inner), dtype=np.int64, count=len(inner))
    total = int(lengths.sum())
    # queries declared with no item: ranked queries with an empty list (ranx, pytrec_eval, ir_measures)
    empty = [] if lengths.all() else list(compress(obj.keys(), lengths == 0))
    if total == 0:  # queries declared, every list empty: nothing was ranked or judged at all
        if not obj:
            raise InputError(f"{what} is empty." if where == f"the {what} dict" else f"{where}: no {what} in the file.")
        raise InputError(f"{where}: every query's list is empty ({len(obj)} queries, no item); "
                         f"nothing to evaluate.")
    keys = list(compress(obj.keys(), lengths))
    qids = np.repeat(_id_array(keys), lengths[lengths > 0])
    items = _id_array(list(chain.from_iterable(inner)))
    name = "relevance label" if what == "judgments" else "score"
    values, gone = _floats(list(chain.from_iterable(map(_values, inner))), name, where, qids, items, missing)
    return qids, items, values, empty, gone


def _floats(raw: list[Any], what: str, where: str, qids: Any, items: Any,
            missing: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Values of a dict or of records as float64, checked (numbers only: ``"1.5"`` is text, refused by
    :func:`~ranklens._input.validate.numeric`; missing values by :func:`~ranklens._input.validate.check_values`), and
    the rows left out; read in one pass when every value is a float or an int."""
    def locate(i: int) -> tuple[str, int | None, str | None]:
        return f"query {qids[i]} item {items[i]}", None, None

    out = None
    if set(map(type, raw)) <= {float, int}:  # distinct types: C-level, no Python loop per value
        try:
            out = np.fromiter(raw, dtype=np.float64, count=len(raw))
        except OverflowError:
            pass
    if out is None:
        out = numeric(np.fromiter(raw, dtype=object, count=len(raw)), what, where, locate=locate)
    return out, check_values(out, what, where, locate=locate, missing=missing, excludable=True)


def _is_mapping(x: Any) -> bool:
    return isinstance(x, Mapping)


def _values(d: Mapping[Any, Any]) -> Any:
    return d.values()


def _id_array(values: list[Any]) -> np.ndarray:
    """Integer ids as int64, anything else as an object array of str."""
    types = set(map(type, values))  # distinct types only: no Python loop per id below
    if types and all(issubclass(t, (int, np.integer)) and not issubclass(t, (bool, np.bool_)) for t in types):
        try:
            return np.asarray(values, dtype=np.int64)
        except OverflowError:
            big = int(next(v for v in values if not -2**63 <= int(v) < 2**63))
            text = str(big) if big.bit_length() <= 128 else f"of {big.bit_length()} bits"
            raise InputError(f"the integer id {text} does not fit in 64 bits; give such ids as strings.") from None
    if all(issubclass(t, str) for t in types):
        return np.asarray(values, dtype=object)
    return np.asarray([v if isinstance(v, str) else str(v) for v in values], dtype=object)


def _matrix_rows(obj: Any, what: str) -> tuple[np.ndarray, np.ndarray] | np.ndarray:
    """A 2-D array, or ``(lengths, flat values)`` for rows of different lengths."""
    if isinstance(obj, np.ndarray):
        if obj.ndim != 2:
            raise InvalidParameterError(f"{what} array must be 2-D (queries x items); got shape {obj.shape}.")
        return obj
    n = len(obj)
    try:
        lengths = np.fromiter(map(len, obj), dtype=np.int64, count=n)
        if not all(map(_plain_number, set(map(type, chain.from_iterable(obj))))):  # "1.5" is text: not read
            raise TypeError
        flat = np.fromiter(chain.from_iterable(obj), dtype=np.float64, count=int(lengths.sum()))
    except (TypeError, ValueError):
        return _matrix_rows_slow(obj, what)
    if n and (lengths == lengths[0]).all():
        return flat.reshape(n, int(lengths[0]))
    return lengths, flat


def _matrix_rows_slow(obj: Any, what: str) -> tuple[np.ndarray, np.ndarray] | np.ndarray:
    """Row by row, to name the row that is not a flat list of numbers."""
    rows = []
    for i, r in enumerate(obj):
        try:  # as objects: one text among numbers would turn the whole row into text
            row = r if isinstance(r, np.ndarray) else np.asarray(r, dtype=object)
        except ValueError:
            row = None
        if row is None or row.ndim != 1:
            raise InvalidParameterError(f"{what} row {i} must be a flat list of numbers.")
        rows.append(row)
    lengths = np.array([len(r) for r in rows], dtype=np.int64)
    starts = np.cumsum(lengths) - lengths

    def locate(k: int) -> tuple[str, int | None, str | None]:
        row = int(np.searchsorted(starts, k, side="right")) - 1
        return f"row {row}, column {k - int(starts[row])}", None, None

    flat = numeric(np.concatenate([r.astype(object) for r in rows]) if rows else np.zeros(0),
                   f"{what} values", f"the {what} matrix", locate=locate)
    if rows and (lengths == lengths[0]).all():
        return flat.reshape(len(rows), int(lengths[0]))
    return lengths, flat


def _long_from_rows(rows: tuple[np.ndarray, np.ndarray] | np.ndarray,
                    what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if isinstance(rows, np.ndarray):
        n_q, n_i = rows.shape
        qid = np.repeat(np.arange(n_q, dtype=np.int64), n_i)
        item = np.tile(np.arange(n_i, dtype=np.int64), n_q)
        vals = numeric(rows.reshape(-1), f"{what} values", f"the {what} matrix",
                       locate=lambda k: (f"row {k // max(n_i, 1)}, column {k % max(n_i, 1)}", None, None))
        return qid, item, vals
    lengths, vals = rows
    qid = np.repeat(np.arange(lengths.shape[0], dtype=np.int64), lengths)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    item = np.arange(int(lengths.sum()), dtype=np.int64) - starts
    return qid, item, vals


def _plain_number(t: type) -> bool:
    """A type whose values a float64 array takes as they are: Python and numpy numbers (no text, no None)."""
    return issubclass(t, (int, float, np.number, np.bool_)) and not issubclass(t, (str, bytes))


def _is_matrix_like(obj: Any) -> bool:
    if isinstance(obj, np.ndarray):
        return obj.ndim == 2
    if isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)) and len(obj) > 0:
        first = obj[0]
        return isinstance(first, (Sequence, np.ndarray)) and not isinstance(first, (str, bytes))
    return False


def _is_empty_sequence(obj: Any) -> bool:
    if isinstance(obj, np.ndarray):
        return obj.size == 0
    return isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)) and (
        len(obj) == 0 or all(isinstance(r, (Sequence, np.ndarray)) and len(r) == 0 for r in obj)
    )




def _is_records(obj: Any) -> bool:
    """A list holding records (named tuples, dicts): never a matrix, whatever their ids look like."""
    return isinstance(obj, Sequence) and not isinstance(obj, (str, bytes, np.ndarray)) and has_records(obj)


def _record_values(values: list[Any], what: str, qids: list[Any], items: list[Any],
                   missing: str) -> tuple[np.ndarray, np.ndarray | None]:
    where = "the judgment records" if what == "judgments" else "the ranking records"
    return _floats(values, "relevance label" if what == "judgments" else "score", where, qids, items, missing)


def _matrix_rows_named(obj: Any, name: str, what: str) -> tuple[np.ndarray, np.ndarray] | np.ndarray:
    """:func:`_matrix_rows`; a list of lists that is no matrix of numbers refused with the forms accepted."""
    if not isinstance(obj, np.ndarray):
        plain_tuples(obj, what)
    try:
        return _matrix_rows(obj, name)
    except (InputError, InvalidParameterError) as e:
        raise type(e)(f"{e} A list of lists is read as a matrix of numbers (row = query). {accepted(what)}") from None


def _check_matrix(v: np.ndarray, q: np.ndarray, i: np.ndarray, what: str, where: str,
                  missing: str) -> np.ndarray | None:
    return check_values(v, what, where, locate=lambda r: (f"row {q[r]}, column {i[r]}", None, None), missing=missing,
                        excludable=True)


def _side(what: str, gone: np.ndarray | None, qid: Any, item: Any, where: str) -> dict[str, Any]:
    """The keywords of :class:`Records` leaving out the rows ``gone`` of one side (``what``), counted."""
    if gone is None:
        return {}
    mask = "judged" if what == "judgments" else "ranked"
    return {mask: ~gone, "left_out": (left_out_rows(what, gone, qid, item, where),)}


def table_records(
    table: Any,
    *,
    query_col: str | None = None,
    item_col: str | None = None,
    score_col: str | None = None,
    rank_col: str | None = None,
    label_col: str | None = None,
    source: str | None = None,
    need: str = "both",
    locate: Any = None,  # a Locate; Any, as callers pass their column names as **dict[str, str]
    missing: str = "error",
) -> Records:
    """The rows of a long table (``need``: "judgments", "rankings" or "both"). A missing value, NaN or an
    infinity is refused, naming the row, or the line and text given by ``locate(row)``; with
    ``missing="exclude"``, a row with a missing (or NaN) label is no judgment and a row with a missing score
    or rank is not ranked, counted in ``left_out``."""
    kind = table_kind(table)
    if kind is None:
        raise InvalidParameterError(f"expected a pandas, polars or pyarrow table; got {type(table).__name__}.")
    where = source or f"the {kind} table"
    cols = _table_columns(table, kind)
    pt = pyterrier_columns(cols)  # a PyTerrier frame: qid/docno, never its query text nor its internal docid
    qc = pick_column(cols, "query", query_col if query_col is not None else pt.get("query"), True, where)
    # the item column is required in every table: row numbers never stand in for item ids
    ic = pick_column(cols, "item", item_col if item_col is not None else pt.get("item"), True, where)
    lc = pick_column(cols, "label", label_col, need == "judgments", where)
    sc = pick_column(cols, "score", score_col if score_col is not None else pt.get("score"), False, where)
    rc = pick_column(cols, "rank", rank_col, False, where)
    if need == "rankings" and sc is None and rc is None:
        raise InvalidParameterError(
            f"no score or rank column in {where} (columns: {cols}); pass `score_col=` or `rank_col=`.")
    assert qc is not None
    qid = _table_ids(table, kind, qc, where)
    n = id_length(qid)
    if n == 0:
        raise InputError(f"{where} has no rows.")
    # item ids kept as they come too: hashed chunk by chunk, widened only where a kernel compares them
    item = _table_ids(table, kind, ic, where)
    label = score = rank = gone_j = gone_r = None
    if lc is not None and need in ("judgments", "both"):
        label, gone_j = _table_values(table, kind, lc, "relevance", where, locate, missing)
    if (sc is not None or rc is not None) and need in ("rankings", "both"):
        if sc:
            score, gone_r = _table_values(table, kind, sc, "score", where, locate, missing)
        else:
            assert rc is not None
            rank, gone_r = _table_values(table, kind, rc, "rank", where, locate, missing)
    j, r = _side("judgments", gone_j, qid, item, where), _side("rankings", gone_r, qid, item, where)
    return Records(qid, item, label=label, score=score, rank=rank, source=where, judged=j.get("judged"),
                   ranked=r.get("ranked"), left_out=(*j.get("left_out", ()), *r.get("left_out", ())))


def nested_records(obj: Mapping[Any, Any], what: str, source: str | None = None, missing: str = "error") -> Records:
    """The rows of a dict ``{query: {item: value}}``: labels when ``what`` is "judgments", scores when
    it is "rankings"."""
    q, i, v, empty, gone = _nested_columns(obj, what, source, missing)
    src = source or f"the {what} dict"
    if what == "judgments":  # a judged query without a judgment has nothing to count: dropped
        return Records(q, i, label=v, source=src, **_side(what, gone, q, i, src))
    return Records(q, i, score=v, source=src, empty_qids=_id_array(empty) if empty else None,
                   **_side(what, gone, q, i, src))


def judgment_records(obj: Any, missing: str = "error", **columns: Any) -> Records:
    """The rows of in-memory judgments: a dict, a table, a 2-D array or a list of lists, records
    (:mod:`ranklens._input.forms`), an array of another library; ``missing``: see
    :data:`ranklens._input.validate.MISSING`."""
    obj = unwrap(obj, "judgments")
    if isinstance(obj, Mapping):
        return nested_records(obj, "judgments", missing=missing)
    if table_kind(obj):
        return table_records(obj, need="judgments", missing=missing, **columns)
    obj = array_like(obj, "judgments")
    if _is_empty_sequence(obj):
        raise InputError("judgments are empty.")
    if _is_records(obj):
        rq, ri, rv = record_columns(obj, "judgments")
        q, i = _id_array(rq), _id_array(ri)
        v, gone = _record_values(rv, "judgments", rq, ri, missing)
        return Records(q, i, label=v, source="the judgment records",
                       **_side("judgments", gone, q, i, "the judgment records"))
    if _is_matrix_like(obj):
        rows = _matrix_rows_named(obj, "y_true", "judgments")
        q, i, v = _long_from_rows(rows, "y_true")
        if v.size == 0:
            raise InputError("judgments are empty.")
        gone = _check_matrix(v, q, i, "relevance label", MATRIX_SOURCES["judgments"], missing)
        where = MATRIX_SOURCES["judgments"]
        return Records(q, i, label=v, source=where, **_side("judgments", gone, q, i, where))
    raise InvalidParameterError(f"cannot read judgments from a {type(obj).__name__}. {accepted('judgments')}")


def ranking_records(obj: Any, missing: str = "error", **columns: Any) -> Records:
    """The rows of in-memory rankings: a dict, a table, a 2-D array or list of lists, a score vector, records
    (:mod:`ranklens._input.forms`), an array of another library; ``missing``: see
    :data:`ranklens._input.validate.MISSING` (a score vector aligns with the judgments row by row: there a
    missing score is always refused)."""
    in_ranx_order = is_ranx_run(obj)
    obj = unwrap(obj, "rankings")
    if isinstance(obj, Mapping):
        rec = nested_records(obj, "rankings", missing=missing)
        return replace(rec, in_ranx_order=True) if in_ranx_order else rec
    if table_kind(obj):
        return table_records(obj, need="rankings", missing=missing, **columns)
    obj = array_like(obj, "rankings")
    if _is_empty_sequence(obj):
        raise InputError("rankings are empty.")
    if isinstance(obj, np.ndarray) and obj.ndim == 1:
        v = numeric(obj, "scores", "the score vector")
        check_values(v, "score", "the score vector")
        return Records(None, None, score=v, source="the score vector")
    if _is_records(obj):
        rq, ri, rv = record_columns(obj, "rankings")
        q, i = _id_array(rq), _id_array(ri)
        v, gone = _record_values(rv, "rankings", rq, ri, missing)
        return Records(q, i, score=v, source="the ranking records",
                       **_side("rankings", gone, q, i, "the ranking records"))
    if _is_matrix_like(obj):
        rows = _matrix_rows_named(obj, "y_score", "rankings")
        q, i, v = _long_from_rows(rows, "y_score")
        where = MATRIX_SOURCES["rankings"]
        gone = _check_matrix(v, q, i, "score", where, missing)
        return Records(q, i, score=v, source=where, **_side("rankings", gone, q, i, where))
    if isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)):
        v = numeric(np.asarray(obj), "scores", "the score list")
        check_values(v, "score", "the score list")
        return Records(None, None, score=v, source="the score list")
    raise InvalidParameterError(f"cannot read rankings from a {type(obj).__name__}. {accepted('rankings')}")
