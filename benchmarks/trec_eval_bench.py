"""``ranklens trec_eval`` beside the trec_eval C program, on a 2.5M-line run (25,000 queries x 100 documents).

The commands the issue tracker measured: ``-M 100`` (trec_eval's official measures on each query's first 100
documents), ``-m relstring`` and ``-m all_trec``. Whole commands, process start to exit: wall time and peak
resident set measured from outside the process (``wait4`` in a launcher, ``run._measure``), the median of 3 runs
after one untimed run (the OS file cache), and the two outputs compared byte for byte. The C program is
``TREC_EVAL_BIN`` when set, else built from its source (``run.trec_eval_program``). ``--append FILE`` adds
the section to the benchmark report.
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
from run import _measure, trec_eval_program  # noqa: E402

COMMANDS = (["-M", "100"], ["-m", "relstring"], ["-m", "all_trec"])


def _timed(cmd: list[str], repeat: int) -> tuple[float, float, str]:
    """Median wall time, largest peak resident set (MB) and the output of ``repeat`` runs after a first one."""
    _measure(cmd)
    runs = [_measure(cmd) for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), max(r[1] for r in runs), runs[-1][2]


def measure(n_q: int = 25_000, repeat: int = 3) -> dict:
    d = Path(os.environ.get("RANKLENS_BENCH_DATA", HERE / ".data"))
    d.mkdir(parents=True, exist_ok=True)
    qrels, run = d / f"q{n_q}_i100.qrels", d / f"q{n_q}_i100.run"
    if not run.exists():
        gen.write_trec(gen.make(n_q, 100), qrels, run)
    te, how = trec_eval_program()
    ours = str(Path(sys.executable).with_name("ranklens"))
    rows = []
    print(f"trec_eval drop-in: {n_q * 100:,}-line run; trec_eval: {how}", flush=True)
    for flags in COMMANDS if te else ():
        theirs = _timed([te, *flags, str(qrels), str(run)], repeat)
        mine = _timed([ours, "trec_eval", *flags, str(qrels), str(run)], repeat)
        rows.append({"flags": " ".join(flags), "te_s": theirs[0], "te_mb": theirs[1], "ours_s": mine[0],
                     "ours_mb": mine[1], "same": theirs[2] == mine[2]})
        r = rows[-1]
        print(f"  {r['flags']:<12} trec_eval {r['te_s']:6.2f} s {r['te_mb']:5.0f} MB   ranklens {r['ours_s']:6.2f} s "
              f"{r['ours_mb']:5.0f} MB   same output: {r['same']}", flush=True)
    return {"lines": n_q * 100, "repeat": repeat, "how": how, "rows": rows, "load": os.getloadavg()[0]}


def section(res: dict) -> list[str]:
    lines = ["", f"## `ranklens trec_eval` beside trec_eval: a {res['lines']:,}-line run", "",
             "The same command line given to the trec_eval C program and to `ranklens trec_eval` "
             "(`benchmarks/trec_eval_bench.py`): qrels and run from `benchmarks/gen.py` "
             f"({res['lines'] // 100:,} queries x 100 documents, every one judged). Whole commands, median of "
             f"{res['repeat']} runs after an untimed one, "
             "peak resident set measured from outside (`wait4`); the outputs compared byte for byte. Load average "
             f"(1 min) at the end: {res['load']:.1f}.", ""]
    if not res["rows"]:
        return lines + [f"The trec_eval C program is not in this run: {res['how']}. Set `TREC_EVAL_BIN` to a built "
                        "trec_eval (https://github.com/usnistgov/trec_eval, `make`)."]
    lines += ["| flags | trec_eval (s) | ranklens trec_eval (s) | time x trec_eval | trec_eval peak (MB) "
              "| ranklens peak (MB) | memory x trec_eval | same output |",
              "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in res["rows"]:
        lines.append(f"| `{r['flags']}` | {r['te_s']:.2f} | {r['ours_s']:.2f} | {r['ours_s'] / r['te_s']:.2f} | "
                     f"{r['te_mb']:.0f} | {r['ours_mb']:.0f} | {r['ours_mb'] / r['te_mb']:.2f} | "
                     f"{'yes' if r['same'] else 'NO'} |")
    return lines + ["", f"trec_eval: {res['how']}."]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=25_000)
    ap.add_argument("--append", default=None)
    a = ap.parse_args()
    res = measure(a.queries)
    if a.append:
        with open(a.append, "a") as f:
            f.write("\n".join(section(res)) + "\n")


if __name__ == "__main__":
    main()
