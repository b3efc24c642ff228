"""The dashboard in a real browser: Debian's Chromium driven by Playwright, over a store filled by the simulator.

`make browser` (a prerequisite of `make test`) installs Chromium. Without /usr/bin/chromium these tests fail, on
purpose.
Screenshots of every page are saved under test-artifacts/web/.
"""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from web_support import ARTIFACTS, require_chromium

pytestmark = pytest.mark.browser

PAGES = {"overview": "/", "slices": "/slices", "groups": "/groups", "compare": "/compare", "api": "/api/docs"}
# what shows that a page has drawn its data
READY = {
    "overview": "document.querySelector('#overview-chart svg')"
                " && document.querySelectorAll('#overview-kpis .kpi').length > 0",
    "slices": "document.querySelector('#slices-table table') && document.querySelector('#slices-heatmap svg')",
    "groups": "document.querySelector('#groups-table table') && document.querySelector('#explain-rows tbody tr')",
    "compare": "document.querySelector('#compare-means svg') && document.querySelector('#compare-diff svg')",
    "api": "document.querySelectorAll('#endpoints section').length > 5",
}


@pytest.fixture(scope="module")
def browser() -> Any:
    chromium = require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium)
        yield b
        b.close()


class Watched:
    """A page whose console errors, page errors, failed requests and requests elsewhere are recorded."""

    def __init__(self, browser: Any, base: str) -> None:
        self.page = browser.new_page(viewport={"width": 1360, "height": 900})
        self.problems: list[str] = []
        self.base = base
        self.page.on("console", lambda m: self.problems.append(f"console {m.type}: {m.text}")
                     if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("requestfailed", lambda r: self.problems.append(f"request failed: {r.url}"))
        self.page.on("request", lambda r: None if r.url.startswith(base) or r.url.startswith("data:")
                     else self.problems.append(f"request elsewhere: {r.url}"))
        self.page.on("response",
                     lambda r: self.problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)

    def open(self, path: str, ready: str) -> None:
        self.page.goto(self.base + path)
        self.page.wait_for_function(f"() => !!({ready})", timeout=30000)

    def close(self) -> None:
        self.page.close()


def _shot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000
    return path


@pytest.mark.parametrize("name", list(PAGES))
def test_page_loads_without_console_errors(browser: Any, live_sim: Any, name: str) -> None:
    w = Watched(browser, live_sim.url)
    try:
        w.open(PAGES[name], READY[name])
        w.page.wait_for_load_state("networkidle")
        assert w.page.locator("#error").is_hidden() if name != "api" else True
        _shot(w.page, name)
        assert w.problems == []
    finally:
        w.close()


def test_explained_group_follows_the_tables_measure(browser: Any, live_sim: Any) -> None:
    w = Watched(browser, live_sim.url)
    try:
        # NDCG@5 in the table: the worst group is explained at k = 5, as NDCG@5, with the table's value
        w.open("/groups?measure=ndcg@5", READY["groups"])
        w.page.wait_for_function("() => document.querySelector('#explain-title').textContent.includes('ndcg@5')")
        assert w.page.locator("#group-form input[name=k]").input_value() == "5"
        assert w.page.locator("#explain-measure-note").count() == 0
        worst = json.load(urllib.request.urlopen(live_sim.url + "/api/groups?measure=ndcg@5&limit=1"))["rows"][0]
        summary = w.page.locator("#explain-summary").inner_text()
        assert f"= {worst['value']:.5f}" in summary.replace("DCG / IDCG ", "")
        # MAP@10 is not a sum over positions: the card explains NDCG and says so
        w.open("/groups?measure=map@10", READY["groups"])
        w.page.wait_for_selector("#explain-measure-note")
        assert w.page.locator("#explain-measure-note").inner_text() == (
            "The table shows map@10, which this card does not decompose; this card explains ndcg@10.")
        assert w.problems == []
    finally:
        w.close()


def test_overview_filter_change_updates_the_chart(browser: Any, live_sim: Any) -> None:
    w = Watched(browser, live_sim.url)
    try:
        w.open("/", READY["overview"])
        chart = w.page.locator("#overview-chart")
        before = chart.get_attribute("data-signature")
        legend_before = w.page.locator("#overview-chart .rl-legend-item").all_inner_texts()
        w.page.select_option("#overview-controls select[name=k]", "5")
        w.page.wait_for_function(
            f"() => document.querySelector('#overview-chart').dataset.signature !== {json.dumps(before)}")
        assert w.page.locator("#overview-title").inner_text() == "ndcg@5 per day"
        assert "measure=ndcg%405" in w.page.url or "measure=ndcg@5" in w.page.url
        # the chart draws what the API says for the new filter
        api = json.load(urllib.request.urlopen(live_sim.url + "/api/report?metric=ndcg@5&model=ranker&window=day"
                                               "&start=2026-09-24&end=2026-10-15&ci=bootstrap"))
        series = {(r["model"], r["model_version"], r["environment"]) for r in api["rows"]}
        names = [t for t in w.page.locator("#overview-chart .rl-legend-item").all_inner_texts()
                 if "\u00b7" in t and not t.startswith("baseline of")]
        assert len(names) == len(series)
        # one environment only: fewer series
        w.page.select_option("#overview-controls select[name=environment]", "production")
        w.page.wait_for_function("() => [...document.querySelectorAll('#overview-chart .rl-legend-item')]"
                                 ".every(e => !e.textContent.includes('training'))")
        legend_after = w.page.locator("#overview-chart .rl-legend-item").all_inner_texts()
        assert len(legend_after) < len(legend_before)
        # a weekly window: fewer points on the line
        points = w.page.locator("#overview-chart circle").count()
        w.page.select_option("#overview-controls select[name=window]", "week")
        w.page.wait_for_function(f"() => document.querySelectorAll('#overview-chart circle').length < {points}")
        _shot(w.page, "overview-filtered")
        assert w.problems == []
    finally:
        w.close()


def test_group_search_shows_its_table(browser: Any, live_sim: Any) -> None:
    worst = json.load(urllib.request.urlopen(live_sim.url + "/api/groups?metric=ndcg@10&limit=1"))["rows"][0]
    w = Watched(browser, live_sim.url)
    try:
        w.open("/groups", READY["groups"])
        w.page.fill("#group-form input[name=group_id]", worst["group_id"])
        w.page.select_option("#group-form select[name=model_version]", worst["model_version"])
        w.page.select_option("#group-form select[name=environment]", worst["environment"])
        w.page.click("#group-form button[type=submit]")
        # the page explained the worst group of its window on arrival; now the title names the searched one
        w.page.wait_for_function("([gid, v]) => { const t = document.querySelector('#explain-title').textContent;"
                                 " return t.includes('group ' + gid + ' ') && t.includes(v); }",
                                 arg=[worst["group_id"], worst["model_version"] + " \u00b7 " + worst["environment"]])
        q = (f"group_id={worst['group_id']}&model={worst['model']}&model_version={worst['model_version']}"
             f"&environment={worst['environment']}&k=10")
        e = json.load(urllib.request.urlopen(live_sim.url + "/api/explain?" + q))
        # the whole list, beyond k: one row per position, and the cutoff line after position k
        assert len(e["rows"]) == e["n_items"] > 10
        rows = w.page.locator("#explain-rows tbody tr:not(.cutoff)")
        assert rows.count() == max(len(e["rows"]), len(e["ideal_rows"]))
        assert w.page.locator("#explain-rows tbody tr.cutoff").count() == 1
        assert w.page.locator("#explain-rows tbody tr.beyond").count() == len(e["rows"]) - 10
        first = rows.nth(0).locator("td").all_inner_texts()
        served = e["rows"][0]
        assert first[0] == "1" and first[3] == str(served["item"])
        # the served rank or the real score (never the negative rank), and the item's labels
        assert first[1] == ("" if served["rank"] is None else str(served["rank"]))
        assert first[2] == ("" if served["score"] is None else f"{served['score']:.4f}")
        assert first[4] == ", ".join(served["labels"])
        assert first[7] == "1.00000"  # the discount of position 1
        labelled = [r for r in e["rows"] if r["labels"]]
        assert labelled, "the simulated lists carry click labels"
        summary = w.page.locator("#explain-summary").inner_text()
        assert f"{e['dcg']:.5f}" in summary and f"{e['idcg']:.5f}" in summary and f"{e['value']:.5f}" in summary
        headers = w.page.locator("#explain-rows thead th").all_inner_texts()
        assert headers[:10] == ["pos", "rank", "score", "item", "labels", "relevance", "gain", "discount",
                                "contribution", "DCG"]
        assert "ideal item" in headers
        _shot(w.page, "groups-explain")
        # a group that does not exist: a readable error, no table
        w.page.fill("#group-form input[name=group_id]", "no-such-group")
        w.page.click("#group-form button[type=submit]")
        w.page.wait_for_selector("#error:not([hidden])")
        assert "no-such-group" in w.page.locator("#error").inner_text()
        assert w.page.locator("#explain-card").is_hidden()
        # clicking a group id in the worst-groups table explains it
        w.page.locator("#groups-table a.pick").first.click()
        w.page.wait_for_function("() => !document.querySelector('#explain-card').hidden")
        # the only problems: the 404 of the group that does not exist (the response and its console line)
        assert [p for p in w.problems if "404" not in p] == []
    finally:
        w.close()


def test_slices_table_sorts_and_compare_changes(browser: Any, live_sim: Any) -> None:
    w = Watched(browser, live_sim.url)
    try:
        w.open("/slices", READY["slices"])
        # most harmful first among the slices listed alone; pooled "(other)" rows last
        texts = w.page.locator("#slices-table tbody tr td:nth-child(2)").all_inner_texts()
        contributions = [float(x) for x in w.page.locator("#slices-table tbody tr td:nth-child(11)").all_inner_texts()]
        pooled = ["below the minimum support" in t for t in texts]
        alone = [c for p, c in zip(pooled, contributions) if not p]
        assert alone == sorted(alone) and pooled == sorted(pooled)
        w.page.click("#slices-table th[data-key=n_window]")
        counts = [int(x) for x in w.page.locator("#slices-table tbody tr td:nth-child(7)").all_inner_texts()]
        assert counts == sorted(counts)
        w.page.click("#slices-table th[data-key=n_window]")
        counts = [int(x) for x in w.page.locator("#slices-table tbody tr td:nth-child(7)").all_inner_texts()]
        assert counts == sorted(counts, reverse=True)
        w.open("/compare", READY["compare"])
        # by default both sides cover the same days
        dates = [w.page.input_value(f"input[name={n}]") for n in ("a_start", "a_end", "b_start", "b_end")]
        assert dates[0] and dates[:2] == dates[2:]
        assert w.page.locator("#compare-warning").is_hidden()
        before = w.page.locator("#compare-diff").get_attribute("data-signature")
        w.page.select_option("select[name=b_model_version]", "v2")
        w.page.wait_for_function(
            f"() => document.querySelector('#compare-diff').dataset.signature !== {json.dumps(before)}")
        assert "not significant" in w.page.locator("#compare-verdict").inner_text()  # the same selection twice
        assert w.problems == []
    finally:
        w.close()


def test_slices_pairs_p_values_filters_and_links_to_groups(browser: Any, live_sim: Any) -> None:
    w = Watched(browser, live_sim.url)
    try:
        w.open("/slices?min_support=5&model=ranker&model_version=v1", READY["slices"])
        url = (live_sim.url + "/api/slices?metric=ndcg@10&start=2026-10-08&end=2026-10-15&environment=production"
               "&model=ranker&model_version=v1&min_support=5&depth=2")
        api = json.load(urllib.request.urlopen(url))
        rows = w.page.locator("#slices-table tbody tr")
        assert rows.count() == len(api["rows"])
        assert {r["model_version"] for r in api["rows"]} == {"v1"}  # the version filter
        assert any(r["column2"] for r in api["rows"])  # two-column slices
        headers = w.page.locator("#slices-table thead th").all_inner_texts()
        assert "p-value" in headers and "adjusted p" in headers and "series" not in headers  # one series
        first = api["rows"][0]
        cells = rows.nth(0).locator("td").all_inner_texts()
        p = first["p_adjusted"]
        assert cells[headers.index("adjusted p")] == (f"{p:.1e}" if p < 1e-4 else f"{p:.4f}")
        # the heatmap: each row against its own baseline (the tooltip names it)
        hm = json.load(urllib.request.urlopen(url.replace("/api/slices", "/api/heatmap") + "&window=day&limit=12"
                                              "&history_start=2026-09-24"))
        assert len(set(round(c, 6) for c in hm["centers"])) > 1
        w.page.locator("#slices-heatmap rect.rl-cell").last.hover()
        tip = w.page.locator("#slices-heatmap .rl-tip").inner_text()
        assert f"its baseline: {hm['centers'][-1]:.4f}" in tip
        _shot(w.page, "slices-filtered")
        # a row's "groups" link opens the Groups page over that slice's lists in the window
        link = rows.nth(0).locator("a.groups-link")
        link.click()
        w.page.wait_for_function("() => location.pathname === '/groups'"
                                 " && document.querySelector('#groups-table table')")
        chips = w.page.locator("#groups-filters .chip").all_inner_texts()
        assert f"{first['column']}={first['value']}" in chips and "model_version=v1" in chips
        got = json.load(urllib.request.urlopen(
            live_sim.url + "/api/groups?metric=ndcg@10&start=2026-10-08&end=2026-10-15&limit=50&environment=production"
            f"&model=ranker&model_version=v1&{first['column']}={first['value']}"
            + (f"&{first['column2']}={first['value2']}" if first["column2"] else "")))["rows"]
        shown = w.page.locator("#groups-table tbody tr td:nth-child(1)").all_inner_texts()
        assert shown == [g["group_id"] for g in got] and len(got) == min(50, first["n_window"])
        _shot(w.page, "groups-of-a-slice")
        assert w.problems == []
    finally:
        w.close()


def test_overview_draws_each_series_baseline_and_no_series_in_alert_red(browser: Any, live_sim: Any) -> None:
    w = Watched(browser, live_sim.url)
    try:
        w.open("/", READY["overview"])
        strokes = w.page.eval_on_selector_all("#overview-chart .rl-series path",
                                              "ps => ps.map(p => p.getAttribute('stroke'))")
        alert = w.page.evaluate("RLCharts.alert")
        assert strokes and alert not in strokes
        dashed = w.page.eval_on_selector_all("#overview-chart .rl-series",
                                             "gs => gs.filter(g => g.querySelector('path').getAttribute("
                                             "'stroke-dasharray')).map(g => g.dataset.name)")
        assert dashed and all("training" in n for n in dashed)
        base = json.load(urllib.request.urlopen(live_sim.url + "/api/baselines?metric=ndcg@10&model=ranker"
                                                "&start=2026-09-24&end=2026-10-15"))["rows"]
        refs = [b for b in base if not b["own"]]
        assert len(refs) == w.page.locator("#overview-chart .rl-ref").count() > 0
        titles = w.page.eval_on_selector_all("#overview-chart .rl-ref title", "ts => ts.map(t => t.textContent)")
        assert sorted(titles) == sorted(f"baseline of {b['model']} \u00b7 {b['model_version']} \u00b7 "
                                        f"{b['environment']}: {b['value']:.4f}" for b in refs)
        assert w.problems == []
    finally:
        w.close()
