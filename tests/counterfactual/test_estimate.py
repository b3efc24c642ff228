"""Off-policy estimates: by hand on tiny logs, bad logs, and simulations with known truth (ranklens.online).

Coverage tests replicate a log many times in one simulation: sessions are independent (one per user, no
heterogeneity, one segment), split into replications by index; each session's value does not depend on the other
sessions of its replication when the exposures are those of the logging policy (a deterministic logger: theta of
the logged rank; a stochastic one: computed on the whole simulated population, i.e. known propensities), so the
estimates and intervals of all replications come from one vectorised pass (checked against estimate() on one).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from ranklens import online
from ranklens.counterfactual import estimate, fit_click_model
from ranklens.counterfactual._measures import parse_measure
from ranklens.counterfactual._target import lay_target
from ranklens.counterfactual.estimate import session_values
from ranklens.errors import InputError, InvalidParameterError

sys.path.insert(0, str(Path(__file__).parent))
from support import ONE_SEGMENT, sim_log, target_run

# query q: s1 shows a, b, c and clicks b; s2 shows a, b, c and clicks a; query r: s3 shows x, y and clicks y
LOG = {"group_id": ["s1"] * 3 + ["s2"] * 3 + ["s3"] * 2, "query": ["q"] * 6 + ["r"] * 2,
       "item_id": ["a", "b", "c", "a", "b", "c", "x", "y"], "rank": [1, 2, 3, 1, 2, 3, 1, 2],
       "click": [0, 1, 0, 1, 0, 0, 0, 1]}
EXAM = [1.0, 0.5, 0.25]
TARGET = {"q": {"b": 3, "c": 2, "a": 1}, "r": {"y": 2, "z": 1}}  # z: never logged for r


def test_ips_by_hand():
    e = estimate(LOG, TARGET, estimator="ips", measure="clicks@2", examination=EXAM)
    # target top 2: q -> b (pos 1), c (pos 2); r -> y (pos 1), z (pos 2, never logged)
    # s1: b clicked at rank 2: theta_1 / rho(b) = 1 / 0.5 = 2; s2: nothing of b, c clicked; s3: y clicked at rank 2: 2
    assert e.value == pytest.approx((2 + 0 + 2) / 3)
    sd = np.std([2.0, 0.0, 2.0], ddof=1)
    assert e.se == pytest.approx(sd / math.sqrt(3))
    assert e.ci_low == pytest.approx(e.value - 1.959963984540054 * e.se)
    d = e.diagnostics
    assert d["unlogged_share"] == pytest.approx(1 / 6)  # sessions x target positions: s3's position 2 (z)
    assert d["unlogged_items"] == 1
    # inverse propensities of the rows the target uses: b, c in s1, s2 (1/0.5, 1/0.25) and y in s3 (1/0.5)
    u = np.array([2, 4, 2, 4, 2])
    assert d["max_weight"] == 4.0
    assert d["effective_sample_size"] == pytest.approx(3 * u.mean() ** 2 / (u ** 2).mean())  # 3 sessions


def test_ctr_snips_and_clip_by_hand():
    ctr = estimate(LOG, TARGET, measure="ctr@2", examination=EXAM)
    assert ctr.value == pytest.approx((2 / 2 + 0 + 2 / 2) / 3)  # over min(2, target length) = 2
    sn = estimate(LOG, TARGET, estimator="snips", measure="clicks@2", examination=EXAM)
    # W_s = sum_j w_j theta(r_s(d_j)) / rho(d_j) / sum_j w_j: q: (1 * 0.5/0.5 + 0.5 * 0.25/0.25) / 1.5 = 1;
    # r: (1 * 0.5 / 0.5 + 0) / 1.5 = 2/3 (w = theta of the target positions: 1, 0.5)
    assert sn.value == pytest.approx((2 + 0 + 2) / (1 + 1 + 2 / 3))
    clipped = estimate(LOG, TARGET, measure="clicks@2", examination=EXAM, clip=3.0)
    assert clipped.diagnostics["clipped_rows"] == 2  # c's rows (1 / 0.25 = 4 > 3)
    assert clipped.value == pytest.approx((2 + 0 + 2) / 3)  # c is never clicked: the same value


def test_dr_by_hand():
    model = fit_click_model(LOG, "pbm", iterations=5)
    a = dict(zip(zip(model.query_ids, model.item_ids), model.attractiveness * model.theta1))
    e = estimate(LOG, TARGET, estimator="dr", measure="clicks@2", examination=EXAM, click_model=model)
    w = [1.0, 0.5]  # theta of target positions 1, 2
    fallback = float(np.mean(list(a.values())))  # z: the model's mean attractiveness
    dm_q = w[0] * a[("q", "b")] + w[1] * a[("q", "c")]
    dm_r = w[0] * a[("r", "y")] + w[1] * fallback
    # corrections w_j (c - theta_r alpha) / rho for the target's logged rows
    s1 = w[0] * (1 - 0.5 * a[("q", "b")]) / 0.5 + w[1] * (0 - 0.25 * a[("q", "c")]) / 0.25
    s2 = w[0] * (0 - 0.5 * a[("q", "b")]) / 0.5 + w[1] * (0 - 0.25 * a[("q", "c")]) / 0.25
    s3 = w[0] * (1 - 0.5 * a[("r", "y")]) / 0.5
    assert e.value == pytest.approx((dm_q + s1 + dm_q + s2 + dm_r + s3) / 3)
    dm = estimate(LOG, TARGET, estimator="dm", measure="clicks@2", examination=EXAM, click_model=model)
    assert dm.value == pytest.approx((2 * dm_q + dm_r) / 3)
    assert e.diagnostics["model_unseen_pairs"] == 0


def test_click_measures_through_the_core():
    from ranklens.evaluate import evaluate_arrays

    e = estimate(LOG, TARGET, measure="click_dcg@2", examination=EXAM)
    # gains: s1 b -> 1/0.5 = 2 at position 1; s3 y -> 2 at position 1; DCG@2 with log2(r + 1) discounts
    assert e.value == pytest.approx((2 + 0 + 2) / 3)
    n = estimate(LOG, TARGET, measure="click_ndcg@2", examination=EXAM)
    # per session by the core: s1 gains (2, 0) -> 1; s2 no gain -> no value (counted); s3 (2, 0) -> 1
    core = evaluate_arrays([0, 0], [2.0, 1.0], [2.0, 0.0], ["ndcg@2"], per_query=True).values[0, 0]
    assert n.value == pytest.approx(core) and n.diagnostics["sessions_without_value"] == 1


def test_bad_logs_and_arguments_get_one_line():
    with pytest.raises(InputError, match=r"a click at rank 3 \(row 7\), beyond the 2 ranks the examination covers"):
        estimate(dict(LOG, rank=[1, 2, 3, 1, 2, 3, 1, 3], click=[0, 1, 0, 1, 0, 0, 0, 1]), TARGET,
                 examination=[1.0, 0.5], measure="clicks@2")
    with pytest.raises(InputError, match=r"examination propensities must be in \(0, 1\]"):
        estimate(LOG, TARGET, examination=[1.0, 0.0, 0.2])
    with pytest.raises(InputError, match=r"examination propensities must be in \(0, 1\]"):
        estimate(LOG, TARGET, examination=[1.0, 1.2, 0.2])
    with pytest.raises(InputError, match=r"the ranking has no item for 1 logged queries \(e.g. 'r'\)"):
        estimate(LOG, {"q": {"a": 1.0}}, examination=EXAM)
    with pytest.raises(InvalidParameterError, match="not additive over positions"):
        estimate(LOG, TARGET, estimator="dr", measure="click_ndcg@2", examination=EXAM)
    with pytest.raises(InvalidParameterError, match="depends on the whole click pattern"):
        estimate(LOG, TARGET, measure="abandonment", examination=EXAM)
    with pytest.raises(InvalidParameterError, match="`estimator` must be one of"):
        estimate(LOG, TARGET, estimator="ipw")
    with pytest.raises(InvalidParameterError, match="no query column"):
        estimate({k: v for k, v in LOG.items() if k != "query"}, TARGET, examination=EXAM)


def _replicated(sim, run, measure, estimator, exam, model=None, reps=4000):
    """Estimates and normal intervals of every replication (sessions split by index), vectorised."""
    lg = sim_log(sim)
    m = parse_measure(measure)
    tg = lay_target(run, lg, m.k)
    y, _, _ = session_values(lg, tg, m, estimator, np.asarray(exam), model, clip=None, convention="ranklens")
    rep = np.arange(lg.n_sessions) % reps
    n = np.bincount(rep).astype(float)
    mean = np.bincount(rep, weights=y) / n
    var = (np.bincount(rep, weights=y * y) - n * mean ** 2) / (n - 1)
    se = np.sqrt(var / n)
    return mean, mean - 1.959963984540054 * se, mean + 1.959963984540054 * se, lg


def _sim(click_model, *, policy="deterministic", users, seed):
    return online.simulate({"control": 1.0}, n_users=users, sessions_per_user=1.0, n_queries=30, n_candidates=8,
                           k=5, heterogeneity=0.0, segments=ONE_SEGMENT, click_model=click_model, policy=policy,
                           temperature=1.5, seed=seed)


@pytest.mark.slow
def test_intervals_cover_the_truth_under_a_pbm_with_a_deterministic_logger():
    reps = 4000
    sim = _sim("pbm", users=reps * 300, seed=21)
    run = target_run(sim, 0.8, seed=4, within_logged=True)  # re-orders the logged lists: every item logged
    truth = sim.truth(["clicks@5", "ctr@3"], rankings={"target": run})
    exam = sim.model.exam_curve(5)
    model = fit_click_model(sim_log(sim), "pbm", iterations=30)  # not identified here: dr must not care
    out = {}
    for measure, estimator, mdl in (("clicks@5", "ips", None), ("ctr@3", "ips", None), ("clicks@5", "dr", model)):
        mean, lo, hi, lg = out[measure, estimator] = _replicated(sim, run, measure, estimator, exam, mdl, reps)
        cover = float(((lo <= truth.value(measure, "target")) & (truth.value(measure, "target") <= hi)).mean())
        assert 0.94 <= cover <= 0.96, (measure, estimator, cover)
        assert abs(mean.mean() - truth.value(measure, "target")) < 3 * mean.std() / math.sqrt(reps)
    mean, _, hi, lg = out["ctr@3", "ips"]
    # the vectorised pass is the product's estimate on a replication
    from ranklens.counterfactual._log import build_log

    one = np.flatnonzero(np.arange(lg.n_sessions) % reps == 7)
    rows = np.isin(lg.session, one)
    sub = build_log(np.searchsorted(one, lg.session[rows]), lg.query[rows], lg.item[rows], lg.rank[rows],
                    lg.click[rows], lg.query_ids, lg.item_ids, "replication 7", True)
    e = estimate(sub, run, measure="ctr@3", examination=exam)
    assert e.value == pytest.approx(mean[7]) and e.ci_high == pytest.approx(hi[7])


@pytest.mark.slow
def test_intervals_cover_the_truth_with_a_stochastic_logger_ips_and_pi():
    reps = 4000
    sim = _sim("pbm", policy="plackett_luce", users=reps * 600, seed=22)
    run = target_run(sim, 0.8, seed=5)  # over every candidate: the policy shows each one at times
    truth = sim.truth(["clicks@5"], rankings={"target": run}).value("clicks@5", "target")
    for estimator in ("ips", "pi"):
        mean, lo, hi, _ = _replicated(sim, run, "clicks@5", estimator, sim.model.exam_curve(5), None, reps)
        cover = float(((lo <= truth) & (truth <= hi)).mean())
        assert 0.94 <= cover <= 0.96, (estimator, cover)


@pytest.mark.slow
def test_ips_is_biased_under_a_cascade():
    """Cascade clicks: examination depends on the items above; the position-based IPS misses the truth."""
    reps = 400
    sim = _sim("cascade", users=reps * 1500, seed=23)
    run = target_run(sim, 0.3, seed=6, within_logged=True)
    truth = sim.truth(["clicks@5"], rankings={"target": run}).value("clicks@5", "target")
    model = fit_click_model(_sim("cascade", policy="plackett_luce", users=20_000, seed=24).events,
                            "cascade")
    exam = model.examination.array  # the cascade's mean examination per rank, the best a PBM weight can do
    mean, lo, hi, _ = _replicated(sim, run, "clicks@5", "ips", exam, None, reps)
    cover = float(((lo <= truth) & (truth <= hi)).mean())
    assert cover < 0.5, cover
    assert abs(mean.mean() - truth) > 10 * mean.std() / math.sqrt(reps)


def test_ips_with_a_fitted_pbm_on_a_stochastic_log_is_close_to_the_truth():
    sim = _sim("pbm", policy="plackett_luce", users=40_000, seed=25)
    ev = sim.events
    run = target_run(sim, 0.5, seed=7)
    truth = sim.truth(["clicks@5"], rankings={"target": run}).value("clicks@5", "target")
    for est in ("ips", "snips", "dr"):
        e = estimate(ev, run, estimator=est, measure="clicks@5")  # a PBM fitted by EM on the log itself
        assert abs(e.value - truth) < 4 * e.se, (est, e.value, truth, e.se)
