"""The Alerts page and the provisional windows on the dashboard: /api/alert-list against Store.alert_list (states,
paging, root cause), and both pages looked at in Chromium (a store ingested "up to yesterday": its last
windows are provisional, drawn grey and hatched with a legend entry)."""

from __future__ import annotations

import datetime as dt
import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from web_support import ARTIFACTS, LiveServer, client_for, require_chromium

TODAY = dt.datetime(2026, 10, 14)  # the store below holds what arrived before this


@pytest.fixture(scope="module")
def yesterday_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The simulator's stream with only the rows stamped before TODAY (late labels of the last days missing),
    its alerts recorded by check --all."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ranklens.monitor import Store
    from ranklens.monitor.simulate import simulate

    ev = simulate(None, days=14, groups_per_day=150, seed=3, decay_start="2026-10-09", v2_start="2026-10-05",
                  second_model=True, training_groups=400)
    ts = ev.column("timestamp")
    ev = ev.filter(pc.less(ts, pa.scalar(TODAY, ts.type)))
    path = str(tmp_path_factory.mktemp("ystore") / "y.duckdb")
    st = Store(path, config={})
    st.ingest(ev)
    st.check(all_windows=True, notify=False)
    return path


def _plain_row(r: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in r.items():
        if k in ("series", "top_slices", "notified"):
            continue
        out[k] = v.isoformat() + "Z" if hasattr(v, "hour") else v
    out["series"] = json.loads(r["series"])
    top = [{k: v for k, v in t.items() if v is not None} for t in r["top_slices"]]  # a list, not JSON text
    out["top_slice"] = top[0] if top else None
    return out


def test_alert_list_pages_through_the_stores_alerts(yesterday_store: str) -> None:
    from ranklens.monitor import Store

    client = client_for(yesterday_store, config={})
    every = Store(yesterday_store, read_only=True).alert_list().to_pylist()
    assert len(every) >= 3 and {r["state"] for r in every} == {"open", "resolved"}
    got = client.get("/api/alert-list?limit=2").json()
    assert got["total"] == len(every) and got["offset"] == 0 and got["limit"] == 2
    assert got["counts"] == {s: sum(r["state"] == s for r in every) for s in ("open", "resolved")}
    assert [r["alert_id"] for r in got["rows"]] == [r["alert_id"] for r in every[:2]]
    want = _plain_row(every[0])
    keys = ("alert_id", "state", "monitor", "metric", "opened_window", "last_window", "n_windows", "root_cause",
            "series", "top_slice", "reason")
    assert {k: got["rows"][0][k] for k in keys} == {k: want[k] for k in keys}
    assert got["rows"][0]["value"] == pytest.approx(want["value"], abs=1e-12)
    page2 = client.get("/api/alert-list?limit=2&offset=2").json()
    assert [r["alert_id"] for r in page2["rows"]] == [r["alert_id"] for r in every[2:4]]
    opened = client.get("/api/alert-list?state=open").json()
    assert [r["alert_id"] for r in opened["rows"]] == [r["alert_id"] for r in every if r["state"] == "open"]
    assert opened["total"] == got["counts"]["open"]
    for url, name in (("/api/alert-list?state=closed", "state"), ("/api/alert-list?limit=0", "limit"),
                      ("/api/alert-list?offset=-1", "offset")):
        r = client.get(url)
        assert r.status_code == 400 and r.json()["parameter"] == name
    # the report rows carry the flag the chart draws: the windows ending after the store clock minus the maturity
    st = Store(yesterday_store, read_only=True)
    m = st.maturity()
    rows = client.get("/api/report?metric=ndcg@10&environment=production&ci=none").json()["rows"]
    assert rows and all(r["provisional"] is (dt.datetime.fromisoformat(r["window"][:19]) + dt.timedelta(days=1)
                                             > m.clock - m.delay) for r in rows)
    assert any(r["provisional"] for r in rows) and not all(r["provisional"] for r in rows)


@pytest.mark.browser
def test_alerts_page_and_provisional_windows_in_chromium(yesterday_store: str) -> None:
    chromium = require_chromium()
    from playwright.sync_api import sync_playwright

    from ranklens.monitor import Store
    from ranklens.web import create_app

    every = Store(yesterday_store, read_only=True).alert_list().to_pylist()
    srv = LiveServer(create_app(yesterday_store, config={}))
    problems: list[str] = []
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=chromium)
            page = b.new_page(viewport={"width": 1360, "height": 900})
            page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            # Alerts: one row per alert, states as badges, paging, root cause linking to its slice
            page.goto(srv.url + "/alerts?limit=2")
            page.wait_for_function("() => document.querySelectorAll('#alerts-rows tbody tr').length === 2")
            ids = page.locator("#alerts-rows tbody tr td:first-child").all_inner_texts()
            assert ids == [str(r["alert_id"]) for r in every[:2]]
            badges = page.locator("#alerts-rows .badge").all_inner_texts()
            assert badges == [r["state"] for r in every[:2]]
            assert page.locator("#alerts-pager .pager-text").inner_text() == f"1\u20132 of {len(every)}"
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "alerts.png"), full_page=True)
            page.click("#alerts-pager button[data-go=next]")
            page.wait_for_function("(id) => document.querySelector('#alerts-rows tbody tr td').textContent === id",
                                   arg=str(every[2]["alert_id"]))
            assert "offset=2" in page.url
            with_cause = [r for r in every if r["top_slices"]]  # a list (it was JSON text)
            assert with_cause
            r0 = with_cause[0]
            top = r0["top_slices"][0]
            page.goto(srv.url + "/alerts?limit=100")
            page.wait_for_function("() => document.querySelector('#alerts-rows')")
            link = page.locator(f"#alert-{r0['alert_id']} td a").first
            assert link.inner_text() == f"{top['column']}={top['value']}" + (
                f" {top['column2']}={top['value2']}" if top.get("column2") else "")
            href = link.get_attribute("href")
            assert href.startswith("/slices?") and f"start={r0['last_window'].date()}" in href
            assert f"model_version={r0['model_version']}" in href
            page.click(f"#alert-{r0['alert_id']} td a >> nth=0")
            page.wait_for_function("() => document.querySelector('#slices-table table')")
            # Overview: the provisional windows drawn hollow and grey over a hatched area, with a legend entry
            page.goto(srv.url + "/?environment=production")
            page.wait_for_function("() => document.querySelector('#overview-chart svg')")
            legend = page.locator("#overview-chart .rl-legend-item").all_inner_texts()
            assert "provisional: labels not mature" in legend
            assert page.locator("#overview-chart .rl-provisional rect").count() == 1
            n_prov = page.locator("#overview-chart circle.rl-provisional-point").count()
            rep = json.load(urllib.request.urlopen(srv.url + "/api/report?metric=ndcg@10&model=ranker&environment="
                                                   "production&ci=none"))
            assert n_prov == sum(r["provisional"] for r in rep["rows"]) > 0
            assert page.locator("#overview-chart path.rl-provisional-line").count() >= 1
            page.screenshot(path=str(ARTIFACTS / "overview-provisional.png"), full_page=True)
            b.close()
    finally:
        srv.stop()
    assert problems == []
