"""The writers of a per-query table (:class:`~ranklens.QueryTable`: the fairness measures, the two stages of a
system), the registry's kind ``querytable`` (:mod:`ranklens._output.formats`): the means with their intervals, and
with ``per_query`` every query's values. Each writer is ``write(t, digits, per_query) -> text``."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .._base.display import html_table, latex_table, markdown_table, text_table

__all__ = ["QueryTableLike", "querytable_csv", "querytable_json", "querytable_text"]


@runtime_checkable
class QueryTableLike(Protocol):
    """What the writers read of a :class:`~ranklens.QueryTable`."""

    measures: list[str]
    queries: np.ndarray
    values: np.ndarray
    intervals: dict[str, Any]
    settings: dict[str, Any]
    notes: list[str]
    title: str

    def rows(self) -> list[dict[str, Any]]: ...

    def to_dict(self, per_query: bool = True) -> dict[str, Any]: ...


def _py(q: Any) -> Any:
    return q.item() if isinstance(q, np.generic) else q


def _cells(t: QueryTableLike, digits: int) -> tuple[list[str], list[list[str]]]:
    level = f"{round(t.settings['confidence'] * 100, 6):g}%"
    header = ["measure", "mean", f"{level} {t.settings['ci']} low", "high", "queries"]

    def num(v: float) -> str:
        return "n/a" if v is None or math.isnan(v) else f"{v:.{digits}f}"

    return header, [[r["measure"], num(r["mean"]), num(r["ci_low"]), num(r["ci_high"]), str(r["queries"])]
                    for r in t.rows()]


def querytable_json(t: QueryTableLike, digits: int = 4, per_query: bool = False) -> str:
    """The json format: ``rows``, ``per_query`` (with ``per_query``), ``settings``, ``notes`` (full precision)."""
    return json.dumps(t.to_dict(per_query), indent=2)


def querytable_csv(t: QueryTableLike, digits: int = 4, per_query: bool = False) -> str:
    """The csv format: ``query,measure,value,ci_low,ci_high,queries``, the means as query ``all``, full precision."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["query", "measure", "value", "ci_low", "ci_high", "queries"])
    for r in t.rows():
        w.writerow(["all", r["measure"], repr(r["mean"]), repr(r["ci_low"]), repr(r["ci_high"]), r["queries"]])
    if per_query:
        for i, q in enumerate(t.queries):
            for j, m in enumerate(t.measures):
                w.writerow([_py(q), m, repr(float(t.values[i, j])), "", "", ""])
    return buf.getvalue()


def querytable_text(t: QueryTableLike, digits: int = 4, per_query: bool = False, fmt: str = "table") -> str:
    """The table, markdown, latex and html formats (per-query values in the table format only)."""
    header, cells = _cells(t, digits)
    if fmt == "markdown":
        return "\n".join(markdown_table(header, cells)) + "\n"
    if fmt == "latex":
        return "\n".join(latex_table(header, cells, [t.title] if t.title else [])) + "\n"
    if fmt == "html":
        return html_table(header, cells, title=t.title, notes=t.notes)
    lines = ([t.title] if t.title else []) + text_table(header, cells)
    if per_query:
        pq_header = ["query", *t.measures]
        pq = [[str(_py(q)), *(("n/a" if math.isnan(v) else f"{v:.{digits}f}") for v in t.values[i])]
              for i, q in enumerate(t.queries)]
        lines += [""] + text_table(pq_header, pq)
    return "\n".join(lines + [f"note: {n}" for n in t.notes]) + "\n"
