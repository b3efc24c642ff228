"""Every measure in the store's reports with its own aggregate: judged-only measures (every served item
judged, non-relevant without a label), geometric means, weighted means and counts, per window, in
baselines, comparisons, slices and monitors. Expected numbers come from pytrec_eval / ir_measures /
scikit-learn run here on the same lists (qrels: every served item, rel 1 when clicked, else 0), and the
aggregates, intervals and tests are computed here from their per-list values (scipy for t and Welch)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from handcalc import events
from ranklens.cli import cli
from ranklens.errors import InvalidParameterError
from ranklens.monitor import Store

pytrec_eval = pytest.importorskip("pytrec_eval")
ir_measures = pytest.importorskip("ir_measures")
scipy_stats = pytest.importorskip("scipy.stats")
sk_metrics = pytest.importorskip("sklearn.metrics")

C = ["click"]
# served order, click labels; training on day 1, production on day 2 (worse: relevant items lower)
TRAIN = {"a1": [C, [], C, [], []], "a2": [[], C, [], []], "a3": [[], [], [], C, [], C], "a4": [C, C, []],
         "a5": [[], [], C, []]}
PROD = {"b1": [[], [], [], [], C], "b2": [[], C, []], "b3": [C, [], [], []], "b4": [[], [], C, C, [], [], []],
        "b5": [C, []], "b6": [[], [], [], C]}
COUNTRY = {"a1": "BR", "a2": "BR", "a3": "US", "a4": "US", "a5": "US",
           "b1": "BR", "b2": "BR", "b3": "US", "b4": "US", "b5": "US", "b6": "BR"}
D1, D2 = "2026-10-01", "2026-10-02"
FLOOR = 0.00001  # trec_eval.h MIN_GEO_MEAN: gm_map takes log(max(AP, MIN_GEO_MEAN))


def _peer(groups):
    """pytrec_eval's per-query values: qrels = every served item (1 clicked, 0 not), run = served order."""
    qrels = {g: {f"{g}-{r}": int(bool(lab)) for r, lab in enumerate(items, 1)} for g, items in groups.items()}
    run = {g: {f"{g}-{r}": float(len(items) - r) for r in range(1, len(items) + 1)} for g, items in groups.items()}
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"bpref", "infAP", "map", "num_ret", "num_rel", "num_rel_ret"})
    per = ev.evaluate(run)
    judged = {q.query_id: q.value for q in ir_measures.iter_calc(
        [ir_measures.Judged @ 5],
        [ir_measures.Qrel(q, d, r) for q, ds in qrels.items() for d, r in ds.items()],
        [ir_measures.ScoredDoc(q, d, s) for q, ds in run.items() for d, s in ds.items()])}
    return {g: {**per[g], "judged@5": judged[g]} for g in groups}


P_TRAIN, P_PROD = _peer(TRAIN), _peer(PROD)


def _col(per, name):
    return np.array([v[name] for v in per.values()])


def _gm(ap):
    return math.exp(np.log(np.maximum(ap, FLOOR)).mean())


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    st = Store(tmp_path_factory.mktemp("agg") / "s.duckdb", config={"monitors": []})
    rows = events(TRAIN, day=D1, env="training", extra=lambda g: {"country": COUNTRY[g]})
    rows += events(PROD, day=D2, env="production", extra=lambda g: {"country": COUNTRY[g]})
    st.ingest(pa.Table.from_pylist(rows))
    return st


def test_report_per_window_against_pytrec_eval(store):
    keys = ["bpref", "judged@5", "gm_map", "num_ret", "num_rel", "num_rel_ret"]
    rep = store.report(keys, by=["environment"], ci="t", confidence=0.9)
    got = {(r["environment"], r["measure"]): r for r in rep.to_pylist()}
    for env, per in (("training", P_TRAIN), ("production", P_PROD)):
        n = len(per)
        assert got[env, "bpref"]["value"] == pytest.approx(_col(per, "bpref").mean(), abs=1e-12)
        assert got[env, "judged@5"]["value"] == pytest.approx(_col(per, "judged@5").mean(), abs=1e-12)
        ap = _col(per, "map")
        assert got[env, "gm_map"]["value"] == pytest.approx(_gm(ap), abs=1e-12)
        for c in ("num_ret", "num_rel", "num_rel_ret"):
            assert got[env, c]["value"] == pytest.approx(_col(per, c).sum(), abs=1e-9)
            assert got[env, c]["n_groups"] == n
        # t intervals: on the logarithms mapped back (geometric), n x the per-list interval (a total)
        tq = scipy_stats.t.ppf(0.95, n - 1)
        logs = np.log(np.maximum(ap, FLOOR))
        half = tq * logs.std(ddof=1) / math.sqrt(n)
        assert (got[env, "gm_map"]["ci_low"], got[env, "gm_map"]["ci_high"]) == pytest.approx(
            (math.exp(logs.mean() - half), math.exp(logs.mean() + half)), abs=1e-12)
        x = _col(per, "num_rel_ret")
        half = tq * x.std(ddof=1) / math.sqrt(n)
        assert (got[env, "num_rel_ret"]["ci_low"], got[env, "num_rel_ret"]["ci_high"]) == pytest.approx(
            (n * (x.mean() - half), n * (x.mean() + half)), abs=1e-9)
    # bootstrap: the interval of the geometric mean / of the total, within what resampled lists can give
    boot = {(r["environment"], r["measure"]): r for r in
            store.report(["gm_map", "num_rel_ret"], by=["environment"], ci="bootstrap").to_pylist()}
    for env, per in (("training", P_TRAIN), ("production", P_PROD)):
        ap, x, n = _col(per, "map"), _col(per, "num_rel_ret"), len(per)
        r = boot[env, "gm_map"]
        assert ap.min() <= r["ci_low"] <= r["value"] <= r["ci_high"] <= ap.max()
        r = boot[env, "num_rel_ret"]
        assert n * x.min() <= r["ci_low"] <= r["value"] <= r["ci_high"] <= n * x.max()


