"""Monitoring benchmark (issue 5): ~10 million simulated events, the DuckDB store beside pandas.

    python benchmarks/monitor_bench.py [--groups-per-day 16000] [--days 30] [--out docs/benchmarks-monitor.md]

1. The events are simulated once (``ranklens.monitor.simulate``: 30 days, one Parquet file per day, late
   labels, the planted decay) and cached under ``benchmarks/.data/``.
2. Every measured step then runs in a fresh Python process, which reports its own time and peak resident
   memory (``ru_maxrss``): the store's ingest of all files; the 30-day daily NDCG@10 report without and
   with the bootstrap interval; the same report restricted to one day (memory follows the window, not
   the store); and a pandas baseline written the obvious way (read the files, join the late labels to
   the lists, attribute gains with the store's default rule, ``groupby(list).apply(ndcg@10)``, then
   ``groupby(day).mean()``).
3. The baseline's numbers must equal the store's to 1e-9 (and its counts exactly); the table goes to
   ``docs/benchmarks-monitor.md``.

The store's default configuration is used (``config={}``): binary attribution on the positive class
``click``, convention ``ranklens`` (linear gain, log2 discount), lists without any gain skipped and
counted as excluded; an explicit ``relevance`` wins over labels (the largest, if several rows give one).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / ".data"
SERIES = ["model", "model_version", "environment"]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # kB on Linux


def cpu_seconds() -> float:
    """User + system time of this process, every thread (DuckDB's, numba's) included: unlike the wall
    time, it hardly grows when other work shares the cores."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


# ---------------------------------------------------------------------------------------------- steps (children)


def step_generate(args: argparse.Namespace) -> dict[str, Any]:
    from ranklens.monitor.simulate import simulate

    out = Path(args.data) / "events"
    if out.exists():
        shutil.rmtree(out)
    t0 = time.perf_counter()
    paths = simulate(out, days=args.days, groups_per_day=args.groups_per_day, seed=0)
    seconds = time.perf_counter() - t0
    import pyarrow.parquet as pq

    n = rank = 0
    for p in paths:
        f = pq.ParquetFile(p)
        n += f.metadata.num_rows
        rank += f.metadata.num_rows - f.read(columns=["rank"]).column(0).null_count
    return {"seconds": seconds, "paths": [str(p) for p in paths], "events": n, "ranking_rows": rank,
            "label_rows": n - rank, "bytes": sum(p.stat().st_size for p in paths)}


def step_ingest(args: argparse.Namespace) -> dict[str, Any]:
    from ranklens.monitor import Store

    paths = json.loads(Path(args.manifest).read_text())["paths"]
    store = Path(args.store)
    for p in (store, Path(str(store) + ".wal")):
        if p.exists():
            p.unlink()
    st = Store(store, config={})
    spark = {"engine": "spark", "master": args.master} if args.engine == "spark" else {}
    if spark:  # the JVM and the session start before the clock, as a cluster's would be up
        from ranklens.spark import session

        # the driver takes each chunk's rows as one Arrow table (4 million rows): Spark's default 1 GB heap is
        # short of it (java.lang.OutOfMemoryError at 10 million events)
        session(args.master, app_name="ranklens-monitor-ingest", spark_sql_session_timeZone="UTC",
                spark_ui_enabled="false", spark_driver_memory="6g").sparkContext.setLogLevel("OFF")
    t0, c0 = time.perf_counter(), cpu_seconds()
    summary = st.ingest(paths, **spark)
    seconds, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    return {"seconds": seconds, "cpu_seconds": cpu, "rows": summary.rows, "groups": summary.groups,
            "quarantined": summary.quarantined, "store_bytes": store.stat().st_size}


