"""One library, one task, one data file, in its own process: ``python workers.py LIB DATA [--repeat N]``
(``python workers.py size DATA``: the size of the table as Arrow arrays).

The input is loaded first (the library's natural in-memory form of a long
table: pandas for pytrec_eval / ranx / ir_measures, numpy for torchmetrics and
scikit-learn, Arrow / pandas / polars / numpy for ranklens); the timed part is
everything from that table to the mean NDCG@10, conversions included, each
peer fed through its fastest documented input: dicts of dicts for pytrec_eval,
ranx (``from_dict``) and ir_measures, flat tensors with integer query indexes
for torchmetrics, dense matrices for scikit-learn (docs/benchmarks.md). Prints
one JSON line: times (wall and CPU seconds), value, resident memory after loading, versions.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


def rss_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def load_arrow(path: str) -> Any:
    import pyarrow.parquet as pq

    return pq.read_table(path)


#: ranklens' settings in the benchmark: its default convention (ties averaged exactly, float64 scores)
#: with trec_eval's two rules that change a mean on these data sets: a query without a relevant item
#: scores 0 (instead of being skipped) and the queries are those judged
RANKLENS_OPTIONS = {"empty": 0.0, "queries": "judged"}


def task_ranklens(path: str, form: str, metrics: list[str], convention: str | None = None,
                  ) -> tuple[Callable[[], float], dict[str, str]]:
    import ranklens

    opts = {"queries": "judged"} if convention else RANKLENS_OPTIONS

    t = load_arrow(path)
    if form == "pandas":
        t = t.to_pandas()
    elif form == "polars":
        import polars as pl

        t = pl.from_arrow(t)
    elif form == "numpy":
        t = {c: t.column(c).to_numpy(zero_copy_only=False) for c in t.column_names}

    def run() -> float:
        if form == "numpy":
            j = ranklens.Judgments(t["query"], t["item"], t["label"].astype(np.float64))
            r = ranklens.Rankings(t["query"], t["item"], score=t["score"])
            res = ranklens.evaluate(j, r, metrics, convention=convention, per_query=False, **opts)
        else:
            res = ranklens.evaluate(t, None, metrics, convention=convention, per_query=False, **opts)
        return float(res[metrics[0]])

    return run, {"ranklens": ranklens.__version__}


def query_codes(q: Any) -> tuple[np.ndarray, np.ndarray]:
    """Each row's query as an integer code (hashing, no sort of the strings: ``pandas.factorize``) and the
    rows in query order (a stable argsort of those integers), for the peers that take one group per query."""
    import pandas as pd

    codes, _ = pd.factorize(q)
    return codes, np.argsort(codes, kind="stable")


def nested_dicts(df: Any) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """The long table as the dicts of dicts ``{query: {item: label}}`` and ``{query: {item: score}}`` that
    pytrec_eval takes (its only input), and ranx (``Qrels.from_dict``/``Run.from_dict``) and ir_measures
    (``calc_aggregate``) document: one slice per query, built by dict comprehensions over Python lists."""
    codes, order = query_codes(df["query"].to_numpy())
    c = codes[order]
    queries = df["query"].to_numpy()[order]
    items = df["item"].to_numpy()[order].tolist()
    labels = df["label"].to_numpy()[order].tolist()
    scores = df["score"].to_numpy()[order].tolist()
    bounds = (np.flatnonzero(c[1:] != c[:-1]) + 1).tolist()
    starts, ends = [0, *bounds], [*bounds, len(c)]
    names = queries[starts].tolist() if len(c) else []
    qrels = {q: dict(zip(items[a:b], labels[a:b])) for q, a, b in zip(names, starts, ends)}
    run = {q: dict(zip(items[a:b], scores[a:b])) for q, a, b in zip(names, starts, ends)}
    return qrels, run


def task_pytrec_eval(path: str) -> tuple[Callable[[], float], dict[str, str]]:
    import pytrec_eval

    df = load_arrow(path).to_pandas()

    def run() -> float:
        # pytrec_eval's one input: dicts of dicts (README), built the quickest way from the table
        qrels, runs = nested_dicts(df)
        res = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10"}).evaluate(runs)
        return float(np.mean([v["ndcg_cut_10"] for v in res.values()]))

    return run, {"pytrec_eval": _version("pytrec-eval-terrier") + " (trec_eval 9)"}


def task_ranx(path: str) -> tuple[Callable[[], float], dict[str, str]]:
    import ranx

    df = load_arrow(path).to_pandas()

    def run() -> float:
        # Qrels.from_dict / Run.from_dict (ranx's documented constructors): on 1M rows about 1.5 times as
        # fast as Qrels.from_df / Run.from_df (a pandas group-by inside), dict building included. Every
        # judgment, zeros included: a query with no relevant item stays in (scores 0), as in the others.
        qrels, runs = nested_dicts(df)
        return float(ranx.evaluate(ranx.Qrels.from_dict(qrels), ranx.Run.from_dict(runs), "ndcg@10",
                                   make_comparable=True))

    return run, {"ranx": _version("ranx")}


def task_ir_measures(path: str) -> tuple[Callable[[], float], dict[str, str]]:
    import ir_measures

    df = load_arrow(path).to_pandas()

    def run() -> float:
        # calc_aggregate on dicts of dicts (documented in its README beside DataFrames and namedtuples):
        # the pytrec_eval provider takes them as they are; DataFrames are first turned into namedtuples
        # row by row (about 6 times slower on 1M rows)
        qrels, runs = nested_dicts(df)
        m = ir_measures.nDCG @ 10
        return float(ir_measures.calc_aggregate([m], qrels, runs)[m])

    return run, {"ir_measures": ir_measures.__version__}


def task_torchmetrics(path: str) -> tuple[Callable[[], float], dict[str, str]]:
    import torch
    import torchmetrics
    from torchmetrics.retrieval import RetrievalNormalizedDCG

    t = load_arrow(path)
    q = t.column("query").to_numpy(zero_copy_only=False)
    s = t.column("score").to_numpy()
    lab = t.column("label").to_numpy()

    def run() -> float:
        # torchmetrics' input: flat tensors with an integer query index per row (its docs); the index from
        # hashing the ids (no sort of the strings)
        codes, _ = query_codes(q)
        m = RetrievalNormalizedDCG(top_k=10)
        return float(m(torch.from_numpy(s), torch.from_numpy(lab), indexes=torch.from_numpy(codes.astype(np.int64))))

    return run, {"torchmetrics": torchmetrics.__version__, "torch": torch.__version__}


def task_sklearn(path: str) -> tuple[Callable[[], float], dict[str, str]]:
    import sklearn
    from sklearn.metrics import ndcg_score

    t = load_arrow(path)
    q = t.column("query").to_numpy(zero_copy_only=False)
    s = t.column("score").to_numpy()
    lab = t.column("label").to_numpy()

    def run() -> float:
        # ndcg_score on dense (queries x items) matrices, its documented input: rows put in query order by
        # a stable argsort of integer codes, then reshaped (every query has the same number of items here)
        codes, order = query_codes(q)
        n_q = int(codes.max()) + 1
        return float(ndcg_score(lab[order].reshape(n_q, -1), s[order].reshape(n_q, -1), k=10))

    return run, {"scikit-learn": sklearn.__version__}


def _input_mb(path: str) -> float:
    """Size of the input columns as Arrow arrays in memory."""
    return load_arrow(path).nbytes / 2**20


def main() -> None:
    if sys.argv[1:2] == ["size"]:  # its own process: loading the table twice would count in a worker's peak
        print(json.dumps({"input_arrays_mb": _input_mb(sys.argv[2])}))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("data")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--metrics", default="ndcg@10")
    ap.add_argument("--warmup", default=None, help="a small data file run once, untimed, first (JIT compilation)")
    a = ap.parse_args()
    metrics = a.metrics.split(",")

    def task(path: str) -> tuple[Callable[[], float], dict[str, str]]:
        if a.lib.startswith("ranklens"):
            # ranklens[:FORM[:CONVENTION]]
            _, form, conv = (a.lib.split(":") + ["", ""])[:3]
            return task_ranklens(path, form or "arrow", metrics, conv or None)
        return {"pytrec_eval": task_pytrec_eval, "ranx": task_ranx, "ir_measures": task_ir_measures,
                "torchmetrics": task_torchmetrics, "sklearn": task_sklearn}[a.lib](path)

    if a.warmup:
        task(a.warmup)[0]()  # ranklens: inputs of every size run on the ahead-of-time kernels (numba never loads)
    before = rss_kb()
    fn, versions = task(a.data)
    if "pyarrow" in sys.modules:  # every library: the pages Parquet decoding left in Arrow's pool go back
        import pyarrow as pa

        pa.default_memory_pool().release_unused()
    base = rss_kb()
    times, cpu = [], []
    value = float("nan")
    for _ in range(a.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        value = fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)  # every thread of the process
    print(json.dumps({"lib": a.lib, "times": times, "cpu": cpu, "value": value, "rss_after_load_kb": base,
                      "rss_before_load_kb": before, "versions": versions, "python": sys.version.split()[0]}))


if __name__ == "__main__":
    main()
