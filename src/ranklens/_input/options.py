"""Keyword options split into typed groups: table columns, file formats, convention fields.

The public face of this module is :mod:`ranklens.options`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidParameterError
from .dispatch import as_judgments, as_rankings, is_pathlike, split_table
from .files import detect_format, read_table
from .forms import unwrap
from .records import Judgments, Rankings
from .tables import table_kind

__all__ = ["COLUMN_KEYS", "FORMAT_KEYS", "Columns", "Formats", "load_inputs", "parse_sets", "split_options"]

#: The keywords naming table columns, and the role each names.
COLUMN_KEYS: dict[str, str] = {
    "query_col": "query", "item_col": "item", "score_col": "score", "rank_col": "rank", "label_col": "label",
}
#: The keywords about reading files (``format`` is the judgments' format, as ``judgments_format``).
FORMAT_KEYS: tuple[str, ...] = ("format", "judgments_format", "run_format", "groups")


@dataclass(frozen=True)
class Columns:
    """Which column of a long table plays which role (``None``: found by name, see
    :data:`ranklens.data.COLUMN_NAMES`).

    Examples
    --------
    >>> from ranklens.options import Columns
    >>> Columns(query="topic").judgments_kwargs()
    {'query_col': 'topic'}
    """

    query: str | None = None
    item: str | None = None
    score: str | None = None
    rank: str | None = None
    label: str | None = None

    def kwargs(self, roles: tuple[str, ...] = ("query", "item", "score", "rank", "label")) -> dict[str, str]:
        """The ``<role>_col=`` keywords of the columns given, for ``roles``."""
        return {f"{r}_col": v for r in roles if (v := getattr(self, r)) is not None}

    def judgments_kwargs(self) -> dict[str, str]:
        """The keywords of the columns judgments are read with (query, item, label)."""
        return self.kwargs(("query", "item", "label"))

    def rankings_kwargs(self) -> dict[str, str]:
        """The keywords of the columns rankings are read with (query, item, score, rank)."""
        return self.kwargs(("query", "item", "score", "rank"))


@dataclass(frozen=True)
class Formats:
    """How to read the files: the judgments' and the run's formats (``None``: detected) and the group
    file of a LETOR file without ``qid:``.

    Examples
    --------
    >>> from ranklens.options import Formats
    >>> Formats(judgments="trec", run="trec")
    Formats(judgments='trec', run='trec', groups=None)
    """

    judgments: str | None = None
    run: str | None = None
    groups: Any = None


def split_options(options: Mapping[str, Any]) -> tuple[Columns, Formats, dict[str, Any]]:
    """``(columns, formats, convention overrides)`` of a bag of keyword options.

    Column keys are ``query_col``, ``item_col``, ``score_col``, ``rank_col``,
    ``label_col``; format keys ``format`` (or ``judgments_format``), ``run_format``
    and ``groups``; every other key is a convention field override.

    Examples
    --------
    >>> from ranklens.options import split_options
    >>> cols, fmts, rest = split_options({"query_col": "topic", "run_format": "trec", "gain": "exponential"})
    >>> cols.query, fmts.run, rest
    ('topic', 'trec', {'gain': 'exponential'})
    """
    if options.get("format") is not None and options.get("judgments_format") is not None:
        raise InvalidParameterError("give the judgments' format once: `format=` or `judgments_format=`, not both.")
    columns = Columns(**{role: options.get(key) for key, role in COLUMN_KEYS.items()})
    judgments_format = options.get("format")
    formats = Formats(judgments=judgments_format if judgments_format is not None else options.get("judgments_format"),
                      run=options.get("run_format"), groups=options.get("groups"))
    rest = {k: v for k, v in options.items() if k not in COLUMN_KEYS and k not in FORMAT_KEYS}
    return columns, formats, rest


def load_inputs(judgments: Any, rankings: Any, columns: Columns | None = None,
                formats: Formats | None = None) -> tuple[Judgments, Rankings]:
    """Judgments and rankings from any accepted inputs (see :mod:`ranklens.data`); with
    ``rankings=None``, ``judgments`` is one table (in memory or a file) holding both.

    Examples
    --------
    >>> from ranklens.options import load_inputs
    >>> j, r = load_inputs({"q": {"a": 1, "b": 0}}, {"q": {"a": 0.2, "b": 0.9}})
    >>> len(j), r.score.tolist()
    (2, [0.2, 0.9])
    """
    columns = columns or Columns()
    formats = formats or Formats()
    if rankings is None:
        judgments = unwrap(judgments, "judgments")  # a Hugging Face Dataset, rows as dicts: one table
        if table_kind(judgments):
            j, r = split_table(judgments, need="both", **columns.kwargs())
        elif is_pathlike(judgments):
            j, r = read_table(judgments, format=formats.judgments, **columns.kwargs())
        else:
            raise InvalidParameterError(
                "`rankings` is missing; it may be left out only when `judgments` is a table with both a "
                "relevance column and a score or rank column."
            )
        if j is None:
            raise InvalidParameterError("the table has no relevance column (e.g. 'relevance', 'label', 'gain').")
        if r is None:
            raise InvalidParameterError("the table has no score or rank column (e.g. 'score', 'rank').")
        return j, r
    _check_columns_apply(columns, (judgments, formats.judgments), (rankings, formats.run))
    jfiles: dict[str, Any] = {}
    rfiles: dict[str, Any] = {}
    if is_pathlike(judgments):
        jfiles = {"format": formats.judgments, "groups": formats.groups}
    if is_pathlike(rankings):
        rfiles = {"format": formats.run}
    return (as_judgments(judgments, **columns.judgments_kwargs(), **jfiles),
            as_rankings(rankings, **columns.rankings_kwargs(), **rfiles))



#: The file formats whose columns have names (the others have fixed fields).
TABLE_FORMATS = ("csv", "tsv", "parquet", "jsonl", "json")


def _check_columns_apply(columns: Columns, *inputs: tuple[Any, str | None]) -> None:
    """Refuse column options when no input can have named columns: TREC, LETOR and predictions files and
    ``{query: {item: value}}`` dicts have none, and the options would be ignored silently."""
    given = sorted(columns.kwargs())
    if not given:
        return
    for obj, fmt in inputs:
        if is_pathlike(obj):
            try:
                if (fmt or detect_format(obj)) in TABLE_FORMATS:
                    return
            except OSError:
                return  # the reader reports the file
        elif not isinstance(obj, dict):
            return  # a table, or a form that may be one (records, datasets): its reader takes the columns
    raise InvalidParameterError(f"{', '.join(given)} name columns of a table (CSV, TSV, Parquet, JSON Lines, a "
                                "data frame); neither input is one, so there is no column to choose.")


#: Convention fields whose values are texts, taken as written by :func:`parse_sets`.
TEXT_FIELDS = ("name", "mirrors", "description")


def parse_sets(items: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """``--set FIELD=VALUE`` texts as convention overrides ``{field: value}``: ``none``/``null``, ``true``/
    ``false``, numbers (ASCII digits) and gain maps ``LABEL:GAIN,...`` parsed, other values kept as text
    (the convention refuses a text where it needs a number, naming the field).

    Examples
    --------
    >>> from ranklens.options import parse_sets
    >>> parse_sets(["gain=0:0,1:1,2:3", "empty=0", "relevance_level=2", "default_cutoff=none"])
    {'gain': {0.0: 0.0, 1.0: 1.0, 2.0: 3.0}, 'empty': 0, 'relevance_level': 2, 'default_cutoff': None}
    """
    out: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise InvalidParameterError(f"--set expects FIELD=VALUE, got {item!r}.")
        name = name.strip()
        out[name] = value.strip() if name in TEXT_FIELDS else _set_value(value.strip(), name)
    return out


def _set_value(text: str, name: str) -> Any:
    low = text.lower()
    if low in ("none", "null"):
        return None
    if low in ("true", "false"):
        return low == "true"
    if not text.isascii():  # int("１０") is 10: a number is written in ASCII digits
        return text
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if "=" in text or ":" in text:  # a gain mapping like 0:0,1:1,2:3
        pairs = {}
        for part in text.split(","):
            k, _, v = part.replace(":", "=").partition("=")
            try:
                pairs[float(k)] = float(v)
            except ValueError:
                raise InvalidParameterError(f"--set {name}={text}: a gain mapping is LABEL:GAIN,LABEL:GAIN... of "
                                            f"numbers (e.g. 0:0,1:1,2:3); got {part!r}.") from None
        return pairs
    return text
