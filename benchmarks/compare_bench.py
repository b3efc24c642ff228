"""``ranklens.compare`` at scale: 100,000 queries x 10 runs x 10,000 resamples.

Judgments: 100,000 queries x 20 judged items (graded 0-4); ten runs whose scores
follow the labels with different noise. Times, in one process: evaluating the
ten runs alone, then ``compare`` with t intervals (sign-flip randomization for
the 9 pairs) and with the default BCa bootstrap intervals. ``--append FILE``
adds the section to the benchmark report.
"""

from __future__ import annotations

import time

import numpy as np

import report_section


def data(n_q: int = 100_000, n_i: int = 20, n_runs: int = 10, seed: int = 11):
    import ranklens

    rng = np.random.default_rng(seed)
    q = np.repeat(np.arange(n_q, dtype=np.int64), n_i)
    item = np.tile(np.arange(n_i, dtype=np.int64), n_q)
    u = rng.random(q.shape[0])
    label = (u > 0.7).astype(float) + (u > 0.85) + (u > 0.95) + (u > 0.99)
    judgments = ranklens.Judgments(q, item, label)
    runs = {}
    for r in range(n_runs):
        score = (0.5 + 0.05 * r) * label + rng.standard_normal(q.shape[0])
        runs[f"run{r}"] = ranklens.Rankings(q, item, score=score)
    return judgments, runs


def measure(n_q: int = 100_000, n_runs: int = 10, n_resamples: int = 10_000) -> dict:
    import ranklens

    judgments, runs = data(n_q, n_runs=n_runs)
    small_j, small_r = data(200, n_runs=2)
    ranklens.compare(small_j, small_r, ["ndcg@10"], n_resamples=100)  # compile / load the kernels
    ranklens.compare(small_j, small_r, ["ndcg@10"], n_resamples=100, ci="t")
    t0 = time.perf_counter()
    for r in runs.values():
        ranklens.evaluate(judgments, r, ["ndcg@10"])
    t_eval = time.perf_counter() - t0
    t0 = time.perf_counter()
    ranklens.compare(judgments, runs, ["ndcg@10"], n_resamples=n_resamples, ci="t")
    t_t = time.perf_counter() - t0
    t0 = time.perf_counter()
    ranklens.compare(judgments, runs, ["ndcg@10"], n_resamples=n_resamples)
    t_bca = time.perf_counter() - t0
    return {"n_q": n_q, "n_runs": n_runs, "n_resamples": n_resamples, "evaluate": t_eval, "t": t_t, "bca": t_bca}


def section(r: dict) -> list[str]:
    return [
        "",
        f"## Comparing systems: {r['n_q']:,} queries x {r['n_runs']} runs x {r['n_resamples']:,} resamples",
        "",
        "`ranklens.compare` on NDCG@10 against the first run (sign-flip randomization test for the 9 pairs, "
        "Holm correction), one process, kernels already compiled:",
        "",
        "| step | seconds |",
        "|---|---:|",
        f"| evaluating the {r['n_runs']} runs alone | {r['evaluate']:.2f} |",
        f"| compare, t intervals (`--ci t`) | {r['t']:.2f} |",
        f"| compare, BCa bootstrap intervals (default) | {r['bca']:.2f} |",
        "",
        "Every resample depends only on (seed, index): the same numbers on any number of threads.",
    ]


def main() -> None:
    report_section.run(lambda: section(measure()))


if __name__ == "__main__":
    main()
