"""Interleaving by simulation with known truth: graded judgments, rankers of known quality, a position-based
click model (examination 1/position, attractiveness from the grade).

* fidelity: when ranker A is truly better (higher NDCG@10 on the judgments, computed here by hand), delta > 0
  in nearly every experiment, for every method;
* A/A: with two exchangeable rankers (each impression's pool holds its mirror image, a and b swapped, so
  P(win) = P(loss) exactly) the sign test rejects at alpha as often as its exact size says (the test is
  discrete: its size given m preferences is P(p <= alpha) under Binomial(m, 1/2), computed here);
* coverage: Tango's 95% interval covers the true delta 94-96% of the time, from trinomial draws and end to
  end (team draft, the true delta computed exactly by convolution over the click model).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from scipy import stats as sst

from ranklens.errors import InputError, InvalidParameterError
from ranklens.online import interleave, interleaving_outcome
from ranklens.online.interleaving_stats import tango_interval

K, N_DOCS, N_QUERIES = 10, 20, 60
GRADES = np.array([0.5, 0.25, 0.13, 0.08, 0.04])
ATTRACT = 0.02 + 0.9 * (2.0 ** np.arange(5) - 1) / 15  # P(click | examined, grade)
EXAM = 1.0 / np.arange(1, K + 1)  # position-based model: P(examined | position)


@dataclass
class Pool:
    rel: np.ndarray  # (m, K): the grade of each shown item
    team: np.ndarray  # (m, K): 0 = a, 1 = b
    rank: np.ndarray  # (m, 2, K): ranks in a and b (balanced)
    prob: np.ndarray  # (m, 2, K): each ranker's probability of the shown item (probabilistic)
    ndcg: np.ndarray  # (m, 2): NDCG@10 of a's and b's own lists


def _ndcg(rel_sorted, ideal):
    disc = 1 / np.log2(np.arange(2, K + 2))
    return float(((2.0 ** rel_sorted[:K] - 1) * disc).sum() / ((2.0 ** ideal[:K] - 1) * disc).sum())


def _pool(method, noise_a, noise_b, m, seed, mirror=False):
    rng = np.random.default_rng(seed)
    rel_q = rng.choice(5, size=(N_QUERIES, N_DOCS), p=GRADES)
    rel_q[:, 0] = 4  # every query has a relevant item
    out = {"rel": [], "team": [], "rank": [], "prob": [], "ndcg": []}
    for _ in range(m):
        rel = rel_q[rng.integers(N_QUERIES)]
        a = np.argsort(-(rel + noise_a * rng.normal(size=N_DOCS)), kind="stable").tolist()
        b = np.argsort(-(rel + noise_b * rng.normal(size=N_DOCS)), kind="stable").tolist()
        il = interleave(a, b, method=method, k=K, seed=int(rng.integers(1 << 31)))
        log = il.log(np.zeros(K, int))
        out["rel"].append(rel[il.items])
        out["team"].append((log["team"] == "b").astype(int))
        out["rank"].append([log.get("rank_a", np.ones(K)), log.get("rank_b", np.ones(K))])
        out["prob"].append([log.get("prob_a", np.ones(K)), log.get("prob_b", np.ones(K))])
        ideal = np.sort(rel)[::-1]
        out["ndcg"].append([_ndcg(rel[a], ideal), _ndcg(rel[b], ideal)])
    p = Pool(*(np.asarray(out[f]) for f in ("rel", "team", "rank", "prob", "ndcg")))
    if mirror:  # the same lists with a and b swapped: the pool is exactly symmetric
        p = Pool(np.concatenate([p.rel, p.rel]), np.concatenate([p.team, 1 - p.team]),
                 np.concatenate([p.rank, p.rank[:, ::-1]]), np.concatenate([p.prob, p.prob[:, ::-1]]),
                 np.concatenate([p.ndcg, p.ndcg[:, ::-1]]))
    return p


def _experiment(pool, method, n, rng):
    idx = rng.integers(pool.rel.shape[0], size=n)
    click = rng.random((n, K)) < EXAM * ATTRACT[pool.rel[idx]]
    log = {"impression": np.repeat(np.arange(n), K), "position": np.tile(np.arange(1, K + 1), n),
           "team": pool.team[idx].ravel(), "click": click.ravel(),
           "rank_0": pool.rank[idx, 0].ravel(), "rank_1": pool.rank[idx, 1].ravel(),
           "prob_0": pool.prob[idx, 0].ravel(), "prob_1": pool.prob[idx, 1].ravel()}
    return interleaving_outcome(log, method=method, teams=(0, 1))


@pytest.mark.parametrize("method", ["team_draft", "balanced", "probabilistic"])
def test_better_ranker_wins(method):
    pool = _pool(method, 0.7, 2.5, 1500, seed=1)
    assert pool.ndcg[:, 0].mean() > pool.ndcg[:, 1].mean() + 0.05  # A is truly better on the judgments
    rng = np.random.default_rng(2)
    res = [_experiment(pool, method, 400, rng) for _ in range(60)]
    assert np.mean([r.delta > 0 for r in res]) >= 0.95
    assert np.mean([r.p_value < 0.05 for r in res]) >= 0.5


def _exact_size(m, alpha):
    """P(sign-test p-value <= alpha) under H0 given m preferences, from scipy's binomial distribution."""
    out = np.zeros(len(m))
    for j, mm in enumerate(m):
        if mm == 0:
            continue
        x = np.arange(mm + 1)
        p = np.minimum(1.0, 2 * sst.binom.cdf(np.minimum(x, mm - x), mm, 0.5))
        out[j] = sst.binom.pmf(x, mm, 0.5)[p <= alpha].sum()
    return out


