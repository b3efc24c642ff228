"""Sakai's discriminative power (issue #33 point 1): the paired bootstrap of Sakai (2006) and the randomised Tukey
HSD (Sakai 2012/2014), with the estimated difference required.

Expectations: Sakai's algorithm written out in plain loops in the test (the replicates given, so the numbers are
exact), exact enumeration of the permutations of a tiny block, and simulation with known truth (runs with
planted differences: the power rises with the effect; pairs without a difference are significant at about alpha).
"""

from __future__ import annotations

import itertools
import math
import statistics

import numpy as np
import pytest

import ranklens
from ranklens.errors import InvalidParameterError
from ranklens.stats import estimate_discriminative_power


def _sakai_bootstrap(X, reps, alpha):
    """Sakai (2006), Figures 1, 2 and 5, loop by loop: per pair the ASL and |mean(w*b)| at the ceil(alpha B)-th
    largest t(w*b) (the first replicate with it)."""
    n, k = len(X), len(X[0])
    B = len(reps)
    asl, delta = {}, {}
    for a, b in itertools.combinations(range(k), 2):
        z = [row[a] - row[b] for row in X]
        zbar = sum(z) / n
        t_obs = abs(zbar) / (statistics.stdev(z) / math.sqrt(n))
        w = [v - zbar for v in z]
        ts, ms = [], []
        for rep in reps:
            wb = [w[i] for i in rep]
            m = sum(wb) / n
            s = statistics.stdev(wb)
            ts.append(abs(m) / (s / math.sqrt(n)) if s > 1e-12 else (0.0 if abs(m) < 1e-12 else math.inf))
            ms.append(m)
        asl[a, b] = sum(t >= t_obs for t in ts) / B
        kth = sorted(ts, reverse=True)[math.ceil(alpha * B) - 1]
        delta[a, b] = abs(ms[ts.index(kth)])
    return asl, delta


@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_bootstrap_equals_sakais_algorithm_by_hand(alpha):
    rng = np.random.default_rng(5)
    X = (rng.random((12, 4)) + np.array([0.0, 0.05, 0.2, 0.4])).round(3).tolist()
    reps = rng.integers(0, 12, size=(400, 12))
    asl, delta = _sakai_bootstrap(X, reps.tolist(), alpha)
    dp = estimate_discriminative_power(X, alpha=alpha, replicates=reps)
    for (a, b), v in asl.items():
        assert dp.asl[a, b] == dp.asl[b, a] == v
        assert dp.pair_difference[a, b] == pytest.approx(delta[a, b], rel=1e-9, abs=1e-12)
    assert dp.power == sum(v < alpha for v in asl.values()) / len(asl)
    assert dp.required_difference == pytest.approx(max(delta.values()), rel=1e-9)
    assert dp.n_resamples == 400 and dp.method == "bootstrap"


def test_randomized_tukey_by_exact_enumeration():
    """3 queries x 3 runs: all 6**3 permutations of the rows, equally likely; the estimate from 40000 random ones
    is within binomial error of the exact ASL, and the difference required is the (1 - alpha) point of the exact
    range distribution."""
    X = np.array([[0.2, 0.4, 0.5], [0.1, 0.4, 0.4], [0.3, 0.6, 0.8]])
    perms = list(itertools.permutations(range(3)))
    ranges = []
    for choice in itertools.product(perms, repeat=3):
        m = np.mean([X[i, list(p)] for i, p in enumerate(choice)], axis=0)
        ranges.append(m.max() - m.min())
    ranges = np.sort(ranges)
    means = X.mean(axis=0)
    B, alpha = 40000, 0.1
    dp = estimate_discriminative_power(X, "randomized_tukey", alpha=alpha, n_resamples=B, seed=3)
    for a, b in itertools.combinations(range(3), 2):
        exact = float((ranges >= abs(means[a] - means[b]) - 1e-12).mean())
        assert abs(dp.asl[a, b] - exact) <= 4 * math.sqrt(exact * (1 - exact) / B) + 1 / B
    # the (1 - alpha) point of the exact distribution: the smallest range r with P(range > r) <= alpha
    exact_q = min(r for r in ranges if (ranges > r + 1e-12).mean() <= alpha)
    assert dp.required_difference == pytest.approx(exact_q, abs=1e-9)
    # one threshold: a pair is significant exactly when its difference exceeds it
    for a, b in itertools.combinations(range(3), 2):
        assert bool(dp.significant[a, b]) == (abs(means[a] - means[b]) > dp.required_difference + 1e-12)


