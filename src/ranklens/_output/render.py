"""One output schema for a result and a comparison, and its renderers.

Everything ranklens prints or returns as data goes through this module: ``Result.to_dict`` /
``to_json`` / ``table`` / ``_repr_html_``, the same methods of ``Comparison``, the command line
(``ranklens eval``, ``ranklens compare``: ``-f table|json|csv|trec|markdown|latex|html``), and the
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

from __future__ import annotations

import csv
import datetime as _dt
import io
import json
import math
import re
from collections.abc import Mapping
from enum import Enum
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ._display import html_table, latex_escape, latex_table, markdown_table, text_table
from .errors import InvalidParameterError

__all__ = [
    "COMPARISON_FIELDS",
    "CORRECTION_NAMES",
    "FORMATS",
    "ComparisonLike",
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
    "to_json",
]

#: The output formats, as ``-f/--format`` spells them in every command.
FORMATS = ("table", "json", "csv", "trec", "markdown", "latex", "html")

#: Every field of a comparison row, in the order of the CSV columns and of ``Comparison.to_pandas()``.
COMPARISON_FIELDS = [
    "metric", "run", "baseline", "mean", "n", "ci_low", "ci_high", "t_low", "t_high", "n_pairs", "diff",
    "diff_low", "diff_high", "diff_t_low", "diff_t_high", "wins", "ties", "losses", "effect_size", "test",
    "statistic", "p_value", "p_adjusted", "significant", "only_baseline", "only_run",
]

#: The multiple-testing corrections, as the legend of a comparison names them.
CORRECTION_NAMES = {
    "holm": "Holm (family-wise error)",
    "bonferroni": "Bonferroni (family-wise error)",
    "bh": "Benjamini-Hochberg (false discovery rate)",
    "none": "none",
}


@runtime_checkable
class ResultLike(Protocol):
    """What the renderers read of a :class:`~ranklens.Result`."""

    measures: list[Any]
    aggregate: dict[str, float]
    queries: np.ndarray
    values: np.ndarray
    counted: dict[str, int]
    excluded: list[Any]
    convention: Any
    has_per_query: bool


@runtime_checkable
class ComparisonLike(Protocol):
    """What the renderers read of a :class:`~ranklens.Comparison`."""

    runs: list[str]
    baseline: str
    metrics: list[str]
    rows: list[dict[str, Any]]
    settings: dict[str, Any]
    notes: list[str]


Renderable = ResultLike | ComparisonLike | Mapping[str, ResultLike]


# -- plain data ---------------------------------------------------------------------------------------------
def plain(v: Any) -> Any:
    """``v`` as JSON data: NaN and infinities as None, numpy scalars as Python ones, datetimes as ISO-8601
    (UTC, with a ``Z``), mappings and sequences converted item by item, anything else as its text.

    >>> plain({"a": float("nan"), "b": np.int64(3), "c": [np.float32(0.5)], 1: _dt.date(2024, 3, 1)})
    {'a': None, 'b': 3, 'c': [0.5], '1': '2024-03-01'}
    """
    if isinstance(v, bool) or v is None or isinstance(v, (str, int)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, Enum):
        return plain(v.value)
    if isinstance(v, _dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        return v.isoformat() + "Z"
    if isinstance(v, _dt.date):
        return v.isoformat()
    if isinstance(v, Mapping):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, np.ndarray):
        return [plain(x) for x in v.tolist()]
    if hasattr(v, "item") and not isinstance(v, bytes):
        try:
            return plain(v.item())
        except (ValueError, TypeError):
            return str(v)
    return str(v)


def _reason(e: Any) -> str:
    """The reason of an exclusion as text (its ``reason`` is a text or an enum whose value is the text)."""
    text = getattr(e, "text", None)  # Exclusion.text: the reason with the value queries were scored
    if isinstance(text, str):
        return text
    r = e.reason
    return str(r.value) if isinstance(r, Enum) else str(r)


def result_dict(res: ResultLike, per_query: bool | None = None) -> dict[str, Any]:
    """The schema of one result (see the module's docstring); ``per_query`` default: when it has them.

    >>> import ranklens
    >>> res = ranklens.evaluate({"q": {"a": 1}, "e": {"b": 0}}, {"q": {"a": 1.0}, "e": {"b": 1.0}}, ["mrr"])
    >>> d = result_dict(res)
    >>> d["aggregate"], d["per_query"], d["counted"], d["excluded"][0]["examples"]
    ({'mrr': 1.0}, {'q': {'mrr': 1.0}}, {'mrr': 1}, ['e'])
    """
    d: dict[str, Any] = {"aggregate": {k: plain(float(v)) for k, v in res.aggregate.items()}}
    if per_query and not res.has_per_query:
        raise InvalidParameterError("this result has no per-query values (evaluated with per_query=False).")
    if per_query if per_query is not None else res.has_per_query:
        keys = [m.key for m in res.measures]
        out: dict[str, dict[str, float]] = {}
        for q, row in zip(res.queries.tolist(), np.asarray(res.values, dtype=np.float64).tolist()):
            vals = {k: v for k, v in zip(keys, row) if not math.isnan(v)}
            if vals:
                out[str(q)] = vals
        d["per_query"] = out
    d["counted"] = {k: int(v) for k, v in res.counted.items()}
    d["excluded"] = [{"reason": _reason(e), "count": int(e.count), "examples": [str(x) for x in e.examples],
                      "measures": [str(x) for x in e.measures]} for e in res.excluded]
    d["convention"] = res.convention.name
    return d


def flat_dict(res: ResultLike, prefix: str = "") -> dict[str, float]:
    """``{prefix + flat name: mean}``, names experiment trackers accept (``ndcg@10`` -> ``ndcg_at_10``).

    >>> import ranklens
    >>> flat_dict(ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["ndcg@10"]), "test_")
    {'test_ndcg_at_10': 1.0}
    """
    from .measures import flat_name

    flat = {f"{prefix}{flat_name(k)}": float(v) for k, v in res.aggregate.items()}
    if len(flat) < len(res.aggregate):
        raise InvalidParameterError(
            f"two measures get the same flat name ({', '.join(res.aggregate)}); evaluate them separately."
        )
    return flat


def comparison_dict(c: ComparisonLike) -> dict[str, Any]:
    """The schema of a comparison (see the module's docstring): plain data, NaN as None."""
    return {
        "settings": plain(dict(c.settings)),
        "baseline": c.baseline,
        "runs": list(c.runs),
        "metrics": list(c.metrics),
        "rows": [{k: plain(v) for k, v in r.items()} for r in c.rows],
        "notes": list(c.notes),
    }


def _schema(obj: Renderable, per_query: bool | None) -> dict[str, Any]:
    if isinstance(obj, ComparisonLike):
        return comparison_dict(obj)
    if isinstance(obj, Mapping):
        return {"runs": {str(name): result_dict(r, per_query) for name, r in obj.items()}}
    return result_dict(obj, per_query)


def to_json(obj: Renderable, *, per_query: bool | None = None, indent: int | None = 2) -> str:
    """The schema of a result, of named results or of a comparison, as strict JSON (NaN as null)."""
    return json.dumps(_schema(obj, per_query), indent=indent, allow_nan=False)


# -- cells: what every layout shows -------------------------------------------------------------------------
def format_value(v: float, digits: int = 4, *, summed: bool = False) -> str:
    """A value as the tables show it: ``digits`` decimals, a summed count as an integer, NaN as ``n/a``.

    >>> format_value(0.123456), format_value(12.0, summed=True), format_value(float("nan"))
    ('0.1235', '12', 'n/a')
    """
    if v is None or math.isnan(v):
        return "n/a"
    if summed and float(v).is_integer():
        return f"{int(v)}"
    return f"{v:.{digits}f}"


def _named(obj: ResultLike | Mapping[str, ResultLike]) -> list[tuple[str | None, ResultLike]]:
    if isinstance(obj, Mapping):
        if not obj:
            raise InvalidParameterError("nothing to render: the mapping of results is empty.")
        return [(str(k), v) for k, v in obj.items()]
    return [(None, obj)]


def result_cells(obj: ResultLike | Mapping[str, ResultLike],
                 digits: int = 4) -> tuple[list[str], list[list[str]], list[str]]:
    """Header, rows and the lines below of the aggregate table of a result or of named results.

    One column per result (``value`` for a result without a name), then the queries each measure
    counts (``43/42`` when runs differ); below: the convention and what was left out.

    >>> import ranklens
    >>> res = ranklens.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"a": 0.2, "b": 0.9}}, ["mrr"])
    >>> result_cells({"bm25": res})
    (['measure', 'bm25', 'queries'], [['mrr', '0.5000', '1']], ['convention: ranklens'])
    """
    named = _named(obj)
    first = named[0][1]
    header = ["measure"] + [name or "value" for name, _ in named] + ["queries"]
    rows = []
    for m in first.measures:
        k = m.key
        cells = [k] + [format_value(r.aggregate.get(k, math.nan), digits, summed=m.summed) for _, r in named]
        counts = list(dict.fromkeys(str(r.counted.get(k, 0)) for _, r in named))
        rows.append(cells + ["/".join(counts) if len(counts) > 1 else counts[0]])
    below = [f"convention: {first.convention.name}"]
    seen = set()
    for name, r in named:
        for e in r.excluded:
            text = f"note ({name}): {e}" if len(named) > 1 else f"note: {e}"
            if text not in seen:
                seen.add(text)
                below.append(text)
    return header, rows, below


def _per_query_cells(res: ResultLike, digits: int) -> tuple[list[str], list[list[str]]]:
    measures = res.measures
    header = ["query"] + [m.key for m in measures]
    rows = []
    for q, vals in zip(res.queries.tolist(), np.asarray(res.values, dtype=np.float64).tolist()):
        rows.append([str(q)] + [format_value(v, digits, summed=m.summed) if not math.isnan(v) else "-"
                                for v, m in zip(vals, measures)])
    return header, rows


def _pfmt(p: Any) -> str:
    if p is None or math.isnan(p):
        return "n/a"
    return f"{p:.4f}" if p >= 0.0001 else f"{p:.1e}"


def comparison_header(c: ComparisonLike) -> list[str]:
    """The column names of a comparison's table (one per :func:`comparison_cells` cell)."""
    s = c.settings
    ci = f"{s['confidence']:.0%} CI"
    corr = "p (adj.)" if s["correction"] == "none" else f"p ({s['correction']})"
    return ["run", "mean", ci, "queries", "diff", f"{ci} diff", "W/T/L", "d", "p", corr]


def comparison_cells(c: ComparisonLike, r: Mapping[str, Any], digits: int = 4) -> list[str]:
    """The cells of one row of a comparison: means and intervals with ``digits`` decimals, ``*`` after a
    significant corrected p-value, ``(baseline)`` in the baseline's row."""
    f = lambda v: format_value(v, digits)  # noqa: E731
    cells = [r["run"], f(r["mean"]), f"[{f(r['ci_low'])}, {f(r['ci_high'])}]", str(r["n"])]
    if r["run"] == c.baseline:
        return cells + ["(baseline)", "", "", "", "", ""]
    sig = "*" if r["significant"] else ""
    return cells + [
        f"{r['diff']:+.{digits}f}" if not math.isnan(r["diff"]) else "n/a",
        f"[{f(r['diff_low'])}, {f(r['diff_high'])}]",
        f"{r['wins']}/{r['ties']}/{r['losses']}",
        f"{r['effect_size']:.2f}" if not math.isnan(r["effect_size"]) else "n/a",
        _pfmt(r["p_value"]),
        _pfmt(r["p_adjusted"]) + sig,
    ]


def comparison_legend(c: ComparisonLike) -> list[str]:
    """The lines that say what a comparison's table shows: test, correction, intervals, columns."""
    s = c.settings
    resampled = f", {s['n_resamples']} resamples, seed {s['seed']}"
    return [
        f"* significant at alpha={s['alpha']:g} after correction ({CORRECTION_NAMES[s['correction']]}, "
        f"over {s['n_tests']} tests: runs x metrics)",
        f"test: {s['test_description']}" + (resampled if s["test"] in ("randomization", "bootstrap") else ""),
        (f"intervals: {s['ci_method']} bootstrap over queries ({s['n_resamples']} resamples, seed {s['seed']}); "
         "t intervals in json/csv" if s["ci_method"] != "t" else "intervals: Student's t"),
        f"diff = run - baseline over the queries both count; W/T/L = queries where the run is above / equal "
        f"to / below the baseline; d = Cohen's d_z (mean diff / sd of diffs); convention: {s['convention']}",
    ]


# -- results ------------------------------------------------------------------------------------------------
def _result_text(obj: ResultLike | Mapping[str, ResultLike], fmt: str, digits: int, per_query: bool) -> str:
    named = _named(obj)
    header, rows, below = result_cells(obj, digits)
    sections: list[tuple[str, list[str], list[list[str]]]] = []
    if per_query:
        for name, r in named:
            sections.append((f"per query ({name})" if name else "per query", *_per_query_cells(r, digits)))
    if fmt == "table":
        lines: list[str] = []
        for title, h, body in sections:
            lines += [f"{title}:"] + text_table(h, body) + [""]
        return "\n".join(lines + text_table(header, rows) + below)
    if fmt == "markdown":
        lines = []
        for title, h, body in sections:
            lines += [f"**{title}**", ""] + markdown_table(h, body) + [""]
        return "\n".join(lines + markdown_table(header, rows) + [""] + below) + "\n"
    if fmt == "latex":
        lines = []
        for title, h, body in sections:
            lines += latex_table(h, body, [title]) + [""]
        return "\n".join(lines + latex_table(header, rows, below)) + "\n"
    # html
    first = named[0][1]
    conv = first.convention
    if len(named) == 1:
        title = f"ranklens Result: {len(first.queries)} queries, convention {conv.name!r}"
    else:
        title = f"ranklens results: {len(named)} runs, convention {conv.name!r}"
    notes = [f"convention {conv.name}: {conv.description or conv.mirrors}"] + below[1:]
    tables = sections + [("", header, rows)]  # as in the text: per-query values first, the aggregates last
    first_title, first_header, first_rows = tables[0]
    return html_table(first_header, first_rows, title=f"{title}; {first_title}" if first_title else title,
                      notes=notes, sections=tables[1:])


def _result_csv(obj: ResultLike | Mapping[str, ResultLike], per_query: bool) -> str:
    named = _named(obj)
    with_run = named[0][0] is not None
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow((["run"] if with_run else []) + ["query", "measure", "value"])
    for name, res in named:
        run = [name] if with_run else []
        keys = [m.key for m in res.measures]
        if per_query:
            for q, vals in zip(res.queries.tolist(), np.asarray(res.values, dtype=np.float64).tolist()):
                for k, v in zip(keys, vals):
                    if not math.isnan(v):
                        w.writerow(run + [str(q), k, repr(v)])
        for k in keys:
            v = float(res.aggregate[k])
            w.writerow(run + ["all", k, "" if math.isnan(v) else repr(v)])
    return buf.getvalue()


def _result_trec(obj: ResultLike | Mapping[str, ResultLike], digits: int, per_query: bool) -> str:
    """trec_eval's layout: ``measure (padded to 22) TAB query|all TAB value``, counts as integers."""
    buf = io.StringIO()

    def line(name: str, q: str, v: float, summed: bool) -> None:
        value = f"{int(round(v))}" if summed and not math.isnan(v) else f"{v:.{digits}f}"
        buf.write(f"{name:<22}\t{q}\t{value}\n")

    for _, res in _named(obj):
        measures = res.measures
        if per_query:
            for q, vals in zip(res.queries.tolist(), np.asarray(res.values, dtype=np.float64).tolist()):
                for m, v in zip(measures, vals):
                    if not math.isnan(v):
                        line(m.trec_name, str(q), v, m.summed)
        for m in measures:
            line(m.trec_name, "all", float(res.aggregate[m.key]), m.summed)
    return buf.getvalue()


# -- comparisons --------------------------------------------------------------------------------------------
def _comparison_text(c: ComparisonLike, fmt: str, digits: int) -> str:
    header = comparison_header(c)
    if fmt == "table":
        out: list[str] = []
        for m in c.metrics:
            rows = [comparison_cells(c, r, digits) for r in c.rows if r["metric"] == m]
            out += [f"{m}  (baseline: {c.baseline})"] + text_table(header, rows) + [""]
        return "\n".join(out + comparison_legend(c) + [f"note: {n}" for n in c.notes])
    if fmt == "markdown":
        rows = [[r["metric"]] + comparison_cells(c, r, digits) for r in c.rows]
        lines = markdown_table(["metric"] + header, rows, left=2)
        return "\n".join(lines + [""] + comparison_legend(c) + [f"Note: {n}" for n in c.notes]) + "\n"
    if fmt == "latex":
        rows = []
        for r in c.rows:
            cells = [latex_escape(x) for x in [r["metric"]] + comparison_cells(c, r, digits)]
            if r.get("significant"):
                cells[5] = f"\\textbf{{{cells[5]}}}$^\\dagger$"
                cells[-1] = cells[-1].replace("*", "")
            rows.append(cells)
        lines = latex_table(["metric"] + header, [], comparison_legend(c), left=2)
        return "\n".join(lines[:-2] + [" & ".join(r) + " \\\\" for r in rows] + lines[-2:]) + "\n"
    # html
    sections = [(f"{m}  (baseline: {c.baseline})", header,
                 [comparison_cells(c, r, digits) for r in c.rows if r["metric"] == m]) for m in c.metrics]
    title = f"ranklens Comparison: {len(c.runs)} runs, convention {c.settings['convention']!r}"
    first = sections[0]
    return html_table(first[1], first[2], title=f"{title}; {first[0]}", sections=sections[1:],
                      notes=comparison_legend(c) + [f"note: {n}" for n in c.notes])


def _comparison_csv(c: ComparisonLike) -> str:
    """One line per run and metric, every field (:data:`COMPARISON_FIELDS`), full precision."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COMPARISON_FIELDS)
    for r in c.rows:
        cells = []
        for k in COMPARISON_FIELDS:
            v = plain(r.get(k))
            cells.append("" if v is None else repr(v) if isinstance(v, float) else v)
        w.writerow(cells)
    return buf.getvalue()


# -- the entry point ------------------------------------------------------------------------------------------
def render(obj: Renderable, format: str = "table", *, digits: int = 4, per_query: bool = False) -> str:
    """Render a result, named results (``{run name: Result}``) or a comparison.

    Parameters
    ----------
    obj : Result, mapping of str to Result, or Comparison
        What to show; named results get one column (table) or one ``run`` value (csv) each.
    format : {"table", "json", "csv", "trec", "markdown", "latex", "html"}
        ``table``: aligned plain text. ``json``: the schema of this module (full precision).
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
    if format not in FORMATS:
        raise InvalidParameterError(f"`format` must be one of {', '.join(FORMATS)}; got {format!r}.")
    if isinstance(digits, bool) or not isinstance(digits, (int, np.integer)) or not 0 <= digits <= 17:
        raise InvalidParameterError(f"`digits` must be an integer in [0, 17]; got {digits!r}.")
    digits = int(digits)
    if format == "json":
        return to_json(obj, per_query=per_query)
    if isinstance(obj, ComparisonLike):
        if format == "trec":
            raise InvalidParameterError("`format` 'trec' is for results (trec_eval's layout); a comparison is "
                                        "rendered as table, json, csv, markdown, latex or html.")
        return _comparison_csv(obj) if format == "csv" else _comparison_text(obj, format, digits)
    if not isinstance(obj, (ResultLike, Mapping)):
        raise InvalidParameterError(f"render takes a Result, a mapping of names to Results or a Comparison; "
                                    f"got {type(obj).__name__}.")
    if per_query and any(not r.has_per_query for _, r in _named(obj)):
        raise InvalidParameterError("`per_query`: this result has no per-query values (evaluated with "
                                    "per_query=False).")
    if format == "csv":
        return _result_csv(obj, per_query)
    if format == "trec":
        return _result_trec(obj, digits, per_query)
    return _result_text(obj, format, digits, per_query)


# -- report tables (the monitoring commands) ----------------------------------------------------------------
def _row_cell(v: Any, digits: int) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.{digits}f}"
    if hasattr(v, "isoformat"):
        s = v.isoformat()
        return s[:10] if s.endswith("T00:00:00") else s.replace("T", " ")
    return "" if v is None else str(v)


