"""The writers of the output formats: a result, named results, a comparison, a report table, a document.

Each writer is ``write(obj, digits, per_query) -> text``; the registry (:mod:`ranklens._output.formats`) names
them. The schema and the cells of a result come from the core (:mod:`ranklens._core.schema`: ``json`` is its
:func:`to_json`, ``table`` and ``html`` its :func:`result_table` and :func:`result_html`); this module writes the
other formats of a result (csv, trec, markdown, latex), every format of a comparison, the report tables of the
monitoring, experiment and counterfactual commands and the documents (explanations, conventions, alerts).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._base.display import html_table, latex_escape, latex_table, markdown_table, text_table
from .._core.schema import (
    COMPARISON_FIELDS,
    ComparisonLike,
    Renderable,
    ResultLike,
    format_value,
    named_results,
    per_query_sections,
    plain,
    result_cells,
    result_html,
    result_table,
    to_json,
)

__all__ = [
    "CORRECTION_NAMES",
    "Document",
    "comparison_cells",
    "comparison_csv",
    "comparison_header",
    "comparison_legend",
    "comparison_text",
    "document_json",
    "document_text",
    "format_p",
    "json_text",
    "result_csv",
    "result_text",
    "result_trec",
    "rows_csv",
    "rows_json",
    "rows_table",
]

#: The multiple-testing corrections, as the legend of a comparison names them.
CORRECTION_NAMES = {
    "holm": "Holm (family-wise error)",
    "bonferroni": "Bonferroni (family-wise error)",
    "bh": "Benjamini-Hochberg (false discovery rate)",
    "none": "none",
}


# -- comparisons: cells -------------------------------------------------------------------------------------


def format_p(p: Any) -> str:
    """A p-value as the tables print it: 4 decimals, or 1.9e-05 below 0.0001; n/a when missing."""
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
        format_p(r["p_value"]),
        format_p(r["p_adjusted"]) + sig,
    ]


def comparison_legend(c: ComparisonLike) -> list[str]:
    """The lines that say what a comparison's table shows: test, correction, intervals, columns."""
    s = c.settings
    resampled = f", {s['n_resamples']} resamples, seed {s['seed']}"
    return [
        f"* significant at alpha={s['alpha']:g} after correction ({CORRECTION_NAMES[s['correction']]}, "
        f"over {s['n_tests']} tests: runs x measures)",
        f"test: {s['test_description']}" + (resampled if s["test"] in ("randomization", "bootstrap") else ""),
        (f"intervals: {s['ci_method']} bootstrap over queries ({s['n_resamples']} resamples, seed {s['seed']}); "
         "t intervals in json/csv" if s["ci_method"] != "t" else "intervals: Student's t"),
        f"diff = run - baseline over the queries both count; W/T/L = queries where the run is above / equal "
        f"to / below the baseline; d = Cohen's d_z (mean diff / sd of diffs); convention: {s['convention']}",
    ]


# -- results ------------------------------------------------------------------------------------------------
def result_text(obj: ResultLike | Mapping[str, ResultLike], digits: int, per_query: bool, fmt: str = "table") -> str:
    """The table, html, markdown and latex formats of a result."""
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


def result_csv(obj: ResultLike | Mapping[str, ResultLike], digits: int, per_query: bool) -> str:
    """The csv format of a result: ``[run,]query,measure,value``, full precision (``digits`` unused)."""
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


