"""The public surface: explicit __all__, no heavy imports at `import ranklens`."""

from __future__ import annotations

import subprocess
import sys

import ranklens


def test_all_is_sorted_and_complete():
    assert list(ranklens.__all__) == sorted(ranklens.__all__)
    for name in ranklens.__all__:
        assert hasattr(ranklens, name), name
    public = {n for n in dir(ranklens) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(ranklens, n)).__name__ == "module"}
    assert public - modules - set(ranklens.__all__) == set()


def test_import_does_not_load_optional_stacks():
    code = (
        "import sys, ranklens; heavy = [m for m in ('pandas', 'polars', 'duckdb', 'pyspark', 'starlette', "
        "'fastapi', 'matplotlib') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_result_frames():
    res = ranklens.evaluate({"a": {"x": 1, "y": 0}, "b": {"z": 1}}, {"a": {"x": 1.0, "y": 2.0}, "b": {"z": 1.0}},
                            ["ndcg", "mrr"])
    df = res.to_pandas()
    assert list(df.columns) == ["ndcg", "mrr"] and list(df.index) == ["a", "b"]
    assert df.loc["a", "mrr"] == 0.5 and df.loc["b", "mrr"] == 1.0
    pl = res.to_polars()
    assert pl.columns == ["query", "ndcg", "mrr"] and pl["mrr"].to_list() == [0.5, 1.0]
