"""The kernel alone against a bare parallel kernel: ``python kernel_bench.py DATA [--repeat N]``.

The bare kernels are what the issue calls "a straightforward parallel numba kernel over flat arrays",
written two ways: per query (a ``prange`` over query offsets) an argsort of the scores, DCG@10 of
the labels in that order, the ideal DCG@10 of the labels sorted, their ratio (``bare_sort``); or the
10 best scores and 10 largest labels kept by insertion, without sorting or allocating
(``bare_topk``); then the mean. No tie handling, no conventions, no checks. ranklens' kernel alone is
``run_plan`` on a problem built beforehand
(ids factorised, rows grouped, labels joined): the single ``evaluate_queries`` call that orders each
query with the convention's tie rule (exact averaging over tied scores) and computes the measure.
Both run on numba's parallel JIT, compiled by a warm-up call; the kernels are timed in turns, and
the median of each one's timed calls is printed as one JSON line, with the values.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
def bare_ndcg10(offsets, scores, labels):  # pragma: no cover - compiled
    n_q = offsets.shape[0] - 1
    out = np.zeros(n_q)
    for q in prange(n_q):
        a, b = offsets[q], offsets[q + 1]
        s = scores[a:b]
        lab = labels[a:b]
        order = np.argsort(-s)
        k = min(10, b - a)
        dcg = 0.0
        for i in range(k):
            dcg += lab[order[i]] / np.log2(i + 2.0)
        ideal = np.sort(lab)[::-1]
        idcg = 0.0
        for i in range(k):
            idcg += ideal[i] / np.log2(i + 2.0)
        out[q] = dcg / idcg if idcg > 0 else 0.0
    return out


@njit(parallel=True, cache=True)
def bare_ndcg10_topk(offsets, scores, labels):  # pragma: no cover - compiled
    """The same without sorting whole lists: the 10 best scores and the 10 largest labels are kept
    by insertion into two small buffers (no allocation per query)."""
    n_q = offsets.shape[0] - 1
    out = np.zeros(n_q)
    for q in prange(n_q):
        a, b = offsets[q], offsets[q + 1]
        top_s = np.full(10, -np.inf)
        top_l = np.zeros(10)
        best = np.zeros(10)
        m = 0
        mi = 0
        for i in range(a, b):
            s, lab = scores[i], labels[i]
            if m < 10 or s > top_s[m - 1]:  # insert by score
                p = m if m < 10 else 9
                while p > 0 and top_s[p - 1] < s:
                    if p < 10:
                        top_s[p] = top_s[p - 1]
                        top_l[p] = top_l[p - 1]
                    p -= 1
                top_s[p] = s
                top_l[p] = lab
                m = min(m + 1, 10)
            if mi < 10 or lab > best[mi - 1]:  # insert by label (the ideal list)
                p = mi if mi < 10 else 9
                while p > 0 and best[p - 1] < lab:
                    if p < 10:
                        best[p] = best[p - 1]
                    p -= 1
                best[p] = lab
                mi = min(mi + 1, 10)
        dcg = 0.0
        idcg = 0.0
        for i in range(m):
            dcg += top_l[i] / np.log2(i + 2.0)
            idcg += best[i] / np.log2(i + 2.0)
        out[q] = dcg / idcg if idcg > 0 else 0.0
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--repeat", type=int, default=9)
    a = ap.parse_args()
    import pyarrow.parquet as pq

    from ranklens._core.plan import make_plan, run_plan
    from ranklens._core.problem import build_problem
    from ranklens.conventions import get_convention
    from ranklens.data import split_table

    table = pq.read_table(a.data)
    # flat arrays for the bare kernel: rows come grouped by query
    q = table.column("query").to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(np.concatenate(([True], q[1:] != q[:-1])))
    offsets = np.append(starts, q.shape[0]).astype(np.int64)
    scores = table.column("score").to_numpy().astype(np.float64)
    labels = table.column("label").to_numpy().astype(np.float64)
    # the same evaluation in ranklens: the default convention (linear gain, ties averaged), every query
    conv = get_convention("ranklens")
    plan = make_plan(conv, ["ndcg@10"])
    j, r = split_table(table, need="both", source="bench")
    problem = build_problem(j, r, conv)

    def bare() -> float:
        return float(bare_ndcg10(offsets, scores, labels).mean())

    def bare_topk() -> float:
        return float(bare_ndcg10_topk(offsets, scores, labels).mean())

    def ours() -> float:
        values, _ = run_plan(plan, problem)
        return float(np.nanmean(values[:, 0]))

    kernels = {"bare_sort": bare, "bare_topk": bare_topk, "ranklens": ours}
    values = {name: fn() for name, fn in kernels.items()}  # compile (JIT) and warm up
    times: dict[str, list[float]] = {name: [] for name in kernels}
    for _ in range(a.repeat):  # in turns: a slow spell of the machine falls on all of them alike
        for name, fn in kernels.items():
            t0 = time.perf_counter()
            values[name] = fn()
            times[name].append(time.perf_counter() - t0)
    out = {name: {"median_s": statistics.median(times[name]), "value": values[name]} for name in kernels}
    out["rows"] = int(scores.shape[0])
    out["queries"] = int(offsets.shape[0] - 1)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
