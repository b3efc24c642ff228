"""`ranklens monitor ingest --engine spark` (#32 point 7): the events -> served lists reduction runs in Spark's
executors and the store holds the same contents as after the local ingest, table by table, row by row, and the
reports read from it are equal. Spark in local mode (local[2], several partitions)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from ranklens.cli import cli
from ranklens.monitor import Store

pytestmark = pytest.mark.spark

TABLES = {
    "groups": "SELECT * EXCLUDE (batch_id) , batch_id FROM groups",
    "items": "SELECT * FROM items",
    "item_labels": "SELECT * FROM item_labels",
    "feedback": "SELECT * FROM feedback",
    "quarantine": "SELECT * FROM quarantine",
    "batches": "SELECT * EXCLUDE (ingested_at) FROM batches",
    "slice_columns": "SELECT * FROM slice_columns",
}
CONFIG = {"signals": {"features": {"price": "numeric", "brand": "categorical"}}}


@pytest.fixture(scope="module")
def spark():
    from ranklens import spark as rs

    s = rs.session("local[2]", app_name="ranklens-tests", spark_ui_enabled="false", spark_sql_shuffle_partitions="3",
                   spark_default_parallelism="3", spark_sql_adaptive_enabled="false",
                   spark_sql_session_timeZone="UTC")
    s.sparkContext.setLogLevel("OFF")
    yield s


def contents(st):
    import duckdb

    with duckdb.connect(str(st.path), read_only=True) as con:
        return {t: sorted(con.execute(q).fetchall(), key=repr) for t, q in TABLES.items()}


def files(tmp_path):
    """Simulated days (slices, labels arriving late) with features, and a CSV with what validation catches: a
    list holding an item twice, a list mixing ranked and unranked rows, a missing item id, a line that does not
    split, a list also served in an earlier file, a label row repeated, label rows for earlier lists."""
    from ranklens.monitor.simulate import simulate

    ev = simulate(None, days=3, groups_per_day=150, late_fraction=0.5, max_delay_hours=30, seed=4)
    n = ev.num_rows
    ev = ev.append_column("price", pa.array([float(i % 17) if i % 11 else None for i in range(n)]))
    ev = ev.append_column("brand", pa.array(["abc"[i % 3] if i % 7 else "" for i in range(n)]))
    days = sorted({str(t)[:10] for t in ev.column("timestamp").to_pylist()})
    out = []
    for d in days:
        keep = pa.array([str(t)[:10] == d for t in ev.column("timestamp").to_pylist()])
        p = tmp_path / f"events-{d}.parquet"
        pq.write_table(ev.filter(keep), p)
        out.append(p)
    first_group = ev.column("group_id")[0].as_py()
    csv = tmp_path / "edge.csv"
    csv.write_text(
        "timestamp,model,model_version,environment,group_id,item_id,rank,score,labels,price,brand,device\n"
        "2026-10-02T01:00:00,m,v1,production,dup,a,1,,click,1.5,x,mobile\n"
        "2026-10-02T01:00:00,m,v1,production,dup,a,2,,,2.5,y,mobile\n"
        "2026-10-02T01:00:00,m,v1,production,dup,b,3,,,abc,y,mobile\n"
        "2026-10-02T02:00:00,m,v1,production,mix,a,1,,,,x,desktop\n"
        "2026-10-02T02:00:00,m,v1,production,mix,b,,0.5,,,x,desktop\n"
        "2026-10-02T03:00:00,m,v1,production,noitem,,1,,,,,desktop\n"
        "2026-10-02T03:00:00,m,v1,production,broken,a,1\n"
        f"2026-10-02T04:00:00,{ev.column('model')[0].as_py()},{ev.column('model_version')[0].as_py()},"
        f"{ev.column('environment')[0].as_py()},{first_group},zz,1,,,,,\n"
        f"2026-10-02T05:00:00,,,,{first_group},zz,,,purchase,,,\n"
        f"2026-10-02T05:00:00,,,,{first_group},zz,,,purchase,,,\n"
        "2026-10-02T06:00:00,,,,dup,a,,,purchase,,,\n")
    return out, csv


def test_spark_ingest_stores_what_the_local_ingest_stores(tmp_path, spark):
    parquet, csv = files(tmp_path)
    local = Store(tmp_path / "local.duckdb", config=CONFIG)
    on_spark = Store(tmp_path / "spark.duckdb", config=CONFIG)
    # two calls: the second meets lists already stored and brings late labels for them
    for batch in ([*parquet[:2], csv], parquet[2:] + [csv]):
        a = local.ingest(batch).to_dict()
        b = on_spark.ingest(batch, engine="spark").to_dict()
        for x in (a, b):
            for info in x["batches"]:
                info.pop("batch_id", None)
        assert a == b
    got, want = contents(on_spark), contents(local)
    assert want["quarantine"] and want["feedback"] and want["slice_columns"]  # the edges were exercised
    for t in TABLES:
        assert got[t] == want[t], t
    # the reports and signals read from either store (repr: NaN equals NaN)
    assert repr(local.report(["ndcg@10"]).to_pylist()) == repr(on_spark.report(["ndcg@10"]).to_pylist())
    assert repr(local.signals().to_pylist()) == repr(on_spark.signals().to_pylist())


def test_cli_engine_spark_and_its_errors(tmp_path, spark):
    parquet, _ = files(tmp_path)
    r = CliRunner().invoke(cli, ["monitor", "ingest", str(parquet[0]), "--store", str(tmp_path / "s.duckdb"),
                                 "--engine", "spark", "--master", "local[2]", "-f", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["batches"][0]["status"] == "ingested"
    r = CliRunner().invoke(cli, ["monitor", "ingest", str(parquet[0]), "--store", str(tmp_path / "t.duckdb"),
                                 "--master", "local[2]"])
    assert r.exit_code == 2 and "--master needs --engine spark" in r.output
