"""The output formats of a result, of named results, of a comparison and of a report table.

The schema and the cells come from the core (:mod:`ranklens._core.schema`: ``json`` is its :func:`to_json`,
``table`` and ``html`` its :func:`result_table` and :func:`result_html`); this module writes the other formats
of a result (csv, trec, markdown, latex), every format of a comparison and the monitoring commands' report tables.
The public face of this module is :mod:`ranklens.render`, whose docstring describes the schema.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._base.display import html_table, latex_escape, latex_table, markdown_table, text_table
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
    per_query_sections,
    plain,
    result_cells,
    result_dict,
    result_html,
    result_table,
    to_json,
)
from ..errors import InvalidParameterError
from .pairs import PairwiseLike, format_p, render_pairs

__all__ = [
    "COMPARISON_FIELDS",
    "CORRECTION_NAMES",
    "FORMATS",
    "ComparisonLike",
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
    "render_rows",
    "result_cells",
    "result_dict",
    "to_json",
]

#: The output formats, as ``-f/--format`` spells them in every command.
FORMATS = ("table", "json", "csv", "trec", "markdown", "latex", "html")


#: The multiple-testing corrections, as the legend of a comparison names them.
CORRECTION_NAMES = {
    "holm": "Holm (family-wise error)",
    "bonferroni": "Bonferroni (family-wise error)",
    "bh": "Benjamini-Hochberg (false discovery rate)",
    "none": "none",
}


# -- comparisons: cells -------------------------------------------------------------------------------------


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
        format_p(r["p_value"]),
        format_p(r["p_adjusted"]) + sig,
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
    if fmt == "table":
        return result_table(obj, digits, per_query)
    if fmt == "html":
        return result_html(obj, digits, per_query)
    header, rows, below = result_cells(obj, digits)
    sections = per_query_sections(obj, digits) if per_query else []
    lines: list[str] = []
    if fmt == "markdown":
        for title, h, body in sections:
            lines += [f"**{title}**", ""] + markdown_table(h, body) + [""]
        return "\n".join(lines + markdown_table(header, rows) + [""] + below) + "\n"
    for title, h, body in sections:  # latex
        lines += latex_table(h, body, [title]) + [""]
    return "\n".join(lines + latex_table(header, rows, below)) + "\n"


def _result_csv(obj: ResultLike | Mapping[str, ResultLike], per_query: bool) -> str:
    named = named_results(obj)
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

    for _, res in named_results(obj):
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
def render(obj: Renderable | PairwiseLike, format: str = "table", *, digits: int = 4, per_query: bool = False) -> str:
    """Render a result, named results (``{run name: Result}``) or a comparison.

    Parameters
    ----------
    obj : Result, mapping of str to Result, Comparison or PairwiseComparison
        What to show; named results get one column (table) or one ``run`` value (csv) each; a comparison of
        every pair is rendered by :func:`ranklens._output.pairs.render_pairs`.
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
    digits = check_digits(digits)
    if isinstance(obj, PairwiseLike):
        return render_pairs(obj, format, digits)
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
    if per_query and any(not r.has_per_query for _, r in named_results(obj)):
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
