"""Per-group values: computed by the core from the store's own arrays, cached per group, read per selection.

The values of the tracked measures (``[evaluation] tracked``) are a per-group cache: a group is marked
stale (``dirty``) when its events or late labels arrive, and :func:`refresh` (run at the end of every
ingest call) computes the stale groups once with the core's kernels. :func:`select_values` computes
stale groups from their events, so results never depend on the cache; measures that are not tracked are
computed on demand from the events, a bounded chunk of groups at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from ..._base.deps import require
from ..._input.buffers import chunked_to_numpy, np_to_arrow
from ..._kernels.dispatch import call
from ...errors import InputError
from ..config import Attribution, MonitorConfig
from ..propensity import ips_gains, largest_gain, split_ips
from .db import Database, fetch_arrow, filters_sql, metric_columns, quote, transaction
from .keys import ITEM_TEXT
from .propensity_fit import examination_in_force, values_fingerprint

__all__ = ["CHUNK_ITEMS", "compute", "events", "gains", "refresh", "refresh_values", "select_values"]

CHUNK_ITEMS = 4_000_000  # items evaluated per chunk when values are computed from events
#: Labels of an attribution up to which an item's set of labels is read as the bits of one integer (:func:`events`).
_MASK_BITS = 62


def _with_nulls(v: np.ndarray) -> Any:
    """A float64 numpy array as Arrow, null where NaN (without ``pa.array``, which imports pandas)."""
    pa = require("pyarrow")
    nan = np.isnan(v)
    if not nan.any():
        return np_to_arrow(v)
    valid = pa.py_buffer(np.packbits(~nan, bitorder="little"))
    return pa.Array.from_buffers(pa.float64(), len(v), [valid, pa.py_buffer(np.ascontiguousarray(v))])


def events(con: Any, attribution: Attribution, gid_sql: str, params: Sequence[Any] = (), lo: int | None = None,
           hi: int | None = None, *, full: bool = True) -> Any:
    """Items of the selected groups (gids in [lo, hi] when given): order key, explicit relevance, attribution.

    ``full=False`` leaves out the item id, rank and score (only the order key is evaluated): a third of the
    bytes, for the evaluation of many groups.

    Outcomes are resolved to (gid, item) at ingest. Per item, each distinct label adds its attribution value (in
    the order of the labels, from 0.0) and the largest given relevance wins: the selected lists, their items and
    their outcome rows are read as they are stored (integer columns, pruned by gid range) and the kernel
    ``attribute_labels`` gives each item its labels (one pass, no join). Up to 62 labels (the set of an item's
    labels is the bits of one integer); more are aggregated in SQL (:func:`_events_sql`).
    """
    vals = attribution.label_values()
    if len(vals) > _MASK_BITS:
        return _events_sql(con, attribution, gid_sql, params, lo, hi, full=full)
    pa = require("pyarrow")
    grng = f" AND g.gid BETWEEN {int(lo)} AND {int(hi)}" if lo is not None and hi is not None else ""
    chosen = f"SELECT g.gid FROM groups g WHERE g.gid IN ({gid_sql}){grng}"
    sel = fetch_arrow(con.sql(f"SELECT g.gid, g.order_by = 'rank' AS by_rank FROM groups g WHERE g.gid IN ({gid_sql})"
                              f"{grng}", params=list(params)))
    gids = chunked_to_numpy(sel.column("gid"), np.int64)
    if not len(gids):
        return _no_events(full)
    a, b = int(gids.min()), int(gids.max())
    span = b - a + 1
    # every list of the range chosen (an ingest's refresh, a whole window): the range alone selects the rows; else
    # they are also matched against the choice
    dense = len(gids) == span
    more, extra = ("", []) if dense else (" AND {t}.gid IN (" + chosen + ")", list(params))
    items = fetch_arrow(con.sql(
        f"SELECT i.gid, i.iid, {'k.item_id, ' if full else ''}i.rank, i.score FROM items i"
        f"{' ' + ITEM_TEXT if full else ''} WHERE i.gid BETWEEN {a} AND {b}{more.format(t='i')}", params=extra))
    labels = fetch_arrow(con.sql(
        f"""WITH _w AS (SELECT unnest(CAST(? AS VARCHAR[])) AS label, CAST(unnest(range(?)) AS BIGINT) AS bit)
        SELECT l.gid, l.iid, coalesce(_w.bit, -1) AS bit, l.relevance
        FROM item_labels l LEFT JOIN _w ON _w.label = l.label
        WHERE (_w.label IS NOT NULL OR l.relevance IS NOT NULL) AND l.gid BETWEEN {a} AND {b}{more.format(t='l')}""",
        params=[list(vals), len(vals), *extra]))
    ig = chunked_to_numpy(items.column("gid"), np.int64)
    by_rank = np.zeros(span, np.bool_)
    by_rank[gids - a] = chunked_to_numpy(sel.column("by_rank"), np.float64) == 1.0  # NULL order: by score
    rank = chunked_to_numpy(items.column("rank"), np.float64)
    key = np.where(by_rank[ig - a], -rank, chunked_to_numpy(items.column("score"), np.float64))
    attr, rel = call("attribute_labels", ig, chunked_to_numpy(items.column("iid"), np.int64),
                     chunked_to_numpy(labels.column("gid"), np.int64), chunked_to_numpy(labels.column("iid"), np.int64),
                     chunked_to_numpy(labels.column("bit"), np.int64),
                     chunked_to_numpy(labels.column("relevance"), np.float64),
                     np.asarray([float(w) for w in vals.values()], np.float64), a, span)
    cols = {"gid": np_to_arrow(ig)}
    if full:
        cols.update(item_id=items.column("item_id"), rank=items.column("rank"), score=items.column("score"))
    cols.update(key=_with_nulls(key), relevance=_with_nulls(rel), attr=np_to_arrow(attr))
    return pa.table(cols)


def _no_events(full: bool) -> Any:
    """The table :func:`events` gives for no item."""
    pa = require("pyarrow")
    types = {"gid": pa.int64(), **({"item_id": pa.string(), "rank": pa.int32(), "score": pa.float64()} if full else {}),
             "key": pa.float64(), "relevance": pa.float64(), "attr": pa.float64()}
    return pa.schema(types).empty_table()


def _events_sql(con: Any, attribution: Attribution, gid_sql: str, params: Sequence[Any] = (), lo: int | None = None,
                hi: int | None = None, *, full: bool = True) -> Any:
    """:func:`events` of an attribution of more than 62 labels, in SQL: per item and label, then per item."""
    rng = f" AND i.gid BETWEEN {int(lo)} AND {int(hi)}" if lo is not None and hi is not None else ""
    grng = f" AND g.gid BETWEEN {int(lo)} AND {int(hi)}" if lo is not None and hi is not None else ""
    # per item and label (a label given twice counts once), then per item, then one join with the items
    vals = attribution.label_values()
    weights = [float(w) for w in vals.values()]
    lrng = rng.replace("i.gid", "l.gid")
    labelled = f"""FROM item_labels l LEFT JOIN _w ON _w.label = l.label
                WHERE (_w.label IS NOT NULL OR l.relevance IS NOT NULL){lrng} AND l.gid IN (SELECT gid FROM sel)"""
    w_sql = "unnest(CAST(? AS DOUBLE[])) AS weight"
    att = f"""lab AS (SELECT l.gid, l.iid, max(_w.weight) AS w, max(l.relevance) AS relevance {labelled}
            GROUP BY l.gid, l.iid, l.label),
    att AS (SELECT gid, iid, sum(w) AS attr, max(relevance) AS relevance FROM lab GROUP BY ALL)"""
    attr = "coalesce(att.attr, 0.0)"
    head: list[Any] = [list(vals), weights]
    tail: list[Any] = []
    return fetch_arrow(con.sql(f"""
        WITH _w AS (SELECT unnest(CAST(? AS VARCHAR[])) AS label, {w_sql}),
        sel AS (SELECT g.gid, g.order_by FROM groups g WHERE g.gid IN ({gid_sql}){grng}),
        {att}
        SELECT i.gid{", k.item_id, i.rank, i.score" if full else ""},
               CASE WHEN s.order_by = 'rank' THEN -CAST(i.rank AS DOUBLE) ELSE i.score END AS key,
               att.relevance, {attr} AS attr
        FROM items i JOIN sel s ON i.gid = s.gid{" " + ITEM_TEXT if full else ""}
        LEFT JOIN att ON att.gid = i.gid AND att.iid = i.iid
        WHERE TRUE{rng}""", params=[*head, *params, *tail]))


def gains(events: Any, attribution: Attribution) -> np.ndarray:
    """Gain of each item: its largest explicit relevance, else the attribution of its distinct labels."""
    attr = chunked_to_numpy(events.column("attr"), np.float64)
    if attribution.rule == "binary":
        attr = np.minimum(attr, 1.0)
    rel = chunked_to_numpy(events.column("relevance"), np.float64)
    return np.where(np.isnan(rel), attr, rel)


def _ranks(ev: Any, gain: np.ndarray) -> np.ndarray:
    """The served rank of each item (1 where unknown and without a gain; refused where unknown with one)."""
    r = chunked_to_numpy(ev.column("rank"), np.float64)
    missing = np.isnan(r) & (gain > 0)
    if missing.any():
        raise InputError(f"store items: list {int(ev.column('gid')[int(np.argmax(missing))].as_py())} has a "
                         "clicked item without a rank; inverse-propensity measures weight a click by its rank.")
    return np.where(np.isnan(r), 1, r).astype(np.int64)


def _full(config: MonitorConfig, keys: list[str]) -> bool:
    """Whether computing ``keys`` needs the items' ids, ranks and scores (:func:`events` ``full``)."""
    return any(split_ips(k)[0] for k in keys) or config.convention_obj().ties in ("item_desc", "item_asc")


