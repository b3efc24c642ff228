"""Ingest that protects pipelines (issue 19, point 4): hand-made malformed batches, each outcome checked
from outside: the command's exit status and summary, and what the store holds, read by SQL."""

from __future__ import annotations

import datetime as dt
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from ranklens.cli import cli

from .handcalc import ndcg

RANKLENS = [sys.executable, "-m", "ranklens.cli"]
HEAD = "timestamp,model,model_version,environment,group_id,item_id,rank,score,labels"


def run(args, code=0):
    r = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert r.exit_code == code, r.output
    return r.output


def sql(store, query):
    con = duckdb.connect(str(store), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def proc(*args, **kw):
    """The real command in its own process: (exit status, stderr)."""
    p = subprocess.run([*RANKLENS, *map(str, args)], capture_output=True, text=True, **kw)
    return p.returncode, p.stderr


def one_line_error(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ranklens: error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# -- --max-quarantine ---------------------------------------------------------------------------------------
def _mostly_bad(tmp_path: Path) -> Path:
    """17 rows: 2 good ones (one list), 15 without an item id (the issue's 15 of 17)."""
    rows = [f"2026-10-01T10:00:00,m,v1,production,g1,{item},{r},," for r, item in ((1, "a"), (2, "b"))]
    rows += [f"2026-10-01T10:00:00,m,v1,production,g{n},,1,," for n in range(2, 17)]
    return write(tmp_path / "bad.csv", "\n".join([HEAD, *rows]) + "\n")


def test_max_quarantine_keeps_the_batch_out(tmp_path):
    f = _mostly_bad(tmp_path)
    store = tmp_path / "s.duckdb"
    out = run(["monitor", "ingest", f, "--store", store, "--max-quarantine", "0.5"], code=3)
    assert "refused, nothing stored: 15 of 17 rows (88.2%) would be quarantined" in out
    assert "15: missing item_id" in out and "e.g. row 3: missing item_id" in out
    # nothing of it stored, not even its quarantine, and not recorded as ingested
    assert sql(store, "SELECT (SELECT count(*) FROM groups), (SELECT count(*) FROM items), "
                      "(SELECT count(*) FROM quarantine), (SELECT count(*) FROM batches)") == [(0, 0, 0, 0)]
    summary = json.loads(run(["monitor", "ingest", f, "--store", store, "--max-quarantine", "0.5", "-f", "json"],
                             code=3))
    b = summary["batches"][0]
    assert (b["status"], b["rows"], b["quarantined"], b["reasons"]) == ("refused", 17, 15, {"missing item_id": 15})
    assert summary["refused"] == 1 and summary["quarantined"] == 0  # totals count what was stored
    # a limit it is under (15/17 = 0.882 <= 0.9), then no limit: the same file is ingested as new
    run(["monitor", "ingest", f, "--store", store, "--max-quarantine", "0.9"])
    assert sql(store, "SELECT (SELECT count(*) FROM groups), (SELECT count(*) FROM items), "
                      "(SELECT count(*) FROM quarantine), (SELECT count(*) FROM batches)") == [(1, 2, 15, 1)]


def test_max_quarantine_from_the_configuration(tmp_path):
    f = _mostly_bad(tmp_path)
    good = write(tmp_path / "good.csv", f"{HEAD}\n2026-10-01T10:00:00,m,v1,production,x,a,1,,click\n")
    cfg = write(tmp_path / "ranklens.toml", "[ingest]\nmax_quarantine = 0.1\n")
    store = tmp_path / "s.duckdb"
    out = run(["monitor", "ingest", f, good, "--store", store, "--config", cfg], code=3)
    assert "bad.csv: refused" in out and "1 files refused" in out
    # the other file of the call is ingested
    assert sql(store, "SELECT group_id FROM groups") == [("x",)]
    # the option wins over the key
    run(["monitor", "ingest", f, "--store", store, "--config", cfg, "--max-quarantine", "1"])
    bad = write(tmp_path / "bad.toml", "[ingest]\nmax_quarantine = 1.5\n")
    code, err = proc("monitor", "ingest", f, "--store", store, "--config", bad)
    assert code == 2 and "max_quarantine` must be a fraction between 0 and 1; got 1.5" in one_line_error(err)


# -- rows judged one by one ---------------------------------------------------------------------------------
def test_mixed_type_json_lines_column_is_read_row_by_row(tmp_path):
    epoch = 1790848800  # an epoch integer among ISO strings
    base = {"model": "m", "model_version": "v1", "environment": "production"}
    rows = [
        {"timestamp": "2026-10-01T10:00:00", "group_id": "g1", "item_id": "a", "rank": 1, **base},
        {"timestamp": "2026-10-01T10:00:00", "group_id": "g1", "item_id": "b", "rank": "2", **base},
        {"timestamp": epoch, "group_id": "g2", "item_id": "a", "rank": 1, **base},
        {"timestamp": "yesterday", "group_id": "g3", "item_id": "a", "rank": 1, **base},
        {"timestamp": "2026-10-01T12:00:00", "group_id": "g4", "item_id": "a", "rank": "first", **base},
    ]
    f = write(tmp_path / "mixed.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    store = tmp_path / "s.duckdb"
    out = run(["monitor", "ingest", f, "--store", store])
    assert "5 rows -> 2 groups (3 ranked items), 0 label rows, 2 quarantined" in out
    assert sql(store, "SELECT row_number, reason FROM quarantine ORDER BY 1") == [
        (4, "timestamp is not a date or time"), (5, "rank is not a positive integer")]
    expected = dt.datetime.fromtimestamp(epoch, dt.timezone.utc).replace(tzinfo=None)
    assert sql(store, "SELECT group_id, ts, n_items FROM groups ORDER BY group_id") == [
        ("g1", dt.datetime(2026, 10, 1, 10), 2), ("g2", expected, 1)]


def test_nan_and_infinite_scores_are_quarantined_not_label_rows(tmp_path):
    rows = ["2026-10-01T10:00:00,m,v1,production,g1,a,,0.5,click",
            "2026-10-01T10:00:00,m,v1,production,g1,b,,NaN,",
            "2026-10-01T10:00:00,m,v1,production,g1,c,,inf,",
            "2026-10-01T10:00:00,m,v1,production,g1,d,,-Infinity,click",
            "2026-10-01T10:00:00,m,v1,production,g2,a,,nan,click",
            "1790848800,m,v1,production,g3,a,,0.25,"]
    f = write(tmp_path / "scores.csv", "\n".join([HEAD, *rows]) + "\n")
    store = tmp_path / "s.duckdb"
    out = run(["monitor", "ingest", f, "--store", store])
    assert "6 rows -> 2 groups (2 ranked items), 0 label rows, 4 quarantined" in out
    assert sql(store, "SELECT row_number, reason FROM quarantine ORDER BY 1") == [
        (r, "score is not a finite number") for r in (2, 3, 4, 5)]
    assert sql(store, "SELECT count(*) FROM feedback") == [(0,)]
    assert sql(store, "SELECT g.group_id, k.item_id, i.score FROM items i JOIN groups g USING (gid) "
               "JOIN item_keys k USING (iid) ORDER BY 1") == [
        ("g1", "a", 0.5), ("g3", "a", 0.25)]


def test_unclosed_quote_is_quarantined_by_line(tmp_path):
    lines = [HEAD,
             "2026-10-01T10:00:00,m,v1,production,g1,a,1,,click",
             '2026-10-01T10:00:00,m,v1,production,g1,"b,2,,',          # line 3: the quote never closes
             "2026-10-01T10:00:00,m,v1,production,g1,c,3,,",
             '2026-10-01T10:00:00,m,v1,production,g1,d,4,,"click"',     # quotes that close are fine
             "2026-10-01T10:00:00,m,v1,production,g1,e,5,,,",           # line 6: one field too many
             "2026-10-01T10:00:00,m,v1,production,g2,a,1,,click"]
    f = write(tmp_path / "quote.csv", "\n".join(lines) + "\n")
    store = tmp_path / "s.duckdb"
    out = run(["monitor", "ingest", f, "--store", store])
    assert "6 rows -> 2 groups (4 ranked items), 0 label rows, 2 quarantined" in out
    rows = sql(store, "SELECT source, row_number, reason, record FROM quarantine ORDER BY row_number")
    assert [(Path(s).name, n, why, json.loads(rec)["text"]) for s, n, why, rec in rows] == [
        ("quote.csv", 3, "unclosed quote", lines[2]),
        ("quote.csv", 6, "row has 10 fields, the header has 9", lines[5])]
    assert sql(store, "SELECT g.group_id, k.item_id, i.rank FROM items i JOIN groups g USING (gid) "
               "JOIN item_keys k USING (iid) ORDER BY 1, 3") == [
        ("g1", "a", 1), ("g1", "c", 3), ("g1", "d", 4), ("g2", "a", 1)]
    # the labels of the lines after the broken one are theirs, not swallowed into a value
    assert sql(store, "SELECT count(*) FROM item_labels WHERE label = 'click'") == [(3,)]


def test_label_rows_are_stored_once_whatever_the_format(tmp_path):
    store = tmp_path / "s.duckdb"
    ranking = [{"timestamp": "2026-10-01T10:00:00", "model": "m", "model_version": "v1", "environment": "production",
                "group_id": "g1", "item_id": item, "rank": r} for r, item in enumerate("abcd", start=1)]
    write(tmp_path / "rank.jsonl", "".join(json.dumps(r) + "\n" for r in ranking))
    run(["monitor", "ingest", tmp_path / "rank.jsonl", "--store", store])
    labels = [{"timestamp": "2026-10-02T11:00:00.250", "group_id": "g1", "item_id": "c", "labels": ["click", "buy"]},
              {"timestamp": "2026-10-02T12:00:00", "group_id": "g1", "item_id": "b", "labels": ["click"]}]
    write(tmp_path / "labels.jsonl", "".join(json.dumps(r) + "\n" for r in labels))
    out = run(["monitor", "ingest", tmp_path / "labels.jsonl", "--store", store])
    assert "2 label rows, 0 quarantined" in out
    # the same label rows exported as CSV and TSV: other time formats, label order, an offset
    write(tmp_path / "labels.csv", "group_id,item_id,timestamp,labels\n"
          "g1,c,2026-10-02 11:00:00.25,buy|click\n"
          "g1,b,2026-10-02T14:00:00+02:00,click\n")
    write(tmp_path / "labels.tsv", "group_id\titem_id\ttimestamp\tlabels\n"
          "g1\tb\t2026-10-02T12:00:00\tclick\ng1\tb\t2026-10-02T12:00:00\tclick\n")
    out = run(["monitor", "ingest", tmp_path / "labels.csv", tmp_path / "labels.tsv", "--store", store, "-f", "json"])
    batches = json.loads(out)["batches"]
    assert [(b["label_rows"], b["known_label_rows"]) for b in batches] == [(2, 2), (2, 2)]
    assert sql(store, "SELECT count(*) FROM feedback") == [(2,)]
    assert sql(store, "SELECT count(*), count(DISTINCT (iid, label)) FROM item_labels") == [(3, 3)]
    # a new label row is stored
    write(tmp_path / "more.csv", "group_id,item_id,timestamp,labels\ng1,d,2026-10-03T09:00:00,click\n")
    run(["monitor", "ingest", tmp_path / "more.csv", "--store", store])
    assert sql(store, "SELECT count(*) FROM feedback") == [(3,)]
    rep = run(["monitor", "report", "-m", "ndcg@4", "--ci", "none", "-f", "json", "--store", store])
    assert json.loads(rep)[0]["value"] == pytest.approx(ndcg([0, 1, 1, 1], 4), abs=1e-12)


# -- the store: ours, damaged, full -------------------------------------------------------------------------
def _events_file(tmp_path: Path) -> Path:
    return write(tmp_path / "ev.csv", f"{HEAD}\n2026-10-01T10:00:00,m,v1,production,g1,a,1,,click\n"
                                      "2026-10-01T10:00:00,m,v1,production,g1,b,2,,\n")


def test_another_applications_duckdb_file_is_refused(tmp_path):
    other = tmp_path / "crm.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE customers (id INTEGER, name VARCHAR)")
    con.execute("INSERT INTO customers VALUES (1, 'Ada')")
    con.close()
    before = other.read_bytes()
    for cmd in (["ingest", _events_file(tmp_path)], ["report"], ["info"]):
        code, err = proc("monitor", *cmd, "--store", other)
        assert code == 2
        assert one_line_error(err) == (
            f"ranklens: error: store '{other}' is not a ranklens store: it is a DuckDB database of another "
            "application (tables customers); ranklens does not write into it. Give --store a new file.")
    assert other.read_bytes() == before
    assert sql(other, "SELECT table_name FROM information_schema.tables") == [("customers",)]


def test_store_is_marked_and_an_earlier_store_is_adopted(tmp_path):
    store = tmp_path / "s.duckdb"
    run(["monitor", "ingest", _events_file(tmp_path), "--store", store])
    assert sql(store, "SELECT value FROM meta WHERE key = 'application'") == [("ranklens-monitor",)]
    # a store written by a ranklens before the marker: our tables and schema version, no marker
    con = duckdb.connect(str(store))
    con.execute("DELETE FROM meta WHERE key = 'application'")
    con.close()
    info = json.loads(run(["monitor", "info", "--store", store]))  # a reader reads it as it is
    assert info["groups"] == 1
    assert sql(store, "SELECT count(*) FROM meta WHERE key = 'application'") == [(0,)]
    write(tmp_path / "more.csv", f"{HEAD}\n2026-10-02T10:00:00,m,v1,production,g2,a,1,,click\n")
    run(["monitor", "ingest", tmp_path / "more.csv", "--store", store])  # the first writer marks it
    assert sql(store, "SELECT value FROM meta WHERE key = 'application'") == [("ranklens-monitor",)]
    assert sql(store, "SELECT group_id FROM groups ORDER BY 1") == [("g1",), ("g2",)]


def test_damaged_store_is_one_line(tmp_path):
    store = tmp_path / "s.duckdb"
    big = tmp_path / "big.csv"
    rows = [f"2026-10-01T10:00:00,m,v1,production,g{i // 10},i{i},{i % 10 + 1},,click" for i in range(50_000)]
    write(big, "\n".join([HEAD, *rows]) + "\n")
    run(["monitor", "ingest", big, "--store", store])
    data = store.read_bytes()
    truncated = tmp_path / "truncated.duckdb"
    truncated.write_bytes(data[: len(data) // 3])
    corrupt = bytearray(data)
    for off in range(len(data) // 2, len(data), 4096):  # pages of data overwritten
        corrupt[off: off + 256] = b"\xff" * 256
    damaged = tmp_path / "damaged.duckdb"
    damaged.write_bytes(bytes(corrupt))
    for path in (truncated, damaged):
        for cmd in (["report", "--ci", "none"], ["ingest", _events_file(tmp_path)]):
            code, err = proc("monitor", *cmd, "--store", path)
            line = one_line_error(err)
            assert code == 2 and line.startswith(f"ranklens: error: store '{path}' "), line
            assert "damaged" in line or "cannot be opened" in line, line


def _fill(store: Path, tmp_path: Path, preexec=None) -> tuple[int, str]:
    rows = [f"2026-10-01T10:00:00,m,v1,production,g{i // 10},item-{i:07d},{i % 10 + 1},,click" for i in range(200_000)]
    big = write(tmp_path / "big.csv", "\n".join([HEAD, *rows]) + "\n")
    return proc("monitor", "ingest", big, "--store", store, preexec_fn=preexec)


def test_file_size_limit_names_the_cause(tmp_path):
    """A write that fails half way (RLIMIT_FSIZE, as a full disk does): the cause in one line, status 71 (a
    resource of the machine: neither a verdict nor the input's fault), and the batch absent; DuckDB's 'cannot
    rollback - no transaction is active' does not hide it."""
    store = tmp_path / "s.duckdb"
    run(["monitor", "ingest", _events_file(tmp_path), "--store", store])
    size = store.stat().st_size

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing us
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 300_000, size + 300_000))

    code, err = _fill(store, tmp_path, limit)
    line = one_line_error(err)
    assert code == 71
    assert "File too large" in line and "rollback" not in line, line
    # the store is as it was: the first batch only
    assert sql(store, "SELECT group_id FROM groups") == [("g1",)]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="mounting a small tmpfs needs root")
def test_full_disk_names_the_cause(tmp_path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    # room for the first store twice (a writer writes a copy of the store and swaps it in at commit), not for
    # the second ingest
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8000k", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("mount refused (a container without the capability)")
    try:
        store = mnt / "s.duckdb"
        run(["monitor", "ingest", _events_file(tmp_path), "--store", store])
        code, err = _fill(store, tmp_path)
        line = one_line_error(err)
        assert code == 71 and "No space left on device" in line and "rollback" not in line, line
        assert sql(store, "SELECT group_id FROM groups") == [("g1",)]
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
