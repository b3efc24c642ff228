"""``monitor ingest --engine spark --spark-conf KEY=VALUE`` (``Store.ingest(spark_conf=...)``): Spark settings
for the session the ingest starts (the driver's memory: Spark's default 1 GB ran out at 10 million events).
The settings are checked before any Spark starts; the session is replaced here by one that records them."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pytest
from click.testing import CliRunner

import ranklens.spark
from ranklens.cli import cli
from ranklens.errors import InvalidParameterError
from ranklens.monitor import Store

sys.path.insert(0, str(Path(__file__).parent))
from handcalc import events


class _Started(Exception):
    pass


@pytest.fixture
def started(monkeypatch):
    seen: dict = {}

    def fake_session(master="local[*]", app_name="ranklens", config=None, **conf):
        seen.update(master=master, config=dict(config or {}))
        raise _Started

    monkeypatch.setattr(ranklens.spark, "session", fake_session)
    return seen


def test_spark_conf_reaches_the_session(tmp_path, started):
    st = Store(tmp_path / "s.duckdb")
    with pytest.raises(_Started):
        st.ingest(pa.Table.from_pylist(events({"x": [["click"], []]})), engine="spark", master="local[1]",
                  spark_conf={"spark.driver.memory": "6g", "spark.sql.shuffle.partitions": "4"})
    assert started == {"master": "local[1]",
                       "config": {"spark.driver.memory": "6g", "spark.sql.shuffle.partitions": "4"}}


def test_spark_conf_from_the_command_line(tmp_path, started):
    f = tmp_path / "e.csv"
    f.write_text("timestamp,model,model_version,environment,group_id,item_id,rank\n"
                 "2026-10-01T10:00:00,m,v1,production,g1,a,1\n")
    r = CliRunner().invoke(cli, ["monitor", "ingest", str(f), "--store", str(tmp_path / "s.duckdb"), "--engine",
                                 "spark", "--spark-conf", "spark.driver.memory=6g", "--spark-conf",
                                 " spark.executor.memory = 2g"])
    assert r.exit_code != 0  # the fake session stops the ingest
    assert started["config"] == {"spark.driver.memory": "6g", "spark.executor.memory": "2g"}


@pytest.mark.parametrize("args, line", [
    (["--engine", "spark", "--spark-conf", "spark.driver.memory"],
     "--spark-conf takes KEY=VALUE (e.g. spark.driver.memory=6g); got 'spark.driver.memory'."),
    (["--engine", "spark", "--spark-conf", "=6g"],
     "--spark-conf takes KEY=VALUE (e.g. spark.driver.memory=6g); got '=6g'."),
    (["--spark-conf", "spark.driver.memory=6g"], "--spark-conf needs --engine spark."),
])
def test_bad_spark_conf_is_one_line_exit_2(tmp_path, started, args, line):
    f = tmp_path / "e.csv"
    f.write_text("timestamp,group_id,item_id,rank\n2026-10-01T10:00:00,g1,a,1\n")
    r = CliRunner().invoke(cli, ["monitor", "ingest", str(f), "--store", str(tmp_path / "s.duckdb"), *args])
    assert r.exit_code == 2, r.output
    assert line in r.output
    assert not started  # refused before Spark starts
    assert not (tmp_path / "s.duckdb").exists()


def test_spark_conf_api_checks(tmp_path, started):
    st = Store(tmp_path / "s.duckdb")
    rows = pa.Table.from_pylist(events({"x": [["click"]]}))
    with pytest.raises(InvalidParameterError, match="`spark_conf` goes with engine='spark'"):
        st.ingest(rows, spark_conf={"spark.driver.memory": "6g"})
    with pytest.raises(InvalidParameterError, match="`spark_conf` maps Spark setting names to text values"):
        st.ingest(rows, engine="spark", spark_conf={"spark.driver.memory": 6})
    assert not started
