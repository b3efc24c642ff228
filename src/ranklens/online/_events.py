"""The served lists of an experiment log: read, validated, and turned into per-list arrays.

The log is the monitoring store's event layout (``docs/monitoring.md``): one row per served item with
``group_id`` (one served list), ``item_id``, ``rank`` or ``score``, ``relevance`` and/or ``labels``, plus the
arm and the randomisation unit of the list, and its ``timestamp`` (for looks by day). Column names are matched
case-insensitively. Label rows (neither rank nor score) add their labels and relevance to the item of that
list, as in the store. The gain of an item is decided by the store's own rules
(:func:`ranklens.monitor.storage.values.gains`: the largest explicit relevance, else the attribution of its
distinct labels by :class:`ranklens.monitor.Attribution`); clicks and purchases are the labels ``click_label`` and
``purchase_label``.

Every rule refuses bad input with one line naming the column and an example: a list split between two arms or
two units, a unit in two arms, a missing or null required value, a rank that is not a positive integer, a
score or covariate that is not a finite number, a covariate that differs between two rows of one unit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._base.deps import require
from .._input.logs import named, shown, source_name
from .._input.validate import is_number
from ..errors import InputError

__all__ = ["Lists", "read_events", "served_lists", "source_of"]

class _Refused(Exception):
    """A rule of the events broken: :func:`served_lists` raises it as an :class:`InputError` naming the source."""

_DAY_MS = 86_400_000


def read_events(source: Any) -> Any:
    """An Arrow table of the events: a table (pyarrow, pandas, polars) or Parquet / CSV / TSV / JSON Lines
    file(s); a file line that cannot be read is an error naming the file, the line and its text."""
    from ..monitor.storage.read import read_batch, sources

    parts = sources(source, "events")
    tables = []
    con = None
    for name, kind, obj in parts:
        if kind == "table":
            tables.append(obj)
            continue
        if con is None:
            con = require("duckdb").connect()
        t, bad = read_batch(con, name, kind, obj)
        if bad:
            line, text, reason = bad[0]
            raise InputError(f"{name}: line {line}: {reason}: {text!r}")
        tables.append(t)
    out = tables[0] if len(tables) == 1 else _concat(tables, [name for name, _, _ in parts])
    files = [name for name, kind, _ in parts if kind != "table"]
    if files and len(files) == len(parts):  # rows count across the files, in their order
        out = named(out, files[0] if len(files) == 1 else f"the events of {', '.join(files)} (rows counted across "
                    "them)")
    return out


def _concat(tables: list[Any], names: list[str]) -> Any:
    """The tables one after the other (a column missing from some is null there); a column of two types that do
    not merge (text in a CSV, times in a Parquet file) is refused naming both sources."""
    pa = require("pyarrow")
    try:
        return pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowTypeError, pa.ArrowInvalid):
        seen: dict[str, tuple[Any, str]] = {}
        for t, name in zip(tables, names):
            for f in t.schema:
                first = seen.setdefault(f.name, (f.type, name))
                if first[0] != f.type and not _merge(pa.field(f.name, first[0]), f):
                    raise InputError(f"{first[1]} and {name}: column {f.name!r} is {first[0]} in the first and "
                                     f"{f.type} in the second, which do not merge; give the events in files of one "
                                     "layout (or one table).") from None
        raise


def _merge(a: Any, b: Any) -> bool:
    """Whether two fields of one name merge (integers into floats, nulls into anything...)."""
    pa = require("pyarrow")
    try:
        pa.unify_schemas([pa.schema([a]), pa.schema([b])], promote_options="permissive")
    except (pa.ArrowTypeError, pa.ArrowInvalid):
        return False
    return True


def _column(table: Any, name: str, what: str, required: bool = True) -> Any:
    low = {c.lower(): c for c in table.column_names}
    col = low.get(name.lower())
    if col is None:
        if required:
            raise _Refused(f"no column {name!r} ({what}); columns are {', '.join(table.column_names)}.")
        return None
    return table.column(col).combine_chunks()


def _no_nulls(col: Any, name: str) -> None:
    if col.null_count:
        import pyarrow.compute as pc

        row = int(pc.index(pc.is_null(col), True).as_py())
        raise _Refused(f"column {name!r} is empty on row {row}.")


def _codes(col: Any, name: str) -> tuple[np.ndarray, list[Any]]:
    """Integer codes of a column's values (its distinct values in first-seen order)."""
    _no_nulls(col, name)
    enc = col.dictionary_encode()
    return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64), enc.dictionary.to_pylist()


