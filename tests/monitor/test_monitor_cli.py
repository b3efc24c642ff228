"""`ranklens monitor` as a new user runs it: simulate, ingest, report, check (exit status, webhook), slices,
explain; one-line errors with exit status 2."""

from __future__ import annotations

import datetime as dt
import http.server
import json
import threading

import pytest
from click.testing import CliRunner

from ranklens.cli import cli

DECAY = "2026-10-07"


def run(args, code=0):
    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    if code is not None:
        assert r.exit_code == code, r.output
    return r


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    d = tmp_path_factory.mktemp("sim")
    ev = d / "events"
    run(["monitor", "simulate", str(ev), "--days", "9", "--groups-per-day", "500", "--decay-start", DECAY,
         "--decay-slice", "country=BR", "--malformed", "0.002", "--seed", "7"])
    store = d / "ranklens.duckdb"
    out = run(["monitor", "ingest", str(ev), "--store", str(store)]).output
    return d, store, out


def test_ingest_summary_counts_quarantine(sim):
    _, store, out = sim
    assert "quarantined" in out and "total:" in out
    total = [line for line in out.splitlines() if line.startswith("total:")][0]
    assert int(total.split("new groups, ")[1].split(" quarantined")[0]) > 0
    info = json.loads(run(["monitor", "info", "--store", str(store)]).output)
    assert info["quarantined"] == sum(info["quarantine_reasons"].values()) > 0
    assert info["slices"] == ["country", "device", "query_type"]


def test_report_csv(sim):
    _, store, _ = sim
    out = run(["monitor", "report", "--store", str(store), "-m", "ndcg", "-k", "1", "-k", "5", "-k", "10",
               "--where", "environment=production", "--by", "model_version", "-f", "csv", "--ci", "none"]).output
    lines = out.strip().splitlines()
    assert lines[0] == "window,model_version,measure,value,n_groups,n_excluded,n_partial,provisional"
    assert {line.split(",")[7] for line in lines[1:]} <= {"True", "False"}
    metrics = {line.split(",")[2] for line in lines[1:]}
    assert metrics == {"ndcg@1", "ndcg@5", "ndcg@10"}
    assert all(0 <= float(line.split(",")[3]) <= 1 for line in lines[1:])


def test_check_finds_the_planted_decay_and_its_slice(sim):
    d, store, _ = sim
    r = run(["monitor", "check", "--all", "--store", str(store), "--no-record"], code=1)
    alerts = json.loads(r.stdout)
    assert alerts
    decay = dt.datetime.fromisoformat(DECAY)
    for a in alerts:
        assert dt.datetime.fromisoformat(a["window_start"]) >= decay, a  # nothing fires before the decay
        assert a["series"]["environment"] == "production"
        assert a["top_slices"][0]["column"] == "country" and a["top_slices"][0]["value"] == "BR"
        assert a["value"] < a["threshold"] and a["p_value"] < 0.05
    # root cause for the last day: BR first, and its NDCG fell sharply (the seed's swap)
    r = run(["monitor", "slices", "--store", str(store), "--where", "environment=production", "-f", "json"])
    rows = json.loads(r.output)
    assert (rows[0]["column"], rows[0]["value"]) == ("country", "BR")
    assert rows[0]["change"] < -0.15
    # drill down to the worst BR lists, then explain one
    r = run(["monitor", "slices", "--store", str(store), "--where", "environment=production", "--drill", "country=BR",
             "--limit", "3", "-f", "json"])
    worst = json.loads(r.output)
    assert len(worst) == 3 and all(w["country"] == "BR" for w in worst)
    w = worst[0]
    r = run(["monitor", "explain", w["group_id"], "--store", str(store), "--model", w["model"],
             "--model-version", w["model_version"], "--environment", w["environment"]])
    assert "DCG@10" in r.output and "ideal" in r.output


