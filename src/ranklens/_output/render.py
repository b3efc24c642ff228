"""The output formats of a result, of named results, of a comparison, of a report table and of a document.

The formats are those of the registry (:mod:`ranklens._output.formats`); their writers are in
:mod:`ranklens._output.writers`. The public face of this module is :mod:`ranklens.render`, whose docstring
describes the schema.
"""

from __future__ import annotations

from collections.abc import Mapping
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
from ..errors import InvalidParameterError
from .formats import FORMATS, writer
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
    "to_json",
]


def render(obj: Renderable, format: str = "table", *, digits: int = 4, per_query: bool = False) -> str:
    """Render a result, named results (``{run name: Result}``) or a comparison.

    Parameters
    ----------
    obj : Result, mapping of str to Result, or Comparison
        What to show; named results get one column (table) or one ``run`` value (csv) each.
    format : str, default="table"
        A format of the registry (:mod:`ranklens._output.formats`) that renders results, or comparisons.
        The built-in ones: ``table``: aligned plain text. ``json``: the schema of this module (full precision).
        ``csv``: long form, full precision (a result: ``[run,]query,measure,value``; a comparison:
        one line per run and metric). ``trec``: trec_eval's ``measure query|all value`` lines (results
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
    if isinstance(obj, ComparisonLike):
        return writer(format, "comparison")(obj, check_digits(digits), per_query)
    write = writer(format, "result")
    if not isinstance(obj, (ResultLike, Mapping)):
        raise InvalidParameterError(f"render takes a Result, a mapping of names to Results or a Comparison; "
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
