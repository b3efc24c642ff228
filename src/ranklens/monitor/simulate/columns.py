"""The simulator's output: Arrow columns built from numpy arrays through buffers, and the files they are
written to (Parquet, CSV, JSON Lines; CSV and JSON Lines with ISO-8601 timestamps)."""

from __future__ import annotations

import pathlib
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["arrow_codes", "arrow_ids", "arrow_labels", "arrow_numbers", "iso_text", "write_table"]


def arrow_numbers(a: np.ndarray, valid: np.ndarray | None = None) -> Any:
    """numpy -> Arrow through buffers (``pa.array`` would import pandas when installed)."""
    import pyarrow as pa

    a = np.ascontiguousarray(a)
    if a.dtype == np.bool_:  # Arrow packs booleans into bits
        return pa.Array.from_buffers(pa.bool_(), a.shape[0], [None, pa.py_buffer(np.packbits(a, bitorder="little"))])
    bitmap = None
    if valid is not None and not valid.all():
        bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(pa.from_numpy_dtype(a.dtype), a.shape[0], [bitmap, pa.py_buffer(a)])


def arrow_codes(codes: np.ndarray, names: Sequence[str], valid: np.ndarray | None = None) -> Any:
    """Small integer codes -> a string column (null where not ``valid``)."""
    import pyarrow as pa

    return pa.array(list(names), pa.string()).take(arrow_numbers(codes.astype(np.int32), valid))


def arrow_labels(bits: np.ndarray, valid: np.ndarray, labels: Sequence[str]) -> Any:
    """Bit set of ``labels`` per row -> list<string> (null where not ``valid``, [] when no bit is set)."""
    import pyarrow as pa

    has = ((bits[:, None] >> np.arange(len(labels), dtype=np.int8)) & 1).astype(bool)
    has &= valid[:, None]
    offsets = np.zeros(bits.shape[0] + 1, dtype=np.int32)
    np.cumsum(has.sum(axis=1), out=offsets[1:])
    values = arrow_codes(np.nonzero(has)[1], labels)
    mask = None if valid.all() else arrow_numbers(~valid)
    return pa.ListArray.from_arrays(arrow_numbers(offsets), values, mask=mask)


def arrow_ids(prefix: str, ids: np.ndarray, valid: np.ndarray | None = None) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.binary_join_element_wise(prefix, pc.cast(arrow_numbers(ids, valid), pa.string()), "")


def iso_text(col: Any) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_timestamp(col.type):
        return pc.strftime(col, format="%Y-%m-%dT%H:%M:%SZ")
    return col


def write_table(table: Any, path: pathlib.Path, format: str) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc

    if format == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, path)
        return
    cols = {name: table.column(name).combine_chunks() for name in table.column_names}
    cols["timestamp"] = iso_text(cols["timestamp"])
    if format == "csv":
        import pyarrow.csv as pcsv

        cols["labels"] = pc.binary_join(cols["labels"], "|")
        pcsv.write_csv(pa.table(cols), path)
        return
    # JSON Lines, assembled column-wise (ids, slices and labels hold no character JSON must escape)
    pieces: list[Any] = []
    for i, (name, col) in enumerate(cols.items()):
        pieces.append(("{" if i == 0 else ",") + f'"{name}":')
        if pa.types.is_string(col.type):
            text = pc.binary_join_element_wise('"', col, '"', "")
        elif pa.types.is_list(col.type):
            inner = pc.binary_join(col, '","')
            text = pc.if_else(pc.equal(pc.list_value_length(col), 0), "[]",
                              pc.binary_join_element_wise('["', inner, '"]', ""))
        else:
            text = pc.cast(col, pa.string())
        pieces.append(pc.fill_null(text, "null"))
    pieces.append("}\n")
    lines = pc.binary_join_element_wise(*pieces, "")
    if not isinstance(lines, pa.Array):
        lines = lines.combine_chunks()
    with open(path, "wb") as f:
        if len(lines):
            offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32)[lines.offset: lines.offset + len(lines) + 1]
            data = lines.buffers()[2]
            f.write(memoryview(data)[int(offsets[0]): int(offsets[-1])])