def step_profile(args: argparse.Namespace) -> dict[str, Any]:
    """The ingest again, its writer's connection wrapped: CPU (all threads) and wall of each SQL statement, summed
    over the statements of one text (the chunks, the batches); the rest is Python and the kernels (the refresh)."""
    import contextlib
    import re

    import ranklens.monitor.storage.db as dbm
    from ranklens.monitor import Store

    spent: dict[str, list[float]] = {}

    def timed(what: str, f: Any, *a: Any, **k: Any) -> Any:
        t0, c0 = time.perf_counter(), cpu_seconds()
        try:
            return f(*a, **k)
        finally:
            e = spent.setdefault(re.sub(r"\s+", " ", what).strip()[:90], [0.0, 0.0, 0])
            e[0], e[1], e[2] = e[0] + cpu_seconds() - c0, e[1] + time.perf_counter() - t0, e[2] + 1

    class Rel:  # a relation: its SQL runs when it is fetched
        def __init__(self, rel: Any, q: str) -> None:
            self.rel, self.q = rel, q

        def __getattr__(self, n: str) -> Any:
            f = getattr(self.rel, n)
            return (lambda *a, **k: timed(self.q, f, *a, **k)) if callable(f) else f

    class Con:
        def __init__(self, con: Any) -> None:
            self.con = con

        def __getattr__(self, n: str) -> Any:
            return getattr(self.con, n)

        def execute(self, q: str, *a: Any, **k: Any) -> Any:
            return timed(q, self.con.execute, q, *a, **k)

        def sql(self, q: str, *a: Any, **k: Any) -> Any:
            return Rel(self.con.sql(q, *a, **k), q)

        def cursor(self) -> Any:  # the second connection (chunks made while another is stored; values read ahead)
            return Con(self.con.cursor())

    opened = dbm.Database._open

    @contextlib.contextmanager
    def wrapped(self: Any, con: Any) -> Any:
        with opened(self, con) as c:
            yield Con(c)

    dbm.Database._open = wrapped  # type: ignore[method-assign]
    if args.serial:  # each chunk made before the one before it is stored (no overlap): a statement's CPU is its own
        from ranklens.monitor.storage import stage

        started = stage.Pipeline.start

        def start(self: Any, *a: Any, **k: Any) -> Any:
            db, made = started(self, *a, **k)
            made.result()  # the chunk made in the thread, waited for before the ingest stores the chunk before it
            return db, made

        stage.Pipeline.start = start  # type: ignore[method-assign]
    phases = _time_phases()
    paths = json.loads(Path(args.manifest).read_text())["paths"]
    store = Path(args.store)
    for p in (store, Path(str(store) + ".wal")):
        if p.exists():
            p.unlink()
    t0, c0 = time.perf_counter(), cpu_seconds()
    Store(store, config={}).ingest(paths)
    seconds, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    top = sorted(([k, *v] for k, v in spent.items()), key=lambda r: -r[1])
    return {"seconds": seconds, "cpu_seconds": cpu, "sql_cpu": sum(r[1] for r in top), "statements": top[:20],
            "phases": phases, "serial": bool(args.serial)}


#: The ingest's steps, timed by wrapping the functions that do them: (module, function, step).
PHASES = [
    # a chunk of several files is made on a second connection (storage/stage.py) while the one before it is stored:
    # these two steps overlap the storing step, and the CPU of all threads counts the other connection's work too
    ("ranklens.monitor.storage.stage", "validate", "validation: typed events and quarantine reasons (`_v`)"),
    ("ranklens.monitor.storage.stage", "make_chunk", "the chunk tables: lists, items, label rows, quarantine"),
    ("ranklens.monitor.storage.ingest", "validate", "validation, a chunk of one batch"),
    ("ranklens.monitor.storage.ingest", "make_chunk", "the chunk tables, a chunk of one batch"),
    ("ranklens.monitor.storage.ingest", "store_chunk", "storing: keys, lists, items, feedback, item_labels"),
    ("ranklens.monitor.storage.ingest_call", "remember_maturity", "label maturity"),
    ("ranklens.monitor.storage.ingest_call", "remember_propensity", "propensities (none fitted by default)"),
    ("ranklens.monitor.storage.ingest_call", "refresh_values", "the values refresh (SQL read + kernels + update)"),
]


def _time_phases() -> dict[str, list[float]]:
    """Wrap the functions of :data:`PHASES`: CPU (all threads) and wall of each step, summed over its calls; what
    the ingest spends outside them (reading the Parquet metadata, the file's copy, the checkpoint, the swap) is
    the total less their sum."""
    import importlib

    out: dict[str, list[float]] = {}
    for mod_name, fn, step in PHASES:
        mod = importlib.import_module(mod_name)
        f = getattr(mod, fn)

        def timed(*a: Any, _f: Any = f, _step: str = step, **k: Any) -> Any:
            t0, c0 = time.perf_counter(), cpu_seconds()
            try:
                return _f(*a, **k)
            finally:
                e = out.setdefault(_step, [0.0, 0.0])
                e[0] += cpu_seconds() - c0
                e[1] += time.perf_counter() - t0

        setattr(mod, fn, timed)
    return out