def _numbers(col: Any, name: str, kind: str) -> np.ndarray:
    """A numeric column (text parsed) as float64; ``kind`` "finite", "rank" (integer >= 1) or "gain" (>= 0)."""
    pa = require("pyarrow")
    pc = require("pyarrow.compute")
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        try:
            col = pc.cast(pc.utf8_trim_whitespace(col), pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            bad = [v for v in col.to_pylist()[:100000] if v is not None and not is_number(v)]
            raise _Refused(f"column {name!r} holds {bad[0]!r}, which is not a number.") from None
    if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_boolean(col.type)
            or pa.types.is_null(col.type)):
        raise _Refused(f"column {name!r} must be numbers; it is {col.type}.")
    v = col.to_numpy(zero_copy_only=False).astype(np.float64)
    valid = col.is_valid().to_numpy(zero_copy_only=False) if col.null_count else np.ones(len(v), dtype=bool)
    finite = np.isfinite(v)
    if kind == "rank":
        bad, rule = valid & ~(finite & (v >= 1) & (v == np.floor(v))), "is not a positive integer"
    elif kind == "gain":
        bad, rule = valid & ~(finite & (v >= 0)), "is not a number >= 0"
    else:
        bad, rule = valid & ~finite, "is not a finite number"
    if bad.any():
        i = int(np.argmax(bad))
        raise _Refused(f"{name} {shown(v[i])} on row {i} {rule}.")
    return np.where(valid, v, np.nan)


def _labels(col: Any, owner: np.ndarray, n: int, values: Mapping[str, float], flags: Sequence[str]
            ) -> tuple[np.ndarray, list[np.ndarray]]:
    """Per item (``owner`` maps each row to its item's ranked row): the attribution (the sum of the values of
    its distinct labels, over all its rows) and whether it has each flag. Only the labels that add a value or are
    a flag are looked at."""
    pa = require("pyarrow")
    pc = require("pyarrow.compute")
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        col = pc.split_pattern(col.cast(pa.string()), "|")
    if not (pa.types.is_list(col.type) or pa.types.is_large_list(col.type)):
        raise _Refused(f"column 'labels' must be a list of strings or text like 'click|buy'; it is "
                         f"{col.type}.")
    wanted = list(dict.fromkeys([k for k, v in values.items() if v != 0] + list(flags)))
    flat = pc.list_flatten(col).cast(pa.string())
    code = pc.index_in(pc.utf8_trim_whitespace(flat), value_set=pa.array(wanted, pa.string()))
    hit = code.is_valid().to_numpy(zero_copy_only=False)
    parent = pc.list_parent_indices(col).to_numpy(zero_copy_only=False).astype(np.int64)[hit]
    has = np.zeros((n, len(wanted)), dtype=bool)  # each distinct label of an item counts once
    has[owner[parent], code.filter(code.is_valid()).to_numpy(zero_copy_only=False).astype(np.int64)] = True
    weight = np.array([float(values.get(w, 0.0)) for w in wanted])
    return has.astype(np.float64) @ weight, [has[:, wanted.index(f)] for f in flags]


def _heads(col: Any) -> np.ndarray:
    """Where a run of equal neighbouring values starts (a boolean per row), by the compiled id kernels for text."""
    pa = require("pyarrow")
    n = len(col)
    if pa.types.is_integer(col.type):
        v = col.to_numpy(zero_copy_only=False)
        return np.r_[True, v[1:] != v[:-1]] if n else np.zeros(0, dtype=bool)
    from .._input.ids import IdColumn

    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        col = col.cast(pa.string())
    out = np.zeros(n, dtype=bool)
    out[IdColumn.of(col).run_starts()] = True
    return out


def _list_codes(col: Any, name: str) -> tuple[np.ndarray, bool]:
    """Codes of a served-list column and whether each list's rows are contiguous (then the codes are 0, 1, ...
    in row order, found by comparing neighbours: no hash of every row)."""
    pa = require("pyarrow")
    _no_nulls(col, name)
    heads = _heads(col)
    if pa.types.is_integer(col.type):
        v = col.to_numpy(zero_copy_only=False)
        if len(np.unique(v[heads])) == int(heads.sum()):
            return np.cumsum(heads) - 1, True
        return np.unique(v, return_inverse=True)[1].reshape(-1), False
    at = np.flatnonzero(heads)
    if len(col.take(pa.array(at)).dictionary_encode().dictionary) == len(at):
        return np.cumsum(heads) - 1, True
    return _codes(col, name)[0], False