@pytest.mark.slow
@pytest.mark.parametrize("method", ["team_draft", "balanced", "probabilistic"])
def test_aa_false_alarm_rate_is_the_tests_size(method):
    pool = _pool(method, 1.5, 1.5, 1500, seed=3, mirror=True)
    rng = np.random.default_rng(4)
    res = [_experiment(pool, method, 200, rng) for _ in range(1500)]
    p = np.array([r.p_value for r in res])
    m = np.array([r.wins + r.losses for r in res])
    for alpha in (0.01, 0.05, 0.1, 0.2):
        size = _exact_size(m, alpha)
        observed = int(np.sum(p <= alpha))
        z = (observed - size.sum()) / np.sqrt((size * (1 - size)).sum())
        assert abs(z) < 3.5, (alpha, observed, size.sum())
        assert observed / len(p) <= alpha + 0.01
    assert abs(np.mean([r.delta for r in res])) < 3.5 * np.std([r.delta for r in res]) / np.sqrt(len(res))


@pytest.mark.parametrize(("n", "p_win", "p_loss"), [
    (200, 0.30, 0.20), (200, 0.06, 0.03), (1000, 0.40, 0.40), (1000, 0.02, 0.05), (100, 0.5, 0.2)])
def test_tango_coverage_on_trinomial_draws(n, p_win, p_loss):
    rng = np.random.default_rng(n)
    draws = rng.multinomial(n, [p_win, 1 - p_win - p_loss, p_loss], size=40000)
    lo, hi = tango_interval(draws[:, 0], draws[:, 2], n, 0.95)
    theta = p_win - p_loss
    cover = np.mean((lo <= theta) & (theta <= hi))
    assert 0.94 <= cover <= 0.96, cover


@pytest.mark.parametrize(("n", "p_win", "p_loss"), [(50, 0.05, 0.02), (30, 0.1, 0.1), (20, 0.02, 0.0)])
def test_tango_coverage_with_few_preferences(n, p_win, p_loss):
    """With few impressions and rare preferences the interval is conservative, never short (a Wald interval
    covers 91% at n=50, P(win)=0.05, P(loss)=0.02)."""
    rng = np.random.default_rng(n)
    draws = rng.multinomial(n, [p_win, 1 - p_win - p_loss, p_loss], size=40000)
    lo, hi = tango_interval(draws[:, 0], draws[:, 2], n, 0.95)
    theta = p_win - p_loss
    assert np.mean((lo <= theta) & (theta <= hi)) >= 0.94


def _td_truth(pool):
    """The exact delta of a team-draft pool under the click model: per list, the distribution of
    (clicks on a's items - clicks on b's items) by convolution over positions; averaged over the pool."""
    m = pool.rel.shape[0]
    dist = np.zeros((m, 2 * K + 1))
    dist[:, K] = 1.0
    pc = EXAM * ATTRACT[pool.rel]
    for i in range(K):
        step = np.where(pool.team[:, i] == 0, 1, -1)
        shifted = np.zeros_like(dist)
        for s in (1, -1):
            rows = step == s
            shifted[rows] = np.roll(dist[rows], s, axis=1)
        dist = dist * (1 - pc[:, i:i + 1]) + shifted * pc[:, i:i + 1]
    win, loss = dist[:, K + 1:].sum(1), dist[:, :K].sum(1)
    return float(np.mean(win - loss) / 2)


