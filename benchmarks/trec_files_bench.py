"""TREC files, whole process: ``ranklens eval`` and ``ranklens trec_eval`` beside pytrec_eval reading the same
files (issue #29 point 8: at least 5 times as fast, on 1M and 3M lines), as ratios measured in one run.

For each size (10,000 and 30,000 queries x 100 items: 1M and 3M run lines, as many qrels lines), the files are
written once (``gen.write_trec``), then each command runs as a process of its own: a warm-up (the OS file cache),
then ``--repeat`` timed runs, median. Times are the whole process from outside (``run.measure_process``: wall and
CPU seconds, every thread, and peak resident set from ``wait4``): start-up, reading, evaluating, printing. Beside
them, the start-up of ``ranklens eval`` alone: the interpreter, the imports of the command and the kernels' module
(``import ranklens`` imports each public name on first use: it no longer measures that). pytrec_eval:
``parse_qrel``, ``parse_run``, ``RelevanceEvaluator(qrels, {"ndcg_cut_10"}).evaluate(run)`` and the mean, its
fastest path from files (pytrec_eval imports numpy itself; both sides compute NDCG@10 of trec_eval).
``--append FILE`` adds the section to the benchmark report.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gen  # noqa: E402
from run import measure_process  # noqa: E402

PYTREC = (
    "import sys, numpy as np, pytrec_eval\n"
    "q = pytrec_eval.parse_qrel(open(sys.argv[1])); r = pytrec_eval.parse_run(open(sys.argv[2]))\n"
    "res = pytrec_eval.RelevanceEvaluator(q, {'ndcg_cut_10'}).evaluate(r)\n"
    "print(repr(float(np.mean([v['ndcg_cut_10'] for v in res.values()]))))\n"
)

STARTUP = ("import ranklens._cli.main, ranklens._cli.eval\n"
           "from ranklens._kernels.dispatch import aot_status\naot_status()\n")


def files(n_q: int) -> tuple[Path, Path]:
    d = Path(os.environ.get("RANKLENS_BENCH_DATA", HERE / ".data"))
    d.mkdir(parents=True, exist_ok=True)
    qrels, run = d / f"q{n_q}_i100.qrels", d / f"q{n_q}_i100.run"
    if not run.exists():
        gen.write_trec(gen.make(n_q, 100), qrels, run)
    return qrels, run


def commands(qrels: Path, run: Path) -> dict[str, list[str]]:
    exe = str(Path(sys.executable).with_name("ranklens"))
    return {
        "ranklens eval -m ndcg@10 -c trec_eval": [exe, "eval", str(qrels), str(run), "-m", "ndcg@10", "-c",
                                                  "trec_eval", "-f", "csv"],
        "ranklens trec_eval -m ndcg_cut.10": [exe, "trec_eval", "-m", "ndcg_cut.10", str(qrels), str(run)],
        "pytrec_eval (parse_qrel, parse_run, evaluate)": [sys.executable, "-c", PYTREC, str(qrels), str(run)],
        "start-up of ranklens eval alone (imports, kernels' module)": [sys.executable, "-c", STARTUP],
    }


def _value(out: str) -> float | None:
    last = (out.strip().splitlines() or [""])[-1]
    try:
        return float(last.replace(",", " ").split()[-1])
    except (ValueError, IndexError):
        return None


def measure(sizes: tuple[int, ...] = (10_000, 30_000), repeat: int = 3) -> dict:
    load_start = os.getloadavg()[0]
    out = []
    for n_q in sizes:
        qrels, run = files(n_q)
        rows = []
        for name, cmd in commands(qrels, run).items():
            measure_process(cmd)  # warm-up: the OS file cache
            runs = [measure_process(cmd) for _ in range(repeat)]
            rows.append({"name": name, "wall": statistics.median(m["wall"] for m in runs),
                         "cpu": statistics.median(m["cpu"] for m in runs), "peak": max(m["peak"] for m in runs),
                         "value": _value(runs[-1]["out"])})
            r = rows[-1]
            print(f"  {n_q * 100:>10,} lines  {name:<48} {r['cpu']:7.3f} s CPU {r['wall']:7.3f} s wall "
                  f"{r['peak']:6.0f} MB  {r['value']}", flush=True)
        out.append({"lines": n_q * 100, "rows": rows})
    return {"sizes": out, "repeat": repeat, "load": (load_start, os.getloadavg()[0])}


def section(res: dict) -> list[str]:
    lines = ["", "## TREC files, whole process: ranklens beside pytrec_eval", "",
             "`benchmarks/trec_files_bench.py`: each command a process of its own, timed from outside (`wait4`): "
             "start-up, reading the qrels and the run, evaluating NDCG@10, printing. CPU seconds count every thread "
             f"of the process; median of {res['repeat']} runs after a warm-up. Load average (1 min) at the start "
             f"{res['load'][0]:.1f}, at the end {res['load'][1]:.1f}.", ""]
    for size in res["sizes"]:
        by = {r["name"]: r for r in size["rows"]}
        peer = by["pytrec_eval (parse_qrel, parse_run, evaluate)"]
        lines += [f"{size['lines']:,} run lines:", "",
                  "| command | CPU seconds | wall seconds | peak RSS (MB) | pytrec_eval / this, CPU | wall | value |",
                  "|---|---:|---:|---:|---:|---:|---|"]
        for r in size["rows"]:
            lines.append(f"| `{r['name']}` | {r['cpu']:.3f} | {r['wall']:.3f} | {r['peak']:.0f} | "
                         f"{peer['cpu'] / r['cpu']:.2f} | {peer['wall'] / r['wall']:.2f} | "
                         f"{'' if r['value'] is None else format(r['value'], '.6f')} |")
        lines.append("")
    lines.append("Target (issue #29): `ranklens eval` at least 5 times as fast as pytrec_eval, whole process.")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--append", default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--queries", type=int, nargs="+", default=[10_000, 30_000], help="100 lines each")
    a = ap.parse_args()
    # every timed process caches its bytecode, as an installed package does (as benchmarks/run.py does)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    res = measure(tuple(a.queries), a.repeat)
    if a.append:
        with open(a.append, "a") as f:
            f.write("\n".join(section(res)) + "\n")


if __name__ == "__main__":
    main()
