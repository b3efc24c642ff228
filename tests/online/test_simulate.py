"""The simulator: its exact truth against hand calculations and against large samples, its log, its covariate,
its split, its logging policy and its errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ranklens.errors import InputError, InvalidParameterError
from ranklens.online import click_model, simulate

ONE_USER_KIND = {"heterogeneity": 0.0, "sessions_per_user": 1.0, "segments": {"all": (1.0, 1.0)}}


def _ratio_z(sim, measure, arm_index):
    """(estimate, z against the truth) of an arm's ratio of sums over users, its standard error by the delta
    method written out here: Var(sum Y / sum X) ~ Var(Y - M X) / (n mean(X)^2)."""
    v = sim.session_values(measure)
    ok = ~np.isnan(v)
    users = sim.sessions["user"]
    n = len(sim.users["arm"])
    y = np.bincount(users, np.where(ok, v, 0.0), minlength=n)[sim.users["arm"] == arm_index]
    x = np.bincount(users, ok.astype(float), minlength=n)[sim.users["arm"] == arm_index]
    m = y.sum() / x.sum()
    se = np.std(y - m * x, ddof=1) / math.sqrt(len(y)) / x.mean()
    truth = sim.truth([measure]).value(measure, sim.arms[arm_index])
    return m, (m - truth) / se


def test_truth_of_online_measures_by_hand():
    # one query, one kind of user with one session: the expectations are those of the served list
    j = {"q": {"a": 3, "b": 0, "c": 2, "d": 1}}
    cm = click_model("pbm", attractiveness=[0.1, 0.3, 0.6, 0.9], examination=[1.0, 0.5, 0.25, 0.2],
                     purchase=[0.0, 0.1, 0.2, 0.5])
    sim = simulate({"control": {"q": {"a": 4, "b": 3, "c": 2, "d": 1}},
                    "treatment": {"q": {"c": 4, "a": 3, "d": 2, "b": 1}}},
                   judgments=j, click_model=cm, k=4, n_users=10, seed=0, **ONE_USER_KIND)
    t = sim.truth(["clicks", "clicks@2", "ctr@2", "abandonment", "first_click_rr", "purchases"])
    pc = [1.0 * 0.9, 0.5 * 0.1, 0.25 * 0.6, 0.2 * 0.3]  # control: a b c d
    pt = [1.0 * 0.6, 0.5 * 0.9, 0.25 * 0.3, 0.2 * 0.1]  # treatment: c a d b
    assert t.value("clicks", "control") == pytest.approx(sum(pc))
    assert t.value("clicks@2", "treatment") == pytest.approx(pt[0] + pt[1])
    assert t.value("ctr@2", "control") == pytest.approx((pc[0] + pc[1]) / 2)
    assert t.value("abandonment", "control") == pytest.approx(np.prod([1 - p for p in pc]))
    rr = pt[0] + (1 - pt[0]) * pt[1] / 2 + (1 - pt[0]) * (1 - pt[1]) * pt[2] / 3 + np.prod(
        [1 - p for p in pt[:3]]) * pt[3] / 4
    assert t.value("first_click_rr", "treatment") == pytest.approx(rr)
    assert t.value("purchases", "control") == pytest.approx(pc[0] * 0.5 + pc[1] * 0.0 + pc[2] * 0.2 + pc[3] * 0.1)
    assert t.difference("clicks", "treatment") == pytest.approx(sum(pt) - sum(pc))
    assert t.relative("clicks", "treatment") == pytest.approx(sum(pt) / sum(pc) - 1)


def test_truth_of_ndcg_from_clicks_by_hand():
    # two items: the four click patterns; NDCG of (click, -) and (click, click) is 1, of (-, click)
    # 1/log2(3); a list without a click has no NDCG (skipped): the ratio over lists with a click
    j = {"q": {"a": 1, "b": 0}}
    cm = click_model("pbm", attractiveness=[0.2, 0.7], examination=[1.0, 0.5])
    sim = simulate({"control": {"q": {"a": 2, "b": 1}}}, judgments=j, click_model=cm, k=2, n_users=10, seed=0,
                   **ONE_USER_KIND)
    p1, p2 = 0.7, 0.5 * 0.2
    p10, p01, p11 = p1 * (1 - p2), (1 - p1) * p2, p1 * p2
    want = (p10 + p11 + p01 / math.log2(3)) / (p10 + p01 + p11)
    assert sim.truth("ndcg").value("ndcg", "control") == pytest.approx(want)
    # judged: the list's own NDCG from the grades, 1 here (a is first)
    judged = simulate({"control": {"q": {"b": 2, "a": 1}}}, judgments=j, click_model=cm, k=2, n_users=10, seed=0,
                      judged=True, **ONE_USER_KIND)
    assert judged.truth("ndcg").value("ndcg", "control") == pytest.approx(1 / math.log2(3))


def test_truth_weights_users_by_their_sessions():
    # two segments of different patience: the arm's value is the ratio of expected sums, each segment weighted
    # by its share (every user has the same mean number of sessions here)
    j = {"q": {"a": 1}}
    cm = click_model("pbm", attractiveness=[0.0, 1.0], examination=[0.64])
    sim = simulate({"control": {"q": {"a": 1}}}, judgments=j, click_model=cm, k=1, n_users=10, seed=0,
                   heterogeneity=0.0, sessions_per_user=2.0, segments={"x": (0.25, 1.0), "y": (0.75, 2.0)})
    assert sim.truth("clicks").value("clicks", "control") == pytest.approx(0.25 * 0.64 + 0.75 * 0.8)
    assert sim.truth("clicks", segment="y").value("clicks", "control") == pytest.approx(0.8)


@pytest.mark.parametrize("kind", ["pbm", "cascade", "dbn"])
def test_truth_matches_a_large_sample(kind):
    sim = simulate({"control": 1.0, "treatment": 0.4}, n_users=60_000, n_queries=60, k=6, click_model=kind,
                   seed=11)
    for measure in ("clicks@5", "abandonment", "first_click_rr", "purchases", "ndcg@5", "mrr"):
        for arm in (0, 1):
            _, z = _ratio_z(sim, measure, arm)
            assert abs(z) < 4.5, (kind, measure, arm, z)


@pytest.mark.slow
def test_truth_matches_a_very_large_sample():
    sim = simulate({"control": 1.0, "treatment": 0.6}, n_users=600_000, n_queries=200, k=10, click_model="dbn",
                   heterogeneity=0.8, seed=12)
    zs = [_ratio_z(sim, m, a)[1] for m in ("clicks@10", "ctr@3", "ndcg@10", "P@5") for a in (0, 1)]
    assert max(abs(z) for z in zs) < 4.5, zs


def test_the_log():
    sim = simulate({"control": 1.0, "treatment": 0.5}, n_users=3000, n_queries=40, k=5, days=7, seed=3)
    ev = sim.events
    assert ev.column_names[:9] == ["timestamp", "model", "model_version", "environment", "group_id", "item_id",
                                   "rank", "labels", "arm"]
    assert ev.num_rows == 5 * len(sim.sessions["user"])
    rows = ev.to_pydict()
    clicks = np.array(["click" in x for x in rows["labels"]])
    assert clicks.tolist() == sim.sessions["clicks"].ravel().tolist()
    assert not any("buy" in x and "click" not in x for x in rows["labels"])  # a purchase follows a click
    # every list belongs to one user and one arm; a user's lists are all in their arm
    pairs = set(zip(rows["group_id"], rows["user_id"], rows["arm"]))
    assert len(pairs) == len(set(rows["group_id"]))
    assert len(set(zip(rows["user_id"], rows["arm"]))) == len(set(rows["user_id"]))
    assert rows["model_version"] == rows["arm"]
    ts = ev.column("timestamp").to_numpy().astype("datetime64[ms]")
    assert ts.min() >= np.datetime64("2026-10-01") and ts.max() < np.datetime64("2026-10-08")
    assert simulate({"control": 1.0, "treatment": 0.5}, n_users=3000, n_queries=40, k=5, days=7, seed=3
                    ).events.equals(ev)
    assert not simulate({"control": 1.0, "treatment": 0.5}, n_users=3000, n_queries=40, k=5, days=7, seed=4
                        ).events.equals(ev)


def test_judged_log_carries_the_grade_as_relevance():
    sim = simulate(n_users=200, n_queries=10, seed=0, judged=True)
    ev = sim.events
    assert ev.column("relevance").to_pylist() == [float(g) for g in ev.column("grade").to_pylist()]


def test_covariate_has_the_chosen_correlation():
    sim = simulate({"control": 1.0, "treatment": 0.7}, n_users=200_000, n_queries=80, rho=0.6, seed=5,
                   covariate_measure="clicks@10")
    v = sim.session_values("clicks@10")
    n = len(sim.users["arm"])
    y = np.bincount(sim.sessions["user"], v, minlength=n)
    x = sim.users["sessions"].astype(float)
    ctl = sim.users["arm"] == 0
    m = y[ctl].sum() / x[ctl].sum()
    r = np.corrcoef(sim.users["pre_period"][ctl], (y - m * x)[ctl])[0, 1]
    assert r == pytest.approx(0.6, abs=0.01)
    # unaffected by the treatment: the same distribution in both arms
    pre = sim.users["pre_period"]
    assert abs(pre[ctl].mean() - pre[~ctl].mean()) < 4 * math.sqrt(2 / ctl.sum())


def test_a_tiny_rho_is_noise_not_an_overflow():
    # rho = 1e-300: rho^2 underflows to 0 (it was a division by zero); the covariate is then the noise alone:
    # finite, variance 1, uncorrelated with the users' values
    sim = simulate(n_users=20_000, n_queries=10, seed=4, rho=1e-300, covariate_measure="clicks@10")
    pre = sim.users["pre_period"]
    assert np.isfinite(pre).all() and np.var(pre) == pytest.approx(1.0, abs=0.05)
    y = np.bincount(sim.sessions["user"], sim.session_values("clicks@10"), minlength=len(pre))
    assert abs(np.corrcoef(pre, y)[0, 1]) < 4 / math.sqrt(len(pre))


def test_rho_above_what_the_model_allows():
    sim = simulate(n_users=100, n_queries=10, seed=0, heterogeneity=0.0)
    top = sim.rho_max()
    with pytest.raises(InvalidParameterError, match=r"`rho` = 0.99 is more than"):
        simulate(n_users=100, n_queries=10, seed=0, heterogeneity=0.0, rho=0.99)
    assert top < 0.99


def test_split_and_actual_split():
    sim = simulate({"a": 1.0, "b": 1.0, "c": 0.5}, split={"a": 0.5, "b": 0.25, "c": 0.25}, n_users=40_000,
                   n_queries=10, seed=2)
    counts = np.bincount(sim.users["arm"], minlength=3) / 40_000
    assert counts == pytest.approx([0.5, 0.25, 0.25], abs=0.01)
    srm = simulate(n_users=40_000, n_queries=10, seed=2, actual_split={"control": 0.52, "treatment": 0.48})
    assert np.bincount(srm.users["arm"]).tolist()[0] / 40_000 == pytest.approx(0.52, abs=0.01)
    assert srm.split == (0.5, 0.5)


def test_aa_arm_serves_the_same_lists():
    sim = simulate({"control": 1.0, "treatment": "control"}, n_users=100, n_queries=10, seed=0)
    assert (sim.served.items[0] == sim.served.items[1]).all()
    assert sim.truth(["clicks@10", "ndcg@10"]).difference("ndcg@10", "treatment") == 0.0


def test_plackett_luce_propensities_by_hand():
    j = {"q": {"a": 2, "b": 1, "c": 0}}
    run = {"q": {"a": 2.0, "b": 1.0, "c": 0.0}}
    sim = simulate({"control": run}, judgments=j, k=2, n_users=60_000, seed=1, policy="plackett_luce",
                   temperature=1.0, **ONE_USER_KIND)
    e = math.e
    items = sim.sessions["items"]
    prop = sim.sessions["propensity"]
    names = sim.served.item_ids
    first_a = names[items[:, 0]] == "a"
    ab = first_a & (names[items[:, 1]] == "b")
    assert prop[ab][0, 0] == pytest.approx(e ** 2 / (e ** 2 + e + 1))
    assert prop[ab][0, 1] == pytest.approx(e ** 2 / (e ** 2 + e + 1) * e / (e + 1))
    assert ab.mean() == pytest.approx(prop[ab][0, 1], abs=0.006)
    ev = sim.events
    assert "propensity" in ev.column_names and "list_propensity" in ev.column_names
    with pytest.raises(InvalidParameterError, match="not computed"):
        sim.truth("clicks")
    # the truth of a deterministic ranking given beside the logging policy
    t = sim.truth("clicks@1", runs={"target": {"q": {"c": 1.0, "b": 0.5}}})
    assert t.value("clicks@1", "target") == pytest.approx(0.05)  # grade 0 first: default attractiveness 0.05


@pytest.mark.parametrize("kwargs, err, text", [
    ({"split": {"control": 0.7}}, InvalidParameterError, "give a share to each arm"),
    ({"split": {"control": 0.7, "treatment": 0.7}}, InvalidParameterError, "sum to 1"),
    ({"rankers": {"control": -1.0}}, InvalidParameterError, "noise must be a number >= 0"),
    ({"rankers": {"control": 1.0, "treatment": "other"}}, InvalidParameterError, "not another arm's name"),
    ({"rankers": {"control": {"q0": {"x": 1.0}}}}, InvalidParameterError, "give the `judgments`"),
    ({"n_users": 0}, InvalidParameterError, "`n_users` must be an integer >= 1"),
    ({"policy": "random"}, InvalidParameterError, "`policy`"),
    ({"covariate_measure": "ndcg@10"}, InvalidParameterError, "online measure"),
])
def test_bad_arguments(kwargs, err, text):
    with pytest.raises(err, match=text):
        simulate(**{"n_users": 10, "n_queries": 5, **kwargs})


def test_runs_need_judged_items_and_every_query():
    j = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2}}
    with pytest.raises(InputError, match=r"1 ranked items have no judgment \(e.g. 'z' for query 'q1'\)"):
        simulate({"control": {"q1": {"a": 1.0, "z": 0.5}, "q2": {"c": 1.0}}}, judgments=j, n_users=5)
    with pytest.raises(InputError, match=r"ranks nothing for 1 judged queries \(e.g. 'q2'\)"):
        simulate({"control": {"q1": {"a": 1.0}}}, judgments=j, n_users=5)
    with pytest.raises(InputError, match=r"grades must be integers 0..4 .*; got 7\.$"):
        simulate({"control": {"q1": {"a": 1.0}}}, judgments={"q1": {"a": 7}}, n_users=5)
