"""The JSON API, in process: hand-computed values on the seed's groups, and equality with the Store methods it wraps."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from web_support import SEED, TRAIN, V2, client_for, ndcg

scipy_stats = pytest.importorskip("scipy.stats")


def _j(resp: Any) -> Any:
    assert resp.headers["content-type"].startswith("application/json"), resp.text
    return resp.json()


def _plain(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Arrow rows as the API writes them: timestamps ISO with Z, NaN as null."""
    out = []
    for r in rows:
        d = {}
        for k, v in r.items():
            if hasattr(v, "isoformat") and hasattr(v, "hour"):
                v = v.isoformat() + "Z"
            elif isinstance(v, float) and math.isnan(v):
                v = None
            d[k] = v
        out.append(d)
    return out


# -- hand-computed values (the seed's groups) ----------------------------------------------------------------
def test_report_means_per_day_match_the_seed(seed_client: Any) -> None:
    body = _j(seed_client.get("/api/report", params={"measure": "ndcg@5", "ci": "none"}))
    got = {(r["window"][:10], r["model_version"], r["environment"]): r for r in body["rows"]}
    prod = got[("2026-10-02", "v1", "production")]
    # the seed: (0.61828 + 0.88546 + 1) / 3 = 0.83458
    assert prod["value"] == pytest.approx(0.83458, abs=5e-6)
    assert prod["n_groups"] == 3
    assert got[("2026-10-01", "v1", "training")]["value"] == pytest.approx((0.61828 + 0.88546) / 2, abs=5e-6)
    v2 = sum(ndcg(g) for g in V2.values()) / 3
    assert got[("2026-10-03", "v2", "production")]["value"] == pytest.approx(v2, abs=1e-12)


def test_report_filters_and_series(seed_client: Any) -> None:
    body = _j(seed_client.get("/api/report?metric=ndcg@5&ci=none&environment=production&by=model_version"))
    assert body["by"] == ["model_version"]
    assert {(r["model_version"], r["n_groups"]) for r in body["rows"]} == {("v1", 3), ("v2", 3)}
    body = _j(seed_client.get("/api/report?metric=ndcg@5&ci=none&country=BR&by=country"))
    # BR: z (1.0) on day 2; y2 and u2 on day 3; ty in training on day 1
    vals = {r["window"][:10]: r["value"] for r in body["rows"]}
    assert vals["2026-10-02"] == pytest.approx(1.0)
    assert vals["2026-10-03"] == pytest.approx((ndcg(V2["y2"]) + ndcg(V2["u2"])) / 2)
    assert vals["2026-10-01"] == pytest.approx(ndcg(TRAIN["ty"]))


def test_explain_is_the_seeds_table(seed_client: Any) -> None:
    e = _j(seed_client.get("/api/explain", params={"group_id": "x", "k": 3}))
    # the seed: DCG@3_x = 0/log2(2) + 0/log2(3) + 1/log2(4) = 0.5; IDCG@3_x = 2.13093; NDCG@3_x = 0.23464
    assert e["dcg"] == pytest.approx(0.5)
    assert e["idcg"] == pytest.approx(2.13093, abs=5e-6)
    assert e["value"] == pytest.approx(0.23464, abs=5e-6)
    # the whole list is shown, the positions after k marked; served by rank (no score), relevance as given
    assert [r["position"] for r in e["rows"]] == [1, 2, 3, 4, 5]
    assert [r["beyond_cutoff"] for r in e["rows"]] == [False, False, False, True, True]
    assert [r["rank"] for r in e["rows"]] == [1, 2, 3, 4, 5] and [r["score"] for r in e["rows"]] == [None] * 5
    assert [r["relevance"] for r in e["rows"]] == [0.0, 0.0, 1.0, 1.0, 1.0]
    assert [r["gain"] for r in e["rows"]] == [0.0, 0.0, 1.0, 1.0, 1.0]
    assert [r["discount"] for r in e["rows"]] == pytest.approx([1 / math.log2(i + 1) for i in (1, 2, 3, 4, 5)])
    assert [r["contribution"] for r in e["rows"]][:3] == pytest.approx([0.0, 0.0, 0.5])
    # the ideal order: the three relevant items first (equal gains: their order among themselves is not a rule)
    assert sorted(r["item"] for r in e["ideal_rows"][:3]) == ["x_item3", "x_item4", "x_item5"]
    assert [r["gain"] for r in e["ideal_rows"]] == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert e["ideal_rows"][2]["running_idcg"] == pytest.approx(1 + 1 / math.log2(3) + 0.5)


def test_explain_dcg_alone(seed_client: Any) -> None:
    e = _j(seed_client.get("/api/explain", params={"group_id": "x", "k": 3, "measure": "dcg"}))
    # the seed's DCG@3_x = 0.5, and DCG alone is its value
    assert e["measure"] == "dcg@3" and e["value"] == pytest.approx(0.5) and e["dcg"] == pytest.approx(0.5)
    r = seed_client.get("/api/explain", params={"group_id": "x", "measure": "map"})
    assert r.status_code == 400 and "measure" in r.text


