"""Reports over a selection of groups: the mean of each measure per window and series (with
intervals), the baseline, the worst lists, one list's table, two selections compared, the slice values
behind a change, and what the store holds.

Values come from :mod:`ranklens.monitor.storage.values` (stored per group, or computed from the events); the
aggregation works on a small per-group table (no Python loop over groups; loops over cells).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..._base.deps import require
from ...errors import InputError, InvalidParameterError
from ..config import Baseline, MonitorConfig
from ..storage.db import Database, column_sql, fetch_arrow, filters_sql, metric_columns, quote, slice_columns
from ..storage.maturity import Maturity, maturity_of
from ..storage.params import MAX_CUTOFF, check_window, measure_keys, parse_time, series_where, window_delta
from ..storage.propensity_fit import propensity_info
from ..storage.schema import schema_version
from ..storage.values import select_values
from .aggregates import StoreAggregate, counted
from .baseline import BaselineSelection, select_baseline
from .explain import GroupExplanation, explain_group
from .slices import MIN_SUPPORT, auto_cells, slice_report

__all__ = ["Reports", "aggregate", "mark_provisional"]


class Reports:
    """The reads of a store: every method opens the file for its own duration.

    Parameters
    ----------
    db : Database
        The store's file.
    config : MonitorConfig
        Attribution, evaluation (convention, tracked measures) and the default baseline.
    """

    def __init__(self, db: Database, config: MonitorConfig) -> None:
        self.db = db
        self.config = config

    def last_time(self) -> _dt.datetime | None:
        """The time of the last served list in the store (None when it is empty)."""
        with self.db.reading() as con:
            last = con.execute("SELECT max(ts) FROM groups").fetchall()[0][0]
        return last

    def values(self, measure: str, where: Mapping[str, Any] | None, start: Any,
               end: Any) -> tuple[np.ndarray, np.ndarray | None]:
        """(values, weights) of one measure over the counted groups of a selection (groups left out dropped;
        weights: None unless the measure is a weighted mean, see :mod:`ranklens.monitor.reports.aggregates`)."""
        key = measure_keys(measure)[0]
        with self.db.reading() as con:
            g, v = select_values(con, self.config, [key], where, start, end)
        return counted(StoreAggregate.of(key), v[:, 0], g.column("w:n_items"))

    def report(
        self,
        metrics: Any = ("ndcg@10",),
        window: str = "day",
        by: Iterable[str] = ("model", "model_version", "environment"),
        where: Mapping[str, Any] | None = None,
        start: Any = None,
        end: Any = None,
        *,
        k: Any = None,
        ci: str | None = "bootstrap",
        confidence: float = 0.95,
        n_resamples: int = 1000,
        seed: int = 0,
    ) -> Any:
        """Mean of each measure per time window and per series (see :meth:`Store.report`)."""
        window = check_window(window)
        keys = measure_keys(metrics, k)
        by = [str(b).lower() for b in ([by] if isinstance(by, str) else list(by or ()))]
        if ci not in ("bootstrap", "t", None, "none"):
            raise InvalidParameterError(f"`ci` must be 'bootstrap', 't' or None; got {ci!r}.")
        with self.db.reading() as con:
            slices = slice_columns(con)
            exprs = [f"date_trunc('{window}', ts) AS {quote('c:window')}"]
            exprs += [f"{column_sql(con, b, slices)} AS {quote('c:' + b)}" for b in by]
            groups, values = select_values(con, self.config, keys, where, start, end, exprs)
            maturity = maturity_of(con, self.config)
        keycols = ["c:window"] + ["c:" + b for b in by]
        table = aggregate(groups, values, keys, keycols, ["window"] + by, ci, confidence, n_resamples, seed,
                          skip_partial=self.config.partial == "skip")
        return mark_provisional(table, maturity, window)

    def maturity(self) -> Maturity:
        """The label maturity in force (configured or learned) and the store clock (see ``_maturity``)."""
        with self.db.reading() as con:
            return maturity_of(con, self.config)

    def baseline(self, measure: str = "ndcg@10", baseline: Any = None, where: Mapping[str, Any] | None = None,
                 *, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
        """Value of ``measure`` over the baseline groups (environment or date range), with a bootstrap interval."""
        spec = Baseline.parse(baseline) if baseline is not None else self.config.baseline
        if spec.kind == "previous":
            raise InvalidParameterError("a 'previous window' baseline depends on a window; use report() or check().")
        key = measure_keys(measure)[0]
        with self.db.reading() as con:  # the series' baseline by the monitors' rule (ranklens.monitor.reports.baseline)
            g, values, sel = select_baseline(con, self.config, [key], spec, where)
        agg = StoreAggregate.of(key)
        out = agg.summary(*counted(agg, values[:, 0], g.column("w:n_items")), confidence, n_resamples, seed)
        out["spec"] = {"kind": spec.kind, "environment": spec.environment, "start": spec.start, "end": spec.end,
                       "where": dict(sel.where), "selection": sel.describe()}
        out["measure"] = key
        return out

    def groups(self, measure: str = "ndcg@10", start: Any = None, end: Any = None,
               where: Mapping[str, Any] | None = None, order: str = "worst", limit: int = 20) -> Any:
        """Served lists of a selection with their value, the worst (or best) first; ``provisional`` when a list
        was served after the labels' maturity (its labels may still arrive)."""
        pa = require("pyarrow")
        if order not in ("worst", "best"):
            raise InvalidParameterError(f"`order` must be 'worst' or 'best'; got {order!r}.")
        if not isinstance(limit, int) or limit < 1:
            raise InvalidParameterError(f"`limit` must be an integer >= 1; got {limit!r}.")
        key = measure_keys(measure)[0]
        with self.db.reading() as con:
            slices = slice_columns(con)
            extra = ["group_id", "model", "model_version", "environment", "ts AS timestamp"]
            extra += [f"{quote(c)} AS {quote(s)}" for s, c in slices.items()]
            extra += ["n_items", "n_relevant"]
            groups, values = select_values(con, self.config, [key], where, start, end, extra)
            until = maturity_of(con, self.config).mature_until
        v = values[:, 0]
        counted = ~np.isnan(v)
        o = np.argsort(v if order == "worst" else -v, kind="stable")
        o = o[counted[o]][:limit]
        cols = {c: groups.column(c).take(pa.array(o)) for c in groups.column_names if c not in ("gid", "source")}
        names = ["group_id", "model", "model_version", "environment", "timestamp", *slices]
        out = {n: cols[n] for n in names}
        out["measure"] = pa.array([key] * len(o), pa.string())
        out["value"] = pa.array(v[o])
        out["n_items"] = cols["n_items"]
        out["n_relevant"] = cols["n_relevant"]
        # served after the store's clock minus the maturity: its labels may still arrive, its value rise
        out["provisional"] = pa.array([until is not None and t > until for t in cols["timestamp"].to_pylist()],
                                      pa.bool_())
        return pa.table(out)

    def explain(self, group_id: Any, model: str | None = None, model_version: str | None = None,
                environment: str | None = None, k: int | None = 10, measure: str = "ndcg") -> GroupExplanation:
        """One served list position by position, the whole list (see :meth:`Store.explain`)."""
        where = {"group_id": str(group_id)}
        for c, v in (("model", model), ("model_version", model_version), ("environment", environment)):
            if v is not None:
                where[c] = v
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_CUTOFF):
            raise InvalidParameterError(f"`k` must be an integer in [1, {MAX_CUTOFF}] or None; got {k!r}.")
        with self.db.reading() as con:
            cond, params = filters_sql(con, where, None, None)
            found = con.execute(
                f"SELECT gid, model, model_version, environment, source, order_by FROM groups WHERE {cond} "
                "ORDER BY gid", params
            ).fetchall()
            if not found:
                others = ", ".join(f"{c}={v}" for c, v in where.items() if c != "group_id")
                raise InputError(f"no served list with group_id {str(group_id)!r}"
                                 + (f" and {others}" if len(where) > 1 else "") + " in the store.")
            if len(found) > 1:
                opts = "; ".join(f"model={m} model_version={v} environment={e}" for _, m, v, e, _, _ in found[:5])
                raise InputError(f"group_id {str(group_id)!r} was served {len(found)} times ({opts}); "
                                 "say which with model / model_version / environment.")
            gid, m, v, e, source, order_by = found[0]
            if source != "events":
                raise InputError(
                    f"group_id {str(group_id)!r} came as per-group results (no events): nothing to explain."
                )
            return explain_group(con, self.config, gid, (str(group_id), m, v, e, order_by), k, measure)

    def compare(self, measure: str = "ndcg@10", a: Mapping[str, Any] | None = None, b: Mapping[str, Any] | None = None,
                *, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0,
                same_period: bool = True) -> dict[str, Any]:
        """Two selections of groups side by side: means, intervals, Welch's test (see :meth:`Store.compare`)."""
        key = measure_keys(measure)[0]
        sels = []
        for name, sel in (("a", a), ("b", b)):
            sel = dict(sel or {})
            unknown = set(sel) - {"where", "start", "end"}
            if unknown:
                raise InvalidParameterError(f"`{name}` accepts where, start and end; not {', '.join(sorted(unknown))}.")
            sels.append(sel)
        note = ""
        sides = []
        with self.db.reading() as con:
            if same_period and not any(sel.get(t) for sel in sels for t in ("start", "end")):
                spans = []
                for sel in sels:
                    cond, params = filters_sql(con, sel.get("where"), None, None)
                    spans.append(con.execute(f"SELECT min(ts), max(ts) FROM groups WHERE {cond}", params).fetchall()[0])
                if all(x[0] is not None for x in spans):
                    first, last = max(x[0] for x in spans), min(x[1] for x in spans)
                    s0 = _dt.datetime(first.year, first.month, first.day)
                    e0 = _dt.datetime(last.year, last.month, last.day) + _dt.timedelta(days=1)
                    if first <= last:  # the days both sides were served
                        for sel in sels:
                            sel["start"], sel["end"] = s0, e0
                    else:
                        note = ("A and B were served over periods that do not overlap: the difference may come from "
                                "the period as well as from what differs between them.")
            agg = StoreAggregate.of(key)
            for sel in sels:
                g, v = select_values(con, self.config, [key], sel.get("where"), sel.get("start"), sel.get("end"))
                sides.append(counted(agg, v[:, 0], g.column("w:n_items")))
        out: dict[str, Any] = {"measure": key, "aggregate": agg.kind}
        for name, (v, w), sel in zip(("a", "b"), sides, sels, strict=True):
            out[name] = agg.summary(v, w, confidence, n_resamples, seed)
            for t in ("start", "end"):
                tv = parse_time(sel.get(t), t)
                out[name][t] = tv.isoformat() if tv is not None else None
        (va, wa), (vb, wb) = sides
        out.update(agg.difference(va, wa, vb, wb, confidence, n_resamples, seed))
        if note:
            out["note"] = note
        return out

    def window(self, start: Any = None, end: Any = None) -> tuple[_dt.datetime, _dt.datetime]:
        """The window ``[start, end)`` of slices and drill-downs: as given, or the last day in the store."""
        s, e = parse_time(start, "start"), parse_time(end, "end")
        if s is not None and e is not None:
            return s, e
        if s is not None or e is not None:
            raise InvalidParameterError("give both `start` and `end` for the window, or neither (the last day).")
        last = self.last_time()
        if last is None:
            raise InputError("the store is empty.")
        s = _dt.datetime(last.year, last.month, last.day)
        return s, s + _dt.timedelta(days=1)

    def series_baseline(self, measure: str, where: Mapping[str, Any] | None, w0: Any = None, w1: Any = None,
                        baseline: Any = None) -> tuple[tuple[np.ndarray, np.ndarray | None], BaselineSelection]:
        """((counted values, weights), selection) of the baseline of the series ``where`` judged over
        ``[w0, w1)``: the one rule of the monitors, the overview and the slices
        (:mod:`ranklens.monitor.reports.baseline`); weights as in :meth:`values`."""
        key = measure_keys(measure)[0]
        spec = Baseline.parse(baseline) if baseline is not None else self.config.baseline
        with self.db.reading() as con:
            g, v, sel = select_baseline(con, self.config, [key], spec, where, w0, w1)
        return counted(StoreAggregate.of(key), v[:, 0], g.column("w:n_items")), sel

    def baselines(self, measure: str = "ndcg@10", by: Iterable[str] = ("model", "model_version", "environment"),
                  where: Mapping[str, Any] | None = None, start: Any = None, end: Any = None, baseline: Any = None,
                  *, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Any:
        """One baseline per series of ``[start, end)`` (see :meth:`Store.baselines`)."""
        pa = require("pyarrow")
        key = measure_keys(measure)[0]
        spec = Baseline.parse(baseline) if baseline is not None else self.config.baseline
        by = [str(b).lower() for b in ([by] if isinstance(by, str) else list(by or ()))]
        with self.db.reading() as con:
            slices = slice_columns(con)
            exprs = [f"{column_sql(con, b, slices)} AS {quote('s:' + b)}" for b in by]
            groups, _ = select_values(con, self.config, [], where, start, end, exprs)
            combos = groups.select(["s:" + b for b in by]).group_by(["s:" + b for b in by]).aggregate([]).to_pylist() \
                if by and groups.num_rows else ([{}] if groups.num_rows else [])
            rows = []
            for combo in sorted(combos, key=lambda r: tuple("" if v is None else str(v) for v in r.values())):
                series = {b: combo["s:" + b] for b in by}
                w = series_where(where, series)
                row: dict[str, Any] = dict(series)
                if spec.kind == "previous":
                    row.update({"value": math.nan, "ci_low": math.nan, "ci_high": math.nan, "n_groups": 0,
                                "baseline": "previous window (one per window)", "own": False})
                else:
                    g, v, sel = select_baseline(con, self.config, [key], spec, w)
                    agg = StoreAggregate.of(key)
                    row.update(agg.summary(*counted(agg, v[:, 0], g.column("w:n_items")), confidence, n_resamples,
                                           seed))
                    row["baseline"] = sel.describe()
                    row["own"] = sel.where == w and sel.start is None and sel.end is None  # the series is its baseline
                rows.append(row)
        if not rows:
            return pa.table({**{b: pa.array([], pa.string()) for b in by}, "value": pa.array([], pa.float64())})
        return pa.Table.from_pylist(rows)

    def slices(self, measure: str = "ndcg@10", start: Any = None, end: Any = None, baseline: Any = None,
               columns: Iterable[str] | None = None, where: Mapping[str, Any] | None = None, *,
               by: Iterable[str] = ("model", "model_version", "environment"), depth: int = 2,
               min_support: int = MIN_SUPPORT, correction: str = "holm") -> Any:
        """Which slices explain the change of ``measure`` (see :meth:`Store.slices`)."""
        pa = require("pyarrow")
        key = measure_keys(measure)[0]
        spec = Baseline.parse(baseline) if baseline is not None else self.config.baseline
        s, e = self.window(start, end)
        cols = None if columns is None else ([columns] if isinstance(columns, str) else list(columns))
        by = [by] if isinstance(by, str) else list(by or ())
        with self.db.reading() as con:
            rows, meta = slice_report(con, self.config, key, s, e, spec, cols, dict(where or {}), by, depth,
                                      min_support, correction)
            until = maturity_of(con, self.config).mature_until
        meta.update({"window_start": s.isoformat(), "window_end": e.isoformat(), "baseline_spec": spec.describe(),
                     "provisional": until is not None and e > until})  # labels not mature: values may still rise
        meta.setdefault("baseline", spec.describe())
        table = pa.Table.from_pylist(rows) if rows else pa.table({})
        return table.replace_schema_metadata({"ranklens": json.dumps(meta)})

    def auto_slices(self, measure: str, start: Any, end: Any, baseline: Any, columns: Any, where: Any, *,
                    by: Any, max_columns: int, min_support: int, correction: str, **rule: Any) -> Any:
        """The slices that cross an automatic-slice rule (see :meth:`ranklens.monitor.Store.auto_slices`)."""
        pa = require("pyarrow")
        tab = self.slices(measure, start, end, baseline, columns, where, by=by, depth=max_columns,
                          min_support=min_support, correction=correction)
        cells = auto_cells([r for r in tab.to_pylist() if r], correction, **rule)
        meta = json.loads((tab.schema.metadata or {})[b"ranklens"])
        meta["n_tested"] = sum(1 for c in cells if not math.isnan(c["p_drop"]))
        rows = [{k: v for k, v in c.items() if k not in ("fires", "why")} for c in cells if c["fires"]]
        out = pa.Table.from_pylist(rows) if rows else pa.table({})
        return out.replace_schema_metadata({"ranklens": json.dumps(meta)})

    def info(self) -> dict[str, Any]:
        """What the store holds: counts, time range, models, slice columns, tracked measures."""
        with self.db.reading() as con:
            one = con.execute("""SELECT (SELECT count(*) FROM groups), (SELECT count(*) FROM items),
                                        (SELECT count(*) FROM feedback), (SELECT count(*) FROM batches),
                                        (SELECT count(*) FROM quarantine), (SELECT min(ts) FROM groups),
                                        (SELECT max(ts) FROM groups)""").fetchall()[0]
            models = [dict(zip(("model", "model_version", "environment", "groups", "first", "last"), r, strict=True))
                      for r in con.execute("""SELECT model, model_version, environment, count(*), min(ts), max(ts)
                                              FROM groups GROUP BY ALL ORDER BY 1, 2, 3""").fetchall()]
            for m in models:
                m["first"], m["last"] = m["first"].isoformat(), m["last"].isoformat()
            reasons = dict(con.execute("SELECT reason, count(*) FROM quarantine GROUP BY 1 ORDER BY 2 DESC").fetchall())
            return {
                "path": str(self.db.path), "schema_version": schema_version(con),
                "groups": one[0], "items": one[1], "labels": one[2], "batches": one[3], "quarantined": one[4],
                "quarantine_reasons": reasons,
                "first": one[5].isoformat() if one[5] else None, "last": one[6].isoformat() if one[6] else None,
                "models": models, "slices": sorted(slice_columns(con)),
                "tracked": sorted(metric_columns(con)),
                "maturity": maturity_of(con, self.config).to_dict(),
                "propensity": propensity_info(con, self.config),
            }

    def quarantine(self, limit: int = 100) -> Any:
        """Rows that failed validation: batch, source, row number, reason and the row as it came."""
        with self.db.reading() as con:
            return fetch_arrow(con.sql("SELECT batch_id, source, row_number, reason, record FROM quarantine "
                                       "ORDER BY source, row_number LIMIT ?", params=[int(limit)]))


def mark_provisional(table: Any, maturity: Maturity, window: str) -> Any:
    """``table`` (a report) with a last column ``provisional``: the window ends after the store's clock minus
    the label maturity, so its labels may not all have arrived (see :mod:`ranklens.monitor.storage.maturity`)."""
    pa = require("pyarrow")
    until = maturity.mature_until
    if until is None or table.num_rows == 0:
        flags = pa.array([False] * table.num_rows, pa.bool_())
    else:
        ends = table.column("window").to_numpy().astype("datetime64[us]") + np.timedelta64(window_delta(window))
        flags = pa.array(ends > np.datetime64(until, "us"), pa.bool_())
    return table.append_column("provisional", flags)


def aggregate(groups: Any, values: np.ndarray, keys: list[str], keycols: list[str], names: list[str],
              ci: str | None, confidence: float, n_resamples: int, seed: int, skip_partial: bool = True) -> Any:
    """The report's table: per cell (the distinct values of ``keycols``, named ``names``) and measure, the
    aggregate of the counted groups (:class:`~ranklens.monitor.reports.aggregates.StoreAggregate`: a mean, a
    geometric mean, a mean weighted by the lists' items or a total), their number, the number left out,
    and the cell's interval (``groups`` has the columns ``w:n_items`` and ``w:partial``). ``n_partial`` counts
    the partial lists (lost rows to the quarantine): left out (``skip_partial``, their values are NaN) or
    counted in; ``n_excluded`` those left out by the empty rule."""
    pa = require("pyarrow")
    pc = require("pyarrow.compute")

    n = groups.num_rows
    if n == 0:
        schema = [pa.field("window", pa.timestamp("us"))] + [pa.field(c, pa.string()) for c in names[1:]]
        schema += [pa.field("measure", pa.string()), pa.field("value", pa.float64()),
                   pa.field("n_groups", pa.int64()), pa.field("n_excluded", pa.int64()),
                   pa.field("n_partial", pa.int64()), pa.field("ci_low", pa.float64()),
                   pa.field("ci_high", pa.float64())]
        return pa.schema(schema).empty_table()
    # cell id of each group: rows sorted by the key columns, a new cell where any key changes
    sort_keys = [(c, "ascending") for c in keycols]
    order = pc.sort_indices(groups.select(keycols), sort_keys=sort_keys).to_numpy()
    st = groups.select(keycols).take(pa.array(order))
    change = np.zeros(n, dtype=bool)
    change[0] = True
    for c in keycols:
        col = st.column(c).combine_chunks()
        if n > 1:
            a, b = col.slice(1), col.slice(0, n - 1)
            neq = pc.fill_null(pc.not_equal(a, b), True).to_numpy(zero_copy_only=False)
            both_null = (pc.is_null(a).to_numpy(zero_copy_only=False) & pc.is_null(b).to_numpy(zero_copy_only=False))
            change[1:] |= neq & ~both_null
    cell = np.cumsum(change) - 1
    starts = np.flatnonzero(change)
    n_cells = len(starts)
    cells = st.take(pa.array(starts))
    vals = values[order]
    n_items = groups.column("w:n_items").to_numpy(zero_copy_only=False).astype(np.float64)[order]
    partial = groups.column("w:partial").to_numpy(zero_copy_only=False).astype(bool)[order]
    n_partial = np.bincount(cell, weights=partial, minlength=n_cells).astype(np.int64)
    out_rows: dict[str, list[Any]] = {c: [] for c in ["measure", "value", "n_groups", "n_excluded", "n_partial",
                                                      "ci_low", "ci_high"]}
    idx_rows: list[np.ndarray] = []
    ends = np.append(starts[1:], n)
    for j, key in enumerate(keys):
        agg = StoreAggregate.of(key)
        v = vals[:, j]
        w = agg.weights(n_items)
        ok = ~np.isnan(v) if w is None else ~np.isnan(v) & ~np.isnan(w)
        cnt = np.bincount(cell, weights=ok, minlength=n_cells).astype(np.int64)
        tot = np.bincount(cell, minlength=n_cells).astype(np.int64)
        cols = agg.columns(np.where(ok, v, 0.0), None if w is None else np.where(ok, w, 0.0))
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.column_stack([np.bincount(cell, weights=np.where(ok, cols[:, c], 0.0), minlength=n_cells)
                                     for c in range(cols.shape[1])]) / cnt[:, None]
        mean = np.where(cnt > 0, agg.finish(means, cnt), np.nan)
        lo = np.full(n_cells, np.nan)
        hi = np.full(n_cells, np.nan)
        for i in np.flatnonzero(cnt >= 2):  # one interval per cell (window x series), not per group
            sl = slice(starts[i], ends[i])
            x, xw = counted(agg, v[sl], n_items[sl])
            lo[i], hi[i] = agg.interval(x, xw, ci, confidence, n_resamples, seed)
        idx_rows.append(np.arange(n_cells))
        out_rows["measure"].append(np.full(n_cells, key, dtype=object))
        out_rows["value"].append(mean)
        out_rows["n_groups"].append(cnt)
        out_rows["n_excluded"].append(tot - cnt - (n_partial if skip_partial else 0))
        out_rows["n_partial"].append(n_partial)
        out_rows["ci_low"].append(lo)
        out_rows["ci_high"].append(hi)
    idx = np.concatenate(idx_rows)
    # order: window, series, measure in the order asked
    metric_pos = np.concatenate([np.full(n_cells, j) for j in range(len(keys))])
    o = np.lexsort((metric_pos, idx))
    data: dict[str, Any] = {}
    for name, c in zip(names, keycols, strict=True):
        data[name] = cells.column(c).take(pa.array(idx[o]))
    data["measure"] = pa.array(np.concatenate(out_rows["measure"])[o].tolist(), pa.string())
    for c in ("value", "ci_low", "ci_high"):
        data[c] = pa.array(np.concatenate(out_rows[c])[o], pa.float64())
    for c in ("n_groups", "n_excluded", "n_partial"):
        data[c] = pa.array(np.concatenate(out_rows[c])[o], pa.int64())
    return pa.table(data)