def test_infap_with_a_tie_order(tmp_path):
    """infAP needs a tie order (the default convention refuses it, averaging ties); under trec_eval's, with
    every served item judged, it is pytrec_eval's infAP of complete judgments (= AP)."""
    st = Store(tmp_path / "i.duckdb", config={"monitors": [], "evaluation": {"convention": "trec_eval"}})
    st.ingest(pa.Table.from_pylist(events(PROD)))
    r = st.report(["infap", "bpref"], ci=None, by=[]).to_pylist()
    assert r[0]["value"] == pytest.approx(_col(P_PROD, "infAP").mean(), abs=1e-12)
    assert r[1]["value"] == pytest.approx(_col(P_PROD, "bpref").mean(), abs=1e-12)


def test_geometric_floor_of_trec_eval():
    """A list with AP 0 counts as 0.00001 in the geometric mean (trec_eval's m_gm_map.c), not as 0."""
    from ranklens.monitor.reports.aggregates import StoreAggregate

    assert StoreAggregate.of("gm_map").value(np.array([0.0, 0.4])) == pytest.approx(math.sqrt(FLOOR * 0.4))


def test_baseline_compare_and_groups(store):
    ap_t, ap_p = _col(P_TRAIN, "map"), _col(P_PROD, "map")
    b = store.baseline("gm_map", baseline="training")
    assert b["value"] == pytest.approx(_gm(ap_t), abs=1e-12) and b["n_groups"] == len(ap_t)
    c = store.compare("gm_map", a={"where": {"environment": "production"}},
                      b={"where": {"environment": "training"}}, same_period=False)
    assert c["difference"] == pytest.approx(_gm(ap_p) - _gm(ap_t), abs=1e-12)
    welch = scipy_stats.ttest_ind(np.log(ap_p), np.log(ap_t), equal_var=False)
    assert c["p_value"] == pytest.approx(welch.pvalue, rel=1e-9)
    assert c["ci_low"] <= c["difference"] <= c["ci_high"]
    c = store.compare("num_rel_ret", a={"where": {"environment": "production"}},
                      b={"where": {"environment": "training"}}, same_period=False)
    x_p, x_t = _col(P_PROD, "num_rel_ret"), _col(P_TRAIN, "num_rel_ret")
    assert c["a"]["value"] == x_p.sum() and c["difference"] == pytest.approx(x_p.sum() - x_t.sum())
    assert c["p_value"] == pytest.approx(scipy_stats.ttest_ind(x_p, x_t, equal_var=False).pvalue, rel=1e-9)
    # per list: bpref of each served list, as pytrec_eval's
    got = {r["group_id"]: r["value"] for r in store.groups("bpref", limit=100).to_pylist()}
    assert got == pytest.approx({g: v["bpref"] for g, v in {**P_TRAIN, **P_PROD}.items()}, abs=1e-12)
    bl = {r["environment"]: r for r in store.baselines("num_rel_ret", by=["environment"]).to_pylist()}
    assert bl["training"]["value"] == x_t.sum()


def test_slices_add_up_on_their_scale(store):
    s, e = f"{D2}T00:00:00", "2026-10-03T00:00:00"
    t = store.slices("gm_map", start=s, end=e, columns=["country"], depth=1, min_support=1, by=["model"])
    meta = json.loads(t.schema.metadata[b"ranklens"])
    rows = {r["value"]: r for r in t.to_pylist()}
    ap_t, ap_p = _col(P_TRAIN, "map"), _col(P_PROD, "map")
    assert meta["window_value"] == pytest.approx(_gm(ap_p)) and meta["baseline_value"] == pytest.approx(_gm(ap_t))
    assert meta["contribution_scale"] == "log"
    assert sum(r["contribution"] for r in rows.values()) == pytest.approx(math.log(_gm(ap_p) / _gm(ap_t)), abs=1e-12)
    br_p = np.array([P_PROD[g]["map"] for g in PROD if COUNTRY[g] == "BR"])
    assert rows["BR"]["window_value"] == pytest.approx(_gm(br_p), abs=1e-12)
    t = store.slices("num_rel_ret", start=s, end=e, columns=["country"], depth=1, min_support=1, by=["model"])
    rows = {r["value"]: r for r in t.to_pylist()}
    tot = {(env, c): sum(per[g]["num_rel_ret"] for g in per if COUNTRY[g] == c)
           for env, per in (("t", P_TRAIN), ("p", P_PROD)) for c in ("BR", "US")}
    for c in ("BR", "US"):  # a total's contribution: the change of the cell's total
        assert rows[c]["contribution"] == pytest.approx(tot["p", c] - tot["t", c], abs=1e-12)
        assert rows[c]["window_value"] == pytest.approx(tot["p", c])