@pytest.mark.slow
def test_interval_covers_the_true_delta_end_to_end():
    pool = _pool("team_draft", 1.0, 1.8, 2000, seed=5)
    truth = _td_truth(pool)
    assert truth > 0
    rng = np.random.default_rng(6)
    res = [_experiment(pool, "team_draft", 300, rng) for _ in range(3000)]
    cover = np.mean([r.ci_low <= truth <= r.ci_high for r in res])
    assert 0.94 <= cover <= 0.96, cover
    assert abs(np.mean([r.delta for r in res]) - truth) < 4 * np.std([r.delta for r in res]) / np.sqrt(len(res))


# -- sequential designs (Kharitonov et al. 2015): A/A under daily looks, and the confidence sequence's coverage ---
def _daily_log(rng, p_win, p_loss, days=20, per_day=60):
    """A team-draft log of days x per_day impressions, one row each: a click on a's item (win), on b's (loss)
    or no click (tie); the day is the look."""
    n = days * per_day
    u = rng.random(n)
    team = np.where(u < p_win, "a", "b")
    click = (u < p_win + p_loss).astype(np.int8)
    return {"impression": np.arange(n), "team": team, "click": click, "day": np.repeat(np.arange(days), per_day)}


@pytest.mark.slow
def test_always_valid_aa_false_alarms_under_daily_looks():
    from ranklens.online.interleaving_stats import sign_test

    rng = np.random.default_rng(21)
    reps, alpha = 1000, 0.05
    rejected, peeked = 0, 0
    for _ in range(reps):
        log = _daily_log(rng, 0.2, 0.2)
        r = interleaving_outcome(log, sequential="always_valid", look_col="day")
        rejected += r.p_value <= alpha
        w = np.array([lk["wins"] for lk in r.looks])
        ls = np.array([lk["losses"] for lk in r.looks])
        peeked += bool((sign_test(w, ls) <= alpha).any())  # the fixed-horizon test looked at every day
    assert rejected / reps <= alpha + 0.01, rejected / reps
    assert peeked / reps > alpha + 0.05, peeked / reps  # visibly above alpha


@pytest.mark.slow
def test_confidence_sequence_covers_the_truth():
    rng = np.random.default_rng(22)
    reps, p_win, p_loss = 800, 0.25, 0.18
    truth = (p_win - p_loss) / 2
    covered = 0
    for _ in range(reps):
        r = interleaving_outcome(_daily_log(rng, p_win, p_loss), sequential="always_valid", look_col="day")
        covered += all(lk["ci_low"] <= truth <= lk["ci_high"] for lk in r.looks)
    assert covered / reps >= 0.95 - 0.015, covered / reps


def test_sequential_fields_and_refusals():
    rng = np.random.default_rng(23)
    log = _daily_log(rng, 0.3, 0.1, days=5)
    fixed = interleaving_outcome(log)
    for design in ("always_valid", "group_sequential"):
        r = interleaving_outcome(log, sequential=design, look_col="day")
        assert (r.wins, r.losses, r.ties, r.delta) == (fixed.wins, fixed.losses, fixed.ties, fixed.delta)
        assert r.sequential.startswith(design) and len(r.looks) == 5 and r.looks[-1]["impressions"] == 300
        assert r.ci_low < r.delta < r.ci_high and r.p_value < 0.01
        assert r.to_dict()["sequential"] == r.sequential
    with pytest.raises(InvalidParameterError, match="`sequential` and `look_col` go together"):
        interleaving_outcome(log, sequential="always_valid")
    bad = dict(log, impression=log["impression"] // 2)  # impressions of two rows, one on each side of a day
    bad["day"] = np.where(np.arange(len(bad["day"])) == 59, 1, bad["day"])
    with pytest.raises(InputError, match="column 'day', row 5[89]: impression 29 has rows in two looks"):
        interleaving_outcome(bad, sequential="always_valid", look_col="day")
