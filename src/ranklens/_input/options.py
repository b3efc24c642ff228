"""Keyword options split into typed groups: table columns, file formats, convention fields.

The public face of this module is :mod:`ranklens.options`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from .._defs.conventions import Convention
from ..errors import InputError, InvalidParameterError
from .coerce import MATRIX_SOURCES
from .dispatch import as_judgments, as_rankings, is_pathlike, split_table
from .files import detect_format, read_table
from .forms import unwrap
from .records import Judgments, Rankings
from .tables import table_kind
from .validate import check_missing

__all__ = ["COLUMN_KEYS", "FORMAT_KEYS", "Columns", "Formats", "load_inputs", "parse_sets", "split_options"]

#: The keywords naming table columns, and the role each names.
COLUMN_KEYS: dict[str, str] = {
    "query_col": "query", "item_col": "item", "score_col": "score", "rank_col": "rank", "label_col": "label",
}
#: The keywords about reading the inputs (``format`` is the judgments' format, as ``judgments_format``;
#: ``missing`` what a missing label or score is, :data:`ranklens._input.validate.MISSING`).
FORMAT_KEYS: tuple[str, ...] = ("format", "judgments_format", "run_format", "groups", "missing")


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
    """How to read the inputs: the judgments' and the run's file formats (``None``: detected), the group
    file of a LETOR file without ``qid:``, and what a missing label or score is (``"error"``: refused;
    ``"exclude"``: its row left out of that side, counted in ``Result.excluded``).

    Examples
    --------
    >>> from ranklens.options import Formats
    >>> Formats(judgments="trec", run="trec")
    Formats(judgments='trec', run='trec', groups=None, missing='error')
    """

    judgments: str | None = None
    run: str | None = None
    groups: Any = None
    missing: str = "error"


def split_options(options: Mapping[str, Any], own: tuple[str, ...] = ()) -> tuple[Columns, Formats, dict[str, Any]]:
    """``(columns, formats, convention overrides)`` of a bag of keyword options.

    Column keys are ``query_col``, ``item_col``, ``score_col``, ``rank_col``,
    ``label_col``; input keys ``format`` (or ``judgments_format``), ``run_format``,
    ``groups`` and ``missing``; every other key is a convention field override. A key that is none of
    these is refused, naming the nearest accepted one and every accepted keyword (``own``: the caller's
    named parameters, listed first).

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
                      run=options.get("run_format"), groups=options.get("groups"),
                      missing=check_missing(options.get("missing", "error")))
    rest = {k: v for k, v in options.items() if k not in COLUMN_KEYS and k not in FORMAT_KEYS}
    unknown = [k for k in rest if k not in CONVENTION_FIELDS]
    if unknown:
        raise InvalidParameterError(_unknown_keywords(unknown, own))
    return columns, formats, rest


#: The fields of a convention, which the other keywords of ``evaluate`` override.
CONVENTION_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Convention))


def _unknown_keywords(unknown: list[str], own: tuple[str, ...]) -> str:
    """The refusal of keywords no option and no convention field takes: each with the nearest accepted one,
    then every accepted keyword by kind."""
    groups = [("own", own), ("table columns", tuple(COLUMN_KEYS)), ("inputs", FORMAT_KEYS),
              ("convention fields", CONVENTION_FIELDS)]
    from difflib import get_close_matches  # only when refusing (an import on every evaluation's path otherwise)

    accepted = [k for _, keys in groups for k in keys]
    near = []
    for k in unknown:
        close = get_close_matches(str(k), accepted, n=1, cutoff=0.6)
        near.append(f"{k!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    listed = "; ".join(f"{name}: {', '.join(keys)}" for name, keys in groups if keys and name != "own")
    mine = f"its own: {', '.join(own)}; " if own else ""
    return (f"unknown keyword{'s' if len(unknown) > 1 else ''} {', '.join(near)}. Accepted: {mine}{listed}.")


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
    missing = formats.missing
    if rankings is None:
        judgments = unwrap(judgments, "judgments")  # a Hugging Face Dataset, rows as dicts: one table
        if table_kind(judgments):
            j, r = split_table(judgments, need="both", missing=missing, **columns.kwargs())
        elif is_pathlike(judgments):
            j, r = read_table(judgments, format=formats.judgments, missing=missing, **columns.kwargs())
        else:
            raise InvalidParameterError(
                "`run` is missing; it may be left out only when `judgments` is a table with both a "
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
    j = as_judgments(judgments, missing=missing, **columns.judgments_kwargs(), **jfiles)
    r = as_rankings(rankings, missing=missing, **columns.rankings_kwargs(), **rfiles)
    _same_rows(j, r)
    return j, r


def _same_rows(j: Judgments, r: Rankings) -> None:
    """Refuse two matrices (2-D arrays, lists of lists) whose rows differ in length: row ``q`` of the labels and
    row ``q`` of the scores are one query's list, item by item; a longer row would leave items unranked or
    unjudged without a word."""
    if j.source != MATRIX_SOURCES["judgments"] or r.source != MATRIX_SOURCES["rankings"]:
        return
    gone_j, gone_r = sum(x.count for x in j.left_out), sum(x.count for x in r.left_out)
    if gone_j or gone_r:  # rows left out (missing="exclude"): the lengths were checked before, per cell
        return
    nj, nr = np.bincount(j.qid), np.bincount(r.qid)
    if nj.shape == nr.shape and (nj == nr).all():
        return
    if nj.shape != nr.shape:
        raise InputError(f"the y_true and y_score matrices have {nj.shape[0]} and {nr.shape[0]} rows: one row per "
                         "query in both.")
    q = int(np.flatnonzero(nj != nr)[0])
    raise InputError(f"row {q} of the y_true matrix has {nj[q]} labels and row {q} of the y_score matrix "
                     f"{nr[q]} scores: a row's labels and scores are one list, item by item, of the same length.")



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
        if name not in CONVENTION_FIELDS:
            from difflib import get_close_matches

            close = get_close_matches(name, CONVENTION_FIELDS, n=1, cutoff=0.6)
            raise InvalidParameterError(f"--set {item}: unknown convention field {name!r}"
                                        f"{f' (did you mean {close[0]!r}?)' if close else ''}; valid fields: "
                                        f"{', '.join(CONVENTION_FIELDS)}.")
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
