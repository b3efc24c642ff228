"""Data-quality monitors (issue #32 point 3): traffic volume against the trailing weeks, labels failing to arrive,
the quarantine rate, partial lists; lists that lost rows to the quarantine are left out of the measures by default
(counted, or kept with ``[evaluation] partial = "keep"``). Every expected number is counted by hand from the rows
written here."""

from __future__ import annotations

import csv
import datetime as dt
import json
from pathlib import Path

import pyarrow as pa
import pytest
from click.testing import CliRunner

from ranklens.cli import cli
from ranklens.monitor import Store

from .handcalc import ndcg

D0 = dt.datetime(2026, 10, 1)


def _rows(day: dt.datetime, n: int, *, prefix: str, clicked=lambda i: True, country=lambda i: "US", env="production"):
    """``n`` lists of 3 items served on ``day``, the first item clicked when ``clicked(i)``."""
    out = []
    for i in range(n):
        g = f"{prefix}{i}"
        for r in range(1, 4):
            out.append({"timestamp": (day + dt.timedelta(hours=1 + i % 20)).isoformat(), "model": "m",
                        "model_version": "v1", "environment": env, "group_id": g, "item_id": f"{g}-{r}", "rank": r,
                        "labels": ["click"] if r == 1 and clicked(i) else [], "country": country(i)})
    return out


