"""Readers: files into :class:`~ranklens.records.Records` (then :class:`~ranklens.data.Judgments` and
:class:`~ranklens.data.Rankings`).

Formats (``format=`` or detected from the extension and the first lines):

``trec``        qrels ``qid iter item label`` or run ``qid Q0 item rank score [tag]``
                (``#`` lines are comments; a ``#`` inside an id is part of it)
``svmlight``    LETOR ``label qid:Q 1:v 2:v ... [# comment]`` for judgments; without
                ``qid:`` the groups come from a ``.query``/``.group`` file beside it
``predictions`` one score per line, aligned with the judgment rows (LETOR)
``csv``/``tsv`` a long table with a header (see :data:`ranklens.data.COLUMN_NAMES`)
``parquet``     a long table
``jsonl``       JSON Lines records of a long table
``json``        ``{query: {item: value}}`` or a list of records

Gzip-compressed files are read transparently, within a bound (``INFLATE_RATIO``: 100 times the compressed
size, or ``INFLATE_FLOOR``: 256 MiB); binary data (an SQLite file, a zip, a NUL byte in the first 64 KiB) is
refused at once. Every parse error names the file, the line number and the offending text. Every reader
(and every in-memory form) applies the same rules (:mod:`ranklens._input.validate`):

* a UTF-8 byte-order mark is dropped; ``\n``, ``\r\n`` and a bare ``\r``
  all end a line; bytes that are not UTF-8 are refused (file, line);
* relevance labels, scores and ranks must be finite numbers: NaN,
  infinities and missing values (an empty CSV cell, a JSON ``null``) are
  refused (file and line, or row), unless ``missing="exclude"`` asks to leave
  a row with a missing label or score out of that side, counted;
* TREC qrels lines have 4 fields and run lines at least 6 (the rest of a
  run line is skipped), as trec_eval reads them;
* CSV/TSV label, score and rank columns are decimal numbers; a header naming
  a column twice, list or struct columns (JSON Lines, Parquet) and a JSON
  that is not ``{query: {item: value}}`` or a list of records are refused.
"""

from ._input.files import (
    FORMATS,
    detect_format,
    read_judgments,
    read_rankings,
    read_records,
    read_table,
)
from ._input.opening import (
    INFLATE_FLOOR,
    INFLATE_RATIO,
    MAP_MIN_BYTES,
)

__all__ = [
    "FORMATS",
    "INFLATE_FLOOR",
    "INFLATE_RATIO",
    "MAP_MIN_BYTES",
    "detect_format",
    "read_judgments",
    "read_rankings",
    "read_records",
    "read_table",
]