def render_rows(table: Any, fmt: str = "table", *, digits: int = 4) -> str:
    """A report (a pyarrow Table, or ``(names, row dicts)``) as table / csv (12 decimals) / json (as :func:`plain`).

    >>> print(render_rows((["day", "ndcg@10"], [{"day": "2026-10-01", "ndcg@10": 0.5}])))
    day         ndcg@10
    2026-10-01   0.5000
    """
    names, rows = (list(table[0]), list(table[1])) if isinstance(table, tuple) else (table.column_names,
                                                                                     table.to_pylist())
    if fmt == "json":
        return json.dumps(plain(rows), indent=1)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerows([names] + [[_row_cell(r[n], 12 if isinstance(r[n], float) else digits) for n in names]
                               for r in rows])
        return buf.getvalue().rstrip("\n")
    if fmt != "table":
        raise InvalidParameterError(f"a report is rendered as table, csv or json; got {fmt!r}.")
    cells = [[_row_cell(r[n], digits) for n in names] for r in rows]
    widths = [max([len(n)] + [len(c[i]) for c in cells]) for i, n in enumerate(names)]
    numeric = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^nan$|^-?inf$")
    lines = ["  ".join(n.ljust(w) for n, w in zip(names, widths)).rstrip()]
    lines += ["  ".join(x.rjust(w) if numeric.match(x) else x.ljust(w) for x, w in zip(c, widths)).rstrip()
              for c in cells]
    return "\n".join(lines)