def result_trec(obj: ResultLike | Mapping[str, ResultLike], digits: int, per_query: bool) -> str:
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
def comparison_text(c: ComparisonLike, digits: int, per_query: bool = False, fmt: str = "table") -> str:
    """The table, markdown, latex and html formats of a comparison."""
    header = comparison_header(c)
    if fmt == "table":
        out: list[str] = []
        for m in c.measures:
            rows = [comparison_cells(c, r, digits) for r in c.rows if r["measure"] == m]
            out += [f"{m}  (baseline: {c.baseline})"] + text_table(header, rows) + [""]
        return "\n".join(out + comparison_legend(c) + [f"note: {n}" for n in c.notes])
    if fmt == "markdown":
        rows = [[r["measure"]] + comparison_cells(c, r, digits) for r in c.rows]
        lines = markdown_table(["measure"] + header, rows, left=2)
        return "\n".join(lines + [""] + comparison_legend(c) + [f"Note: {n}" for n in c.notes]) + "\n"
    if fmt == "latex":
        rows = []
        for r in c.rows:
            cells = [latex_escape(x) for x in [r["measure"]] + comparison_cells(c, r, digits)]
            if r.get("significant"):
                cells[5] = f"\\textbf{{{cells[5]}}}$^\\dagger$"
                cells[-1] = cells[-1].replace("*", "")
            rows.append(cells)
        lines = latex_table(["measure"] + header, [], comparison_legend(c), left=2)
        return "\n".join(lines[:-2] + [" & ".join(r) + " \\\\" for r in rows] + lines[-2:]) + "\n"
    # html
    sections = [(f"{m}  (baseline: {c.baseline})", header,
                 [comparison_cells(c, r, digits) for r in c.rows if r["measure"] == m]) for m in c.measures]
    title = f"ranklens Comparison: {len(c.runs)} runs, convention {c.settings['convention']!r}"
    first = sections[0]
    return html_table(first[1], first[2], title=f"{title}; {first[0]}", sections=sections[1:],
                      notes=comparison_legend(c) + [f"note: {n}" for n in c.notes])


def comparison_csv(c: ComparisonLike, digits: int = 4, per_query: bool = False) -> str:
    """One line per run and measure, every field (:data:`COMPARISON_FIELDS`), full precision."""
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


def json_text(obj: Renderable, digits: int = 4, per_query: bool = False) -> str:
    """The json format of a result or a comparison (full precision: ``digits`` unused)."""
    return to_json(obj, per_query=per_query)


# -- report tables (the monitoring, experiment and counterfactual commands) ------------------------------------
def _row_cell(v: Any, digits: int) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.{digits}f}"
    if hasattr(v, "isoformat"):
        s = v.isoformat()
        return s[:10] if s.endswith("T00:00:00") else s.replace("T", " ")
    return "" if v is None else str(v)


def _names_rows(table: Any) -> tuple[list[str], list[dict[str, Any]]]:
    if isinstance(table, tuple):
        return list(table[0]), list(table[1])
    return table.column_names, table.to_pylist()


def rows_json(table: Any, digits: int = 4, per_query: bool = False) -> str:
    """The json format of a report: its rows as a list of objects (:func:`plain`)."""
    return json.dumps(plain(_names_rows(table)[1]), indent=1)


def rows_csv(table: Any, digits: int = 4, per_query: bool = False) -> str:
    """The csv format of a report: floats with 12 decimals."""
    names, rows = _names_rows(table)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerows([names] + [[_row_cell(r[n], 12 if isinstance(r[n], float) else digits) for n in names] for r in rows])
    return buf.getvalue().rstrip("\n")


def rows_table(table: Any, digits: int = 4, per_query: bool = False) -> str:
    """The table format of a report: numbers right-aligned, the rest left-aligned, no rule."""
    names, rows = _names_rows(table)
    cells = [[_row_cell(r[n], digits) for n in names] for r in rows]
    return "\n".join(text_table(names, cells, align="numbers_right", rule=False, strip=True))


# -- documents (explanations, conventions, alerts...) -------------------------------------------------------
@dataclass(frozen=True)
class Document:
    """What a command prints that is neither a result, a comparison nor a report: its own text layout (``text``)
    and its own JSON data (``data``, made plain and written with ``indent``), each made only when asked."""

    text: Callable[[], str]
    data: Callable[[], Any]
    indent: int = 2


def document_text(doc: Document, digits: int = 4, per_query: bool = False) -> str:
    """The table format of a document: its text."""
    return doc.text()


def document_json(doc: Document, digits: int = 4, per_query: bool = False) -> str:
    """The json format of a document: its data as strict JSON."""
    return json.dumps(plain(doc.data()), indent=doc.indent, allow_nan=False)
