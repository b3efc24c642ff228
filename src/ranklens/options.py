"""Keyword options split into typed groups: table columns, file formats, convention fields.

``ranklens.evaluate(..., **options)`` (and ``explain``, the Spark engine, the
CLI) take one bag of keywords. :func:`split_options` separates it, in this one
place, into :class:`Columns` (which table column plays which role),
:class:`Formats` (how to read the files) and the rest, the convention field
overrides; :func:`load_inputs` reads judgments and rankings with the first two.
"""

from ._input.options import (
    COLUMN_KEYS,
    FORMAT_KEYS,
    TABLE_FORMATS,
    TEXT_FIELDS,
    Columns,
    Formats,
    load_inputs,
    parse_sets,
    split_options,
)

__all__ = [
    "COLUMN_KEYS",
    "Columns",
    "FORMAT_KEYS",
    "Formats",
    "TABLE_FORMATS",
    "TEXT_FIELDS",
    "load_inputs",
    "parse_sets",
    "split_options",
]
