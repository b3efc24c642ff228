"""``ranklens report``: one self-contained HTML file for an offline evaluation or comparison.

The file holds everything it shows: the tables as HTML, the numbers of the charts as JSON, and the
chart code and styles inline (the same SVG charts as the dashboard). It opens from disk, with no
server and no network: its Content-Security-Policy forbids every fetch.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .._base.renamed import renamed_keywords
from .._integrations.runs import run_names
from .._output.render import (
    comparison_cells,
    comparison_dict,
    comparison_header,
    comparison_legend,
    plain,
    result_cells,
    result_dict,
)
from ..errors import InvalidParameterError
from .page import document
from .page import esc as _e
from .page import num as _num

__all__ = ["build_report", "write_report"]

def _source(x: Any) -> str:
    """An input as the report names it: a path as given, else its type."""
    return os.fspath(x) if isinstance(x, (str, os.PathLike)) else type(x).__name__


def _run_names(runs: Any) -> tuple[list[str], list[Any]]:
    if isinstance(runs, (str, os.PathLike)):
        runs = [runs]
    if not isinstance(runs, Mapping) and isinstance(runs, Iterable):
        runs = list(runs)
        if len(runs) == 1:  # one run keeps its file name (compare's shortening needs two)
            return run_names(runs, shorten=False)
    return run_names(runs)


@renamed_keywords(metrics="measures")
def build_report(
    judgments: Any,
    runs: Any,
    measures: str | Iterable[str] = ("ndcg@10",),
    *,
    baseline: Any = None,
    convention: Any = None,
    test: str = "randomization",
    correction: str = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    ci: str = "bca",
    n_resamples: int = 10000,
    seed: int = 0,
    title: str | None = None,
    digits: int = 4,
    curves: bool = True,
    top: int = 10,
    **options: Any,
) -> str:
    """The HTML text of a self-contained report of one run (evaluation) or several (comparison).

    Parameters
    ----------
    judgments, runs
        As for :func:`ranklens.evaluate` (one run) and :func:`ranklens.compare` (a list or a mapping
        ``{name: run}`` of two or more runs).
    measures : str or list of str
        Measures (default ``ndcg@10``; ``metrics=``: the deprecated name).
    baseline, convention, test, correction, alpha, confidence, ci, n_resamples, seed
        As for :func:`ranklens.compare` (used with two runs or more).
    title : str, optional
        Title of the page (default: "ranklens report").
    digits : int
        Decimals in the tables.
    curves : bool
        Add measure@k curves (k = 1..100) for the measures with a cutoff.
    top : int
        Queries listed with the largest gains and losses against the baseline.
    **options
        Column names, formats and convention fields, as for ``evaluate``.

    Returns
    -------
    str
        A complete HTML document.

    Examples
    --------
    >>> from ranklens.web import build_report
    >>> qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}, "q3": {"d": 1, "e": 1}}
    >>> bm25 = {"q1": {"a": 1.0, "b": 2.0}, "q2": {"c": 1.0}, "q3": {"d": 0.5, "x": 0.9}}
    >>> dense = {"q1": {"a": 3.0, "b": 2.0}, "q2": {"c": 1.0}, "q3": {"d": 0.9, "e": 0.8}}
    >>> page = build_report(qrels, {"bm25": bm25, "dense": dense}, ["mrr"], n_resamples=200, curves=False)
    >>> page.startswith("<!DOCTYPE html>"), "dense" in page, "<link" in page  # nothing to fetch
    (True, True, False)
    """
    from .._core.evaluate import evaluate
    from .._integrations.compare import compare

    if isinstance(digits, bool) or not isinstance(digits, int) or not 0 <= digits <= 12:
        raise InvalidParameterError(f"`digits` must be an integer in [0, 12]; got {digits!r}.")
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise InvalidParameterError(f"`top` must be an integer >= 0; got {top!r}.")
    names, items = _run_names(runs)
    measure_list = [measures] if isinstance(measures, str) else list(measures)
    if not measure_list:
        raise InvalidParameterError("`measures` is empty: give at least one measure.")
    results = [evaluate(judgments, run, measure_list, convention=convention, **options) for run in items]
    keys = results[0].keys
    comparison = None
    if len(items) >= 2:
        comparison = compare(judgments, dict(zip(names, items)), measure_list, baseline=baseline,
                             convention=convention, test=test, correction=correction, alpha=alpha,
                             confidence=confidence, ci=ci, n_resamples=n_resamples, seed=seed, **options)
    curve_data: list[dict[str, Any]] = []
    if curves:
        from .._integrations.plot import cutoff_curves

        fams = cutoff_curves(judgments, dict(zip(names, items)), keys, convention=convention, **options)
        for fam, per_run in fams.items():
            curve_data.append({"family": fam, "series": [
                {"name": rn, "points": [[k, plain(v)] for k, v in pts]} for rn, pts in per_run.items()]})

    conv_name = results[0].convention.name
    page_title = title or ("ranklens comparison" if comparison else "ranklens evaluation")
    data: dict[str, Any] = {"curves": curve_data, "measures": []}
    named = dict(zip(names, results))
    data["results"] = {n: result_dict(r, per_query=False) for n, r in named.items()}
    sections = [_eval_section(named, digits, conv_name)]
    if comparison is not None:
        sections += _comparison_sections(comparison, top, digits, data)
    else:
        sections += _per_query_sections(results[0], keys, names[0], data)
    if curve_data:
        sections.insert(2 if comparison is not None else 1, _curves_section(curve_data))
    inputs = [("judgments", judgments)] + [(f"run {n}", it) for n, it in zip(names, items)]
    src = "".join(f"<li><b>{_e(a)}</b>: <code>{_e(_source(b))}</code></li>" for a, b in inputs)
    subtitle = (f"{len(names)} run{'s' if len(names) > 1 else ''}, {len(keys)} measure{'s' if len(keys) > 1 else ''}, "
                f"convention <b>{_e(conv_name)}</b>")
    sections.insert(0, f"<section class='card'><h2>Inputs</h2><ul class='notes'>{src}</ul></section>")
    return document(page_title, subtitle, sections, data, ["charts.js", "report.js"])


def _eval_section(named: dict[str, Any], digits: int, conv_name: str) -> str:
    """The table of ``ranklens eval``."""
    eval_header, eval_cells, below = result_cells(named, digits)
    head = "".join(f"<th>{_e(h)}</th>" for h in eval_header[1:])
    rows = ["<tr><td class='l'>" + _e(c[0]) + "</td>" + "".join(f"<td>{_e(x)}</td>" for x in c[1:]) + "</tr>"
            for c in eval_cells]
    return (
        "<section class='card'><h2>Evaluation <span class='hint'>as <code>ranklens eval</code> prints it; "
        f"convention {_e(conv_name)}</span></h2>"
        f"<table class='rl' id='eval-table'><thead><tr><th class='l'>{_e(eval_header[0])}</th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>{_notes(below[1:], prefix='')}</section>"
    )


def _comparison_sections(c: Any, top: int, digits: int, data: dict[str, Any]) -> list[str]:
    """The table of ``ranklens compare``, then per measure its interval plots and per-query differences (their
    data added to ``data``)."""
    s = c.settings
    data["baseline"] = c.baseline
    data["ci_label"] = f"{s['confidence']:.0%} {s['ci_method']} interval"
    data["comparison"] = comparison_dict(c)
    legend = "".join(f"<li>{_e(x)}</li>" for x in comparison_legend(c))
    sections = [
        "<section class='card'><h2>Comparison <span class='hint'>as <code>ranklens compare</code> prints it"
        f"</span></h2>{_comparison_tables(c, digits)}<ul class='notes'>{legend}</ul>{_notes(c.notes)}</section>"
    ]
    for mi, m in enumerate(c.measures):
        sections.append(_measure_sections(c, mi, m, top, digits, data))
    return sections


def _comparison_tables(c: Any, digits: int) -> str:
    """One table per measure, as ``ranklens compare`` prints it (differences coloured, significance starred)."""
    header = comparison_header(c)
    blocks = []
    for m in c.measures:
        body = []
        for r in (r for r in c.rows if r["measure"] == m):
            cells = comparison_cells(c, r, digits)
            tds = [f"<td class='l'>{_e(cells[0])}</td>"]
            for i, x in enumerate(cells[1:], start=1):
                cls = ""
                if header[i] == "diff" and x not in ("", "n/a"):
                    cls = " class='pos'" if x.startswith("+") and float(x) > 0 else (
                        " class='neg'" if x.startswith("-") else "")
                if x.endswith("*"):
                    x = f"{_e(x[:-1])}<span class='sig'>*</span>"
                    tds.append(f"<td{cls}>{x}</td>")
                else:
                    tds.append(f"<td{cls}>{_e(x)}</td>")
            body.append("<tr>" + "".join(tds) + "</tr>")
        ths = "".join(f"<th class='l'>{_e(h)}</th>" if i == 0 else f"<th>{_e(h)}</th>"
                      for i, h in enumerate(header))
        blocks.append(f"<h3>{_e(m)} <span class='muted'>(baseline: {_e(c.baseline)})</span></h3>"
                      f"<table class='rl compare-table'><thead><tr>{ths}</tr></thead>"
                      f"<tbody>{''.join(body)}</tbody></table>")
    return "".join(blocks)


def _measure_sections(c: Any, mi: int, m: str, top: int, digits: int, data: dict[str, Any]) -> str:
    """Measure ``m`` of a comparison: means and differences with their intervals, each run's per-query
    differences against the baseline sorted, and its largest gains and losses."""
    V = c.per_query["values"]
    queries = c.per_query["queries"]
    bi = c.runs.index(c.baseline)
    mrows = [r for r in c.rows if r["measure"] == m]
    means = [{"label": r["run"], "value": plain(r["mean"]), "lo": plain(r["ci_low"]),
              "hi": plain(r["ci_high"]), "note": f"n={r['n']}"} for r in mrows]
    diffs = [{"label": f"{r['run']} - {c.baseline}", "value": plain(r["diff"]), "lo": plain(r["diff_low"]),
              "hi": plain(r["diff_high"]), "filled": bool(r.get("significant")),
              "note": ("p=" + _num(r.get("p_adjusted"), 4) + ("*" if r.get("significant") else ""))}
             for r in mrows if r["run"] != c.baseline]
    per_query = []
    tables = []
    for ri, rn in enumerate(c.runs):
        if ri == bi:
            continue
        d = V[mi][:, ri] - V[mi][:, bi]
        ok = ~np.isnan(d)
        idx = np.nonzero(ok)[0]
        order = idx[np.argsort(-d[idx], kind="stable")]
        row = c.row(rn, m)
        per_query.append({
            "values": [plain(x) for x in d[order]], "labels": [str(queries[i]) for i in order],
            "xlabel": f"queries sorted by difference ({row['wins']} wins, {row['ties']} ties, "
                      f"{row['losses']} losses)",
            "ylabel": f"{rn} - {c.baseline}",
        })
        tables.append(_query_table(m, rn, c.baseline, queries, V[mi][:, bi], V[mi][:, ri], order, top, digits))
    data["measures"].append({"measure": m, "means": means, "diffs": diffs, "per_query": per_query})
    charts = "".join(
        f"<h3>{_e(pq['ylabel'])}</h3><div class='chart' id='pq-{mi}-{j}'></div>{tables[j]}"
        for j, pq in enumerate(per_query))
    return (
        f"<section class='card'><h2>{_e(m)}: intervals <span class='hint'>{_e(data['ci_label'])} over "
        f"queries</span></h2><div class='grid2'><div><h3>Means</h3><div class='chart' id='means-{mi}'></div>"
        f"</div><div><h3>Differences against {_e(c.baseline)}</h3><div class='chart' id='diffs-{mi}'></div>"
        f"</div></div></section>"
        f"<section class='card'><h2>{_e(m)}: per-query differences</h2>{charts}</section>"
    )


def _per_query_sections(res: Any, keys: list[str], name: str, data: dict[str, Any]) -> list[str]:
    """One run: each measure's per-query values sorted (their data added to ``data``)."""
    data["baseline"] = name
    data["ci_label"] = ""
    sections = []
    for mi, m in enumerate(keys):
        v = res.values[:, mi]
        ok = ~np.isnan(v)
        idx = np.nonzero(ok)[0]
        order = idx[np.argsort(-v[idx], kind="stable")]
        data["measures"].append({"measure": m, "per_query": [{
            "values": [plain(x) for x in v[order]], "labels": [str(res.queries[i]) for i in order],
            "xlabel": f"{int(ok.sum())} queries, sorted by value", "ylabel": m}]})
        sections.append(f"<section class='card'><h2>{_e(m)} per query</h2><div class='chart' id='pq-{mi}-0'>"
                        "</div></section>")
    return sections


