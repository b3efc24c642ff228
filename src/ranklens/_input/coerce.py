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

Tables are read by :mod:`ranklens._input.tables`; files by :mod:`ranklens.io`, which hands its tables to
:func:`~ranklens._input.tables.table_records` and its JSON dicts to :func:`nested_records` here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import chain, compress
from typing import Any

import numpy as np

from ..errors import InputError, InvalidParameterError
from .forms import (
    accepted,
    array_like,
    has_records,
    is_ranx_run,
    plain_tuples,
    record_columns,
    unwrap,
)
from .records import Records
from .tables import left_out_keywords, table_kind, table_records
from .validate import check_values, numeric

__all__ = ["MATRIX_SOURCES", "judgment_records", "nested_records", "ranking_records"]

#: The source of records read from a 2-D array or a list of lists (row = query, column = item), per side.
MATRIX_SOURCES = {"judgments": "the y_true matrix", "rankings": "the y_score matrix"}


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


def nested_records(obj: Mapping[Any, Any], what: str, source: str | None = None, missing: str = "error") -> Records:
    """The rows of a dict ``{query: {item: value}}``: labels when ``what`` is "judgments", scores when
    it is "rankings"."""
    q, i, v, empty, gone = _nested_columns(obj, what, source, missing)
    src = source or f"the {what} dict"
    if what == "judgments":  # a judged query without a judgment has nothing to count: dropped
        return Records(q, i, label=v, source=src, **left_out_keywords(what, gone, q, i, src))
    return Records(q, i, score=v, source=src, empty_qids=_id_array(empty) if empty else None,
                   **left_out_keywords(what, gone, q, i, src))


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
                       **left_out_keywords("judgments", gone, q, i, "the judgment records"))
    if _is_matrix_like(obj):
        rows = _matrix_rows_named(obj, "y_true", "judgments")
        q, i, v = _long_from_rows(rows, "y_true")
        if v.size == 0:
            raise InputError("judgments are empty.")
        gone = _check_matrix(v, q, i, "relevance label", MATRIX_SOURCES["judgments"], missing)
        where = MATRIX_SOURCES["judgments"]
        return Records(q, i, label=v, source=where, **left_out_keywords("judgments", gone, q, i, where))
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
                       **left_out_keywords("rankings", gone, q, i, "the ranking records"))
    if _is_matrix_like(obj):
        rows = _matrix_rows_named(obj, "y_score", "rankings")
        q, i, v = _long_from_rows(rows, "y_score")
        where = MATRIX_SOURCES["rankings"]
        gone = _check_matrix(v, q, i, "score", where, missing)
        return Records(q, i, score=v, source=where, **left_out_keywords("rankings", gone, q, i, where))
    if isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)):
        v = numeric(np.asarray(obj), "scores", "the score list")
        check_values(v, "score", "the score list")
        return Records(None, None, score=v, source="the score list")
    raise InvalidParameterError(f"cannot read rankings from a {type(obj).__name__}. {accepted('rankings')}")