def step_report(args: argparse.Namespace) -> dict[str, Any]:
    from ranklens.monitor import Store

    st = Store(args.store, config={}, read_only=True)
    kw: dict[str, Any] = {"measures": ("ndcg@10",), "window": "day"}
    if args.ci != "none":
        kw["ci"] = args.ci
    else:
        kw["ci"] = None
    if args.start:
        kw["start"], kw["end"] = args.start, args.end
    t0, c0 = time.perf_counter(), cpu_seconds()
    table = st.report(**kw)
    seconds, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    if args.save:
        import pyarrow.parquet as pq

        pq.write_table(table, args.save)
    return {"seconds": seconds, "cpu_seconds": cpu, "rows": table.num_rows}


def ndcg_at_10(g: Any) -> float:
    """NDCG@10 of one served list: linear gains in rank order, log2 discounts, ideal from its own gains."""
    import numpy as np

    gains = g.sort_values("rank")["gain"].to_numpy()
    ideal = np.sort(gains)[::-1][:10]
    disc = 1.0 / np.log2(np.arange(2, ideal.shape[0] + 2))
    idcg = float((ideal * disc).sum())
    if idcg == 0.0:
        return float("nan")  # no gain: skipped, counted as excluded (the store's empty="skip")
    return float((gains[:10] * disc).sum()) / idcg


def step_pandas(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np
    import pandas as pd

    paths = json.loads(Path(args.manifest).read_text())["paths"]
    t0, c0 = time.perf_counter(), cpu_seconds()
    df = pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)
    t_read, c_read = time.perf_counter() - t0, cpu_seconds() - c0
    ranked = df["rank"].notna() | df["score"].notna()
    lists, outcomes = df[ranked], df[~ranked]
    # the union of an item's labels (in-line on training rows, late label rows in production): gain 1 with a click
    both = pd.concat([lists[["group_id", "item_id", "labels"]], outcomes[["group_id", "item_id", "labels"]]])
    labels = both.explode("labels")
    clicked = labels.loc[labels["labels"] == "click", ["group_id", "item_id"]].drop_duplicates()
    rows = lists.merge(clicked.assign(gain=1.0), on=["group_id", "item_id"], how="left")
    rows["gain"] = rows["gain"].fillna(0.0)
    # an explicit relevance wins (the largest of the item's rows)
    rel = pd.concat([lists[["group_id", "item_id", "relevance"]], outcomes[["group_id", "item_id", "relevance"]]])
    rel = rel.dropna().groupby(["group_id", "item_id"], as_index=False)["relevance"].max()
    if len(rel):
        rows = rows.merge(rel.rename(columns={"relevance": "rel_max"}), on=["group_id", "item_id"], how="left")
        rows["gain"] = rows["rel_max"].where(rows["rel_max"].notna(), rows["gain"])
    rows["day"] = rows.groupby(SERIES + ["group_id"])["timestamp"].transform("min").dt.floor("D")
    per_list = rows.groupby(SERIES + ["group_id", "day"]).apply(ndcg_at_10, include_groups=False)
    per_list = per_list.rename("ndcg").reset_index()
    daily = per_list.groupby(["day"] + SERIES).agg(
        value=("ndcg", "mean"), n_groups=("ndcg", "count"), n_lists=("ndcg", "size")).reset_index()
    daily["n_excluded"] = daily["n_lists"] - daily["n_groups"]
    seconds, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    out = daily[["day", *SERIES, "value", "n_groups", "n_excluded"]]
    out.to_parquet(args.save, index=False)
    return {"seconds": seconds, "cpu_seconds": cpu, "read_seconds": t_read, "read_cpu_seconds": c_read,
            "rows": len(out), "lists": len(per_list),
            "numpy": np.__version__, "pandas": pd.__version__}


