"""One output schema for a result and a comparison, and its renderers.

Runs (a fused run, any :class:`~ranklens.data.Rankings`) are written by :func:`write_run` in the formats
ranklens reads (:data:`RUN_FORMATS`). Everything ranklens prints or returns as data goes through this
module: ``Result.to_dict`` / ``to_json`` / ``table`` / ``_repr_html_``, the same methods of ``Comparison``,
the command line (``ranklens eval``, ``ranklens compare``: ``-f table|json|csv|trec|markdown|latex|html``), and the
web report. One result has one JSON shape wherever it comes from.

The schema of a :class:`~ranklens.Result` (:func:`result_dict`)::

    {
      "aggregate": {measure: float | null},         # mean over the counted queries (a sum for num_*);
                                                    # null when no query is counted
      "per_query": {query: {measure: float}},       # only with per-query values; skipped queries left out
      "counted":   {measure: int},                  # queries in each aggregate
      "excluded":  [{"reason": str, "count": int,   # queries left out, or scored by a rule, and why
                     "examples": [str], "measures": [str]}],
      "convention": str                             # the convention's name
    }

Several named results (``ranklens eval QRELS RUN1 RUN2 -f json``): ``{"runs": {name: <result>}}``.

The schema of a :class:`~ranklens.Comparison` (:func:`comparison_dict`)::

    {
      "settings": {...},        # test, correction, alpha, confidence, ci_method, n_resamples, seed, convention...
      "baseline": str,
      "runs": [str],
      "metrics": [str],
      "rows": [{"metric", "run", "baseline", "mean", "n", "ci_low", "ci_high", ...}],   # COMPARISON_FIELDS
      "notes": [str]
    }

Numbers are plain floats and ints; NaN and infinities are ``null`` (the JSON is strict JSON). For
example:

>>> import ranklens
>>> from ranklens.render import render, result_dict
>>> res = ranklens.evaluate({"q1": {"a": 1, "b": 0}, "q2": {"c": 1}},
...                         {"q1": {"a": 0.2, "b": 0.9}, "q2": {"c": 1.0}}, ["mrr", "num_ret"])
>>> list(result_dict(res))
['aggregate', 'per_query', 'counted', 'excluded', 'convention']
>>> print(render(res, "table"))
measure   value  queries
------------------------
mrr      0.7500        2
num_ret       3        2
convention: ranklens
>>> print(render(res, "trec"), end="")  # doctest: +NORMALIZE_WHITESPACE
recip_rank            	all	0.7500
num_ret               	all	3
"""

from ._output.render import (
    COMPARISON_FIELDS,
    CORRECTION_NAMES,
    FORMATS,
    ComparisonLike,
    Renderable,
    ResultLike,
    comparison_cells,
    comparison_dict,
    comparison_header,
    comparison_legend,
    flat_dict,
    format_value,
    plain,
    render,
    render_rows,
    result_cells,
    result_dict,
    to_json,
)
from ._output.runs import RUN_FORMATS, run_format, write_run

__all__ = [
    "COMPARISON_FIELDS",
    "CORRECTION_NAMES",
    "ComparisonLike",
    "FORMATS",
    "RUN_FORMATS",
    "Renderable",
    "ResultLike",
    "comparison_cells",
    "comparison_dict",
    "comparison_header",
    "comparison_legend",
    "flat_dict",
    "format_value",
    "plain",
    "render",
    "render_rows",
    "result_cells",
    "result_dict",
    "run_format",
    "to_json",
    "write_run",
]