def test_groupauc_weighted_by_items_with_its_interval(tmp_path):
    """gauc: per-list AUCs (scikit-learn) weighted by each list's items; its t interval by the delta method
    (linearised values ``m + w / mean(w) (v - m)``); available in every read."""
    groups = {"a": [C, [], [], C, []], "b": [[], C, []], "c": [C, [], C, []], "d": [[], C, [], [], [], []],
              "e": [[], []]}
    st = Store(tmp_path / "g.duckdb", config={"monitors": []})
    st.ingest(pa.Table.from_pylist(events(groups, env="production")))
    auc, w = [], []
    for items in groups.values():
        y = [int(bool(x)) for x in items]
        if 0 < sum(y) < len(y):
            auc.append(sk_metrics.roc_auc_score(y, [-r for r in range(len(y))]))
            w.append(len(y))
    v, w = np.array(auc), np.array(w, dtype=float)
    m = (w * v).sum() / w.sum()
    r = st.report(["gauc"], ci="t", by=[]).to_pylist()[0]
    assert r["value"] == pytest.approx(m, abs=1e-12) and r["n_groups"] == 4 and r["n_excluded"] == 1
    u = m + w / w.mean() * (v - m)
    half = scipy_stats.t.ppf(0.975, len(u) - 1) * u.std(ddof=1) / math.sqrt(len(u))
    assert (r["ci_low"], r["ci_high"]) == pytest.approx((m - half, m + half), abs=1e-12)
    assert st.baseline("gauc", baseline="production")["value"] == pytest.approx(m, abs=1e-12)
    assert {x["group_id"]: x["value"] for x in st.groups("gauc").to_pylist()} == pytest.approx(
        dict(zip("abcd", auc, strict=True)), abs=1e-12)


def run(args, code):
    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert r.exit_code == code, r.output
    return r


def test_cli_report(store):
    r = run(["monitor", "report", "-m", "bpref", "-m", "gm_map", "-m", "num_rel_ret", "--by", "environment",
             "--ci", "none", "-f", "json", "--store", str(store.path)], 0)
    got = {(x["environment"], x["measure"]): x["value"] for x in json.loads(r.output)}
    assert got["production", "bpref"] == pytest.approx(_col(P_PROD, "bpref").mean(), abs=1e-12)
    assert got["production", "gm_map"] == pytest.approx(_gm(_col(P_PROD, "map")), abs=1e-12)
    # without -k the CLI adds cutoffs 1, 5 and 10 to the measures that take one (lists here are 7 at most)
    assert got["training", "num_rel_ret@10"] == _col(P_TRAIN, "num_rel_ret").sum()
    assert got["training", "num_rel_ret@1"] == sum(bool(items[0]) for items in TRAIN.values())


def test_check_gm_map_monitor_and_count_refusal(store, tmp_path):
    cfg = tmp_path / "ranklens.toml"
    cfg.write_text("[[monitors]]\nname = 'gm'\nmetric = 'gm_map'\nrelative_drop = 0.01\n"
                   "where = { environment = 'production' }\nby = ['environment']\n")
    r = run(["monitor", "check", "--all", "--no-record", "--store", str(store.path), "--config", str(cfg)], 1)
    alerts = json.loads(r.stdout)
    g_p, g_t = _gm(_col(P_PROD, "map")), _gm(_col(P_TRAIN, "map"))
    assert g_p < 0.99 * g_t  # the data: production is worse
    assert [a["monitor"] for a in alerts] == ["gm"]
    assert alerts[0]["value"] == pytest.approx(g_p, abs=1e-12)
    assert alerts[0]["baseline"] == pytest.approx(g_t, abs=1e-12)
    cfg.write_text("[[monitors]]\nname = 'rel'\nmetric = 'num_rel_ret'\nrelative_drop = 0.1\n")
    r = run(["monitor", "check", "--store", str(store.path), "--config", str(cfg)], 2)
    assert r.output.count("\n") == 1 and "is a count summed over lists" in r.output and "set_recall" in r.output
    with pytest.raises(InvalidParameterError, match="num_ret.*count summed over lists"):
        Store(tmp_path / "x.duckdb", config={"monitors": [{"name": "n", "metric": "num_ret", "threshold": 1}]})