def step_idle(args: argparse.Namespace) -> dict[str, Any]:
    """The floor: the imports a report needs and an open store, no query."""
    import pyarrow  # noqa: F401

    from ranklens.monitor import Store

    t0 = time.perf_counter()
    st = Store(args.store, config={}, read_only=True)
    info = st.info()
    return {"seconds": time.perf_counter() - t0, "rows": len(info)}


STEPS = {"generate": step_generate, "ingest": step_ingest, "report": step_report, "pandas": step_pandas,
         "idle": step_idle, "profile": step_profile}


# ---------------------------------------------------------------------------------------------- parent


def run_step(name: str, *extra: str) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--step", name, *extra]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=DATA, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"step {name} failed ({proc.returncode})")
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["process_seconds"] = wall
    cpu = f", CPU {res['cpu_seconds']:.2f} s" if "cpu_seconds" in res else ""
    print(f"  {name} {' '.join(extra)}: {res['seconds']:.2f} s{cpu}, peak RSS {res['rss_mb']:.0f} MB,"
          f" load {res['load']:.1f}", flush=True)
    return res


def compare(store_path: Path, pandas_path: Path) -> dict[str, Any]:
    import pyarrow.parquet as pq

    st = pq.read_table(store_path).to_pylist()
    pd_rows = pq.read_table(pandas_path).to_pylist()

    def key(r: dict[str, Any], col: str) -> tuple[Any, ...]:
        return (r[col].date().isoformat(), *(r[c] for c in SERIES))

    a = {key(r, "window"): r for r in st if r["measure"] == "ndcg@10"}
    b = {key(r, "day"): r for r in pd_rows}
    common = sorted(set(a) & set(b))
    diffs = [abs(a[k]["value"] - b[k]["value"]) for k in common if a[k]["value"] is not None]
    counts = all(a[k]["n_groups"] == b[k]["n_groups"] and a[k]["n_excluded"] == b[k]["n_excluded"] for k in common)
    return {"store_rows": len(a), "pandas_rows": len(b), "common": len(common), "max_abs_diff": max(diffs),
            "counts_equal": counts, "same_keys": set(a) == set(b)}


def machine() -> str:
    sys.path.insert(0, str(HERE))
    from run import machine as run_machine  # the description the other benchmark reports use

    return run_machine()


def versions() -> str:
    from importlib.metadata import version

    out = []
    for d in ("ranklens", "duckdb", "pyarrow", "numpy", "pandas"):
        try:
            out.append(f"{d} {version(d)}")
        except Exception:  # a missing distribution is reported, not fatal
            out.append(f"{d} (missing)")
    return ", ".join(out)


def ok(cond: bool) -> str:
    return "yes" if cond else "**no**"


