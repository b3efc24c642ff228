"""ranklens.stats against scipy.stats, ranx and hand computations on the same arrays."""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.stats as ss

from ranklens import InvalidParameterError, stats
from ranklens.stats import interval_from_bootstrap


def _pairs(seed: int, n: int, rounding: int | None = None):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0, 1, n)
    b = np.clip(a + rng.normal(0.03, 0.15, n), 0, 1)
    if rounding is not None:
        a, b = np.round(a, rounding), np.round(b, rounding)
    return a, b


# -- t-test and t interval ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed,n,rounding", [(0, 5, None), (1, 43, None), (2, 1000, 1), (3, 20, 1)])
def test_paired_t_matches_scipy(seed, n, rounding):
    a, b = _pairs(seed, n, rounding)
    ref = ss.ttest_rel(a, b)
    got = stats.paired_t(a, b)
    assert got.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert got.p_value == pytest.approx(ref.pvalue, rel=1e-10, abs=1e-300)
    assert got.n == n and got.mean_difference == pytest.approx(np.mean(a - b))
    # the interval of the mean difference is ttest_rel's
    lo, hi = ref.confidence_interval(0.95)
    iv = stats.t_interval(a - b, 0.95)
    assert (iv.low, iv.high) == pytest.approx((lo, hi), rel=1e-10)


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_t_interval_matches_scipy(confidence):
    x = np.random.default_rng(5).uniform(size=37)
    lo, hi = ss.t.interval(confidence, len(x) - 1, loc=x.mean(), scale=ss.sem(x))
    iv = stats.t_interval(x, confidence)
    assert (iv.low, iv.high) == pytest.approx((lo, hi), rel=1e-12)
    assert iv.estimate == pytest.approx(x.mean()) and iv.method == "t" and iv.n == 37


# -- Wilcoxon -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "seed,n,rounding",
    [
        (0, 20, None),   # exact null distribution (no ties, no zeros)
        (1, 50, None),   # exact, at the boundary
        (2, 51, None),   # normal approximation
        (3, 10, 1),      # ties / zeros, n <= 13: every sign flip
        (4, 13, 1),
        (5, 30, 1),      # ties and zeros, normal approximation with tie correction
        (6, 2000, 2),
        (7, 500, None),
    ],
)
def test_wilcoxon_matches_scipy(seed, n, rounding):
    a, b = _pairs(seed, n, rounding)
    ref = ss.wilcoxon(a, b)
    got = stats.wilcoxon(a, b)
    assert got.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert got.p_value == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)


def test_wilcoxon_detail_names_the_method():
    a, b = _pairs(0, 20)
    assert stats.wilcoxon(a, b).detail == "exact"
    a, b = _pairs(2, 80)
    assert stats.wilcoxon(a, b).detail == "normal approximation"
    a, b = np.array([0.1, 0.2, 0.3, 0.4, 0.5]), np.array([0.1, 0.1, 0.1, 0.1, 0.1])
    assert "1 zero differences dropped" in stats.wilcoxon(a, b).detail


# -- bootstrap intervals ------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_bootstrap_formulas_match_scipy_on_the_same_resamples(method, confidence):
    """scipy draws its resamples as ``rng.integers(0, n, (B, n))``; rebuilding the same bootstrap means
    here and passing them to ranklens's interval code must give scipy's interval."""
    x = np.random.default_rng(11).gamma(2.0, 0.2, size=60)
    B = 2000
    ref = ss.bootstrap((x,), np.mean, n_resamples=B, method=method, confidence_level=confidence,
                       rng=np.random.default_rng(123))
    idx = np.random.default_rng(123).integers(0, len(x), (B, len(x)))
    boot = x[idx].mean(axis=-1)
    np.testing.assert_allclose(boot, ref.bootstrap_distribution, rtol=1e-12)
    lo, hi = interval_from_bootstrap(x, boot, method, confidence)
    assert (lo, hi) == pytest.approx(tuple(ref.confidence_interval), rel=1e-10)


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_ci_agrees_with_scipy_within_monte_carlo_error(method):
    """Different random streams: each bound of a 95% interval from 10,000 resamples has a Monte-Carlo
    sd of about 0.03 standard errors (sqrt(.025 * .975 / 1e4) / phi(1.96)), so two independent runs
    differ by more than 0.2 standard errors with negligible probability."""
    x = np.random.default_rng(3).beta(0.5, 0.8, size=400)
    se = x.std(ddof=1) / math.sqrt(len(x))
    ref = ss.bootstrap((x,), np.mean, n_resamples=10000, method=method, rng=np.random.default_rng(9))
    got = stats.bootstrap_ci(x, method=method, n_resamples=10000, seed=4)
    assert abs(got.low - ref.confidence_interval.low) < 0.2 * se
    assert abs(got.high - ref.confidence_interval.high) < 0.2 * se
    assert got.estimate == pytest.approx(x.mean()) and got.method == method and got.n_resamples == 10000


