"""Online experiments benchmark (issue 30, point 8): ``ab_test`` on 10M list rows of 1M units, and
spotify-confidence's z test on the same unit aggregates, side by side in one run (``make bench`` runs it).

    python benchmarks/experiment_bench.py [--users 1000000] [--out docs/benchmarks-experiments.md]

1. A log is simulated once (``ranklens.online.simulate``: 1M users, 2 sessions each on average, 5 items a list:
   about 10M rows in 2M lists) and cached as Parquet under ``benchmarks/.data/``.
2. ``ab_test(events, ["ndcg@10", "clicks@10"])`` runs in a fresh process (its wall and CPU time, and peak
   resident memory, reported by that process): reading nothing (the table is in memory), every list's NDCG by
   the core and clicks, the unit sums, the delta method, the z test, the SRM test. Median of ``--repeat`` runs.
3. The unit stage alone, on the same 1M units' clicks@10 linearised values ``l_i = M + (Y_i - M X_i) / mean(X)``:
   ranklens' sufficient statistics and z test, and spotify-confidence 4.1 (``.venv-confidence``: a pandas
   group-by into its sufficient statistics, then ``ZTest(...).difference``, as ``tests/peers/confidence_runner.py``
   does). Both give the same difference, interval and p-value (checked here to 1e-9) and their times are
   compared.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / ".data"
CONFIDENCE = ROOT / ".venv-confidence" / "bin" / "python"
RUNNER = ROOT / "tests" / "peers" / "confidence_runner.py"


def _log(users: int) -> Path:
    path = DATA / f"experiment-{users}.parquet"
    if not path.exists():
        import pyarrow.parquet as pq

        from ranklens.online import simulate

        DATA.mkdir(parents=True, exist_ok=True)
        sim = simulate({"control": 1.0, "treatment": 0.8}, n_users=users, n_queries=1000, k=5,
                       sessions_per_user=2.0, seed=1)
        pq.write_table(sim.events, path)
    return path


def worker(path: str, repeat: int) -> None:
    """In a fresh process: ab_test on the log (median wall and CPU time, peak memory), then the unit stage."""
    import numpy as np
    import pyarrow.parquet as pq

    from ranklens.online import ab_test
    from ranklens.online._delta import compare, ratio, unit_sums, z_quantile

    table = pq.read_table(path)
    ab_test(table.slice(0, 2000), ["ndcg@10", "clicks@10"])  # kernels loaded, scipy imported
    walls, cpus = [], []
    for _ in range(repeat):
        r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        res = ab_test(table, ["ndcg@10", "clicks@10"])
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        walls.append(time.perf_counter() - t0)
        cpus.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    row = res.row("clicks@10", "treatment")
    # the unit stage on linearised values: one value per unit (its clicks@10 by ab_test's own path), its arm
    from ranklens.online._events import served_lists
    from ranklens.online.ab import list_measures

    lists = served_lists(table, arm_col="arm", unit_col="user_id")
    y, x = list_measures(lists, ["clicks@10"], "ranklens")
    yy = np.bincount(lists.unit, weights=y[:, 0], minlength=len(lists.units))
    xx = np.bincount(lists.unit, weights=x[:, 0], minlength=len(lists.units))
    arm = lists.unit_arm
    control = lists.arms.index("control")
    lin = np.zeros(len(yy))
    for a in range(len(lists.arms)):
        k = arm == a
        m = yy[k].sum() / xx[k].sum()
        lin[k] = m + (yy[k] - m * xx[k]) / xx[k].mean()
    t0 = time.perf_counter()
    s = unit_sums((arm != control).astype(np.int64), lin, np.ones(len(lin)), 2)
    mu, var = ratio(s)
    ours = compare(mu[1], var[1], mu[0], var[0], z_quantile(0.05))
    unit_seconds = time.perf_counter() - t0
    npz = Path(path).with_suffix(".units.npz")
    np.savez(npz, arm=np.where(arm == control, "control", "treatment"), value=lin)
    print(json.dumps({
        "rows": table.num_rows, "lists": len(lists.arm), "units": len(lists.units),
        "wall": statistics.median(walls), "cpu": statistics.median(cpus), "walls": walls,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "estimate": row["estimate"], "ci_low": row["ci_low"], "ci_high": row["ci_high"], "p_value": row["p_value"],
        "unit_seconds": unit_seconds, "unit_estimate": float(ours["estimate"]), "unit_ci_low": float(ours["ci_low"]),
        "unit_ci_high": float(ours["ci_high"]), "unit_p_value": float(ours["p_value"]), "npz": str(npz)}))


def machine() -> str:
    load = os.getloadavg()
    return (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the start")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--users", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks-experiments.md"))
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(a.worker, a.repeat)
        return
    where = machine()
    path = _log(a.users)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    proc = subprocess.run([sys.executable, __file__, "--worker", str(path), "--repeat", str(a.repeat)],
                          capture_output=True, text=True, check=True)
    ours = json.loads(proc.stdout.strip().splitlines()[-1])
    if not CONFIDENCE.exists():
        sys.exit(f"the spotify-confidence environment {CONFIDENCE.parent.parent} is missing: make install-test")
    peer = subprocess.run([str(CONFIDENCE), str(RUNNER)], input=json.dumps({"cases": [
        {"npz": ours["npz"], "control": "control", "treatment": "treatment", "interval": 0.95}]}),
        capture_output=True, text=True, check=True, env=env)
    theirs = json.loads(peer.stdout)
    sc = theirs["cases"][0]
    same = all(abs(ours[f"unit_{k}"] - sc[j]) <= 1e-9 * max(1.0, abs(sc[j])) for k, j in
               (("estimate", "difference"), ("ci_low", "ci_lower"), ("ci_high", "ci_upper")))
    same = same and abs(ours["unit_p_value"] - sc["p_value"]) <= 1e-7 * max(1e-300, sc["p_value"]) + 1e-15
    if not same:
        sys.exit(f"ranklens and spotify-confidence disagree: {ours} / {sc}")
    lines = [
        "# Benchmark: online experiments",
        "",
        "`make bench` (`benchmarks/experiment_bench.py`): a simulated A/B log (`ranklens.online.simulate`, seed 1: "
        f"{ours['rows']:,} rows, {ours['lists']:,} served lists, {ours['units']:,} users), analysed by "
        "`ranklens.online.ab_test(events, ['ndcg@10', 'clicks@10'])` in a fresh process (the table in memory; "
        "every list's NDCG@10 by the core, clicks@10, unit sums, the delta method, z tests, the SRM test), median "
        f"of {a.repeat} runs; then the unit stage alone beside spotify-confidence {theirs['version']}.",
        "",
        f"Machine: {where}. The machine is shared: wall times grow with the load; CPU time is the process's own.",
        "",
        "| step | ranklens | spotify-confidence | ratio |",
        "|---|---|---|---|",
        f"| `ab_test` on {ours['rows'] / 1e6:.1f}M rows / {ours['units'] / 1e6:.1f}M units: wall | "
        f"{ours['wall']:.2f} s | - | - |",
        f"| `ab_test`: CPU (user + system) | {ours['cpu']:.2f} s | - | - |",
        f"| `ab_test`: peak resident memory of the process | {ours['peak_mb']:.0f} MB | - | - |",
        f"| z test on the {ours['units']:,} units' linearised clicks@10 (group-by into sufficient statistics + "
        f"test) | {ours['unit_seconds'] * 1000:.1f} ms | {sc['seconds'] * 1000:.1f} ms | "
        f"{sc['seconds'] / max(ours['unit_seconds'], 1e-9):.1f}x |",
        "",
        "Same numbers (to 1e-9): difference "
        f"{ours['unit_estimate']:.9f}, 95% interval [{ours['unit_ci_low']:.9f}, {ours['unit_ci_high']:.9f}], "
        f"p-value {ours['unit_p_value']:.6g} (spotify-confidence: {sc['difference']:.9f}, "
        f"[{sc['ci_lower']:.9f}, {sc['ci_upper']:.9f}], {sc['p_value']:.6g}); they equal `ab_test`'s clicks@10 "
        f"row ({ours['estimate']:.9f}, [{ours['ci_low']:.9f}, {ours['ci_high']:.9f}]).",
        "",
        f"Runs of `ab_test` (wall, s): {', '.join(f'{w:.2f}' for w in ours['walls'])}.",
        "",
    ]
    Path(a.out).write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
