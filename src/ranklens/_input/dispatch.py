"""Judgments and rankings from every accepted input (public face: :mod:`ranklens.data`)."""

from __future__ import annotations

import os
from typing import Any

from ..errors import InvalidParameterError
from .buffers import StrIds
from .coerce import judgment_records, ranking_records
from .files import read_judgments, read_rankings
from .records import Judgments, Rankings
from .tables import COLUMN_NAMES, table_records

__all__ = [
    "COLUMN_NAMES", "Judgments", "Rankings", "StrIds", "as_judgments", "as_rankings", "is_pathlike", "split_table",
]


def is_pathlike(obj: Any) -> bool:
    """Whether ``obj`` names a file (``str`` or ``os.PathLike``)."""
    return isinstance(obj, (str, os.PathLike))


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
    missing: str = "error",
) -> tuple[Judgments | None, Rankings | None]:
    """Read a long table into judgments and/or rankings (with ``missing="exclude"``, a row with a null label is
    no judgment and a row with a null score or rank is not ranked, counted; by default nulls are refused).

    Examples
    --------
    >>> import pyarrow as pa
    >>> from ranklens.data import split_table
    >>> t = pa.table({"query": [1, 1], "item": [7, 8], "label": [1.0, None], "score": [0.3, 0.4]})
    >>> j, r = split_table(t, missing="exclude")
    >>> len(j), len(r), j.left_out[0].count
    (1, 2, 1)
    """
    rec = table_records(table, query_col=query_col, item_col=item_col, score_col=score_col, rank_col=rank_col,
                        label_col=label_col, source=source, need=need, missing=missing)
    return (rec.judgments() if rec.has_labels else None), (rec.rankings() if rec.has_order else None)


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
    if is_pathlike(obj):
        return read_judgments(obj, **columns)
    return judgment_records(obj, **columns).judgments()


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
    if is_pathlike(obj):
        return read_rankings(obj, **columns)
    return ranking_records(obj, **columns).rankings()