def compute(con: Any, config: MonitorConfig, gid_sql: str, params: Sequence[Any], keys: list[str],
            lo: int | None = None, hi: int | None = None, ev: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(gid, values[n_groups, n_keys], n_relevant) for the selected groups, computed from the events (``ev``: those
    events already read, ``events(..., full=_full(config, keys))``).

    The core evaluates the store's own arrays (group ids as query codes, order keys, gains); the
    groups come back sorted, as ``np.unique`` sorts them. Item ids are passed only to a convention that
    breaks ties by item id (``ties="item_desc"`` / ``"item_asc"``).
    """
    from ..._core.evaluate import evaluate_arrays

    conv = config.convention_obj()
    core = [split_ips(k) for k in keys]
    ips = any(w for w, _ in core)
    if ev is None:
        ev = events(con, config.attribution, gid_sql, params, lo, hi, full=_full(config, keys))
    if ev.num_rows == 0:
        return np.zeros(0, np.int64), np.zeros((0, len(keys))), np.zeros(0, np.int64)
    gain = gains(ev, config.attribution)
    gid = chunked_to_numpy(ev.column("gid"), np.int64)
    item = ev.column("item_id").combine_chunks() if conv.ties in ("item_desc", "item_asc") else None
    key = chunked_to_numpy(ev.column("key"), np.float64)
    cols: dict[str, np.ndarray] = {}
    res = None
    for weighted in (False, True):  # the naive measures on the gains, the debiased ones on weighted gains
        todo = [(orig, k) for orig, (w, k) in zip(keys, core) if w == weighted]
        if not todo and (weighted or ips):
            continue
        if weighted:
            g = ips_gains(gain, _ranks(ev, gain), examination_in_force(con, config), "store items")
            res, vals = _debiased(gid, key, g, [k for _, k in todo], conv, item, largest_gain(config.attribution))
        else:
            res = evaluate_arrays(gid, key, gain, [k for _, k in todo] or ["dcg"], convention=conv, item=item,
                                  per_query=True)
            vals = list(np.asarray(res.values, dtype=np.float64).T)
        cols.update((orig, v) for (orig, _), v in zip(todo, vals))
    assert res is not None
    values = np.column_stack([cols[k] for k in keys]) if keys else np.zeros((len(res.queries), 0))
    queries = np.asarray(res.queries, dtype=np.int64)
    # relevant items per group, counted over the gid range (gids are integers: no sort needed)
    base = int(gid.min())
    nrel = np.bincount(gid - base, weights=(gain > 0).astype(np.float64)).astype(np.int64)[queries - base]
    return queries, values, nrel


def _debiased(gid: np.ndarray, key: np.ndarray, g: np.ndarray, core: list[str], conv: Any, item: Any,
              top: float) -> tuple[Any, list[np.ndarray]]:
    """The ``ips_`` measures' values (:mod:`ranklens.monitor.propensity`): the core's DCG on the weighted gains
    ``g``; an ``ndcg`` over the DCG of the same list with every item at the attribution's largest gain ``top``
    (a list without a gain: the convention's empty rule, as the core's ndcg gives it)."""
    from ..._core.evaluate import evaluate_arrays

    dcg_of = {k: "dcg" + k[len("ndcg"):] for k in core if k.startswith("ndcg")}
    asked = list(dict.fromkeys(core + list(dcg_of.values())))
    res = evaluate_arrays(gid, key, g, asked, convention=conv, item=item, per_query=True)
    vals = dict(zip(asked, np.asarray(res.values, dtype=np.float64).T))
    if dcg_of:
        tops = sorted(set(dcg_of.values()))
        full = evaluate_arrays(gid, key, np.full(len(g), top), tops, convention=conv, item=item, per_query=True)
        ideal = dict(zip(tops, np.asarray(full.values, dtype=np.float64).T))
        base = int(gid.min())
        has = np.bincount(gid - base, weights=(g > 0).astype(np.float64))[np.asarray(res.queries, np.int64) - base] > 0
        for k, d in dcg_of.items():
            vals[k] = np.where(has, vals[d] / np.where(has, ideal[d], 1.0), vals[k])
    return res, [vals[k] for k in core]


def _chunks(con: Any, gid_sql: str, params: Sequence[Any]) -> list[tuple[int, int]]:
    """Contiguous gid ranges of the selection holding at most about CHUNK_ITEMS items each."""
    rows = con.execute(f"""
        SELECT min(gid), max(gid) FROM (
          SELECT gid, sum(n_items) OVER (ORDER BY gid) // {CHUNK_ITEMS} AS part
          FROM groups WHERE gid IN ({gid_sql}) AND n_items IS NOT NULL)
        GROUP BY part ORDER BY 1""", list(params)).fetchall()
    return [(a, b) for a, b in rows if a is not None]


def _refresh_tracked(con: Any, config: MonitorConfig) -> None:
    """Add columns for newly tracked measures; a changed attribution or convention makes every value stale."""
    fp = values_fingerprint(con, config)
    cols = metric_columns(con)
    stale = [k for k, (_, f) in cols.items() if f != fp]
    new = [k for k in config.tracked if k not in cols]
    for k in new:
        col = f"m{len(cols)}"
        while col in {c for c, _ in cols.values()}:
            col += "_"
        con.execute(f"ALTER TABLE groups ADD COLUMN {quote(col)} DOUBLE")
        con.execute("INSERT INTO metric_columns VALUES (?, ?, ?)", [k, col, fp])
        cols[k] = (col, fp)
    if stale or new:
        con.execute("UPDATE groups SET dirty = TRUE WHERE source = 'events'")
        con.execute("UPDATE metric_columns SET fingerprint = ?", [fp])


def refresh(db: Database, config: MonitorConfig) -> int:
    """Compute and store the tracked values of the stale groups, a chunk per transaction; returns their number."""
    with db.writing() as con:
        return refresh_values(con, config)


def refresh_values(con: Any, config: MonitorConfig) -> int:
    """:func:`refresh` on a connection open for writing (an ingest's)."""
    with transaction(con):
        _refresh_tracked(con, config)
    cols = metric_columns(con)
    keys = list(cols)
    done = 0
    dirty = "SELECT gid FROM groups WHERE dirty"
    ranges = _chunks(con, dirty, ())
    with _Ahead(con, lambda c, lo, hi: events(c, config.attribution, dirty, (), lo, hi, full=_full(config, keys)),
                ranges) as ahead:
        for lo, hi in ranges:
            with transaction(con):
                gid, values, nrel = compute(con, config, dirty, (), keys, lo, hi, ev=ahead.next())
                _store_values(con, cols, keys, gid, values, nrel)
                con.execute(f"UPDATE groups SET dirty = FALSE WHERE dirty AND gid BETWEEN {int(lo)} AND {int(hi)}")
            done += len(gid)
    return done


def _store_values(con: Any, cols: dict[str, tuple[str, str]], keys: list[str], gid: np.ndarray, values: np.ndarray,
                  nrel: np.ndarray) -> None:
    """The computed values of groups ``gid`` into ``groups`` (no longer stale)."""
    pa = require("pyarrow")
    data = {"gid": np_to_arrow(gid), "n_relevant": np_to_arrow(nrel.astype(np.int32))}
    for j, k in enumerate(keys):
        data[cols[k][0]] = _with_nulls(values[:, j])
    con.register("_vals", pa.Table.from_arrays(list(data.values()), names=list(data)))
    sets = ", ".join([f"{quote(cols[k][0])} = _vals.{quote(cols[k][0])}" for k in keys]
                     + ["n_relevant = _vals.n_relevant", "dirty = FALSE"])
    con.execute(f"UPDATE groups SET {sets} FROM _vals WHERE groups.gid = _vals.gid")
    con.unregister("_vals")


class _Ahead:
    """The events of each gid range in turn (:meth:`next`), the next range's read on a second connection, in a
    thread, while the current one is computed and stored. The second connection reads what is committed: the
    ranges are disjoint and each is written only by its own transaction, so it reads what the writer would."""

    def __init__(self, con: Any, fetch: Callable[[Any, int, int], Any], ranges: list[tuple[int, int]]) -> None:
        self.con, self.fetch, self.ranges = con, fetch, ranges
        self.i = 0
        self.cursor: Any = None
        self.pool: ThreadPoolExecutor | None = None
        self.pending: Future[Any] | None = None

    def __enter__(self) -> _Ahead:
        if len(self.ranges) > 1:
            self.cursor = self.con.cursor()
            self.pool = ThreadPoolExecutor(1, thread_name_prefix="ranklens-values")
        return self

    def next(self) -> Any:
        i = self.i
        self.i += 1
        ev = self.pending.result() if self.pending is not None else self.fetch(self.con, *self.ranges[i])
        self.pending = None
        if self.pool is not None and i + 1 < len(self.ranges):
            self.pending = self.pool.submit(self.fetch, self.cursor, *self.ranges[i + 1])
        return ev

    def __exit__(self, *exc: Any) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)
            self.cursor.close()


def select_values(
    con: Any, config: MonitorConfig, keys: list[str], where: Mapping[str, Any] | None, start: Any, end: Any,
    extra: Sequence[str] = (),
) -> tuple[Any, np.ndarray]:
    """Selected groups (Arrow table of gid, source, ``w:n_items`` (a list's items: the weight of a weighted
    mean), ``w:partial`` (the list lost rows to the quarantine) and the ``extra`` SQL expressions) and their
    values[n, len(keys)]; a partial list's values are NaN (left out) unless ``[evaluation] partial = "keep"``."""
    cond, params = filters_sql(con, where, start, end)
    cols = metric_columns(con)
    fp = values_fingerprint(con, config)
    stored = [k for k in keys if k in cols and cols[k][1] == fp]
    sel = ", ".join(["gid", "source", f"n_items AS {quote('w:n_items')}",
                     f"coalesce(n_lost, 0) > 0 AS {quote('w:partial')}"] + list(extra)
                    + [f"{quote(cols[k][0])} AS {quote('v:' + k)}" for k in stored])
    groups = fetch_arrow(con.sql(f"SELECT {sel} FROM groups WHERE {cond} ORDER BY gid", params=params))
    values = np.full((groups.num_rows, len(keys)), np.nan)
    for j, k in enumerate(keys):
        if k in stored:
            values[:, j] = chunked_to_numpy(groups.column("v:" + k), np.float64)
    missing = [k for k in keys if k not in stored]
    # measures not stored: computed for every group with events (results ingested from elsewhere have
    # none: their missing measures stay NaN); stored ones: computed again for groups marked stale
    passes = [(missing, "")] if missing else []
    if stored:
        passes.append((stored, " AND dirty"))
    if groups.num_rows:
        gids = chunked_to_numpy(groups.column("gid"), np.int64)
        for todo, extra_cond in passes:
            gid_sql = f"SELECT gid FROM groups WHERE {cond} AND source = 'events'{extra_cond}"
            for lo, hi in _chunks(con, gid_sql, params):
                g, v, _ = compute(con, config, gid_sql, params, todo, lo, hi)
                pos = np.searchsorted(gids, g)  # the computed groups among the selected ones (both sorted)
                for j, k in enumerate(todo):
                    values[pos, keys.index(k)] = v[:, j]
    if config.partial == "skip" and groups.num_rows and keys:
        values[chunked_to_numpy(groups.column("w:partial"), np.float64) > 0] = np.nan
    return groups, values
