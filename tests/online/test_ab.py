"""ab_test: the delta method by hand, spotify-confidence's z test and sample-ratio test on the same unit values,
scipy's chi-square, the core's per-list values, the store's attribution rules, CUPED, and bad input."""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from scipy import stats

from ranklens import evaluate
from ranklens.errors import InputError, InvalidParameterError
from ranklens.monitor import Attribution
from ranklens.online import ab_test, simulate

REPO = Path(__file__).resolve().parents[2]
CONFIDENCE_PYTHON = REPO / ".venv-confidence" / "bin" / "python"
CONFIDENCE_RUNNER = REPO / "tests" / "peers" / "confidence_runner.py"


def confidence(cases: list[dict]) -> list[dict]:
    """spotify-confidence's answers (tests/peers/confidence_runner.py in .venv-confidence)."""
    assert CONFIDENCE_PYTHON.exists(), "the spotify-confidence environment is missing: run `make install-test`"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    proc = subprocess.run([str(CONFIDENCE_PYTHON), str(CONFIDENCE_RUNNER)], input=json.dumps({"cases": cases}),
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)["cases"]


def _events(rows):
    """rows: (group, user, arm, rank, labels) -> an Arrow table in the event layout."""
    g, u, a, r, lab = zip(*rows)
    return pa.table({"group_id": list(g), "item_id": [f"i{x}" for x in r], "rank": list(r), "labels": list(lab),
                     "user_id": list(u), "arm": list(a)})


# three control users with 1, 2, 1 lists and two treatment users with 2 and 1 lists; clicks@2 per list
HAND = [
    ("g1", "u1", "control", 1, ["click"]), ("g1", "u1", "control", 2, []),
    ("g2", "u2", "control", 1, []), ("g2", "u2", "control", 2, []),
    ("g3", "u2", "control", 1, ["click"]), ("g3", "u2", "control", 2, ["click", "buy"]),
    ("g4", "u3", "control", 1, []), ("g4", "u3", "control", 2, ["click"]),
    ("g5", "u4", "treatment", 1, ["click"]), ("g5", "u4", "treatment", 2, ["click"]),
    ("g6", "u4", "treatment", 1, ["click"]), ("g6", "u4", "treatment", 2, []),
    ("g7", "u5", "treatment", 1, []), ("g7", "u5", "treatment", 2, []),
]


def _delta_by_hand(y, x):
    """A3's three-term formula: Var(M) = (1/n)[s_y^2/mx^2 - 2 my s_xy/mx^3 + my^2 s_x^2/mx^4], ddof 1."""
    y, x = np.asarray(y, float), np.asarray(x, float)
    n = len(y)
    my, mx = y.mean(), x.mean()
    sy, sx, sxy = np.var(y, ddof=1), np.var(x, ddof=1), np.cov(x, y, ddof=1)[0, 1]
    return my / mx, (sy / mx ** 2 - 2 * my * sxy / mx ** 3 + my ** 2 * sx / mx ** 4) / n


def test_delta_method_by_hand():
    res = ab_test(_events(HAND), ["clicks@2", "purchases", "abandonment"])
    r = res.row("clicks@2", "treatment")
    # clicks per list: control lists 1, 0, 2, 1 (users u1: 1 | u2: 0 + 2 | u3: 1), treatment 2, 1 (u4) and 0 (u5)
    mc, vc = _delta_by_hand([1, 2, 1], [1, 2, 1])
    mt, vt = _delta_by_hand([3, 0], [2, 1])
    assert (r["control_mean"], r["treatment_mean"]) == pytest.approx((mc, mt))
    assert r["estimate"] == pytest.approx(mt - mc)
    assert r["se"] == pytest.approx(math.sqrt(vc + vt))
    z = (mt - mc) / math.sqrt(vc + vt)
    assert r["p_value"] == pytest.approx(2 * stats.norm.sf(abs(z)))
    q = stats.norm.ppf(0.975)
    half = q * math.sqrt(vc + vt)
    assert (r["ci_low"], r["ci_high"]) == pytest.approx((mt - mc - half, mt - mc + half))
    rel_se = math.sqrt(vt / mc ** 2 + mt ** 2 * vc / mc ** 4)  # A3's relative lift variance
    assert r["relative"] == pytest.approx(mt / mc - 1)
    assert r["relative_ci_high"] - r["relative"] == pytest.approx(q * rel_se)
    assert (r["n_units"], r["n_units_control"], r["n_lists"], r["n_lists_control"]) == (2, 3, 3, 4)
    assert res.row("purchases", "treatment")["control_mean"] == pytest.approx(1 / 4)
    assert res.row("abandonment", "treatment")["treatment_mean"] == pytest.approx(1 / 3)
    assert r["unit"] == "user_id" and r["control_arm"] == "control"


