"""`ranklens report`: one self-contained HTML file, checked by hand on the seed's groups and opened from disk in
Chromium."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from web_support import ARTIFACTS, SEED, ndcg, require_chromium

ROOT = Path(__file__).resolve().parents[2]
DL19 = ROOT / "examples" / "data"


def _write_trec(tmp: Path) -> tuple[str, str, str]:
    """The seed's groups as TREC files: qrels, a run in the seed's order, and the ideal run."""
    qrels, run, ideal = [], [], []
    for q, gains in SEED.items():
        for i, g in enumerate(gains):
            qrels.append(f"{q} 0 {q}{i} {g}")
            run.append(f"{q} Q0 {q}{i} {i + 1} {10 - i} served")
        order = sorted(range(len(gains)), key=lambda i: (-gains[i], i))
        for r, i in enumerate(order):
            ideal.append(f"{q} Q0 {q}{i} {r + 1} {10 - r} ideal")
    paths = []
    for name, lines in (("qrels.txt", qrels), ("served.txt", run), ("ideal.txt", ideal)):
        (tmp / name).write_text("\n".join(lines) + "\n")
        paths.append(str(tmp / name))
    return paths[0], paths[1], paths[2]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ranklens.cli", *args], check=False, capture_output=True, text=True,
                          timeout=300)


def _data(page: str) -> dict[str, Any]:
    m = re.search(r"<script type='application/json' id='rl-data'>(.*?)</script>", page, re.DOTALL)
    assert m
    return json.loads(m.group(1))


def test_comparison_report_by_hand(tmp_path: Path) -> None:
    qrels, served, ideal = _write_trec(tmp_path)
    out = tmp_path / "report.html"
    r = _cli("report", qrels, served, ideal, "-m", "ndcg@5", "-m", "ndcg@3", "--resamples", "500", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip() == f"ranklens: wrote {out}"
    page = out.read_text()
    # the table of `ranklens eval`: the seed's average NDCG (0.61828 + 0.88546 + 1) / 3 = 0.83458, the ideal run 1
    m = re.search(r"<table class='rl' id='eval-table'>.*?</table>", page, re.DOTALL)
    assert m
    table = m.group(0)
    assert "<td class='l'>ndcg@5</td><td>0.8346</td><td>1.0000</td>" in table
    n3 = sum(ndcg(g, 3) for g in SEED.values()) / 3  # x: 0.5 / 2.13093 (the seed's NDCG@3_x), y, z
    assert f"<td class='l'>ndcg@3</td><td>{n3:.4f}</td><td>1.0000</td>" in table
    # the table of `ranklens compare`: difference 1 - 0.83458, wins/ties/losses 2/1/0 (z is already ideal)
    assert "+0.1654" in page and "2/1/0" in page and "(baseline)" in page
    data = _data(page)
    assert data["baseline"] == "served"
    m5 = next(m for m in data["measures"] if m["measure"] == "ndcg@5")
    assert m5["diffs"][0]["value"] == pytest.approx(1 - sum(ndcg(g) for g in SEED.values()) / 3)
    pq = m5["per_query"][0]
    assert pq["labels"][:2] == ["x", "y"] and pq["labels"][2] == "z"  # sorted by difference, largest first
    assert pq["values"] == pytest.approx([1 - ndcg(SEED["x"]), 1 - ndcg(SEED["y"]), 0.0])
    # metric@k curves: ndcg@k of the served run at k = 1..100 (the seed's lists have 5 items)
    curve = next(c for c in data["curves"] if c["family"] == "ndcg")
    served_curve = {k: v for k, v in next(s for s in curve["series"] if s["name"] == "served")["points"]}
    assert served_curve[1] == pytest.approx((0 + 1 + 1) / 3)
    assert served_curve[3] == pytest.approx(n3)
    assert served_curve[100] == pytest.approx(0.83458, abs=5e-6)


def test_report_is_self_contained(tmp_path: Path) -> None:
    out = tmp_path / "dl19.html"
    r = _cli("report", str(DL19 / "qrels.dl19-passage.txt"), str(DL19 / "run.bm25.dl19.txt"),
             str(DL19 / "run.splade.dl19.txt"), "-m", "ndcg@10", "-m", "map", "-o", str(out), "--resamples", "1000")
    assert r.returncode == 0, r.stderr
    page = out.read_text()
    # no external reference: no src/href to anything, and a policy that forbids every fetch
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page, re.IGNORECASE)
    assert "<link" not in page and "@import" not in page
    assert not re.search(r"url\((?!\s*[\"']?#)", page)  # only fragment references (an SVG gradient)
    assert "default-src 'none'" in page
    for asset in ("charts.js", "report.js", "style.css"):
        text = (ROOT / "src" / "ranklens" / "web" / "static" / asset).read_text()
        assert text.strip()[:200] in page  # inlined
    data = _data(page)
    assert {m["measure"] for m in data["measures"]} == {"ndcg@10", "map"}


def test_single_run_report(tmp_path: Path) -> None:
    qrels, served, _ = _write_trec(tmp_path)
    out = tmp_path / "one.html"
    r = _cli("report", qrels, served, "-m", "ndcg@5", "-o", str(out), "--no-curves")
    assert r.returncode == 0, r.stderr
    page = out.read_text()
    assert "<td class='l'>ndcg@5</td><td>0.8346</td>" in page
    assert "Comparison" not in page
    data = _data(page)
    assert data["curves"] == []
    assert data["measures"][0]["per_query"][0]["values"] == pytest.approx(sorted((ndcg(g) for g in SEED.values()),
                                                                                reverse=True))


def test_report_errors_are_one_line(tmp_path: Path) -> None:
    qrels, served, _ = _write_trec(tmp_path)
    for args, needle in (
        (["report", qrels, str(tmp_path / "missing.txt"), "-o", str(tmp_path / "x.html")], "missing.txt"),
        (["report", qrels, served, "-o", str(tmp_path)], "is a directory"),
        (["report", qrels, served, "-m", "ndcg@zero", "-o", str(tmp_path / "y.html")], "ndcg@zero"),
        (["report", qrels], "RUNS"),
    ):
        r = _cli(*args)
        assert r.returncode == 2, (args, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("ranklens: error:") and needle in lines[0], r.stderr
    assert not (tmp_path / "x.html").exists()


@pytest.mark.browser
def test_hostile_ids_cannot_break_out_of_the_page(tmp_path: Path) -> None:
    """Query ids reach the page as escaped HTML and as JSON that cannot close its <script>."""
    from ranklens.web import build_report

    evil = "</script><script>document.title='pwned'</script><img src=x onerror=alert(1)>"
    qrels = {evil: {"a": 1, "b": 0}, "q2": {"c": 1}}
    run1 = {evil: {"a": 1.0, "b": 2.0}, "q2": {"c": 1.0}}
    run2 = {evil: {"a": 3.0, "b": 2.0}, "q2": {"c": 1.0}}
    page = build_report(qrels, {"one": run1, "<b>two</b>": run2}, ["mrr"], n_resamples=100, curves=False)
    assert evil not in page and "<b>two</b>" not in page and "&lt;b&gt;two&lt;/b&gt;" in page
    assert _data(page)["measures"][0]["per_query"][0]["labels"][0] == evil
    path = tmp_path / "evil.html"
    path.write_text(page)
    chromium = require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium)
        pg = b.new_page()
        dialogs: list[str] = []
        pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        pg.goto(path.as_uri())
        pg.wait_for_selector("#pq-0-0 svg")
        assert dialogs == [] and pg.title() != "pwned"
        b.close()


@pytest.mark.browser
def test_report_opens_from_disk_in_chromium(tmp_path: Path) -> None:
    chromium = require_chromium()
    from playwright.sync_api import sync_playwright

    out = tmp_path / "dl19.html"
    r = _cli("report", str(DL19 / "qrels.dl19-passage.txt"), str(DL19 / "run.bm25.dl19.txt"),
             str(DL19 / "run.splade.dl19.txt"), "-m", "ndcg@10", "-m", "map", "-o", str(out), "--resamples", "1000")
    assert r.returncode == 0, r.stderr
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
        pg.wait_for_selector("#curve-0 svg")
        # every chart is drawn: curves, interval plots, per-query differences
        for sel in ("#curve-0", "#means-0", "#diffs-0", "#pq-0-0", "#means-1", "#diffs-1", "#pq-1-0"):
            assert pg.locator(f"{sel} svg").count() == 1, sel
        assert pg.locator("#pq-0-0 svg path").count() >= 2  # green and red bars
        assert pg.locator("table.compare-table").count() == 2
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
        b.close()
    assert problems == []
    assert requests == [out.as_uri()]  # the file itself, nothing else
    assert math.isfinite(os.path.getsize(out))


def test_the_old_keyword_metrics_still_works_and_warns() -> None:
    # the one vocabulary (docs/glossary.md): measures=, with metrics= warning for one release
    from ranklens.web import build_report

    qrels, run = {"q1": {"a": 1, "b": 0}}, {"q1": {"a": 1.0, "b": 2.0}}
    with pytest.warns(DeprecationWarning, match="`metrics=` is deprecated, use `measures=`"):
        old = build_report(qrels, {"bm25": run}, metrics=["mrr"], curves=False)
    new = build_report(qrels, {"bm25": run}, measures=["mrr"], curves=False)
    assert [m["measure"] for m in _data(new)["measures"]] == ["mrr"]
    assert _data(old)["measures"] == _data(new)["measures"]
