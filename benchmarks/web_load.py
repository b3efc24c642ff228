"""Load benchmark of the dashboard's JSON API: 50 concurrent clients for 30 seconds on a 10-million-event store.

    python benchmarks/web_load.py [--clients 50] [--seconds 30] [--groups-per-day 16000] [--days 30] [--no-cache]

1. The events are simulated once (``ranklens.monitor.simulate``, seed 0: 30 days x 16,000 production lists
   per day plus the training lists, about 10 million events) and ingested into a store; both are cached
   under ``benchmarks/.data/web-load-<days>d-<groups>/``.
2. ``ranklens serve`` runs in its own process on 127.0.0.1 (the store read-only, as a user runs it).
3. Cold: each URL of the mix is requested once, alone, and timed (what a first visitor waits).
4. Load: ``--clients`` asyncio clients (one keep-alive connection each) send requests back to back for
   ``--seconds`` seconds, each cycling through the mix from its own offset. The mix is what the four
   pages ask for: info, the overview's report / baseline / alerts (5 measures x 2 windows), slices,
   heatmap, worst groups, explain, compare. Every response must be 200 with JSON; anything else is an
   error. Latency is measured per request from send to last byte.

Results (p50 / p95 / p99 / max latency, requests per second, errors) are printed as JSON, and with
``--out`` appended to that markdown file. The load generator shares the machine with the server.

With ``--during-ingest EVENTS`` (#32: readers never wait), the server reads a copy of the store while another
process ingests about EVENTS more simulated events into that copy (3 more days, in their own files); the load
lasts at least until the ingest has committed, and the latencies are also given per endpoint (p99 and max):
every endpoint's p99 must stay under 1 s. They are also split into the requests sent while the ingest runs and
those sent after its commit (the store's new version: every answer not cached yet, computed again).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / ".data"


def build_store(days: int, groups_per_day: int) -> tuple[Path, dict[str, Any]]:
    """The simulated store (cached): its path and what it holds."""
    d = DATA / f"web-load-{days}d-{groups_per_day}"
    d.mkdir(parents=True, exist_ok=True)
    store = d / "ranklens.duckdb"
    meta = d / "store.json"
    from ranklens.errors import InputError
    from ranklens.monitor import Store
    from ranklens.monitor.simulate import simulate

    if store.exists() and meta.exists():
        try:
            Store(store, config={}, read_only=True).info()
            return store, json.loads(meta.read_text())
        except InputError as exc:  # e.g. written by an older schema: build it again
            print(f"rebuilding the store: {exc}", file=sys.stderr)

    for p in (store, Path(str(store) + ".wal")):
        if p.exists():
            p.unlink()
    t0 = time.perf_counter()
    paths = simulate(d / "events", days=days, groups_per_day=groups_per_day, seed=0)
    t1 = time.perf_counter()
    st = Store(store, config={})
    summary = st.ingest(paths)
    t2 = time.perf_counter()
    alerts = st.check(all_windows=True, notify=False)
    info = {"events": summary.rows, "groups": summary.groups, "simulate_s": round(t1 - t0, 1),
            "ingest_s": round(t2 - t1, 1), "alerts": len(alerts), "store_mb": round(store.stat().st_size / 2**20, 1)}
    meta.write_text(json.dumps(info))
    return store, info


def more_events(d: Path, events: int) -> list[Path]:
    """About ``events`` simulated events after the store's 30 days (cached beside the store)."""
    from ranklens.monitor.simulate import simulate

    out = d / f"more-{events}"
    if not out.exists():
        per_day = max(events // (3 * 21), 1)  # ~21 events per served list (its items, their label rows)
        simulate(out, start="2027-01-01", days=3, groups_per_day=per_day, seed=1, training_groups=0)
    return sorted(out.glob("*.parquet"))


def mix(info: dict[str, Any]) -> list[str]:
    """The URLs the pages request, over the store's time span and models."""
    first, last = info["first"][:10], info["last"][:10]
    import datetime as dt

    end = (dt.date.fromisoformat(last) + dt.timedelta(days=1)).isoformat()
    week = (dt.date.fromisoformat(last) - dt.timedelta(days=6)).isoformat()
    model = max(info["models"], key=lambda m: m["groups"])["model"]
    urls = ["/api/info"]
    for metric in info["tracked"]:
        for window in ("day", "week"):
            urls.append(f"/api/report?metric={metric}&window={window}&start={first}&end={end}&ci=bootstrap&model={model}")
        urls.append(f"/api/baseline?metric={metric}&model={model}")
        urls.append(f"/api/alerts?start={first}&end={end}&metric={metric}")
    urls += [
        f"/api/slices?metric=ndcg@10&start={week}&end={end}&environment=production",
        f"/api/heatmap?metric=ndcg@10&window=day&limit=12&start={week}&end={end}&environment=production",
        f"/api/groups?metric=ndcg@10&limit=50&start={week}&end={end}&order=worst",
        (f"/api/compare?metric=ndcg@10&confidence=0.95&a_model={model}&a_model_version=v2&a_environment=production"
         f"&b_model={model}&b_model_version=v1&b_environment=production"),
    ]
    return urls


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(store: Path, port: int, cache: bool) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "ranklens.cli", "serve", "--store", str(store), "--port", str(port)]
    if not cache:
        cmd.append("--no-cache")
    # run beside the store: a ranklens.toml of the current folder does not apply
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=store.parent)
    import urllib.request

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/info", timeout=30):
                return proc
        except OSError:
            if proc.poll() is not None:
                raise SystemExit(f"the server stopped: {proc.stderr.read()}") from None
            time.sleep(0.3)
    proc.kill()
    raise SystemExit("the server did not answer in 120 s")


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    i = min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))
    return s[i]