def _per_list(col: Any, name: str, what: str, first: np.ndarray, rows: np.ndarray | None, row_list: np.ndarray,
              contiguous: bool, group_ids: Any) -> tuple[np.ndarray, list[Any]]:
    """Codes (per list) and names of a column that must be constant within each list."""
    pa = require("pyarrow")
    pc = require("pyarrow.compute")
    _no_nulls(col, name)
    per_list = col.take(pa.array(first if rows is None else rows[first]))
    if contiguous and rows is None:  # a new value may start only where a new list starts
        bad = _heads(col) & ~np.r_[True, row_list[1:] != row_list[:-1]]
    else:
        mine = col if rows is None else col.take(pa.array(rows))
        bad = ~pc.equal(mine, per_list.take(pa.array(row_list))).to_numpy(zero_copy_only=False)
    if bad.any():
        i = int(np.argmax(bad))
        gid = group_ids[i if rows is None else int(rows[i])].as_py()
        raise _Refused(f"served list {gid!r} has rows of two {what} (column {name!r}).")
    enc = per_list.dictionary_encode()
    return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64), enc.dictionary.to_pylist()


def _dense(codes: np.ndarray) -> tuple[np.ndarray, bool]:
    """Codes renumbered 0..m-1 (by first appearance when they come in runs), and whether they came in runs."""
    if len(codes) < 2 or bool((codes[1:] >= codes[:-1]).all()):
        heads = np.r_[True, codes[1:] != codes[:-1]]
        return np.cumsum(heads) - 1, True
    return np.unique(codes, return_inverse=True)[1].reshape(-1), False


@dataclass(frozen=True, eq=False)
class Lists:
    """The served lists of a log: per list its arm, unit and day; per row its list, order key, gain, clicks.

    Attributes
    ----------
    arms : list of str
        Arm names (``arm`` codes index them).
    units : ndarray
        Unit ids (``unit`` codes index them).
    arm, unit, day : ndarray, shape (n_lists,)
        Each list's arm code, unit code and day (0 = the first day of the log; 0 without timestamps).
    unit_arm : ndarray, shape (n_units,)
        Each unit's arm code.
    row_list, key, gain, position, click, buy : ndarray, shape (n_rows,)
        Each ranked row's list code, order key (higher first), gain, 1-based position, click and purchase.
    lengths : ndarray, shape (n_lists,)
    covariates : ndarray, shape (n_units, n_covariates)
    start : int or None
        The first day's midnight (epoch ms, UTC) when the log has timestamps.
    """

    arms: list[str]
    units: np.ndarray
    arm: np.ndarray
    unit: np.ndarray
    day: np.ndarray
    unit_arm: np.ndarray
    row_list: np.ndarray
    key: np.ndarray
    gain: np.ndarray
    position: np.ndarray
    click: np.ndarray
    buy: np.ndarray
    lengths: np.ndarray
    covariates: np.ndarray
    start: int | None
    segments: dict[str, np.ndarray]


def served_lists(table: Any, **options: Any) -> Lists:
    """The :class:`Lists` of an events table (see the module for the rules; ``options`` those of the lists: arm,
    unit and group columns, covariates, attribution, click and purchase labels, segment columns). A broken rule is
    an :class:`InputError` naming the file(s) the table was read from (:func:`source_of`), else "events"."""
    try:
        return _served_lists(table, **options)
    except _Refused as exc:
        raise InputError(f"{source_of(table)}: {exc}") from None


def source_of(table: Any) -> str:
    """What an events table is called in messages: the file(s) :func:`read_events` read it from, else "events"."""
    return source_name(table, "events")


