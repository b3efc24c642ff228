"""The group of each query for ``group_by=``: from a mapping ``{query: group}``, or from a column of a table (in
memory, or a CSV/TSV/Parquet/JSON Lines file) holding one value per query."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, InvalidParameterError
from .files import detect_format, read_arrow_table
from .tables import pick_column, table_kind

__all__ = ["group_column", "query_groups_of"]


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


def group_column(obj: Any, column: str, query_col: str | None, where: str) -> tuple[np.ndarray, np.ndarray] | None:
    """``(queries, groups)`` from column ``column`` of table ``obj``: one row per query (string ids), its group;
    None when ``obj`` is not a table or has no such column. A null group, or a query with two groups, is
    refused naming the query."""
    t = _arrow(obj, where)
    if t is None or column not in t.schema.names:
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    qcol = pick_column(list(t.schema.names), "query", query_col, True, where)
    if qcol == column:
        raise InvalidParameterError(f"`group_by` {column!r} is the query column of {where}; a group holds whole "
                                    "queries: name another column.")
    q = pc.cast(t.column(qcol), pa.large_string()).combine_chunks()
    g = t.column(column).combine_chunks()
    if g.null_count:
        i = int(np.flatnonzero(np.asarray(g.is_null().to_numpy(zero_copy_only=False)))[0])
        raise InputError(f"column {column!r} of {where} has no value for query {q[i].as_py()} ({g.null_count} rows "
                         "without one): every row needs its group.")
    pairs = pa.table({"q": q, "g": g}).group_by(["q", "g"]).aggregate([])
    queries = np.asarray(pairs.column("q").to_pylist(), dtype=object)
    groups = np.asarray(pairs.column("g").to_pylist(), dtype=object)
    uq, counts = np.unique(queries, return_counts=True)
    if (counts > 1).any():
        bad = uq[counts > 1][0]
        seen = sorted(map(str, groups[queries == bad]))
        raise InputError(f"column {column!r} of {where} gives query {bad} {len(seen)} groups ({', '.join(seen)}); "
                         "a group holds whole queries: one value per query.")
    return queries, groups


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
    if not isinstance(group_by, str) or not group_by:
        raise InvalidParameterError(f"`group_by` must be a column name or a mapping {{query: group}}; got "
                                    f"{type(group_by).__name__}.")
    for obj, side in ((rankings, "the run"), (judgments, "the judgments")):
        if obj is None:
            continue
        where = os.fspath(obj) if isinstance(obj, (str, os.PathLike)) else side
        found = group_column(obj, group_by, query_col, where)
        if found is not None:
            return found[0], found[1], f"column {group_by!r} of {where}"
    raise InvalidParameterError(f"`group_by` {group_by!r} is not a column of the run's or the judgments' table "
                                "(a pandas, polars or Arrow table, or a CSV, TSV, Parquet or JSON Lines file); for "
                                "other inputs give a mapping {query: group}.")
