"""The dashboard (every endpoint and page showing a chosen measure) and `monitor report --html` say which click
measure is naive and which debiased (#31 point 4b), with the source of the debiased one's propensities: the
configuration, or the fit on the store's logs with what it was fitted on (its rows and lists, counted here by hand
from the events)."""

from __future__ import annotations

import re
import sys
from html import unescape
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from web_support import client_for

COLUMNS = ["timestamp", "model", "model_version", "environment", "group_id", "item_id", "rank", "labels", "query"]
EXAM = [1.0, 0.6, 0.45, 0.35, 0.3, 0.25, 0.2, 0.18, 0.15, 0.13]


@pytest.fixture(scope="module")
def events() -> Any:
    from ranklens import online

    sim = online.simulate({"control": 1.0, "treatment": 0.6}, n_users=1500, n_queries=20, n_candidates=10, k=6,
                          policy="plackett_luce", temperature=2.0, days=7, seed=5)
    return sim.events.select(COLUMNS)


def _store(tmp_path: Path, events: Any, propensity: dict[str, Any], tracked: tuple[str, ...] = ("dcg@10",)
           ) -> tuple[str, dict[str, Any]]:
    from ranklens.monitor import Store

    config = {"monitors": [], "evaluation": {"empty": 0, "tracked": list(tracked)}, "propensity": propensity,
              "baseline": {"start": "2026-10-01", "end": "2026-10-03"}}
    path = str(tmp_path / "s.duckdb")
    Store(path, config=config).ingest(events)
    return path, config


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", html)))


def test_the_api_labels_each_measure(tmp_path: Path, events: Any) -> None:
    path, config = _store(tmp_path, events, {"source": "config", "examination": EXAM})
    client = client_for(path, config=config)
    naive = client.get("/api/report", params={"measure": "dcg@10", "ci": "none"}).json()["label"]
    ips = client.get("/api/report", params={"measure": "ips_dcg@10", "ci": "none"}).json()["label"]
    assert naive["kind"] == "naive" and "source" not in naive
    assert ips["kind"] == "debiased"
    assert ips["source"] == f"propensities from the configuration ([propensity] examination, {len(EXAM)} ranks)"
    # the served page has the place the label is written into, and its script writes it there from the answer
    page = client.get("/").text
    assert "id=\"overview-measure-kind\"" in page
    script = client.get("/static/app.js").text
    assert "#overview-measure-kind" in script and "lab.source" in script


#: every endpoint answering about a measure the user chose, with what it needs besides the measure
MEASURE_ENDPOINTS = {
    "/api/report": {"ci": "none"},
    "/api/baseline": {},
    "/api/baselines": {"start": "2026-10-04", "end": "2026-10-08"},
    "/api/slices": {"start": "2026-10-04", "end": "2026-10-08", "depth": "1", "min_support": "5"},
    "/api/heatmap": {"start": "2026-10-04", "end": "2026-10-08", "depth": "1", "min_support": "5", "limit": "2"},
    "/api/groups": {"limit": "3"},
    "/api/compare": {"a_model_version": "treatment", "b_model_version": "control", "n_resamples": "50"},
}


def test_every_measure_endpoint_carries_the_label(tmp_path: Path, events: Any) -> None:
    from ranklens.web.api import ENDPOINTS

    path, config = _store(tmp_path, events, {"source": "config", "examination": EXAM})
    client = client_for(path, config=config)
    # the endpoints with a `measure` parameter, but /api/alerts (there it only filters the alerts) and /api/explain
    # (there it is NDCG or DCG of one list's stored gains, which are never debiased)
    chosen = {e.path for e in ENDPOINTS if any(p.name == "measure" for p in e.params)} - {"/api/alerts",
                                                                                            "/api/explain"}
    assert chosen == set(MEASURE_ENDPOINTS)
    naive = {"measure": "dcg@10", "kind": "naive", "label": "naive: gains as logged (clicks where users looked)"}
    debiased = {"measure": "ips_dcg@10", "kind": "debiased",
                "label": "debiased: each gain over the examination of its served rank (inverse propensity)",
                "source": f"propensities from the configuration ([propensity] examination, {len(EXAM)} ranks)"}
    for endpoint, params in MEASURE_ENDPOINTS.items():
        for expected in (naive, debiased):
            r = client.get(endpoint, params={**params, "measure": expected["measure"]})
            assert r.status_code == 200, (endpoint, r.text)
            assert r.json()["label"] == expected, endpoint
    # the Slices, Groups and Compare pages have their place for it, and their scripts write it from the answer
    for page, place, script in (("/slices", "slices-measure-kind", "slices.js"),
                                ("/groups", "groups-measure-kind", "groups.js"),
                                ("/compare", "compare-measure-kind", "app.js")):
        assert f'id="{place}"' in client.get(page).text
        assert f'measureKind($("#{place}"), metric, ' in client.get(f"/static/{script}").text


def test_the_html_report_labels_naive_and_fitted(tmp_path: Path, events: Any) -> None:
    import numpy as np

    from ranklens.monitor import Store
    from ranklens.web.monitor_report import build_monitor_report

    path, config = _store(tmp_path, events, {"source": "fitted", "query": "query"})
    st = Store(path, config=config, read_only=True)
    debiased = _text(build_monitor_report(st, measure="ips_dcg@10", ci="none", slices=3))
    naive = _text(build_monitor_report(st, measure="dcg@10", ci="none", slices=3))
    rows = events.num_rows  # labels come in-line: the maturity is 0, every list is mature
    lists = len(np.unique(np.asarray(events.column("group_id").to_pylist())))
    assert "ips_dcg@10 is debiased" in debiased
    assert f"propensities fitted on the store's logs (position-based model, EM): {rows:,} rows, {lists:,} lists" \
        in debiased
    assert debiased.count("ips_dcg@10 is debiased") == 2  # in what the page shows and over the overview
    assert "dcg@10 is naive: gains as logged" in naive and "propensities" not in naive.split("Slices")[0]


@pytest.mark.browser
def test_every_page_shows_the_label_in_chromium(tmp_path: Path, events: Any) -> None:
    from playwright.sync_api import sync_playwright

    from ranklens.web import create_app
    from web_support import LiveServer, require_chromium

    chromium = require_chromium()
    path, config = _store(tmp_path, events, {"source": "config", "examination": EXAM}, ("dcg@10", "ips_dcg@10"))
    srv = LiveServer(create_app(path, config=config))
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=chromium)
            page = b.new_page()
            for place, address in (("overview", "/?start=2026-10-01&end=2026-10-08&"), ("slices", "/slices?"),
                                   ("groups", "/groups?"), ("compare", "/compare?")):
                for metric, kind in (("ips_dcg@10", "debiased"), ("dcg@10", "naive")):
                    page.goto(f"{srv.url}{address}measure={metric}")
                    page.wait_for_function(f"() => document.querySelector('#{place}-measure-kind').textContent"
                                           ".length > 0", timeout=30000)
                    text = page.locator(f"#{place}-measure-kind").inner_text()
                    assert text.startswith(f"{metric} is {kind}: "), (place, text)
                    assert ("propensities from the configuration" in text) == (kind == "debiased"), (place, text)
            b.close()
    finally:
        srv.stop()
