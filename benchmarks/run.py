"""ranklens against its peers, side by side, in one run: ``make bench`` (or ``python benchmarks/run.py``).

Generates the data deterministically, runs every library in its own process
on the same long table, checks that the values agree (each peer under its own
convention, which on this data gives the same NDCG@10), and writes
``docs/benchmarks.md`` (table of median times, ratios to ranklens, peak memory
measured from outside the process, machine, versions, command) and
``docs/benchmarks-scaling.png`` (time against rows for each library).

``--large`` adds 1 million queries (100 million rows) for ranklens.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import gen  # noqa: E402

PEERS = ["pytrec_eval", "ranx", "ir_measures", "torchmetrics", "sklearn"]
TOL = {"torchmetrics": 1e-6}

#: each peer's input: its fastest documented path from the long table (workers.py builds it in the timed part)
PEER_INPUT = {
    "pytrec_eval": "dicts of dicts",
    "ranx": "Qrels/Run.from_dict",
    "ir_measures": "dicts of dicts",
    "torchmetrics": "tensors + int indexes",
    "sklearn": "dense matrices",
}
INPUT_PATHS = (
    "Each peer is fed through its fastest documented input path, built from the same long table inside the timed "
    "part (`benchmarks/workers.py`). pytrec_eval: `RelevanceEvaluator(qrels, measures).evaluate(run)` on dicts of "
    "dicts `{query: {item: label}}` / `{query: {item: score}}` (its only input), built by slicing the columns at "
    "query boundaries found from integer query codes (`pandas.factorize`, a hash: no sort of the string ids). "
    "ranx: `Qrels.from_dict` / `Run.from_dict` on the same dicts, then `evaluate(..., make_comparable=True)`; on "
    "1M rows this was faster than `Qrels.from_df` / `Run.from_df` (a pandas group-by inside), dict building "
    "included. ir_measures: `calc_aggregate` on the same dicts (documented beside DataFrames and namedtuples; "
    "its pytrec_eval provider takes dicts as they are, while a DataFrame is first turned into namedtuples row by "
    "row: about 6 times slower on 1M rows). torchmetrics: `RetrievalNormalizedDCG` on flat tensors with an "
    "integer query index per row (its documented input), the index from `pandas.factorize`. scikit-learn: "
    "`ndcg_score` on dense (queries x items) matrices (its documented input), rows put in query order by a "
    "stable argsort of the integer codes."
)


# Peak memory is read from ``wait4`` in a small launcher process, not in this one: Linux carries the
# parent's peak resident set into a child it forks (the child's ru_maxrss starts at the parent's
# high-water mark, recorded at exec), so measuring from this process, which builds data sets, would
# report its own peak for every command. The launcher adds a floor of its own size (about 10 MB).
_LAUNCHER = (
    "import os, sys, time\n"
    "t = time.perf_counter()\n"
    "pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)\n"
    "_, status, usage = os.wait4(pid, 0)\n"
    "wall = time.perf_counter() - t\n"
    "open(sys.argv[1], 'w').write(f'{wall} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}')\n"
    "sys.exit(os.waitstatus_to_exitcode(status) & 255)\n"
)


def _measure(cmd: list[str]) -> tuple[float, float, str, str]:
    """Run ``cmd``; return its wall time, peak resident set (MB, from ``wait4`` outside it), stdout
    and stderr. Raises RuntimeError when it fails."""
    m = measure_process(cmd)
    return m["wall"], m["peak"], m["out"], m["err"]


def measure_process(cmd: list[str]) -> dict:
    """Run ``cmd`` as a whole process: ``wall`` seconds, ``cpu`` seconds (user + system of the process and its
    threads, from ``wait4`` in the launcher: on a shared machine the CPU time is what waiting for a core does not
    lengthen), ``peak`` resident set (MB), ``out`` and ``err``. Raises RuntimeError when it fails."""
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r", suffix=".rusage") as res:
        proc = subprocess.run([sys.executable, "-S", "-c", _LAUNCHER, res.name, *cmd], stdout=out, stderr=err,
                              check=False)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd[:3])} failed:\n{stderr[-2000:]}")
        wall, maxrss_kb, cpu = res.read().split()
    return {"wall": float(wall), "peak": float(maxrss_kb) / 1024, "cpu": float(cpu), "out": stdout, "err": stderr}


@functools.cache
def input_arrays_mb(data: Path) -> float:
    """The table's size as Arrow arrays in memory (MB), measured in a process of its own."""
    out = subprocess.run([sys.executable, str(HERE / "workers.py"), "size", str(data)], capture_output=True,
                         text=True, check=True).stdout
    return float(json.loads(out.strip().splitlines()[-1])["input_arrays_mb"])