def _served_lists(table: Any, *, arm_col: str, unit_col: str, group_col: str = "group_id",
                  covariates: Sequence[str] = (), attribution: Any = None, click_label: str = "click",
                  purchase_label: str = "buy", segment_cols: Sequence[str] = ()) -> Lists:
    pa = require("pyarrow")
    from ..monitor.config import Attribution
    from ..monitor.storage.values import gains

    attribution = attribution if attribution is not None else Attribution()
    n = table.num_rows
    if n == 0:
        raise _Refused("the table has no rows.")
    group_ids = _column(table, group_col, "the served list")
    group, contiguous = _list_codes(group_ids, group_col)
    rank_c, score_c = _column(table, "rank", "", False), _column(table, "score", "", False)
    if rank_c is None and score_c is None:
        raise _Refused("no column 'rank' or 'score' (the order of each served list).")
    rank = _numbers(rank_c, "rank", "rank") if rank_c is not None else np.full(n, np.nan)
    score = _numbers(score_c, "score", "score") if score_c is not None else np.full(n, np.nan)
    ranked = ~np.isnan(rank) | ~np.isnan(score)
    rel_c, lab_c = _column(table, "relevance", "", False), _column(table, "labels", "", False)
    rel = _numbers(rel_c, "relevance", "gain") if rel_c is not None else np.full(n, np.nan)
    owner = np.arange(n)
    if not ranked.all():  # outcomes given on rows of their own: joined to the ranked row of the list and item
        owner = _owners(table, group, ranked)
        rel = rel.copy()
        np.fmax.at(rel, owner[~ranked], rel[~ranked])
    attr, flags = np.zeros(n), [np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)]
    if lab_c is not None:
        attr, flags = _labels(lab_c, owner, n, attribution.label_values(), [click_label, purchase_label])
    rows = np.flatnonzero(ranked) if not ranked.all() else None
    sel = (lambda a: a) if rows is None else (lambda a: a[rows])
    row_list, runs = (group, True) if contiguous and rows is None else _dense(sel(group))
    n_lists = int(row_list[-1]) + 1 if runs else int(row_list.max()) + 1
    rk, sc = sel(rank), sel(score)
    has_rank = ~np.isnan(rk)
    if has_rank.any() and not has_rank.all():
        with_rank = np.bincount(row_list, weights=has_rank, minlength=n_lists)
        if ((with_rank > 0) & (with_rank < np.bincount(row_list, minlength=n_lists))).any():
            raise _Refused("a served list mixes rows with and without rank (order each list by rank, or "
                             "each by score).")
    key = np.where(has_rank, -rk, sc)
    order = _order(row_list, key, runs)
    counts = np.bincount(row_list, minlength=n_lists)
    starts = np.cumsum(counts) - counts
    first = order[starts]
    arm, arm_names = _per_list(_column(table, arm_col, "the arm of each list"), arm_col, "arms", first, rows,
                               row_list, runs, group_ids)
    unit_codes, unit_names = _per_list(_column(table, unit_col, "the randomisation unit"), unit_col, "units", first,
                                       rows, row_list, runs, group_ids)
    units, unit = np.unique(unit_codes, return_inverse=True)
    unit_arm = np.full(len(units), -1, dtype=np.int64)
    unit_arm[unit] = arm
    two = unit_arm[unit] != arm
    if two.any():
        i = int(np.argmax(two))
        raise _Refused(f"unit {unit_names[units[unit[i]]]!r} (column {unit_col!r}) is in two arms: "
                         f"{arm_names[unit_arm[unit[i]]]!r} and {arm_names[arm[i]]!r}; a unit is randomised once.")
    day, start = _days(table, sel, order, starts, n_lists)
    cov = _covariates(table, covariates, sel, first, row_list, unit, len(units))
    segs = {}
    for c in segment_cols:
        codes, names = _codes(_column(table, c, "a segment").cast(pa.string()), c)
        segs[c] = np.asarray(names, dtype=object)[sel(codes)[first]]
    position = np.empty(len(row_list), dtype=np.int64)
    position[order] = np.arange(len(row_list)) - np.repeat(starts, counts) + 1
    g = gains(pa.table({"attr": sel(attr), "relevance": sel(rel)}), attribution)
    return Lists([str(a) for a in arm_names], np.asarray(unit_names, dtype=object)[units], arm, unit, day,
                 unit_arm, row_list, key, g, position, sel(flags[0]), sel(flags[1]), counts, cov, start, segs)


def _order(row_list: np.ndarray, key: np.ndarray, runs: bool) -> np.ndarray:
    """Rows sorted by list, then by decreasing key (ties: the rows' order); no sort when they come so."""
    if runs:
        same = row_list[1:] == row_list[:-1]
        if not (same & (key[1:] > key[:-1])).any():
            return np.arange(len(row_list))
    return np.lexsort((-key, row_list))


def _name(table: Any, name: str) -> str:
    return {c.lower(): c for c in table.column_names}[name.lower()]