def _curves_section(curve_data: list[dict[str, Any]]) -> str:
    charts = "".join(f"<div><h3>{_e(cv['family'])}@k</h3><div class='chart' id='curve-{i}'></div></div>"
                     for i, cv in enumerate(curve_data))
    return (f"<section class='card'><h2>measure@k curves <span class='hint'>mean over queries, "
            f"k = 1..100</span></h2><div class='{'grid2' if len(curve_data) > 1 else ''}'>{charts}"
            "</div></section>")


def _notes(notes: list[str], prefix: str = "note: ") -> str:
    if not notes:
        return ""
    return "<ul class='notes'>" + "".join(f"<li>{_e(prefix + n)}</li>" for n in notes) + "</ul>"


def _query_table(measure: str, run: str, baseline: str, queries: list[str], base: np.ndarray, other: np.ndarray,
                 order: np.ndarray, top: int, digits: int) -> str:
    if top == 0 or len(order) == 0:
        return ""
    picks = list(order[:top]) + [i for i in order[::-1][:top] if i not in set(order[:top])][::-1]
    body = []
    for i in picks:
        d = other[i] - base[i]
        cls = "pos" if d > 0 else "neg" if d < 0 else ""
        body.append(f"<tr><td class='l mono'>{_e(queries[i])}</td><td>{_num(base[i], digits)}</td>"
                    f"<td>{_num(other[i], digits)}</td><td class='{cls}'>{d:+.{digits}f}</td></tr>")
    return (f"<details><summary>the {top} largest gains and losses of {_e(run)} (of {len(order)} queries)</summary>"
            f"<table class='rl'><thead><tr><th class='l'>query</th><th>{_e(baseline)}</th><th>{_e(run)}</th>"
            f"<th>diff {_e(measure)}</th></tr></thead><tbody>{''.join(body)}</tbody></table></details>")


@renamed_keywords(metrics="measures")
def write_report(path: str | os.PathLike[str], judgments: Any, runs: Any, measures: str | Iterable[str] = ("ndcg@10",),
                 **kwargs: Any) -> str:
    """Write :func:`build_report`'s page to ``path`` (UTF-8); returns the path.

    Examples
    --------
    >>> import os, tempfile
    >>> from ranklens.web import write_report
    >>> qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
    >>> run = {"q1": {"a": 1.0, "b": 2.0}, "q2": {"c": 1.0}}
    >>> out = write_report(os.path.join(tempfile.mkdtemp(), "r.html"), qrels, {"bm25": run}, ["mrr"])
    >>> open(out, encoding="utf-8").read().count("<script")
    3
    """
    page = build_report(judgments, runs, measures, **kwargs)
    out = os.fspath(path)
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(page)
    return out
