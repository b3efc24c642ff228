"""The output formats of a result, of named results, of a comparison (against a baseline, or of every pair), of a
report table, of a document and of a run.

The formats are those of the registry (:mod:`ranklens._output.formats`); their writers are in
:mod:`ranklens._output.writers`, :mod:`ranklens._output.pairs`, :mod:`ranklens._output.querytable` and
:mod:`ranklens._output.runs`. The public face of this module is :mod:`ranklens.render`, whose docstring describes
the schema.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._core.schema import (
    COMPARISON_FIELDS,
    ComparisonLike,
    Renderable,
    ResultLike,
    check_digits,
    comparison_dict,
    flat_dict,
    format_value,
    named_results,
    plain,
    result_cells,
    result_dict,
    to_json,
)
from .._input.records import Rankings
from ..errors import InputError, InvalidParameterError
from .formats import FORMATS, formats_for, writer
from .pairs import PairwiseLike
from .querytable import QueryTableLike
from .writers import (
    CORRECTION_NAMES,
    Document,
    comparison_cells,
    comparison_header,
    comparison_legend,
    format_p,
)

__all__ = [
    "COMPARISON_FIELDS",
    "CORRECTION_NAMES",
    "ComparisonLike",
    "Document",
    "FORMATS",
    "RUN_FORMATS",
    "Renderable",
    "ResultLike",
    "comparison_cells",
    "comparison_dict",
    "comparison_header",
    "comparison_legend",
    "flat_dict",
    "format_p",
    "format_value",
    "plain",
    "render",
    "render_document",
    "render_rows",
    "result_cells",
    "result_dict",
    "run_format",
    "to_json",
    "write_run",
]


def render(obj: Renderable | PairwiseLike | QueryTableLike, format: str = "table", *, digits: int = 4,
           per_query: bool = False) -> str:
    """Render a result, named results (``{run name: Result}``) or a comparison.

    Parameters
    ----------
    obj : Result, mapping of str to Result, Comparison, PairwiseComparison or QueryTable
        What to show; named results get one column (table) or one ``run`` value (csv) each.
    format : str, default="table"
        A format of the registry (:mod:`ranklens._output.formats`) that renders results, comparisons, or
        comparisons of every pair, or per-query tables (kinds ``result``, ``comparison``, ``pairs``,
        ``querytable``).
        The built-in ones: ``table``: aligned plain text. ``json``: the schema of this module (full precision).
        ``csv``: long form, full precision (a result: ``[run,]query,measure,value``; a comparison:
        one line per run and measure). ``trec``: trec_eval's ``measure query|all value`` lines (results
        only). ``markdown``: a GitHub table. ``latex``: a booktabs ``tabular``. ``html``: a ``<div>``
        with escaped tables (what a notebook shows).
    digits : int, default=4
        Decimals in table, trec, markdown, latex and html.
    per_query : bool, default=False
        Results: add the value of every query, in every format (the result must have them).

    Returns
    -------
    str

    Examples
    --------
    >>> import ranklens
    >>> qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
    >>> res = ranklens.evaluate(qrels, {"q1": {"a": 0.2, "b": 0.9}, "q2": {"c": 1.0}}, ["mrr"])
    >>> print(render(res, "csv", per_query=True), end="")
    query,measure,value
    q1,mrr,0.5
    q2,mrr,1.0
    all,mrr,0.75
    >>> print(render({"bm25": res}, "markdown", digits=2), end="")
    | measure | bm25 | queries |
    |:--|--:|--:|
    | mrr | 0.75 | 2 |
    <BLANKLINE>
    convention: ranklens
    """
    if isinstance(obj, PairwiseLike):
        return writer(format, "pairs")(obj, check_digits(digits), per_query)
    if isinstance(obj, QueryTableLike):
        return writer(format, "querytable")(obj, check_digits(digits), per_query)
    if isinstance(obj, ComparisonLike):
        return writer(format, "comparison")(obj, check_digits(digits), per_query)
    write = writer(format, "result")
    if not isinstance(obj, (ResultLike, Mapping)):
        raise InvalidParameterError(f"render takes a Result, a mapping of names to Results or a comparison; "
                                    f"got {type(obj).__name__}.")
    digits = check_digits(digits)
    if per_query and any(not r.has_per_query for _, r in named_results(obj)):
        raise InvalidParameterError("`per_query`: this result has no per-query values (evaluated with "
                                    "per_query=False).")
    return write(obj, digits, per_query)


def render_rows(table: Any, fmt: str = "table", *, digits: int = 4) -> str:
    """A report (a pyarrow Table, or ``(names, row dicts)``) in a format of the registry that renders reports
    (built in: table, csv with 12 decimals, json as :func:`plain`).

    >>> print(render_rows((["day", "ndcg@10"], [{"day": "2026-10-01", "ndcg@10": 0.5}])))
    day         ndcg@10
    2026-10-01   0.5000
    """
    return writer(fmt, "rows")(table, digits, False)


def render_document(doc: Document, fmt: str = "table") -> str:
    """A document in a format of the registry that renders documents (built in: table, json).

    >>> print(render_document(Document(lambda: "a = 1", lambda: {"a": 1}, indent=0), "json"))
    {
    "a": 1
    }
    """
    return writer(fmt, "document")(doc, 4, False)


#: The formats a run is written in, as built in (:func:`~ranklens._output.formats.formats_for` ``("run")`` gives the
#: registry's current ones); without a format or a known suffix a run is written as ``trec``.
RUN_FORMATS = formats_for("run")

_SUFFIXES = {".trec": "trec", ".txt": "trec", ".run": "trec", ".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl",
             ".ndjson": "jsonl", ".json": "json", ".parquet": "parquet", ".parq": "parquet"}


def run_format(path: str | os.PathLike[str] | None, format: str | None = None) -> str:
    """The format a run is written in: ``format`` (a format of the registry that writes runs), else the file's
    suffix, else ``"trec"``.

    >>> run_format("fused.parquet"), run_format(None, "CSV"), run_format("fused.out")
    ('parquet', 'csv', 'trec')
    """
    if format is not None:
        f = str(format).lower()
        f = "jsonl" if f == "ndjson" else f
        if f not in formats_for("run"):
            raise InvalidParameterError(f"a run is written as {', '.join(formats_for('run'))}; got format {format!r}.")
        return f
    if path is None:
        return "trec"
    name = str(path).lower()
    return _SUFFIXES.get(os.path.splitext(name[:-3] if name.endswith(".gz") else name)[1], "trec")


def write_run(run: Rankings, path: str | os.PathLike[str] | None = None, format: str | None = None, *,
              tag: str = "ranklens") -> str | None:
    """Write a run in a format of the registry that writes runs (built in: :data:`RUN_FORMATS`); every reader of
    ranklens reads it back to the same ids and the same scores (:mod:`ranklens._output.runs`).

    Parameters
    ----------
    run : Rankings
        The run (``ranklens.fuse`` returns one; :func:`ranklens.as_rankings` makes one of any input).
    path : str or path, optional
        The file; without it the text is returned (``parquet`` needs a file).
    format : str, optional
        ``trec`` (default), ``csv``, ``tsv``, ``jsonl``, ``json`` or ``parquet``; by default from the
        file's suffix (``.csv``, ``.tsv``, ``.jsonl``, ``.json``, ``.parquet``; anything else: TREC).
    tag : str, default="ranklens"
        The last column of a TREC run.

    Returns
    -------
    str or None
        The text, when no ``path`` is given.

    Examples
    --------
    >>> import ranklens
    >>> from ranklens.render import write_run
    >>> print(write_run(ranklens.as_rankings({"q1": {"a": 0.5, "b": 2.0}}), tag="demo"), end="")
    q1 Q0 b 1 2 demo
    q1 Q0 a 2 0.5 demo
    """
    if not isinstance(run, Rankings):
        raise InvalidParameterError(f"`run` must be a Rankings object (ranklens.as_rankings makes one); got "
                                    f"{type(run).__name__}.")
    if run.qid is None or run.item is None:
        raise InvalidParameterError("this run is a bare vector of scores without query and item ids: it cannot be "
                                    "written as a run.")
    if not tag or any(c.isspace() for c in tag):
        raise InvalidParameterError(f"`tag` must be one word without white space; got {tag!r}.")
    fmt = run_format(path, format)
    if fmt == "parquet" and path is None:
        raise InvalidParameterError("a Parquet run is written to a file: give `path`.")
    data = writer(fmt, "run")(run, tag)
    if path is None:
        return str(data.decode("utf-8"))
    try:
        Path(path).write_bytes(data)
    except OSError as exc:
        raise InputError(f"{path}: cannot write the run ({exc.strerror or exc}).") from None
    return None
