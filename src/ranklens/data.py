"""Judgments and rankings as flat arrays, and conversion from every accepted input.

Accepted inputs (for judgments and for rankings alike):

* a :class:`Judgments` / :class:`Rankings` object;
* a path to a file (TREC qrels or run, LETOR/svmlight, predictions, CSV/TSV,
  Parquet, JSON Lines, JSON; gzip transparently), see :mod:`ranklens.io`;
* a dict ``{query: {item: value}}`` (pytrec_eval / ranx style);
* a 2-D array or a list of lists (scikit-learn style: row = query,
  column = item), ragged lists allowed;
* a long table (pandas, polars, pyarrow) with named columns for the query,
  the item, the score or rank, and the relevance.

A 1-D array of scores is accepted as rankings when it has one value per
judgment row (LETOR predictions files).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, compress
from typing import Any

import numpy as np

from ._ids import StrIds
from .errors import InputError, InvalidParameterError

__all__ = ["COLUMN_NAMES", "Judgments", "Rankings", "StrIds", "as_judgments", "as_rankings", "split_table"]

#: Column names recognised in long tables (compared after lower-casing and
#: replacing runs of non-alphanumerics by ``_``).
COLUMN_NAMES: dict[str, tuple[str, ...]] = {
    "query": ("query", "query_id", "qid", "q_id", "queryid", "group", "group_id", "search_group_id", "topic",
              "topic_id", "user", "user_id", "session", "session_id", "prediction_id", "request_id"),
    "item": ("item", "item_id", "doc", "doc_id", "docid", "docno", "document", "document_id", "passage",
             "passage_id", "pid"),
    "score": ("score", "scores", "prediction", "predictions", "pred", "y_score", "sim", "similarity",
              "prediction_score"),
    "rank": ("rank", "ranks", "position", "pos", "prediction_rank"),
    "label": ("relevance", "label", "labels", "rel", "gain", "gains", "gains_relevance_score", "y_true",
              "target", "grade", "judgment", "judgement", "relevance_score", "qrel"),
}


@dataclass(frozen=True, eq=False)
class Judgments:
    """Relevance judgments: one row per (query, item) with a graded label.

    Attributes
    ----------
    qid, item : array-like
        Ids of shape ``(n,)``: integers, strings (numpy, lists), Arrow
        string arrays or :class:`StrIds` (what the TREC readers give), the
        last two kept as they are, without Python objects.
    label : ndarray of float64, shape (n,)
        Graded relevance. Negative labels mean "judged, not relevant" unless
        the convention says otherwise.
    source : str or None
        Where the rows came from, for messages.
    """

    qid: Any
    item: Any
    label: np.ndarray
    source: str | None = None

    def __len__(self) -> int:
        return int(self.label.shape[0])

    def __repr__(self) -> str:
        nq = _n_unique(self.qid) if len(self) else 0
        return f"Judgments({len(self)} rows, {nq} queries{', from ' + self.source if self.source else ''})"


@dataclass(frozen=True, eq=False)
class Rankings:
    """Ranked lists: one row per (query, item) with a score and/or a rank.

    ``qid`` and ``item`` are ``None`` when the rankings are a bare vector of
    scores aligned row by row with the judgments (LETOR predictions).
    A higher score is better; a lower rank is better (rank 1 first). When
    both are given the score decides, as trec_eval does.
    """

    qid: Any
    item: Any
    score: np.ndarray | None = None
    rank: np.ndarray | None = None
    source: str | None = None
    #: labels of these very rows (NaN: not judged) when one table holds both;
    #: spares the join with the judgments
    label: np.ndarray | None = None

    def __len__(self) -> int:
        arr = self.score if self.score is not None else self.rank
        return 0 if arr is None else int(arr.shape[0])

    def __repr__(self) -> str:
        return f"Rankings({len(self)} rows{', from ' + self.source if self.source else ''})"

    def order_key(self) -> np.ndarray:
        """Higher-is-better key: the score, or minus the rank."""
        if self.score is not None:
            return self.score
        assert self.rank is not None
        return -self.rank.astype(np.float64)


def _n_unique(ids: Any) -> int:
    if isinstance(ids, np.ndarray):
        return len(np.unique(ids))
    import pyarrow.compute as pc

    from ._ids import arrow_ids

    return len(pc.unique(arrow_ids(ids)))


def _table_ids(obj: Any, kind: str, col: str, where: str) -> Any:
    """An id column without Python objects: int64 ndarray, or Arrow strings of any width kept as they
    come (query ids are cut into runs and item ids hashed chunk by chunk before anything is widened)."""
    from ._ids import as_ids

    what = f"id column {col!r} in {where}"
    if kind == "pandas":
        import pyarrow as pa

        s = obj[col]
        if s.dtype.kind in "iub":
            return s.to_numpy().astype(np.int64, copy=False)
        try:
            arr = pa.Array.from_pandas(s)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            arr = s.to_numpy(dtype=object)
        return as_ids(arr, what, widen=False)
    if kind == "polars":
        if type(obj).__name__ == "LazyFrame":
            obj = obj.select(col).collect()
        s = obj[col]
        if s.n_chunks() > 1 and not s.dtype.is_numeric() and s.null_count() == 0:
            # chunk by chunk: Series.to_arrow() rechunks first (a copy of every string, ~10x slower)
            import pyarrow as pa

            return as_ids(pa.chunked_array([c.to_arrow() for c in s.get_chunks()]), what, widen=False)
        return as_ids(s.to_arrow(), what, widen=False)
    return as_ids(obj.column(col), what, widen=False)


def _norm(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", str(name).lower()).strip("_")


def _table_kind(obj: Any) -> str | None:
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


def _table_column(obj: Any, kind: str, col: str) -> np.ndarray:
    if kind == "pandas":
        s = obj[col]
        if s.dtype.kind in "iufb":
            return s.to_numpy()
        if s.isna().any() and s.dtype.kind != "O":
            return s.to_numpy(dtype=float, na_value=np.nan)
        return s.to_numpy(dtype=object) if s.dtype.kind not in "iufb" else s.to_numpy()
    if kind == "polars":
        if type(obj).__name__ == "LazyFrame":
            obj = obj.select(col).collect()
        s = obj[col]
        if s.dtype.is_numeric() and s.n_chunks() > 1:  # read as float64 (_numeric): written once, chunk by chunk
            out = np.empty(len(s), np.float64)
            pos = 0
            for c in s.get_chunks():
                out[pos:pos + len(c)] = c.to_numpy() if c.null_count() == 0 else c.cast(float).to_numpy()
                pos += len(c)
            return out
        if s.dtype.is_numeric():
            return s.to_numpy() if s.null_count() == 0 else s.cast(float).to_numpy()
        return np.asarray(s.to_list(), dtype=object)
    import pyarrow as pa

    from ._ids import arrow_to_numpy, chunked_to_numpy

    arr = obj.column(col)
    numeric = pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type) or pa.types.is_boolean(arr.type)
    if isinstance(arr, pa.ChunkedArray):
        if numeric and arr.num_chunks > 1:  # numbers are read as float64 (_numeric): written once, as such
            return chunked_to_numpy(arr, np.float64)
        arr = arr.combine_chunks()
    if numeric:
        if arr.null_count:
            return arrow_to_numpy(arr.cast(pa.float64()))
        return arrow_to_numpy(arr)
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    return np.asarray(arr.to_pylist(), dtype=object)


def _pick(columns: list[str], role: str, given: str | None, required: bool, where: str) -> str | None:
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


def _numeric(a: np.ndarray, what: str, where: str) -> np.ndarray:
    if a.dtype.kind in "iufb":
        return a.astype(np.float64, copy=False)
    try:
        return np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError):
        bad = next((x for x in a if not _is_number(x)), None)
        raise InputError(f"{what} in {where} must be numbers; found {bad!r}.") from None


def _is_number(x: Any) -> bool:
    try:
        float(x)
    except (TypeError, ValueError):
        return False
    return True


def split_table(
    table: Any,
    *,
    query_col: str | None = None,
    item_col: str | None = None,
    score_col: str | None = None,
    rank_col: str | None = None,
    label_col: str | None = None,
    source: str | None = None,
    need: str = "both",
) -> tuple[Judgments | None, Rankings | None]:
    """Read a long table into judgments and/or rankings (rows with a null label are unjudged)."""
    kind = _table_kind(table)
    if kind is None:
        raise InvalidParameterError(f"expected a pandas, polars or pyarrow table; got {type(table).__name__}.")
    where = source or f"the {kind} table"
    cols = _table_columns(table, kind)
    qc = _pick(cols, "query", query_col, True, where)
    ic = _pick(cols, "item", item_col, need == "judgments" or need == "both", where)
    lc = _pick(cols, "label", label_col, need == "judgments", where)
    sc = _pick(cols, "score", score_col, False, where)
    rc = _pick(cols, "rank", rank_col, False, where)
    if need == "rankings" and sc is None and rc is None:
        raise InvalidParameterError(f"no score or rank column in {where} (columns: {cols}); pass `score_col=` or `rank_col=`.")
    assert qc is not None
    from ._ids import filter_ids, id_length

    qid = _table_ids(table, kind, qc, where)
    n = id_length(qid)
    if n == 0:
        raise InputError(f"{where} has no rows.")
    # item ids kept as they come too: hashed chunk by chunk, widened only where a kernel compares them
    item = _table_ids(table, kind, ic, where) if ic is not None else np.arange(n, dtype=np.int64)
    judgments = rankings = None
    label = None
    if lc is not None and need in ("judgments", "both"):
        label = _numeric(_table_column(table, kind, lc), f"relevance column {lc!r}", where)
        judged = ~np.isnan(label)
        if need == "judgments" and not judged.all():
            raise InputError(f"relevance column {lc!r} in {where} has {int((~judged).sum())} missing values.")
        if judged.all():
            judgments = Judgments(qid, item, label, source=where)
        else:
            judgments = Judgments(filter_ids(qid, judged), filter_ids(item, judged), label[judged], source=where)
    if (sc is not None or rc is not None) and need in ("rankings", "both"):
        score = _numeric(_table_column(table, kind, sc), f"score column {sc!r}", where) if sc else None
        rank = _numeric(_table_column(table, kind, rc), f"rank column {rc!r}", where) if (rc and not sc) else None
        rq, ri, rl = qid, item, label
        if need == "both" and lc is not None:
            # one table with both columns: a row with a label but no score/rank is judged, not ranked
            key = score if score is not None else rank
            assert key is not None
            ranked = ~np.isnan(key)
            if not ranked.all():
                rq, ri = filter_ids(qid, ranked), filter_ids(item, ranked)
                score = score[ranked] if score is not None else None
                rank = rank[ranked] if rank is not None else None
                rl = label[ranked] if label is not None else None
        rankings = Rankings(rq, ri, score=score, rank=rank, source=where, label=rl)
    return judgments, rankings


def _is_pathlike(obj: Any) -> bool:
    return isinstance(obj, (str, os.PathLike))


def _from_nested(obj: Mapping[Any, Any], what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # C-level iteration (map / chain / fromiter): no Python-level loop per query or per item
    inner = list(obj.values())
    if not all(map(_is_mapping, inner)):
        q = next(q for q, docs in obj.items() if not isinstance(docs, Mapping))
        raise InvalidParameterError(
            f"{what} dict must map query -> {{item: value}}; query {q!r} maps to {type(obj[q]).__name__}."
        )
    lengths = np.fromiter(map(len, inner), dtype=np.int64, count=len(inner))
    total = int(lengths.sum())
    if total == 0:
        raise InputError(f"{what} is empty.")
    keys = list(compress(obj.keys(), lengths))
    qids = np.repeat(_id_array(keys), lengths[lengths > 0])
    items = _id_array(list(chain.from_iterable(inner)))
    raw = list(chain.from_iterable(map(_values, inner)))
    try:
        values = np.fromiter(raw, dtype=np.float64, count=total)
    except (TypeError, ValueError):
        values = _numeric(np.asarray(raw, dtype=object), f"{what} values", f"the {what} dict")
    return qids, items, values


def _is_mapping(x: Any) -> bool:
    return isinstance(x, Mapping)


def _values(d: Mapping[Any, Any]) -> Any:
    return d.values()


def _id_array(values: list[Any]) -> np.ndarray:
    """Integer ids as int64, anything else as an object array of str."""
    types = set(map(type, values))  # distinct types only: no Python loop per id below
    if types and all(issubclass(t, (int, np.integer)) and not issubclass(t, (bool, np.bool_)) for t in types):
        return np.asarray(values, dtype=np.int64)
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
        try:
            row = np.asarray(r)
        except ValueError:
            row = None
        if row is None or row.ndim != 1:
            raise InvalidParameterError(f"{what} row {i} must be a flat list of numbers.")
        rows.append(row)
    lengths = np.array([len(r) for r in rows], dtype=np.int64)
    flat = _numeric(np.concatenate(rows) if rows else np.zeros(0), f"{what} values", f"the {what} lists")
    if rows and (lengths == lengths[0]).all():
        return flat.reshape(len(rows), int(lengths[0]))
    return lengths, flat


def _long_from_rows(rows: tuple[np.ndarray, np.ndarray] | np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if isinstance(rows, np.ndarray):
        n_q, n_i = rows.shape
        qid = np.repeat(np.arange(n_q, dtype=np.int64), n_i)
        item = np.tile(np.arange(n_i, dtype=np.int64), n_q)
        vals = _numeric(rows.reshape(-1), f"{what} values", f"the {what} array")
        return qid, item, vals
    lengths, vals = rows
    qid = np.repeat(np.arange(lengths.shape[0], dtype=np.int64), lengths)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    item = np.arange(int(lengths.sum()), dtype=np.int64) - starts
    return qid, item, vals


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


def as_judgments(obj: Any, **columns: Any) -> Judgments:
    """Convert any accepted input to :class:`Judgments`.

    Examples
    --------
    >>> from ranklens import as_judgments
    >>> as_judgments({"q1": {"d1": 2, "d2": 0}})
    Judgments(2 rows, 1 queries, from the judgments dict)
    """
    if isinstance(obj, Judgments):
        return obj
    if isinstance(obj, Rankings):
        raise InvalidParameterError("`judgments` got a Rankings object; pass judgments first, rankings second.")
    if _is_pathlike(obj):
        from .io import read_judgments

        return read_judgments(obj, **columns)
    if isinstance(obj, Mapping):
        q, i, v = _from_nested(obj, "judgments")
        return Judgments(q, i, v, source="the judgments dict")
    if _table_kind(obj):
        j, _ = split_table(obj, need="judgments", **columns)
        assert j is not None
        return j
    if _is_empty_sequence(obj):
        raise InputError("judgments are empty.")
    if _is_matrix_like(obj):
        rows = _matrix_rows(obj, "y_true")
        q, i, v = _long_from_rows(rows, "y_true")
        if v.size == 0:
            raise InputError("judgments are empty.")
        return Judgments(q, i, v, source="the y_true matrix")
    raise InvalidParameterError(
        f"cannot read judgments from a {type(obj).__name__}; give a file path, a dict "
        "{query: {item: label}}, a 2-D array or list of lists, or a pandas/polars/pyarrow table."
    )


def as_rankings(obj: Any, **columns: Any) -> Rankings:
    """Convert any accepted input to :class:`Rankings`.

    Examples
    --------
    >>> from ranklens import as_rankings
    >>> as_rankings([[0.9, 0.1, 0.5]])
    Rankings(3 rows, from the y_score matrix)
    """
    if isinstance(obj, Rankings):
        return obj
    if isinstance(obj, Judgments):
        raise InvalidParameterError("`rankings` got a Judgments object; pass judgments first, rankings second.")
    if _is_pathlike(obj):
        from .io import read_rankings

        return read_rankings(obj, **columns)
    if isinstance(obj, Mapping):
        q, i, v = _from_nested(obj, "rankings")
        return Rankings(q, i, score=v, source="the rankings dict")
    if _table_kind(obj):
        _, r = split_table(obj, need="rankings", **columns)
        assert r is not None
        return r
    if _is_empty_sequence(obj):
        raise InputError("rankings are empty.")
    if isinstance(obj, np.ndarray) and obj.ndim == 1:
        return Rankings(None, None, score=_numeric(obj, "scores", "the score vector"), source="the score vector")
    if _is_matrix_like(obj):
        rows = _matrix_rows(obj, "y_score")
        q, i, v = _long_from_rows(rows, "y_score")
        return Rankings(q, i, score=v, source="the y_score matrix")
    if isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)):
        return Rankings(None, None, score=_numeric(np.asarray(obj), "scores", "the score list"), source="the score list")
    raise InvalidParameterError(
        f"cannot read rankings from a {type(obj).__name__}; give a file path, a dict "
        "{query: {item: score}}, a 2-D array or list of lists, a score vector, or a pandas/polars/pyarrow table."
    )
