"""The ingest (reading, storing, the values' refresh) does not import pandas: pyarrow's ``pa.array``,
``Schema.empty_table`` and ``to_numpy`` import it when it is installed (a third of a second of every ingest
call); the store's own conversions read Arrow buffers instead, and give what pyarrow's ``to_numpy`` gives."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ranklens._input.buffers import chunked_to_numpy

sys.path.insert(0, str(Path(__file__).parent))
from handcalc import events


def test_an_ingest_imports_no_pandas(tmp_path):
    rows = events({"a": [["click"], [], []], "b": [[], ["click"]]})
    rows.append({"timestamp": "2026-10-01T12:00:00", "group_id": "b", "item_id": "b-1", "labels": ["click"]})
    for i in range(2):  # two files: one chunk of several Parquet files
        pq.write_table(pa.Table.from_pylist(rows[i::2]), tmp_path / f"e{i}.parquet")
    code = ("import sys; from ranklens.monitor import Store; "
            f"s = Store({str(tmp_path / 'store.duckdb')!r}, config={{}}).ingest({str(tmp_path)!r}); "
            "print(s.rows, s.groups, 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(len(rows)), "2", "False"]


def test_chunked_to_numpy_equals_pyarrows_conversion():
    """Nulls become NaN, chunks and slices (an offset into the validity bits) are read where they start."""
    rng = np.random.default_rng(0)
    for typ in (pa.float64(), pa.int32(), pa.int64(), pa.bool_()):
        for _ in range(40):
            n = int(rng.integers(0, 40))
            vals = [None if rng.random() < 0.3 else int(rng.integers(-50, 50)) for _ in range(n)]
            if typ == pa.bool_():
                vals = [None if v is None else v > 0 for v in vals]
            elif typ == pa.float64():
                vals = [None if v is None else v / 4 for v in vals]
            arr = pa.array(vals, typ)
            col = pa.chunked_array([arr.slice(int(rng.integers(0, max(n, 1)))), arr], typ)
            want = col.to_numpy(zero_copy_only=False).astype(np.float64)
            assert np.array_equal(chunked_to_numpy(col, np.float64), want, equal_nan=True)
    assert chunked_to_numpy(pa.chunked_array([], pa.float64()), np.float64).shape == (0,)
