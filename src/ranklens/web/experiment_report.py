"""``ranklens experiment report --html FILE``: an A/B test as one self-contained page to share.

The page holds what was compared (arms, unit, measures, level, correction, sequential design, covariates), the
sample-ratio verdict, each measure's effect with its interval and relative lift, the effect and its interval
day by day with the sequential boundary (when the test was sequential), and the effects per segment. Tables are
HTML; the charts' numbers are JSON in the page, drawn by the dashboard's chart code inlined
(:mod:`ranklens.web.page`): no server, no network.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Mapping
from typing import Any

from .page import document, esc, num, table

__all__ = ["build_experiment_report", "srm_verdict"]


def srm_verdict(srm: Mapping[str, Any], threshold: float = 0.001) -> str:
    """One sentence on the sample-ratio test.

    >>> srm_verdict({"p_value": 1e-5, "chi2": 19.4, "df": 1})
    'sample ratio mismatch: chi2 = 19.40 (df 1), p = 1e-05 < 0.001; the split is not the planned one: effects suspect'
    """
    p = srm.get("p_value")
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "no sample-ratio test (a single arm)"
    head = f"chi2 = {srm['chi2']:.2f} (df {srm['df']}), p = {p:.3g}"
    if p < threshold:
        return f"sample ratio mismatch: {head} < {threshold}; the split is not the planned one: effects suspect"
    return f"no sample ratio mismatch: {head} (>= {threshold})"


def _ms(day: str) -> float:
    return _dt.datetime.fromisoformat(day).replace(tzinfo=_dt.timezone.utc).timestamp() * 1000.0


def _p(v: Any) -> str:
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3g}"


def _effect_cells(r: Mapping[str, Any]) -> list[str]:
    sign = "pos" if r["estimate"] > 0 else "neg"
    return [num(r["control_mean"], 4), num(r["treatment_mean"], 4),
            f"<span class='{sign}'>{r['estimate']:+.4f}</span>", f"[{num(r['ci_low'], 4)}, {num(r['ci_high'], 4)}]",
            f"{100 * r['relative']:+.2f}%",
            f"[{100 * r['relative_ci_low']:+.2f}%, {100 * r['relative_ci_high']:+.2f}%]", _p(r["p_value"]),
            "yes" if r.get("significant") else "no"]


def build_experiment_report(result: Any, *, segments: Mapping[str, Mapping[str, Any]] | None = None,
                            source: str | None = None, title: str | None = None) -> str:
    """The HTML text of the page of an :class:`ranklens.online.ABResult` (``segments``: column -> {value: the
    ABResult of that segment's units})."""
    rows = list(result.rows)
    measures = list(dict.fromkeys(r["measure"] for r in rows))
    seq = result.sequential or "none (fixed horizon: valid at one planned look)"
    covs = ", ".join(result.covariates) or "none"
    level = 1 - result.alpha
    sections = [
        "<section class='card'><h2>What this page shows</h2><ul class='notes'>"
        + (f"<li><b>events</b>: <code>{esc(source)}</code></li>" if source else "")
        + f"<li><b>arms</b>: {esc(', '.join(result.arms))} (control: <b>{esc(result.control)}</b>); "
        f"<b>randomisation unit</b>: {esc(result.unit)}</li>"
        f"<li><b>measures</b>: {esc(', '.join(measures))}: each arm's value is its mean over lists (a ratio of sums "
        "over units), the variance by the delta method over units</li>"
        f"<li><b>intervals</b>: {100 * level:g}%; <b>correction</b>: {esc(result.correction)}; "
        f"<b>sequential</b>: {esc(seq)}; <b>CUPED covariates</b>: {esc(covs)}</li></ul></section>"]
    srm = result.srm
    units = "".join(f"<li>{esc(a)}: {n} units (planned share {p:.3g}, observed {n / max(1, sum(srm['units'])):.4f})"
                    "</li>" for a, n, p in zip(srm.get("arms", result.arms), srm["units"], srm["expected"]))
    cls = "error-box" if (srm.get("p_value") or 1) < 0.001 else "notes"
    sections.append(f"<section class='card'><h2>Sample ratio</h2><p class='{cls}'>{esc(srm_verdict(srm))}</p>"
                    f"<ul class='notes'>{units}</ul></section>")
    head = ["measure", "arm", "control", "treatment", "difference", "interval", "relative", "relative interval",
            "p-value", "significant", "method", "variance reduction"]
    body = [[esc(r["measure"]), esc(r["arm"])] + _effect_cells(r) + [
        esc(r["method"]), "" if math.isnan(r["variance_reduction"]) else f"{100 * r['variance_reduction']:.1f}%"]
        for r in rows]
    sections.append("<section class='card'><h2>Effects</h2>" + table(head, body, numeric=range(2, 9)) + "</section>")
    charts: list[dict[str, Any]] = []
    if result.looks:
        for i, (m, a) in enumerate(dict.fromkeys((x["measure"], x["arm"]) for x in result.looks)):
            looks = [x for x in result.looks if x["measure"] == m and x["arm"] == a and x["day"]]
            charts.append({"id": f"ex-look-{i}", "title": f"{m}: {a} - {result.control}",
                           "points": [{"x": _ms(x["day"]), "y": x["estimate"], "lo": _fin(x["ci_low"]),
                                       "hi": _fin(x["ci_high"]), "n": x["n_units"]} for x in looks],
                           "fixed": [{"x": _ms(x["day"]), "y": x["estimate"], "lo": x["fixed_ci_low"],
                                      "hi": x["fixed_ci_high"]} for x in looks],
                           "boundary": [{"x": _ms(x["day"]), "y": _fin(x["boundary"])} for x in looks]})
        divs = "".join(f"<h3>{esc(c['title'])}</h3><div class='chart' id='{c['id']}'></div>" for c in charts)
        sections.append(
            "<section class='card'><h2>Effect over time</h2><p class='notes'>One look a day (data up to its end). "
            f"Shaded: the {esc(result.sequential)} interval, valid however often one looks; dotted: the fixed-horizon "
            "interval of that day (not valid under repeated looks); dashed: the group-sequential boundary on the "
            "effect (crossing it ends the test). The line at 0 is no effect.</p>" + divs + "</section>")
    for col, by_value in (segments or {}).items():
        seg_rows = []
        for value, res in by_value.items():
            for r in res.rows:
                seg_rows.append([esc(f"{col}={value}"), esc(r["measure"]), esc(r["arm"]), esc(r["n_units"]),
                                 esc(r["n_units_control"])] + _effect_cells(r))
        sections.append(
            f"<section class='card'><h2>Per segment: {esc(col)}</h2><p class='notes'>Each segment's units analysed "
            "alone, by the same test (no correction across segments: a difference between segments needs its own "
            "test).</p>" + table(["segment", "measure", "arm", "units", "control units", "control", "treatment",
                                   "difference", "interval", "relative", "relative interval", "p-value",
                                   "significant"], seg_rows, numeric=range(3, 12)) + "</section>")
    page_title = title or f"ranklens experiment: {', '.join(result.arms[1:])} against {result.control}"
    subtitle = (f"{len(measures)} measures, {len(result.arms) - 1} treatment arms, unit {esc(result.unit)}; "
                f"{esc(srm_verdict(srm).split(':')[0])}")
    return document(page_title, subtitle, sections, {"charts": charts}, ["charts.js", "experiment_report.js"],
                    label="experiment")


def _fin(v: Any) -> float | None:
    return float(v) if v is not None and isinstance(v, (int, float)) and math.isfinite(v) else None
