"""Click models fitted from logs: closed forms by hand on tiny logs, and recovery of simulated parameters.

Expected values: by hand from the definitions (Chuklin, Markov and de Rijke 2015; online-anchors.md B1) inside each
test, or the simulation's own parameters (ranklens.online's click models draw the clicks).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from ranklens import online
from ranklens.counterfactual import fit_click_model
from ranklens.errors import InputError, InvalidParameterError

sys.path.insert(0, str(Path(__file__).parent))
from support import ONE_SEGMENT, randomised_log

# two sessions of one query: s1 shows a, b, c and clicks b; s2 shows b, a, c and clicks b and c
TINY = {"group_id": ["s1"] * 3 + ["s2"] * 3, "query": ["q"] * 6, "item_id": ["a", "b", "c", "b", "a", "c"],
        "rank": [1, 2, 3, 1, 2, 3], "click": [0, 1, 0, 1, 0, 1]}


def _alpha(m, item):
    return float(m.attractiveness[list(m.item_ids).index(item)])


def test_cascade_by_hand():
    m = fit_click_model(TINY, "cascade")
    # ranks up to the first click: s1 a (no), b (click); s2 b (click)
    assert _alpha(m, "a") == 0.0 and _alpha(m, "b") == 1.0
    assert _alpha(m, "c") == 0.0  # never examined before a first click: no evidence, 0 / 0 -> 0
    assert m.impossible_clicks == 1  # s2's click on c follows its first click
    assert m.examination[1] == 1.0


def test_dcm_by_hand():
    m = fit_click_model(TINY, "dcm")
    # ranks up to the last click: s1 a, b; s2 b, a, c
    assert _alpha(m, "a") == 0.0 and _alpha(m, "b") == 1.0 and _alpha(m, "c") == 1.0
    # lambda_r = clicks at r that are not the session's last / clicks at r: rank 1: s2's b (not last) -> 1/1;
    # rank 2: s1's b is last -> 0/1; rank 3: s2's c is last -> 0/1
    assert m.continuation.array.tolist() == [1.0, 0.0, 0.0]


def test_sdbn_by_hand():
    m = fit_click_model(TINY, "sdbn")
    # satisfaction = the share of a pair's clicks that are its session's last: b clicked twice, last once
    sat = dict(zip(m.item_ids, m.satisfaction))
    assert sat["b"] == 0.5 and sat["c"] == 1.0


def test_pbm_log_likelihood_by_hand():
    m = fit_click_model(TINY, "pbm", iterations=1)
    # one EM step from theta = alpha = 0.5: for a non-click, P(E=1 | C=0) = P(A=1 | C=0) = 0.25 / 0.75 = 1/3
    # theta_1 = (1 click + 1 non-click * 1/3) / 2 = 2/3; alpha_b (clicked twice) = 1
    assert m.theta1 == pytest.approx(2 / 3)
    assert _alpha(m, "b") == pytest.approx(1.0 - 1e-12)
    # log-likelihood: sum over rows of c log(theta alpha) + (1 - c) log(1 - theta alpha) at the new parameters
    theta = np.array([2 / 3, (1 + 1 / 3) / 2, (1 + 1 / 3) / 2])  # rank 2: s1's b clicked, s2's a not; rank 3 alike
    alpha = {"a": (1 / 3 + 1 / 3) / 2, "b": 1.0 - 1e-12, "c": (1 / 3 + 1) / 2}
    rows = list(zip(TINY["item_id"], TINY["rank"], TINY["click"]))
    ll = sum(math.log(theta[r - 1] * alpha[i]) if c else math.log(1 - theta[r - 1] * alpha[i]) for i, r, c in rows)
    assert m.log_likelihood == pytest.approx(ll, rel=1e-9)
    # perplexity of rank r: 2 ** (-mean over its rows of log2 P(C = c))
    r1 = [(i, c) for i, r, c in rows if r == 1]
    p1 = 2 ** (-sum(math.log2(theta[0] * alpha[i] if c else 1 - theta[0] * alpha[i]) for i, c in r1) / len(r1))
    assert m.perplexity[1] == pytest.approx(p1, rel=1e-9)


def test_pbm_em_recovers_the_simulated_examination():
    """Plackett-Luce logging moves each item over the ranks: the EM's examination is the simulated 1/r."""
    sim = online.simulate({"control": 1.0}, n_users=30_000, n_queries=40, n_candidates=12, k=8,
                          policy="plackett_luce", temperature=2.0, heterogeneity=0.0, segments=ONE_SEGMENT, seed=11)
    m = fit_click_model(sim.events, "pbm")
    truth = sim.model.exam_curve(8)
    assert np.abs(m.examination.array / truth - 1).max() < 0.04, (m.examination, truth)
    # attractiveness: per grade, the mean over the pairs of that grade, on rank 1's scale (theta1 * alpha)
    g = np.asarray(sim.served.item_grade)[[int(str(i)[1:]) for i in m.item_ids]]
    for grade in (0, 1, 2):
        est = float((m.attractiveness[g == grade] * m.theta1).mean())
        assert est == pytest.approx(sim.model.attractiveness[grade], abs=0.03)


