"""A click log as flat arrays: one row per served item (session, query, item, rank, click), ids coded once.

:func:`read_log` takes any form of :class:`ranklens._input.logs.LogTable` (a pyarrow, pandas or polars table, a
mapping of columns, or a Parquet, CSV, TSV or JSON Lines file), which finds the columns by name and applies the
one set of value rules (ids present, numbers not text, nothing missing, NaN or infinite); the rules of a click
log: ranks integers from 1, no rank twice in a session, one query per session, clicks booleans (or 0/1, or a
``labels`` column holding ``click``). An error names the log, the column, the row (0-based, in the order given)
and the value. Rows are kept in the order given; the
session x rank matrices the cascade models need are built by scattering, without a sort.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from .._input.logs import LogTable
from ..errors import InputError

__all__ = ["DEFAULT_COLUMNS", "ClickLog", "build_log", "codes", "read_log"]

#: Column names tried, in order, for each role when none is given.
DEFAULT_COLUMNS: dict[str, tuple[str, ...]] = {
    "session": ("group_id", "session", "session_id", "slate_id"),
    "query": ("query", "query_id", "qid"),
    "item": ("item_id", "item", "doc_id", "docno", "action"),
    "rank": ("rank", "position"),
    "click": ("click", "clicked", "clicks", "reward", "labels"),
}
_MAX_RANK = 1000


def codes(t: LogTable, name: str, role: str, with_ids: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, ids)``: each row's id as an int64 code into ``ids`` (strings): integer ids within a compact
    range by a count over the range (``ids`` ascending), others by hashing (no sort; ``ids`` in order of first
    appearance); a float id must be whole. ``with_ids=False``: the codes only (``ids`` left empty when the
    integer path made the codes)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = t.arrow(name, role)
    if pa.types.is_nested(arr.type):
        raise InputError(f"{t.where}: column {name!r} holds {arr.type} values; the {role} is one id per row.")
    if pa.types.is_floating(arr.type):
        values = arr.to_numpy(zero_copy_only=False)
        bad = values != np.round(values)
        if bad.any():
            row = int(np.argmax(bad))
            raise t.holds(name, row, values[row], "an id is a string or an integer.")
        arr = pa.array(values.astype(np.int64))
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    if pa.types.is_integer(arr.type) and len(arr):  # integers of a compact range: counted, not hashed
        v = arr.to_numpy(zero_copy_only=False)
        lo, hi = int(v.min()), int(v.max())
        if hi - lo <= 2 * len(v) + 1_000_000:
            off = v.astype(np.int64, copy=False) - lo
            present = np.bincount(off, minlength=hi - lo + 1) > 0
            lookup = np.cumsum(present) - 1
            ids = (np.flatnonzero(present) + lo).astype(str) if with_ids else np.zeros(0, dtype=str)
            return lookup[off], np.asarray(ids, dtype=object)
    starts = _run_starts(arr)
    if starts is not None and 2 * len(starts) <= len(arr):  # a session's rows together: only run heads hashed
        enc = pc.dictionary_encode(arr.take(pa.array(starts)))
        heads = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        ids = np.asarray(enc.dictionary.cast(pa.string()).to_pylist(), dtype=object)
        return np.repeat(heads, np.diff(np.append(starts, len(arr)))), ids
    enc = pc.dictionary_encode(arr)
    idx = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    ids = np.asarray(enc.dictionary.cast(pa.string()).to_pylist(), dtype=object)
    return idx, ids


def _run_starts(arr: Any) -> np.ndarray | None:
    """Where each run of equal neighbouring ids starts (integer or string ids; None for others)."""
    import pyarrow as pa

    if pa.types.is_integer(arr.type):
        v = arr.to_numpy(zero_copy_only=False)
        return np.flatnonzero(np.r_[True, v[1:] != v[:-1]]) if len(v) else None
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        from .._input.ids import IdColumn

        return np.asarray(IdColumn.of(arr).run_starts(), dtype=np.int64) if len(arr) else None
    return None


def _ranks(t: LogTable, name: str) -> np.ndarray:
    r = t.numbers(name, "rank")
    bad = (r != np.round(r)) | (r < 1) | (r > _MAX_RANK)
    if bad.any():
        row = int(np.argmax(bad))
        raise t.holds(name, row, r[row], f"a rank is an integer from 1 to {_MAX_RANK} (1 = top).")
    return r.astype(np.int64)


def _clicks(t: LogTable, name: str, click_label: str) -> np.ndarray:
    """Clicks: booleans or 0/1, or (a ``labels`` column) lists or ``|``-separated texts holding ``click_label``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = t.arrow(name, "click")
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        if name.lower() != "labels":
            raise InputError(f"{t.where}: column {name!r} (clicks) holds text; a click is true/false or 0/1 (or "
                             "give a `labels` column holding the click label).")
        arr = pc.split_pattern(arr, "|")
    if pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type):
        flat = pc.list_flatten(arr)
        parents = pc.list_parent_indices(arr).to_numpy(zero_copy_only=False)
        hit = pc.equal(flat, click_label).to_numpy(zero_copy_only=False).astype(bool)
        return np.bincount(parents[hit], minlength=len(arr)) > 0
    v = t.numbers(name, "click")
    if v.dtype == np.bool_:
        return v
    bad = (v != 0) & (v != 1)
    if bad.any():
        row = int(np.argmax(bad))
        raise t.holds(name, row, v[row], "a click is 0 or 1 (true or false).")
    return v == 1