def test_ranking_measures_are_the_cores_on_each_list():
    # ndcg@2 with gains from clicks (binary attribution): the mean over the arm's lists with a click, as
    # ranklens.evaluate gives it on the same lists
    res = ab_test(_events(HAND), ["ndcg@2", "mrr"])
    for arm, groups in (("control", ["g1", "g2", "g3", "g4"]), ("treatment", ["g5", "g6", "g7"])):
        qrels = {g: {f"i{r}": float("click" in lab) for gg, _, _, r, lab in HAND if gg == g} for g in groups}
        run = {g: {f"i{r}": -float(r) for gg, _, _, r, lab in HAND if gg == g} for g in groups}
        want = evaluate(qrels, run, ["ndcg@2", "mrr"])
        key = "control_mean" if arm == "control" else "treatment_mean"
        assert res.row("ndcg@2", "treatment")[key] == pytest.approx(want["ndcg@2"])
        assert res.row("mrr", "treatment")[key] == pytest.approx(want["mrr"])
    # lists without a click have no ndcg: 3 of 4 control lists count
    assert res.row("ndcg@2", "treatment")["n_lists_control"] == 3


def test_attribution_rules_are_the_stores(tmp_path):
    # a weighted attribution and a label row arriving apart: the store's ndcg of each arm (its report over the
    # arm's model_version) equals ab_test's control and treatment means
    from ranklens.monitor import Store

    sim = simulate({"control": 1.0, "treatment": 0.5}, n_users=400, n_queries=20, k=5, days=1, seed=4)
    ev = sim.events
    att = Attribution("weighted", weights={"click": 1, "buy": 3})
    res = ab_test(ev, ["ndcg@5", "map"], attribution=att)
    cfg = {"attribution": {"rule": "weighted", "weights": {"click": 1, "buy": 3}},
           "evaluation": {"tracked": ["ndcg@5", "map"]}}
    with Store(tmp_path / "s.duckdb", config=cfg) as store:
        store.ingest(ev.drop_columns(["arm", "user_id", "segment", "pre_period", "grade", "examination",
                                      "attractiveness"]))
        rep = store.report(["ndcg@5", "map"], window="day", by=["model_version"], ci=None).to_pylist()
    got = {(r["measure"], r["model_version"]): r["value"] for r in rep}
    for m in ("ndcg@5", "map"):
        row = res.row(m, "treatment")
        assert row["control_mean"] == pytest.approx(got[(m, "control")], rel=1e-12)
        assert row["treatment_mean"] == pytest.approx(got[(m, "treatment")], rel=1e-12)


def test_label_rows_join_their_list():
    rows = [r for r in HAND if r[0] != "g3"]
    inline = _events(HAND)
    apart = pa.concat_tables([
        _events(rows + [("g3", "u2", "control", 1, []), ("g3", "u2", "control", 2, [])]),
        pa.table({"group_id": ["g3", "g3"], "item_id": ["i1", "i2"], "rank": pa.array([None, None], pa.int64()),
                  "labels": [["click"], ["buy", "click"]], "user_id": ["u2", "u2"], "arm": ["control", "control"]}),
    ])
    a = ab_test(inline, ["clicks@2", "ndcg@2", "purchases"]).rows
    b = ab_test(apart, ["clicks@2", "ndcg@2", "purchases"]).rows
    for x, y in zip(a, b):
        assert x["estimate"] == pytest.approx(y["estimate"]) and x["se"] == pytest.approx(y["se"])


