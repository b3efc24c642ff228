"""Readers never wait for a writer (issue 32, point 6): while an ingest runs in another process, reports and
``check`` answer at once (``wait=0``: any wait for a lock is an error) with the committed state, and what
``check`` records meanwhile survives the ingest's commit, and the other way round.

The ingest is held inside its write (before its values are computed and its copy swapped in) by a hook that
waits for a file to appear, so the reads land inside it for sure; nothing is timed.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ranklens.monitor import Store
from ranklens.monitor.storage.db import Database

RANKLENS = [sys.executable, "-m", "ranklens.cli"]
CONFIG = {"labels": {"maturity": "0s"},
          "monitors": [{"name": "low", "metric": "ndcg@10", "threshold": 0.99, "min_groups": 1,
                        "where": {"environment": "production"}}]}


def _events(n_groups: int, day: int, prefix: str, seed: int, environment: str = "production") -> pa.Table:
    """n_groups lists of 5 items served on 2026-10-<day>, one click on a random position (by hand, no ranklens)."""
    rng = np.random.default_rng(seed)
    n = n_groups * 5
    clicked = np.zeros(n, bool)
    clicked[np.arange(n_groups) * 5 + rng.integers(0, 5, n_groups)] = True
    return pa.table({
        "timestamp": pa.array([f"2026-10-{day:02d}T12:00:00"] * n),
        "model": pa.array(["m"] * n), "model_version": pa.array(["v1"] * n),
        "environment": pa.array([environment] * n),
        "group_id": pa.array([f"{prefix}{g}" for g in np.repeat(np.arange(n_groups), 5)]),
        "item_id": pa.array([f"i{i}" for i in np.tile(np.arange(5), n_groups)]),
        "rank": pa.array(np.tile(np.arange(1, 6), n_groups)),
        "labels": pa.array([["click"] if c else [] for c in clicked], pa.list_(pa.string())),
    })


HELD_INGEST = """
import sys, time
from pathlib import Path
import ranklens.monitor.storage.ingest_call as store_module
from ranklens.monitor import Store

real = store_module.refresh_values

def held(con, config):  # inside the ingest's write: say so, wait for the go
    print("inside", flush=True)
    while not Path(sys.argv[3]).exists():
        time.sleep(0.02)
    return real(con, config)

store_module.refresh_values = held
print(Store(sys.argv[1], config={}, wait=60).ingest(sys.argv[2]), flush=True)
"""


def _start_held_ingest(store: Path, events: Path, go: Path) -> subprocess.Popen[str]:
    p = subprocess.Popen([sys.executable, "-c", HELD_INGEST, str(store), str(events), str(go)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout is not None
    line = p.stdout.readline().strip()
    assert line == "inside", (line, p.stderr.read() if p.poll() is not None else "")
    return p


def test_reads_and_check_during_an_ingest_answer_at_once_with_the_committed_state(tmp_path):
    store = tmp_path / "s.duckdb"
    first, second = tmp_path / "first.parquet", tmp_path / "second.parquet"
    pq.write_table(pa.concat_tables([_events(40, 1, "a", 1), _events(50, 1, "t", 4, "training")]), first)
    pq.write_table(_events(30, 2, "b", 2), second)
    Store(store, config=CONFIG).ingest(first)
    before = Store(store, config=CONFIG, read_only=True).report(["ndcg@10"], ci="t").to_pylist()
    assert [(r["environment"], r["n_groups"]) for r in before] == [("production", 40), ("training", 50)]

    go = tmp_path / "go"
    ingest = _start_held_ingest(store, second, go)
    try:
        reader = Store(store, config=CONFIG, read_only=True, wait=0)  # waiting for any lock would raise
        assert reader.report(["ndcg@10"], ci="t").to_pylist() == before  # the committed state
        assert reader.info()["groups"] == 90
        r = subprocess.run([*RANKLENS, "monitor", "report", "--store", str(store), "--wait", "0", "--ci", "none",
                            "-f", "json"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        # check records its alert while the ingest holds the store's writer lock
        checked = Store(store, config=CONFIG, wait=0).check(notify=False)
        assert [a.extra["status"] for a in checked] == ["opened"]
        assert Store(store, config=CONFIG, read_only=True, wait=0).alert_list().num_rows == 1
    finally:
        go.touch()
        out, err = ingest.communicate(timeout=300)
    assert ingest.returncode == 0, err
    after = Store(store, config=CONFIG, read_only=True)
    assert after.info()["groups"] == 120
    # the ingest's commit kept the alert check recorded meanwhile
    alerts = after.alert_list().to_pylist()
    assert [(a["alert_id"], a["state"], a["opened_window"].day) for a in alerts] == [(1, "open", 1)]


def test_an_ingest_committed_while_check_writes_is_kept(tmp_path):
    """The other order: the ingest commits while an alerts writer has its copy open; the alerts writer's
    commit brings its tables into the store the ingest published."""
    store = tmp_path / "s.duckdb"
    first, second = tmp_path / "first.parquet", tmp_path / "second.parquet"
    pq.write_table(_events(40, 1, "a", 1), first)
    pq.write_table(_events(30, 2, "b", 2), second)
    Store(store, config=CONFIG).ingest(first)
    db = Database(store, read_only=False, wait=0)
    with db.writing("alerts") as con:
        con.execute("INSERT INTO alert_states (alert_id, monitor, series, state) VALUES (7, 'x', '{}', 'open')")
        Store(store, config=CONFIG, wait=0).ingest(second)  # the events side publishes meanwhile
        assert Store(store, config=CONFIG, read_only=True).info()["groups"] == 70
    st = Store(store, config=CONFIG, read_only=True)
    assert st.info()["groups"] == 70
    assert [(a["alert_id"], a["state"]) for a in st.alert_list().to_pylist()] == [(7, "open")]


def test_a_second_ingest_waits_for_the_first(tmp_path):
    """Two writers of the same side: the second waits for the first (up to --wait), then goes on; with no wait
    it stops with a one-line 'busy' naming the process."""
    store = tmp_path / "s.duckdb"
    first, second, third = (tmp_path / f"{n}.parquet" for n in ("first", "second", "third"))
    pq.write_table(_events(40, 1, "a", 1), first)
    pq.write_table(_events(30, 2, "b", 2), second)
    pq.write_table(_events(20, 3, "c", 3), third)
    Store(store, config={}).ingest(first)
    go = tmp_path / "go"
    ingest = _start_held_ingest(store, second, go)
    try:
        r = subprocess.run([*RANKLENS, "monitor", "ingest", str(third), "--store", str(store), "--wait", "0"],
                           capture_output=True, text=True)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "busy" in r.stderr, r.stderr
        assert f"process {ingest.pid}" in r.stderr
        waiting = subprocess.Popen([*RANKLENS, "monitor", "ingest", str(third), "--store", str(store), "--wait", "120"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        assert waiting.poll() is None  # waiting for the first ingest
    finally:
        go.touch()
        ingest.communicate(timeout=300)
    out, err = waiting.communicate(timeout=300)
    assert waiting.returncode == 0, err
    assert Store(store, read_only=True).info()["groups"] == 90