@pytest.mark.parametrize("method", ["bootstrap", "randomized_tukey"])
def test_power_rises_with_the_planted_effect(method):
    """Known truth: 5 runs, three with mean 0 and two with mean d (query effect + noise sd 0.1, 40 queries): 6 of
    the 10 pairs differ by d, 4 do not. The share of pairs found significant rises with d towards 0.6, and the
    pairs without a difference stay about never significant."""
    rng = np.random.default_rng(33)
    shift = np.array([0.0, 0.0, 0.0, 1.0, 1.0])
    null = np.zeros((5, 5), bool)
    null[:3, :3] = null[3:, 3:] = True
    np.fill_diagonal(null, False)
    powers, required, null_sig = [], [], []
    for d in (0.0, 0.01, 0.03, 0.08, 0.2):
        p, r = [], []
        for rep in range(30):
            X = rng.normal(0.5, 0.15, size=(40, 1)) + rng.normal(0, 0.1, size=(40, 5)) + d * shift
            dp = estimate_discriminative_power(X, method, n_resamples=400, seed=rep)
            p.append(dp.power)
            r.append(dp.required_difference)
            null_sig.append(dp.significant[null].mean())
        powers.append(np.mean(p))
        required.append(np.mean(r))
    assert powers[0] < 0.1 and powers[-1] > 0.55
    assert all(a < b for a, b in zip(powers, powers[1:])), powers
    assert np.mean(null_sig) < 0.1
    if method == "bootstrap":  # the bootstrap's difference required follows the noise, not d
        assert max(required) < 2 * min(required), required
    # a pair further apart than twice the difference required is found significant
    X = rng.normal(0.5, 0.15, size=(40, 1)) + rng.normal(0, 0.1, size=(40, 5)) + 0.2 * shift
    dp = estimate_discriminative_power(X, method, n_resamples=1000, seed=1)
    m = X.mean(axis=0)
    far = np.abs(m[:, None] - m[None, :]) > 2 * dp.required_difference
    assert far.any() and dp.significant[far].all()


def test_pairs_without_a_difference_are_significant_at_about_alpha():
    """Known truth: two runs of the same distribution, 300 data sets; the bootstrap test (one pair, no correction)
    calls about alpha of them significant (Sakai's test is slightly liberal on few queries: bounds of 3 binomial
    standard errors around 0.05, 50 queries)."""
    rng = np.random.default_rng(2006)
    reps, sig = 300, 0
    for r in range(reps):
        X = rng.normal(0.5, 0.15, size=(50, 1)) + rng.normal(0, 0.1, size=(50, 2))
        sig += estimate_discriminative_power(X, n_resamples=1000, seed=r).power
    rate = sig / reps
    se = math.sqrt(0.05 * 0.95 / reps)
    assert 0.05 - 3 * se <= rate <= 0.05 + 3 * se, rate


def test_compare_pairs_all_reports_it(tmp_path):
    rng = np.random.default_rng(7)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(8)} for i in range(25)}
    runs = {f"s{s}": {q: {d: g + float(rng.normal(0, noise)) for d, g in ds.items()} for q, ds in qrels.items()}
            for s, noise in enumerate((0.6, 0.8, 1.5, 3.0))}
    for test, method in (("t", "bootstrap"), ("randomized_tukey", "randomized_tukey")):
        c = ranklens.compare(qrels, runs, ["ndcg@5"], pairs="all", test=test, n_resamples=1000, ci="t")
        V = c.per_query["values"][0]
        dp = estimate_discriminative_power(V[~np.isnan(V).any(axis=1)], method, n_resamples=1000, seed=0)
        s = c.sakai["ndcg@5"]
        assert s["method"] == method and s["power"] == dp.power and s["pairs"] == 6
        assert s["required_difference"] == dp.required_difference
        assert "Sakai's discriminative power" in c.table() and "estimated difference required" in c.table()
        assert c.to_dict()["sakai_power"]["ndcg@5"]["power"] == dp.power


def test_bad_parameters_are_refused():
    X = [[0.1, 0.2], [0.3, 0.5], [0.2, 0.2]]
    for kw, words in (({"method": "anova"}, "`method`"), ({"alpha": 1.0}, "`alpha`"),
                      ({"n_resamples": 0}, "n_resamples"), ({"replicates": [[0, 1, 3]]}, "`replicates`"),
                      ({"method": "randomized_tukey", "replicates": [[0, 1, 2]]}, "`replicates`")):
        with pytest.raises(InvalidParameterError, match=words):
            estimate_discriminative_power(X, **kw)
    with pytest.raises(InvalidParameterError, match="finite"):
        estimate_discriminative_power([[0.1, math.nan], [0.2, 0.3]])
