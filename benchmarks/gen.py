"""Deterministic benchmark data: long tables of (query, item, score, label).

``python benchmarks/gen.py --queries 100000 --items 100 --out DIR`` writes
``DIR/q{Q}_i{I}_{ids}.parquet`` (one long table, ids as strings or integers) and,
with ``--trec``, a TREC qrels and run pair. Labels are graded 0-4 with about
15% non-zero; scores are continuous (few ties) unless ``--ties``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np


def make(n_queries: int, n_items: int | tuple[int, int], seed: int = 2026, ids: str = "str",
         ties: bool = False) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    if isinstance(n_items, tuple):
        lengths = rng.integers(n_items[0], n_items[1] + 1, size=n_queries)
    else:
        lengths = np.full(n_queries, n_items, dtype=np.int64)
    n = int(lengths.sum())
    q = np.repeat(np.arange(n_queries, dtype=np.int64), lengths)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    item = np.arange(n, dtype=np.int64) - starts
    # labels: 85% zero, the rest 1..4 with decreasing frequency
    u = rng.random(n)
    label = np.zeros(n, dtype=np.int64)
    label[u > 0.85] = 1
    label[u > 0.93] = 2
    label[u > 0.97] = 3
    label[u > 0.99] = 4
    noise = rng.standard_normal(n)
    score = 0.8 * label + noise
    if ties:
        score = np.round(score, 1)
    out = {"query": q, "item": item, "score": score.astype(np.float64), "label": label}
    if ids == "str":
        out["query"] = np.char.add("q", q.astype(str)).astype(object)
        out["item"] = np.char.add("d", (q * 100_000 + item).astype(str)).astype(object)
    return out


def write_parquet(data: dict[str, np.ndarray], path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols = {}
    for k, v in data.items():
        cols[k] = pa.array(v.tolist() if v.dtype == object else v)
    pq.write_table(pa.table(cols), path)


def write_trec(data: dict[str, np.ndarray], qrels: Path, run: Path) -> None:
    q = data["query"].astype(str)
    it = data["item"].astype(str)
    with open(qrels, "w") as f:
        f.writelines(f"{a} 0 {b} {c}\n" for a, b, c in zip(q, it, data["label"]))
    # rank column consistent with the score order inside each query
    order = np.lexsort((-data["score"], data["query"]))
    with open(run, "w") as f:
        prev = None
        r = 0
        for i in order:
            if q[i] != prev:
                prev, r = q[i], 0
            r += 1
            f.write(f"{q[i]} Q0 {it[i]} {r} {float(data['score'][i])!r} bench\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--items", type=int, default=100)
    ap.add_argument("--ids", choices=["str", "int"], default="str")
    ap.add_argument("--trec", action="store_true")
    ap.add_argument("--out", default=os.environ.get("RANKLENS_BENCH_DATA", "benchmarks/.data"))
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    data = make(a.queries, a.items, ids=a.ids)
    write_parquet(data, out / f"q{a.queries}_i{a.items}_{a.ids}.parquet")
    if a.trec:
        write_trec(data, out / f"q{a.queries}_i{a.items}.qrels", out / f"q{a.queries}_i{a.items}.run")


if __name__ == "__main__":
    main()
