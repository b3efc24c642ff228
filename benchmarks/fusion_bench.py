"""``ranklens.fuse`` beside ``ranx.fuse``: 10 runs of 1 million lines each, fused.

Data (deterministic): 10,000 queries; each run ranks 100 documents per query, drawn from a pool of 200 per query
(so the runs overlap by about half and every run misses documents the others rank), scores rounded to 4
decimals (ties), each query's rows in descending score (as a run file lists them). Each library runs in its own
process (peak memory read from outside by ``wait4``):

* fusion alone: ranx's ``fuse(runs, norm, method)`` on ``ranx.Run`` objects already built (``Run.from_dict``, the
  fastest input path of the evaluation benchmark; building them is timed apart), ranklens' ``fuse`` on
  ``Rankings`` over Arrow string ids (what its readers give). Both warmed first on small runs of the same kind
  (10 runs built the same way, the same method and parameters: numba compiles ranx's functions for their types,
  so a warm-up on other types leaves compilation inside the timed call), then timed ``--repeats`` times in the
  same process: the first call (fresh memory) and the median of the calls after it, wall and CPU seconds;
* from files to a written run: ranx ``Run.from_file`` x 10, ``fuse``, ``Run.save`` (TREC) against
  ``ranklens fuse r0.trec ... -o fused.trec``.

Both sides' fused scores are checked to agree (the sum over documents and the documents per query).
``--append FILE`` adds the section to the benchmark report; ``--queries N`` scales the data.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
#: (method, norm, params): a score method, a rank method, a weighted one
CASES = [("rrf", None, {}), ("sum", "min-max", {}), ("wsum", "zmuv", {"weights": [1.0 + 0.1 * r for r in range(10)]})]


def data(n_q: int, n_runs: int = 10, per_run: int = 100, pool: int = 200, seed: int = 3):
    """Per run: (query ids, item ids, scores) as numpy arrays (object strings for ids), each query's rows in
    descending score."""
    rng = np.random.default_rng(seed)
    qnames = np.array([f"q{q}" for q in range(n_q)], dtype=object)
    out = []
    for _ in range(n_runs):
        picks = np.argsort(rng.random((n_q, pool)), axis=1)[:, :per_run]  # per_run of the pool, per query
        items = (np.arange(n_q)[:, None] * pool + picks).ravel()
        qid = np.repeat(qnames, per_run)
        item = np.array([f"d{x}" for x in items.tolist()], dtype=object)
        score = np.round(rng.random(n_q * per_run), 4)
        order = np.lexsort((-score, np.repeat(np.arange(n_q), per_run)))  # by query, then descending score
        out.append((qid[order], item[order], score[order]))
    return out


def _write_trec(runs, folder: Path) -> list[str]:
    paths = []
    for r, (q, d, s) in enumerate(runs):
        p = folder / f"r{r}.trec"
        rank = np.tile(np.arange(1, 101), len(q) // 100)  # rows already in ranked order per query
        with open(p, "w") as f:
            f.write("".join(f"{a} Q0 {b} {k} {c!r} r{r}\n" for a, b, k, c in zip(q.tolist(), d.tolist(),
                                                                                 rank.tolist(), s.tolist())))
        paths.append(str(p))
    return paths


def _summary(pairs) -> dict:
    """Sum of fused scores and number of fused documents (the agreement check)."""
    total, n = 0.0, 0
    for _, docs in pairs:
        total += float(sum(docs.values()))
        n += len(docs)
    return {"sum": total, "docs": n}


def _timed(fn, repeats: int) -> dict:
    """``fn()`` ``repeats`` times: the first call and the median of the others, wall and CPU seconds; the last
    result."""
    walls, cpus, out = [], [], None
    for _ in range(max(repeats, 1)):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    later = slice(1, None) if len(walls) > 1 else slice(0, None)
    return {"fuse": walls[0], "cpu": cpus[0], "fuse_next": float(np.median(walls[later])),
            "cpu_next": float(np.median(cpus[later])), "load": os.getloadavg()[0], "out": out}


def _ranx_runs(runs_np) -> list:
    import ranx

    runs = []
    for q, d, s in runs_np:
        dic: dict = {}
        for a, b, c in zip(q.tolist(), d.tolist(), s.tolist()):
            dic.setdefault(a, {})[b] = c
        runs.append(ranx.Run.from_dict(dic))
    return runs


def worker_ranx(n_q: int, method: str, norm: str | None, params: dict, files: list[str] | None,
                repeats: int = 3) -> dict:
    import ranx

    if files:
        t0 = time.perf_counter()
        runs = [ranx.Run.from_file(p, kind="trec") for p in files]
        fused = ranx.fuse(runs, norm=norm, method=method, params=params)
        out = os.path.join(os.path.dirname(files[0]), "ranx-fused.trec")
        fused.save(out, kind="trec")
        return {"total": time.perf_counter() - t0}
    runs_np = data(n_q)
    t0 = time.perf_counter()
    runs = _ranx_runs(runs_np)
    t_build = time.perf_counter() - t0
    ranx.fuse(_ranx_runs(data(5)), norm=norm, method=method, params=params)  # numba compiles for these types
    res = _timed(lambda: ranx.fuse(runs, norm=norm, method=method, params=params), repeats)
    fused = res.pop("out")
    return {"build": t_build, **res, **_summary(fused.run.items())}


def worker_ranklens(n_q: int, method: str, norm: str | None, params: dict, files: list[str] | None,
                    repeats: int = 3) -> dict:
    import pyarrow as pa

    import ranklens

    if files:
        t0 = time.perf_counter()
        out = os.path.join(os.path.dirname(files[0]), "ranklens-fused.trec")
        cmd = [os.path.join(os.path.dirname(sys.executable), "ranklens"), "fuse", *files, "--method", method,
               "--norm", norm or "none", "-o", out]
        if "weights" in params:
            cmd += ["-p", "weights=" + ",".join(map(str, params["weights"]))]
        subprocess.run(cmd, check=True)
        return {"total": time.perf_counter() - t0}

    def rankings(n: int) -> list:
        return [ranklens.Rankings(pa.array(q, pa.large_string()), pa.array(d, pa.large_string()), score=s)
                for q, d, s in data(n)]

    runs = rankings(n_q)
    ranklens.fuse(rankings(5), method, norm, **params)
    res = _timed(lambda: ranklens.fuse(runs, method, norm, **params), repeats)
    fused = res.pop("out")
    return {**res, "sum": float(fused.score.sum()), "docs": len(fused)}


def _run_worker(lib: str, n_q: int, case: int, files: list[str] | None, repeats: int = 3) -> dict:
    """One worker process; its result and its peak resident set (MB) read by wait4."""
    with tempfile.NamedTemporaryFile("r", suffix=".json") as res:
        cmd = [sys.executable, __file__, "--worker", lib, "--queries", str(n_q), "--case", str(case),
               "--result", res.name, "--repeats", str(repeats)] + (["--files", *files] if files else [])
        proc = subprocess.Popen(cmd)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            raise RuntimeError(f"{lib} worker failed ({proc.returncode})")
        out = json.loads(Path(res.name).read_text())
    out["peak_mb"] = usage.ru_maxrss / 1024
    return out


def measure(n_q: int, with_files: bool = True, repeats: int = 3) -> dict:
    rows = []
    for i, (method, norm, _) in enumerate(CASES):
        r = _run_worker("ranx", n_q, i, None, repeats)
        o = _run_worker("ranklens", n_q, i, None, repeats)
        if o["docs"] != r["docs"] or abs(o["sum"] - r["sum"]) > 1e-9 * max(1.0, abs(r["sum"])) * 10:
            raise RuntimeError(f"{method}/{norm}: fused scores differ: ranklens {o}, ranx {r}")
        rows.append({"method": method, "norm": norm or "none", "ranx": r, "ranklens": o})
    files_row = None
    if with_files:
        with tempfile.TemporaryDirectory() as tmp:
            paths = _write_trec(data(n_q), Path(tmp))
            r = _run_worker("ranx", n_q, 0, paths)
            o = _run_worker("ranklens", n_q, 0, paths)
            files_row = {"ranx": r, "ranklens": o}
    return {"n_q": n_q, "rows": rows, "files": files_row, "repeats": repeats}


def section(res: dict) -> list[str]:
    lines_per_run = res["n_q"] * 100
    lines = [
        "",
        f"## Rank fusion: 10 runs x {lines_per_run:,} lines",
        "",
        f"`ranklens.fuse` beside `ranx.fuse` (ranx 0.3.21), {res['n_q']:,} queries, each run ranking 100 of a "
        "pool of 200 documents per query (about half shared between runs), scores with ties; each library in its "
        "own process, kernels compiled beforehand; ranx on `ranx.Run` objects built by `Run.from_dict` (timed "
        "apart), ranklens on `Rankings` over Arrow string ids. The same fused scores on both sides (checked). "
        f"Load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.",
        "",
        "Times are wall-clock seconds and, in brackets, CPU seconds of all the process's threads (on a shared "
        "machine whose load takes cores away from both sides, CPU time is the steadier measure of the work); "
        f"'first': the first call after the warm-up, 'next': the median of the {res['repeats'] - 1} calls after it; "
        "load: the 1-minute load average when the library's calls ended.",
        "",
        "| method | norm | ranx fuse first (s) | ranklens fuse first (s) | ratio first, wall / CPU | ranx next (s) | "
        "ranklens next (s) | ratio next, wall / CPU | load ranx / ranklens | ranx peak MB | ranklens peak MB | "
        "ranx Run building (s) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in res["rows"]:
        x, o = r["ranx"], r["ranklens"]
        lines.append(f"| {r['method']} | {r['norm']} | {x['fuse']:.2f} ({x['cpu']:.2f}) | {o['fuse']:.2f} "
                     f"({o['cpu']:.2f}) | {x['fuse'] / o['fuse']:.1f}x / {x['cpu'] / o['cpu']:.1f}x | "
                     f"{x['fuse_next']:.2f} ({x['cpu_next']:.2f}) | {o['fuse_next']:.2f} ({o['cpu_next']:.2f}) | "
                     f"{x['fuse_next'] / o['fuse_next']:.1f}x / {x['cpu_next'] / o['cpu_next']:.1f}x | "
                     f"{x['load']:.1f} / {o['load']:.1f} | {x['peak_mb']:.0f} | {o['peak_mb']:.0f} | "
                     f"{x['build']:.1f} |")
    f = res["files"]
    if f:
        lines += [
            "",
            "From the 10 TREC files to a written TREC run (rrf): ranx `Run.from_file` x 10 + `fuse` + `Run.save` "
            f"{f['ranx']['total']:.1f} s ({f['ranx']['peak_mb']:.0f} MB); `ranklens fuse ... -o fused.trec` "
            f"{f['ranklens']['total']:.1f} s ({f['ranklens']['peak_mb']:.0f} MB): "
            f"{f['ranx']['total'] / f['ranklens']['total']:.1f}x.",
        ]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--append", default=None)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--no-files", action="store_true")
    ap.add_argument("--worker", default=None)
    ap.add_argument("--case", type=int, default=0)
    ap.add_argument("--result", default=None)
    ap.add_argument("--files", nargs="*", default=None)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    if a.worker:
        method, norm, params = CASES[a.case]
        fn = worker_ranx if a.worker == "ranx" else worker_ranklens
        Path(a.result).write_text(json.dumps(fn(a.queries, method, norm, params, a.files, a.repeats)))
        return
    lines = section(measure(a.queries, not a.no_files, a.repeats))
    print("\n".join(lines))
    if a.append:
        with open(a.append, "a") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
