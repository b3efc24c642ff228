"""Subtopic judgments, the input of the diversity measures: rows ``(query, subtopic, item, judgment)``.

In a file, ndeval's qrels (the TREC Web track's diversity judgments): the four white-space separated fields
``topic subtopic docno judgment`` of a TREC qrels line, the second field naming the subtopic (a TREC qrels file
read for diversity measures is read this way, ``format="ndeval"`` says so explicitly). In memory: a table
(pandas, or anything with ``to_pandas()``: Arrow, polars) with a subtopic column (``subtopic``, ``subtopic_id``,
or ir_measures' ``iteration``), or an iterable of 4-tuples or named tuples (ir_measures' ``Qrel`` with its
``iteration``, pyndeval's ``SubtopicQrel``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError, InvalidParameterError
from .dispatch import is_pathlike
from .factorize import factorize_parts
from .ids import take_ids
from .records import Judgments
from .text import read_trec_columns

__all__ = ["SUBTOPIC_FORMATS", "SubtopicJudgments", "read_subtopics"]

#: The file formats of subtopic judgments (``trec``: a qrels file whose second field is read as the subtopic).
SUBTOPIC_FORMATS = ("ndeval", "trec")

_NAMES = {
    "query": ("query_id", "query", "qid", "topic"),
    "subtopic": ("subtopic", "subtopic_id", "iteration"),
    "item": ("doc_id", "item", "docno", "doc", "item_id"),
    "label": ("relevance", "label", "judgment", "rel"),
}


@dataclass(frozen=True, eq=False)
class SubtopicJudgments:
    """Judgments per subtopic: one row per (query, subtopic, item).

    Attributes
    ----------
    qid, item : array-like
        Ids, one per row (as :class:`~ranklens.records.Judgments`).
    subtopic : ndarray of int64
        The subtopic of each row, numbered from 0 in order of first appearance over the whole input (as
        pyndeval numbers them).
    label : ndarray of float64
        The judgment.
    source : str or None
        Where the rows came from.
    """

    qid: Any
    item: Any
    subtopic: np.ndarray
    label: np.ndarray
    source: str | None = None

    def __len__(self) -> int:
        return int(self.label.shape[0])

    def judgments(self) -> Judgments:
        """One row per judged (query, item), its largest judgment over the subtopics (the queries and items
        judged, for the rules every measure shares: which queries are evaluated, duplicates, ties)."""
        (q, i), _, _ = factorize_parts([self.qid, self.item])
        n_i = int(i.max()) + 1 if i.shape[0] else 1
        key = q.astype(np.int64) * n_i + i
        order = np.lexsort((-self.label, key))
        first = np.ones(order.shape[0], np.bool_)
        first[1:] = key[order][1:] != key[order][:-1]
        rows = order[first]
        return Judgments(take_ids(self.qid, rows), take_ids(self.item, rows), self.label[rows], source=self.source)


def read_subtopics(obj: Any, *, format: str | None = None, query_col: str | None = None,
                   item_col: str | None = None, label_col: str | None = None,
                   subtopic_col: str | None = None) -> SubtopicJudgments:
    """Subtopic judgments from a file (ndeval's qrels), a table or an iterable of 4-tuples.

    Examples
    --------
    >>> s = read_subtopics([("q1", "1", "d1", 1), ("q1", "2", "d1", 0), ("q1", "2", "d2", 1)])
    >>> s.subtopic.tolist(), s.label.tolist()
    ([0, 1, 1], [1.0, 0.0, 1.0])
    >>> read_subtopics({"q1": {"d1": 1}})
    Traceback (most recent call last):
    ...
    ranklens.errors.InvalidParameterError: the diversity measures need judgments per subtopic: ndeval's qrels \
file ('topic subtopic docno judgment'), a table with a subtopic column (subtopic, subtopic_id or iteration) or \
(query, subtopic, item, judgment) tuples; got a dict
    """
    if isinstance(obj, SubtopicJudgments):
        return obj
    if is_pathlike(obj):
        return _read_file(obj, format)
    if format is not None:
        raise InvalidParameterError(f"`format` is for a file; the judgments are a {type(obj).__name__}.")
    if hasattr(obj, "to_pandas") and not hasattr(obj, "iloc"):
        obj = obj.to_pandas()
    if hasattr(obj, "columns") and hasattr(obj, "iloc"):
        given = {"query": query_col, "subtopic": subtopic_col, "item": item_col, "label": label_col}
        cols = [_column(obj, k, given[k]) for k in ("query", "subtopic", "item", "label")]
        q, sub, item, rel = (obj[c].to_numpy() for c in cols)
        return _make(q, sub, item, rel, source="the judgments table")
    if isinstance(obj, Iterable) and not isinstance(obj, (str, bytes, dict)):
        rows = [_row(r, n) for n, r in enumerate(obj)]
        if not rows:
            raise InputError("the subtopic judgments are empty.")
        q, s, i, rel = zip(*rows, strict=True)
        return _make(np.array(q, dtype=object), np.array(s, dtype=object), np.array(i, dtype=object),
                     np.array(rel, dtype=object), source="the judgments")
    raise InvalidParameterError(
        "the diversity measures need judgments per subtopic: ndeval's qrels file ('topic subtopic docno "
        "judgment'), a table with a subtopic column (subtopic, subtopic_id or iteration) or (query, subtopic, "
        f"item, judgment) tuples; got a {type(obj).__name__}")


def _read_file(path: Any, fmt: str | None) -> SubtopicJudgments:
    from .files import detect_format
    from .opening import file_bytes

    if fmt is None:
        detected = detect_format(path)
        fmt = "ndeval" if detected == "trec" else detected
    if str(fmt).lower() not in SUBTOPIC_FORMATS:
        raise InvalidParameterError(f"{path}: the diversity measures read ndeval's qrels ('topic subtopic docno "
                                    f"judgment', --judgments-format ndeval or trec); not {fmt}.")

    qid, sub, item, label = read_trec_columns(file_bytes(path), str(path), {0: "str", 1: "str", 2: "str", 3: "num"},
                                              4, "judgments 'topic subtopic docno judgment'")
    (codes,), _, _ = factorize_parts([sub])
    out = SubtopicJudgments(qid, item, codes.astype(np.int64), label, source=str(path))
    _check_unique(out)
    return out


def _column(table: Any, what: str, given: str | None) -> str:
    names = [str(c) for c in table.columns]
    if given is not None:
        if given not in names:
            raise InvalidParameterError(f"the judgments table has no column {given!r} ({what}); it has "
                                        f"{', '.join(names)}.")
        return given
    found = next((c for c in _NAMES[what] if c in names), None)
    if found is None:
        raise InvalidParameterError(f"the judgments table has no {what} column ({', '.join(_NAMES[what])}); it has "
                                    f"{', '.join(names)}.")
    return found


def _row(r: Any, n: int) -> tuple[Any, Any, Any, Any]:
    fields = getattr(r, "_fields", None)
    if fields is not None:
        picked = [next((getattr(r, c) for c in _NAMES[w] + ("subtopic_id",) if c in fields), None)
                  for w in ("query", "subtopic", "item", "label")]
        if any(p is None for p in picked):
            raise InputError(f"the judgments' row {n} is a {type(r).__name__} without a query, subtopic "
                             f"(iteration), item or relevance field: {r!r}")
        return picked[0], picked[1], picked[2], picked[3]
    if not isinstance(r, (tuple, list)) or len(r) != 4:
        raise InputError(f"the judgments' row {n} is not (query, subtopic, item, judgment): {r!r}")
    return r[0], r[1], r[2], r[3]


def _make(q: np.ndarray, s: np.ndarray, i: np.ndarray, rel: np.ndarray, source: str) -> SubtopicJudgments:
    """Rows checked as every input's: ids present, judgments finite numbers (not text, not booleans)."""
    for what, col in (("query", q), ("subtopic", s), ("item", i)):
        if col.dtype.kind == "O":
            bad = np.array([x is None or (isinstance(x, float) and x != x) for x in col], dtype=np.bool_)
        else:
            bad = np.isnan(col) if col.dtype.kind == "f" else np.zeros(col.shape[0], np.bool_)
        if bad.any():
            raise InputError(f"{source}: a missing {what} id at row {int(np.flatnonzero(bad)[0])}")
    if rel.dtype.kind not in "iuf":
        ok = np.array([isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))
                       for x in rel], dtype=np.bool_)
        if not ok.all():
            n = int(np.flatnonzero(~ok)[0])
            raise InputError(f"{source}: the judgment at row {n} is not a number: {rel[n]!r}")
    label = rel.astype(np.float64)
    if not np.isfinite(label).all():
        n = int(np.flatnonzero(~np.isfinite(label))[0])
        raise InputError(f"{source}: the judgment at row {n} is {float(label[n])!r}, not a finite number")
    strings = [col.astype(str).astype(object) for col in (q, s, i)]
    (codes,), _, _ = factorize_parts([strings[1]])
    out = SubtopicJudgments(strings[0], strings[2], codes.astype(np.int64), label, source=source)
    _check_unique(out)
    return out


def _check_unique(s: SubtopicJudgments) -> None:
    """A (query, subtopic, item) judged twice is refused (ndeval keeps one of the two, whichever its sort leaves
    last)."""
    (q, i), _, _ = factorize_parts([s.qid, s.item])
    n_i = int(i.max()) + 1 if i.shape[0] else 1
    n_s = int(s.subtopic.max()) + 1 if s.subtopic.shape[0] else 1
    key = (q.astype(np.int64) * n_s + s.subtopic) * n_i + i
    order = np.argsort(key, kind="stable")
    dup = np.flatnonzero(key[order][1:] == key[order][:-1])
    if dup.shape[0]:
        row = int(order[dup[0] + 1])
        first = int(order[dup[0]])
        raise InputError(f"{s.source or 'the judgments'}: query {_id(s.qid, row)} item {_id(s.item, row)} is judged "
                         f"twice for one subtopic (rows {min(first, row)} and {max(first, row)})")


def _id(ids: Any, row: int) -> str:
    from .ids import ids_to_numpy

    return str(ids_to_numpy(take_ids(ids, np.array([row])))[0])
