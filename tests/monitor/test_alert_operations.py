"""Alert operations (issue #32 point 5): severities, routing to several webhooks by severity or model, exit status 1
whenever an alert opens or fires (a delivery failure said on stderr and recorded; 3 only when nothing fires),
acknowledge and snooze from the command line and from the dashboard with its token. Local HTTP servers count what
they receive; the store is the lifecycle test's (one list of five a day, its click at rank 4 on decayed days)."""

from __future__ import annotations

import json

import duckdb
import pytest
from click.testing import CliRunner

from ranklens.cli import cli
from ranklens.monitor import Store

from .test_alert_lifecycle import Hook, _events, day


@pytest.fixture()
def hooks():
    made = [Hook(), Hook()]
    yield made
    for h in made:
        h.srv.shutdown()
        h.srv.server_close()


@pytest.fixture()
def store(tmp_path):
    st = Store(tmp_path / "s.duckdb", config={"monitors": []})
    st.ingest(_events())
    return st.path


def _config(tmp_path, pager: str, chat: str) -> str:
    p = tmp_path / "ranklens.toml"
    p.write_text(
        "[[monitors]]\nname = 'drop'\nmetric = 'ndcg@10'\nrelative_drop = 0.1\nmin_groups = 5\nseverity = 'critical'\n"
        "where = { environment = 'production' }\nby = ['model', 'model_version']\n"
        "[[monitors]]\nname = 'soft'\nmetric = 'ndcg@10'\nrelative_drop = 0.05\nmin_groups = 5\nseverity = 'info'\n"
        "where = { environment = 'production', model_version = 'v2' }\nby = ['model', 'model_version']\n"
        "[alerts]\nretries = 1\nbackoff = 0\n"
        f"[[alerts.routes]]\nname = 'pager'\nwebhook = '{pager}'\nseverities = ['critical']\nmodels = ['m']\n"
        f"[[alerts.routes]]\nname = 'chat'\nwebhook = '{chat}'\nformat = 'slack'\n")
    return str(p)


def check(store, cfg, *args, code):
    r = CliRunner().invoke(cli, ["monitor", "check", "--store", str(store), "--config", cfg, *args],
                           catch_exceptions=False)
    assert r.exit_code == code, r.output
    return r


def test_routes_by_severity_and_exit_status(store, tmp_path, hooks):
    pager, chat = hooks
    cfg = _config(tmp_path, pager.url, chat.url)
    out = json.loads(check(store, cfg, "--at", day(3), code=1).stdout)
    assert sorted((a["monitor"], a["severity"], a["series"]["model_version"]) for a in out) == [
        ("drop", "critical", "v1"), ("drop", "critical", "v2"), ("soft", "info", "v2")]
    # the pager takes the critical ones, the chat every change
    assert sorted(a["monitor"] for a in pager.bodies[0]["alerts"]) == ["drop", "drop"]
    assert len(chat.bodies) == 1 and chat.bodies[0]["text"] == "ranklens: 3 alerts opened"
    assert sorted(b["text"]["text"].split("UTC, ")[1].split("\n")[0] for b in chat.bodies[0]["blocks"][1:]) == [
        "severity critical", "severity critical", "severity info"]
    # the pager is down. Day 4: nothing fires, the alerts resolve; the chat takes the resolutions, the pager
    # fails: exit 3, said on stderr
    pager.plan = [500] * 10
    r = check(store, cfg, "--at", day(4), code=3)
    assert "route 'pager'" in r.stderr and "answered HTTP 500" in r.stderr
    assert chat.bodies[-1]["text"] == "ranklens: 3 alerts resolved"
    # day 6: v1 fires again (a new alert); the pager still down: exit 1, a firing alert is never hidden
    r = check(store, cfg, "--at", day(6), code=1)
    assert "route 'pager'" in r.stderr
    con = duckdb.connect(str(store), read_only=True)
    failed = con.execute("SELECT count(*) FROM deliveries WHERE route = 'pager' AND NOT ok").fetchall()[0][0]
    con.close()
    # a record per change and attempt: day 4, the two critical resolutions; day 6, those and v1's opening
    assert failed == 5
    opened = Store(store, read_only=True).alert_list(state="open").to_pylist()
    assert [(r["monitor"], r["model_version"]) for r in opened] == [("drop", "v1")]
    assert "HTTP 500" in opened[0]["delivery_error"]
    n_chat = len(chat.bodies)
    # the same day again, the pager still down: v1 still firing (exit 1); the chat gets nothing twice
    r = check(store, cfg, "--at", day(6), code=1)
    assert len(chat.bodies) == n_chat and "route 'pager'" in r.stderr
    pager.plan = []
    check(store, cfg, "--at", day(6), code=1)  # the pager is back: what it missed, once
    assert len(chat.bodies) == n_chat
    sent = [(a["status"], a["monitor"], a["series"]["model_version"]) for b in pager.bodies[1:] for a in b["alerts"]]
    assert sorted(sent) == [("opened", "drop", "v1"), ("resolved", "drop", "v1"), ("resolved", "drop", "v2")]
    check(store, cfg, "--at", day(6), code=1)
    assert len(pager.bodies) == 2