def run_worker(lib: str, data: Path, repeat: int, metrics: str = "ndcg@10") -> dict:
    cmd = [sys.executable, str(HERE / "workers.py"), lib, str(data), "--repeat", str(repeat), "--metrics", metrics,
           "--warmup", str(dataset(1_000, 100, ids="int" if "_int" in data.name else "str"))]
    try:
        wall, peak_mb, out, _ = _measure(cmd)
    except RuntimeError as exc:
        raise RuntimeError(f"{lib} on {data.name}: {exc}") from None
    res = json.loads(out.strip().splitlines()[-1])
    res["input_arrays_mb"] = input_arrays_mb(data)
    res["peak_rss_mb"] = peak_mb  # measured from outside the process (wait4 in the launcher)
    res["process_wall_s"] = wall
    res["median_s"] = statistics.median(res["times"])
    return res


def dataset(n_q: int, n_i: int | tuple[int, int], ids: str = "str") -> Path:
    d = Path(os.environ.get("RANKLENS_BENCH_DATA", HERE / ".data"))
    d.mkdir(parents=True, exist_ok=True)
    tag = f"{n_i[0]}-{n_i[1]}" if isinstance(n_i, tuple) else str(n_i)
    p = d / f"q{n_q}_i{tag}_{ids}.parquet"
    if not p.exists():
        gen.write_parquet(gen.make(n_q, n_i, ids=ids), p)
    return p


def side_by_side(title: str, data: Path, libs: list[str]) -> list[dict]:
    """Run libraries on one data set; the first is the reference value."""
    print(f"{title}: {data.name}", flush=True)
    out = []
    for lib in libs:
        try:
            r = run_worker(lib, data, 3 if lib.startswith("ranklens") else 1)
        except RuntimeError as exc:
            print(f"  {lib} FAILED: {exc}", flush=True)
            continue
        out.append(r)
        print(f"  {lib:<18} {r['median_s']:8.3f} s   peak {r['peak_rss_mb']:7.0f} MB   value {r['value']:.12f}",
              flush=True)
    for r in out:
        r["agrees"] = abs(r["value"] - out[0]["value"]) <= TOL.get(r["lib"], 1e-9)
    return out


_FILE_SCRIPTS = {
    "pytrec_eval (parse_qrel, parse_run, evaluate)": (
        "import sys, numpy as np, pytrec_eval\n"
        "q = pytrec_eval.parse_qrel(open(sys.argv[1])); r = pytrec_eval.parse_run(open(sys.argv[2]))\n"
        "res = pytrec_eval.RelevanceEvaluator(q, {'ndcg_cut_10'}).evaluate(r)\n"
        "print(np.mean([v['ndcg_cut_10'] for v in res.values()]))\n"
    ),
    "ranx (Qrels.from_file, Run.from_file, evaluate)": (
        "import sys, ranx\n"
        "q = ranx.Qrels.from_file(sys.argv[1], kind='trec'); r = ranx.Run.from_file(sys.argv[2], kind='trec')\n"
        "print(ranx.evaluate(q, r, 'ndcg@10', make_comparable=True))\n"
    ),
}


