"""The one registry of output formats: each format's name, and its writer for each kind of object it can render.

Every ``-f/--format`` option of the command line takes its choices from here (:func:`formats_for` of the kind the
command prints), and :func:`ranklens.render.render` / :func:`ranklens.render.render_rows` /
:func:`ranklens.render.render_document` write through :func:`writer`. Adding a format is one
:func:`register_format` call (or one entry below): it then appears in the choices of every command that prints
what it can render.

The kinds of object:

``result``
    a :class:`~ranklens.Result`, or named results ``{run: Result}`` (``ranklens eval``);
``comparison``
    a :class:`~ranklens.Comparison` (``ranklens compare``);
``pairs``
    a :class:`~ranklens.compare.PairwiseComparison`, every pair of runs compared (``ranklens compare --pairs all``);
``querytable``
    a :class:`~ranklens.QueryTable`: per-query values of named quantities with their means and intervals (the
    fairness measures, ``ranklens eval --candidates``);
``rows``
    a report table: a pyarrow Table or ``(column names, row dicts)`` (``monitor report``, ``experiment ab``,
    ``counterfactual``...);
``document``
    a :class:`~ranklens.render.Document`: an object with its own text layout and its own JSON data
    (``explain``, ``conventions``, ``monitor check``...);
``run``
    a run, :class:`~ranklens.data.Rankings`, written as a file ranklens reads back (``ranklens fuse``,
    :func:`ranklens.render.write_run`).

A writer of a run is ``write(run, tag) -> bytes`` (``tag``: the last column of a TREC run); a writer of any other
kind is ``write(obj, digits, per_query) -> text``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidParameterError
from . import pairs as _p
from . import querytable as _q
from . import runs as _r
from . import writers as _w

__all__ = ["FORMATS", "KINDS", "Format", "Writer", "formats_for", "register_format", "registered", "writer"]

#: What a format can render (see the module's docstring).
KINDS = ("result", "comparison", "pairs", "querytable", "rows", "document", "run")

#: A writer: ``write(obj, digits, per_query) -> text``; of a run, ``write(run, tag) -> bytes``.
Writer = Callable[..., Any]


@dataclass(frozen=True)
class Format:
    """An output format: its name (as ``-f`` spells it), its writer for each kind it renders, one line of help."""

    name: str
    writers: Mapping[str, Writer] = field(default_factory=dict)
    help: str = ""

    def __post_init__(self) -> None:
        unknown = sorted(set(self.writers) - set(KINDS))
        if unknown:
            raise InvalidParameterError(f"format {self.name!r}: unknown kind {', '.join(unknown)}; "
                                        f"the kinds are {', '.join(KINDS)}.")


_REGISTRY: dict[str, Format] = {}


def register_format(fmt: Format) -> None:
    """Add ``fmt`` to the registry (replacing a format of the same name): every command printing a kind it renders
    offers it from then on.

    >>> import ranklens
    >>> register_format(Format("upper", {"result": lambda obj, digits, per_query: str(obj).upper()}))
    >>> "upper" in formats_for("result")
    True
    >>> _ = registered().pop("upper")  # (undo the example)
    """
    _REGISTRY[fmt.name] = fmt


def registered() -> dict[str, Format]:
    """The registry itself: format name -> :class:`Format`, in the order the choices are listed."""
    return _REGISTRY


def formats_for(kind: str) -> tuple[str, ...]:
    """The names of the formats that render ``kind``, in registry order: the ``-f`` choices of a command that prints it.

    >>> formats_for("comparison")
    ('table', 'json', 'csv', 'markdown', 'latex', 'html')
    >>> formats_for("rows")
    ('table', 'json', 'csv')
    >>> formats_for("run")
    ('json', 'csv', 'trec', 'tsv', 'jsonl', 'parquet')
    """
    if kind not in KINDS:
        raise InvalidParameterError(f"`kind` must be one of {', '.join(KINDS)}; got {kind!r}.")
    return tuple(name for name, f in _REGISTRY.items() if kind in f.writers)


_WHAT = {"result": "a result", "comparison": "a comparison", "pairs": "a comparison of every pair",
         "querytable": "a per-query table", "rows": "a report",
         "document": "this", "run": "a run"}


def writer(name: str, kind: str) -> Writer:
    """The writer of format ``name`` for ``kind``; an unknown format, or one that does not render ``kind``, is
    refused with the formats that do."""
    fmt = _REGISTRY.get(name) if isinstance(name, str) else None
    if fmt is None:
        raise InvalidParameterError(f"`format` must be one of {', '.join(_REGISTRY)}; got {name!r}.")
    if kind not in fmt.writers:
        raise InvalidParameterError(f"`format` {name!r} does not render {_WHAT[kind]}; {_WHAT[kind]} is rendered as "
                                    f"{', '.join(formats_for(kind))}.")
    return fmt.writers[kind]


def _text(write: Callable[..., str], fmt: str) -> Writer:
    return functools.partial(write, fmt=fmt)


for _fmt in (
    Format("table", {"result": _w.result_text, "comparison": _w.comparison_text, "pairs": _p.pairs_text,
                     "querytable": _q.querytable_text, "rows": _w.rows_table, "document": _w.document_text},
           "aligned plain text"),
    Format("json", {"result": _w.json_text, "comparison": _w.json_text, "pairs": _p.pairs_json,
                    "querytable": _q.querytable_json, "rows": _w.rows_json, "document": _w.document_json,
                    "run": _r.json_run},
           "the JSON schema of ranklens.render, full precision (a run: {query: {item: score}})"),
    Format("csv", {"result": _w.result_csv, "comparison": _w.comparison_csv, "pairs": _p.pairs_csv,
                   "querytable": _q.querytable_csv, "rows": _w.rows_csv, "run": _r.csv_run},
           "long form, full precision"),
    Format("trec", {"result": _w.result_trec, "run": _r.trec_run},
           "trec_eval's `measure query|all value` lines (a run: `query Q0 item rank score tag`)"),
    *(Format(name, {"result": _text(_w.result_text, name), "comparison": _text(_w.comparison_text, name),
                    "pairs": _p.pairs_latex if name == "latex" else _text(_p.pairs_text, name),
                    "querytable": _text(_q.querytable_text, name)}, help_)
      for name, help_ in (("markdown", "a GitHub table"), ("latex", "a booktabs tabular"),
                          ("html", "a <div> of escaped tables"))),
    Format("tsv", {"run": _r.tsv_run}, "a run's columns query, item, score, rank, tab-separated"),
    Format("jsonl", {"run": _r.jsonl_run}, "a run's rows as JSON Lines"),
    Format("parquet", {"run": _r.parquet_run}, "a run's columns as a Parquet file"),
):
    register_format(_fmt)

#: The formats of a result as built in (:func:`formats_for` gives the registry's current ones).
FORMATS = formats_for("result")