def test_explain_y_whole_list(seed_client: Any) -> None:
    e = _j(seed_client.get("/api/explain?group_id=y&k=5"))
    assert e["dcg"] == pytest.approx(1.88685, abs=5e-6)  # the seed's DCG_y
    assert e["value"] == pytest.approx(0.88546, abs=5e-6)


def test_groups_worst_first(seed_client: Any) -> None:
    rows = _j(seed_client.get("/api/groups?measure=ndcg@5&environment=production&limit=3"))["rows"]
    every = {**SEED, **V2}
    expected = sorted(every, key=lambda g: ndcg(every[g]))[:3]
    assert [r["group_id"] for r in rows] == expected
    assert [r["value"] for r in rows] == pytest.approx([ndcg(every[g]) for g in expected])
    best = _j(seed_client.get("/api/groups?metric=ndcg@5&environment=production&order=best&limit=1"))["rows"]
    assert best[0]["value"] == pytest.approx(1.0)


def test_compare_two_versions_against_scipy(seed_client: Any) -> None:
    c = _j(seed_client.get("/api/compare", params={
        "metric": "ndcg@5", "a_model_version": "v1", "a_environment": "production", "b_model_version": "v2"}))
    a = [ndcg(g) for g in SEED.values()]
    b = [ndcg(g) for g in V2.values()]
    assert c["a"]["value"] == pytest.approx(sum(a) / 3)
    assert c["b"]["value"] == pytest.approx(sum(b) / 3)
    assert c["difference"] == pytest.approx(sum(a) / 3 - sum(b) / 3)
    assert c["p_value"] == pytest.approx(scipy_stats.ttest_ind(a, b, equal_var=False).pvalue, rel=1e-9)
    assert c["a"]["n_groups"] == 3 and c["b"]["n_groups"] == 3
    assert c["ci_low"] <= c["difference"] <= c["ci_high"]


def test_compare_two_windows(seed_client: Any) -> None:
    c = _j(seed_client.get("/api/compare?metric=ndcg@5&a_start=2026-10-03&a_end=2026-10-04"
                           "&b_start=2026-10-01&b_end=2026-10-02"))
    assert c["a"]["value"] == pytest.approx(sum(ndcg(g) for g in V2.values()) / 3)
    assert c["b"]["value"] == pytest.approx(sum(ndcg(g) for g in TRAIN.values()) / 2)


def test_baseline_is_the_training_environment(seed_client: Any) -> None:
    b = _j(seed_client.get("/api/baseline?metric=ndcg@5"))
    assert b["value"] == pytest.approx((ndcg(TRAIN["tx"]) + ndcg(TRAIN["ty"])) / 2)
    assert b["n_groups"] == 2


def test_slices_contributions_by_hand(seed_client: Any) -> None:
    body = _j(seed_client.get("/api/slices?metric=ndcg@5&start=2026-10-02&end=2026-10-04&min_support=1&depth=1"))
    # each production version is compared with its own baseline, as the monitors do: v1 with v1's training lists
    # (tx US, ty BR); v2 has no training lists, so the model's training lists over all versions (the same two)
    from web_support import COUNTRY

    base = {g: ndcg(TRAIN[g]) for g in TRAIN}
    big_mb = sum(base.values()) / len(base)
    summaries = {s["series"]["model_version"]: s for s in body["summary"]["series"]}
    assert "this version has none" in summaries["v2"]["baseline"] and "v1" in summaries["v1"]["baseline"]
    for version, window in (("v1", SEED), ("v2", V2)):
        mine_all = {g: ndcg(window[g]) for g in window}
        total = sum(mine_all.values()) / len(mine_all) - big_mb
        assert summaries[version]["change"] == pytest.approx(total, abs=1e-12)
        rows = {r["value"]: r for r in body["rows"] if r["model_version"] == version}
        for country in ("US", "BR"):
            mine = [v for g, v in mine_all.items() if COUNTRY[g] == country]
            b = [v for g, v in base.items() if COUNTRY[g] == country]
            sw, sb = len(mine) / len(mine_all), len(b) / len(base)
            mw, mb = sum(mine) / len(mine), sum(b) / len(b)
            r = rows[country]
            assert r["window_value"] == pytest.approx(mw) and r["change"] == pytest.approx(mw - mb)
            assert r["rate_effect"] == pytest.approx(sw * (mw - mb), abs=1e-12)
            assert r["mix_effect"] == pytest.approx((sw - sb) * (mb - big_mb), abs=1e-12)
        assert sum(r["contribution"] for r in rows.values()) == pytest.approx(total, abs=1e-12)


