"""Alert lifecycle: an alert opens once per monitor and series, stays open while its windows fire, resolves at
the first judged window that does not; webhooks on state changes only (JSON and Slack payloads), retried with
backoff; a failed webhook still prints the alerts and exits 3. A local HTTP server counts what it receives."""

from __future__ import annotations

import datetime as dt
import http.server
import json
import math
import subprocess
import sys
import threading
import time

import duckdb
import pyarrow as pa
import pytest
from click.testing import CliRunner

from ranklens.cli import cli
from ranklens.monitor import Store
from ranklens.monitor.storage import schema as _schema

D1 = dt.datetime(2026, 10, 1)
DAYS = 9
# day index -> versions whose lists are decayed that day (the clicked item at rank 4 instead of rank 1)
DECAY = {2: {"v1"}, 3: {"v1", "v2"}, 6: {"v1"}, 7: {"v1"}, 8: {"v1"}}
N = 12  # lists per day and version


def ndcg1(rank: int) -> float:
    """NDCG@10 of a list with one clicked item at ``rank`` (binary gain): 1 / log2(rank + 1)."""
    return 1 / math.log2(rank + 1)


def day(d: int) -> str:
    return (D1 + dt.timedelta(days=d)).date().isoformat()


def _events() -> pa.Table:
    rows = []
    for v in ("v1", "v2"):
        for i in range(N):
            g = f"t-{v}-{i}"
            for r in range(1, 6):
                rows.append({"timestamp": (D1 - dt.timedelta(days=2)).isoformat(), "model_version": v,
                             "environment": "training", "group_id": g, "item_id": f"{g}-{r}", "rank": r,
                             "labels": ["click"] if r == 1 else []})
        for d in range(DAYS):
            clicked = 4 if v in DECAY.get(d, ()) else 1
            for i in range(N):
                g = f"p-{v}-{d}-{i}"
                t = D1 + dt.timedelta(days=d, hours=i)
                for r in range(1, 6):
                    rows.append({"timestamp": t.isoformat(), "model_version": v, "environment": "production",
                                 "group_id": g, "item_id": f"{g}-{r}", "rank": r,
                                 "labels": ["click"] if r == clicked else []})
    tab = pa.Table.from_pylist(rows)
    return tab.append_column("model", pa.array(["m"] * tab.num_rows))


class Hook:
    """A local webhook: answers the statuses of ``plan`` in turn (then 200), keeps every body received."""

    def __init__(self) -> None:
        self.plan: list[int] = []
        self.bodies: list[dict] = []
        self.tries = 0
        self.delay = 0.0  # seconds before answering (a slow chat service)
        hook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # the name http.server calls
                n = int(self.headers["Content-Length"])
                body = json.loads(self.rfile.read(n))
                hook.tries += 1
                status = hook.plan.pop(0) if hook.plan else 200
                time.sleep(hook.delay)
                if status < 300:
                    hook.bodies.append(body)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *a):
                pass

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.srv.server_port}/hook"
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()


@pytest.fixture()
def hook():
    h = Hook()
    yield h
    h.srv.shutdown()
    h.srv.server_close()


def _config(tmp_path, url, fmt="json", retries=3):
    p = tmp_path / "ranklens.toml"
    p.write_text(
        "[[monitors]]\nname = 'drop'\nmetric = 'ndcg@10'\nrelative_drop = 0.1\nmin_groups = 5\n"
        "where = { environment = 'production' }\nby = ['model_version']\n"
        f"[alerts]\nwebhook = '{url}'\nwebhook_format = '{fmt}'\nretries = {retries}\nbackoff = 0.01\n")
    return p


@pytest.fixture()
def store(tmp_path):
    st = Store(tmp_path / "s.duckdb", config={"monitors": []})
    st.ingest(_events())
    return st.path


def check(store, cfg, *args, code):
    r = CliRunner().invoke(cli, ["monitor", "check", "--store", str(store), "--config", str(cfg), *args],
                           catch_exceptions=False)
    assert r.exit_code == code, r.output
    return r


