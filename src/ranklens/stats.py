"""Statistics on aligned per-query scores: paired tests, confidence intervals, effect size, corrections.

Every function takes plain arrays of per-query values (``a[i]`` and ``b[i]`` are the same query for two
systems), checks them (finite float64, same length) and returns a small frozen dataclass.

Resampling (sign-flip randomization, bootstrap) runs in compiled kernels with counter-based random
numbers: resample ``r`` is a pure function of ``(seed, r)``, so a ``seed`` gives the same numbers for
any thread count, and no ``n_resamples x n`` matrix is ever built.

Which scipy call each function matches:

* :func:`paired_t` — ``scipy.stats.ttest_rel(a, b)`` (statistic, two-sided p-value, and its interval).
* :func:`wilcoxon` — ``scipy.stats.wilcoxon(a, b)`` with its defaults (``zero_method="wilcox"``,
  ``correction=False``, ``method="auto"``): exact null distribution when ``n <= 50`` and there are no
  ties or zero differences; with ties or zeros, exact enumeration of the ``2**n`` sign flips when
  ``n <= 13`` (scipy's permutation test is exhaustive there); otherwise the normal approximation with
  the tie correction. The statistic is ``min(R+, R-)``.
* :func:`t_interval` — ``scipy.stats.t.interval(confidence, n - 1, loc=mean, scale=sem)``.
* :func:`bootstrap_ci` — the percentile and BCa formulas of ``scipy.stats.bootstrap`` (quantiles with
  linear interpolation; BCa's bias from the fraction of resamples below the estimate, ties counted
  half, and acceleration from the jackknife) applied to ranklens's own resamples.

p-values of the resampling tests are ``(count + 1) / (n_resamples + 1)`` where ``count`` is the
number of resamples whose statistic is at least as extreme as the observed one (Phipson & Smyth),
never 0. ranx's Fisher test reports ``count / n_resamples`` instead.

Many systems on the same queries (a ``(queries, systems)`` block, what ``compare(..., pairs="all")`` tests):

* :func:`rm_anova` — ``statsmodels.stats.anova.AnovaRM`` with the queries as subjects;
  :func:`friedman` — ``scipy.stats.friedmanchisquare``.
* :func:`tukey_hsd` — Tukey's HSD, with the queries as blocks (the error of the repeated-measures ANOVA,
  the IR practice) or one-way (``blocked=False``: ``scipy.stats.tukey_hsd``, statsmodels'
  ``pairwise_tukeyhsd``); :func:`randomized_tukey_hsd` — Carterette's randomised Tukey HSD.
* :func:`compact_letters` (Piepho's insert-absorb); :func:`discriminative_power` (the share of pairs significant
  in a p-value matrix); :func:`estimate_discriminative_power`: Sakai's discriminative power of a measure over a
  set of runs, by the paired bootstrap (Sakai 2006) or the randomised Tukey HSD (Sakai 2012/2014), with the
  estimated difference required for a pair to be significant.

>>> import numpy as np
>>> from ranklens import stats
>>> a = np.array([0.5, 0.7, 0.2, 0.9, 0.4, 0.6])
>>> b = np.array([0.4, 0.5, 0.3, 0.6, 0.1, 0.5])
>>> round(stats.paired_t(a, b).p_value, 4)  # scipy.stats.ttest_rel(a, b).pvalue
0.0599
"""

from ._core.discpower import POWER_METHODS, DiscriminativePower, estimate_discriminative_power
from ._core.intervals import (
    Interval,
    bootstrap_ci,
    bootstrap_means,
    interval_from_bootstrap,
    t_interval,
)
from ._core.multi import (
    Omnibus,
    TukeyHSD,
    compact_letters,
    discriminative_power,
    friedman,
    randomized_tukey_hsd,
    rm_anova,
    tukey_hsd,
)
from ._core.stats import (
    CORRECTIONS,
    MAX_RESAMPLES,
    TESTS,
    Correction,
    EffectSize,
    PairedTest,
    WinTieLoss,
    bootstrap_p,
    check_confidence,
    check_resamples,
    check_seed,
    correct,
    effect_size,
    paired_bootstrap,
    paired_t,
    randomization,
    scipy_special,
    sign_flip_p,
    wilcoxon,
    win_tie_loss,
)

__all__ = [
    "CORRECTIONS",
    "Correction",
    "DiscriminativePower",
    "EffectSize",
    "Interval",
    "MAX_RESAMPLES",
    "Omnibus",
    "POWER_METHODS",
    "PairedTest",
    "TESTS",
    "TukeyHSD",
    "WinTieLoss",
    "bootstrap_ci",
    "bootstrap_means",
    "bootstrap_p",
    "check_confidence",
    "check_resamples",
    "check_seed",
    "compact_letters",
    "correct",
    "discriminative_power",
    "effect_size",
    "estimate_discriminative_power",
    "friedman",
    "interval_from_bootstrap",
    "paired_bootstrap",
    "paired_t",
    "randomization",
    "randomized_tukey_hsd",
    "rm_anova",
    "scipy_special",
    "sign_flip_p",
    "t_interval",
    "tukey_hsd",
    "wilcoxon",
    "win_tie_loss",
]