@dataclass(frozen=True, eq=False)
class ClickLog:
    """A click log's rows as arrays (one row per served item), ids coded.

    Attributes
    ----------
    session, query, item, pair : ndarray of int64
        Codes per row: ``session`` into ``n_sessions``, ``query`` into ``query_ids`` (0 for every row when the log
        has no query column), ``item`` into ``item_ids``, ``pair`` into the (query, item) pairs.
    rank : ndarray of int64
        1-based.
    click : ndarray of bool
    pair_query, pair_item : ndarray of int64
        The query and item code of each pair.
    extra : dict of ndarray
        Other columns asked for (propensities, features...), as float64.
    """

    session: np.ndarray
    query: np.ndarray
    item: np.ndarray
    pair: np.ndarray
    rank: np.ndarray
    click: np.ndarray
    query_ids: np.ndarray
    item_ids: np.ndarray
    pair_query: np.ndarray
    pair_item: np.ndarray
    n_sessions: int
    has_query: bool
    source: str
    extra: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def n_rows(self) -> int:
        return len(self.rank)

    @property
    def n_pairs(self) -> int:
        return len(self.pair_query)

    @property
    def depth(self) -> int:
        """The deepest rank logged."""
        return int(self.rank.max()) if len(self.rank) else 0

    @cached_property
    def session_query(self) -> np.ndarray:
        """The query code of each session."""
        out = np.zeros(self.n_sessions, dtype=np.int64)
        out[self.session] = self.query
        return out

    @cached_property
    def matrix(self) -> np.ndarray:
        """The pair at each (session, rank - 1), -1 where no row (sessions x depth)."""
        out = np.full((self.n_sessions, self.depth), -1, dtype=np.int64)
        out[self.session, self.rank - 1] = self.pair
        return out

    @cached_property
    def click_matrix(self) -> np.ndarray:
        """Clicks per (session, rank - 1) (sessions x depth)."""
        out = np.zeros((self.n_sessions, self.depth), dtype=bool)
        out[self.session, self.rank - 1] = self.click
        return out

    def row_index(self) -> np.ndarray:
        """The row at each (session, rank - 1), -1 where none."""
        out = np.full((self.n_sessions, self.depth), -1, dtype=np.int64)
        out[self.session, self.rank - 1] = np.arange(self.n_rows)
        return out

    def pair_ids(self) -> tuple[np.ndarray, np.ndarray]:
        """(query ids, item ids) of each pair."""
        return self.query_ids[self.pair_query], self.item_ids[self.pair_item]