def _days(table: Any, sel: Any, order: np.ndarray, starts: np.ndarray, n_lists: int
          ) -> tuple[np.ndarray, int | None]:
    """Each list's day index from its earliest timestamp (0 when the log has none) and the first midnight."""
    pa = require("pyarrow")
    pc = require("pyarrow.compute")
    col = _column(table, "timestamp", "", False)
    if col is None:
        return np.zeros(n_lists, dtype=np.int64), None
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        col = _parse_times(col)
    if pa.types.is_timestamp(col.type) and col.type.tz is not None:
        col = pc.cast(col, pa.timestamp("ms", tz="UTC")).cast(pa.timestamp("ms"))
    if pa.types.is_timestamp(col.type) or pa.types.is_date(col.type):
        ms = pc.cast(pc.cast(col, pa.timestamp("ms")), pa.int64())
    elif pa.types.is_integer(col.type) or pa.types.is_floating(col.type):
        ms = pc.cast(pc.multiply(pc.cast(col, pa.float64()), 1000.0), pa.int64())
    else:
        raise _Refused(f"column 'timestamp' must be times, ISO-8601 text or epoch seconds; it is "
                         f"{col.type}.")
    _no_nulls(ms, "timestamp")
    t = sel(ms.to_numpy(zero_copy_only=False).astype(np.int64))
    first = np.minimum.reduceat(t[order], starts)
    start = int(first.min() // _DAY_MS * _DAY_MS)
    return (first - start) // _DAY_MS, start


def _parse_times(col: Any) -> Any:
    """ISO-8601 text (with a zone offset or ``Z``, converted to UTC; or naive, taken as UTC) or epoch seconds."""
    pa = require("pyarrow")
    pc = require("pyarrow.compute")
    text = pc.utf8_trim_whitespace(col)
    errors = []
    for typ in (pa.timestamp("ms", tz="UTC"), pa.timestamp("ms"), pa.float64()):
        try:
            return pc.cast(text, typ)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            errors.append(str(exc).splitlines()[0])
    raise _Refused(f"column 'timestamp' must be ISO-8601 times or epoch seconds, all of one form: "
                     f"{errors[1]}")


def _covariates(table: Any, names: Sequence[str], sel: Any, first: np.ndarray, row_list: np.ndarray,
                unit: np.ndarray, n_units: int) -> np.ndarray:
    """(n_units, n_covariates): each unit's value of each covariate column (the same on all its rows)."""
    out = np.zeros((n_units, len(names)))
    for j, name in enumerate(names):
        col = _column(table, name, "a covariate", False)
        if col is None:
            raise _Refused(f"covariate {name!r} is not a column of the events (columns: "
                             f"{', '.join(table.column_names)}).")
        _no_nulls(col, name)
        v = sel(_numbers(col, name, "finite"))
        per_list = v[first]
        lo, hi = np.full(n_units, np.inf), np.full(n_units, -np.inf)
        np.minimum.at(lo, unit, per_list)
        np.maximum.at(hi, unit, per_list)
        bad_row = v != per_list[row_list]
        if bad_row.any() or (lo != hi).any():
            u = int(unit[row_list[np.argmax(bad_row)]]) if bad_row.any() else int(np.argmax(lo != hi))
            raise _Refused(f"covariate {name!r} must be one value per unit; unit number {u + 1} has "
                             "several.")
        out[:, j] = lo
    return out


def _owners(table: Any, group: np.ndarray, ranked: np.ndarray) -> np.ndarray:
    """Each row's item row: itself for a ranked row, the ranked row of the same list and item for a label row."""
    pa = require("pyarrow")
    items, _ = _codes(_column(table, "item_id", "the item of a label row").cast(pa.string()), "item_id")
    key = group * (int(items.max()) + 1) + items
    r_idx, l_idx = np.flatnonzero(ranked), np.flatnonzero(~ranked)
    order = np.argsort(key[r_idx], kind="stable")
    at = np.minimum(np.searchsorted(key[r_idx], key[l_idx], sorter=order), len(r_idx) - 1)
    target = r_idx[order[at]]
    found = key[target] == key[l_idx]
    if not found.all():
        i = int(l_idx[np.argmax(~found)])
        raise _Refused(f"label row {i} names an item that the served list of its group_id does not "
                         "hold.")
    owner = np.arange(len(ranked))
    owner[l_idx] = target
    return owner
