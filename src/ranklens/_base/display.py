"""Table layouts: formatted cells in, text / Markdown / LaTeX / escaped HTML out.

:mod:`ranklens.render` decides what a result, a comparison or a report shows (the cells); this module
only lays the cells out. ``html_table`` is also behind ``_repr_html_`` of Result, Comparison and
Explanation in notebooks. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = ["html_table", "latex_escape", "latex_table", "markdown_table", "text_table"]

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
    from html import escape  # here: html loads html.entities (1.5 ms), on the path of every evaluation's import

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


# -- text layouts --------------------------------------------------------------------------------------------------
_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^nan$|^-?inf$")


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, align: str = "first_left",
               rule: bool = True, strip: bool = False) -> list[str]:
    """The one plain-text table printer: cells two spaces apart, each column as wide as its widest cell.

    ``align``: ``"first_left"`` (the first column left-aligned, the others right-aligned, the header too: results
    and comparisons), ``"numbers_right"`` (cells that read as numbers right-aligned, the rest and the header
    left-aligned: report tables) or ``"right"`` (every cell right-aligned). ``rule``: a rule of dashes under the
    header. ``strip``: no trailing spaces.

    Examples
    --------
    >>> print("\\n".join(text_table(["measure", "value"], [["mrr", "0.5000"]])))
    measure   value
    ---------------
    mrr      0.5000
    >>> print("\\n".join(text_table(["day", "n"], [["2026-10-01", "12"]], align="numbers_right", rule=False,
    ...                            strip=True)))
    day         n
    2026-10-01  12
    """
    if align not in ("first_left", "numbers_right", "right"):
        raise ValueError(f"align must be first_left, numbers_right or right; got {align!r}")
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]

    def right(i: int, x: str, head: bool) -> bool:
        if align == "first_left":
            return i > 0
        return align == "right" or (not head and _NUMBER.match(x) is not None)

    def line(cells: Sequence[str], head: bool = False) -> str:
        s = "  ".join(x.rjust(w) if right(i, x, head) else x.ljust(w) for i, (x, w) in enumerate(zip(cells, widths)))
        return s.rstrip() if strip else s

    out = [line(header, head=True)]
    if rule:
        out.append("-" * (sum(widths) + 2 * (len(widths) - 1)))
    return out + [line(r) for r in rows]


def _md_cell(s: str) -> str:
    return s.replace("|", "\\|")


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]], left: int = 1) -> list[str]:
    out = ["| " + " | ".join(_md_cell(h) for h in header) + " |",
           "|" + "|".join([":--"] * left + ["--:"] * (len(header) - left)) + "|"]
    out += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in rows]
    return out


def latex_escape(s: str) -> str:
    for a, b in (("\\", "\\textbackslash{}"), ("&", "\\&"), ("%", "\\%"), ("_", "\\_"), ("#", "\\#"),
                 ("$", "\\$"), ("{", "\\{"), ("}", "\\}")):
        s = s.replace(a, b)
    return s


def latex_table(header: Sequence[str], rows: Iterable[Sequence[str]], comment: Sequence[str],
                 left: int = 1) -> list[str]:
    esc = latex_escape
    out = ["% " + " ; ".join(comment)] if comment else []
    out += ["\\begin{tabular}{" + "l" * left + "r" * (len(header) - left) + "}", "\\toprule",
            " & ".join(esc(h) for h in header) + " \\\\", "\\midrule"]
    out += [" & ".join(esc(c) for c in r) + " \\\\" for r in rows]
    return out + ["\\bottomrule", "\\end{tabular}"]
