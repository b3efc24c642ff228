"""Rows per second of ranklens.spark (local[1], local[2]) against the local engine on the same data.

    .venv/bin/python benchmarks/spark_bench.py --rows 1000000 10000000 [--out benchmarks/spark_results.md]

Data: queries of 100 ranked items (integer query and item ids, scores with ties), judgments for 30
items per query (labels 0-3), written once as Parquet. Each engine reads the same Parquet files and
computes ndcg@10, map and recall@100 under the trec_eval convention; the Spark times include reading,
the shuffle by query and the kernels (the first, warm-up run is not counted). The local engine's time
includes reading the Parquet files with pyarrow.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MEASURES = ["ndcg@10", "map", "recall@100"]


def make_data(directory: Path, rows: int, seed: int = 0) -> tuple[Path, Path]:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    per_q = 100
    n_q = rows // per_q
    rng = np.random.default_rng(seed)
    q = np.repeat(np.arange(n_q, dtype=np.int64), per_q)
    items = np.tile(np.arange(per_q, dtype=np.int64), n_q) * 7 + q % 7
    score = rng.integers(0, 1000, size=q.size).astype(np.float64)
    run = directory / f"run_{rows}.parquet"
    pq.write_table(pa.table({"query": q, "item": items, "score": score}), run, row_group_size=1 << 20)
    jq = np.repeat(np.arange(n_q, dtype=np.int64), 30)
    ji = np.tile(np.arange(0, 60, 2, dtype=np.int64), n_q) * 7 + jq % 7
    qrels = directory / f"qrels_{rows}.parquet"
    pq.write_table(pa.table({"query": jq, "item": ji, "relevance": rng.integers(0, 4, size=jq.size).astype(float)}),
                   qrels, row_group_size=1 << 20)
    return run, qrels


def bench_local(run: Path, qrels: Path, repeat: int) -> tuple[float, dict[str, float]]:
    import ranklens

    ranklens.evaluate(qrels, run, MEASURES, convention="trec_eval")  # warm-up (kernels, file cache)
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        res = ranklens.evaluate(qrels, run, MEASURES, convention="trec_eval")
        best = min(best, time.perf_counter() - t)
    return best, dict(res.aggregate)


def bench_spark(master: str, run: Path, qrels: Path, repeat: int) -> tuple[float, dict[str, float]]:
    """In a child process, so every master gets a fresh JVM."""
    code = f"""
import sys, time, json
import ranklens.spark as rs
cores = int({master!r}.split('[')[1].rstrip(']'))
spark = rs.session({master!r}, spark_ui_enabled="false", spark_sql_shuffle_partitions=str(4 * cores),
                   spark_driver_memory="3g", spark_sql_adaptive_enabled="false")
spark.sparkContext.setLogLevel("ERROR")
def once():
    r = spark.read.parquet({str(run)!r}); j = spark.read.parquet({str(qrels)!r})
    return rs.evaluate(j, r, {MEASURES!r}, convention="trec_eval")
once()
best = float("inf")
for _ in range({repeat}):
    t = time.perf_counter(); res = once(); best = min(best, time.perf_counter() - t)
print(json.dumps({{"seconds": best, "aggregate": res.aggregate}}))
"""
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    import json

    d = json.loads(out.stdout.strip().splitlines()[-1])
    return d["seconds"], d["aggregate"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--masters", nargs="+", default=["local[1]", "local[2]"])
    ap.add_argument("--out", type=Path, default=None, help="Write the markdown table here too.")
    args = ap.parse_args()
    lines = ["| ranked rows | engine | seconds | rows/s | max abs difference to local |", "|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        for rows in args.rows:
            run, qrels = make_data(Path(tmp), rows)
            t_local, agg_local = bench_local(run, qrels, args.repeat)
            lines.append(f"| {rows:,} | local engine ({os.cpu_count()} cores) | {t_local:.2f} | {rows / t_local:,.0f}"
                         " | - |")
            print(lines[-1], flush=True)
            for master in args.masters:
                t, agg = bench_spark(master, run, qrels, args.repeat)
                diff = max(abs(agg[k] - agg_local[k]) for k in MEASURES)
                lines.append(f"| {rows:,} | spark {master} | {t:.2f} | {rows / t:,.0f} | {diff:.1e} |")
                print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
