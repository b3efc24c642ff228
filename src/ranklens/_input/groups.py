"""The groups of ``group_by=``: the group of each row of a table (in memory, or a CSV/TSV/Parquet/JSON Lines file)
from one of its columns, or several (the group the tuple of their values); or the group of each query, from a
mapping ``{query: group}`` or from a column of the judgments' table when the run has none (one value per query).
A row without a group value (null, NaN or empty text) is refused, naming the row and its query."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, InvalidParameterError
from .files import detect_format, read_arrow_table
from .tables import pick_column, table_kind

__all__ = ["RowGroups", "group_column", "group_columns", "query_groups_of", "row_groups"]


def _arrow(obj: Any, where: str) -> Any:
    """A table as an Arrow table (pandas and polars through their own converters), or None for another input."""
    kind = table_kind(obj)
    if kind == "pandas":
        import pyarrow as pa

        return pa.Table.from_pandas(obj, preserve_index=False)
    if kind == "polars":
        return (obj.collect() if type(obj).__name__ == "LazyFrame" else obj).to_arrow()
    if kind == "arrow":
        import pyarrow as pa

        return pa.Table.from_batches([obj]) if type(obj).__name__ == "RecordBatch" else obj
    if isinstance(obj, (str, os.PathLike)):
        fmt = detect_format(Path(obj))
        if fmt in ("csv", "tsv", "parquet", "jsonl"):
            return read_arrow_table(obj, fmt)
    return None


def _refuse_missing(g: Any, c: str, q: Any, where: str) -> None:
    """A group column's missing values (null, NaN, or an empty text: what a CSV file's empty field gives) refused,
    naming the first row (from 0) and its query."""
    import pyarrow as pa
    import pyarrow.compute as pc

    missing = g.is_null()
    if pa.types.is_floating(g.type):
        missing = pc.fill_null(pc.is_nan(g), True)
    elif pa.types.is_string(g.type) or pa.types.is_large_string(g.type):
        missing = pc.fill_null(pc.equal(pc.utf8_length(g), 0), True)
    n = pc.sum(missing).as_py() or 0
    if n:
        i = int(np.flatnonzero(np.asarray(missing.to_numpy(zero_copy_only=False)))[0])
        raise InputError(f"column {c!r} of {where} has no value in row {i} (query {q[i].as_py()}; {n} rows without "
                         "one): every row needs its group.")


class RowGroups:
    """The group of every row of a table: ``codes[i]`` indexes ``keys`` (a value, or a tuple of values for several
    columns); ``by`` names the columns and the table."""

    __slots__ = ("by", "codes", "keys", "table")

    def __init__(self, codes: np.ndarray, keys: list[Any], by: str, table: Any):
        self.codes = codes
        self.keys = keys
        self.by = by
        self.table = table


def _table_of(obj: Any, cols: list[str], query_col: str | None, where: str) -> tuple[Any, Any] | None:
    """``(table, query ids as strings)`` of table ``obj`` holding the columns ``cols``, None when it is not a table
    or lacks one of them; the query column refused as a group column."""
    t = _arrow(obj, where)
    if t is None or any(c not in t.schema.names for c in cols):
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    qcol = pick_column(list(t.schema.names), "query", query_col, True, where)
    if qcol in cols:
        raise InvalidParameterError(f"`group_by` {qcol!r} is the query column of {where}; a group holds queries: "
                                    "name another column.")
    for c in cols:
        _refuse_missing(t.column(c).combine_chunks(), c, pc.cast(t.column(qcol), pa.large_string()), where)
    return t, pc.cast(t.column(qcol), pa.large_string()).combine_chunks()


def row_groups(obj: Any, cols: list[str], query_col: str | None, where: str) -> RowGroups | None:
    """The group of each row of table ``obj`` from columns ``cols``; None when ``obj`` is not a table or lacks one
    of them. A missing value is refused naming the row; the query column is refused as a group column."""
    found = _table_of(obj, cols, query_col, where)
    if found is None:
        return None
    import pyarrow.compute as pc

    t, q = found
    codes = np.zeros(t.num_rows, np.int64)
    keys: list[Any] = [()]
    for c in cols:  # a loop over the group columns
        enc = pc.dictionary_encode(t.column(c).combine_chunks())
        values = enc.dictionary.to_pylist()
        idx = np.asarray(enc.indices.to_numpy(zero_copy_only=False), np.int64)
        uniq, codes = np.unique(codes * len(values) + idx, return_inverse=True)
        keys = [keys[u // len(values)] + (values[u % len(values)],) for u in uniq.tolist()]  # a loop over groups
    named = " and ".join(repr(c) for c in cols)
    by = f"{'column' if len(cols) == 1 else 'columns'} {named} of {where}"
    return RowGroups(codes.reshape(-1), [k[0] if len(cols) == 1 else k for k in keys], by, t)


def group_column(obj: Any, column: str | list[str], query_col: str | None,
                 where: str) -> tuple[np.ndarray, np.ndarray] | None:
    """``(queries, groups)`` from column ``column`` (or columns: each group a tuple of their values) of table
    ``obj``: one row per query (string ids), its group; None when ``obj`` is not a table or lacks a column. A null
    group, or a query with two groups, is refused naming the query."""
    cols = [column] if isinstance(column, str) else list(column)
    found = _table_of(obj, cols, query_col, where)
    if found is None:
        return None
    import pyarrow as pa

    t, q = found
    named = " and ".join(repr(c) for c in cols)
    names = [f"g{i}" for i in range(len(cols))]
    pairs = pa.table({"q": q, **{n: t.column(c) for n, c in zip(names, cols)}}).group_by(["q", *names]).aggregate([])
    queries = np.asarray(pairs.column("q").to_pylist(), dtype=object)
    values = [pairs.column(n).to_pylist() for n in names]
    groups = np.empty(queries.shape[0], dtype=object)
    groups[:] = values[0] if len(cols) == 1 else list(zip(*values))
    uq, counts = np.unique(queries, return_counts=True)
    if (counts > 1).any():
        bad = uq[counts > 1][0]
        seen = sorted(",".join(map(str, g)) if isinstance(g, tuple) else str(g) for g in groups[queries == bad])
        raise InputError(f"{'column' if len(cols) == 1 else 'columns'} {named} of {where} "
                         f"{'gives' if len(cols) == 1 else 'give'} query {bad} "
                         f"{len(seen)} groups ({', '.join(seen)}), and the run, which has no such column, cannot be "
                         "split by them: put the column in the run's table (a query's rows are then evaluated in "
                         "each group apart), or give one value per query.")
    return queries, groups


def group_columns(group_by: Any) -> list[str] | None:
    """The column names of ``group_by`` (a name, or a list of names, from the command line ``a,b``), None for
    a mapping; anything else refused."""
    if isinstance(group_by, Mapping):
        return None
    names = [group_by] if isinstance(group_by, str) else group_by
    if isinstance(names, (list, tuple)) and names and all(isinstance(c, str) and c for c in names):
        if len(set(names)) < len(names):
            raise InvalidParameterError(f"`group_by` names a column twice: {', '.join(names)}.")
        return list(names)
    raise InvalidParameterError(f"`group_by` must be a column name, a list of column names or a mapping "
                                f"{{query: group}}; got {group_by!r}.")


def query_groups_of(group_by: Any, judgments: Any, rankings: Any, query_col: str | None) -> tuple[np.ndarray,
                                                                                                np.ndarray, str]:
    """``(queries, groups, by)``: each query's group (string ids) for ``group_by``, a mapping ``{query: group}``
    or the name of a column of the run's table (else of the judgments' table); ``by`` names the source."""
    if isinstance(group_by, Mapping):
        if not group_by:
            raise InvalidParameterError("`group_by` is an empty mapping; give {query: group}.")
        groups = np.empty(len(group_by), dtype=object)
        for i, g in enumerate(group_by.values()):
            if g is None or (isinstance(g, float) and g != g):
                raise InvalidParameterError("`group_by` gives a query no group (None or NaN); every query named "
                                            "needs one.")
            groups[i] = g
        return np.asarray([str(k) for k in group_by], dtype=object), groups, "the mapping `group_by`"
    cols = group_columns(group_by)
    assert cols is not None
    for obj, side in ((rankings, "the run"), (judgments, "the judgments")):
        if obj is None:
            continue
        where = os.fspath(obj) if isinstance(obj, (str, os.PathLike)) else side
        found = group_column(obj, cols if len(cols) > 1 else cols[0], query_col, where)
        if found is not None:
            named = " and ".join(repr(c) for c in cols)
            return found[0], found[1], f"{'column' if len(cols) == 1 else 'columns'} {named} of {where}"
    named = ", ".join(repr(c) for c in cols)
    raise InvalidParameterError(f"`group_by` {named} {'is not a column' if len(cols) == 1 else 'are not columns'} "
                                "of the run's or the judgments' table (a pandas, polars or Arrow table, or a CSV, TSV, "
                                "Parquet or JSON Lines file; several columns must be in the same table); for other "
                                "inputs give a mapping {query: group}.")
