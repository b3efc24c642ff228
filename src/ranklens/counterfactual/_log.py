"""A click log as flat arrays: one row per served item (session, query, item, rank, click), ids coded once.

:func:`read_log` takes a pyarrow Table, a pandas or polars DataFrame, a mapping of columns, or a file (Parquet,
CSV, TSV, JSON Lines) and checks every row by the same rules: ids present, ranks integers >= 1, no rank twice in
a session, one query per session, clicks booleans (or 0/1, or a ``labels`` column holding ``click``). An error
names the column, the row (0-based, in the order given) and the value. Rows are kept in the order given; the
session x rank matrices the cascade models need are built by scattering, without a sort.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ..errors import InputError, InvalidParameterError

__all__ = ["DEFAULT_COLUMNS", "ClickLog", "as_table", "build_log", "codes", "numbers", "pick", "read_log", "shown"]

#: Column names tried, in order, for each role when none is given.
DEFAULT_COLUMNS: dict[str, tuple[str, ...]] = {
    "session": ("group_id", "session", "session_id", "slate_id"),
    "query": ("query", "query_id", "qid"),
    "item": ("item_id", "item", "doc_id", "docno", "action"),
    "rank": ("rank", "position"),
    "click": ("click", "clicked", "clicks", "reward"),
}
_MAX_RANK = 1000


def shown(value: Any) -> str:
    """A value for a message: a plain Python repr (a whole float as an integer).

    >>> shown(np.float64(2.0)), shown(np.int64(3)), shown("x")
    ('2', '3', "'x'")
    """
    x = value.item() if isinstance(value, np.generic) else value
    if isinstance(x, float) and x.is_integer():
        return repr(int(x))
    return repr(x)


def as_table(log: Any, what: str = "log") -> tuple[Any, str]:
    """``(pyarrow Table, description)`` of a table, a mapping of columns or a file path."""
    import pyarrow as pa

    if isinstance(log, (str, os.PathLike)):
        path = os.fspath(log)
        if not os.path.isfile(path):
            raise FileNotFoundError(2, "No such file or directory" if not os.path.exists(path) else "Not a file", path)
        low = path.lower().removesuffix(".gz")
        if low.endswith((".parquet", ".pq")):
            import pyarrow.parquet as pq

            return pq.read_table(path), path
        if low.endswith((".csv", ".tsv")):
            import pyarrow.csv as pcsv

            opts = pcsv.ParseOptions(delimiter="\t" if low.endswith(".tsv") else ",")
            try:
                return pcsv.read_csv(path, parse_options=opts), path
            except pa.ArrowInvalid as exc:
                raise InputError(f"{path}: {' '.join(str(exc).split())}") from None
        if low.endswith((".jsonl", ".ndjson", ".json")):
            import pyarrow.json as pjson

            try:
                return pjson.read_json(path), path
            except pa.ArrowInvalid as exc:
                raise InputError(f"{path}: {' '.join(str(exc).split())}") from None
        raise InputError(f"{path}: a {what} is read from Parquet, CSV, TSV or JSON Lines (by its suffix).")
    mod = type(log).__module__ or ""
    if isinstance(log, pa.Table):
        return log, f"the {what} table"
    if isinstance(log, pa.RecordBatch):
        return pa.Table.from_batches([log]), f"the {what} table"
    if mod.startswith("pandas"):
        return pa.Table.from_pandas(log, preserve_index=False), f"the {what} DataFrame"
    if mod.startswith("polars"):
        return log.to_arrow(), f"the {what} DataFrame"
    if isinstance(log, Mapping):
        cols = {str(k): v if isinstance(v, (pa.Array, pa.ChunkedArray)) else pa.array(v) for k, v in log.items()}
        return pa.table(cols), f"the {what} columns"
    raise InvalidParameterError(f"a {what} is a pyarrow Table, a pandas or polars DataFrame, a mapping of columns "
                                f"or a file path; got {type(log).__name__}.")


def pick(table: Any, role: str, given: str | None, where: str, required: bool = True) -> str | None:
    """The column of ``role``: ``given`` (it must exist), else the first default present."""
    names = list(table.column_names)
    if given is not None:
        if given not in names:
            raise InvalidParameterError(f"column {given!r} (the {role} column) is not in {where}; columns: "
                                        f"{', '.join(names)}.")
        return given
    lower = {n.lower(): n for n in names}
    for cand in DEFAULT_COLUMNS[role]:
        if cand in lower:
            return lower[cand]
    if required:
        raise InvalidParameterError(f"no {role} column in {where} (columns: {', '.join(names)}); name it "
                                    f"{' or '.join(DEFAULT_COLUMNS[role][:3])}, or pass `{role}_col=`.")
    return None


def _column(table: Any, name: str) -> Any:
    col = table.column(name)
    return col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)


def _first_null(arr: Any, name: str, where: str) -> None:
    if arr.null_count:
        import pyarrow.compute as pc

        row = int(pc.index(pc.is_null(arr), True).as_py())
        raise InputError(f"{where}: column {name!r} is empty (null) at row {row}.")


def codes(table: Any, name: str, where: str) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, ids)``: each row's id as an int64 code into ``ids`` (strings), by hashing (no sort)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = _column(table, name)
    _first_null(arr, name, where)
    if pa.types.is_floating(arr.type):
        values = arr.to_numpy(zero_copy_only=False)
        bad = values != np.round(values)
        if bad.any():
            row = int(np.argmax(bad))
            raise InputError(f"{where}: column {name!r} holds {shown(values[row])} at row {row}; an id is a string "
                             "or an integer.")
        arr = pa.array(values.astype(np.int64))
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    enc = pc.dictionary_encode(arr)
    idx = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    ids = np.asarray(enc.dictionary.cast(pa.string()).to_pylist(), dtype=object)
    return idx, ids


def _ranks(table: Any, name: str, where: str) -> np.ndarray:
    arr = _column(table, name)
    _first_null(arr, name, where)
    try:
        r = np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{where}: column {name!r} (ranks) must hold integers >= 1; got {arr.type}.") from None
    bad = (r != np.round(r)) | (r < 1) | ~np.isfinite(r) | (r > _MAX_RANK)
    if bad.any():
        row = int(np.argmax(bad))
        raise InputError(f"{where}: column {name!r} holds {shown(r[row])} at row {row}; a rank is an integer from 1 "
                         f"to {_MAX_RANK} (1 = top).")
    return r.astype(np.int64)


def _clicks(table: Any, name: str, where: str, click_label: str) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = _column(table, name)
    _first_null(arr, name, where)
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        if name.lower() == "labels":
            arr = pc.split_pattern(arr, "|")
        else:
            raise InputError(f"{where}: column {name!r} (clicks) holds text; a click is true/false or 0/1 (or "
                             "give a `labels` column holding the click label).")
    if pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type):
        flat = pc.list_flatten(arr)
        parents = pc.list_parent_indices(arr).to_numpy(zero_copy_only=False)
        hit = pc.equal(flat, click_label).to_numpy(zero_copy_only=False).astype(bool)
        return np.bincount(parents[hit], minlength=len(arr)) > 0
    if pa.types.is_boolean(arr.type):
        return arr.to_numpy(zero_copy_only=False).astype(bool)
    if pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type):
        v = arr.to_numpy(zero_copy_only=False)
        bad = (v != 0) & (v != 1)
        if bad.any():
            row = int(np.argmax(bad))
            raise InputError(f"{where}: column {name!r} holds {shown(v[row])} at row {row}; a click is 0 or 1 "
                             "(true or false).")
        return v == 1
    raise InputError(f"{where}: column {name!r} (clicks) holds {arr.type} values; a click is true/false or 0/1.")


def numbers(table: Any, name: str, where: str) -> np.ndarray:
    """A numeric column as float64 (nulls and text refused, with the row)."""
    arr = _column(table, name)
    _first_null(arr, name, where)
    try:
        return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{where}: column {name!r} must hold numbers; got {arr.type}.") from None


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
    table, where = as_table(log)
    if table.num_rows == 0:
        raise InputError(f"{where} has no rows.")
    s_col = pick(table, "session", session_col, where)
    q_col = pick(table, "query", query_col, where, required=need_query)
    i_col = pick(table, "item", item_col, where)
    r_col = pick(table, "rank", rank_col, where)
    c_col = pick(table, "click", click_col, where, required=False)
    if c_col is None:
        c_col = next((n for n in table.column_names if n.lower() == "labels"), None)
        if c_col is None:
            raise InvalidParameterError(f"no click column in {where} (columns: {', '.join(table.column_names)}); "
                                        "name it click or labels, or pass `click_col=`.")
    assert s_col is not None and i_col is not None and r_col is not None
    session, _ = codes(table, s_col, where)
    item, item_ids = codes(table, i_col, where)
    if q_col is not None:
        query, query_ids = codes(table, q_col, where)
    else:
        query, query_ids = np.zeros(len(item), dtype=np.int64), np.asarray([""], dtype=object)
    rank = _ranks(table, r_col, where)
    click = _clicks(table, c_col, where, click_label)
    extra = {name: numbers(table, name, where) for name in extra_cols}
    return build_log(session, query, item, rank, click, query_ids, item_ids, where, q_col is not None, extra,
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
        twice = np.bincount(cell, minlength=n_sessions * depth) > 1
        dup = bool(twice.any())
        c = int(np.argmax(twice))
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
    key = query * n_items + item  # pairs are numbered in the order of their keys (lay_target relies on it)
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