def test_regression_em_fits_alpha_from_features():
    """Pairs seen once or twice: alpha from a logistic regression on the pair's feature (its grade here)."""
    log = randomised_log([1.0, 0.6, 0.4, 0.3], sessions=60_000, queries=3000, candidates=8, k=4, design="shuffle",
                         seed=5)
    grades = np.random.default_rng(5).choice(5, size=(3000, 8), p=[0.5, 0.25, 0.13, 0.08, 0.04])  # same draw
    log["grade"] = grades.ravel()[log["item_id"]].astype(np.float64)
    plain = fit_click_model(log, "pbm")
    reg = fit_click_model(log, "pbm", features=["grade"])
    truth = np.array([1.0, 0.6, 0.4, 0.3])
    assert np.abs(reg.examination.array / truth - 1).max() < 0.05
    assert np.abs(reg.examination.array - truth).max() < np.abs(plain.examination.array - truth).max()


def test_dbn_em_recovers_a_simulated_dbn():
    cm = online.click_model("dbn", attractiveness=[0.1, 0.3, 0.5, 0.7, 0.9], satisfaction=[0.2, 0.4, 0.5, 0.6, 0.8],
                            continuation=0.8)
    rng = np.random.default_rng(2)
    grades = rng.choice(5, size=(20, 6))
    q = rng.integers(0, 20, 20_000)
    lists = np.argsort(rng.random((20_000, 6)), axis=1)
    g = np.take_along_axis(grades[q], lists, axis=1)
    clicks, _ = cm.sample(g, rng)
    log = {"group_id": np.repeat(np.arange(20_000), 6), "query": np.repeat(q, 6),
           "item_id": (lists + q[:, None] * 6).ravel(), "rank": np.tile(np.arange(1, 7), 20_000),
           "click": clicks.ravel()}
    m = fit_click_model(log, "dbn", iterations=50)
    assert m.continuation == pytest.approx(0.8, abs=0.03)
    true_alpha = np.array(cm.attractiveness)[grades.ravel()[[int(i) for i in m.item_ids]]]
    assert np.abs(m.attractiveness - true_alpha).mean() < 0.04
    # model choice: on DBN clicks the DBN's perplexity beats the PBM's
    assert m.mean_perplexity < fit_click_model(log, "pbm").mean_perplexity


def test_bad_logs_get_one_clear_line():
    bad_rank = dict(TINY, rank=[1, 2, 0, 1, 2, 3])
    with pytest.raises(InputError, match=r"column 'rank' holds 0 at row 2"):
        fit_click_model(bad_rank, "pbm")
    twice = dict(TINY, rank=[1, 1, 3, 1, 2, 3])
    with pytest.raises(InputError, match="rank 1 appears twice in the same session"):
        fit_click_model(twice, "pbm")
    with pytest.raises(InputError, match=r"column 'click' holds 2 at row 1"):
        fit_click_model(dict(TINY, click=[0, 2, 0, 1, 0, 1]), "pbm")
    with pytest.raises(InputError, match="rows of two queries"):
        fit_click_model(dict(TINY, query=["q"] * 5 + ["r"]), "pbm")
    with pytest.raises(InvalidParameterError, match="`model` must be one of"):
        fit_click_model(TINY, "ubm")
    with pytest.raises(InvalidParameterError, match="no click column"):
        fit_click_model({k: v for k, v in TINY.items() if k != "click"}, "pbm")


def test_labels_column_holds_the_clicks():
    labels = [[], ["click"], [], ["click", "buy"], [], ["click"]]
    a = fit_click_model({k: v for k, v in TINY.items() if k != "click"} | {"labels": labels}, "sdbn")
    b = fit_click_model(TINY, "sdbn")
    assert a.attractiveness.tolist() == b.attractiveness.tolist()
