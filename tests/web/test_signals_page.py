"""The Signals page and /api/signals: the numbers are the store's (Store.signals), the page draws them in a real
browser (Debian's Chromium via Playwright) without console errors, with the planted broken scores visible."""

from __future__ import annotations

import json
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from web_support import ARTIFACTS, LiveServer, client_for, require_chromium

CONFIG = {"monitors": [{"name": "score drift", "metric": "psi(score)", "threshold": 0.2, "min_groups": 30,
                        "where": {"environment": "production"}}]}


@pytest.fixture(scope="module")
def broken_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Six days; the simulator's broken scores from the fifth; the score monitor's alerts recorded."""
    from ranklens.monitor import Store
    from ranklens.monitor.simulate import simulate

    path = str(tmp_path_factory.mktemp("signals") / "s.duckdb")
    st = Store(path, config=CONFIG)
    st.ingest(simulate(None, days=6, groups_per_day=200, decay="broken_scores", decay_slice=None,
                       decay_start="2026-10-05", seed=4))
    st.check(all_windows=True, notify=False)
    return path


def test_api_signals_are_the_stores(broken_store: str) -> None:
    from ranklens.monitor import Store

    c = client_for(broken_store, config=CONFIG)
    r = c.get("/api/signals?metric=psi(score),gini@5&environment=production&model_version=v1")
    assert r.status_code == 200, r.text
    body = r.json()
    want = Store(broken_store, config=CONFIG, read_only=True).signals(
        ["psi(score)", "gini@5"], where={"environment": "production", "model_version": "v1"}).to_pylist()
    got = [(x["signal"], x["value"], x["n"]) for x in body["rows"]]
    assert got == [(x["signal"], x["value"], x["n"]) for x in want]
    assert body["signals"] == ["psi(score)", "gini@5"] and body["baseline"] == "environment=training"
    assert set(body["definitions"]) == {"psi", "gini"}
    bad = c.get("/api/signals?metric=psi(nope)")
    assert bad.status_code == 400 and "unknown signal" in bad.json()["error"]
    unknown = c.get("/api/signals?colour=XX")  # not a filter column of this store
    assert unknown.status_code == 400 and unknown.json()["parameter"] == "colour"


@pytest.mark.browser
def test_signals_page_in_chromium(broken_store: str) -> None:
    chromium = require_chromium()
    from playwright.sync_api import sync_playwright

    from ranklens.web import create_app

    srv = LiveServer(create_app(broken_store, config=CONFIG))
    problems: list[str] = []
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=chromium)
            page = b.new_page(viewport={"width": 1360, "height": 900})
            page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.goto(srv.url + "/signals")
            page.wait_for_function("() => !!(document.querySelector('#signals-chart svg')"
                                   " && document.querySelector('#signals-table table'))", timeout=30000)
            page.wait_for_load_state("networkidle")
            assert page.locator("#error").is_hidden()
            assert page.locator("#signals-title").inner_text().startswith("psi(score) per day")
            # the table lists every signal of the last window; the broken scores are red there
            q = urllib.parse.urlencode({"environment": "production", "model": "ranker"})
            api = json.load(urllib.request.urlopen(srv.url + "/api/signals?" + q))
            last = max(r["window"] for r in api["rows"])
            assert page.locator("#signals-table tbody tr").count() == sum(r["window"] == last for r in api["rows"])
            assert page.locator("#signals-table td.neg").count() >= 2  # psi(score) and ks(score) of a series
            # the score alerts recorded by the monitor are counted and drawn on the chart
            alerts = json.load(urllib.request.urlopen(srv.url + "/api/alerts"))["rows"]
            n_fired = sum(a["metric"] == "psi(score)" and a["environment"] == "production" for a in alerts)
            assert n_fired >= 2
            assert f"SIGNAL ALERTS\n{n_fired}\n" in page.locator("#signals-kpis").inner_text().upper()
            before = page.locator("#signals-chart").get_attribute("data-signature")
            page.select_option("#signals-controls select[name=signal]", "gini")
            page.wait_for_function("b => document.querySelector('#signals-chart').dataset.signature !== b", arg=before)
            assert "signal=gini" in page.url
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "signals.png"), full_page=True)
            b.close()
    finally:
        srv.stop()
    assert problems == []
