"""Long tables (pandas, polars, pyarrow) into :class:`~ranklens.records.Records`: the columns found by name
(:data:`COLUMN_NAMES`, or given), ids kept without a Python object per row, values checked.

The forms of other libraries and the dicts and matrices are coerced by :mod:`ranklens._input.coerce`, which
hands its tables here; so does :mod:`ranklens.io` with the tables it reads.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal, overload

import numpy as np

from ..errors import InputError, InvalidParameterError
from .buffers import arrow_to_numpy, as_ids, chunked_to_numpy, empty_array, read_numbers
from .chunks import chunked_values
from .forms import pyterrier_columns
from .ids import id_length
from .records import Records, left_out_rows
from .validate import any_where, check_values, numeric

__all__ = ["COLUMN_NAMES", "Locate", "left_out_keywords", "pick_column", "table_kind", "table_records"]

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


def _table_column(obj: Any, kind: str, col: str, where: str) -> tuple[np.ndarray, bool, int | None]:
    """A table's value column as numpy, whether the array is the reader's own (made here, no view of the
    table's or the caller's memory): an Arrow column of several chunks copied into one array, and how many of its
    values are NaN or infinite when the reading counted them (else None)."""
    if kind == "arrow":
        arr = obj.column(col)
        read = read_numbers(arr) if getattr(arr, "num_chunks", 1) > 1 else None
        if read is not None:  # int64 / float64 chunks without nulls, read in one pass on the thread pool
            return read[0], True, read[1]
    values = _column_values(obj, kind, col, where)
    many = kind == "arrow" and getattr(obj.column(col), "num_chunks", 1) > 1
    return values, many and values.dtype.kind in "iufb", None


def _column_values(obj: Any, kind: str, col: str, where: str) -> np.ndarray:
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
            out = empty_array(len(s), np.float64)
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
                  missing: str, kinds: str = "") -> tuple[Any, np.ndarray | None, bool]:
    """A table's label/score/rank column as float64, the rows left out (None: none), and whether the array is the
    reader's own (:func:`_table_column`; a float64 copy of it is too). ``kinds``: an Arrow column whose chunks are
    all of these kinds (``"f"`` float64, ``"i"`` int64) without nulls nor NaN nor infinities is kept as its chunks
    (:class:`~ranklens._input.chunks.ChunkedValues`: no copy; its own array, made on first read, is the same).

    Missing values, NaN and infinities are refused (:func:`~ranklens._input.validate.check_values`); with
    ``missing="exclude"`` the rows whose value is missing or NaN are returned, to be left out of that side."""
    held = chunked_values(table.column(col), kinds) if kinds and kind == "arrow" else None
    if held is not None and held.nonfinite() == 0:
        return held, None, False
    raw, own, bad = _table_column(table, kind, col, where)
    vals = numeric(raw, f"{what} ({col!r})", where, locate=locate or _row)
    own = own or vals is not raw
    if bad == 0 or (bad is None and not any_where(lambda b: ~np.isfinite(b), vals)):  # block by block: no mask
        return vals, None, own
    null = _table_nulls(table, kind, col)
    return vals, check_values(vals, f"{what} ({col!r})", where, locate=locate or _row, null=null, missing=missing,
                              excludable=True), own


def left_out_keywords(what: str, gone: np.ndarray | None, qid: Any, item: Any, where: str) -> dict[str, Any]:
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
    own_scores = False
    finite: tuple[str, ...] = ()  # the columns found finite as read (with no row left out for a NaN)
    if lc is not None and need in ("judgments", "both"):
        label, gone_j, _ = _table_values(table, kind, lc, "relevance", where, locate, missing, "fi")
        finite += ("label",) if gone_j is None else ()
    if (sc is not None or rc is not None) and need in ("rankings", "both"):
        if sc:
            score, gone_r, own_scores = _table_values(table, kind, sc, "score", where, locate, missing, "f")
        else:
            assert rc is not None
            rank, gone_r, _ = _table_values(table, kind, rc, "rank", where, locate, missing)
        finite += ("score" if sc else "rank",) if gone_r is None else ()
    j = left_out_keywords("judgments", gone_j, qid, item, where)
    r = left_out_keywords("rankings", gone_r, qid, item, where)
    return Records(qid, item, label=label, score=score, rank=rank, source=where, judged=j.get("judged"),
                   ranked=r.get("ranked"), left_out=(*j.get("left_out", ()), *r.get("left_out", ())),
                   own_scores=own_scores, finite=finite)
