"""``ranklens counterfactual ... --html``: one self-contained page with the examination curve (an inline SVG, no
script needed) and the estimates, in the page frame every ranklens report shares (:func:`ranklens.web.page.document`:
nothing fetched, a Content-Security-Policy that forbids it)."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

from .page import document, esc, num, table

__all__ = ["build_counterfactual_report", "examination_svg", "write_counterfactual_report"]


def examination_svg(curves: Sequence[tuple[str, Sequence[float]]], width: int = 560, height: int = 240) -> str:
    """An SVG line chart of examination curves (name, values per rank from 1), y from 0 to 1.

    >>> examination_svg([("pbm", [1.0, 0.5])]).startswith("<svg")
    True
    """
    m = {"l": 44, "r": 12, "t": 12, "b": 30}
    depth = max((len(v) for _, v in curves), default=1)
    x0, x1 = 1, max(depth, 2)

    def x(r: float) -> float:
        return m["l"] + (r - x0) / (x1 - x0) * (width - m["l"] - m["r"])

    def y(v: float) -> float:
        return height - m["b"] - v * (height - m["t"] - m["b"])

    colors = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c")
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' class='chart' width='{width}' height='{height}' role='img' "
             f"aria-label='examination per rank'>"]
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f"<line x1='{m['l']}' x2='{width - m['r']}' y1='{y(t):.1f}' y2='{y(t):.1f}' stroke='#e5e7eb'/>"
                     f"<text x='{m['l'] - 6}' y='{y(t) + 4:.1f}' font-size='11' text-anchor='end'>{t:g}</text>")
    for r in range(1, depth + 1):
        parts.append(f"<text x='{x(r):.1f}' y='{height - 10}' font-size='11' text-anchor='middle'>{r}</text>")
    for i, (name, values) in enumerate(curves):
        pts = [(x(r + 1), y(v)) for r, v in enumerate(values) if v is not None and math.isfinite(v)]
        c = colors[i % len(colors)]
        if pts:
            parts.append(f"<polyline fill='none' stroke='{c}' stroke-width='2' points='"
                         + " ".join(f"{a:.1f},{b:.1f}" for a, b in pts) + "'/>")
            parts += [f"<circle cx='{a:.1f}' cy='{b:.1f}' r='3' fill='{c}'/>" for a, b in pts]
        parts.append(f"<text x='{width - m['r'] - 4}' y='{m['t'] + 14 * (i + 1)}' font-size='12' fill='{c}' "
                     f"text-anchor='end'>{esc(name)}</text>")
    return "".join(parts) + "</svg>"


def _pair(low: Any, high: Any, digits: int) -> str:
    return f"[{num(low, digits)},&nbsp;{num(high, digits)}]"


def build_counterfactual_report(*, model: Any = None, rows: Sequence[dict[str, Any]] = (), title: str | None = None,
                                digits: int = 4, notes: Sequence[str] = ()) -> str:
    """The HTML text: ``model`` (a FittedClickModel or Propensities: its examination per rank) and ``rows`` (the
    estimates: run, measure, estimator, value, ci_low, ci_high, [estimate, estimate_ci_low, estimate_ci_high],
    effective_sample_size, max_weight, unlogged_share)."""
    sections = []
    data: dict[str, Any] = {"rows": [{k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                                      for k, v in r.items()} for r in rows]}
    if model is not None:
        exam = [float(v) for v in model.examination.array]
        label = getattr(model, "kind", None) or getattr(model, "method", "examination")
        data["examination"] = [None if not math.isfinite(v) else v for v in exam]
        head = ["rank", "examination (relative to rank 1)"]
        perp = getattr(model, "perplexity", None)
        if perp is not None:
            head.append("perplexity")
        trs = [[str(r + 1), num(v, digits)] + ([num(float(perp.array[r]), digits)] if perp is not None else [])
               for r, v in enumerate(exam)]
        sections.append(f"<section><h2>Examination per rank ({esc(label)})</h2>"
                        f"{examination_svg([(str(label), exam)])}{table(head, trs, numeric=range(len(head)))}"
                        "</section>")
    if rows:
        head = ["run", "measure", "estimator", "value", "interval"]
        has_diff = any("estimate" in r for r in rows)
        if has_diff:
            head += ["difference with logged", "interval"]
        head += ["effective sample size", "max weight", "unlogged share"]
        trs = []
        for r in rows:
            cells = [esc(r.get("run", "")), esc(r.get("measure", "")), esc(r.get("estimator", "")),
                     num(r.get("value"), digits), _pair(r.get("ci_low"), r.get("ci_high"), digits)]
            if has_diff:
                cells += [num(r.get("estimate"), digits),
                          _pair(r.get("estimate_ci_low"), r.get("estimate_ci_high"), digits)]
            cells += [num(r.get("effective_sample_size"), 1), num(r.get("max_weight"), 3),
                      num(r.get("unlogged_share"), 3)]
            trs.append(cells)
        sections.append(f"<section><h2>Estimates</h2>{table(head, trs, numeric=range(3, len(head)))}</section>")
    if notes:
        sections.append("<section>" + "".join(f"<p class='note'>{esc(n)}</p>" for n in notes) + "</section>")
    return document(title or "Counterfactual evaluation", "off-policy estimates from a click log", sections, data,
                    [], label="counterfactual")


def write_counterfactual_report(path: str | os.PathLike[str], **kwargs: Any) -> str:
    """Write :func:`build_counterfactual_report` to ``path``; returns the path."""
    text = build_counterfactual_report(**kwargs)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return os.fspath(path)