def fmt_s(s: float) -> str:
    return f"{s:.2f} s" if s < 10 else f"{s:.1f} s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--groups-per-day", type=int, default=16_000,
                    help="production lists per day (16000 x 30 days: ~10 million events with the training lists)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks-monitor.md"), help="markdown report")
    ap.add_argument("--regenerate", action="store_true", help="simulate the events again even when cached")
    ap.add_argument("--skip-pandas", action="store_true", help="leave the pandas baseline out")
    ap.add_argument("--data-only", action="store_true", help="simulate (or find) the events and stop")
    # child-process arguments
    ap.add_argument("--step", choices=sorted(STEPS), help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--manifest", help=argparse.SUPPRESS)
    ap.add_argument("--store", help=argparse.SUPPRESS)
    ap.add_argument("--ci", default="none", help=argparse.SUPPRESS)
    ap.add_argument("--start", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--master", default="local[2]", help=argparse.SUPPRESS)
    ap.add_argument("--end", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--save", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--engine", default="local", help=argparse.SUPPRESS)
    ap.add_argument("--spark", default=None, metavar="MASTER",
                    help="also ingest on Spark with this master (e.g. local[2]; needs ranklens[spark])")
    ap.add_argument("--ingest-only", action="store_true", help="the ingest steps only (no reports, no pandas)")
    ap.add_argument("--profile", action="store_true",
                    help="only profile the local ingest: CPU and wall per SQL statement, appended to --out")
    ap.add_argument("--serial", action="store_true",
                    help="with --profile: make each chunk before storing it (no overlap of the two connections, so "
                         "that a statement's CPU is its own; the wall time is then not the ingest's)")
    args = ap.parse_args()

    if args.step:  # a child: one step, one JSON line
        load = os.getloadavg()[0]
        res = STEPS[args.step](args)
        res["load"] = load
        res["rss_mb"] = peak_rss_mb()
        print(json.dumps(res))
        return

    print(f"monitor benchmark: {args.days} days x {args.groups_per_day} lists/day", flush=True)
    data, manifest, gen = dataset(args.days, args.groups_per_day, args.regenerate)
    if args.data_only:
        print(f"  {gen['events']:,} events in {len(gen['paths'])} files in {data}")
        return
    store = data / "ranklens.duckdb"
    files = ["--manifest", str(manifest), "--store", str(store)]
    if args.profile:
        profile_section(Path(args.out), gen, run_step("profile", *files, *(["--serial"] if args.serial else [])))
        print(f"appended the profile to {args.out}")
        return
    # memory against the size of the store: the same report over a store with 1/100 of the events
    small_data, small_manifest, small_gen = dataset(args.days, max(args.groups_per_day // 100, 1), args.regenerate)
    small = ["--manifest", str(small_manifest), "--store", str(small_data / "ranklens.duckdb")]
    small_ingest = run_step("ingest", *small)
    small_rep = run_step("report", *small)
    ingest = run_step("ingest", *files)
    ingest_spark = None
    if args.spark:
        ingest_spark = run_step("ingest", "--manifest", str(manifest), "--store", str(data / "ranklens-spark.duckdb"),
                                "--engine", "spark", "--master", args.spark)
    if args.ingest_only:
        return
    idle = run_step("idle", *files)
    rep = run_step("report", *files, "--save", str(data / "report.parquet"))
    rep_warm = run_step("report", *files)
    rep_ci = run_step("report", *files, "--ci", "bootstrap")
    last_day = [_day(args, args.days - 1), _day(args, args.days)]
    rep_day = run_step("report", *files, "--start", last_day[0], "--end", last_day[1])
    pand = None
    agree = None
    if not args.skip_pandas:
        pand = run_step("pandas", *files, "--save", str(data / "pandas.parquet"))
        agree = compare(data / "report.parquet", data / "pandas.parquet")
        print(f"  agreement: {agree}", flush=True)
    write_report(Path(args.out), args, gen, ingest, rep, rep_warm, rep_ci, rep_day, pand, agree, last_day,
                 ingest_spark)
    memory_section(Path(args.out), gen, ingest, rep, rep_day, idle, small_gen, small_ingest, small_rep)
    print(f"wrote {args.out}")


def dataset(days: int, groups_per_day: int, regenerate: bool) -> tuple[Path, Path, dict[str, Any]]:
    """The simulated events (cached under benchmarks/.data/): directory, manifest, manifest content."""
    data = DATA / f"monitor-{days}d-{groups_per_day}"
    data.mkdir(parents=True, exist_ok=True)
    manifest = data / "manifest.json"
    if regenerate or not manifest.exists():
        gen = run_step("generate", "--data", str(data), "--days", str(days), "--groups-per-day", str(groups_per_day))
        manifest.write_text(json.dumps(gen))
    return data, manifest, json.loads(manifest.read_text())


def memory_section(path: Path, gen: dict[str, Any], ingest: dict[str, Any], rep: dict[str, Any],
                   rep_day: dict[str, Any], idle: dict[str, Any], small_gen: dict[str, Any],
                   small_ingest: dict[str, Any], small_rep: dict[str, Any]) -> None:
    rows = [
        ("imports, the store opened (`info()`), no report", "", idle),
        (f"daily NDCG@10, store of {small_gen['events']:,} events", f"{small_ingest['store_bytes'] / 2**20:.0f} MiB",
         small_rep),
        (f"daily NDCG@10, store of {gen['events']:,} events", f"{ingest['store_bytes'] / 2**20:.0f} MiB", rep),
        ("one day of it", "", rep_day),
    ]
    lines = [
        "",
        "## Memory against the size of the store",
        "",
        "The report reads the stored per-list values of the window, not the events: its peak memory above the",
        "floor of the imports follows the number of lists in the window, not the size of the store (one day of",
        "the large store costs what 30 days of the small one cost; 30 days of the large one, 100 times more lists,",
        "cost a few hundred bytes a list).",
        "",
        "| report process | store file | time | peak RSS | above the floor |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, size, r in rows:
        lines.append(f"| {name} | {size} | {fmt_s(r['seconds'])} | {r['rss_mb']:,.0f} MB |"
                     f" {r['rss_mb'] - idle['rss_mb']:+,.0f} MB |")
    with open(path, "a") as f:
        f.write("\n".join(lines) + "\n")


def profile_section(path: Path, gen: dict[str, Any], prof: dict[str, Any]) -> None:
    lines = [
        "",
        f"## Where the ingest's CPU goes (`--profile{' --serial' if prof.get('serial') else ''}`, load "
        f"{prof['load']:.1f})",
        "",
        f"The local ingest of the {gen['events']:,} events again, each SQL statement of its writer timed (CPU of",
        f"all threads): {fmt_s(prof['cpu_seconds'])} CPU in all, {fmt_s(prof['sql_cpu'])} of it in SQL statements",
        "(the rest: Python, the kernels of the values' refresh); the statements of one text are summed over the",
        "chunks and batches. The most expensive:",
        "",
        "| statement (start) | calls | CPU | wall |",
        "|---|---:|---:|---:|",
    ]
    lines += [f"| `{q.replace('|', '/')}` | {n} | {fmt_s(c)} | {fmt_s(w)} |" for q, c, w, n in prof["statements"]]
    lines += ["", f"By step (wall {fmt_s(prof['seconds'])}, CPU {fmt_s(prof['cpu_seconds'])}):", "",
              "| step | CPU | wall |", "|---|---:|---:|"]
    phases = prof.get("phases", {})
    for step, (c, w) in phases.items():
        lines.append(f"| {step} | {fmt_s(c)} | {fmt_s(w)} |")
    rest_c = prof["cpu_seconds"] - sum(c for c, _ in phases.values())
    rest_w = prof["seconds"] - sum(w for _, w in phases.values())
    lines.append(f"| the rest (Parquet metadata, batch hashes, the store's copy, checkpoint, swap) | {fmt_s(rest_c)} |"
                 f" {fmt_s(rest_w)} |")
    with open(path, "a") as f:
        f.write("\n".join(lines) + "\n")


def _day(args: argparse.Namespace, i: int) -> str:
    import datetime as dt

    return (dt.date(2026, 10, 1) + dt.timedelta(days=i)).isoformat()


def write_report(path: Path, args: argparse.Namespace, gen: dict[str, Any], ingest: dict[str, Any],
                 rep: dict[str, Any], rep_warm: dict[str, Any], rep_ci: dict[str, Any], rep_day: dict[str, Any],
                 pand: dict[str, Any] | None, agree: dict[str, Any] | None, last_day: list[str],
                 ingest_spark: dict[str, Any] | None = None) -> None:
    events = f"{gen['events']:,}"
    call = f"simulate(out, days={args.days}, groups_per_day={args.groups_per_day}, seed=0)"
    data = (f"`{call}`: {events} events ({gen['ranking_rows']:,} ranking rows, {gen['label_rows']:,} label"
            f" rows), {ingest['groups']:,} served lists, {len(gen['paths'])} Parquet files,"
            f" {gen['bytes'] / 2**20:.0f} MiB; simulated in {fmt_s(gen['seconds'])}.")
    lines = [
        "# Monitoring benchmark",
        "",
        "Generated by `python benchmarks/monitor_bench.py` (`make bench-monitor`); every number below is from",
        "one run on this machine. Each step runs in a fresh Python process: *time* is the call alone, *process*",
        "the whole process (interpreter, imports, call), *peak RSS* the process's peak resident set (`ru_maxrss`),",
        "*load* the machine's 1-minute load average when the step started (other work shares the 2 cores),",
        "*CPU* the user + system time of the call, all threads (it hardly grows when other work shares the",
        "cores: with a load above 2, read the targets against it too).",
        "",
        f"* Machine: {machine()}",
        f"* Versions: {versions()}",
        f"* Events: {data}",
        f"* Store: {ingest['store_bytes'] / 2**20:.0f} MiB DuckDB file, default configuration (binary gain on"
        + " `click`, convention `ranklens`, lists without any gain skipped and counted as excluded).",
        "",
        "| step | call | time | CPU | process | peak RSS | load | target | holds |",
        "|---|---|---:|---:|---:|---:|---:|---|---|",
    ]
    steps = [
        ("ingest", f"`Store(...).ingest(files)`, {events} events", ingest, "<= 10 s (2 cores: <= 20 s CPU)",
         ingest["seconds"] <= 10),
        *([("ingest on Spark", f"`ingest(files, engine='spark', master='{args.spark}')` (session up before)",
            ingest_spark, "same store (tests)", None)] if ingest_spark else []),
        ("daily NDCG@10", f"`report(measures=('ndcg@10',), window='day', ci=None)`: {rep['rows']} rows", rep,
         "< 1 s", rep["seconds"] < 1),
        ("the same, again", "a second process (file in the OS cache)", rep_warm, "< 1 s", rep_warm["seconds"] < 1),
        ("with intervals", "`ci='bootstrap'` (default: 1000 resamples)", rep_ci, "", None),
        ("one day", f"`start='{last_day[0]}', end='{last_day[1]}'`: {rep_day['rows']} rows", rep_day,
         "memory set by the window", None),
    ]
    for name, what, r, target, holds in steps:
        verdict = "" if holds is None else ok(holds)
        lines.append(f"| {name} | {what} | {fmt_s(r['seconds'])} | {fmt_s(r['cpu_seconds'])} |"
                     f" {fmt_s(r['process_seconds'])} |"
                     f" {r['rss_mb']:,.0f} MB | {r['load']:.1f} | {target} | {verdict} |")
    if pand is not None and agree is not None:
        both = ingest["seconds"] + rep["seconds"]
        both_cpu = ingest["cpu_seconds"] + rep["cpu_seconds"]
        compute = pand["seconds"] - pand["read_seconds"]
        compute_cpu = pand["cpu_seconds"] - pand["read_cpu_seconds"]
        lines += [
            "",
            "## pandas baseline",
            "",
            "Written the obvious way (`step_pandas` in the script): `pd.read_parquet` of every file, the late",
            "labels joined to the lists by (`group_id`, `item_id`), gain 1 when an item has a `click` (its",
            "relevance instead when one is given), `groupby(list).apply(ndcg@10)`, then `groupby(day).mean()`.",
            "",
            f"Load (1-minute average) when the steps started: pandas {pand['load']:.1f}, ranklens' ingest"
            f" {ingest['load']:.1f}, its report {rep['load']:.1f}; the CPU seconds are the fairer figure when the load"
            " is above the 2 cores.",
            "",
            "| | pandas | ranklens | pandas / ranklens |",
            "|---|---:|---:|---:|",
            ("| files -> daily NDCG@10 (pandas: read, join, apply; ranklens: ingest, report), wall"
             f" | {fmt_s(pand['seconds'])} | {fmt_s(both)} | {pand['seconds'] / both:.1f}x |"),
            (f"| the same, CPU | {fmt_s(pand['cpu_seconds'])} | {fmt_s(both_cpu)}"
             f" | {pand['cpu_seconds'] / both_cpu:.1f}x |"),
            (f"| events loaded -> daily NDCG@10 (pandas: join, apply; ranklens: report), wall | {fmt_s(compute)}"
            f" | {fmt_s(rep['seconds'])} | {compute / rep['seconds']:.0f}x |"),
            (f"| the same, CPU | {fmt_s(compute_cpu)} | {fmt_s(rep['cpu_seconds'])}"
             f" | {compute_cpu / rep['cpu_seconds']:.0f}x |"),
            (f"| peak RSS (ranklens: the report; the ingest: {ingest['rss_mb']:,.0f} MB) | {pand['rss_mb']:,.0f} MB"
            f" | {rep['rss_mb']:,.0f} MB | {pand['rss_mb'] / rep['rss_mb']:.1f}x |"),
            "",
            (f"Agreement: {agree['common']} (day, model, version, environment) rows in both (store"
            f" {agree['store_rows']}, pandas {agree['pandas_rows']}; same keys: {agree['same_keys']}); largest"
            f" difference of NDCG@10 {agree['max_abs_diff']:.1e} (at most 1e-9: {ok(agree['max_abs_diff'] <= 1e-9)});"
            f" `n_groups` and `n_excluded` equal: {agree['counts_equal']}."),
        ]
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
