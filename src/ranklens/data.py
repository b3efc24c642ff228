"""Judgments and rankings from every accepted input.

Accepted inputs (for judgments and for rankings alike):

* a :class:`Judgments` / :class:`Rankings` object;
* a path to a file (TREC qrels or run, LETOR/svmlight, predictions, CSV/TSV,
  Parquet, JSON Lines, JSON; gzip transparently), read by :mod:`ranklens.io`;
* a dict ``{query: {item: value}}`` (pytrec_eval / ranx style);
* a 2-D array or a list of lists (scikit-learn style: row = query,
  column = item), ragged lists allowed;
* a long table (pandas, polars, pyarrow) with named columns for the query,
  the item, the score or rank, and the relevance (a PyTerrier frame read by
  its own names: ``qid``, ``docno``, ``score``, ``rank``, ``label``);
* the forms of other libraries, recognised by type and field names
  (:mod:`ranklens._input.forms`): lists and iterators of ir_datasets / ir_measures
  records (``query_id``, ``doc_id`` and ``relevance`` or ``score``), rows as
  dicts, ranx ``Qrels`` / ``Run``, a Hugging Face ``datasets.Dataset``.

A list is a matrix only when it holds no record: anything else is refused
with the forms accepted.

A 1-D array of scores is accepted as rankings when it has one value per
judgment row (LETOR predictions). Files and in-memory forms alike become
:class:`~ranklens.records.Records` first (in-memory forms by
:mod:`ranklens._input.coerce`).
"""

from ._input.dispatch import (
    COLUMN_NAMES,
    Judgments,
    Rankings,
    StrIds,
    as_judgments,
    as_rankings,
    is_pathlike,
    split_table,
)

__all__ = [
    "COLUMN_NAMES",
    "Judgments",
    "Rankings",
    "StrIds",
    "as_judgments",
    "as_rankings",
    "is_pathlike",
    "split_table",
]