def _wall(cmd: list[str]) -> tuple[float, float, str]:
    """Wall time, peak resident set (MB, from ``wait4``) and last line of output of one command."""
    wall, peak_mb, out, _ = _measure(cmd)
    return wall, peak_mb, (out.strip().splitlines() or [""])[-1]


TREC_EVAL_REF = "v10.0"


def trec_eval_program() -> tuple[str | None, str]:
    """The trec_eval C program, built from source outside the repository; (path, how) or (None, why not).
    ``how`` names no local path (it goes into docs/benchmarks.md).

    ``TREC_EVAL_BIN`` names a built program to use as is (the test suite reads the same variable). Otherwise
    the sources are cloned at tag ``TREC_EVAL_REF`` from ``TREC_EVAL_SRC`` (a git URL or a local clone;
    default GitHub) into ``$XDG_CACHE_HOME/ranklens-bench`` (default ``~/.cache``) and built there with ``make``.
    """
    import shutil

    given = os.environ.get("TREC_EVAL_BIN")
    if given:
        if os.access(given, os.X_OK):
            return given, "the program `TREC_EVAL_BIN` names (built from https://github.com/usnistgov/trec_eval)"
        return None, "TREC_EVAL_BIN does not name a program"
    src = os.environ.get("TREC_EVAL_SRC", "https://github.com/usnistgov/trec_eval.git")
    shown = src if "://" in src else "a local clone of https://github.com/usnistgov/trec_eval"
    cache_home = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    cache = cache_home / "ranklens-bench" / f"trec_eval-{TREC_EVAL_REF}"
    exe = cache / "trec_eval"
    how = f"built from {TREC_EVAL_REF} of {shown} with `make`, outside this repository"
    if exe.exists():
        return str(exe), how
    if not (shutil.which("git") and shutil.which("make") and (shutil.which("cc") or shutil.which("gcc"))):
        return None, "git, make or a C compiler is missing"
    shutil.rmtree(cache, ignore_errors=True)
    cache.parent.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", TREC_EVAL_REF, src, str(cache)],
                       check=True, capture_output=True, text=True, timeout=300)
        subprocess.run(["make", "-s"], cwd=cache, check=True, capture_output=True, text=True, timeout=300)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(cache, ignore_errors=True)
        detail = (getattr(exc, "stderr", "") or str(exc)).strip().splitlines()
        return None, f"could not clone and build {TREC_EVAL_REF} from {shown} ({detail[-1] if detail else exc})"
    return str(exe), how


def files_benchmark(n_q: int, repeat: int = 3) -> dict:
    """ranklens eval on TREC files and on Parquet against the trec_eval C program and pytrec_eval's and
    ranx's own file readers."""
    d = Path(os.environ.get("RANKLENS_BENCH_DATA", HERE / ".data"))
    qrels, run = d / f"q{n_q}_i100.qrels", d / f"q{n_q}_i100.run"
    if not run.exists():
        gen.write_trec(gen.make(n_q, 100), qrels, run)
    table = dataset(n_q, 100)
    exe = str(Path(sys.executable).with_name("ranklens"))
    cmds = {
        "ranklens eval QRELS RUN (TREC files)": [exe, "eval", str(qrels), str(run), "-m", "ndcg@10", "-c", "trec_eval",
                                                 "-f", "csv"],
        "ranklens eval TABLE.parquet": [exe, "eval", str(table), "-m", "ndcg@10", "-c", "trec_eval", "-f", "csv"],
    }
    te, te_how = trec_eval_program()
    if te:
        cmds["trec_eval -m ndcg_cut.10 QRELS RUN (C program)"] = [te, "-m", "ndcg_cut.10", str(qrels), str(run)]
    for name, script in _FILE_SCRIPTS.items():
        cmds[name] = [sys.executable, "-c", script, str(qrels), str(run)]
    results = []
    print(f"files: {n_q * 100:,} rows; trec_eval: {te_how}", flush=True)
    for name, cmd in cmds.items():
        try:
            _wall(cmd)  # warm-up: OS file cache
            runs = [_wall(cmd)]
            while len(runs) < repeat and runs[0][0] < 5:  # slow peers: one timed run
                runs.append(_wall(cmd))
        except RuntimeError as exc:
            print(f"  {name} FAILED: {exc}", flush=True)
            continue
        value = runs[-1][2].split(",")[-1].split()[-1]
        results.append({"name": name, "median_s": statistics.median(w for w, _, _ in runs),
                        "peak_rss_mb": max(m for _, m, _ in runs), "value": value})
        last = results[-1]
        print(f"  {name:<48} {last['median_s']:8.3f} s  {last['peak_rss_mb']:6.0f} MB  {value}", flush=True)
    ref = float(results[0]["value"]) if results else float("nan")
    for r in results:
        # trec_eval prints 4 decimals; the others print full precision
        r["agrees"] = abs(float(r["value"]) - ref) <= (5e-5 if r["name"].startswith("trec_eval") else 1e-9)
    mb = (qrels.stat().st_size + run.stat().st_size) / 2**20
    return {"rows": n_q * 100, "mb": mb, "repeat": repeat, "results": results, "trec_eval": te, "trec_eval_how": te_how}