def read_log(log: Any, *, session_col: str | None = None, query_col: str | None = None,
             item_col: str | None = None, rank_col: str | None = None, click_col: str | None = None,
             click_label: str = "click", extra_cols: Sequence[str] = (), need_query: bool = False) -> ClickLog:
    """A :class:`ClickLog` from any table form (see the module); ``extra_cols`` are read as numbers."""
    if isinstance(log, ClickLog):
        return log
    t = LogTable(log, "click log")
    if t.num_rows == 0:
        raise InputError(f"{t.where} has no rows.")
    s_col = t.find("session", session_col, DEFAULT_COLUMNS["session"])
    q_col = t.find("query", query_col, DEFAULT_COLUMNS["query"], required=need_query)
    i_col = t.find("item", item_col, DEFAULT_COLUMNS["item"])
    r_col = t.find("rank", rank_col, DEFAULT_COLUMNS["rank"])
    c_col = t.find("click", click_col, DEFAULT_COLUMNS["click"])
    assert s_col is not None and i_col is not None and r_col is not None and c_col is not None
    session, _ = codes(t, s_col, "session", with_ids=False)
    item, item_ids = codes(t, i_col, "item")
    if q_col is not None:
        query, query_ids = codes(t, q_col, "query")
    else:
        query, query_ids = np.zeros(len(item), dtype=np.int64), np.asarray([""], dtype=object)
    rank = _ranks(t, r_col)
    click = _clicks(t, c_col, click_label)
    extra = {name: t.numbers(name, name).astype(np.float64, copy=False) for name in extra_cols}
    return build_log(session, query, item, rank, click, query_ids, item_ids, t.where, q_col is not None, extra,
                     (s_col, q_col, r_col))


def build_log(session: np.ndarray, query: np.ndarray, item: np.ndarray, rank: np.ndarray, click: np.ndarray,
              query_ids: np.ndarray, item_ids: np.ndarray, where: str, has_query: bool,
              extra: dict[str, np.ndarray] | None = None, names: tuple[Any, ...] = ("session", "query", "rank")
              ) -> ClickLog:
    """Check coded rows (one query per session, no rank twice in a session) and pair the (query, item) codes."""
    n_sessions = int(session.max()) + 1
    depth = int(rank.max())
    cell = session * depth + (rank - 1)
    if n_sessions * depth <= 4 * len(cell) + 1_000_000:
        per_cell = np.bincount(cell, minlength=n_sessions * depth)
        dup = bool(per_cell.max() > 1)  # one pass; the cell is looked for only when there is one
        c = int(np.argmax(per_cell > 1)) if dup else -1
    else:
        u, counts = np.unique(cell, return_counts=True)
        dup = bool((counts > 1).any())
        c = int(u[np.argmax(counts > 1)]) if dup else -1
    if dup:
        row = int(np.argmax(cell == c))
        raise InputError(f"{where}: rank {int(rank[row])} appears twice in the same session (column {names[2]!r}, "
                         f"row {row}, column {names[0]!r}); a session serves one item per rank.")
    sq = np.full(n_sessions, -1, dtype=np.int64)
    sq[session] = query
    if has_query and (sq[session] != query).any():
        row = int(np.argmax(sq[session] != query))
        raise InputError(f"{where}: a session has rows of two queries (column {names[1]!r}, row {row}); a session "
                         "is one served list of one query.")
    n_items = len(item_ids)
    # pairs are numbered in the order of their keys query * n_items + item (lay_target relies on it)
    q_of_item = np.full(n_items, -1, dtype=np.int64)
    q_of_item[item] = query
    if (q_of_item >= 0).all() and (q_of_item[item] == query).all():  # every item shown, each for one query: a
        # pair is an item
        order = np.argsort(q_of_item, kind="stable")  # by query, then item code
        rank_of = np.empty(n_items, dtype=np.int64)
        rank_of[order] = np.arange(n_items)
        return ClickLog(session, query, item, rank_of[item], rank, click, query_ids, item_ids, q_of_item[order],
                        order.astype(np.int64), n_sessions, has_query, where, dict(extra or {}))
    key = query * n_items + item
    if len(query_ids) * n_items <= 4 * len(key) + 1_000_000:  # dense: a bincount of the keys, no sort
        present = np.bincount(key, minlength=len(query_ids) * n_items) > 0
        keys = np.flatnonzero(present)
        lookup = np.cumsum(present) - 1
        pair = lookup[key]
    else:  # hashed (pyarrow), then only the distinct keys sorted
        import pyarrow as pa
        import pyarrow.compute as pc

        enc = pc.dictionary_encode(pa.array(key))
        distinct = enc.dictionary.to_numpy(zero_copy_only=False)
        order = np.argsort(distinct, kind="stable")
        rank_of = np.empty(len(order), dtype=np.int64)
        rank_of[order] = np.arange(len(order))
        keys = distinct[order]
        pair = rank_of[enc.indices.to_numpy(zero_copy_only=False)]
    return ClickLog(session, query, item, pair.astype(np.int64), rank, click, query_ids, item_ids,
                    (keys // n_items).astype(np.int64), (keys % n_items).astype(np.int64), n_sessions, has_query,
                    where, dict(extra or {}))