def test_bootstrap_kernel_draws_uniform_rows():
    """The means of bootstrap resamples have mean x.mean() and sd x.std(ddof=0) / sqrt(n)."""
    from ranklens.stats import bootstrap_means

    x = np.random.default_rng(0).normal(size=500)
    boot = bootstrap_means(x, 20000, 7)[:, 0]
    sd = x.std() / math.sqrt(len(x))
    assert abs(boot.mean() - x.mean()) < 4 * sd / math.sqrt(20000)
    assert boot.std() == pytest.approx(sd, rel=0.03)  # sd of an sd estimate from 20k draws: ~0.5%
    # one row drawn per resample: every row about equally often
    idx_counts = np.zeros(500)
    ones = np.eye(500)
    boot_rows = bootstrap_means(ones, 2000, 1)  # column c's mean = share of draws that were row c
    idx_counts = boot_rows.sum(axis=0) * 500
    expected = 2000.0
    assert ss.chisquare(idx_counts, np.full(500, expected)).pvalue > 1e-4


# -- randomization ------------------------------------------------------------------------------------
def _exact_sign_flip_p(d: np.ndarray) -> float:
    obs = abs(d.sum())
    flips = np.array(list(itertools.product([1.0, -1.0], repeat=len(d))))
    return float((np.abs(flips @ d) >= obs - 1e-12).mean())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_randomization_matches_the_exact_sign_flip_distribution(seed):
    """With 12 queries all 4096 sign patterns can be enumerated by hand: the Monte-Carlo p-value is
    within 4 binomial standard deviations (plus the +1 of its convention) of the exact one."""
    a, b = _pairs(seed, 12)
    exact = _exact_sign_flip_p(a - b)
    B = 20000
    got = stats.randomization(a, b, n_resamples=B, seed=seed)
    assert abs(got.p_value - exact) <= 4 * math.sqrt(exact * (1 - exact) / B) + 2 / B
    assert got.statistic == pytest.approx(np.mean(a - b)) and got.n_resamples == B


def test_randomization_matches_ranx_fisher_within_monte_carlo_error():
    """ranx's Fisher test permutes each query's two scores (a sign flip of the difference) and reports
    count / n_permutations; its random stream (numba's np.random in prange) cannot be reproduced, so
    the two p-values are compared within Monte-Carlo error of two independent estimates."""
    from ranx.statistical_tests import fisher_randomization_test

    for seed, n in [(0, 40), (1, 100), (2, 300)]:
        a, b = _pairs(seed, n)
        B = 20000
        p_ranx, _ = fisher_randomization_test(a, b, n_permutations=B, max_p=0.05, random_seed=42)
        got = stats.randomization(a, b, n_resamples=B, seed=seed)
        p = max(p_ranx, 1 / B)
        assert abs(got.p_value - p_ranx) <= 5 * math.sqrt(2 * p * (1 - p) / B) + 2 / B, (p_ranx, got.p_value)


def test_randomization_p_value_is_never_zero_and_counts_the_observed():
    a = np.linspace(0.5, 1, 200)
    b = a - 0.3
    got = stats.randomization(a, b, n_resamples=999, seed=0)
    assert got.p_value == pytest.approx(1 / 1000)


# -- paired bootstrap ---------------------------------------------------------------------------------
def test_paired_bootstrap_agrees_with_a_numpy_bootstrap():
    """The same test written with numpy's Generator (centred differences, two-sided, (count+1)/(B+1)):
    independent streams, compared within Monte-Carlo error."""
    for seed, n in [(0, 30), (3, 200)]:
        a, b = _pairs(seed, n)
        d = a - b
        B = 20000
        rng = np.random.default_rng(99)
        c = d - d.mean()
        means = c[rng.integers(0, n, (B, n))].mean(axis=1)
        p_ref = ((np.abs(means) >= abs(d.mean())).sum() + 1) / (B + 1)
        got = stats.paired_bootstrap(a, b, n_resamples=B, seed=seed)
        assert abs(got.p_value - p_ref) <= 5 * math.sqrt(2 * p_ref * (1 - p_ref) / B) + 2 / B


# -- effect size, wins, corrections -------------------------------------------------------------------
def test_effect_size_and_win_tie_loss_by_hand():
    a = np.array([0.5, 0.7, 0.2, 0.6, 0.3])
    b = np.array([0.4, 0.5, 0.3, 0.6, 0.3])
    d = a - b
    assert stats.effect_size(a, b).value == pytest.approx(d.mean() / d.std(ddof=1))
    assert stats.win_tie_loss(a, b) == stats.WinTieLoss(2, 2, 1)
    assert stats.win_tie_loss(a, b, tol=0.15) == stats.WinTieLoss(1, 4, 0, 0.15)
    assert math.isnan(stats.effect_size([1.0, 2.0], [0.0, 1.0]).value)


