"""Parquet files of one schema are loaded together (one transaction, one relation): the store they leave,
and what the ingest says of each file, must be those of ingesting the files one after the other.

The reference is the one-file-per-call path (each call a chunk of one), whose semantics the other tests of
tests/monitor check against hand computations; here the two paths are compared table by table on files
built to hit every rule that crosses files: a list repeated in a later file (skipped), late labels for lists
of earlier and later files, a label row repeated across files and within one (stored once), in-line labels,
explicit relevance, quarantined rows, an item twice in a list, a list mixing rank and score, the same file
twice in one call, and a file refused by ``max_quarantine``.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ranklens.monitor.storage.ingest as ingest_module
from ranklens.errors import InputError
from ranklens.monitor import Store

COLS = ["timestamp", "model", "model_version", "environment", "group_id", "item_id", "rank", "score",
        "relevance", "labels", "country"]


def _file(path: Path, rows: list[tuple]) -> Path:
    data = {c: [r[i] for r in rows] for i, c in enumerate(COLS)}
    pq.write_table(pa.table({
        "timestamp": pa.array(data["timestamp"], pa.string()),
        "model": pa.array(data["model"], pa.string()),
        "model_version": pa.array(data["model_version"], pa.string()),
        "environment": pa.array(data["environment"], pa.string()),
        "group_id": pa.array(data["group_id"], pa.string()),
        "item_id": pa.array(data["item_id"], pa.string()),
        "rank": pa.array(data["rank"], pa.int64()),
        "score": pa.array(data["score"], pa.float64()),
        "relevance": pa.array(data["relevance"], pa.float64()),
        "labels": pa.array(data["labels"], pa.list_(pa.string())),
        "country": pa.array(data["country"], pa.string()),
    }), path)
    return path


def _ranked(day: str, group: str, items: str, country: str = "US", labels: dict | None = None,
            version: str = "v1") -> list[tuple]:
    labels = labels or {}
    return [(f"2026-10-{day}T10:00:00", "m", version, "production", group, it, r, None, None,
             labels.get(it, []), country) for r, it in enumerate(items, start=1)]


def _label(day: str, group: str, item: str, labels: list[str] | None = None, relevance: float | None = None):
    return (f"2026-10-{day}T18:00:00", None, None, None, group, item, None, None, relevance, labels, None)


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    d = tmp_path / "in"
    d.mkdir()
    f1 = _file(d / "f1.parquet", [
        *_ranked("01", "g1", "abcd", labels={"b": ["click"]}),
        *_ranked("01", "g2", "abc", country="BR"),
        *_ranked("01", "g3", "ab", version="v2"),
        _label("01", "g2", "c", ["click"]),
        _label("01", "g9", "a", ["buy", "click"]),            # for a list that arrives in f3
        ("2026-10-01T10:00:00", "m", "v1", "production", "g4", "a", 1, None, None, [], "US"),
        ("2026-10-01T10:00:00", "m", "v1", "production", "g4", "a", 2, None, None, [], "US"),  # item twice
        ("2026-10-01T10:00:00", "m", "v1", "production", "g5", "a", 1, None, None, [], "US"),
        ("2026-10-01T10:00:00", "m", "v1", "production", "g5", "b", None, 0.5, None, [], "US"),  # mixed
        ("2026-10-01T10:00:00", "m", "v1", "staging", "g6", "a", 1, None, None, [], "US"),  # quarantined
    ])
    f2 = _file(d / "f2.parquet", [
        *_ranked("02", "g1", "abcd"),                           # repeated list: skipped
        *_ranked("02", "g7", "xyz", country="DE"),
        _label("02", "g1", "c", ["click"]),                     # late label for f1's list
        _label("01", "g2", "c", ["click"]),                     # repeats f1's label row: stored once
        _label("02", "g7", "y", None, relevance=2.0),
        _label("02", "g7", "y", None, relevance=2.0),           # repeated within the file
        _label("02", "g8", "q", ["click"]),                     # for a list that arrives in f3
    ])
    f3 = _file(d / "f3.parquet", [
        *_ranked("03", "g8", "pq"),
        *_ranked("03", "g9", "ab"),
        _label("03", "g7", "x", ["favorite"]),
        _label("03", "g1", "a", ["click"]),
    ])
    bad = _file(d / "f4.parquet", [
        ("2026-10-04T10:00:00", "m", "v1", "production", None, "a", 1, None, None, [], "US"),
        ("2026-10-04T10:00:00", "m", "v1", "production", None, "b", 2, None, None, [], "US"),
        *_ranked("04", "g10", "a"),
    ])
    f5 = _file(d / "f5.parquet", [*_ranked("05", "g11", "ab"), _label("05", "g10", "a", ["click"])])
    return [f1, f2, f3, f1, bad, f5]


TABLES = {
    "groups": "SELECT gid, model, model_version, environment, group_id, ts, n_items, n_relevant, order_by, source, "
              "batch_id, s_country FROM groups ORDER BY gid",
    # items by their id text: the numbers (iid) follow the order the ids were first stored, chunk by chunk
    "items": "SELECT k.item_id, i.* EXCLUDE (iid) FROM items i JOIN item_keys k USING (iid) ORDER BY ALL",
    "item_labels": "SELECT k.item_id, l.* EXCLUDE (iid) FROM item_labels l JOIN item_keys k USING (iid) ORDER BY ALL",
    "feedback": "SELECT group_id, k.item_id, ts, relevance, list_sort(labels), batch_id FROM feedback "
                "JOIN item_keys k USING (iid) ORDER BY ALL",
    "item_keys": "SELECT count(*), count(DISTINCT iid), count(DISTINCT item_id), min(iid), max(iid) FROM item_keys",
    "quarantine": "SELECT * FROM quarantine ORDER BY ALL",
    "batches": "SELECT * EXCLUDE (ingested_at) FROM batches ORDER BY ALL",
}


def _dump(path: Path) -> dict[str, list]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return {t: con.execute(q).fetchall() for t, q in TABLES.items()}
    finally:
        con.close()


def _values(path: Path) -> list:
    return Store(path, config={}, read_only=True).groups("ndcg@10", order="best", limit=100).to_pylist()


def test_files_loaded_together_equal_one_by_one(files, tmp_path, monkeypatch):
    calls = []
    real = ingest_module.store_chunk  # every chunk is stored by it, whichever connection made its tables
    monkeypatch.setattr(ingest_module, "store_chunk",
                        lambda con, chunk, *a: calls.append(len(chunk)) or real(con, chunk, *a))
    together = tmp_path / "together.duckdb"
    summary = Store(together, config={}).ingest([str(f) for f in files], max_quarantine=0.5)
    # f1, f2, f3 in one chunk; f1 again is judged after it (already ingested); f4 and f5 in one chunk
    assert calls == [3, 2]
    one_by_one = tmp_path / "one_by_one.duckdb"
    store = Store(one_by_one, config={})
    single = [b for f in files for b in store.ingest(str(f), max_quarantine=0.5).batches]
    assert [b["status"] for b in summary.batches] == [
        "ingested", "ingested", "ingested", "already ingested", "refused", "ingested"]
    assert summary.batches == single
    a, b = _dump(together), _dump(one_by_one)
    for table in TABLES:
        assert a[table] == b[table], table
    assert _values(together) == _values(one_by_one)
    # what the rules did, read from the summary (the files above were written for them)
    f1, f2, f3 = summary.batches[:3]
    assert f1["reasons"] == {"duplicate item in group": 1, "group mixes rows with and without rank": 2,
                             "environment is not training, validation or production": 1}
    assert (f2["skipped"], f2["skipped_groups"], f2["known_label_rows"]) == (4, 1, 2)
    assert f2["updated_groups"] == 1 and f3["updated_groups"] == 2  # g1 (g2's row is known) / g7, g1


def test_a_damaged_file_in_a_chunk_is_named_and_the_files_before_it_are_stored(files, tmp_path):
    broken = tmp_path / "in" / "f2b.parquet"
    data = files[1].read_bytes()
    broken.write_bytes(data[:4] + b"\xff" * 64 + data[68:])  # the first page header damaged, the footer intact
    store = tmp_path / "s.duckdb"
    with pytest.raises(InputError, match="f2b.parquet"):
        Store(store, config={}).ingest([str(files[0]), str(broken), str(files[2])])
    con = duckdb.connect(str(store), read_only=True)
    try:
        assert [r[0] for r in con.execute("SELECT source FROM batches").fetchall()] == [str(files[0])]
    finally:
        con.close()


def test_a_schema_change_starts_a_new_chunk(files, tmp_path, monkeypatch):
    # f3 without its slice column, f5 with rank as text: three chunks (f1+f2, f3, f5), the store as one by one
    no_slice = tmp_path / "in" / "f3_noslice.parquet"
    pq.write_table(pq.read_table(files[2]).drop_columns(["country"]), no_slice)
    text_rank = tmp_path / "in" / "f5_text.parquet"
    t = pq.read_table(files[5])
    pq.write_table(t.set_column(t.column_names.index("rank"), "rank", t.column("rank").cast(pa.string())), text_rank)
    order = [files[0], files[1], no_slice, text_rank]
    calls = []
    real = ingest_module.store_chunk  # every chunk is stored by it, whichever connection made its tables
    monkeypatch.setattr(ingest_module, "store_chunk",
                        lambda con, chunk, *a: calls.append(len(chunk)) or real(con, chunk, *a))
    together, one_by_one = tmp_path / "t.duckdb", tmp_path / "o.duckdb"
    summary = Store(together, config={}).ingest([str(f) for f in order])
    assert calls == [2, 1, 1]
    store = Store(one_by_one, config={})
    assert summary.batches == [b for f in order for b in store.ingest(str(f)).batches]
    assert _dump(together) == _dump(one_by_one)


def test_values_refreshed_range_by_range_equal_one_range(files, tmp_path, monkeypatch):
    # the values refresh reads the next gid range's events on a second connection while the current range is
    # computed (storage/values.py): with ranges of a few items, the stored values are those of one range
    import ranklens.monitor.storage.values as values_module

    order = [str(f) for f in files]
    one = tmp_path / "one_range.duckdb"
    Store(one, config={}).ingest(order, max_quarantine=0.5)
    monkeypatch.setattr(values_module, "CHUNK_ITEMS", 3)
    reads: list[int] = []
    real = values_module.events
    monkeypatch.setattr(values_module, "events", lambda con, *a, **k: reads.append(1) or real(con, *a, **k))
    many = tmp_path / "many_ranges.duckdb"
    Store(many, config={}).ingest(order, max_quarantine=0.5)
    assert len(reads) > 3  # several ranges, each read once
    con = duckdb.connect(str(many), read_only=True)
    try:
        cols = [r[0] for r in con.execute("SELECT col FROM metric_columns ORDER BY col").fetchall()]
        assert cols and con.execute("SELECT count(*) FROM groups WHERE dirty").fetchall()[0][0] == 0
    finally:
        con.close()
    sel = ", ".join(["gid", "n_relevant", "dirty", *cols])
    a, b = (duckdb.connect(str(p), read_only=True) for p in (one, many))
    try:
        assert a.execute(f"SELECT {sel} FROM groups ORDER BY gid").fetchall() == \
            b.execute(f"SELECT {sel} FROM groups ORDER BY gid").fetchall()
    finally:
        a.close()
        b.close()
    assert _values(one) == _values(many)


def test_a_chunk_holding_label_rows_already_stored_is_stored_as_one(files, tmp_path, monkeypatch):
    # f2 repeats label rows f1 stored in an earlier call: they are taken out of the chunk's label rows (which,
    # made on the second connection, the writer reads through a view) and the chunk f2+f3 is still stored as one
    # (a DuckDB error in the chunk would store its files one by one: calls [1, 1, 1])
    calls = []
    real = ingest_module.store_chunk
    monkeypatch.setattr(ingest_module, "store_chunk",
                        lambda con, chunk, *a: calls.append(len(chunk)) or real(con, chunk, *a))
    two_calls = Store(tmp_path / "two_calls.duckdb", config={})
    two_calls.ingest(str(files[0]))
    summary = two_calls.ingest([str(files[1]), str(files[2])])
    assert calls == [1, 2]
    assert summary.batches[0]["known_label_rows"] == 2
    one_by_one = Store(tmp_path / "one_by_one.duckdb", config={})
    for f in files[:3]:
        one_by_one.ingest(str(f))
    assert _dump(two_calls.path) == _dump(one_by_one.path)
    assert _values(two_calls.path) == _values(one_by_one.path)
