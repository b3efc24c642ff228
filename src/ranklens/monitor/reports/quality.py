"""Data quality per window and series: traffic volume, labels arriving, quarantined rows, partial lists.

Each metric is a count or a share per window (and series, or slice cell):

* ``volume``: the lists served (``count``; ``n`` the same);
* ``label_arrival``: the share of the lists with at least one outcome (a label or a relevance, in-line or
  late) among the lists with events (``count`` labelled, ``n`` lists); judged on mature windows only;
* ``partial_lists``: the share of lists that lost ranking rows to the quarantine (``count`` partial);
* ``quarantine_rate``: the share of the rows ingested for the window that were quarantined (``count``
  quarantined rows, ``n`` rows; the store's, not a series': quarantined rows may have no model or slice).

A baseline (:func:`baseline_value`) is the mean count (volume) or the pooled share of the same series over
the same window of each of the ``TRAILING_WEEKS`` weeks before (``trailing``: windows without a list left
out), the window before (``previous``), or a date range (``START..END``: the mean count per window of the
range, or its pooled share).
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..._base.deps import require
from ...errors import InvalidParameterError
from ..config import TRAILING_WEEKS, Baseline
from ..kinds import QUALITY
from ..storage.db import column_sql, fetch_arrow, filters_sql, quote, slice_columns
from ..storage.params import check_window, parse_time, window_delta

__all__ = ["baseline_value", "quality_cells", "quality_report", "quarantine_sources"]


def _select(metric: str) -> tuple[str, str, str]:
    """(FROM clause, count expression, n expression) of a metric over the groups (alias g)."""
    if metric == "volume":
        return "groups g", "count(*)", "count(*)"
    if metric == "partial_lists":
        return "groups g", "count(*) FILTER (WHERE coalesce(g.n_lost, 0) > 0)", "count(*)"
    return ("groups g LEFT JOIN (SELECT DISTINCT gid FROM item_labels) l ON l.gid = g.gid",
            "count(l.gid)", "count(*)")


def quality_report(con: Any, metric: str, window: str = "day", by: Sequence[str] = (),
                   where: Mapping[str, Any] | None = None, start: Any = None, end: Any = None) -> Any:
    """``metric`` per window and series as a pyarrow Table: ``window``, the ``by`` columns, ``metric``,
    ``value`` (the count for volume, else the share), ``count``, ``n`` (see the module)."""
    pa = require("pyarrow")
    metric = str(metric).strip().lower()
    if metric not in QUALITY:
        raise InvalidParameterError(f"unknown data-quality metric {metric!r}; metrics: {', '.join(QUALITY)}.")
    window = check_window(window)
    by = [str(b).lower() for b in by]
    if metric == "quarantine_rate":
        if by or where:
            raise InvalidParameterError("quarantine_rate is the store's: `by` and `where` do not apply to it.")
        clauses, params = [], []
        for t, op in ((parse_time(start, "start"), ">="), (parse_time(end, "end"), "<")):
            if t is not None:
                clauses.append(f"hour {op} ?")
                params.append(t)
        table = fetch_arrow(con.sql(f"""
            SELECT date_trunc('{window}', hour) AS "window", sum(quarantined) AS count, sum(rows) AS n
            FROM row_counts WHERE hour IS NOT NULL AND {' AND '.join(clauses) or 'TRUE'}
            GROUP BY ALL HAVING sum(rows) > 0 ORDER BY 1""", params=params))
    else:
        slices = slice_columns(con)
        cols = [f"g.{column_sql(con, b, slices)} AS {quote(b)}" for b in by]
        cond, params = filters_sql(con, where, start, end, alias="g")
        src, count, n = _select(metric)
        if metric == "label_arrival":
            cond += " AND g.source = 'events'"
        table = fetch_arrow(con.sql(f"""
            SELECT date_trunc('{window}', g.ts) AS "window"{''.join(', ' + c for c in cols)}, {count} AS count,
                   {n} AS n
            FROM {src} WHERE {cond} GROUP BY ALL ORDER BY ALL""", params=params))
    cnt = table.column("count").to_numpy(zero_copy_only=False).astype("float64")
    tot = table.column("n").to_numpy(zero_copy_only=False).astype("float64")
    value = cnt if metric == "volume" else cnt / tot
    return pa.table({"window": table.column("window"), **{b: table.column(b) for b in by},
                     "metric": pa.array([metric] * table.num_rows, pa.string()), "value": pa.array(value),
                     "count": table.column("count").cast(pa.int64()), "n": table.column("n").cast(pa.int64())})


def _span(spec: Baseline, window: str, w0: _dt.datetime) -> tuple[Any, Any, list[Any] | None, int]:
    """(start, end, the window starts kept or None for all, windows in the span) of a baseline of ``w0``."""
    delta = window_delta(window)
    if spec.kind == "trailing":
        starts = [w0 - _dt.timedelta(weeks=i) for i in range(1, TRAILING_WEEKS + 1)]
        return starts[-1], w0, starts, len(starts)
    if spec.kind == "previous":
        return w0 - delta, w0, None, 1
    if spec.kind == "range":
        s, e = parse_time(spec.start, "baseline start"), parse_time(spec.end, "baseline end")
        n = max(1, math.ceil((e - s) / delta)) if s is not None and e is not None else 1
        return s, e, None, n
    raise InvalidParameterError(f"data-quality metrics are compared with the same series' earlier windows "
                                f"(trailing, previous or a date range), not with the {spec.describe()} lists.")


def _pooled(metric: str, spec: Baseline, rows: list[dict[str, Any]], n_windows: int) -> tuple[float, int]:
    """(value, windows or lists it rests on): the mean count per window (volume; trailing: over the weeks that
    served lists) or the pooled share."""
    if not rows:
        return math.nan, 0
    count = sum(r["count"] for r in rows)
    if metric == "volume":
        return count / (len(rows) if spec.kind == "trailing" else n_windows), len(rows)
    n = sum(r["n"] for r in rows)
    return (count / n if n else math.nan), n


def baseline_value(con: Any, metric: str, spec: Baseline, window: str, series_where: Mapping[str, Any],
                   w0: _dt.datetime, by: Sequence[str] = ()) -> dict[tuple[Any, ...], tuple[float, int]]:
    """The baseline of ``metric`` for the series ``series_where`` judged on the window starting at ``w0``: per
    value of the ``by`` columns (``()`` for the series itself), (value, windows or lists it rests on)."""
    s, e, starts, n_windows = _span(spec, window, w0)
    rows = quality_report(con, metric, window, by, dict(series_where) or None, s, e).to_pylist()
    if starts is not None:
        rows = [r for r in rows if r["window"] in starts]
    cells: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        cells.setdefault(tuple(r[b] for b in by), []).append(r)
    return {k: _pooled(metric, spec, v, n_windows) for k, v in cells.items()}


def quarantine_sources(con: Any, start: Any, end: Any, n: int = 3) -> list[dict[str, Any]]:
    """The files whose rows were quarantined most in ``[start, end)``: source, rows, quarantined, share, and the
    reasons of the file's quarantined rows (most frequent first)."""
    rows = con.execute("""
        SELECT b.source, c.batch_id, sum(c.rows), sum(c.quarantined) FROM row_counts c
        JOIN batches b ON b.batch_id = c.batch_id
        WHERE c.hour >= ? AND c.hour < ? GROUP BY ALL HAVING sum(c.quarantined) > 0
        ORDER BY 4 DESC, 1 LIMIT ?""", [parse_time(start, "start"), parse_time(end, "end"), int(n)]).fetchall()
    out = []
    for source, batch_id, total, bad in rows:
        reasons = dict(con.execute("SELECT reason, count(*) FROM quarantine WHERE batch_id = ? GROUP BY 1 "
                                   "ORDER BY 2 DESC, 1 LIMIT 3", [batch_id]).fetchall())
        out.append({"source": source, "rows": int(total), "quarantined": int(bad), "share": bad / total,
                    "reasons": {k: int(v) for k, v in reasons.items()}})
    return out