def test_against_spotify_confidence_and_scipy():
    # spotify-confidence's z test on the unit-level linearised values l_i = M + (Y_i - M X_i) / mean(X)
    # (A3: it has no delta method; linearise first): the same estimate, interval and p-value
    sim = simulate({"control": 1.0, "treatment": 0.6}, n_users=4000, n_queries=60, seed=8)
    res = ab_test(sim.events, ["clicks@10"], expected_split={"control": 0.5, "treatment": 0.5})
    r = res.row("clicks@10", "treatment")
    v = sim.session_values("clicks@10")
    n = len(sim.users["arm"])
    y = np.bincount(sim.sessions["user"], v, minlength=n)
    x = sim.users["sessions"].astype(float)
    arm = np.where(sim.users["arm"] == 0, "control", "treatment")
    lin = np.zeros(n)
    for a in ("control", "treatment"):
        k = arm == a
        m = y[k].sum() / x[k].sum()
        lin[k] = m + (y[k] - m * x[k]) / x[k].mean()
    peer = confidence([{"arm": arm.tolist(), "value": lin.tolist(), "control": "control", "treatment": "treatment",
                        "interval": 0.95, "expected": {"control": 0.5, "treatment": 0.5}}])[0]
    assert r["estimate"] == pytest.approx(peer["difference"], rel=1e-10)
    assert (r["ci_low"], r["ci_high"]) == pytest.approx((peer["ci_lower"], peer["ci_upper"]), rel=1e-9)
    assert r["p_value"] == pytest.approx(peer["p_value"], rel=1e-7)
    assert res.srm["p_value"] == pytest.approx(peer["srm_p_value"], rel=1e-9)
    counts = np.bincount(sim.users["arm"])
    assert res.srm["p_value"] == pytest.approx(stats.chisquare(counts, [n / 2, n / 2]).pvalue, rel=1e-9)


def test_srm_detects_a_planted_mismatch():
    sim = simulate(n_users=20_000, n_queries=20, seed=3, actual_split={"control": 0.53, "treatment": 0.47})
    res = ab_test(sim.events, ["clicks@10"], expected_split={"control": 0.5, "treatment": 0.5})
    assert res.srm["p_value"] < 1e-6
    counts = np.bincount(sim.users["arm"])
    assert res.srm["p_value"] == pytest.approx(stats.chisquare(counts).pvalue, rel=1e-9)
    # against the split it was run with, no mismatch
    fine = ab_test(sim.events, ["clicks@10"], expected_split={"control": 0.53, "treatment": 0.47})
    assert fine.srm["p_value"] > 1e-3


def test_cuped_by_hand():
    # one covariate z per unit: theta pooled within arms, M_cv = M - theta (mean_arm z - mean_all z)
    cov = {"u1": 1.0, "u2": 3.0, "u3": 0.5, "u4": 2.0, "u5": 0.0}
    t = _events(HAND)
    t = t.append_column("pre", pa.array([cov[u] for u in t.column("user_id").to_pylist()]))
    r = ab_test(t, ["clicks@2"], covariates="pre").row("clicks@2", "treatment")
    arms = {"control": (["u1", "u2", "u3"], [1, 2, 1], [1, 2, 1]), "treatment": (["u4", "u5"], [3, 0], [2, 1])}
    lin, zs, means = {}, {}, {}
    for a, (us, y, x) in arms.items():
        y, x = np.array(y, float), np.array(x, float)
        m = y.sum() / x.sum()
        lin[a], zs[a], means[a] = (y - m * x) / x.mean(), np.array([cov[u] for u in us]), m
    num = sum(np.sum(lin[a] * (zs[a] - zs[a].mean())) for a in arms)
    den = sum(np.sum((zs[a] - zs[a].mean()) ** 2) for a in arms)
    theta = num / den
    zall = np.concatenate([zs["control"], zs["treatment"]]).mean()
    cv = {a: means[a] - theta * (zs[a].mean() - zall) for a in arms}
    var = {a: np.var(lin[a] - theta * zs[a], ddof=1) / len(lin[a]) for a in arms}
    assert r["estimate"] == pytest.approx(cv["treatment"] - cv["control"])
    assert r["se"] == pytest.approx(math.sqrt(var["treatment"] + var["control"]))
    assert r["method"] == "cuped"


