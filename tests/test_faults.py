"""Faults named for what they are, at once (issue #29, point 4): a damaged store, a file of another database
given as the store, DuckDB's extension auto-install and auto-load, gzip bombs and binary input, and an exit
status of its own for a crash or a resource error (1 is a failed gate or a fired alert, never an error).

Every file here is real: a DuckDB store truncated or with a data block overwritten, an SQLite database written
by ``sqlite3``, a gzip file of more than 256 MiB of zeros (made of 1 MiB members, so that writing it is cheap),
random bytes.
"""

from __future__ import annotations

import gzip
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ranklens
from ranklens.errors import EXIT_STATUSES, FormatError, InputError, ResourceError, describe

duckdb = pytest.importorskip("duckdb")

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq2 0 e1 1\n"
RUN = "q1 Q0 d1 1 4.0 s\nq1 Q0 d2 2 3.0 s\nq2 Q0 e1 1 2.0 s\n"


def _one_line(code, err, status=2):
    assert code == status, (code, err)
    assert err.count("\n") == 1 and err.startswith("ranklens: error: "), err
    return err


@pytest.fixture()
def no_wait(monkeypatch):
    """Fail if the store's opening waits at all (the old code slept for 30 s on a damaged file)."""
    from ranklens.monitor.storage import db as _db

    def sleep(_seconds):
        raise AssertionError("waited for a lock that no process holds")

    monkeypatch.setattr(_db.time, "sleep", sleep)


@pytest.fixture()
def store(tmp_path):
    """A real ranklens store of 4,000 served items (several of DuckDB's blocks)."""
    import pyarrow as pa

    from ranklens.monitor import Store

    n_groups = 400
    gid = np.repeat(np.arange(n_groups), 10)
    clicked = np.random.default_rng(0).random(gid.size) < 0.2
    events = pa.table({
        "timestamp": pa.array([f"2026-10-{d:02d}T12:00:00" for d in gid % 7 + 1]),
        "model": pa.array(["m"] * gid.size), "model_version": pa.array(["v1"] * gid.size),
        "environment": pa.array(["production"] * gid.size), "group_id": pa.array([f"g{g}" for g in gid]),
        "item_id": pa.array([f"i{i}" for i in np.tile(np.arange(10), n_groups)]),
        "rank": pa.array(np.tile(np.arange(1, 11), n_groups)),
        "labels": pa.array([["click"] if c else [] for c in clicked], pa.list_(pa.string())),
    })
    path = tmp_path / "good.duckdb"
    Store(path).ingest(events)
    return path


