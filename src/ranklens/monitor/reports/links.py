"""From a row of slices to its groups: the filters that select them, and the command that lists them."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["groups_command", "row_filters"]

MISSING = "(missing)"


def row_filters(where: Mapping[str, Any] | None, row: Mapping[str, Any],
                series: Sequence[str]) -> dict[str, Any] | None:
    """The filters selecting the groups of a slices row: the page's filters, the row's series and slice values
    (None for a pooled row, which is no one slice; a missing value is the filter ``None``).

    Examples
    --------
    >>> row_filters({"environment": "production"}, {"model_version": "v1", "column": "country", "value": "BR",
    ...              "column2": "device", "value2": "mobile", "pooled": False}, ["model_version"])
    {'environment': 'production', 'model_version': 'v1', 'country': 'BR', 'device': 'mobile'}
    """
    if row.get("pooled"):
        return None
    out = dict(where or {})
    out.update({s: row[s] for s in series if row.get(s) is not None})
    for c, v in ((row["column"], row["value"]), (row.get("column2"), row.get("value2"))):
        if c:
            out[c] = None if v == MISSING else v
    return out


def groups_command(measure: str, start: str, end: str, where: Mapping[str, Any] | None, row: Mapping[str, Any],
                   series: Sequence[str]) -> str:
    """``ranklens monitor groups ...`` listing the worst groups of a slices row in its window ("" for a pooled
    row, or a missing value, which ``--where`` cannot name).

    Examples
    --------
    >>> row = {"model_version": "v1", "column": "country", "value": "BR", "column2": None}
    >>> print(groups_command("ndcg@10", "2026-10-21", "2026-10-22", {"device": "a b"}, row, ["model_version"]))
    ... # doctest: +NORMALIZE_WHITESPACE
    ranklens monitor groups -m ndcg@10 --start 2026-10-21 --end 2026-10-22
    --where 'device=a b' --where model_version=v1 --where country=BR
    """
    f = row_filters(where, row, series)
    if f is None:
        return ""
    parts = ["ranklens", "monitor", "groups", "-m", measure, "--start", start, "--end", end]
    for k, v in f.items():
        vals = v if isinstance(v, (list, tuple)) else [v]
        if any(x is None for x in vals):
            return ""
        for x in vals:
            parts += ["--where", f"{k}={x}"]
    return " ".join(shlex.quote(p) for p in parts)
