"""`ranklens monitor report --html`: the monitoring of a time range as one self-contained page, checked by hand on
the seed's groups and opened from disk in Chromium."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from ranklens.cli import cli
from web_support import ARTIFACTS, SEED, TRAIN, V2, ndcg, require_chromium


def _data(page: str) -> dict[str, Any]:
    m = re.search(r"<script type='application/json' id='rl-data'>(.*?)</script>", page, re.DOTALL)
    assert m
    return json.loads(m.group(1))


def test_the_page_by_hand(seed_store: str) -> None:
    from ranklens.monitor import Store
    from ranklens.web.monitor_report import build_monitor_report

    st = Store(seed_store, config={}, read_only=True)
    page = build_monitor_report(st, "ndcg@5", where={"environment": "production"}, start="2026-10-02",
                                end="2026-10-04", ci="none", min_support=1, depth=1)
    data = _data(page)
    pts = {s["name"]: [(p["x"], p["y"]) for p in s["points"]] for s in data["series"]}
    v1 = sum(ndcg(g) for g in SEED.values()) / 3  # the seed: (0.61828 + 0.88546 + 1) / 3 = 0.83458
    v2 = sum(ndcg(g) for g in V2.values()) / 3
    assert pts["ranker \u00b7 v1 \u00b7 production"][0][1] == pytest.approx(v1, abs=1e-12)
    assert pts["ranker \u00b7 v2 \u00b7 production"][0][1] == pytest.approx(v2, abs=1e-12)
    # each series' own baseline: v1's training lists; v2 has none, so the model's training lists (the same two)
    train = (ndcg(TRAIN["tx"]) + ndcg(TRAIN["ty"])) / 2
    assert sorted(r["value"] for r in data["refs"]) == pytest.approx([train, train], abs=1e-12)
    # the slices of the range: v1's BR (z = 1.0) against the training BR list ty, its contribution by hand
    w = {g: ndcg(x) for g, x in SEED.items()}
    base_br, big = ndcg(TRAIN["ty"]), train
    rate = (1 / 3) * (w["z"] - base_br)
    mix = (1 / 3 - 1 / 2) * (base_br - big)
    row = re.search(r"<td class=l>ranker \u00b7 v1 \u00b7 production</td><td class=l>\d+\. country=BR</td>(.*?)</tr>",
                    page)
    assert row, "the slice of v1's BR lists is listed"
    cells = re.findall(r"<td>(.*?)</td>", row.group(1))
    assert cells[0] == f"{base_br:.4f}" and cells[1] == f"{w['z']:.4f}"
    assert f"{rate:.4f}" in cells and f"{mix:.4f}" in cells and f"<b>{rate + mix:.4f}</b>" in cells
    assert "ranklens monitor groups -m ndcg@5 --start 2026-10-02T00:00:00 --end 2026-10-04T00:00:00" in page
    # self-contained: nothing to fetch
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page, re.IGNORECASE)
    assert "<link" not in page and "@import" not in page
    assert not re.search(r"url\((?!\s*[\"']?#)", page)  # only fragment references (an SVG gradient)
    assert "default-src 'none'" in page and page.count("<script") == 3


def test_cli_writes_the_page_and_refuses_several_measures(sim_store: str, tmp_path: Path) -> None:
    out = tmp_path / "monitoring.html"
    r = CliRunner().invoke(cli, ["monitor", "report", "--store", sim_store, "--html", str(out), "--where",
                                 "environment=production", "--start", "2026-10-08", "--end", "2026-10-15"],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    page = out.read_text(encoding="utf-8")
    data = _data(page)
    assert data["measure"] == "ndcg@10" and data["markers"]  # the simulated decay fired alerts in the range
    assert "Slices" in page and "Alerts" in page
    from ranklens.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["monitor", "report", "--store", sim_store, "--html", str(out), "-m", "ndcg", "-k", "5", "-k", "10"])
    assert exc.value.code == 2


@pytest.mark.browser
def test_the_page_opens_from_disk_in_chromium(sim_store: str, tmp_path: Path) -> None:
    chromium = require_chromium()
    from playwright.sync_api import sync_playwright

    out = tmp_path / "monitoring.html"
    r = CliRunner().invoke(cli, ["monitor", "report", "--store", sim_store, "--html", str(out), "--start", "2026-10-08",
                                 "--end", "2026-10-15", "--where", "environment=production"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium)
        ctx = b.new_context(offline=True, viewport={"width": 1280, "height": 900})
        pg = ctx.new_page()
        problems: list[str] = []
        requests: list[str] = []
        pg.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
        pg.on("pageerror", lambda e: problems.append(str(e)))
        pg.on("request", lambda req: requests.append(req.url))
        pg.goto(out.as_uri())
        pg.wait_for_selector("#mr-overview svg")
        assert pg.locator("#mr-heatmap svg rect.rl-cell").count() > 0
        assert pg.locator("#mr-overview .rl-ref").count() == len(_data(out.read_text(encoding="utf-8"))["refs"]) > 0
        assert pg.locator("#mr-overview .rl-marker").count() > 0
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=str(ARTIFACTS / "monitor-report.png"), full_page=True)
        b.close()
    assert problems == []
    assert requests == [out.as_uri()]  # the file itself, nothing else


def test_a_store_without_training_lists_still_lists_its_alerts(tmp_path: Path) -> None:
    """Production lists only, a monitor against the previous day: it fires on day 2 (every list's one click moves
    from rank 1 to rank 3: NDCG@10 1 -> 1 / log2(4) = 0.5). The page has no training baseline to draw slices
    against; it says so, and still lists the alert (exit 0, not 2)."""
    import pyarrow as pa

    from ranklens.monitor import Store

    rows = []
    for day, at in (("2026-10-01", 1), ("2026-10-02", 3)):
        for i in range(40):
            rows += [{"timestamp": f"{day}T10:00:00", "model": "m", "model_version": "v1", "environment": "production",
                      "group_id": f"{day}-{i}", "item_id": f"{day}-{i}-{r}", "rank": r,
                      "labels": ["click"] if r == at else [], "country": "BR" if i % 2 else "US"}
                     for r in range(1, 7)]
    cfg = tmp_path / "ranklens.toml"
    cfg.write_text('[[monitors]]\nname = "vs previous day"\nmetric = "ndcg@10"\nrelative_drop = 0.1\n'
                   'min_groups = 10\nbaseline = "previous"\n')
    store = tmp_path / "s.duckdb"
    st = Store(store, config=str(cfg))
    st.ingest(pa.Table.from_pylist(rows))
    fired = st.check()
    assert [(a.monitor, a.value, a.baseline) for a in fired] == [("vs previous day", 0.5, 1.0)]
    out = tmp_path / "page.html"
    r = CliRunner().invoke(cli, ["monitor", "report", "--store", str(store), "--config", str(cfg), "--html", str(out)],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    page = out.read_text(encoding="utf-8")
    assert "No baseline to compare with" in page and "environment=training" in page
    row = re.search(r"<tr><td>1</td><td class=l>open</td><td class=l>warning</td><td class=l>vs previous day</td>"
                    r"(.*?)</tr>", page)
    assert row and "<td>0.5000</td>" in row.group(1), "the alert is listed with its value"


def test_the_old_keyword_metric_still_works_and_warns(seed_store: str) -> None:
    from ranklens.monitor import Store
    from ranklens.web.monitor_report import build_monitor_report

    st = Store(seed_store, config={}, read_only=True)
    kw = dict(where={"environment": "production"}, start="2026-10-02", end="2026-10-04", ci="none", min_support=1,
              depth=1)
    with pytest.warns(DeprecationWarning, match="`metric=` is deprecated, use `measure=`"):
        old = build_monitor_report(st, metric="ndcg@5", **kw)
    assert _data(old)["series"] == _data(build_monitor_report(st, measure="ndcg@5", **kw))["series"]
