"""The ingest's 64-bit hashes (storage/chunk.py): a list's number ``li`` hashes its batch and ``group_id`` (the whole
key when two lists share those), and the checks for a repeated row (an item twice in a list, a label row given
twice) count repeated hashes with the kernel ``count_repeats``. A hash only ever decides which path runs: the stored
tables must be those of the paths forced by hand (every hash made equal, every check answering "maybe"), and the
repeats counted must be those numpy's ``unique`` counts.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pytest

import ranklens.monitor.storage.chunk as chunk_module
from ranklens._kernels import api
from ranklens._kernels.dispatch import call
from ranklens.monitor import Store

from .test_ingest_chunks import _dump, _file, _label, _ranked, _values, files  # noqa: F401 (a fixture)


def _by_hand(h: np.ndarray) -> int:
    return len(h) - len(np.unique(h))


@pytest.mark.parametrize("mode", ["aot", "jit"])
def test_count_repeats_equals_numpy(mode):
    rng = np.random.default_rng(7)
    cases = [np.zeros(0, np.uint64), np.array([3], np.uint64), np.array([3, 3], np.uint64),
             np.array([5, 3, 5, 7, 3, 5], np.uint64), np.full(5000, 2**64 - 1, np.uint64),
             rng.integers(0, 1000, 300_000).astype(np.uint64)]  # top bits all zero: one bucket, many repeats
    for n in (1023, 1024, 1025, 50_000, 2_600_000):  # around the bucket sizes, and a chunk's ranked rows
        h = rng.integers(0, 2**63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64)
        cases.append(h.copy())
        h[rng.integers(0, n, 7)] = h[0]  # planted repeats (some may land on one another or on row 0)
        h[-1] = h[n // 2]
        cases.append(h)
    with api.forced(mode):
        for h in cases:
            assert call("count_repeats", h) == _by_hand(h)


def _shadow_files(d: Path) -> list[Path]:
    """One request (group_id) served by several models and versions in one file: lists sharing batch and group_id."""
    d.mkdir()
    rows = [
        *_ranked("01", "g1", "abc"),                                      # m v1
        *_ranked("01", "g1", "abd", version="v2"),                        # m v2: the same request
        *[(r[0], "m2", *r[2:]) for r in _ranked("01", "g1", "xab")],       # m2 v1
        ("2026-10-01T10:00:00", "m2", "v1", "production", "g1", "a", 4, None, None, [], "US"),  # a twice in m2's list
        *_ranked("01", "g2", "ab"),
        _label("01", "g1", "a", ["click"]),                               # a label for every list of g1
        _label("01", "g1", "a", ["click"]),                               # the same label row twice
    ]
    f1 = _file(d / "f1.parquet", rows)
    f2 = _file(d / "f2.parquet", [*_ranked("02", "g1", "abc"), _label("02", "g1", "b", ["click"])])  # g1 again
    return [f1, f2]


def test_lists_of_one_request_served_by_several_models(tmp_path):
    paths = [str(p) for p in _shadow_files(tmp_path / "in")]
    store = tmp_path / "s.duckdb"
    summary = Store(store, config={}).ingest(paths)
    f1, f2 = summary.batches
    # by hand: f1 has the lists (m, v1, g1) abc, (m, v2, g1) abd, (m2, v1, g1) xab (its second a quarantined), (m, v1,
    # g2) ab; its two label rows are one; f2's (m, v1, g1) is stored already (skipped), its label row a late label
    assert (f1["groups"], f1["ranking_rows"], f1["reasons"]) == (4, 11, {"duplicate item in group": 1})
    assert (f1["label_rows"], f2["groups"], f2["skipped"], f2["updated_groups"]) == (2, 0, 3, 3)
    con = duckdb.connect(str(store), read_only=True)
    try:
        lists = con.execute("""SELECT g.model, g.model_version, g.group_id, string_agg(k.item_id, '' ORDER BY i.rank)
            FROM groups g JOIN items i USING (gid) JOIN item_keys k USING (iid) GROUP BY ALL ORDER BY ALL""").fetchall()
        labels = con.execute("""SELECT g.model, g.model_version, g.group_id, k.item_id, l.label FROM item_labels l
            JOIN groups g USING (gid) JOIN item_keys k USING (iid) ORDER BY ALL""").fetchall()
    finally:
        con.close()
    assert lists == [("m", "v1", "g1", "abc"), ("m", "v1", "g2", "ab"), ("m", "v2", "g1", "abd"),
                     ("m2", "v1", "g1", "xab")]
    assert labels == [(m, v, "g1", it, "click") for m, v in (("m", "v1"), ("m", "v2"), ("m2", "v1"))
                      for it in ("a", "b")]


@pytest.mark.parametrize("forced", ["whole key", "numbered", "checks say maybe"])
def test_stores_equal_whichever_path_the_hashes_choose(files, tmp_path, monkeypatch, forced):  # noqa: F811
    # the paths a hash can choose, forced: every list sharing the short hash (so the whole key numbers them), every
    # list sharing both (so they are numbered and their items joined), every repeat check answering "maybe" (so the
    # exact searches run); the fixture's files and the shadow files hit every rule (repeats included)
    order = [str(f) for f in files] + [str(p) for p in _shadow_files(tmp_path / "shadow")]
    usual = tmp_path / "usual.duckdb"
    Store(usual, config={}).ingest(order, max_quarantine=0.5)
    if forced in ("whole key", "numbered"):
        monkeypatch.setattr(chunk_module, "LIST_HASH", "hash(0)")
    if forced == "numbered":
        monkeypatch.setattr(chunk_module, "KEY_HASH", "hash(0)")
    exact: list[str] = []
    if forced == "checks say maybe":
        real = chunk_module.mark_duplicates
        monkeypatch.setattr(chunk_module, "repeats", lambda con, sql: 1)
        monkeypatch.setattr(chunk_module, "mark_duplicates", lambda con: exact.append("items") or real(con))
    other = tmp_path / "forced.duckdb"
    Store(other, config={}).ingest(order, max_quarantine=0.5)
    assert _dump(usual) == _dump(other)
    assert _values(usual) == _values(other)
    if forced == "checks say maybe":
        assert exact  # the exact search ran on every chunk
