"""Input forms of other libraries, recognised explicitly by type and field names, never guessed.

* lists and iterators of ir_datasets / ir_measures records: named tuples with
  the fields ``query_id``, ``doc_id`` and ``relevance`` (judgments: ``Qrel``,
  ``TrecQrel``...) or ``score`` (rankings: ``ScoredDoc``, ``GenericScoredDoc``);
* lists and iterators of rows as dicts (a Hugging Face ``IterableDataset``
  gives these), read as a table whose column names are recognised;
* ranx ``Qrels`` and ``Run``, through their public ``to_dict()``;
* Hugging Face ``datasets.Dataset``, through its Arrow table (``datasets`` is
  never imported here: the object is recognised by its type's module and name);
* PyTerrier frames: pandas frames with ``qid`` and ``docno`` columns, read with
  PyTerrier's documented column names (``qid``, ``docno``, ``score``, ``rank``,
  ``label``), never its ``query`` text nor its internal ``docid``;
* array-likes of other libraries (torch tensors, JAX and CuPy arrays...): any
  object offering DLPack (``__dlpack__``) or numpy's ``__array__``, read as a
  numpy array (:func:`array_like`; torch and JAX are never imported).

:mod:`ranklens._input.coerce` calls :func:`unwrap` first, then asks
:func:`has_records` before it would take a list for a matrix.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import chain
from operator import attrgetter
from typing import Any

import numpy as np

from ..errors import InputError, InvalidParameterError

__all__ = [
    "PYTERRIER_COLUMNS",
    "RECORD_FIELDS",
    "accepted",
    "array_like",
    "has_records",
    "is_ranx_run",
    "is_record",
    "plain_tuples",
    "pyterrier_columns",
    "record_columns",
    "unwrap",
]

#: The fields a record must have to be read as judgments or as rankings (ir_measures' ``Qrel`` and
#: ``ScoredDoc``; ir_datasets' ``TrecQrel``, ``GenericScoredDoc``... have them too).
RECORD_FIELDS: dict[str, tuple[str, str, str]] = {
    "judgments": ("query_id", "doc_id", "relevance"),
    "rankings": ("query_id", "doc_id", "score"),
}

#: PyTerrier's documented column names, by role.
PYTERRIER_COLUMNS: dict[str, str] = {"query": "qid", "item": "docno", "score": "score", "rank": "rank",
                                     "label": "label"}

_PEER = {"judgments": "ir_measures.Qrel / ir_datasets TrecQrel", "rankings": "ir_measures.ScoredDoc / "
         "ir_datasets GenericScoredDoc"}


def accepted(what: str) -> str:
    """The sentence listing the in-memory forms accepted for ``what`` ("judgments" or "rankings").

    Examples
    --------
    >>> from ranklens._input.forms import accepted
    >>> "query_id, doc_id, relevance" in accepted("judgments")
    True
    """
    value = "label" if what == "judgments" else "score"
    fields = ", ".join(RECORD_FIELDS[what])
    ranx = "Qrels" if what == "judgments" else "Run"
    vector = ", a 1-D array of scores (one per judgment row)" if what == "rankings" else ""
    col = "label" if what == "judgments" else "score/rank"
    return (
        f"Accepted {what}: a file path, a dict {{query: {{item: {value}}}}}, a 2-D array or list of lists of numbers "
        f"(row = query){vector}, a list or iterator of records with fields {fields} ({_PEER[what]}), "
        f"a ranx {ranx}, a Hugging Face datasets.Dataset, or a pandas/polars/pyarrow table "
        f"(e.g. a PyTerrier frame: qid, docno, {col})."
    )


def array_like(obj: Any, what: str) -> Any:
    """``obj`` as a numpy array when it is an array of another library (a torch tensor, a JAX or CuPy array,
    anything offering ``__dlpack__`` or ``__array__``), read through DLPack (no copy) or ``__array__``; any other
    object as it is. An array that cannot be read on the CPU (a GPU tensor, a tensor that requires a gradient,
    a dtype numpy lacks) is refused in one line naming ``what`` and the way out.

    Examples
    --------
    >>> import numpy as np
    >>> class OnlyDLPack:
    ...     def __init__(self, a): self.a = np.asarray(a)
    ...     def __dlpack__(self, **kw): return self.a.__dlpack__(**kw)
    ...     def __dlpack_device__(self): return self.a.__dlpack_device__()
    >>> array_like(OnlyDLPack([[1.0, 0.0]]), "judgments")
    array([[1., 0.]])
    >>> array_like([[1, 0]], "judgments")
    [[1, 0]]
    """
    t = type(obj)
    if isinstance(obj, (np.ndarray, str, bytes, Sequence, Mapping, Iterator)) or not (
            hasattr(t, "__dlpack__") or hasattr(t, "__array__")):
        return obj
    first: Exception | None = None
    if hasattr(t, "__dlpack__"):
        try:
            return np.from_dlpack(obj)
        except (TypeError, ValueError, RuntimeError, BufferError, AttributeError) as exc:
            first = exc
    if hasattr(t, "__array__"):
        try:
            arr = np.asarray(obj)
        except (TypeError, ValueError, RuntimeError, AttributeError) as exc:
            first = first or exc
        else:
            if arr.dtype.kind != "O" or arr.ndim:  # an object wrapped in a 0-d array: no array at all
                return arr
    why = " ".join(str(first).split())[:200] if first is not None else "it gives no array"
    raise InvalidParameterError(
        f"{what}: cannot read the {t.__module__.split('.')[0]} {t.__name__} as a numpy array on the CPU ({why}); "
        "give it as one: x.detach().cpu() for a torch tensor, x.get() for CuPy, np.asarray(x) for JAX.")


def is_record(x: Any) -> bool:
    """Whether ``x`` is a named tuple (the record type of ir_datasets and ir_measures)."""
    return isinstance(x, tuple) and isinstance(getattr(type(x), "_fields", None), tuple)


def _is_record_type(t: type) -> bool:
    return issubclass(t, tuple) and isinstance(getattr(t, "_fields", None), tuple)


def has_records(seq: Sequence[Any]) -> bool:
    """Whether a list holds any named tuple or dict row: then it is records, never a matrix."""
    return any(_is_record_type(t) or issubclass(t, Mapping) for t in set(map(type, seq)))


def plain_tuples(seq: Sequence[Any], what: str) -> None:
    """Refuse a list of plain tuples: rows of a matrix, or (query, item, value) records? Ambiguous.

    Examples
    --------
    >>> from ranklens._input.forms import plain_tuples
    >>> plain_tuples([[1, 0, 2]], "judgments")
    >>> plain_tuples([(1, 7, 1), (1, 8, 0)], "judgments")
    Traceback (most recent call last):
    ...
    ranklens.errors.InvalidParameterError: judgments is a list of plain tuples, ...
    """
    if tuple in set(map(type, seq)):
        raise InvalidParameterError(
            f"{what} is a list of plain tuples, which could be rows of a matrix or (query, item, value) records; "
            f"give a matrix as lists or a 2-D array, records as named tuples (ir_measures.Qrel / ScoredDoc) or a "
            f"dict {{query: {{item: value}}}}. {accepted(what)}")


def record_columns(seq: Sequence[Any], what: str) -> tuple[list[Any], list[Any], list[Any]]:
    """``(query ids, item ids, values)`` of a list of named-tuple records read as ``what``.

    Every row must be a named tuple with the fields of :data:`RECORD_FIELDS` for ``what``; anything
    else is refused, naming the first row that is not.

    Examples
    --------
    >>> from ir_measures import Qrel
    >>> from ranklens._input.forms import record_columns
    >>> record_columns([Qrel("q1", "d1", 2), Qrel("q1", "d2", 0)], "judgments")
    (['q1', 'q1'], ['d1', 'd2'], [2, 0])
    """
    need = RECORD_FIELDS[what]
    for t in set(map(type, seq)):  # distinct types only: no Python loop per record
        fields = getattr(t, "_fields", None) if _is_record_type(t) else None
        if fields is None or not all(f in fields for f in need):
            i = next(i for i, r in enumerate(seq) if type(r) is t)
            row = seq[i]
            if fields is None:
                got = f"a {t.__name__} ({row!r:.80})"
            else:
                got = f"a {t.__name__} record with fields {', '.join(fields)}"
                other = "rankings" if what == "judgments" else "judgments"
                if all(f in fields for f in RECORD_FIELDS[other]):
                    got += f" (a record of {other}, not of {what})"
            raise InvalidParameterError(
                f"{what} row {i} is {got}; records of {what} need the fields {', '.join(need)}. {accepted(what)}")
    qid, item, value = (list(map(attrgetter(f), seq)) for f in need)
    return qid, item, value


def pyterrier_columns(columns: Sequence[str]) -> dict[str, str]:
    """PyTerrier's column of each role present, when ``columns`` are a PyTerrier frame's (they hold
    ``qid`` and ``docno``); else an empty dict.

    Examples
    --------
    >>> from ranklens._input.forms import pyterrier_columns
    >>> pyterrier_columns(["qid", "query", "docid", "docno", "score", "rank"])
    {'query': 'qid', 'item': 'docno', 'score': 'score', 'rank': 'rank'}
    >>> pyterrier_columns(["query", "item", "score"])
    {}
    """
    if "qid" not in columns or "docno" not in columns:
        return {}
    return {role: col for role, col in PYTERRIER_COLUMNS.items() if col in columns}


def is_ranx_run(obj: Any) -> bool:
    """Whether ``obj`` is a ``ranx.Run`` (its rows are kept sorted in ranx's own tie order)."""
    return _library(obj) == "ranx.Run"


def _library(obj: Any) -> str | None:
    """``"ranx.Qrels"``, ``"ranx.Run"``, ``"datasets.Dataset"``... for the objects of those libraries."""
    t = type(obj)
    top = (t.__module__ or "").split(".")[0]
    if top in ("ranx", "datasets"):
        return f"{top}.{t.__name__}"
    return None


def _rows_table(rows: list[Any], what: str) -> Any:
    """A pyarrow table of rows given as dicts (column names then recognised as a table's)."""
    import pyarrow as pa

    if not all(issubclass(t, Mapping) for t in set(map(type, rows))):  # distinct types: no loop per row
        bad = next(i for i, r in enumerate(rows) if not isinstance(r, Mapping))
        raise InvalidParameterError(
            f"{what} row {bad} is a {type(rows[bad]).__name__} among rows given as dicts. {accepted(what)}")
    try:
        return pa.Table.from_pylist(rows)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise InputError(f"the {what} rows (dicts) do not make a table: {e}") from None


def unwrap(obj: Any, what: str) -> Any:
    """``obj`` as a form :mod:`ranklens._input.coerce` reads: a ranx ``Qrels``/``Run`` as its dict of dicts,
    a Hugging Face ``Dataset`` as its Arrow table, rows given as dicts as a table, an iterator of
    records as a list; anything else as it is.

    Examples
    --------
    >>> from ir_measures import ScoredDoc
    >>> from ranklens._input.forms import unwrap
    >>> unwrap(iter([ScoredDoc("q1", "d1", 0.5)]), "rankings")
    [ScoredDoc(query_id='q1', doc_id='d1', score=0.5)]
    >>> unwrap([{"query_id": "q1", "doc_id": "d1", "score": 0.5}], "rankings").column_names
    ['query_id', 'doc_id', 'score']
    """
    lib = _library(obj)
    if lib is not None:
        return _unwrap_library(obj, lib, what)
    if is_record(obj):
        raise InvalidParameterError(
            f"{what} got one {type(obj).__name__} record; give a list or an iterator of records. {accepted(what)}")
    if isinstance(obj, Iterator):
        rows = list(obj)
        if not rows:
            raise InputError(f"{what} are empty (the iterator gave no records).")
        if isinstance(rows[0], Mapping):
            return _rows_table(rows, what)
        if not has_records(rows):
            raise InvalidParameterError(
                f"{what} got an iterator of {type(rows[0]).__name__}; an iterator is read only when it gives "
                f"records. {accepted(what)}")
        return rows
    if isinstance(obj, list) and obj and isinstance(obj[0], Mapping):
        return _rows_table(obj, what)
    return obj


def _unwrap_library(obj: Any, lib: str, what: str) -> Any:
    ranx_own = "ranx.Qrels" if what == "judgments" else "ranx.Run"
    if lib in ("ranx.Qrels", "ranx.Run"):
        if lib != ranx_own:
            raise InvalidParameterError(
                f"{what} got a {lib}; give judgments as a ranx.Qrels and rankings as a ranx.Run. {accepted(what)}")
        return obj.to_dict()
    if lib == "datasets.Dataset":
        return obj.with_format("arrow")[:]  # the rows as they are selected (an indices mapping applied)
    if lib == "datasets.IterableDataset":
        return _rows_table(list(chain(obj)), what)
    if lib == "datasets.DatasetDict" or lib == "datasets.IterableDatasetDict":
        splits = list(obj)
        raise InvalidParameterError(
            f"{what} got a {lib} (splits: {', '.join(map(repr, splits)) or 'none'}); give one split, "
            f"e.g. ds[{splits[0] if splits else 'test'!r}]. {accepted(what)}")
    raise InvalidParameterError(f"cannot read {what} from a {lib}. {accepted(what)}")
