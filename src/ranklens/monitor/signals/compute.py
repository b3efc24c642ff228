"""Label-free signals per window and series, against the baseline: score drift, positions, catalogue.

A broken ranker shows in what it serves long before its outcomes arrive. For every time window and
series (as in reports) the served rows of the selection are compared with those of the baseline (the
same baseline as the monitors: the training lists of the same model version, a date range, or the
previous window). Definitions (``docs/monitoring.md``, "Signals without labels"):

* **position** of an item: its place in its served list, 1 = top: the order of ``rank`` when the list
  has ranks, else of decreasing ``score`` (tied scores in item id order);
* ``psi(X)``: population stability index ``sum_b (w_b - r_b) * ln(w_b / r_b)`` of the shares ``w`` of
  the window and ``r`` of the baseline over bins ``b``; a share of 0 is replaced by ``1e-4`` (Evidently's
  rule). Bins: for ``score``, the deciles of the baseline's scores (numpy's linear quantiles; a value
  equal to an edge goes to the bin above; repeated edges merged); for ``position``, positions 1..20 and
  one bin for 21 and deeper; for ``popularity@k``, the *baseline popularity* of the items served at
  positions 1..k: the number of baseline lists serving the item (0 for an item the baseline never
  served; for a baseline row, not counting its own list, so that a new item and an item the baseline
  served once compare alike), binned by the deciles of the baseline rows' popularity as for scores;
* ``ks(score)``: the two-sample Kolmogorov-Smirnov statistic ``D = max |F_w - F_r|`` of the scores,
  with the p-value of Smirnov's asymptotic distribution (``scipy.stats.kstwo.sf(D, round(n m / (n + m)))``,
  what ``scipy.stats.ks_2samp(method="asymp")`` returns);
* ``coverage@k``: distinct items served at positions 1..k that the catalogue holds, over the catalogue
  size; the catalogue is the baseline's served items (Evidently), or ``catalogue_size`` items when given;
* ``gini@k``: Gini coefficient of item exposure (times each item is served at positions 1..k) over
  the items served, ``sum_i (2i - n - 1) c_(i) / ((n - 1) sum c)`` with exposures sorted ascending
  (Evidently's popularity bias; equal to ``sum_ij |c_i - c_j| / (2 (n - 1) sum c)``);
* ``novelty@k``: per list, the mean of ``-log2 p(i)`` over its items at positions 1..k, with ``p(i)`` the
  share of baseline lists serving item ``i`` (items the baseline never served are left out and counted);
  then the mean over lists (Evidently's novelty, lists for users). The baseline's own value counts, for
  each of its lists, the other baseline lists only (``p(i) = (c(i) - 1) / (n - 1)``), as for a window;
* ``ild@k``: intra-list diversity with an item attribute (a category): per list, the share of pairs of
  its items at positions 1..k whose attribute differs (items without one are left out; lists with fewer
  than two are left out and counted); then the mean over lists;
* ``psi(feature:NAME)``, ``js(feature:NAME)``, ``ks(feature:NAME)``: feature drift
  (:mod:`ranklens.monitor.signals.features`).

The rows are read in SQL (DuckDB); the arithmetic runs on flat numpy arrays, one pass per cell (window
and series), never per list or event.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._base.deps import require
from ...errors import InputError, InvalidParameterError
from ..config import Baseline
from ..reports.baseline import baseline_candidates
from ..storage.db import column_sql, duckdb_connect, feature_columns, fetch_arrow, filters_sql, quote, slice_columns
from ..storage.keys import ITEM_TEXT
from ..storage.params import check_window, series_where, window_delta
from .arithmetic import EPSILON, POSITION_BINS, gini, ild_per_list, ks_asymptotic, psi
from .features import DECILES, check_features, feature_arrays, feature_distance
from .names import SignalName, feature_signals, parse_signal, signal_keys

__all__ = ["CELL_VALUES", "EPSILON", "POSITION_BINS", "definition_of", "gini", "ild_per_list", "ks_asymptotic", "psi",
           "read_items", "signals"]

# -- rows of a selection ----------------------------------------------------------------------------------------
def read_items(source: Any, attribute: str) -> Any:
    """The item attribute table (``item_id``, ``attr``, one row per item) from a table or from Parquet, CSV or
    JSON Lines files (a path or a glob pattern such as ``events/*.parquet``: event files that carry the
    attribute on their ranking rows serve as well).

    Rows without an item id or an attribute are left out; an item given twice with the same value counts
    once; an item given two different values is an error naming it.
    """
    pa = require("pyarrow")
    pc = require("pyarrow.compute")
    if source is None:
        return None
    if isinstance(source, (str, bytes)) or hasattr(source, "__fspath__"):
        import glob
        import os

        path = os.fsdecode(source)
        pattern = any(ch in path for ch in "*?[")
        if not (glob.glob(path) if pattern else os.path.isfile(path)):
            raise InvalidParameterError(f"item attributes file {path!r} does not exist"
                                        + (" (the pattern matches no file)." if pattern else "."))
        duckdb = require("duckdb")
        con = duckdb_connect()
        try:
            low = path.lower()
            reader = ("read_parquet" if low.endswith(".parquet") else
                      "read_json_auto" if low.endswith((".jsonl", ".ndjson", ".json")) else "read_csv_auto")
            table = fetch_arrow(con.sql(f"SELECT * FROM {reader}(?)", params=[path]))
        except duckdb.Error as exc:
            raise InputError(f"{path}: cannot be read: {str(exc).splitlines()[0]}") from None
        finally:
            con.close()
        name = path
    else:
        mod = type(source).__module__.split(".")[0]
        if isinstance(source, pa.Table):
            table = source
        elif mod == "pandas":
            table = pa.Table.from_pandas(source, preserve_index=False)
        elif mod == "polars":
            table = source.to_arrow()
        else:
            raise InvalidParameterError(f"`items` must be a file path or a pandas / polars / pyarrow table; "
                                        f"got {type(source).__name__}.")
        name = "item attributes"
    cols = {c.lower(): c for c in table.column_names}
    for need in ("item_id", attribute.lower()):
        if need not in cols:
            raise InputError(f"{name}: no column {need!r} (columns: {', '.join(table.column_names)}).")
    ids = pc.utf8_trim_whitespace(table.column(cols["item_id"]).cast(pa.string()))
    attr = pc.utf8_trim_whitespace(table.column(cols[attribute.lower()]).cast(pa.string()))
    out = pa.table({"item_id": ids, "attr": attr}).filter(
        pc.and_(pc.fill_null(pc.not_equal(ids, ""), False), pc.fill_null(pc.not_equal(attr, ""), False)))
    out = out.group_by(["item_id", "attr"]).aggregate([])  # the same pair given twice (events) counts once
    counts = out.group_by("item_id").aggregate([("attr", "count")])
    twice = counts.filter(pc.greater(counts.column("attr_count"), 1))
    if twice.num_rows:
        item = twice.column("item_id")[0].as_py()
        values = sorted(out.filter(pc.equal(out.column("item_id"), item)).column("attr").to_pylist())
        raise InputError(f"{name}: item_id {item!r} has more than one {attribute}: {', '.join(map(repr, values[:3]))}.")
    return out


@dataclass
class _Rows:
    """Served rows of a selection as flat arrays, ordered by cell, list and position."""

    cell: np.ndarray
    gid: np.ndarray
    item: np.ndarray  # codes into the shared dictionary of item ids (sorted: code order is id order)
    score: np.ndarray
    position: np.ndarray
    attr: np.ndarray  # attribute code, -1 when none
    features: dict[str, np.ndarray]  # feature name -> values (NaN: missing) or codes (-1: missing)

    def take(self, lo: int, hi: int) -> _Rows:
        return _Rows(self.cell[lo:hi], self.gid[lo:hi], self.item[lo:hi], self.score[lo:hi],
                     self.position[lo:hi], self.attr[lo:hi], {f: v[lo:hi] for f, v in self.features.items()})


def _fetch(con: Any, cond: str, params: list[Any], cell_exprs: list[str], with_attr: bool,
           features: Iterable[str] = ()) -> Any:
    """Served rows of the groups matching ``cond`` (alias g), with their position, the cell columns and the
    values of the ``features``."""
    cells = ", ".join(cell_exprs) if cell_exprs else "NULL AS \"c:none\""
    order = ", ".join(f"{i + 1}" for i in range(max(len(cell_exprs), 1)))
    attr = ", a.attr" if with_attr else ", CAST(NULL AS VARCHAR) AS attr"
    attr += "".join(f", i.{quote('feature:' + f)}" for f in features)
    join = f" {ITEM_TEXT}" + (" LEFT JOIN _sig_attr a ON a.item_id = k.item_id" if with_attr else "")
    return fetch_arrow(con.sql(f"""
        SELECT {cells}, i.gid, k.item_id, i.score,
               row_number() OVER (PARTITION BY i.gid ORDER BY CASE WHEN g.order_by = 'rank' THEN i.rank END,
                                  i.score DESC NULLS LAST, k.item_id) AS position{attr}
        FROM groups g JOIN items i ON i.gid = g.gid{join}
        WHERE {cond}
        ORDER BY {order}, i.gid, position""", params=params))


class _Baseline:
    """What every cell of one baseline needs, computed once."""

    def __init__(self, rows: _Rows, n_items: int) -> None:
        self.rows = rows
        s = rows.score[~np.isnan(rows.score)]
        self.scores = np.sort(s)
        self.edges = np.unique(np.quantile(s, DECILES)) if s.shape[0] else np.zeros(0)
        self.exposure = np.bincount(rows.item, minlength=n_items)  # lists serving each item (one row per list)
        self.n_lists = int(np.unique(rows.gid).shape[0])
        self.items = np.flatnonzero(self.exposure)
        # a baseline row's item popularity without its own list (leave one out), as a window row sees it
        self.own_popularity = self.exposure[rows.item] - 1

    def popularity_edges(self, top: np.ndarray) -> np.ndarray:
        """Decile edges of the baseline popularity of the baseline rows selected by ``top``."""
        x = self.own_popularity[top]
        return np.unique(np.quantile(x, DECILES)) if x.shape[0] else np.zeros(0)


def _empty_out() -> dict[str, Any]:
    return {"value": math.nan, "baseline": math.nan, "p_value": math.nan, "n": 0, "n_baseline": 0, "n_excluded": 0}


def _tops(sig: SignalName, w: _Rows, b: _Baseline) -> tuple[np.ndarray, np.ndarray]:
    """The rows at positions 1..k (all rows without a cutoff) of the window and of the baseline."""
    top = w.position <= sig.k if sig.k is not None else np.ones(w.position.shape[0], bool)
    btop = b.rows.position <= sig.k if sig.k is not None else np.ones(b.rows.position.shape[0], bool)
    return top, btop


def _score_distance(sig: SignalName, w: _Rows, b: _Baseline, catalogue_size: int | None) -> dict[str, Any]:
    """psi(score) and ks(score): the window's scores against the baseline's (rows without a score left out)."""
    out = _empty_out()
    ok = ~np.isnan(w.score)
    ws = w.score[ok]
    out.update(n=int(ws.shape[0]), n_baseline=int(b.scores.shape[0]), n_excluded=int((~ok).sum()))
    if ws.shape[0] == 0 or b.scores.shape[0] == 0:
        return out
    if sig.kind == "psi":
        nb = b.edges.shape[0] + 1
        out["value"] = psi(np.bincount(np.searchsorted(b.edges, ws, side="right"), minlength=nb),
                           np.bincount(np.searchsorted(b.edges, b.scores, side="right"), minlength=nb))
    else:
        out["value"], out["p_value"] = ks_asymptotic(ws, b.scores)
    return out


def _position_psi(sig: SignalName, w: _Rows, b: _Baseline, catalogue_size: int | None) -> dict[str, Any]:
    """psi(position): positions 1..POSITION_BINS and one bin for deeper ones."""
    out = _empty_out()
    nb = POSITION_BINS + 1
    out.update(n=int(w.position.shape[0]), n_baseline=int(b.rows.position.shape[0]))
    out["value"] = psi(np.bincount(np.minimum(w.position, nb) - 1, minlength=nb),
                       np.bincount(np.minimum(b.rows.position, nb) - 1, minlength=nb))
    return out


def _popularity_psi(sig: SignalName, w: _Rows, b: _Baseline, catalogue_size: int | None) -> dict[str, Any]:
    """psi(popularity@k): the baseline popularity of the items served at positions 1..k, in its deciles."""
    out = _empty_out()
    top, btop = _tops(sig, w, b)
    out.update(n=int(top.sum()), n_baseline=int(btop.sum()))
    edges = b.popularity_edges(btop)
    nb = edges.shape[0] + 1
    out["value"] = psi(np.bincount(np.searchsorted(edges, b.exposure[w.item[top]], side="right"), minlength=nb),
                       np.bincount(np.searchsorted(edges, b.own_popularity[btop], side="right"), minlength=nb))
    return out


def _coverage(sig: SignalName, w: _Rows, b: _Baseline, catalogue_size: int | None) -> dict[str, Any]:
    """coverage@k: distinct items served that the catalogue holds, over the catalogue."""
    out = _empty_out()
    top, btop = _tops(sig, w, b)
    served_w = np.unique(w.item[top])
    served_b = np.unique(b.rows.item[btop])
    if catalogue_size is None:
        inside = np.isin(served_w, b.items, assume_unique=True)
        denominator = b.items.shape[0]
        out.update(n=int(inside.sum()), n_excluded=int((~inside).sum()), n_baseline=denominator)
        if denominator:
            out["value"] = inside.sum() / denominator
            out["baseline"] = np.isin(served_b, b.items, assume_unique=True).sum() / denominator
    else:
        out.update(n=int(served_w.shape[0]), n_baseline=int(served_b.shape[0]))
        out["value"] = served_w.shape[0] / catalogue_size
        out["baseline"] = served_b.shape[0] / catalogue_size
    return out


def _gini(sig: SignalName, w: _Rows, b: _Baseline, catalogue_size: int | None) -> dict[str, Any]:
    """gini@k of the exposures of the items served."""
    out = _empty_out()
    top, btop = _tops(sig, w, b)
    cw = np.bincount(w.item[top])
    cb = np.bincount(b.rows.item[btop])
    cw, cb = cw[cw > 0], cb[cb > 0]
    out.update(n=int(cw.shape[0]), n_baseline=int(cb.shape[0]), value=gini(cw), baseline=gini(cb))
    return out


def _novelty(sig: SignalName, w: _Rows, b: _Baseline, catalogue_size: int | None) -> dict[str, Any]:
    """novelty@k: mean over lists of the mean -log2 p(i) of their items (the baseline's own lists: the others)."""
    out = _empty_out()
    top, btop = _tops(sig, w, b)

    def novelty(rows_item: np.ndarray, rows_gid: np.ndarray, own: int) -> tuple[float, int, int]:
        # own = 1 for the baseline's own rows: the other baseline lists only
        p = (b.exposure[rows_item] - own) / max(b.n_lists - own, 1)
        known = p > 0
        if not known.any():
            return math.nan, 0, int((~known).sum())
        lists, inv = np.unique(rows_gid[known], return_inverse=True)
        per_list = np.bincount(inv, weights=-np.log2(p[known])) / np.bincount(inv)
        return float(per_list.mean()), int(lists.shape[0]), int((~known).sum())

    out["value"], out["n"], out["n_excluded"] = novelty(w.item[top], w.gid[top], 0)
    out["baseline"], out["n_baseline"], _ = novelty(b.rows.item[btop], b.rows.gid[btop], 1)
    return out


def _ild(sig: SignalName, w: _Rows, b: _Baseline, catalogue_size: int | None) -> dict[str, Any]:
    """ild@k: mean over lists of the share of their attributed item pairs that differ."""
    out = _empty_out()
    top, btop = _tops(sig, w, b)
    lw, vw = ild_per_list(w.gid[top], w.attr[top])
    lb, vb = ild_per_list(b.rows.gid[btop], b.rows.attr[btop])
    n_lists = int(np.unique(w.gid[top]).shape[0])
    out.update(n=int(lw.shape[0]), n_baseline=int(lb.shape[0]), n_excluded=n_lists - int(lw.shape[0]))
    out["value"] = float(vw.mean()) if vw.shape[0] else math.nan
    out["baseline"] = float(vb.mean()) if vb.shape[0] else math.nan
    return out


def _feature_drift(sig: SignalName, w: _Rows, b: _Baseline, catalogue_size: int | None) -> dict[str, Any]:
    """psi, ks or js of a feature column (:mod:`ranklens.monitor.signals.features`): the window's values
    against the baseline's."""
    f = str(sig.feature)
    return feature_distance(sig.kind, w.features[f].dtype.kind == "i", w.features[f], b.rows.features[f], psi,
                            ks_asymptotic)


#: The definition of each signal family (``SignalName.family``): one entry per family of ``names.SIGNALS``,
#: and the feature drift signals (``psi(feature)``, ``ks(feature)``, ``js(feature)``: any feature column).
#: A family without an entry is refused by name (:func:`definition_of`), never computed by another's rule.
CELL_VALUES: dict[str, Callable[[SignalName, _Rows, _Baseline, int | None], dict[str, Any]]] = {
    "psi(score)": _score_distance, "ks(score)": _score_distance, "psi(position)": _position_psi,
    "psi(popularity)": _popularity_psi, "coverage": _coverage, "gini": _gini, "novelty": _novelty, "ild": _ild,
    "psi(feature)": _feature_drift, "ks(feature)": _feature_drift, "js(feature)": _feature_drift,
}


def definition_of(sig: SignalName) -> Callable[[SignalName, _Rows, _Baseline, int | None], dict[str, Any]]:
    """The function computing ``sig`` on a cell: its family's entry of :data:`CELL_VALUES`, else an error.

    Examples
    --------
    >>> from ranklens.monitor.signals.names import SignalName
    >>> definition_of(SignalName("spread@10", "spread", None, 10))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ranklens.errors.InvalidParameterError: signal 'spread@10' has no definition ...
    """
    fn = CELL_VALUES.get(sig.family)
    if fn is None:
        raise InvalidParameterError(f"signal {sig.key!r} has no definition (family {sig.family!r}); defined: "
                                    f"{', '.join(CELL_VALUES)}.")
    return fn


def signals(
    con: Any,
    names: str | Iterable[str] | None = None,
    window: str = "day",
    by: Iterable[str] = ("model", "model_version", "environment"),
    where: Mapping[str, Any] | None = None,
    start: Any = None,
    end: Any = None,
    baseline: Baseline | None = None,
    *,
    items: Any = None,
    attribute: str | None = None,
    catalogue_size: int | None = None,
) -> Any:
    """The signals of every window and series of a selection against its baseline, as a pyarrow Table.

    Columns: ``window``, the ``by`` columns, ``signal``, ``value``, ``baseline`` (the baseline's own value
    of a level; null for distances), ``p_value`` (ks only), ``n_groups`` (lists served in the cell), ``n``
    and ``n_baseline`` (what was counted: scores, rows, items or lists, see docs/monitoring.md),
    ``n_excluded`` (left out, and why in the docs). The schema metadata ``baseline`` describes the baseline.
    """
    pa = require("pyarrow")
    pc = require("pyarrow.compute")
    window = check_window(window)
    stored = feature_columns(con)
    keys = [parse_signal(k) for k in signal_keys(names)]
    if names is None or (not isinstance(names, str) and not list(names)):  # every signal: the features' too
        keys += [parse_signal(k) for k in feature_signals(stored)]
    fns = {sig.key: definition_of(sig) for sig in keys}  # an unknown family is refused before any read
    features = check_features(keys, stored)
    by = [str(b).lower() for b in ([by] if isinstance(by, str) else list(by or ()))]
    bspec = baseline or Baseline()
    if catalogue_size is not None and (isinstance(catalogue_size, bool) or not isinstance(catalogue_size, int)
                                       or catalogue_size < 1):
        raise InvalidParameterError(f"`catalogue_size` must be an integer >= 1; got {catalogue_size!r}.")
    wants_ild = any(k.kind == "ild" for k in keys)
    if wants_ild and (items is None or not attribute):
        if names is None:
            keys = [k for k in keys if k.kind != "ild"]
            wants_ild = False
        else:
            raise InvalidParameterError("signal 'ild' needs item attributes: `items` (a file or table with item_id "
                                        "and the attribute) and `attribute` (its column, e.g. category); on the "
                                        "command line --items and --attribute.")
    if wants_ild:
        con.register("_sig_attr", read_items(items, str(attribute)))
    slices = slice_columns(con)
    cell_exprs = [f"date_trunc('{window}', g.ts) AS {quote('c:window')}"]
    cell_exprs += [f"g.{column_sql(con, b, slices)} AS {quote('c:' + b)}" for b in by]
    cond, params = filters_sql(con, where, start, end, alias="g")
    wt = _fetch(con, cond, params, cell_exprs, wants_ild, features)
    cell_cols = ["c:window"] + ["c:" + b for b in by]
    bounds = _cell_starts(wt, cell_cols)
    cell_keys = [{c: wt.column(c)[int(i)].as_py() for c in cell_cols} for i in bounds]
    ends = np.append(bounds[1:], wt.num_rows).astype(np.int64)
    bsel, cell_base = _baseline_selections(con, cell_keys, by, where, bspec, window)
    empty: tuple[str, list[Any]] = ("FALSE", [])
    btables = {key: _fetch(con, *(sel or empty), [], wants_ild, features) for key, sel in bsel.items()}
    # one dictionary of item ids (sorted), and of attribute values, shared by the window and every baseline
    all_items = pa.chunked_array([t.column("item_id") for t in [wt, *btables.values()]], pa.string())
    dictionary = pc.unique(all_items).sort() if all_items.length() else pa.array([], pa.string())
    all_attr = pa.chunked_array([t.column("attr") for t in [wt, *btables.values()]], pa.string())
    attr_dict = pc.unique(all_attr.drop_null()) if all_attr.length() else pa.array([], pa.string())
    n_items = len(dictionary)
    codes = {f: pc.unique(pa.chunked_array([t.column("feature:" + f) for t in [wt, *btables.values()]],
                                           pa.string()).drop_null())
             for f in features if stored[f] == "categorical"}  # each categorical feature's values, shared

    wrows = _rows_of(wt, dictionary, attr_dict, features, codes)
    bases = {key: _Baseline(_rows_of(t, dictionary, attr_dict, features, codes), n_items)
             for key, t in btables.items()}
    out: dict[str, list[Any]] = {c: [] for c in ["window", *by, "signal", "value", "baseline", "p_value",
                                                  "n_groups", "n", "n_baseline", "n_excluded"]}
    for ck, lo, hi, bkey in zip(cell_keys, bounds, ends, cell_base):
        w = wrows.take(int(lo), int(hi))
        b = bases[bkey]
        n_groups = 1 + int(np.count_nonzero(np.diff(w.gid)))  # rows are ordered by list inside a cell
        for sig in keys:
            v = fns[sig.key](sig, w, b, catalogue_size)
            out["window"].append(ck["c:window"])
            for col in by:
                out[col].append(ck["c:" + col])
            out["signal"].append(sig.key)
            out["n_groups"].append(n_groups)
            for f in ("value", "baseline", "p_value"):
                x = v[f]
                out[f].append(None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x))
            for f in ("n", "n_baseline", "n_excluded"):
                out[f].append(int(v[f]))
    types = {"window": pa.timestamp("us"), "signal": pa.string(), "value": pa.float64(), "baseline": pa.float64(),
             "p_value": pa.float64(), "n_groups": pa.int64(), "n": pa.int64(), "n_baseline": pa.int64(),
             "n_excluded": pa.int64()}
    table = pa.table({c: pa.array(v, types.get(c, pa.string())) for c, v in out.items()})
    return table.replace_schema_metadata({"baseline": bspec.describe()})


def _cell_starts(wt: Any, cell_cols: list[str]) -> np.ndarray:
    """The first row of each cell: consecutive runs of equal (window, series) in the ordered rows."""
    pc = require("pyarrow.compute")
    n = wt.num_rows
    if not n:
        return np.zeros(0, np.int64)
    change = np.zeros(n, bool)
    change[0] = True
    for c in cell_cols:
        col = wt.column(c).combine_chunks()
        prev, nxt = col.slice(0, n - 1), col.slice(1)
        diff = pc.fill_null(pc.not_equal(prev, nxt), True)
        both_null = pc.and_(pc.is_null(prev), pc.is_null(nxt))
        change[1:] |= np.asarray(pc.and_not(diff, both_null))
    return np.flatnonzero(change)


def _baseline_selections(con: Any, cell_keys: list[dict[str, Any]], by: list[str], where: Mapping[str, Any] | None,
                         bspec: Baseline, window: str) -> tuple[dict[Any, tuple[str, list[Any]] | None], list[Any]]:
    """The baseline selections (SQL condition and parameters, or None when it serves no list), one per series
    (per cell for the previous window), and each cell's key into them."""
    delta = window_delta(window)
    bsel: dict[Any, tuple[str, list[Any]] | None] = {}
    cell_base: list[Any] = []
    for ck in cell_keys:
        series = {b: ck["c:" + b] for b in by}
        sel_where = series_where(where, series)
        # the monitors' rule (reports.baseline): the first candidate selection that served lists
        for cand in baseline_candidates(bspec, sel_where, ck["c:window"], ck["c:window"] + delta):
            key: Any = (tuple(sorted((k, repr(v)) for k, v in cand.where.items())), cand.start, cand.end)
            if key not in bsel:
                c2, p2 = filters_sql(con, cand.where, cand.start, cand.end, alias="g")
                has = con.execute(f"SELECT count(*) FROM groups g WHERE {c2} AND g.source = 'events'",
                                  p2).fetchall()[0][0]
                bsel[key] = (c2, p2) if has else None
            if bsel[key] is not None:
                break
        cell_base.append(key)
    return bsel, cell_base


def _rows_of(t: Any, dictionary: Any, attr_dict: Any, features: Iterable[str] = (),
             codes: Mapping[str, Any] | None = None) -> _Rows:
    """A fetched table's rows as flat arrays, items and attribute values coded by the shared dictionaries, the
    features' values as floats (NaN: missing) or, for categorical ones (in ``codes``), codes (-1: missing)."""
    pc = require("pyarrow.compute")
    code = np.asarray(pc.index_in(t.column("item_id"), value_set=dictionary).to_numpy(zero_copy_only=False))
    attr = pc.fill_null(pc.index_in(t.column("attr"), value_set=attr_dict), -1)
    feats = feature_arrays(t, features, codes or {})
    return _Rows(np.zeros(t.num_rows, np.int64), t.column("gid").to_numpy(zero_copy_only=False).astype(np.int64),
                 code.astype(np.int64),
                 t.column("score").to_numpy(zero_copy_only=False).astype(np.float64),
                 t.column("position").to_numpy(zero_copy_only=False).astype(np.int64),
                 np.asarray(attr.to_numpy(zero_copy_only=False)).astype(np.int64), feats)