def test_check_records_and_webhook(sim, tmp_path):
    d, store, _ = sim
    received = []

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # the name http.server calls
            n = int(self.headers["Content-Length"])
            received.append(json.loads(self.rfile.read(n)))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *a):
            pass

    srv = http.server.HTTPServer(("127.0.0.1", 0), Hook)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        cfg = tmp_path / "ranklens.toml"
        cfg.write_text(
            "[[monitors]]\nname = 'BR watch'\nmetric = 'ndcg@10'\nrelative_drop = 0.1\nmin_groups = 20\n"
            "where = { environment = 'production', country = 'BR' }\nby = ['environment']\n"
            f"[alerts]\nwebhook = 'http://127.0.0.1:{srv.server_port}/hook'\n"
        )
        r = run(["monitor", "check", "--store", str(store), "--config", str(cfg)], code=1)
        alerts = json.loads(r.stdout)
        assert [(a["monitor"], a["status"]) for a in alerts] == [("BR watch", "opened")]
        assert received and received[0]["alerts"][0]["monitor"] == "BR watch"
        assert received[0]["alerts"][0]["value"] == pytest.approx(alerts[0]["value"])
        # recorded in the store for the dashboard
        from ranklens.monitor import Store

        rec = Store(store, read_only=True).alerts().to_pylist()
        assert rec and rec[0]["monitor"] == "BR watch"
        run(["monitor", "check", "--store", str(store), "--config", str(cfg),
             "--webhook", f"http://127.0.0.1:{srv.server_port}/x"], code=1)
        assert len(Store(store, read_only=True).alerts().to_pylist()) == len(rec)  # the same alert is recorded once
        # a window before the decay: nothing fires, exit 0
        r = run(["monitor", "check", "--store", str(store), "--config", str(cfg), "--at", "2026-10-03T12:00:00"])
        assert json.loads(r.stdout) == []
    finally:
        srv.shutdown()
    assert len(received) == 1  # sent once: the alert opened; the runs after it changed no state
    # (unreachable and failing webhooks: tests/monitor/test_alert_lifecycle.py)


@pytest.mark.parametrize("args, message", [
    (["monitor", "report", "--where", "planet=mars"], "unknown column 'planet'"),
    (["monitor", "report", "-m", "ndgc@10"], "ndgc"),
    (["monitor", "report", "--start", "last tuesday"], "`start` must be an ISO date"),
    (["monitor", "explain", "no-such-group"], "no served list with group_id 'no-such-group'"),
    (["monitor", "slices", "--baseline", "yesterday"], "expected 'training'"),
])
def test_errors_are_one_line(sim, args, message):
    _, store, _ = sim
    r = run([*args, "--store", str(store)], code=2)
    assert r.output.count("\n") == 1 and message in r.output and r.output.startswith("ranklens: error:")


def test_missing_store_and_bad_config(tmp_path):
    r = run(["monitor", "report", "--store", str(tmp_path / "nope.duckdb")], code=2)
    assert "does not exist; ingest events first" in r.output
    cfg = tmp_path / "c.toml"
    cfg.write_text("[evaluation]\nconvention = 'sk-learn'\n")
    r = run(["monitor", "report", "--store", str(tmp_path / "nope.duckdb"), "--config", str(cfg)], code=2)
    assert "c.toml" in r.output and "sk-learn" in r.output
    r = run(["monitor", "ingest", str(tmp_path / "missing.parquet"), "--store", str(tmp_path / "s.duckdb")], code=2)
    assert "missing.parquet: no such file" in r.output


def test_format_is_the_output_format_in_every_monitor_command(sim, tmp_path):
    """-f/--format chooses the output in ingest and explain as in report, slices, groups and eval (no --json)."""
    d, store, _ = sim
    # ingesting the same events again adds nothing; the summary as JSON says so
    again = json.loads(run(["monitor", "ingest", str(d / "events"), "--store", str(store), "-f", "json"]).output)
    assert again["groups"] == 0 and again["rows"] >= 0
    groups = run(["monitor", "groups", "--store", str(store), "-m", "ndcg@10", "-f", "json"]).output
    gid = json.loads(groups)[0]["group_id"]
    table = run(["monitor", "explain", gid, "--store", str(store)]).output
    as_json = json.loads(run(["monitor", "explain", gid, "--store", str(store), "-f", "json"]).output)
    assert gid in table and isinstance(as_json, dict)
    r = CliRunner().invoke(cli, ["monitor", "explain", gid, "--store", str(store), "--json"])
    assert r.exit_code == 2 and "--json" in r.output