def test_cuped_reduces_variance_as_one_minus_rho_squared():
    sim = simulate({"control": 1.0, "treatment": 1.0}, n_users=60_000, n_queries=50, rho=0.6, seed=21)
    res = ab_test(sim.events, ["clicks@10"], covariates=["pre_period"])
    assert res.row("clicks@10", "treatment")["variance_reduction"] == pytest.approx(0.36, abs=0.03)


@pytest.mark.parametrize("mutate, text", [
    (lambda t: t.set_column(t.column_names.index("arm"), "arm",
                            pa.array(["control"] * 8 + ["treatment"] * 2 + ["control"] * 2 + ["treatment"] * 2)),
     "unit 'u4' \\(column 'user_id'\\) is in two arms"),
    (lambda t: t.set_column(t.column_names.index("arm"), "arm", pa.array(["control"] * 7 + ["treatment"] * 7)),
     "served list 'g4' has rows of two arms"),
    # the value as written (-3), not numpy's repr (np.float64(-3.0)); rows count from 0
    (lambda t: t.set_column(t.column_names.index("rank"), "rank", pa.array([1, 2] * 3 + [-3] + [2] + [1, 2] * 3)),
     r"^events: rank -3 on row 6 is not a positive integer.$"),
    (lambda t: t.set_column(t.column_names.index("rank"), "rank", pa.array([1, 2] * 5 + [1.5] + [2, 1, 2])),
     r"^events: rank 1.5 on row 10 is not a positive integer.$"),
])
def test_bad_events(mutate, text):
    with pytest.raises(InputError, match=text):
        ab_test(mutate(_events(HAND)), ["clicks@2"])


def test_bad_arguments():
    t = _events(HAND)
    with pytest.raises(InputError, match="control arm 'base' is not in column 'arm'"):
        ab_test(t, ["clicks@2"], control="base")
    with pytest.raises(InputError, match="arm 'c' of expected_split has no units"):
        ab_test(t, ["clicks@2"], expected_split={"control": 0.4, "treatment": 0.4, "c": 0.2})
    with pytest.raises(InputError, match="covariate 'pre' is not a column"):
        ab_test(t, ["clicks@2"], covariates="pre")
    with pytest.raises(InputError, match="no column 'user'"):
        ab_test(t, ["clicks@2"], unit_col="user")
    with pytest.raises(InvalidParameterError, match="unknown measure"):
        ab_test(t, ["ndgc@10"])
    with pytest.raises(InvalidParameterError, match="`alpha`"):
        ab_test(t, ["clicks@2"], alpha=1.5)
    bad = t.append_column("pre", pa.array([1.0] * 13 + [2.0]))
    with pytest.raises(InputError, match="covariate 'pre' must be one value per unit"):
        ab_test(bad, ["clicks@2"], covariates="pre")
    nulls = t.append_column("pre", pa.array([1.0] * 13 + [None]))
    with pytest.raises(InputError, match="column 'pre' is empty on row 13"):  # the 14th value: rows count from 0
        ab_test(nulls, ["clicks@2"], covariates="pre")


def test_corrections_and_several_arms():
    sim = simulate({"control": 1.0, "b": 0.5, "c": 1.0}, n_users=6000, n_queries=30, seed=9)
    res = ab_test(sim.events, ["clicks@10", "ndcg@10"], correction="holm")
    p = np.array([r["p_value"] for r in res.rows])
    order = np.argsort(p)
    holm = np.maximum.accumulate(np.minimum(1, (len(p) - np.arange(len(p))) * p[order]))
    assert [res.rows[i]["p_adjusted"] for i in order] == pytest.approx(holm.tolist())
    assert {r["arm"] for r in res.rows} == {"b", "c"}
    bonf = ab_test(sim.events, ["clicks@10", "ndcg@10"], correction="bonferroni").row("clicks@10", "b")
    q = stats.norm.isf(0.05 / 4 / 2)
    assert bonf["ci_high"] - bonf["estimate"] == pytest.approx(q * bonf["se"])
