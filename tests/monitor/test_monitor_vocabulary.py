"""The one vocabulary in the monitor (issue #28 point 4): ``measure``/``measures=`` and ``-m/--measure`` for measures,
``-s/--signal`` for label-free signals, ``Verdict`` for an alert's verdict; the old spellings keep working for one
release with a DeprecationWarning (Python) or a note on stderr (command line), and the web API takes both.
Unknown signal kinds and monitor kinds are refused, never computed or judged by another kind's rule. Read commands
on a missing store exit 2 and create nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pytest
from click.testing import CliRunner

from ranklens.cli import cli
from ranklens.errors import InvalidParameterError
from ranklens.monitor import Store

from .handcalc import events


@pytest.fixture()
def store(tmp_path):
    country = lambda gid: {"country": "BR" if gid == "a" else "US"}  # noqa: E731
    rows = events({"a": [["click"], [], []], "b": [[], ["click"], []]}, extra=country)
    rows += events({"t": [["click"], [], []]}, env="training", day="2026-09-30", extra=country)
    st = Store(tmp_path / "s.duckdb", config={"monitors": []})
    st.ingest(pa.Table.from_pylist(rows))
    return st


def test_store_keywords_and_their_old_names(store):
    new = store.groups(measure="ndcg@3").to_pylist()
    with pytest.warns(DeprecationWarning, match="`metric=` is deprecated: use `measure=`"):
        old = store.groups(metric="ndcg@3").to_pylist()
    assert new == old and new[0]["measure"] == "ndcg@3"
    with pytest.warns(DeprecationWarning, match="use `measures=`"):
        old = store.report(metrics=["ndcg@3"], ci=None).to_pylist()
    assert repr(old) == repr(store.report(measures=["ndcg@3"], ci=None).to_pylist())
    for method in ("baseline", "baselines", "compare"):
        with pytest.warns(DeprecationWarning, match="use `measure=`"):
            getattr(store, method)(metric="ndcg@3")
    with pytest.raises(InvalidParameterError, match="not both"):
        store.groups(measure="ndcg@3", metric="ndcg@3")
    assert store.report(["ndcg@3"], ci=None).column_names[1:5] == ["model", "model_version", "environment", "measure"]


def test_verdict_and_its_old_name():
    import ranklens.monitor.alerts as alerts
    from ranklens.monitor.alerts.judge import Verdict

    with pytest.warns(DeprecationWarning, match="use Verdict"):
        assert alerts.Judgement is Verdict


def test_command_line_spellings(store):
    run = CliRunner()
    path = str(store.path)
    new = run.invoke(cli, ["monitor", "report", "--store", path, "--measure", "ndcg@3", "--ci", "none", "-f", "json"],
                     catch_exceptions=False)
    old = run.invoke(cli, ["monitor", "report", "--store", path, "--metric", "ndcg@3", "--ci", "none", "-f", "json"],
                     catch_exceptions=False)
    assert new.exit_code == old.exit_code == 0 and new.stdout == old.stdout and new.stderr == ""
    assert json.loads(new.stdout)[0]["measure"] == "ndcg@3"
    assert "--metric is deprecated here: use -m/--measure" in old.stderr
    s_new = run.invoke(cli, ["monitor", "signals", "--store", path, "-s", "psi(score)", "-f", "json"],
                       catch_exceptions=False)
    s_old = run.invoke(cli, ["monitor", "signals", "--store", path, "-m", "psi(score)", "-f", "json"],
                       catch_exceptions=False)
    assert s_new.stdout == s_old.stdout and "-m/--metric is deprecated here: use -s/--signal" in s_old.stderr
    for cmd in (["slices", "--start", "2026-10-01", "--end", "2026-10-02", "--min-support", "1"], ["groups"]):
        a = run.invoke(cli, ["monitor", *cmd, "--store", path, "-m", "ndcg@3", "-f", "json"], catch_exceptions=False)
        b = run.invoke(cli, ["monitor", *cmd, "--store", path, "--metric", "ndcg@3", "-f", "json"],
                       catch_exceptions=False)
        assert a.exit_code == 0 and a.stdout == b.stdout and "deprecated" in b.stderr


def test_web_api_takes_both_spellings(store):
    from starlette.testclient import TestClient

    from ranklens.web import create_app

    app = TestClient(create_app(store.path, config={}), base_url="http://127.0.0.1")
    new = app.get("/api/report", params={"measure": "ndcg@3"}).json()
    old = app.get("/api/report", params={"metric": "ndcg@3"}).json()
    assert new == old and new["measure"] == "ndcg@3" and new["rows"][0]["measure"] == "ndcg@3"
    both = app.get("/api/report", params={"measure": "ndcg@3", "metric": "ndcg@3"})
    assert both.status_code == 400 and both.json()["parameter"] == "measure"
    assert app.get("/api/signals", params={"signal": "gini"}).json() == app.get("/api/signals",
                                                                               params={"metric": "gini"}).json()


def test_a_signal_kind_without_a_definition_is_refused(store, monkeypatch):
    from ranklens.monitor.signals import names

    monkeypatch.setitem(names.LEVELS, "spread", "down")  # a new kind named, its definition forgotten
    assert names.parse_signal("spread@5").key == "spread@5"
    with pytest.raises(InvalidParameterError, match="'spread@5' has no definition"):
        store.signals(["spread@5"])


def test_a_monitor_kind_without_a_judge_is_refused(store, monkeypatch):
    from ranklens.monitor import kinds
    from ranklens.monitor.alerts import check

    cfg = {"monitors": [{"name": "x", "metric": "ndcg@3", "relative_drop": 0.1}]}
    st = Store(store.path, config=cfg)
    monkeypatch.setattr(kinds, "monitor_kind", lambda metric: "forecast")
    monkeypatch.setitem(kinds.LIMIT_CHECKS, "forecast", lambda spec: None)
    with pytest.raises(InvalidParameterError, match="no judge for monitors of kind 'forecast'"):
        st.check()
    monkeypatch.delitem(kinds.LIMIT_CHECKS, "forecast")
    with pytest.raises(InvalidParameterError, match="kind 'forecast' have no rule"):
        Store(store.path, config=cfg)
    assert set(check.JUDGES) == set(kinds.KINDS)


@pytest.mark.parametrize("cmd", [
    ["report"], ["report", "--html", "out.html"], ["alerts"], ["signals"], ["slices"], ["slices", "--auto"],
    ["groups"], ["explain", "g1"], ["info"], ["check"], ["check", "--no-record"], ["ack", "1"],
    ["snooze", "1", "--for", "1h"]])
def test_a_missing_store_exits_2_and_creates_nothing(tmp_path, cmd):
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        r = CliRunner().invoke(cli, ["monitor", *cmd, "--store", "missing.duckdb"])
    finally:
        os.chdir(cwd)
    assert r.exit_code == 2, r.output
    assert "missing.duckdb' does not exist" in r.output and "Traceback" not in r.output
    assert sorted(p.name for p in Path(tmp_path).iterdir()) == []