def quality_cells(con: Any, metric: str, window: str, series_where: Mapping[str, Any], w0: _dt.datetime,
                  spec: Baseline, columns: Sequence[str], max_columns: int = 2, min_support: int = 1
                  ) -> list[dict[str, Any]]:
    """The slice cells of one series and window (values of the slice ``columns`` and their combinations, with
    at least ``min_support`` lists) as rows of the slice search (:mod:`ranklens.monitor.reports.search`), with
    ``contribution`` (most harmful lowest): for ``volume`` the change of the cell's lists against its own
    baseline; for a share, the share of the series' lists that are the cell's bad ones (partial, or
    without outcome), negated. They add up, over one column, to the series' change (volume) or share."""
    from .search import slice_definitions

    w1 = w0 + window_delta(window)
    fixed = {str(k).lower() for k in series_where}
    cols = [c for c in columns if c not in fixed]
    total = quality_report(con, metric, window, (), series_where or None, w0, w1).to_pylist()
    if not total or not cols:
        return []
    big_n = total[0]["n"]
    worse = QUALITY[metric]
    out: list[dict[str, Any]] = []
    defs = slice_definitions(cols, max_columns)
    bases = {d: baseline_value(con, metric, spec, window, series_where, w0, d) for d in defs} \
        if metric == "volume" else {}
    for d in defs:
        found = quality_report(con, metric, window, d, series_where or None, w0, w1).to_pylist()
        if metric == "volume":  # a cell the baseline served and the window did not: it lost all its lists
            seen = {tuple(r[c] for c in d) for r in found}
            found += [{**dict(zip(d, k)), "count": 0, "n": 0, "value": 0.0} for k in bases[d] if k not in seen]
        for r in found:
            if r["n"] < min_support and metric != "volume":
                continue
            cell: dict[str, Any] = {"column": d[0], "value": r[d[0]], "column2": d[1] if len(d) > 1 else None,
                                    "value2": r[d[1]] if len(d) > 1 else None, "n_window": r["n"],
                                    "window_value": r["value"], "share_window": r["n"] / big_n if big_n else None}
            if len(d) > 2:
                cell.update(column3=d[2], value3=r[d[2]])
            if metric == "volume":
                base, n_base = bases[d].get(tuple(r[c] for c in d), (math.nan, 0))
                cell.update(baseline_value=base, n_baseline=n_base, change=r["value"] - base,
                            contribution=r["value"] - base)
            else:
                bad = r["count"] if worse == "up" else r["n"] - r["count"]
                cell["contribution"] = -bad / big_n
            out.append(cell)
    return out