def test_lifecycle_and_webhook_on_changes_only(store, tmp_path, hook):
    cfg = _config(tmp_path, hook.url)
    value = ndcg1(4) / ndcg1(1)  # a decayed day: every list has its click at rank 4; the baseline is 1
    out = json.loads(check(store, cfg, "--at", day(2), code=1).stdout)
    assert [(a["status"], a["series"], a["window_start"]) for a in out] == [
        ("opened", {"model_version": "v1"}, day(2) + "T00:00:00")]
    assert out[0]["value"] == pytest.approx(value, abs=1e-12) and out[0]["baseline"] == pytest.approx(1.0)
    assert out[0]["window_end"] == day(3) + "T00:00:00"  # the alert names its window, not the run
    assert len(hook.bodies) == 1
    body = hook.bodies[0]
    assert body["text"] == "ranklens: 1 alert opened"
    assert [(a["status"], a["alert_id"], a["window_start"]) for a in body["alerts"]] == [
        ("opened", 1, day(2) + "T00:00:00")]
    # the same window again: still open, nothing sent
    out = json.loads(check(store, cfg, "--at", day(2), code=1).stdout)
    assert [a["status"] for a in out] == ["firing"] and len(hook.bodies) == 1
    # the next day: v1 still firing (no message), v2 opens (one message with it only)
    out = json.loads(check(store, cfg, "--at", day(3), code=1).stdout)
    assert sorted((a["series"]["model_version"], a["status"]) for a in out) == [("v1", "firing"), ("v2", "opened")]
    assert len(hook.bodies) == 2 and [a["series"] for a in hook.bodies[1]["alerts"]] == [{"model_version": "v2"}]
    # the day after: both resolve (exit 0), one message with both
    out = json.loads(check(store, cfg, "--at", day(4), code=0).stdout)
    assert sorted((a["series"]["model_version"], a["status"]) for a in out) == [("v1", "resolved"), ("v2", "resolved")]
    assert all(a["value"] == pytest.approx(1.0) for a in out)
    assert len(hook.bodies) == 3 and hook.bodies[2]["text"] == "ranklens: 2 alerts resolved"
    assert {a["opened_window"] for a in hook.bodies[2]["alerts"]} == {day(2) + "T00:00:00", day(3) + "T00:00:00"}
    # every window: the past ones change nothing; the decay of days 6-8 opens a new alert of v1 (labels in-line:
    # maturity 0, no window is provisional)
    r = check(store, cfg, "--all", code=1)
    out = json.loads(r.stdout)
    assert [(a["window_start"][:10], a["series"]["model_version"], a["status"]) for a in out] == [
        (day(2), "v1", "fired"), (day(3), "v1", "fired"), (day(3), "v2", "fired"), (day(6), "v1", "opened"),
        (day(7), "v1", "firing"), (day(8), "v1", "firing")]
    assert "not judged" not in r.stderr
    assert len(hook.bodies) == 4 and [(a["status"], a["alert_id"]) for a in hook.bodies[3]["alerts"]] == [
        ("opened", 3)]
    check(store, cfg, "--all", code=1)
    assert len(hook.bodies) == 4  # nothing new
    # the alerts: one row each, newest first
    rows = Store(store, read_only=True).alert_list().to_pylist()
    assert [(r["alert_id"], r["state"], r["model_version"], str(r["opened_window"].date()),
             str(r["last_window"].date()), r["resolved_window"] and str(r["resolved_window"].date()), r["n_windows"])
            for r in rows] == [(3, "open", "v1", day(6), day(8), None, 3),
                               (2, "resolved", "v2", day(3), day(3), day(4), 1),
                               (1, "resolved", "v1", day(2), day(3), day(4), 2)]
    assert Store(store, read_only=True).alert_list(state="open", limit=1).num_rows == 1
    assert Store(store, read_only=True).alert_list(limit=2, offset=2).column("alert_id").to_pylist() == [1]
    fired = Store(store, read_only=True).alerts().to_pylist()
    assert [(str(r["window"].date()), r["alert_id"], r["state"]) for r in fired] == [
        (day(8), 3, "open"), (day(7), 3, "open"), (day(6), 3, "open"), (day(3), 1, "resolved"),
        (day(3), 2, "resolved"), (day(2), 1, "resolved")]
    table = CliRunner().invoke(cli, ["monitor", "alerts", "--store", str(store), "--state", "resolved"]).stdout
    assert table.splitlines()[0].split()[:4] == ["alert_id", "state", "severity", "monitor"]
    assert len(table.splitlines()) == 3