def test_heatmap_cells_by_hand(seed_client: Any) -> None:
    hm = _j(seed_client.get("/api/heatmap?metric=ndcg@5&start=2026-10-02&end=2026-10-04&min_support=1&depth=1"))
    assert hm["cols"] == ["2026-10-02T00:00:00Z", "2026-10-03T00:00:00Z"]
    # rows are per series; v2 BR: y2 and u2 on day 3, nothing on day 2; centred on its own baseline (ty)
    row = hm["rows"].index("ranker \u00b7 v2 \u00b7 production country=BR")
    assert hm["values"][row][0] is None
    assert hm["values"][row][1] == pytest.approx((ndcg(V2["y2"]) + ndcg(V2["u2"])) / 2)
    assert hm["counts"][row] == [None, 2]
    assert hm["centers"][row] == pytest.approx(ndcg(TRAIN["ty"]))
    row = hm["rows"].index("ranker \u00b7 v1 \u00b7 production country=US")
    assert hm["values"][row][0] == pytest.approx((ndcg(SEED["x"]) + ndcg(SEED["y"])) / 2)
    assert hm["centers"][row] == pytest.approx(ndcg(TRAIN["tx"]))


# -- the API is the Store, in JSON -----------------------------------------------------------------------------
def test_api_equals_the_store_methods(sim_store: str, sim_client: Any) -> None:
    from ranklens.monitor import Store

    st = Store(sim_store, config={}, read_only=True)
    info = _j(sim_client.get("/api/info"))
    assert {k: v for k, v in info.items() if k not in ("windows", "read_only", "actions")} == json.loads(
        json.dumps(st.info()))
    assert info["actions"] == []  # no token: the dashboard only reads
    rep = _j(sim_client.get("/api/report?metric=ndcg@10&window=day&model=ranker&n_resamples=200&seed=4"))
    ref = st.report(measures=("ndcg@10",), window="day", where={"model": "ranker"}, n_resamples=200, seed=4)
    assert rep["rows"] == _plain(ref.to_pylist())
    b = _j(sim_client.get("/api/baseline?metric=ndcg@5"))
    assert b.pop("label")["kind"] == "naive"  # what the measure is: tests/web/test_measure_kind.py
    assert b == json.loads(json.dumps(st.baseline("ndcg@5")))
    assert _j(sim_client.get("/api/alerts"))["rows"] == _plain(st.alerts().to_pylist())
    assert len(_j(sim_client.get("/api/alerts"))["rows"]) >= 1  # the planted decay fires a monitor
    sl = _j(sim_client.get("/api/slices?metric=ndcg@10&start=2026-10-09&end=2026-10-15&environment=production"))
    ref = st.slices("ndcg@10", start="2026-10-09", end="2026-10-15", where={"environment": "production"})
    assert sl["rows"] == _plain(ref.to_pylist())
    g = _j(sim_client.get("/api/groups?metric=mrr@10&limit=7&order=best&device=mobile"))
    assert g["rows"] == _plain(st.groups("mrr@10", where={"device": "mobile"}, order="best", limit=7).to_pylist())
    gid = g["rows"][0]
    e = _j(sim_client.get("/api/explain", params={"group_id": gid["group_id"], "model": gid["model"],
                                                   "model_version": gid["model_version"],
                                                   "environment": gid["environment"], "k": 5}))
    ref_e = st.explain(gid["group_id"], gid["model"], gid["model_version"], gid["environment"], k=5).to_dict()
    assert e == json.loads(json.dumps(ref_e))
    c = _j(sim_client.get("/api/compare?metric=ndcg@10&a_model_version=v2&b_model_version=v1&a_country=BR,US"
                          "&b_country=BR&b_country=US&n_resamples=300"))
    ref_c = st.compare("ndcg@10", a={"where": {"model_version": "v2", "country": ["BR", "US"]}},
                       b={"where": {"model_version": "v1", "country": ["BR", "US"]}}, n_resamples=300)
    assert c.pop("label")["kind"] == "naive"
    assert c == json.loads(json.dumps(ref_c))


def test_responses_are_cached_by_store_version(sim_store: str) -> None:
    client = client_for(sim_store, config={})
    url = "/api/report?metric=ndcg@5&ci=none"
    first, second = client.get(url), client.get(url)
    assert first.headers["x-cache"] == "miss" and second.headers["x-cache"] == "hit"
    assert first.json() == second.json()
    uncached = client_for(sim_store, config={}, cache=False).get(url)
    assert "x-cache" not in uncached.headers and uncached.json() == first.json()