async def cold(base: str, urls: list[str]) -> list[tuple[str, float, int]]:
    import httpx

    out = []
    async with httpx.AsyncClient(base_url=base, timeout=600) as c:
        for u in urls:
            t0 = time.perf_counter()
            r = await c.get(u)
            out.append((u, time.perf_counter() - t0, r.status_code))
    return out


class Connection:
    """A minimal HTTP/1.1 keep-alive client on asyncio streams: the load generator shares the machine with the
    server, so it spends as little CPU per request as it can (httpx costs several times more)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self, url: str) -> tuple[int, dict[str, str], bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        self.writer.write(f"GET {url} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n\r\n".encode("latin-1"))
        await self.writer.drain()
        status = int((await self.reader.readline()).split(b" ", 2)[1])
        headers: dict[str, str] = {}
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            k, _, v = line.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        body = await self.reader.readexactly(int(headers.get("content-length", "0")))
        return status, headers, body

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def load(base: str, urls: list[str], clients: int, seconds: float,
               writer: subprocess.Popen[str] | None = None, store: Path | None = None) -> dict[str, Any]:
    host, port = base.split("//")[1].split(":")
    latencies: list[float] = []
    during_ms: list[float] = []
    after_ms: list[float] = []
    by_endpoint: dict[str, list[float]] = {}
    errors: dict[str, int] = {}
    stop = time.perf_counter() + seconds

    committed: list[float] = []  # when the writer's (an ingest's) version of the store was swapped in
    first = os.stat(store).st_ino if store is not None else None

    def writing() -> bool:  # the served file is still the one before the ingest (it swaps a new one in at commit)
        if writer is None or committed:
            return False
        if os.stat(store).st_ino == first and writer.poll() is None:
            return True
        committed.append(time.perf_counter())
        return False

    def going() -> bool:  # the duration, and at least until the writer has finished
        return writing() or time.perf_counter() < stop or (writer is not None and writer.poll() is None)

    def error(kind: str) -> None:
        errors[kind] = errors.get(kind, 0) + 1

    async def client(i: int) -> None:
        conn = Connection(host, int(port))
        k = i
        while going():
            u = urls[k % len(urls)]
            k += 1
            during = writing()  # sent while the ingest runs (else: after its commit, or without one)
            t0 = time.perf_counter()
            try:
                status, headers, body = await conn.get(u)
            except (OSError, ValueError, IndexError, asyncio.IncompleteReadError) as exc:
                error(type(exc).__name__)
                conn.close()
                continue
            latencies.append(time.perf_counter() - t0)
            by_endpoint.setdefault(u.split("?")[0], []).append(latencies[-1] * 1000)
            (during_ms if during else after_ms).append(latencies[-1] * 1000)
            if status != 200 or not headers.get("content-type", "").startswith("application/json"):
                error(f"HTTP {status}")
                continue
            try:
                json.loads(body)
            except ValueError:
                error("invalid JSON")
        conn.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(clients)))
    wall = time.perf_counter() - t0
    ms = [x * 1000 for x in latencies]
    return {"requests": len(ms), "errors": sum(errors.values()), "error_kinds": errors, "seconds": round(wall, 1),
            "rps": round(len(ms) / wall, 1), "p50_ms": round(pct(ms, 50), 1), "p95_ms": round(pct(ms, 95), 1),
            "p99_ms": round(pct(ms, 99), 1), "max_ms": round(max(ms), 1) if ms else None,
            "endpoints": {e: {"requests": len(v), "p99_ms": round(pct(v, 99), 1), "max_ms": round(max(v), 1)}
                          for e, v in sorted(by_endpoint.items())},
            **({"during_ingest": _summary(during_ms), "after_commit": _summary(after_ms),
                "ingest_ended_s": round(committed[0] - t0, 1) if committed else None} if writer is not None else {})}


def _summary(ms: list[float]) -> dict[str, Any]:
    """Requests, p50 / p99 / max latency of some of the requests (ms)."""
    return {"requests": len(ms), "p50_ms": round(pct(ms, 50), 1), "p99_ms": round(pct(ms, 99), 1),
            "max_ms": round(max(ms), 1) if ms else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--groups-per-day", type=int, default=16_000)
    ap.add_argument("--no-cache", action="store_true", help="serve without the response cache")
    ap.add_argument("--out", default=None, help="append the results to this markdown file")
    ap.add_argument("--during-ingest", type=int, default=None, metavar="EVENTS",
                    help="serve a copy of the store while about EVENTS more events are ingested into it")
    args = ap.parse_args()

    load_at_start = os.getloadavg()[0]
    store, built = build_store(args.days, args.groups_per_day)
    from ranklens.monitor import Store

    writer = None
    if args.during_ingest:
        extra = more_events(store.parent, args.during_ingest)
        served = store.parent / "during-ingest.duckdb"
        shutil.copyfile(store, served)
        store = served

    info = Store(store, config={}, read_only=True).info()
    urls = mix(info)
    port = free_port()
    proc = start_server(store, port, cache=not args.no_cache)
    base = f"http://127.0.0.1:{port}"
    try:
        first = asyncio.run(cold(base, urls))
        if args.during_ingest:
            writer = subprocess.Popen([sys.executable, "-m", "ranklens.cli", "monitor", "ingest", *map(str, extra),
                                       "--store", str(store), "-f", "json"], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, cwd=store.parent)
        t_ingest = time.perf_counter()
        res = asyncio.run(load(base, urls, args.clients, args.seconds, writer, store))
        if writer is not None:
            out, err = writer.communicate()
            if writer.returncode != 0:
                raise SystemExit(f"the ingest failed: {err}")
            rows = json.loads(out)["rows"] if out.strip().startswith("{") else None
            res["ingest"] = {"events": rows, "load_ended_after_s": round(time.perf_counter() - t_ingest, 1),
                             "worst_endpoint_p99_ms": max(e["p99_ms"] for e in res["endpoints"].values())}
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
    cold_ms = sorted((round(t * 1000), u.split("?")[0]) for u, t, _ in first)
    result = {
        "store": {"path": str(store.relative_to(ROOT)), **built, "groups_in_store": info["groups"],
                  "items": info["items"], "labels": info["labels"]},
        "cache": not args.no_cache, "clients": args.clients, "urls": len(urls),
        "cold_errors": sum(1 for _, _, s in first if s != 200),
        "cold_ms": {"min": cold_ms[0][0], "median": cold_ms[len(cold_ms) // 2][0], "max": cold_ms[-1][0],
                    "slowest": cold_ms[-1][1]},
        "load": res,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
    }
    print(json.dumps(result, indent=2))
    if args.out:
        with open(args.out, "a", encoding="utf-8") as fh:
            fh.write(out_section(result, args, load_at_start))


def out_section(result: dict[str, Any], args: argparse.Namespace, load: float) -> str:
    """The run in markdown: a heading, what the targets say, the results as JSON."""
    res = result["load"]
    head = [f"\n## The dashboard's API under load (`benchmarks/web_load.py`, {args.clients} clients)\n",
            f"Load average {load:.1f} at the start (2 cores shared with other work); times in ms."]
    if args.during_ingest:
        d, a = res["during_ingest"], res["after_commit"]
        worst = res["ingest"]["worst_endpoint_p99_ms"]
        head.append(f"While {res['ingest']['events']:,} events were ingested (ended after {res['ingest_ended_s']} s):"
                    f" {d['requests']:,} requests, p99 {d['p99_ms']} ms, the worst endpoint's p99 {worst} ms (target:"
                    f" under 1,000 ms on every endpoint: {'holds' if worst < 1000 else 'does not hold'}); max"
                    f" {d['max_ms']} ms. After the commit (the new version: answers computed again):"
                    f" {a['requests']} requests, p50 {a['p50_ms']} ms, max {a['max_ms']} ms.")
    return "\n".join(head) + "\n\n```json\n" + json.dumps(result, indent=2) + "\n```\n"


if __name__ == "__main__":
    main()
