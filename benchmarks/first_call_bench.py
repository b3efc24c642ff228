"""The first call in a new process beside the second, the warm call beside the kernel alone, and the whole process
beside pytrec_eval's (issue #29 point 8), as ratios measured in one run.

``evaluate(tab, tab, ["ndcg@10"], convention="trec_eval")`` on the main data set (100,000 queries x 100 rows,
string ids) read from Parquet into an Arrow table. A new process imports ranklens and pyarrow, reads the file and
makes the call twice, each timed inside it (wall and CPU seconds: ``time.process_time``, every thread of the
process); then, in the same process, the kernel alone (``run_plan`` on the problem built beforehand, as
``evaluate`` builds it: the arithmetic without joining or checking the input; an Arrow table's float64 and int64
columns are read from their chunks there, the scores rounded to float32 as they are read under trec_eval). The
whole process with one call is timed from outside (``run.measure_process``: wall, CPU seconds and peak resident set
from ``wait4``).
Beside it, in processes of their own: pytrec_eval's fast path on the same file (``workers.task_pytrec_eval``:
the table to pandas, dicts of dicts, ``RelevanceEvaluator``), whole; and scikit-learn's ``ndcg_score`` on dense
matrices (``workers.task_sklearn``), its timed part only, as the nearest peer of the warm call.

The machine may be shared: CPU seconds are what waiting for a core does not lengthen, so the ratios are given in
CPU seconds beside wall seconds, with the load average at the start and the end. The minor page faults of the first
and the second call (pages touched for the first time: fresh memory) are printed beside, to tell their cost from the
work's. ``--append FILE`` adds the section to the benchmark report.
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

from run import dataset, measure_process  # noqa: E402

OURS = (
    "import sys, time, json, statistics, resource\n"
    "import pyarrow.parquet as pq\n"
    "import ranklens\n"
    "tab = pq.read_table(sys.argv[1])\n"
    "convention = sys.argv[4] if len(sys.argv) > 4 else 'trec_eval'\n"
    "calls = []\n"
    "faults = []  # minor page faults of each call (fresh pages touched: every thread of the process)\n"
    "def clock(fn):\n"
    "    f = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
    "    w, c = time.perf_counter(), time.process_time()\n"
    "    out = fn()\n"
    "    w, c = time.perf_counter() - w, time.process_time() - c\n"
    "    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f)\n"
    "    return w, c, out\n"
    "for _ in range(int(sys.argv[2])):\n"
    "    calls.append(clock(lambda: ranklens.evaluate(tab, tab, ['ndcg@10'], convention=convention,\n"
    "                                                 per_query=False)['ndcg@10']))\n"
    "res = {'calls': [c[:2] for c in calls], 'value': calls[-1][2], 'faults': faults[:len(calls)]}\n"
    "if sys.argv[3:4] == ['kernel']:  # the kernel alone, on the problem evaluate builds (private names: a benchmark)\n"
    "    from ranklens._core.plan import make_plan, run_plan\n"
    "    from ranklens._core.problem import build_problem\n"
    "    from ranklens._defs.irmeasures import convention_groups\n"
    "    from ranklens._input.options import load_inputs\n"
    "    from ranklens.conventions import get_convention\n"
    "    from ranklens.measures import parse_measures\n"
    "    ((conv, idx),) = convention_groups(get_convention(convention), parse_measures(['ndcg@10']))\n"
    "    plan = make_plan(conv, parse_measures(['ndcg@10']))\n"
    "    problem = build_problem(*load_inputs(tab, tab), conv)\n"
    "    kernel = [clock(lambda: run_plan(plan, problem))[:2] for _ in range(5)]\n"
    "    res['kernel'] = [statistics.median(k[i] for k in kernel) for i in (0, 1)]\n"
    "print(json.dumps(res))\n"
)
THEIRS = (
    "import sys, json\n"
    f"sys.path.insert(0, {str(HERE)!r})\n"
    "import workers\n"
    "run, _ = workers.task_pytrec_eval(sys.argv[1])\n"
    "print(json.dumps({'value': run()}))\n"
)


def _last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


def measure(repeat: int = 3, n_q: int = 100_000, peers: bool = True, convention: str = "trec_eval") -> dict:
    data = str(dataset(n_q, 100))
    load_start = os.getloadavg()[0]
    inside, whole = [], []
    for _ in range(repeat):  # two calls and the kernel timed inside a process; one call, the whole process, outside
        inside.append(_last_json(measure_process([sys.executable, "-c", OURS, data, "2", "kernel", convention])["out"]))
        whole.append(measure_process([sys.executable, "-c", OURS, data, "1", "-", convention]))

    def med(values: list[float]) -> float:
        return statistics.median(values)

    ours = {
        "first": [med([r["calls"][0][i] for r in inside]) for i in (0, 1)],  # (wall, cpu)
        "second": [med([r["calls"][1][i] for r in inside]) for i in (0, 1)],
        "kernel": [med([r["kernel"][i] for r in inside]) for i in (0, 1)],
        "process": [med([m["wall"] for m in whole]), med([m["cpu"] for m in whole])],
        "peak": med([m["peak"] for m in whole]),
        "faults": [med([r["faults"][i] for r in inside]) for i in (0, 1)],  # first call, second call
    }
    res = {"ours": ours, "value": inside[-1]["value"], "repeat": repeat, "rows": n_q * 100, "theirs": None,
           "sklearn": None, "convention": convention}
    if peers:
        m = measure_process([sys.executable, "-c", THEIRS, data])
        res["theirs"] = {"process": [m["wall"], m["cpu"]], "peak": m["peak"], "value": _last_json(m["out"])["value"]}
        m = measure_process([sys.executable, str(HERE / "workers.py"), "sklearn", data, "--repeat", "1"])
        sk = _last_json(m["out"])
        res["sklearn"] = {"call": [sk["times"][0], sk["cpu"][0]], "value": sk["value"]}
    res["load"] = (load_start, os.getloadavg()[0])
    o = ours

    def x(a: list[float], b: list[float]) -> str:  # a ratio in CPU and in wall seconds
        return f"x{a[1] / b[1]:.2f} CPU, x{a[0] / b[0]:.2f} wall"

    print(f"[{convention}] first call {o['first'][1]:.3f} s CPU ({o['first'][0]:.3f} wall), second "
          f"{o['second'][1]:.3f} CPU ({o['second'][0]:.3f} wall): {x(o['first'], o['second'])}; kernel alone "
          f"{o['kernel'][1]:.3f} CPU ({o['kernel'][0]:.3f} wall): warm call {x(o['second'], o['kernel'])}; "
          f"whole process {o['process'][1]:.3f} s CPU ({o['process'][0]:.3f} wall); minor page faults: first call "
          f"{o['faults'][0]:.0f}, second {o['faults'][1]:.0f}", flush=True)
    if res["theirs"]:
        t, sk = res["theirs"]["process"], res["sklearn"]["call"]
        print(f"pytrec_eval whole process {t[1]:.3f} s CPU ({t[0]:.3f} wall): {x(t, o['process'])}; "
              f"scikit-learn's call {sk[1]:.3f} s CPU ({sk[0]:.3f} wall): {x(sk, o['second'])} the warm call",
              flush=True)
    print(f"load average (1 min): {res['load'][0]:.1f} at the start, {res['load'][1]:.1f} at the end", flush=True)
    return res


def section(res: dict) -> list[str]:
    o, t, sk = res["ours"], res["theirs"], res["sklearn"]

    def row(name: str, pair: list[float], peak: str = "") -> str:
        return f"| {name} | {pair[1]:.3f} | {pair[0]:.3f} | {peak} |"

    def ratio(name: str, a: list[float], b: list[float], target: str) -> str:
        return f"| {name} | {a[1] / b[1]:.2f} | {a[0] / b[0]:.2f} | {target} |"

    lines = ["", f"## The first call in a new process: {res['rows']:,} rows from Parquet", "",
             "`benchmarks/first_call_bench.py`: a new process imports ranklens and pyarrow, reads the main data set's "
             "Parquet file into an Arrow table and calls `evaluate(tab, tab, ['ndcg@10'], "
             f"convention={res['convention']!r})` "
             "twice, then runs the kernel alone on the problem the call builds (`run_plan`: the arithmetic, without "
             "joining or checking the input; the Arrow table's columns are read from their chunks there, the scores "
             f"rounded to float32 as they are read); median of {res['repeat']} processes. The whole process with "
             "one call is timed from outside (`wait4`); beside it, pytrec_eval's fast path on the same file in a "
             "process of its own (the table to pandas, dicts of dicts, `RelevanceEvaluator`), and scikit-learn's "
             "`ndcg_score` on dense matrices (its timed part, as in the main table). CPU seconds count every thread "
             "of the process; on a shared machine they are what waiting for a core does not lengthen. Load average "
             f"(1 min) at the start {res['load'][0]:.1f}, at the end {res['load'][1]:.1f}.", "",
             "| | CPU seconds | wall seconds | peak RSS (MB) |", "|---|---:|---:|---:|",
             row("ranklens, first call", o["first"]),
             row("ranklens, second call (warm)", o["second"]),
             row("ranklens, kernel alone", o["kernel"]),
             row("ranklens, whole process (one call)", o["process"], f"{o['peak']:.0f}")]
    if t:
        lines.append(row("pytrec_eval, whole process", t["process"], f"{t['peak']:.0f}"))
    if sk:
        lines.append(row("scikit-learn `ndcg_score`, dense matrices (one call)", sk["call"]))
    lines += ["", "| ratio | CPU | wall | target (issue #29) |", "|---|---:|---:|---|",
              ratio("first call / second call", o["first"], o["second"], "<= 1.3"),
              ratio("warm call / kernel alone", o["second"], o["kernel"], "<= 2")]
    if sk:
        lines.append(ratio("scikit-learn / ranklens warm call", sk["call"], o["second"], ">= 10"))
    if t:
        lines.append(ratio("pytrec_eval / ranklens, whole process", t["process"], o["process"], ">= 6 (aim)"))
        agree = abs(t["value"] - res["value"]) <= 1e-9
        lines += ["", f"Values: ranklens {res['value']:.12f}, pytrec_eval {t['value']:.12f} "
                      f"({'agree' if agree else 'DISAGREE'})."]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--append", default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--queries", type=int, default=100_000, help="100 rows each (a small size to try the script)")
    ap.add_argument("--no-peers", action="store_true", help="ranklens alone (no pytrec_eval, no scikit-learn)")
    ap.add_argument("--convention", default="trec_eval", help="ranklens' convention (default: trec_eval)")
    a = ap.parse_args()
    # every timed process caches its bytecode, as an installed package does (as benchmarks/run.py does)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    res = measure(a.repeat, a.queries, not a.no_peers, a.convention)
    if a.append:
        with open(a.append, "a") as f:
            f.write("\n".join(section(res)) + "\n")


if __name__ == "__main__":
    main()