def startup_benchmark(repeat: int = 5) -> dict:
    """``ranklens eval`` on TREC DL 2019 (examples/data) in a new environment: the first run after
    ``pip install``, then warm runs. The wheel is built from this checkout (the build compiles the
    kernels ahead of time) and installed with its runtime dependencies only."""
    import shutil
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="ranklens-startup-"))
    try:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(tmp / "wheel")],
                       check=True)
        t_wheel = time.perf_counter() - t0
        subprocess.run([sys.executable, "-m", "venv", str(tmp / "venv")], check=True)
        wheel = next((tmp / "wheel").glob("ranklens-*.whl"))
        t0 = time.perf_counter()
        subprocess.run([str(tmp / "venv" / "bin" / "python"), "-m", "pip", "install", "-q",
                        "--disable-pip-version-check", str(wheel)], check=True)
        t_install = time.perf_counter() - t0
        data = ROOT / "examples" / "data"
        cmd = [str(tmp / "venv" / "bin" / "ranklens"), "eval", str(data / "qrels.dl19-passage.txt"),
               str(data / "run.bm25.dl19.txt"), str(data / "run.splade.dl19.txt"), "-m", "ndcg@10", "-m", "map"]
        first, first_rss, _ = _wall(cmd)
        warm = [_wall(cmd)[:2] for _ in range(repeat)]
        imp = [_wall([str(tmp / "venv" / "bin" / "python"), "-c", "import ranklens"])[0] for _ in range(repeat)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out = {"wheel": wheel.name, "t_wheel": t_wheel, "t_install": t_install, "first": first, "first_rss": first_rss,
           "warm": statistics.median(w for w, _ in warm), "warm_rss": max(r for _, r in warm),
           "import": statistics.median(imp), "repeat": repeat, "cmd": " ".join(["ranklens", *cmd[1:]])}
    print(f"start-up: first run {first:.3f} s, warm {out['warm']:.3f} s, import {out['import']:.3f} s", flush=True)
    return out


def machine() -> str:
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu}), {mem:.0f} GiB RAM, "
            f"Python {platform.python_version()}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--large", action="store_true", help="also 1M queries x 100 (ranklens only)")
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--skip-peers", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks.md"))
    a = ap.parse_args()
    # every timed process caches its bytecode, as an installed package does (a machine that sets
    # PYTHONDONTWRITEBYTECODE would otherwise recompile ranklens' editable sources at every start)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    load_start = os.getloadavg()[0]

    main_data = dataset(a.queries, 100)
    input_mb = main_data.stat().st_size / 2**20
    rows: list[dict] = []
    print(f"data: {a.queries} queries x 100 items ({main_data.name})", flush=True)
    # ranklens[:FORM[:CONVENTION]]: its default convention (ties averaged) on four inputs, then trec_eval's
    ranklens_forms = ["ranklens", "ranklens:pandas", "ranklens:polars", "ranklens:numpy", "ranklens:arrow:trec_eval"]
    for lib in ranklens_forms + ([] if a.skip_peers else PEERS):
        repeat = 5 if lib.startswith("ranklens") else 1
        try:
            r = run_worker(lib, main_data, repeat)
        except RuntimeError as exc:
            print(f"  {lib} FAILED: {exc}", flush=True)
            continue
        rows.append(r)
        print(f"  {lib:<18} {r['median_s']:8.3f} s   peak {r['peak_rss_mb']:7.0f} MB   value {r['value']:.12f}",
              flush=True)
    ref = rows[0]["value"]
    for r in rows:
        tol = TOL.get(r["lib"], 1e-9)
        r["agrees"] = abs(r["value"] - ref) <= tol
        if not r["agrees"]:
            print(f"  !! {r['lib']} disagrees: {r['value']} vs ranklens {ref}", flush=True)

    # the kernel alone against bare parallel kernels, on the same data
    kernel = json.loads(subprocess.run([sys.executable, str(HERE / "kernel_bench.py"), str(main_data)],
                                       capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1])
    print(f"  kernel alone: ranklens {kernel['ranklens']['median_s']:.3f} s, bare top-k "
          f"{kernel['bare_topk']['median_s']:.3f} s, bare sort {kernel['bare_sort']['median_s']:.3f} s", flush=True)

    # suite of measures at once vs one measure
    suite = "ndcg@1,ndcg@5,ndcg@10,map,mrr,recall@100,err@10"
    one = run_worker("ranklens", main_data, 5, "ndcg@10")
    many = run_worker("ranklens", main_data, 5, suite)

    # scaling curve
    sizes = [1_000, 10_000, 100_000]
    curve: dict[str, list[tuple[int, float]]] = {}
    main_rows = {r["lib"]: r for r in rows}
    for n_q in sizes:
        data = dataset(n_q, 100)
        libs = ["ranklens"] + ([] if a.skip_peers or n_q > 100_000 else PEERS)
        for lib in libs:
            try:  # the main data set's size: its runs above
                r = main_rows[lib] if data == main_data and lib in main_rows else run_worker(
                    lib, data, 3 if lib == "ranklens" else 1)
            except RuntimeError as exc:
                print(f"  scaling {lib} FAILED: {exc}", flush=True)
                continue
            curve.setdefault(lib, []).append((n_q * 100, r["median_s"]))
            print(f"  scaling {lib:<14} {n_q * 100:>11,} rows {r['median_s']:8.3f} s", flush=True)

    # variable-length lists (scikit-learn needs equal lengths) and very long lists
    peers_var = [] if a.skip_peers else [p for p in PEERS if p != "sklearn"]
    extra = {
        "variable-length lists (10,000 queries, 1 to 1,000 items each)":
            side_by_side("variable", dataset(10_000, (1, 1000)), ["ranklens"] + peers_var),
        "very long lists (5 queries, 100,000 items each)":
            side_by_side("long", dataset(5, 100_000), ["ranklens"] + peers_var),
    }
    files = files_benchmark(10_000)
    files["startup"] = startup_benchmark()
    if a.large:
        big = dataset(1_000_000, 100, ids="int")
        res = side_by_side("large", big, ["ranklens"])
        extra["1,000,000 queries x 100 (100,000,000 rows, integer ids)"] = res
        if res:
            curve["ranklens"].append((100_000_000, res[0]["median_s"]))
    a.load = (load_start, os.getloadavg()[0])
    write_report(Path(a.out), rows, one, many, suite, curve, a, input_mb, extra, files, kernel)
    # ranklens trec_eval beside the C program, the training-loop metrics beside the boosters' own, the first
    # call in a new process, TREC files beside pytrec_eval, and ranklens.compare at scale, each in its own process
    # (each appends its section)
    subprocess.run([sys.executable, str(HERE / "trec_eval_bench.py"), "--append", a.out], check=True)
    subprocess.run([sys.executable, str(HERE / "training_bench.py"), "--append", a.out], check=True)
    subprocess.run([sys.executable, str(HERE / "first_call_bench.py"), "--append", a.out], check=True)
    # TREC files, whole process, beside pytrec_eval on 1M and 3M lines (appends its section)
    subprocess.run([sys.executable, str(HERE / "trec_files_bench.py"), "--append", a.out], check=True)
    subprocess.run([sys.executable, str(HERE / "compare_bench.py"), "--append", a.out], check=True)
    # interleaving: its outcome on a 10M-row log, and the impressions it needs against A/B (issue #30)
    subprocess.run([sys.executable, str(HERE / "interleaving_bench.py"), "--append", a.out], check=True)
    # counterfactual evaluation on 10M log rows, obp's slate estimators beside ours (appends its section)
    subprocess.run([sys.executable, str(HERE / "counterfactual_bench.py"), "--append", a.out], check=True)
    # ranklens.fuse beside ranx.fuse, 10 runs of 1M lines (each library in its own process; appends its section)
    subprocess.run([sys.executable, str(HERE / "fusion_bench.py"), "--append", a.out], check=True)


