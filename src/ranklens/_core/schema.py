"""The one output schema of a result and a comparison: plain data, JSON, and the cells of their tables.

What a :class:`~ranklens.Result` or a :class:`~ranklens.Comparison` is as data belongs to the core: ``Result.to_dict``
/ ``to_json`` and every output format build on :func:`result_dict`, :func:`comparison_dict` and :func:`to_json`. The
cells of a result's tables (:func:`result_cells`) are here too, with the two layouts a result shows itself in:
:func:`result_table` (``str(result)``, ``-f table``) and :func:`result_html` (notebooks, ``-f html``), laid out by
:mod:`ranklens._base.display`. The other formats are written by the output layer (:mod:`ranklens.render`), the
public face that documents the schema.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from collections.abc import Mapping
from enum import Enum
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .._base.display import html_table, text_table
from .._defs.parse import flat_name
from ..errors import InvalidParameterError

__all__ = [
    "COMPARISON_FIELDS",
    "ComparisonLike",
    "Renderable",
    "ResultLike",
    "check_digits",
    "comparison_dict",
    "flat_dict",
    "format_value",
    "named_results",
    "per_query_cells",
    "per_query_sections",
    "plain",
    "result_cells",
    "result_name",
    "result_dict",
    "result_html",
    "result_table",
    "to_json",
]


#: Every field of a comparison row, in the order of the CSV columns and of ``Comparison.to_pandas()``.
COMPARISON_FIELDS = [
    "measure", "run", "baseline", "mean", "n", "ci_low", "ci_high", "t_low", "t_high", "n_pairs", "diff",
    "diff_low", "diff_high", "diff_t_low", "diff_t_high", "wins", "ties", "losses", "effect_size", "test",
    "statistic", "p_value", "p_adjusted", "significant", "only_baseline", "only_run",
]


@runtime_checkable
class ResultLike(Protocol):
    """What the renderers read of a :class:`~ranklens.Result`."""

    measures: list[Any]
    aggregate: dict[str, float]
    queries: np.ndarray
    values: np.ndarray
    counted: dict[str, int]
    excluded: list[Any]
    convention: Any
    has_per_query: bool


@runtime_checkable
class ComparisonLike(Protocol):
    """What the renderers read of a :class:`~ranklens.Comparison`."""

    runs: list[str]
    baseline: str
    measures: list[str]
    rows: list[dict[str, Any]]
    settings: dict[str, Any]
    notes: list[str]


Renderable = ResultLike | ComparisonLike | Mapping[str, ResultLike]


def plain(v: Any) -> Any:
    """``v`` as JSON data: NaN and infinities as None, numpy scalars as Python ones, datetimes as ISO-8601
    (UTC, with a ``Z``), mappings and sequences converted item by item, anything else as its text.

    >>> plain({"a": float("nan"), "b": np.int64(3), "c": [np.float32(0.5)], 1: _dt.date(2024, 3, 1)})
    {'a': None, 'b': 3, 'c': [0.5], '1': '2024-03-01'}
    """
    if isinstance(v, bool) or v is None or isinstance(v, (str, int)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, Enum):
        return plain(v.value)
    if isinstance(v, _dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        return v.isoformat() + "Z"
    if isinstance(v, _dt.date):
        return v.isoformat()
    if isinstance(v, Mapping):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, np.ndarray):
        return [plain(x) for x in v.tolist()]
    if hasattr(v, "item") and not isinstance(v, bytes):
        try:
            return plain(v.item())
        except (ValueError, TypeError):
            return str(v)
    return str(v)


def _reason(e: Any) -> str:
    """The reason of an exclusion as text (its ``reason`` is a text or an enum whose value is the text)."""
    text = getattr(e, "text", None)  # Exclusion.text: the reason with the value queries were scored
    if isinstance(text, str):
        return text
    r = e.reason
    return str(r.value) if isinstance(r, Enum) else str(r)


def result_dict(res: ResultLike, per_query: bool | None = None) -> dict[str, Any]:
    """The schema of one result (see the module's docstring); ``per_query`` default: when it has them.

    >>> import ranklens
    >>> res = ranklens.evaluate({"q": {"a": 1}, "e": {"b": 0}}, {"q": {"a": 1.0}, "e": {"b": 1.0}}, ["mrr"])
    >>> d = result_dict(res)
    >>> d["aggregate"], d["per_query"], d["counted"], d["excluded"][0]["examples"]
    ({'mrr': 1.0}, {'q': {'mrr': 1.0}}, {'mrr': 1}, ['e'])
    """
    d: dict[str, Any] = {"aggregate": {k: plain(float(v)) for k, v in res.aggregate.items()}}
    if per_query and not res.has_per_query:
        raise InvalidParameterError("this result has no per-query values (evaluated with per_query=False).")
    if per_query if per_query is not None else res.has_per_query:
        keys = [m.key for m in res.measures]
        out: dict[str, dict[str, float]] = {}
        for q, row in zip(res.queries.tolist(), np.asarray(res.values, dtype=np.float64).tolist()):
            vals = {k: v for k, v in zip(keys, row) if not math.isnan(v)}
            if vals:
                out[str(q)] = vals
        d["per_query"] = out
    d["counted"] = {k: int(v) for k, v in res.counted.items()}
    d["excluded"] = [{"reason": _reason(e), "count": int(e.count), "examples": [str(x) for x in e.examples],
                      "measures": [str(x) for x in e.measures]} for e in res.excluded]
    d["convention"] = res.convention.name
    return d


def flat_dict(res: ResultLike, prefix: str = "") -> dict[str, float]:
    """``{prefix + flat name: mean}``, names experiment trackers accept (``ndcg@10`` -> ``ndcg_at_10``).

    >>> import ranklens
    >>> flat_dict(ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["ndcg@10"]), "test_")
    {'test_ndcg_at_10': 1.0}
    """
    flat = {f"{prefix}{flat_name(k)}": float(v) for k, v in res.aggregate.items()}
    if len(flat) < len(res.aggregate):
        raise InvalidParameterError(
            f"two measures get the same flat name ({', '.join(res.aggregate)}); evaluate them separately."
        )
    return flat


def comparison_dict(c: ComparisonLike) -> dict[str, Any]:
    """The schema of a comparison (see the module's docstring): plain data, NaN as None."""
    return {
        "settings": plain(dict(c.settings)),
        "baseline": c.baseline,
        "runs": list(c.runs),
        "measures": list(c.measures),
        "rows": [{k: plain(v) for k, v in r.items()} for r in c.rows],
        "notes": list(c.notes),
    }


def _schema(obj: Renderable, per_query: bool | None) -> dict[str, Any]:
    if isinstance(obj, ComparisonLike):
        return comparison_dict(obj)
    if isinstance(obj, Mapping):
        return {"runs": {result_name(name): result_dict(r, per_query) for name, r in obj.items()}}
    return result_dict(obj, per_query)


def to_json(obj: Renderable, *, per_query: bool | None = None, indent: int | None = 2) -> str:
    """The schema of a result, of named results or of a comparison, as strict JSON (NaN as null)."""
    return json.dumps(_schema(obj, per_query), indent=indent, allow_nan=False)


def format_value(v: float, digits: int = 4, *, summed: bool = False) -> str:
    """A value as the tables show it: ``digits`` decimals, a summed count as an integer, NaN as ``n/a``.

    >>> format_value(0.123456), format_value(12.0, summed=True), format_value(float("nan"))
    ('0.1235', '12', 'n/a')
    """
    if v is None or math.isnan(v):
        return "n/a"
    if summed and float(v).is_integer():
        return f"{int(v)}"
    return f"{v:.{digits}f}"


def check_digits(digits: Any) -> int:
    """``digits``, the decimals of the text formats: an integer in [0, 17] (17 keeps every float exactly)."""
    if isinstance(digits, bool) or not isinstance(digits, (int, np.integer)) or not 0 <= digits <= 17:
        raise InvalidParameterError(f"`digits` must be an integer in [0, 17]; got {digits!r}.")
    return int(digits)


def result_name(key: Any) -> str:
    """The name of a result in a mapping: its key as text; a group of several columns (a tuple) as ``a,b``.

    >>> result_name("bm25"), result_name(("mobile", "en"))
    ('bm25', 'mobile,en')
    """
    return ",".join(map(str, key)) if isinstance(key, tuple) else str(key)


def named_results(obj: ResultLike | Mapping[str, ResultLike]) -> list[tuple[str | None, ResultLike]]:
    if isinstance(obj, Mapping):
        if not obj:
            raise InvalidParameterError("nothing to render: the mapping of results is empty.")
        return [(result_name(k), v) for k, v in obj.items()]
    return [(None, obj)]


def result_cells(obj: ResultLike | Mapping[str, ResultLike],
                 digits: int = 4) -> tuple[list[str], list[list[str]], list[str]]:
    """Header, rows and the lines below of the aggregate table of a result or of named results.

    One column per result (``value`` for a result without a name), then the queries each measure
    counts (``43/42`` when runs differ); below: the convention and what was left out.

    >>> import ranklens
    >>> res = ranklens.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"a": 0.2, "b": 0.9}}, ["mrr"])
    >>> result_cells({"bm25": res})
    (['measure', 'bm25', 'queries'], [['mrr', '0.5000', '1']], ['convention: ranklens'])
    """
    named = named_results(obj)
    first = named[0][1]
    header = ["measure"] + [name or "value" for name, _ in named] + ["queries"]
    rows = []
    for m in first.measures:
        k = m.key
        cells = [k] + [format_value(r.aggregate.get(k, math.nan), digits, summed=m.summed) for _, r in named]
        counts = list(dict.fromkeys(str(r.counted.get(k, 0)) for _, r in named))
        rows.append(cells + ["/".join(counts) if len(counts) > 1 else counts[0]])
    below = [f"convention: {first.convention.name}"]
    seen = set()
    for name, r in named:
        for e in r.excluded:
            text = f"note ({name}): {e}" if len(named) > 1 else f"note: {e}"
            if text not in seen:
                seen.add(text)
                below.append(text)
    return header, rows, below


def per_query_cells(res: ResultLike, digits: int) -> tuple[list[str], list[list[str]]]:
    measures = res.measures
    header = ["query"] + [m.key for m in measures]
    rows = []
    for q, vals in zip(res.queries.tolist(), np.asarray(res.values, dtype=np.float64).tolist()):
        rows.append([str(q)] + [format_value(v, digits, summed=m.summed) if not math.isnan(v) else "-"
                                for v, m in zip(vals, measures)])
    return header, rows


def per_query_sections(obj: ResultLike | Mapping[str, ResultLike],
                       digits: int) -> list[tuple[str, list[str], list[list[str]]]]:
    """The per-query tables of a result or of named results: ``(title, header, rows)`` each."""
    return [(f"per query ({name})" if name else "per query", *per_query_cells(r, digits))
            for name, r in named_results(obj)]


def result_table(obj: ResultLike | Mapping[str, ResultLike], digits: int = 4, per_query: bool = False) -> str:
    """The ``table`` format (``str(result)``): per-query tables first when asked, then the aggregates and what was
    left out.

    >>> import ranklens
    >>> print(result_table(ranklens.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"a": 0.2, "b": 0.9}}, ["mrr"])))
    measure   value  queries
    ------------------------
    mrr      0.5000        1
    convention: ranklens
    """
    header, rows, below = result_cells(obj, digits)
    lines: list[str] = []
    for title, h, body in per_query_sections(obj, digits) if per_query else []:
        lines += [f"{title}:"] + text_table(h, body) + [""]
    return "\n".join(lines + text_table(header, rows) + below)


def result_html(obj: ResultLike | Mapping[str, ResultLike], digits: int = 4, per_query: bool = False) -> str:
    """The ``html`` format (what a notebook shows): a ``<div>`` with escaped tables, the aggregates last."""
    named = named_results(obj)
    header, rows, below = result_cells(obj, digits)
    first = named[0][1]
    conv = first.convention
    if len(named) == 1:
        title = f"ranklens Result: {len(first.queries)} queries, convention {conv.name!r}"
    else:
        title = f"ranklens results: {len(named)} runs, convention {conv.name!r}"
    notes = [f"convention {conv.name}: {conv.description or conv.mirrors}"] + below[1:]
    tables = (per_query_sections(obj, digits) if per_query else []) + [("", header, rows)]
    first_title, first_header, first_rows = tables[0]
    return html_table(first_header, first_rows, title=f"{title}; {first_title}" if first_title else title,
                      notes=notes, sections=tables[1:])