def _holm(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def _bh(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out, running = [0.0] * m, 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, p[i] * m / (rank + 1))
        out[i] = min(1.0, running)
    return out


def test_corrections_by_hand():
    p = [0.01, 0.04, 0.03, 0.005, 0.2, 0.04]
    assert stats.correct(p, "bonferroni").adjusted == pytest.approx([min(1, 6 * x) for x in p])
    assert stats.correct(p, "holm").adjusted == pytest.approx(_holm(p))
    assert stats.correct(p, "bh").adjusted == pytest.approx(_bh(p))
    assert stats.correct(p, "none").adjusted == pytest.approx(p)
    # hand values: holm sorted 0.005*6=.03, .01*5=.05, .03*4=.12, .04*3=.12, .04*2->.12, .2*1->.2
    assert stats.correct(p, "holm").adjusted == pytest.approx([0.05, 0.12, 0.12, 0.03, 0.2, 0.12])
    r = stats.correct(p, "holm", alpha=0.05)
    assert r.reject == (True, False, False, True, False, False)
    rnd = np.random.default_rng(0).uniform(size=40) ** 3
    assert stats.correct(rnd, "holm").adjusted == pytest.approx(_holm(list(rnd)))
    assert stats.correct(rnd, "bh").adjusted == pytest.approx(_bh(list(rnd)))
    # NaN stays NaN and does not count
    c = stats.correct([0.01, float("nan"), 0.02], "bonferroni")
    assert c.adjusted[0] == pytest.approx(0.02) and math.isnan(c.adjusted[1]) and c.reject[1] is False


# -- validation ---------------------------------------------------------------------------------------
def test_errors_name_the_argument():
    with pytest.raises(InvalidParameterError, match="`b` has 1 NaN"):
        stats.paired_t([1.0, 2.0, 3.0], [1.0, float("nan"), 2.0])
    with pytest.raises(InvalidParameterError, match="`a` has 1 NaN"):
        stats.randomization([float("nan"), 2.0], [1.0, 2.0])
    with pytest.raises(InvalidParameterError, match="aligned"):
        stats.wilcoxon([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(InvalidParameterError, match="`method`"):
        stats.bootstrap_ci([1.0, 2.0], method="basic")
    with pytest.raises(InvalidParameterError, match="`seed`"):
        stats.randomization([1.0, 2.0], [0.0, 1.0], seed=-1)
    with pytest.raises(InvalidParameterError, match="`confidence`"):
        stats.t_interval([1.0, 2.0], confidence=95)
    with pytest.raises(InvalidParameterError, match="`method`"):
        stats.correct([0.1], "fdr")


def test_results_are_frozen_dataclasses():
    r = stats.paired_t([1.0, 2.0, 3.0], [0.5, 2.5, 2.0])
    with pytest.raises(AttributeError):
        r.p_value = 0.0  # type: ignore[misc]


# -- reproducibility ----------------------------------------------------------------------------------
def test_seed_reproducible_and_thread_independent():
    a, b = _pairs(8, 3000)
    r1 = stats.randomization(a, b, n_resamples=3000, seed=5)
    assert stats.randomization(a, b, n_resamples=3000, seed=5) == r1
    code = (
        "import json, sys, numpy as np\n"
        "from ranklens._base.threads import set_threads\n"
        "from ranklens import stats\n"
        "set_threads(int(sys.argv[1]))\n"
        "rng = np.random.default_rng(8); a = rng.uniform(0, 1, 3000)\n"
        "b = np.clip(a + rng.normal(0.03, 0.15, 3000), 0, 1)\n"
        "r = stats.randomization(a, b, n_resamples=3000, seed=5)\n"
        "c = stats.bootstrap_ci(a - b, 'bca', n_resamples=3000, seed=5)\n"
        "q = stats.paired_bootstrap(a, b, n_resamples=3000, seed=5)\n"
        "print(json.dumps([r.p_value, c.low, c.high, q.p_value]))\n"
    )
    outs = [
        json.loads(subprocess.run([sys.executable, "-c", code, str(t)], capture_output=True, text=True, check=True,
                                  env=dict(os.environ, RANKLENS_KERNELS="jit")).stdout)
        for t in (1, 2)
    ]
    assert outs[0] == outs[1]
    c = stats.bootstrap_ci(a - b, "bca", n_resamples=3000, seed=5)
    q = stats.paired_bootstrap(a, b, n_resamples=3000, seed=5)
    assert outs[0] == [r1.p_value, c.low, c.high, q.p_value]
    assert stats.bootstrap_ci(a - b, "bca", n_resamples=3000, seed=6) != c


def test_bootstrap_ci_of_a_constant_sample_is_the_constant():
    for method in ("bca", "percentile"):
        iv = stats.bootstrap_ci([0.5, 0.5, 0.5], method=method, n_resamples=100)
        assert (iv.low, iv.estimate, iv.high) == (0.5, 0.5, 0.5)


@pytest.mark.parametrize("n", [3, 13, 14, 60])
def test_wilcoxon_all_zero_differences_like_scipy(n):
    import warnings

    a = np.linspace(0, 1, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = ss.wilcoxon(a, a)
    got = stats.wilcoxon(a, a)
    assert got.statistic == ref.statistic
    assert (math.isnan(got.p_value) and math.isnan(ref.pvalue)) or got.p_value == ref.pvalue