def test_acknowledge_and_snooze_from_the_command_line(store, tmp_path, hooks):
    pager, chat = hooks
    cfg = _config(tmp_path, pager.url, chat.url)
    check(store, cfg, "--at", day(2), code=1)  # v1 opens (drop): alert 1
    run = CliRunner()
    r = run.invoke(cli, ["monitor", "ack", "1", "--by", "ana", "--note", "on it", "--store", str(store)],
                   catch_exceptions=False)
    assert r.exit_code == 0 and "acknowledged by ana" in r.output
    row = Store(store, read_only=True).alert_list().to_pylist()[0]
    assert row["acknowledged_by"] == "ana" and row["ack_note"] == "on it" and row["state"] == "open"
    r = run.invoke(cli, ["monitor", "ack", "99", "--store", str(store)])
    assert r.exit_code == 2 and "no alert 99" in r.output
    # snooze v1's drop: its resolution (day 4) and its next opening (day 6) are held from the webhooks
    r = run.invoke(cli, ["monitor", "snooze", "1", "--for", "2h", "--store", str(store)], catch_exceptions=False)
    assert r.exit_code == 0 and "snoozed until" in r.output
    n = len(pager.bodies)
    check(store, cfg, "--at", day(4), code=0)
    check(store, cfg, "--at", day(6), code=1)  # exit 1 all the same: the snooze silences the webhooks only
    held = [a for b in chat.bodies[n:] for a in b["alerts"] if a["series"]["model_version"] == "v1"
            and a["monitor"] == "drop"]
    assert held == []
    r = run.invoke(cli, ["monitor", "snooze", "1", "--off", "--store", str(store)], catch_exceptions=False)
    assert "snooze lifted" in r.output
    check(store, cfg, "--at", day(6), code=1)
    sent = [(a["status"], a["monitor"], a["series"]["model_version"]) for b in pager.bodies[n:] for a in b["alerts"]]
    # what was held, once the snooze is lifted: the resolution of day 4 and the new opening of day 6
    assert sorted(sent) == [("opened", "drop", "v1"), ("resolved", "drop", "v1")]
    for bad in (["--for", "1h", "--off"], [], ["--for", "100d"]):
        r = run.invoke(cli, ["monitor", "snooze", "1", *bad, "--store", str(store)])
        assert r.exit_code == 2 and "Traceback" not in r.output


def test_dashboard_actions_need_the_token(store, tmp_path):
    from starlette.testclient import TestClient

    from ranklens.web import create_app

    Store(store, config={"monitors": [{"name": "drop", "metric": "ndcg@10", "relative_drop": 0.1, "min_groups": 5,
                                       "where": {"environment": "production"}, "by": ["model_version"]}]}
          ).check(at=day(2))
    open_app = TestClient(create_app(store, config={}), base_url="http://127.0.0.1")
    r = open_app.post("/api/ack", json={"alert_id": 1})
    assert r.status_code == 405 and "--token" in r.json()["error"]
    assert open_app.get("/api/info").json()["actions"] == []
    app = TestClient(create_app(store, config={}, token="s3cret-token"), base_url="http://127.0.0.1")
    auth = {"Authorization": "Bearer s3cret-token"}
    assert app.post("/api/ack", json={"alert_id": 1}).status_code == 401
    form = {**auth, "Content-Type": "application/x-www-form-urlencoded"}
    assert app.post("/api/ack", content=b"alert_id=1", headers=form).status_code == 415
    assert app.get("/api/info", headers=auth).json()["actions"] == ["/api/ack", "/api/snooze"]
    r = app.post("/api/ack", json={"alert_id": 1, "by": "ana"}, headers=auth)
    assert r.status_code == 200 and r.json()["acknowledged_by"] == "ana"
    assert app.post("/api/ack", json={"alert_id": 7}, headers=auth).status_code == 404
    assert app.post("/api/snooze", json={"alert_id": 1, "duration": "soon"}, headers=auth).status_code == 400
    r = app.post("/api/snooze", json={"alert_id": 1, "duration": "24h"}, headers=auth)
    assert r.status_code == 200 and r.json()["until"]
    rows = app.get("/api/alert-list", headers=auth).json()["rows"]
    assert rows[0]["acknowledged_by"] == "ana" and rows[0]["snoozed_until"]
    assert isinstance(rows[0]["top_slices"], list)
