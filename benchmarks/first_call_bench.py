"""The first call in a new process beside the second, and the whole process beside pytrec_eval's.

``evaluate(tab, tab, ["ndcg@10"], convention="trec_eval")`` on the main data set (100,000 queries x 100 rows,
string ids) read from Parquet into an Arrow table: a new process imports ranklens and pyarrow, reads the
file, and makes the call twice; the two calls are timed inside it, the whole process from outside
(``run._measure``: wall time, peak resident set). Beside it, pytrec_eval's fast path on the same file in a
process of its own (``workers.task_pytrec_eval``: the table to pandas, dicts of dicts, ``RelevanceEvaluator``),
also whole. ``--append FILE`` adds the section to the benchmark report.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import _measure, dataset  # noqa: E402

OURS = (
    "import sys, time, json\n"
    "import pyarrow.parquet as pq\n"
    "import ranklens\n"
    "tab = pq.read_table(sys.argv[1])\n"
    "times = []\n"
    "for _ in range(int(sys.argv[2])):\n"
    "    t = time.perf_counter()\n"
    "    v = ranklens.evaluate(tab, tab, ['ndcg@10'], convention='trec_eval', per_query=False)['ndcg@10']\n"
    "    times.append(time.perf_counter() - t)\n"
    "print(json.dumps({'first': times[0], 'second': times[-1], 'value': v}))\n"
)
THEIRS = (
    "import sys, json\n"
    f"sys.path.insert(0, {str(HERE)!r})\n"
    "import workers\n"
    "run, _ = workers.task_pytrec_eval(sys.argv[1])\n"
    "print(json.dumps({'value': run()}))\n"
)


def measure(repeat: int = 3, n_q: int = 100_000) -> dict:
    data = str(dataset(n_q, 100))
    ours, theirs = [], []
    for _ in range(repeat):  # two calls timed inside a process; one call, the whole process timed from outside
        out = _measure([sys.executable, "-c", OURS, data, "2"])[2]
        wall, peak, _, _ = _measure([sys.executable, "-c", OURS, data, "1"])
        ours.append({**json.loads(out.strip().splitlines()[-1]), "wall": wall, "peak": peak})
    for _ in range(1 if repeat else 0):
        wall, peak, out, _ = _measure([sys.executable, "-c", THEIRS, data])
        theirs.append({**json.loads(out.strip().splitlines()[-1]), "wall": wall, "peak": peak})
    med = {k: statistics.median(r[k] for r in ours) for k in ("first", "second", "wall", "peak")}
    res = {"ours": med, "value": ours[-1]["value"], "theirs": theirs[0] if theirs else None, "repeat": repeat,
           "rows": n_q * 100, "load": os.getloadavg()[0]}
    against = f" against pytrec_eval's {theirs[0]['wall']:.3f} s" if theirs else ""
    print(f"first call {med['first']:.3f} s, second {med['second']:.3f} s (x{med['first'] / med['second']:.2f}); "
          f"whole process {med['wall']:.3f} s{against}", flush=True)
    return res


def section(res: dict) -> list[str]:
    o, t = res["ours"], res["theirs"]
    lines = ["", f"## The first call in a new process: {res['rows']:,} rows from Parquet", "",
             "`benchmarks/first_call_bench.py`: a new process imports ranklens and pyarrow, reads the main data set's "
             "Parquet file into an Arrow table and calls `evaluate(tab, tab, ['ndcg@10'], convention='trec_eval')` "
             f"twice (median of {res['repeat']} processes), and the whole process with one call; beside it, "
             "pytrec_eval's fast path on the same file in a process of its own (the table to pandas, dicts of "
             "dicts, `RelevanceEvaluator`). Whole processes timed from outside (`wait4`). Load average (1 min) "
             f"at the end: {res['load']:.1f}.", "",
             "| | seconds | peak RSS (MB) |", "|---|---:|---:|",
             f"| ranklens, first call | {o['first']:.3f} | |",
             f"| ranklens, second call | {o['second']:.3f} | |",
             f"| first / second | {o['first'] / o['second']:.2f} | |",
             f"| ranklens, whole process (one call) | {o['wall']:.3f} | {o['peak']:.0f} |"]
    if t:
        agree = abs(t["value"] - res["value"]) <= 1e-9
        lines += [f"| pytrec_eval, whole process | {t['wall']:.3f} | {t['peak']:.0f} |",
                  f"| pytrec_eval / ranklens, whole process | {t['wall'] / o['wall']:.1f} | |", "",
                  f"Values: ranklens {res['value']:.12f}, pytrec_eval {t['value']:.12f} "
                  f"({'agree' if agree else 'DISAGREE'})."]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--append", default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--queries", type=int, default=100_000, help="100 rows each (a small size to try the script)")
    a = ap.parse_args()
    res = measure(a.repeat, a.queries)
    if a.append:
        with open(a.append, "a") as f:
            f.write("\n".join(section(res)) + "\n")


if __name__ == "__main__":
    main()