# -- errors: a 400 naming the parameter -------------------------------------------------------------------------
@pytest.mark.parametrize(("url", "parameter"), [
    ("/api/report?metric=ndcg@", "metric"),  # the old spelling, named as given
    ("/api/report?measure=ndcg@", "measure"),
    ("/api/report?metric=nonsense@10", "metric"),
    ("/api/report?window=month", "window"),
    ("/api/report?start=yesterday", "start"),
    ("/api/report?end=2026-02-30", "end"),
    ("/api/report?ci=bayes", "ci"),
    ("/api/report?confidence=1.5", "confidence"),
    ("/api/report?n_resamples=0", "n_resamples"),
    ("/api/report?colour=red", "colour"),
    ("/api/report?metric=ndcg@5&metric=ndcg@10", "metric"),
    ("/api/groups?limit=100000", "limit"),
    ("/api/groups?limit=ten", "limit"),
    ("/api/groups?order=random", "order"),
    ("/api/explain", "group_id"),
    ("/api/explain?group_id=x&k=0", "k"),
    ("/api/heatmap?limit=0", "limit"),
    ("/api/report?metric=ndcg@99999999999", "metric"),
    ("/api/slices?metric=ndcg@1001", "metric"),
    ("/api/slices?min_support=0", "min_support"),
    ("/api/slices?correction=bonferroni", "correction"),
    ("/api/slices?depth=3", "depth"),
    ("/api/compare?c_model_version=v1", "c_model_version"),
    ("/api/compare?a_flavour=v1", "a_flavour"),
    ("/api/alerts?model=ranker", "model"),
])
def test_bad_parameters_get_400_naming_them(seed_client: Any, url: str, parameter: str) -> None:
    r = seed_client.get(url)
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["parameter"] == parameter and parameter in body["error"]


def test_store_errors_are_400_or_404(seed_client: Any) -> None:
    r = seed_client.get("/api/slices?metric=ndcg@5&start=2026-10-02")
    assert r.status_code == 400 and "end" in r.json()["error"]
    r = seed_client.get("/api/explain?group_id=no-such-group")
    assert r.status_code == 404 and "no-such-group" in r.json()["error"]
    r = seed_client.get("/api/explain?group_id=x&model_version=v9")
    assert r.status_code == 404


def test_openapi_documents_every_endpoint_and_parameter(seed_client: Any) -> None:
    from ranklens.web.app import ENDPOINTS

    spec = _j(seed_client.get("/api/openapi.json"))
    assert spec["openapi"].startswith("3.")
    api_routes = {ep.path for ep in ENDPOINTS}
    assert set(spec["paths"]) == api_routes
    for ep in ENDPOINTS:
        names = {p["name"] for p in spec["paths"][ep.path]["get"]["parameters"]}
        assert {p.name for p in ep.params} <= names
        if ep.filters:
            assert {"model", "model_version", "environment", "group_id", "country"} <= names
    # every documented endpoint answers with its defaults (explain needs its group)
    for path in api_routes - {"/api/explain"}:
        query = "?start=2026-10-02&end=2026-10-04" if path in ("/api/slices", "/api/heatmap") else ""
        assert seed_client.get(path + query).status_code == 200
    page = seed_client.get("/api/docs")
    assert page.status_code == 200 and "openapi.json" in page.text


def test_pages_are_served(seed_client: Any) -> None:
    for path in ("/", "/slices", "/groups", "/compare"):
        r = seed_client.get(path)
        assert r.status_code == 200 and "<title>ranklens dashboard</title>" in r.text
        assert "http://" not in r.text and "https://" not in r.text  # nothing from elsewhere
    assert seed_client.get("/static/charts.js").headers["content-type"].startswith("text/javascript")
    assert seed_client.get("/favicon.ico").status_code == 200


def test_every_aggregate_through_the_metric_parameter(seed_client: Any) -> None:
    """The dashboard's `metric` goes through the store's parsing: gm_map is the geometric mean of the lists'
    APs, num_rel_ret@10 the window's total (the seed's production day of v1), bpref every served item judged."""
    def ap(g: list[int]) -> float:
        hits = [i for i, x in enumerate(g) if x]
        return sum((j + 1) / (i + 1) for j, i in enumerate(hits)) / len(hits)

    def bpref(g: list[int]) -> float:  # R relevant; N = judged non-relevant above each relevant item
        r = sum(g)
        return sum(1 - min(g[:i].count(0), r) / min(g.count(0), r) for i, x in enumerate(g) if x) / r

    want = {"gm_map": math.exp(sum(math.log(ap(g)) for g in SEED.values()) / 3),
            "num_rel_ret@10": float(sum(sum(g) for g in SEED.values())),
            "bpref": sum(bpref(g) for g in SEED.values()) / 3}
    for metric, value in want.items():
        body = _j(seed_client.get("/api/report", params={"metric": metric, "ci": "none"}))
        got = {(r["window"][:10], r["model_version"], r["environment"]): r for r in body["rows"]}
        assert got[("2026-10-02", "v1", "production")]["value"] == pytest.approx(value, abs=1e-12), metric
