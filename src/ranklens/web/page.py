"""The pieces every self-contained HTML page of ranklens shares (``ranklens report``, ``ranklens monitor report
--html``): the packaged styles and scripts inlined, JSON data embedded safely, escaping, and the page's frame
with a Content-Security-Policy that forbids every fetch (the file opens from disk, offline)."""

from __future__ import annotations

import datetime as _dt
import html
import json
from collections.abc import Iterable
from importlib import resources
from typing import Any

from .._output.render import plain

__all__ = ["CSP", "asset", "document", "esc", "num", "script_json", "table"]

CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"


def asset(name: str) -> str:
    """The text of a packaged static file (``style.css``, ``charts.js``...)."""
    return resources.files("ranklens.web").joinpath("static").joinpath(name).read_text(encoding="utf-8")


def num(v: Any, digits: int) -> str:
    """A number with ``digits`` decimals (``n/a`` for a missing one)."""
    v = plain(v)
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def esc(s: Any) -> str:
    """HTML-escaped text (quotes too).

    >>> esc("<a href='x'>")
    '&lt;a href=&#x27;x&#x27;&gt;'
    """
    return html.escape(str(s), quote=True)


def table(head: list[str], rows: list[list[str]], cls: str = "", numeric: Iterable[int] = ()) -> str:
    """A scrolling table of the reports: ``head`` escaped here, ``rows`` already HTML; the ``numeric`` columns
    right-aligned, the others left."""
    num_cols = set(numeric)
    th = "".join(f"<th{'' if i in num_cols else ' class=l'}>{esc(h)}</th>" for i, h in enumerate(head))
    body = "".join("<tr>" + "".join(f"<td{'' if i in num_cols else ' class=l'}>{c}</td>" for i, c in enumerate(r))
                   + "</tr>" for r in rows)
    return (f"<div class='scroll'><table class='rl {cls}'><thead><tr>{th}</tr></thead><tbody>{body}</tbody>"
            "</table></div>")


def script_json(obj: Any) -> str:
    """JSON for a ``<script type="application/json">``: no ``<`` can close the element.

    >>> script_json({"q": "</script>"})
    '{"q":"\\\\u003c/script>"}'
    """
    return json.dumps(obj, allow_nan=False, separators=(",", ":")).replace("<", "\\u003c").replace(
        "\u2028", "\\u2028").replace("\u2029", "\\u2029")


def document(title: str, subtitle: str, sections: list[str], data: Any, scripts: list[str], *,
             label: str = "report") -> str:
    """A complete HTML document: the styles, ``sections`` (HTML), ``data`` (JSON) and the packaged ``scripts``
    inlined; nothing fetched."""
    from .._version import __version__

    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{esc(title)}</title><style>{asset('style.css')}\n"
        ".chart{min-height:120px} code{font-family:var(--mono);font-size:12.5px}</style></head><body>"
        "<header class='rl-top'><div class='brand'>rank<span>lens</span></div>"
        f"<div class='store'>{esc(label)} &middot; {esc(when)} &middot; ranklens {esc(__version__)}</div></header>"
        f"<main><h1>{esc(title)}</h1><p class='subtitle'>{subtitle}</p>"
        + "".join(sections)
        + "<noscript><p class='error-box'>The charts need JavaScript; the tables do not.</p></noscript>"
        f"</main><footer>written by ranklens {esc(__version__)}: a single file, no network needed</footer>"
        f"<script type='application/json' id='rl-data'>{script_json(data)}</script>"
        + "".join(f"<script>{asset(s)}</script>" for s in scripts) + "</body></html>\n"
    )
