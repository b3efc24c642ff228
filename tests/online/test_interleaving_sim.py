"""online.simulate_interleaving: interleaving logs of a simulated experiment (online.simulate), and
every_interleaving, the enumeration it draws team-draft and balanced lists from."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from scipy import stats as sst

from ranklens import online
from ranklens.errors import InvalidParameterError
from ranklens.online.interleaving import every_interleaving


@pytest.mark.parametrize("method", ["team_draft", "balanced"])
@pytest.mark.parametrize(("a", "b", "k"), [([1, 2, 3, 4, 5], [3, 1, 6, 2, 7], 5), ([1], [2, 3, 4, 5], 4),
                                           ([1, 2, 3], [1, 2, 3], 3), ([5, 4, 3, 2, 1, 0], [0, 1, 2], 6)])
def test_every_interleaving_is_the_distribution_of_interleave(method, a, b, k):
    every = every_interleaving({"a": a, "b": b}, method, k)
    assert sum(p for _, p in every) == pytest.approx(1.0, abs=1e-12)
    expect = Counter()
    for il, p in every:
        expect[(tuple(il.items), tuple(il.teams))] += p
    n = 6000
    seen = Counter()
    for s in range(n):
        il = online.interleave(a, b, method=method, k=k, seed=s)
        seen[(tuple(il.items), tuple(il.teams))] += 1
    assert set(seen) <= set(expect)
    keys = sorted(expect, key=str)
    if len(keys) > 1:
        assert sst.chisquare([seen[x] for x in keys], [expect[x] * n for x in keys]).pvalue > 1e-3


def _sim(**kw):
    args = {"n_users": 1500, "n_queries": 30, "seed": 3}
    args.update(kw)
    return online.simulate({"control": 1.5, "treatment": 0.5}, **args)


@pytest.mark.parametrize("method", ["team_draft", "balanced", "probabilistic"])
def test_log_shows_interleavings_of_the_arms_lists(method):
    sim = _sim()
    log = online.simulate_interleaving(sim, method=method, seed=4).to_pydict()
    s = sim.sessions
    assert len(set(log["impression"])) == len(s["user"])
    served = sim.served
    item_index = {name: i for i, name in enumerate(served.item_ids.tolist())}
    lists = {arm: served.items[j] for j, arm in enumerate(sim.arms)}
    rows: dict[int, list[int]] = {}
    for r, imp in enumerate(log["impression"]):
        rows.setdefault(imp, []).append(r)
    for imp in list(rows)[:300]:
        rr = rows[imp]
        q = s["query"][imp]
        assert log["position"][rr[0]:rr[-1] + 1] == list(range(1, len(rr) + 1))
        assert {log["query_id"][r] for r in rr} == {served.query_ids[q]}
        assert {log["user_id"][r] for r in rr} == {f"u{s['user'][imp]}"}
        shown = [item_index[log["item_id"][r]] for r in rr]
        assert [log["grade"][r] for r in rr] == served.item_grade[shown].tolist()
        for i, r in enumerate(rr):
            own = [x for x in lists[log["team"][r]][q].tolist() if x >= 0]
            if method == "team_draft":  # the team's best item not shown above
                assert shown[i] == next(x for x in own if x not in shown[:i])
            if method == "balanced":
                for arm in sim.arms:
                    rank = log[f"rank_{arm}"][r]
                    mine = [x for x in lists[arm][q].tolist() if x >= 0]
                    assert rank == (mine.index(shown[i]) + 1 if shown[i] in mine else None)
            if method == "probabilistic":
                assert 0 <= log[f"prob_{log['team'][r]}"][r] <= 1 and log[f"prob_{log['team'][r]}"][r] > 0


def test_clicks_follow_the_click_model():
    """With one segment of patience 1 and no heterogeneity, P(click at position r) is the model's
    click_probability of the shown grades: observed clicks per position within 4.5 standard deviations."""
    sim = _sim(n_users=4000, heterogeneity=0.0, segments={"all": (1.0, 1.0)}, click_model="dbn")
    log = online.simulate_interleaving(sim, seed=5)
    imp = np.asarray(log.column("impression"))
    pos = np.asarray(log.column("position")) - 1
    grades = np.full((imp.max() + 1, sim.served.k), -1)
    grades[imp, pos] = np.asarray(log.column("grade"))
    p = sim.model.click_probability(grades)
    click = np.zeros(grades.shape, dtype=bool)
    click[imp, pos] = np.asarray(log.column("click"))
    z = (click.sum(0) - p.sum(0)) / np.sqrt((p * (1 - p)).sum(0))
    assert np.all(np.abs(z) < 4.5), z


@pytest.mark.parametrize("method", ["team_draft", "balanced", "probabilistic"])
def test_the_truly_better_arm_wins(method):
    sim = _sim(n_users=3000, judged=True)
    truth = sim.truth(["ndcg@10", "clicks@10"])
    assert truth.difference("ndcg@10", "treatment") > 0 and truth.difference("clicks@10", "treatment") > 0
    r = online.interleaving_outcome(online.simulate_interleaving(sim, method=method, seed=6), method=method,
                                    teams=("treatment", "control"))
    assert r.delta > 0 and r.p_value < 1e-3 and r.ci_low > 0


def test_refusals():
    with pytest.raises(InvalidParameterError, match="`a` = 'x' is not an arm"):
        online.simulate_interleaving(_sim(), a="x")
    with pytest.raises(InvalidParameterError, match="same arm"):
        online.simulate_interleaving(_sim(), a="control", b="control")
    with pytest.raises(InvalidParameterError, match="policy='deterministic'"):
        online.simulate_interleaving(_sim(policy="plackett_luce"))
    with pytest.raises(InvalidParameterError, match="only team draft and balanced"):
        every_interleaving({"a": [1], "b": [2]}, "probabilistic", 2)
