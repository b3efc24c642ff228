"""Reading an interleaving click log: one row per shown item, in any table form ranklens accepts.

Forms: a pandas, polars (eager or lazy) or pyarrow table, or a dict of columns (name -> 1-D array or
list). Every column is checked by the same rules whatever the form, and the first bad row is named
with its column (rows numbered from 0):

* impression ids and team labels: no missing value; a team label outside the given ``teams``;
* clicks: 0/1 or booleans, nothing missing;
* positions (1-based integers): nothing missing, and no impression with two rows at one position;
* items (when read): no impression showing one item twice;
* balanced interleaving's ranks (1-based integers; missing or NaN: the item is not in that ranker's
  list): no row absent from every list;
* probabilistic interleaving's probabilities: numbers in [0, 1], nothing missing, and not 0 for every
  ranker on one row.

Impression ids are numbered once (only the first id of each run hashed when rows come grouped);
nothing here loops over impressions in Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._input.coerce import is_number
from .._input.factorize import factorize_parts
from .._input.ids import ids_to_numpy
from .._input.tables import table_kind
from .._input.validate import numeric
from ..errors import InputError, InvalidParameterError

__all__ = ["Log", "read_log"]


@dataclass(frozen=True)
class Log:
    """The columns of a validated log, impressions numbered 0..n-1 in order of first appearance."""

    impression: np.ndarray  # per row: the impression's number
    impression_ids: np.ndarray  # per number: its id as given (int64 or object)
    click: np.ndarray  # per row: bool
    team: np.ndarray | None  # per row: index into the teams
    position: np.ndarray | None  # per row: int64, 1-based
    ranks: np.ndarray | None  # (teams, rows) float: 1-based rank in each ranker's list, NaN when absent
    probabilities: np.ndarray | None  # (teams, rows) float
    look: np.ndarray | None = None  # per impression: its look, 0, 1, ... in the sorted order of the look column

    @property
    def impressions(self) -> int:
        return int(self.impression_ids.shape[0])


class _Table:
    """One column at a time from a pandas / polars / pyarrow table or a dict of columns."""

    def __init__(self, obj: Any):
        kind = table_kind(obj)
        if kind is None and isinstance(obj, Mapping):
            kind = "dict"
        if kind is None:
            raise InvalidParameterError(
                f"the interleaving log must be a pandas, polars or pyarrow table or a dict of columns; "
                f"got {type(obj).__name__}.")
        if kind == "polars" and type(obj).__name__ == "LazyFrame":
            obj = obj.collect()
        self.obj, self.kind = obj, kind
        self.where = f"the interleaving log ({'dict of columns' if kind == 'dict' else kind + ' table'})"
        if kind in ("dict", "pandas"):
            self.keys = {str(c): c for c in (obj if kind == "dict" else obj.columns)}
            self.names = list(self.keys)
        elif kind == "polars":
            self.names = list(obj.columns)
        else:
            self.names = list(obj.schema.names)
        self.rows = -1

    def has(self, col: str) -> bool:
        return col in self.names

    def need(self, col: str, role: str) -> None:
        if col not in self.names:
            raise InvalidParameterError(f"column {col!r} (the {role} column) is not in {self.where}; "
                                        f"columns: {self.names}.")

    def fail(self, col: str, row: int, msg: str) -> InputError:
        return InputError(f"{self.where}, column {col!r}, row {row}: {msg}")

    def _length(self, col: str, n: int) -> None:
        if self.rows < 0:
            self.rows = n
        elif n != self.rows:
            raise InputError(f"{self.where}: column {col!r} has {n} values, the other columns {self.rows}.")

    def raw(self, col: str) -> tuple[Any, np.ndarray | None]:
        """The column as numpy (numbers or objects) or Arrow (ids), and its missing rows (None: none)."""
        obj = self.obj
        if self.kind == "dict":
            a = obj[self.keys[col]]
            a = a if isinstance(a, np.ndarray) else np.asarray(a)
            if a.ndim != 1:
                raise InputError(f"{self.where}: column {col!r} must be 1-D; got shape {a.shape}.")
            self._length(col, a.shape[0])
            if a.dtype.kind == "O":
                null = np.asarray(a == None) | np.asarray(a != a)  # noqa: E711 (element-wise: None, or NaN)
                return a, (null if null.any() else None)
            if a.dtype.kind == "f":
                null = np.isnan(a)
                return a, (null if null.any() else None)
            return a, None
        if self.kind == "pandas":
            s = obj[self.keys[col]]
            self._length(col, len(s))
            if s.dtype.kind in "iub":
                return s.to_numpy(), None
            null = s.isna().to_numpy()
            has_null = bool(null.any())
            if s.dtype.kind == "f":
                return s.to_numpy(), (null if has_null else None)
            import pyarrow as pa

            try:
                arr = pa.Array.from_pandas(s)
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                arr = s.to_numpy(dtype=object)
            return arr, (null if has_null else None)
        if self.kind == "polars":
            s = obj[col]
            self._length(col, len(s))
            n_null = s.null_count()
            return s.to_arrow(), (s.is_null().to_numpy() if n_null else None)
        arr = obj.column(col)
        self._length(col, len(arr))
        if arr.null_count:
            import pyarrow.compute as pc

            return arr, np.asarray(pc.is_null(arr).to_numpy(zero_copy_only=False), dtype=bool)
        return arr, None

    def ids(self, col: str, role: str) -> tuple[np.ndarray, np.ndarray]:
        """Codes (per row, in order of first appearance) and the distinct values of an id column."""
        self.need(col, role)
        raw, null = self.raw(col)
        if null is not None:
            row = int(np.flatnonzero(null)[0])
            raise self.fail(col, row, f"the {role} is missing ({int(null.sum())} such rows).")
        return self._codes(raw, col, role)

    def _codes(self, raw: Any, col: str, role: str) -> tuple[np.ndarray, np.ndarray]:
        if _is_nested(raw):
            raise InputError(f"{self.where}: column {col!r} holds {raw.type} values; the {role} is one id per row.")
        try:
            (codes,), uniques, _ = factorize_parts([raw], what=f"column {col!r} in {self.where}")
        except InputError:
            raise
        except (TypeError, ValueError) as e:
            raise InputError(f"{self.where}: column {col!r} cannot be read as ids ({e}).") from None
        return np.asarray(codes), ids_to_numpy(uniques)

    def labels(self, col: str, teams: tuple[Any, ...]) -> np.ndarray:
        """Per row, the index in ``teams`` of a team-label column; an unknown or missing label refused."""
        self.need(col, "team")
        raw, null = self.raw(col)
        if null is not None:
            row = int(np.flatnonzero(null)[0])
            raise self.fail(col, row, f"the team is missing ({int(null.sum())} such rows).")
        index = {tm: j for j, tm in enumerate(teams)}
        values, codes = _small_codes(raw)
        if values is None:  # any other column: numbered by the id machinery, the distinct labels looked up
            codes, distinct = self._codes(raw, col, "team")
            values = distinct.tolist()
        lookup = np.array([index.get(v, -1) for v in values] + [-1], dtype=np.int64)  # the distinct labels only
        out = lookup[codes]
        if out.shape[0] and out.min() < 0:
            row = int(np.flatnonzero(out < 0)[0])
            raise self.fail(col, row, f"unknown team label {_py(values[codes[row]])!r}; the teams are "
                                      f"{', '.join(map(repr, teams))} (pass `teams=`, or --teams).")
        return out

    def numbers(self, col: str, role: str, missing_ok: bool = False) -> np.ndarray:
        """A numeric column: integers and booleans as they come (nothing missing), anything else as
        float64 with missing values (NaN) refused unless ``missing_ok``, and infinities always."""
        self.need(col, role)
        raw, null = self.raw(col)
        if not isinstance(raw, np.ndarray):  # Arrow
            if _is_nested(raw):
                raise InputError(f"{self.where}: column {col!r} holds {raw.type} values; expected numbers.")
            raw = raw.to_numpy() if null is None else raw.to_numpy(zero_copy_only=False)
        if raw.dtype.kind in "iub" and null is None:
            return raw
        if raw.dtype.kind == "O" and null is not None:
            raw = np.where(null, np.nan, raw)
        try:
            vals = numeric(raw, f"the {role} column {col!r}", self.where)
        except InputError:
            bad = next(i for i, v in enumerate(raw) if not is_number(v))
            raise self.fail(col, bad, f"the {role} must be a number; found {raw[bad]!r}.") from None
        bad_rows = np.isinf(vals) if missing_ok else ~np.isfinite(vals)
        if bad_rows.any():
            row = int(np.flatnonzero(bad_rows)[0])
            shown = "missing" if np.isnan(vals[row]) else f"{vals[row]}"
            raise self.fail(col, row, f"the {role} is {shown} ({int(bad_rows.sum())} such rows): missing, NaN "
                                      f"or infinite values are refused.")
        return vals


def _small_codes(raw: Any) -> tuple[list[Any] | None, np.ndarray]:
    """``(values, codes)`` without hashing every row, for the columns that allow it: Arrow dictionaries
    (pandas categoricals) and integers over a small range; ``(None, ...)`` for any other column."""
    if isinstance(raw, np.ndarray):
        if raw.dtype.kind not in "iu" or raw.shape[0] == 0:
            return None, raw
        lo, hi = int(raw.min()), int(raw.max())
        if hi - lo > 1 << 16:
            return None, raw
        return list(range(lo, hi + 1)), (raw - lo).astype(np.int64)
    import pyarrow as pa

    chunks = raw.chunks if isinstance(raw, pa.ChunkedArray) else [raw]
    if not chunks or not all(pa.types.is_dictionary(c.type) for c in chunks):
        return None, raw
    values: list[Any] = []
    parts = []
    for c in chunks:  # chunk by chunk: each has its own dictionary
        parts.append(np.asarray(c.indices.to_numpy(zero_copy_only=False), dtype=np.int64) + len(values))
        values.extend(c.dictionary.to_pylist())
    return values, np.concatenate(parts)


def _is_nested(raw: Any) -> bool:
    t = getattr(raw, "type", None)
    if t is None:
        return False
    import pyarrow as pa

    return bool(pa.types.is_nested(t))


def _py(x: Any) -> Any:
    """A numpy scalar as the Python value it holds (for messages)."""
    return x.item() if isinstance(x, np.generic) else x


def _duplicate_keys(key: np.ndarray) -> int | None:
    """The first row whose key an earlier row has (None: all distinct): O(n) when the keys come
    increasing (a log in impression, position order), a sort otherwise."""
    if key.shape[0] < 2:
        return None
    if (key[1:] > key[:-1]).all():
        return None
    order = np.argsort(key, kind="stable")
    s = key[order]
    same = np.flatnonzero(s[1:] == s[:-1])
    if same.size == 0:
        return None
    return int(order[same + 1].min())


def read_log(log: Any, *, method: str, teams: tuple[Any, ...], impression_col: str, team_col: str,
             click_col: str, position_col: str | None, item_col: str | None,
             rank_cols: Mapping[Any, str] | None, prob_cols: Mapping[Any, str] | None,
             look_col: str | None = None) -> Log:
    """The columns of ``log`` that ``method``'s credit rule reads, validated (see the module's rules)."""
    t = _Table(log)
    imp, imp_ids = t.ids(impression_col, "impression")
    if imp.shape[0] == 0:
        raise InputError(f"{t.where} has no rows.")
    click = _clicks(t, click_col)
    team = t.labels(team_col, teams) if method == "team_draft" else None
    pos_col = position_col if position_col is not None else ("position" if t.has("position") else None)
    position = None
    if pos_col is not None:
        position = _positions(t, pos_col)
        dup = _duplicate_keys(imp.astype(np.int64) * (int(position.max()) + 1) + position)
        if dup is not None:
            who = _py(imp_ids[imp[dup]])
            raise t.fail(pos_col, dup, f"impression {who!r} has two rows at position {position[dup]}.")
    elif method == "balanced":
        raise InvalidParameterError(
            f"balanced interleaving's credit needs the shown positions (its lowest click): {t.where} has no "
            f"'position' column; pass `position_col=`.")
    if item_col is not None:
        items, uniq = t.ids(item_col, "item")
        dup = _duplicate_keys(imp.astype(np.int64) * max(len(uniq), 1) + items)
        if dup is not None:
            who, what = _py(imp_ids[imp[dup]]), _py(uniq[items[dup]])
            raise t.fail(item_col, dup, f"impression {who!r} shows item {what!r} twice.")
    ranks = probs = None
    if method == "balanced":
        cols = _per_team(rank_cols, teams, "rank")
        ranks = np.vstack([_ranks(t, cols[tm]) for tm in teams])
        absent = np.isnan(ranks).all(axis=0)
        if absent.any():
            row = int(np.flatnonzero(absent)[0])
            raise t.fail(cols[teams[0]], row, f"the item is in no ranker's list (every rank column is missing: "
                                              f"{', '.join(map(repr, cols.values()))}).")
    if method == "probabilistic":
        cols = _per_team(prob_cols, teams, "prob")
        probs = np.vstack([_probabilities(t, cols[tm]) for tm in teams])
        none = (probs == 0).all(axis=0)
        if none.any():
            row = int(np.flatnonzero(none)[0])
            raise t.fail(cols[teams[0]], row, f"no ranker could have drawn this item (every probability column is 0: "
                                              f"{', '.join(map(repr, cols.values()))}).")
    look = _looks(t, look_col, imp, imp_ids) if look_col is not None else None
    return Log(imp, imp_ids, click, team, position, ranks, probs, look)


def _looks(t: _Table, col: str, imp: np.ndarray, imp_ids: np.ndarray) -> np.ndarray:
    """Each impression's look: the rank of its value in the sorted distinct values of the look column (one
    value per impression)."""
    codes, uniques = t.ids(col, "look")
    order = np.argsort(uniques, kind="stable")
    rank = np.empty(len(uniques), np.int64)
    rank[order] = np.arange(len(uniques))
    per_row = rank[codes]
    n = imp_ids.shape[0]
    lo = np.full(n, np.iinfo(np.int64).max)
    hi = np.full(n, -1)
    np.minimum.at(lo, imp, per_row)
    np.maximum.at(hi, imp, per_row)
    if (lo != hi).any():
        row = int(np.flatnonzero(lo[imp] != hi[imp])[0])
        raise t.fail(col, row, f"impression {_py(imp_ids[imp[row]])!r} has rows in two looks; a look holds "
                               f"whole impressions.")
    return lo


def _per_team(given: Mapping[Any, str] | None, teams: tuple[Any, ...], prefix: str) -> dict[Any, str]:
    if given is None:
        return {tm: f"{prefix}_{tm}" for tm in teams}
    if not isinstance(given, Mapping) or set(given) != set(teams):
        raise InvalidParameterError(
            f"`{prefix}_cols` must map every team ({', '.join(map(repr, teams))}) to its column; got {given!r}.")
    return dict(given)


def _clicks(t: _Table, col: str) -> np.ndarray:
    vals = t.numbers(col, "click")
    if vals.dtype == np.bool_:
        return vals
    bad = (vals != 0) & (vals != 1)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise t.fail(col, row, f"a click is 0 or 1 (or a boolean); found {float(vals[row]):g}.")
    return vals == 1


def _positions(t: _Table, col: str) -> np.ndarray:
    vals = t.numbers(col, "position")
    bad = vals < 1 if vals.dtype.kind in "iub" else (vals < 1) | (vals != np.floor(vals))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise t.fail(col, row, f"a position is an integer from 1 (the top); found {float(vals[row]):g}.")
    return vals.astype(np.int64)


def _ranks(t: _Table, col: str) -> np.ndarray:
    vals = t.numbers(col, "rank", missing_ok=True)
    bad = ~np.isnan(vals) & ((vals < 1) | (vals != np.floor(vals)))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise t.fail(col, row, f"a rank is an integer from 1 (missing: not in that list); found {vals[row]:g}.")
    return vals.astype(np.float64, copy=False)


def _probabilities(t: _Table, col: str) -> np.ndarray:
    vals = t.numbers(col, "probability")
    bad = (vals < 0) | (vals > 1)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise t.fail(col, row, f"a probability is a number from 0 to 1; found {vals[row]:g}.")
    return vals.astype(np.float64, copy=False)
