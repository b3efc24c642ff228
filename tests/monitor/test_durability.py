"""Real processes against one store: a kill during ingest leaves it consistent, concurrent ingests lose and
duplicate nothing, a held store gives a clear 'busy' message."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ranklens.monitor import Store

RANKLENS = [sys.executable, "-m", "ranklens.cli"]


def _events(n_groups: int, seed: int, prefix: str) -> pa.Table:
    """n_groups served lists of 10 items, ranks 1..10, random clicks (no ranklens code involved)."""
    rng = np.random.default_rng(seed)
    n = n_groups * 10
    gid = np.repeat(np.arange(n_groups), 10)
    day = gid % 7 + 1
    clicked = rng.random(n) < 0.2
    return pa.table({
        "timestamp": pa.array([f"2026-10-{d:02d}T12:00:00" for d in day]),
        "model": pa.array(["m"] * n), "model_version": pa.array(["v1"] * n),
        "environment": pa.array(["production"] * n),
        "group_id": pa.array([f"{prefix}{g}" for g in gid]),
        "item_id": pa.array([f"i{i}" for i in np.tile(np.arange(10), n_groups)]),
        "rank": pa.array(np.tile(np.arange(1, 11), n_groups)),
        "labels": pa.array([["click"] if c else [] for c in clicked], pa.list_(pa.string())),
        "country": pa.array(np.array(["US", "BR", "DE"])[gid % 3]),
    })


def _consistent(path: Path) -> dict:
    """Every stored row belongs to a recorded batch, and every recorded batch is complete."""
    con = duckdb.connect(str(path))  # a writer: replays the log of committed transactions only
    try:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if "batches" not in tables:
            return {"batches": 0, "groups": 0, "items": 0}
        orphans = con.execute("""
            SELECT (SELECT count(*) FROM groups WHERE batch_id NOT IN (SELECT batch_id FROM batches)),
                   (SELECT count(*) FROM items WHERE gid NOT IN (SELECT gid FROM groups)),
                   (SELECT count(*) FROM feedback WHERE batch_id NOT IN (SELECT batch_id FROM batches)),
                   (SELECT count(*) FROM quarantine WHERE batch_id NOT IN (SELECT batch_id FROM batches))
        """).fetchall()[0]
        assert orphans == (0, 0, 0, 0), orphans
        bad = con.execute("""SELECT b.batch_id FROM batches b
            LEFT JOIN (SELECT batch_id, count(*) AS g, sum(n_items) AS i FROM groups GROUP BY 1) s USING (batch_id)
            WHERE coalesce(s.g, 0) <> b.groups OR coalesce(s.i, 0) <> b.ranking_rows""").fetchall()
        assert bad == [], bad
        assert con.execute("SELECT count(*) - count(DISTINCT (model, model_version, environment, group_id)) FROM groups"
                           ).fetchall()[0][0] == 0
        assert con.execute("SELECT count(*) FROM items").fetchall()[0][0] == \
            con.execute("SELECT coalesce(sum(n_items), 0) FROM groups").fetchall()[0][0]
        return dict(zip(("batches", "groups", "items"), con.execute(
            "SELECT (SELECT count(*) FROM batches), (SELECT count(*) FROM groups), (SELECT count(*) FROM items)"
        ).fetchall()[0]))
    finally:
        con.close()


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    d = tmp_path_factory.mktemp("big")
    f = d / "big.parquet"
    pq.write_table(_events(30_000, 1, "g"), f)
    return f


def _ingest_cmd(store: Path, *files: Path, wait: float = 60) -> list[str]:
    return [*RANKLENS, "monitor", "ingest", *map(str, files), "--store", str(store), "--wait", str(wait)]


@pytest.mark.slow
def test_kill_during_ingest_leaves_store_consistent(tmp_path, big):
    clean = tmp_path / "clean.duckdb"
    t0 = time.monotonic()
    subprocess.run(_ingest_cmd(clean, big), check=True, capture_output=True)
    duration = time.monotonic() - t0
    expected = _consistent(clean)
    assert expected["groups"] == 30_000
    absent_after_kill = 0
    # the batch commits before the values are computed and the file is written: early kills land inside it
    for i, frac in enumerate((0.15, 0.3, 0.5, 0.7, 0.85, 0.95)):
        store = tmp_path / f"k{i}.duckdb"
        p = subprocess.Popen(_ingest_cmd(store, big), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(duration * frac)
        p.send_signal(signal.SIGKILL)
        p.wait()
        got = _consistent(store)
        assert got["groups"] in (0, 30_000)  # all of the batch or nothing
        if store.exists() and got["groups"] == 0:
            absent_after_kill += 1
        # ingesting again completes the store exactly as a clean ingest
        subprocess.run(_ingest_cmd(store, big), check=True, capture_output=True)
        assert _consistent(store) == expected
    assert absent_after_kill >= 1  # at least one kill landed inside the batch's transaction


@pytest.mark.slow
def test_two_writers_at_once(tmp_path):
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pq.write_table(_events(10_000, 2, "a"), a)
    pq.write_table(_events(10_000, 3, "b"), b)
    store = tmp_path / "s.duckdb"
    procs = [subprocess.Popen(_ingest_cmd(store, f), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for f in (a, b)]
    outs = [p.communicate() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert _consistent(store) == {"batches": 2, "groups": 20_000, "items": 200_000}
    # the same file twice at once: stored once
    store2 = tmp_path / "s2.duckdb"
    procs = [subprocess.Popen(_ingest_cmd(store2, a), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert sum("already ingested" in o for o, _ in outs) == 1
    assert _consistent(store2) == {"batches": 1, "groups": 10_000, "items": 100_000}


@pytest.mark.slow
def test_busy_store_message(tmp_path):
    store = tmp_path / "s.duckdb"
    f = tmp_path / "e.parquet"
    pq.write_table(_events(10, 4, "x"), f)
    Store(store).ingest(f)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         f"import duckdb,time,sys; c=duckdb.connect({str(store)!r}); print('held', flush=True); time.sleep(20)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        r = subprocess.run([*RANKLENS, "monitor", "report", "--store", str(store), "--wait", "0.5"],
                           capture_output=True, text=True)
        assert r.returncode == 2
        assert r.stderr.count("\n") == 1 and "busy" in r.stderr and "Traceback" not in r.stderr
        assert f"process {holder.pid}" in r.stderr
    finally:
        holder.kill()
        holder.wait()
    # once released, the same command works
    r = subprocess.run([*RANKLENS, "monitor", "report", "--store", str(store), "--ci", "none"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr


def test_ranklens_module_entry_point():
    r = subprocess.run([*RANKLENS, "monitor", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "ingest" in r.stdout and os.linesep in r.stdout