def write_report(out: Path, rows: list[dict], one: dict, many: dict, suite: str,
                 curve: dict[str, list[tuple[int, float]]], a: argparse.Namespace, input_mb: float,
                 extra: dict[str, list[dict]], files: dict, kernel: dict) -> None:
    base = rows[0]["median_s"]
    lines = [
        "# Benchmarks",
        "",
        f"Written by `make bench` (`python benchmarks/run.py{' --large' if a.large else ''}`) on "
        f"{time.strftime('%Y-%m-%d')}. Machine: {machine()}. Load average (1 min) at the start of the run "
        f"{a.load[0]:.1f}, at the end {a.load[1]:.1f}: on a shared machine every time is longer, and the ratios "
        "move with the load between two measurements.",
        "",
        f"Mean NDCG@10 over {a.queries:,} queries x 100 candidates ({a.queries * 100:,} rows: string query and "
        "item ids, float scores, graded labels 0-4, about 15% non-zero), from a long table in memory to the "
        "number, conversions included. Each library runs in its own process; time is the median of the timed "
        "repeats inside it, after one untimed warm-up run on 1,000 queries (JIT compilation: numba for "
        "ranx; ranklens runs inputs of every size on kernels compiled ahead of time and never loads numba); "
        "peak memory is the process's maximum resident set measured outside it "
        "(`wait4` in a small launcher: a parent's own peak would be carried into the child), input loading "
        "included. 'Peak - before loading' is what the input as loaded and the evaluation hold together (the "
        "resident set after imports and the warm-up run subtracted; after loading, every process hands the "
        "pages Parquet decoding left in Arrow's pool back to the system); 'peak - after loading' is what the "
        "evaluation itself added.",
        "",
        ("ranklens runs its default convention (ties averaged exactly, float64 scores) with trec_eval's two "
         "rules that could change this mean (`empty=0.0`: a query without a relevant item scores 0; "
         "`queries=\"judged\"`), then the `trec_eval` convention itself (ties broken by item id, scores "
         "rounded to float32); the scores here have no ties, so all give one value."),
        "",
        INPUT_PATHS,
        "",
        ("| library | input | median time (s) | x ranklens | peak RSS (MB) | peak - before loading (MB) "
         "| peak - after loading (MB) | value | agrees |"),
        "|---|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in rows:
        lib, _, form = r["lib"].partition(":")
        form, _, conv = form.partition(":")
        name = " ".join(f"{k} {v}" for k, v in r["versions"].items()) + (f" (convention {conv})" if conv else "")
        form = form or ("arrow" if lib == "ranklens" else PEER_INPUT.get(lib, "?"))
        lines.append(
            f"| {name} | {form} | {r['median_s']:.3f} | "
            f"{r['median_s'] / base:.1f} | {r['peak_rss_mb']:.0f} | "
            f"{r['peak_rss_mb'] - r['rss_before_load_kb'] / 1024:.0f} | "
            f"{r['peak_rss_mb'] - r['rss_after_load_kb'] / 1024:.0f} | "
            f"{r['value']:.12f} | {'yes' if r['agrees'] else 'NO'} |"
        )
    in_mb = rows[0].get("input_arrays_mb", input_mb)
    ours = [r for r in rows if r["lib"].startswith("ranklens")]
    added = max(r["peak_rss_mb"] - r["rss_after_load_kb"] / 1024 for r in ours)

    def held(lib: str) -> float:
        r = next(r for r in ours if r["lib"] == lib)
        return (r["peak_rss_mb"] - r["rss_before_load_kb"] / 1024) / in_mb

    lines += ["", (f"Input arrays: {in_mb:.0f} MB (the Arrow table; pandas, polars and numpy hold the same "
                   f"columns in their own forms). In ranklens the evaluation adds at most {added / in_mb:.2f} "
                   "times that (the largest of its rows). From the Arrow table, the input as loaded and the "
                   f"evaluation together hold {held('ranklens'):.2f} times that under the default convention, "
                   f"{held('ranklens:arrow:trec_eval'):.2f} times under the trec_eval convention (its tie rule "
                   "compares item ids: the bytes of the items of queries whose scores tie are copied; its scores "
                   "are rounded to float32 by the kernel as it reads them from the table's chunks, not copied).")]
    best_bare = min(kernel["bare_topk"]["median_s"], kernel["bare_sort"]["median_s"])
    agree = all(abs(kernel[k]["value"] - kernel["ranklens"]["value"]) <= 1e-9 for k in ("bare_topk", "bare_sort"))
    lines += [
        "",
        "## The kernel alone",
        "",
        (f"The same {kernel['rows']:,} rows as flat arrays, median of 9 calls taken in turns after a first one "
         "(`benchmarks/kernel_bench.py`). The bare kernels are straightforward parallel numba kernels "
         "over query offsets, scores and labels, with no tie handling, conventions or checks, on numba's JIT "
         "(compiled for this machine's CPU): one sorts each list (argsort), the other keeps the 10 best scores and "
         "10 largest labels by insertion. ranklens' kernel is `run_plan` on a problem built beforehand (one "
         "`evaluate_queries` call: ties averaged exactly, the default convention) as ranklens runs it when "
         "installed: compiled ahead of time for the baseline x86-64 instruction set, so that one wheel runs on "
         "every x86-64 machine, on all cores through ranklens' thread pool."),
        "",
        "| kernel | median time (s) | x best bare kernel | value |",
        "|---|---:|---:|---|",
    ]
    for name, label in (("bare_topk", "bare, top-k by insertion"), ("bare_sort", "bare, argsort per query"),
                        ("ranklens", "ranklens evaluate_queries")):
        lines.append(f"| {label} | {kernel[name]['median_s']:.3f} | {kernel[name]['median_s'] / best_bare:.2f} | "
                     f"{kernel[name]['value']:.12f} |")
    lines += ["", f"Values agree: {'yes' if agree else 'NO'}."]
    lines += [
        "",
        f"A suite at once ({suite.replace(',', ', ')}): {many['median_s']:.3f} s against {one['median_s']:.3f} s for "
        f"NDCG@10 alone (x{many['median_s'] / one['median_s']:.2f}).",
        "",
        "## Scaling (time against rows)",
        "",
        "| rows | " + " | ".join(curve) + " |",
        "|---:|" + "---:|" * len(curve),
    ]
    all_rows = sorted({n for pts in curve.values() for n, _ in pts})
    for n in all_rows:
        cells = []
        for lib in curve:
            t = dict(curve[lib]).get(n)
            cells.append("" if t is None else f"{t:.3f}")
        lines.append(f"| {n:,} | " + " | ".join(cells) + " |")
    for title, res in extra.items():
        lines += ["", f"## {title[0].upper()}{title[1:]}", "",
                  "| library | median time (s) | x ranklens | peak RSS (MB) | value | agrees |",
                  "|---|---:|---:|---:|---|---|"]
        for r in res:
            lines.append(f"| {r['lib']} | {r['median_s']:.3f} | {r['median_s'] / res[0]['median_s']:.1f} | "
                         f"{r['peak_rss_mb']:.0f} | {r['value']:.12f} | {'yes' if r['agrees'] else 'NO'} |")
    lines += [
        "",
        f"## From files: {files['rows']:,} rows of TREC qrels + run ({files['mb']:.0f} MB)",
        "",
        "Whole command, process start to exit (interpreter start-up, imports, reading, evaluation), median of "
        f"{files['repeat']} runs after one untimed run (one timed run for commands over 5 s), peak resident set "
        "measured from outside (`wait4`), mean NDCG@10 under trec_eval's rules.",
        "",
        "| command | median wall time (s) | x ranklens (TREC files) | peak RSS (MB) | value | agrees |",
        "|---|---:|---:|---:|---|---|",
    ]
    ref = files["results"][0]["median_s"]
    for r in files["results"]:
        lines.append(f"| {r['name']} | {r['median_s']:.3f} | {r['median_s'] / ref:.1f} | {r['peak_rss_mb']:.0f} | "
                     f"{r['value']} | {'yes' if r['agrees'] else 'NO'} |")
    if files["trec_eval"]:
        lines += ["", f"trec_eval: {files['trec_eval_how']}. It prints 4 decimals."]
    else:
        lines += ["", f"The trec_eval C program is not in this table: {files['trec_eval_how']}. Set `TREC_EVAL_SRC` "
                  "to a local clone of https://github.com/usnistgov/trec_eval, or `TREC_EVAL_BIN` to a built program."]
    st = files["startup"]
    root = str(ROOT) + "/"
    lines += [
        "",
        "## Start-up: `ranklens eval` on TREC DL 2019 (43 queries, two runs, ndcg@10 and map)",
        "",
        f"A new virtual environment, `pip install {st['wheel']}` (built from this checkout in {st['t_wheel']:.0f} s; "
        f"installed with its runtime dependencies in {st['t_install']:.0f} s), then the command "
        f"`{st['cmd'].replace(root, '')}` timed from outside the process (wall time, peak resident set from `wait4`). "
        "Small work runs on the kernels compiled ahead of time when the wheel was built, so the first run compiles "
        "nothing and neither run loads numba.",
        "",
        "| run | wall time (s) | peak RSS (MB) |",
        "|---|---:|---:|",
        f"| first run after install | {st['first']:.3f} | {st['first_rss']:.0f} |",
        f"| warm (median of {st['repeat']}) | {st['warm']:.3f} | {st['warm_rss']:.0f} |",
        f"| `python -c 'import ranklens'` (median of {st['repeat']}) | {st['import']:.3f} | |",
    ]
    png = out.with_name("benchmarks-scaling.png")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4))
        for lib, pts in curve.items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=lib)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("rows (queries x 100)")
        ax.set_ylabel("seconds (median)")
        ax.set_title("Mean NDCG@10, end to end")
        ax.legend()
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        fig.savefig(png, dpi=110)
        lines += ["", f"![time against rows]({png.name})"]
    except ImportError:
        lines += ["", "(matplotlib is not installed: no plot)"]
    arrays_mb = rows[0].get("input_arrays_mb", float("nan"))
    lines += ["", f"Input: {input_mb:.0f} MB of Parquet on disk, {arrays_mb:.0f} MB as "
              "Arrow arrays in memory. Command: `make bench` (`BENCH_ARGS=--large make bench` adds 1M queries)."]
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