def test_a_truncated_store_is_named_damaged_at_once(store, tmp_path, no_wait, run_cli):
    data = store.read_bytes()
    bad = tmp_path / "trunc.duckdb"
    bad.write_bytes(data[: len(data) // 2])
    code, _, err = run_cli(["monitor", "info", "--store", str(bad)])
    assert "is damaged" in _one_line(code, err) and "busy" not in err


def test_a_store_with_an_overwritten_block_is_named_damaged_not_busy(store, tmp_path, no_wait, run_cli):
    """DuckDB's message ("Corrupt database file: computed checksum ... in block at location 4096") holds "lock"
    in "block": it was taken for another process's lock and waited for, 30 s, then called busy."""
    data = bytearray(store.read_bytes())
    for i in range(8192, len(data), 7):
        data[i] ^= 0x5A
    bad = tmp_path / "damaged.duckdb"
    bad.write_bytes(bytes(data))
    with pytest.raises(duckdb.Error, match="(?i)block"):  # the message that was misread
        duckdb.connect(str(bad), read_only=True).execute("SELECT count(*) FROM duckdb_tables()").fetchall()
    code, _, err = run_cli(["monitor", "info", "--store", str(bad)])
    assert "is damaged" in _one_line(code, err) and "busy" not in err


def test_an_sqlite_file_as_the_store_is_named_and_nothing_is_downloaded(tmp_path, no_wait, run_cli):
    path = tmp_path / "events.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (a INTEGER)")
    con.commit()
    con.close()
    (tmp_path / "e.csv").write_text("timestamp,model,model_version,environment,group_id,item_id,rank,labels\n"
                                    "2026-10-01T12:00:00,m,v1,production,g1,i1,1,click\n")
    for cmd in (["monitor", "info"], ["monitor", "report"], ["monitor", "ingest", str(tmp_path / "e.csv")]):
        code, _, err = run_cli([*cmd, "--store", str(path)])
        assert "is not a DuckDB database (it is an SQLite database)" in _one_line(code, err), err
    assert path.read_bytes()[:16] == b"SQLite format 3\x00"  # left as it was


def test_random_bytes_as_the_store_are_named(tmp_path, no_wait, run_cli):
    path = tmp_path / "x.duckdb"
    path.write_bytes(np.random.default_rng(1).bytes(100_000))
    code, _, err = run_cli(["monitor", "info", "--store", str(path)])
    assert "is not a DuckDB database (its first bytes are not DuckDB's header)" in _one_line(code, err)


def test_every_connection_has_extension_autoinstall_and_autoload_off(store, tmp_path):
    from ranklens.monitor.storage.db import Database, duckdb_connect

    settings = "SELECT current_setting('autoinstall_known_extensions'), current_setting('autoload_known_extensions')"
    for con in (duckdb_connect(), Database(store, read_only=True, wait=0).connect(write=False),
                Database(tmp_path / "new.duckdb", read_only=False, wait=0, create=True).connect(write=True)):
        assert con.execute(settings).fetchone() == (False, False)
        con.close()


def test_duckdb_itself_would_load_an_extension_for_an_sqlite_file(tmp_path):
    """Why the settings matter: given an SQLite file, DuckDB reaches for its sqlite extension (installing it over
    the network when allowed); with auto-install and auto-load off it only says the extension is missing."""
    from ranklens.monitor.storage.db import duckdb_connect

    path = tmp_path / "s.db"
    sqlite3.connect(path).execute("CREATE TABLE t (a)").connection.commit()
    with pytest.raises(duckdb.Error) as info:
        duckdb_connect(str(path))
    assert "sqlite" in str(info.value).lower() and "download" not in str(info.value).lower()


def test_the_lock_of_a_live_writer_is_still_waited_for(store, tmp_path):
    """Only DuckDB's own lock message is waited for: another process holding the file gets "busy" after --wait."""
    code = ("import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); "
            "time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", code, str(store)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        proc = subprocess.run([sys.executable, "-m", "ranklens.cli", "monitor", "info", "--store", str(store),
                               "--wait", "0.2"], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2 and "is busy" in proc.stderr, proc.stderr
    finally:
        holder.kill()
        holder.wait()


# --- decompression bounded, binary input refused --------------------------------------------------------------

@pytest.fixture()
def files(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return tmp_path


def test_a_gzip_bomb_is_refused_at_its_bound(files, run_cli):
    member = gzip.compress(b"0" * (1 << 20), 9)  # 1 MiB of the digit 0 in about 1 KiB
    bomb = files / "qrels.gz"
    bomb.write_bytes(member * 300)  # 300 MiB once inflated, from 300 KiB: past the 256 MiB bound
    code, _, err = run_cli(["eval", str(bomb), str(files / "run")])
    assert "inflates to more than 268,435,456 bytes" in _one_line(code, err)
    with pytest.raises(FormatError, match="gzip bomb"):
        ranklens.read_judgments(bomb, format="trec")


def test_a_gzip_file_within_the_bound_is_read_as_the_plain_file(files):
    plain = ranklens.evaluate(files / "qrels", files / "run", ["ndcg", "map"])
    (files / "run.gz").write_bytes(gzip.compress(RUN.encode()) + gzip.compress(b""))  # two members
    (files / "qrels.gz").write_bytes(gzip.compress(QRELS.encode()))
    packed = ranklens.evaluate(files / "qrels.gz", files / "run.gz", ["ndcg", "map"])
    assert packed.aggregate == plain.aggregate


def test_a_truncated_gzip_file_is_refused(files, run_cli):
    (files / "run.gz").write_bytes(gzip.compress(RUN.encode() * 50)[:-20])
    code, _, err = run_cli(["eval", str(files / "qrels"), str(files / "run.gz")])
    assert "corrupt gzip data" in _one_line(code, err)


@pytest.mark.parametrize(("content", "what"), [
    (b"SQLite format 3\x00" + bytes(200), "an SQLite database"),
    (b"PK\x03\x04" + bytes(200), "a zip archive (or an Excel file)"),
    (b"BZh91AY&SY" + bytes(200), "a bzip2 file"),
    (b"q1 0 d1 1\nq1 0 d2\x000\n", "binary data (a NUL byte at byte 17)"),
])
def test_binary_input_is_refused_at_once(content, what, files, run_cli):
    (files / "bin").write_bytes(content)
    for args in ([str(files / "bin"), str(files / "run")], [str(files / "qrels"), str(files / "bin")]):
        code, _, err = run_cli(["eval", *args])
        assert f"bin: {what}, not a text file" in _one_line(code, err), err


def test_random_bytes_large_enough_to_be_mapped_are_refused(files, run_cli):
    (files / "big").write_bytes(np.random.default_rng(2).bytes(3 << 20))  # mapped, not read (MAP_MIN_BYTES)
    code, _, err = run_cli(["eval", str(files / "qrels"), str(files / "big")])
    assert "binary data" in _one_line(code, err)


def test_gzipped_binary_is_refused_after_its_first_piece(files, run_cli):
    (files / "bin.gz").write_bytes(gzip.compress(bytes(50 << 20)))
    code, _, err = run_cli(["eval", str(files / "bin.gz"), str(files / "run")])
    assert "binary data (a NUL byte at byte 0)" in _one_line(code, err)


# --- exit statuses: a crash or a resource error is never 1 ---------------------------------------------------

@pytest.mark.parametrize(("exc", "status", "start"), [
    (MemoryError(), 71, "ranklens: error: out of memory"),
    (OSError(28, "No space left on device", "out.json"), 71, "ranklens: error: out of disk space"),
    (OSError(5, "Input/output error", "qrels"), 71, "ranklens: error: out of disk space or another resource"),
    (ResourceError("store 's.duckdb': cannot write: the disk holding it is full"), 71, "ranklens: error: store"),
    (ZeroDivisionError("planted"), 70, "ranklens: internal error: ZeroDivisionError"),
    (RecursionError("deep"), 70, "ranklens: internal error: RecursionError"),
    (KeyboardInterrupt(), 130, "ranklens: error: interrupted"),
    (BrokenPipeError(32, "Broken pipe"), 141, ""),
    (InputError("bad line"), 2, "ranklens: error: bad line"),
])
def test_each_kind_of_failure_has_its_own_status_and_none_is_1(exc, status, start, files, run_cli, monkeypatch):
    def boom(*args, **kwargs):
        raise exc

    monkeypatch.chdir(files)
    monkeypatch.setattr(sys.modules["ranklens._core.evaluate"], "evaluate", boom)
    monkeypatch.delenv("RANKLENS_DEBUG", raising=False)
    code, _, err = run_cli(["eval", "qrels", "run"])
    assert code == status and code != 1, (code, err)
    assert err.startswith(start) and err.count("\n") <= 1, err


def test_a_store_on_a_full_disk_is_a_resource_error():
    from ranklens.monitor.storage.db import store_failure

    exc = store_failure(Path("s.duckdb"), OSError("IO Error: Could not write file: No space left on device"))
    assert isinstance(exc, ResourceError) and describe(exc)[1] == 71
    exc = store_failure(Path("s.duckdb"), OSError("IO Error: Cannot open file: Permission denied"))
    assert not isinstance(exc, ResourceError) and describe(exc)[1] == 2


def test_out_of_memory_in_a_real_process_exits_71(files):
    script = ("import sys, ranklens._core.evaluate\n"
              "def boom(*a, **k):\n    raise MemoryError\n"
              "sys.modules['ranklens._core.evaluate'].evaluate = boom\n"
              "from ranklens.cli import main\nmain()\n")
    proc = subprocess.run([sys.executable, "-c", script, "eval", "qrels", "run"], capture_output=True, text=True,
                          timeout=120, cwd=files, env={k: v for k, v in os.environ.items() if k != "RANKLENS_DEBUG"})
    assert proc.returncode == 71 and proc.stderr.startswith("ranklens: error: out of memory"), proc.stderr


def test_docs_cli_lists_every_exit_status():
    text = (Path(__file__).parents[1] / "docs" / "cli.md").read_text()
    table = dict(re.findall(r"^\| (\d+) \| (.+?) \|$", text, re.M))
    assert sorted(map(int, table)) == sorted(EXIT_STATUSES), table