def test_a_file_with_90_percent_bad_rows_raises_an_alert(tmp_path):
    good = _rows(D0, 10, prefix="g")  # 30 rows
    path = tmp_path / "bad.csv"
    cols = ["timestamp", "model", "model_version", "environment", "group_id", "item_id", "rank", "labels", "country"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in good:
            w.writerow([r[c] if c != "labels" else "|".join(r[c]) for c in cols])
        for i in range(270):  # 90% of the 300 rows: ranks that are not positive integers, times that are not times
            ts = "not a time" if i % 2 else (D0 + dt.timedelta(hours=5)).isoformat()
            w.writerow([ts, "m", "v1", "production", f"b{i}", "x", "0", "", "US"])
    store = str(tmp_path / "s.duckdb")
    r = CliRunner().invoke(cli, ["monitor", "ingest", str(path), "--store", store], catch_exceptions=False)
    assert r.exit_code == 0, r.output  # as documented: quarantined rows do not fail the ingest
    assert "270 quarantined" in r.output
    r = CliRunner().invoke(cli, ["monitor", "check", "--store", store, "-f", "json"], catch_exceptions=False)
    assert r.exit_code == 1, r.output
    alerts = json.loads(r.stdout)
    q = [a for a in alerts if a["metric"] == "quarantine_rate"]
    assert len(q) == 1 and q[0]["status"] == "opened" and q[0]["kind"] == "quality"
    assert q[0]["value"] == pytest.approx(270 / 300, abs=1e-15) and q[0]["n_groups"] == 300
    assert q[0]["window_start"] == "2026-10-01T00:00:00" and q[0]["severity"] == "error"
    top = q[0]["top_slices"][0]
    assert top["slice"] == "source=" + str(path) and top["window_value"] == pytest.approx(0.9, abs=1e-15)
    assert "135 rank is not a positive integer" in q[0]["reason"]
    assert "135 timestamp is not a date or time" in q[0]["reason"]
    # the quarantine records are the rows as they came: no internal field
    for rec in Store(store).quarantine(limit=1000).column("record").to_pylist():
        assert set(json.loads(rec)) == set(cols)
    # the HTML report lists the data-quality alert beside the others, with its root cause (training lists of the
    # day before added: the report's overview compares production with them)
    Store(store).ingest(pa.Table.from_pylist(_rows(D0 - dt.timedelta(days=1), 10, prefix="t", env="training")))
    out = tmp_path / "r.html"
    r = CliRunner().invoke(cli, ["monitor", "report", "--store", store, "--html", str(out)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    page = out.read_text()
    assert "No alert in the range" not in page and "quarantine_rate" in page and "source=" in page


def test_partial_lists_are_left_out_and_counted(tmp_path):
    rows = _rows(D0, 4, prefix="c", clicked=lambda i: i % 2 == 0)  # complete: NDCG 1, None (no click), 1, None
    rows += [  # a list of 5 of which 4 rows are quarantined (scores that are not numbers); the kept item clicked
        {"timestamp": "2026-10-01T09:00:00", "model": "m", "model_version": "v1", "environment": "production",
         "group_id": "p", "item_id": f"p-{r}", "rank": None, "score": float("nan") if r > 1 else 1.0,
         "labels": ["click"] if r == 1 else [], "country": "US"} for r in range(1, 6)]
    for r in rows:
        r.setdefault("score", None)
    # the partial list is ordered by score, the others by rank: two tables
    by_rank = pa.Table.from_pylist([r for r in rows if r["group_id"] != "p"])
    by_score = pa.Table.from_pylist([{k: v for k, v in r.items() if k != "rank"} for r in rows if r["group_id"] == "p"])
    store = Store(tmp_path / "s.duckdb", config={"monitors": []})
    store.ingest([by_rank, by_score])
    assert Store(tmp_path / "s.duckdb").quarantine().num_rows == 4
    rep = store.report(["ndcg@10"], ci=None).to_pylist()
    assert len(rep) == 1 and rep[0]["n_partial"] == 1 and rep[0]["n_groups"] == 2 and rep[0]["n_excluded"] == 2
    assert rep[0]["value"] == pytest.approx(1.0)
    keep = Store(tmp_path / "s.duckdb", config={"evaluation": {"partial": "keep"}, "monitors": []})
    kept = keep.report(["ndcg@10"], ci=None).to_pylist()[0]
    assert kept["n_partial"] == 1 and kept["n_groups"] == 3 and kept["n_excluded"] == 2
    assert kept["value"] == pytest.approx((1 + 1 + ndcg([1.0], 10)) / 3)
    share = store.quality("partial_lists", by=["model_version"]).to_pylist()
    assert share[0]["count"] == 1 and share[0]["n"] == 5 and share[0]["value"] == pytest.approx(0.2)
    cfg = {"monitors": [{"name": "partial", "metric": "partial_lists", "threshold": 0.1, "min_groups": 5}]}
    res = Store(tmp_path / "s.duckdb", config=cfg).check()
    assert [a.metric for a in res] == ["partial_lists"] and res[0].value == pytest.approx(0.2)


def test_volume_against_the_trailing_weeks(tmp_path):
    rows = []
    for d in range(36):  # 5 weeks of 20 lists a day, then day 35 serves 5 (the BR lists are gone), day 36 begins
        day = D0 + dt.timedelta(days=d)
        rows += _rows(day, 20 if d < 35 else 5, prefix=f"d{d}-", country=lambda i: "BR" if i % 4 == 0 else "US")
    rows += _rows(D0 + dt.timedelta(days=36), 2, prefix="d36-")
    day35 = D0 + dt.timedelta(days=35)
    for r in rows:  # day 35's lists: none in BR
        if r["timestamp"].startswith(day35.date().isoformat()):
            r["country"] = "US"
    cfg = {"monitors": [{"name": "traffic", "metric": "volume", "relative_drop": 0.5,
                         "where": {"environment": "production"}}]}
    store = Store(tmp_path / "s.duckdb", config=cfg)
    store.ingest(pa.Table.from_pylist(rows))
    res = store.check()
    assert len(res) == 1 and res[0].window_start == day35.isoformat()  # the last complete day, not day 36
    a = res[0]
    assert a.value == 5 and a.baseline == pytest.approx(20.0) and a.threshold == pytest.approx(10.0)
    # where the lists went: US served 5 of its 15, BR none of its 5 (the changes against each cell's own baseline)
    top = {t["slice"]: (t["window_value"], t["baseline_value"], t["change"]) for t in a.extra["top_slices"]}
    assert top == {"country=US": (5, 15, -10), "country=BR": (0, 5, -5)}
    assert [t["slice"] for t in a.extra["top_slices"]] == ["country=US", "country=BR"]
    # every window: the one holding the store's last list is not judged (its count is not complete)
    res = store.check(all_windows=True, record=False)
    assert res.not_judged.get("incomplete") == 1


def test_labels_failing_to_arrive(tmp_path):
    rows = []
    for d in range(10):
        day = D0 + dt.timedelta(days=d)
        rows += _rows(day, 20, prefix=f"d{d}-", clicked=(lambda i: i < 4) if d == 6 else (lambda i: True))
    cfg = {"labels": {"maturity": "1d"},
           "monitors": [{"name": "labels", "metric": "label_arrival", "threshold": 0.5, "min_groups": 10,
                         "where": {"environment": "production"}}]}
    store = Store(tmp_path / "s.duckdb", config=cfg)
    store.ingest(pa.Table.from_pylist(rows))
    res = store.check(all_windows=True)
    fired = [a for a in res if a.extra.get("status") != "resolved"]
    assert [a.window_start[:10] for a in fired] == ["2026-10-07"]
    assert fired[0].value == pytest.approx(4 / 20) and fired[0].n_groups == 20
    assert res.not_judged.get("provisional")  # the last day's labels are not mature


def test_quality_monitors_are_checked_when_read(tmp_path):
    from ranklens.errors import InvalidParameterError

    for bad, why in [({"metric": "quarantine_rate", "relative_drop": 0.1}, "fires above a `threshold`"),
                     ({"metric": "volume", "relative_drop": 0.1, "baseline": "training"}, "earlier windows"),
                     ({"metric": "quarantine_rate", "threshold": 0.1, "by": ["model"]}, "the store's"),
                     ({"metric": "volume", "relative_drop": 0.1, "significance": 0.05}, "no test"),
                     ({"metric": "volume", "relative_drop": 0.1, "slices": "auto"}, "searches the slices")]:
        with pytest.raises(InvalidParameterError, match=why.replace("`", ".").replace("(", ".").replace(")", ".")):
            Store(tmp_path / "x.duckdb", config={"monitors": [{"name": "q", **bad}]})
    assert not Path(tmp_path / "x.duckdb").exists()