def test_webhook_retried_with_backoff_then_failure_never_hides_a_firing_alert(store, tmp_path, hook):
    cfg = _config(tmp_path, hook.url, retries=3)
    hook.plan = [500, 503]  # fails twice, then succeeds: the third try delivers
    check(store, cfg, "--at", day(2), code=1)
    assert hook.tries == 3 and len(hook.bodies) == 1
    # failing every try: the alerts are printed all the same, one line on stderr, the change stays pending; the
    # window fired, so the exit status is 1 (3 only when nothing fires)
    hook.plan, hook.tries = [500, 500, 500], 0
    r = check(store, cfg, "--at", day(3), code=1)
    assert hook.tries == 3 and len(hook.bodies) == 1
    assert sorted(a["status"] for a in json.loads(r.stdout)) == ["firing", "opened"]
    err = [ln for ln in r.stderr.splitlines() if "webhook" in ln]
    assert len(err) == 1 and "answered HTTP 500 (after 3 tries)" in err[0] and hook.url in err[0]
    # next run: the webhook is back; the pending change (v2 opened) is delivered once
    check(store, cfg, "--at", day(3), code=1)
    assert len(hook.bodies) == 2 and [(a["status"], a["series"]) for a in hook.bodies[1]["alerts"]] == [
        ("opened", {"model_version": "v2"})]
    check(store, cfg, "--at", day(3), code=1)
    assert len(hook.bodies) == 2
    # a client error is not tried again; nothing fires on day 4 (the alerts resolve): exit 3
    hook.plan, hook.tries = [404], 0
    check(store, cfg, "--at", day(4), code=3)
    assert hook.tries == 1


def test_unreachable_webhook_prints_the_alerts(store, tmp_path):
    with http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler) as s:
        port = s.server_port  # a port nobody listens on once closed
    cfg = _config(tmp_path, f"http://127.0.0.1:{port}/hook", retries=2)
    r = check(store, cfg, "--at", day(2), "-f", "table", code=1)  # the alert fired: 1, whatever the webhook
    assert r.stdout.startswith("OPENED 'drop' " + day(2) + " model_version=v1: ndcg@10 = ")
    assert r.stderr.count("\n") == 1 and "could not be reached" in r.stderr and "after 2 tries" in r.stderr
    assert "Traceback" not in r.output


def test_slack_payload(store, tmp_path, hook):
    cfg = _config(tmp_path, hook.url, fmt="slack")
    check(store, cfg, "--at", day(3), code=1)
    check(store, cfg, "--at", day(4), code=0)
    opened, resolved = hook.bodies
    assert set(opened) == {"text", "blocks"} and opened["text"] == "ranklens: 2 alerts opened"
    assert [b["type"] for b in opened["blocks"]] == ["header", "section", "section"]
    first = opened["blocks"][1]["text"]
    assert first["type"] == "mrkdwn" and "*OPENED* `drop` model_version=v1" in first["text"]
    assert f"window {day(3)} 00:00 to {day(4)} 00:00 UTC" in first["text"]
    assert resolved["text"] == "ranklens: 2 alerts resolved" and "*RESOLVED*" in resolved["blocks"][1]["text"]["text"]


def test_dry_run_and_read_only_store_change_nothing(store, tmp_path, hook):
    cfg = _config(tmp_path, hook.url)
    out = json.loads(check(store, cfg, "--at", day(2), "--no-record", code=1).stdout)
    assert [a["status"] for a in out] == ["opened"] and hook.bodies == []
    assert Store(store, read_only=True).alert_list().num_rows == 0
    res = Store(store, config=cfg, read_only=True).check(at=day(2))
    assert [a.extra["status"] for a in res] == ["opened"] and hook.bodies == []


