"""Rows as every reader gives them: :class:`Records`, and the two roles they play.

Every input -- a TREC, LETOR, predictions, CSV/TSV, Parquet or JSON file, a
dict, a matrix, a pandas/polars/Arrow table -- becomes one :class:`Records`:
query and item ids and whichever value columns the input has (relevance
labels, scores, ranks). :meth:`Records.judgments` and :meth:`Records.rankings`
take the rows that play each role: :class:`Judgments` (rows with a label) and
:class:`Rankings` (rows with a score or rank), which the evaluation uses.
"""

from ._input.records import (
    Judgments,
    Rankings,
    Records,
)

__all__ = [
    "Judgments",
    "Rankings",
    "Records",
]
