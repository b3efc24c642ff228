"""Schema version 6: integer item keys (``item_keys``). A store of version 5 (item ids as text in ``items``,
``item_labels`` and ``feedback``) is refused by readers with the line that says how to upgrade, is upgraded
by the first writer, and then gives the same reports, equal to hand computations."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from ranklens.errors import InputError
from ranklens.monitor import Store
from ranklens.monitor.storage import schema as _schema

sys.path.insert(0, str(Path(__file__).parent))
from handcalc import events, ndcg

# served lists (labels in-line) and late label rows; the item "shared" is served in two lists
LISTS = {"x": [[], [], ["click"], [], []], "y": [["click"], [], [], [], []], "z": [[], [], [], [], []]}
LATE = [("x", "x-4", "click"), ("z", "z-2", "click"), ("z", "shared", "click"), ("y", "y-2", "favorite")]
# the gains by hand (binary on click): x gets x-4; z gets z-2 and its item "shared" (z-5); y's favorite is 0
GAINS = {"x": [0, 0, 1, 1, 0], "y": [1, 0, 0, 0, 0], "z": [0, 1, 0, 0, 1]}


def _rows():
    rows = events(LISTS, extra=lambda g: {"price": 1.5})
    for r in rows:
        if r["item_id"] in ("x-5", "z-5"):
            r["item_id"] = "shared"
    late = [{"timestamp": "2026-10-02T09:00:00", "group_id": g, "item_id": i, "labels": [lab], "price": None}
            for g, i, lab in LATE]
    return pa.Table.from_pylist(rows + late)


CONFIG = {"monitors": [], "signals": {"features": {"price": "numeric"}}}


def _v5(src: Path, dst: Path) -> None:
    """A copy of a store written as version 5 wrote it: the item id text in the three tables, no item_keys."""
    shutil.copy(src, dst)
    con = duckdb.connect(str(dst))
    for t, lead in (("items", "gid"), ("item_labels", "gid"), ("feedback", "group_id")):
        con.execute(f"CREATE TABLE _t AS SELECT x.{lead}, k.item_id, x.* EXCLUDE ({lead}, iid) "
                    f"FROM {t} x JOIN item_keys k USING (iid)")
        con.execute(f"DROP TABLE {t}")
        con.execute(f"ALTER TABLE _t RENAME TO {t}")
    con.execute("DROP TABLE item_keys")
    con.execute("UPDATE groups SET dirty = TRUE")  # values computed again, from the upgraded tables
    con.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    con.close()


def _reports(st: Store) -> dict:
    return {
        "groups": sorted((r["group_id"], r["value"]) for r in st.groups("ndcg@5", limit=10).to_pylist()),
        "ndcg@3": sorted((r["group_id"], r["value"]) for r in st.groups("ndcg@3", limit=10).to_pylist()),
        "report": [(r["n_groups"], r["value"]) for r in st.report(["ndcg@5"], ci=None).to_pylist()],
        "explain": [(r["item"], r["gain"]) for r in st.explain("z", k=5).rows],
    }


def test_v5_store_is_refused_by_readers_then_upgraded_with_the_same_reports(tmp_path):
    new = tmp_path / "new.duckdb"
    st = Store(new, config=CONFIG)
    st.ingest(_rows())
    want = _reports(st)
    assert dict(want["groups"]) == pytest.approx({g: ndcg(GAINS[g], 5) for g in GAINS}, abs=1e-12)
    assert want["explain"] == [("z-1", 0), ("z-2", 1), ("z-3", 0), ("z-4", 0), ("shared", 1)]
    con = duckdb.connect(str(new), read_only=True)
    # each item id once, numbered from 1; the three tables hold the numbers
    assert con.execute("SELECT count(*), count(DISTINCT item_id), min(iid), max(iid) FROM item_keys").fetchall() == [
        (14, 14, 1, 14)]
    assert [r[1] for r in con.execute("DESCRIBE items").fetchall()][:2] == ["BIGINT", "INTEGER"]
    con.close()

    old = tmp_path / "old.duckdb"
    _v5(new, old)
    with pytest.raises(InputError, match=r"schema version 5; this ranklens reads version 6\. Open it once for writing"):
        Store(old, read_only=True, config=CONFIG).report(["ndcg@5"], ci=None)
    up = Store(old, config=CONFIG)
    up.refresh()  # a writer upgrades
    assert up.info()["schema_version"] == _schema.SCHEMA_VERSION == 6
    assert _reports(up) == want
    con = duckdb.connect(str(old), read_only=True)
    assert con.execute("SELECT count(*) FROM item_keys").fetchall()[0][0] == 14
    # the feature column of items kept its values through the upgrade
    assert con.execute('SELECT count(*), sum("feature:price") FROM items').fetchall() == [(15, 22.5)]
    con.close()
    # and it takes new events as a store made at version 6 does
    more = events({"w": [["click"], []]}, day="2026-10-03")
    up.ingest(pa.Table.from_pylist(more))
    assert dict((r["group_id"], r["value"]) for r in up.groups("ndcg@5", limit=10).to_pylist())["w"] == 1.0


@pytest.mark.parametrize("table,column", [("items", "gid"), ("items", "iid"), ("item_labels", "iid"),
                                          ("feedback", "iid"), ("feedback", "batch_id")])
def test_the_remade_tables_keep_their_not_null_keys(table, column):
    """Version 6 remakes three tables with CREATE TABLE AS, which keeps no constraint: the keys are set NOT NULL
    again (a store made now, and a store migrated from version 5, refuse a row without them)."""
    con = duckdb.connect()
    _schema.migrate(con)
    nullable = con.execute("SELECT is_nullable FROM information_schema.columns WHERE table_name = ? AND "
                           "column_name = ?", [table, column]).fetchall()
    assert nullable == [("NO",)]