def test_migration_of_recorded_alerts(tmp_path):
    """A version-3 store's alerts: consecutive windows of a series are one alert, the latest of each series open."""
    p = tmp_path / "old.duckdb"
    con = duckdb.connect(str(p))
    _schema.migrate(con, 3)
    for w, series in (("2026-10-01", "a"), ("2026-10-02", "a"), ("2026-10-05", "a"), ("2026-10-05", "b")):
        s = dt.datetime.fromisoformat(w)
        con.execute("INSERT INTO alerts VALUES (now()::TIMESTAMP, 'drop', 'ndcg@10', ?, ?, 'm', ?, 'production', ?, "
                    "0.5, 0.9, 0.8, 0.01, 50, 50, 'low')", [s, s + dt.timedelta(days=1), series,
                                                             json.dumps({"model_version": series})])
    con.close()
    st = Store(p)
    with st._db().writing():
        pass
    rows = st.alert_list().to_pylist()
    assert sorted((r["alert_id"], r["model_version"], r["state"], str(r["opened_window"].date()),
                   str(r["last_window"].date()), r["n_windows"]) for r in rows) == [
        (1, "a", "resolved", "2026-10-01", "2026-10-02", 2), (2, "a", "open", "2026-10-05", "2026-10-05", 1),
        (3, "b", "open", "2026-10-05", "2026-10-05", 1)]


def test_windows_checked_later_join_the_alert_they_lead_to(store, tmp_path, hook):
    """A daily check opens an alert on day 7; `check --all` afterwards finds day 6 fired too: the alert opened
    on day 6 (one run of consecutive firing windows), nothing new is sent."""
    cfg = _config(tmp_path, hook.url)
    out = json.loads(check(store, cfg, "--at", day(7), code=1).stdout)
    assert [(a["status"], a["alert_id"]) for a in out] == [("opened", 1)] and len(hook.bodies) == 1
    out = json.loads(check(store, cfg, "--all", "--start", day(5), code=1).stdout)
    assert [(a["window_start"][:10], a["status"], a["alert_id"], a["opened_window"][:10]) for a in out] == [
        (day(6), "firing", 1, day(6)), (day(7), "firing", 1, day(6)), (day(8), "firing", 1, day(6))]
    rows = Store(store, read_only=True).alert_list().to_pylist()
    assert [(r["alert_id"], str(r["opened_window"].date()), str(r["last_window"].date()), r["n_windows"])
            for r in rows] == [(1, day(6), day(8), 3)]
    assert len(hook.bodies) == 1
    # every window: the episode of days 2-3 (v1), before its latest alert, is recorded as a resolved alert (not
    # sent); v2 had no alert: its days 3-4 are new, opened and resolved, and sent once (as resolved)
    out = json.loads(check(store, cfg, "--all", code=1).stdout)
    assert [(a["window_start"][:10], a["series"]["model_version"], a["status"], a["alert_id"]) for a in out] == [
        (day(2), "v1", "fired", 2), (day(3), "v1", "fired", 2), (day(3), "v2", "opened", 3),
        (day(4), "v2", "resolved", 3), (day(6), "v1", "firing", 1), (day(7), "v1", "firing", 1),
        (day(8), "v1", "firing", 1)]
    assert len(hook.bodies) == 2 and [(a["status"], a["alert_id"]) for a in hook.bodies[1]["alerts"]] == [
        ("resolved", 3)]
    rows = Store(store, read_only=True).alert_list().to_pylist()
    assert [(r["alert_id"], r["state"], r["model_version"], str(r["opened_window"].date()),
             str(r["last_window"].date()), r["resolved_window"] and str(r["resolved_window"].date()), r["n_windows"])
            for r in rows] == [(1, "open", "v1", day(6), day(8), None, 3),
                               (3, "resolved", "v2", day(3), day(3), day(4), 1),
                               (2, "resolved", "v1", day(2), day(3), day(4), 2)]
    check(store, cfg, "--all", code=1)  # nothing changes any more
    assert len(hook.bodies) == 2 and Store(store, read_only=True).alert_list().num_rows == 3


def test_two_checks_at_once_deliver_a_change_once(store, tmp_path, hook):
    # two processes judge the same window while the webhook is slow: the first to reach the delivery
    # sends the change; the other waits for it (the notify lock), then finds nothing pending
    cfg = _config(tmp_path, hook.url)
    hook.delay = 1.5
    cmd = [sys.executable, "-c", "import sys; from ranklens.cli import main; sys.argv[0] = 'ranklens'; main()",
           "monitor", "check", "--store", str(store), "--config", str(cfg), "--at", day(2)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [1, 1], outs
    assert hook.tries == 1 and len(hook.bodies) == 1
    assert [(a["status"], a["alert_id"]) for a in hook.bodies[0]["alerts"]] == [("opened", 1)]
