"""HTML for notebooks: the one table renderer behind ``_repr_html_`` of Result, Comparison and Explanation.

Each object gives the same cells its text table prints (column names, formatted values, the lines
below the table); this module only lays them out as escaped HTML.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape

__all__ = ["html_table"]

_STYLE = "border-collapse:collapse;margin:0.2em 0"
_CELL = "padding:0.15em 0.6em;border-bottom:1px solid #ddd"


def html_table(
    header: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    title: str = "",
    notes: Iterable[str] = (),
    left: Iterable[int] = (0,),
    sections: Iterable[tuple[str, Sequence[str], Iterable[Sequence[str]]]] = (),
) -> str:
    """A ``<div>`` with a title, a table (numbers right-aligned, columns ``left`` left-aligned) and notes.

    ``sections`` adds more tables, each ``(title, header, rows)``, after the first.

    Examples
    --------
    >>> html = html_table(["measure", "value"], [["ndcg@10", "0.5000"]], title="a <b>", notes=["x & y"])
    >>> "<b>a &lt;b&gt;</b>" in html and ">0.5000</td>" in html and "x &amp; y" in html
    True
    """
    left_cols = set(left)
    parts = ['<div class="ranklens">']
    for t, head, body in [(title, header, rows), *sections]:
        if t:
            parts.append(f'<p style="margin:0.2em 0"><b>{escape(t)}</b></p>')
        parts.append(f'<table style="{_STYLE}">\n<thead><tr>')
        for i, h in enumerate(head):
            parts.append(f'<th style="text-align:{"left" if i in left_cols else "right"};{_CELL}">{escape(h)}</th>')
        parts.append("</tr></thead>\n<tbody>")
        for row in body:
            parts.append("<tr>" + "".join(
                f'<td style="text-align:{"left" if i in left_cols else "right"};{_CELL}">{escape(str(c))}</td>'
                for i, c in enumerate(row)) + "</tr>")
        parts.append("</tbody></table>\n")
    for n in notes:
        parts.append(f'<p style="margin:0.2em 0;font-size:90%">{escape(n)}</p>')
    parts.append("</div>")
    return "".join(parts)
