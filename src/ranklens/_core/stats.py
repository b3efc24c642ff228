"""Statistics on aligned per-query scores: paired tests, confidence intervals, effect size, corrections.

The public face of this module is :mod:`ranklens.stats`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidParameterError, MissingDependencyError

__all__ = [
    "CORRECTIONS",
    "Correction",
    "EffectSize",
    "MAX_RESAMPLES",
    "PairedTest",
    "STREAM_BOOT",
    "TESTS",
    "WinTieLoss",
    "as_vector",
    "bootstrap_p",
    "check_confidence",
    "check_resamples",
    "check_seed",
    "correct",
    "effect_size",
    "paired_bootstrap",
    "paired_t",
    "randomization",
    "resample_means",
    "scipy_special",
    "sign_flip_p",
    "wilcoxon",
    "win_tie_loss",
]

TESTS = ("randomization", "t", "wilcoxon", "bootstrap")
CORRECTIONS = ("holm", "bonferroni", "bh", "none")

# stream ids: one random stream per purpose, so a seed drives independent sequences
_STREAM_SIGNS = 1
STREAM_BOOT = 2
_STREAM_PAIRED_BOOT = 3


@dataclass(frozen=True)
class PairedTest:
    """Outcome of a paired test of ``a`` against ``b`` (differences ``a - b``).

    Attributes
    ----------
    method : str
        ``"t"``, ``"wilcoxon"``, ``"randomization"`` or ``"bootstrap"``.
    statistic : float
        t for the t-test, ``min(R+, R-)`` for Wilcoxon, the mean difference for the resampling tests.
    p_value : float
        Two-sided p-value.
    n : int
        Number of pairs.
    mean_difference : float
        ``mean(a - b)``.
    detail : str
        How the p-value was obtained (e.g. ``"exact"``, ``"normal approximation"``, ``"10000 sign flips"``).
    n_resamples, seed : int or None
        For the resampling tests.
    """

    method: str
    statistic: float
    p_value: float
    n: int
    mean_difference: float
    detail: str = ""
    n_resamples: int | None = None
    seed: int | None = None

    @property
    def pvalue(self) -> float:
        """``p_value`` under scipy's name (``scipy.stats.ttest_rel(a, b).pvalue``)."""
        return self.p_value


@dataclass(frozen=True)
class EffectSize:
    """Cohen's d for paired data (``d_z``): ``mean(a - b) / sd(a - b)`` with ``ddof=1``."""

    value: float
    n: int
    method: str = "cohen_dz"


@dataclass(frozen=True)
class WinTieLoss:
    """Number of queries where ``a`` is above ``b`` (wins), equal within ``tol`` (ties), below (losses)."""

    wins: int
    ties: int
    losses: int
    tol: float = 0.0

    @property
    def n(self) -> int:
        return self.wins + self.ties + self.losses


@dataclass(frozen=True)
class Correction:
    """p-values adjusted for multiple testing, and which hypotheses are rejected at ``alpha``."""

    method: str
    p_values: tuple[float, ...]
    adjusted: tuple[float, ...]
    reject: tuple[bool, ...]
    alpha: float


# -- validation ---------------------------------------------------------------------------------------
def as_vector(x: Any, name: str, min_n: int = 1) -> np.ndarray:
    """``x`` as a contiguous 1-D float64 array of at least ``min_n`` finite values, or an error naming it."""
    try:
        v = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"`{name}` must be a 1-D array of numbers.") from None
    if v.ndim != 1:
        raise InvalidParameterError(f"`{name}` must be 1-D; got shape {v.shape}.")
    if np.isnan(v).any():
        raise InvalidParameterError(
            f"`{name}` has {int(np.isnan(v).sum())} NaN values; drop those queries from both arrays first."
        )
    if not np.isfinite(v).all():
        raise InvalidParameterError(f"`{name}` has infinite values.")
    if v.shape[0] < min_n:
        raise InvalidParameterError(f"`{name}` needs at least {min_n} values; got {v.shape[0]}.")
    return np.ascontiguousarray(v)


def _pair(a: Any, b: Any, min_n: int = 1) -> tuple[np.ndarray, np.ndarray]:
    x = as_vector(a, "a", min_n)
    y = as_vector(b, "b", min_n)
    if x.shape[0] != y.shape[0]:
        raise InvalidParameterError(
            f"`a` and `b` must be aligned per query; got lengths {x.shape[0]} and {y.shape[0]}."
        )
    return x, y


def check_confidence(c: Any) -> float:
    """``c`` as a float in (0, 1), or :class:`InvalidParameterError` naming `confidence`."""
    if isinstance(c, bool) or not isinstance(c, (int, float)) or not 0 < float(c) < 1:
        raise InvalidParameterError(f"`confidence` must be a number in (0, 1); got {c!r}.")
    return float(c)


#: The most resamples a test or interval draws: each is kept as one double per run and measure
#: (10**7 resamples: 80 MB each), so more would exhaust the memory instead of sharpening a p-value.
MAX_RESAMPLES = 10**7


def check_resamples(n: Any) -> int:
    """``n`` as an integer from 1 to :data:`MAX_RESAMPLES`, or :class:`InvalidParameterError` naming
    `n_resamples`."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_RESAMPLES:
        raise InvalidParameterError(f"`n_resamples` must be an integer from 1 to {MAX_RESAMPLES}; got {n!r}.")
    return int(n)


def check_seed(seed: Any) -> int:
    """``seed`` as a non-negative integer, or :class:`InvalidParameterError` naming `seed`."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidParameterError(f"`seed` must be a non-negative integer; got {seed!r}.")
    return int(seed)


def _key(seed: int, *stream: int) -> np.uint64:
    """The kernel's counter offset for ``seed`` and a stream (SeedSequence-mixed, so nearby seeds differ)."""
    state = np.random.SeedSequence([seed, *stream]).generate_state(2, np.uint32)
    return np.uint64((int(state[0]) << 32) | int(state[1]))


def scipy_special() -> Any:
    """``scipy.special``, or :class:`MissingDependencyError` naming the ``stats`` extra."""
    try:
        import scipy.special as sp
    except ImportError:
        raise MissingDependencyError(
            "p-values and intervals need scipy (t and normal distributions); install it with: "
            "pip install 'ranklens[stats]'"
        ) from None
    return sp


# -- tests --------------------------------------------------------------------------------------------
def paired_t(a: Any, b: Any) -> PairedTest:
    """Student's paired t-test of ``a`` against ``b`` (two-sided), as ``scipy.stats.ttest_rel(a, b)``.

    Examples
    --------
    >>> from ranklens.stats import paired_t
    >>> r = paired_t([0.5, 0.7, 0.2, 0.9], [0.4, 0.5, 0.3, 0.6])
    >>> round(r.statistic, 4), round(r.p_value, 4)
    (1.4639, 0.2394)
    """
    x, y = _pair(a, b, 2)
    d = x - y
    n = d.shape[0]
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        t = math.nan if mean == 0.0 else math.copysign(math.inf, mean)
        p = math.nan if mean == 0.0 else 0.0
    else:
        t = mean / (sd / math.sqrt(n))
        p = float(2.0 * scipy_special().stdtr(n - 1, -abs(t)))
    return PairedTest("t", float(t), p, n, mean, "Student's t, n - 1 degrees of freedom")


def _wilcoxon_null(n: int) -> np.ndarray:
    """Probability of each value 0..n(n+1)/2 of R+ under the null (no ties, no zeros)."""
    counts = np.zeros(n * (n + 1) // 2 + 1, dtype=np.float64)
    counts[0] = 1.0
    top = 0
    for k in range(1, n + 1):
        counts[k : top + k + 1] += counts[: top + 1].copy()
        top += k
    return counts / 2.0**n


def _ranks(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks (1-based) of ``v`` and the sizes of its tie groups."""
    order = np.argsort(v, kind="mergesort")
    s = v[order]
    change = np.flatnonzero(np.r_[True, s[1:] != s[:-1], True])
    sizes = np.diff(change)
    avg = (change[:-1] + change[1:] + 1) / 2.0  # mean of 1-based positions start+1..end
    ranks = np.empty(v.shape[0], dtype=np.float64)
    ranks[order] = np.repeat(avg, sizes)
    return ranks, sizes


def wilcoxon(a: Any, b: Any) -> PairedTest:
    """Wilcoxon signed-rank test of ``a`` against ``b`` (two-sided), as ``scipy.stats.wilcoxon(a, b)``.

    Zero differences are dropped (``zero_method="wilcox"``); the p-value is exact for ``n <= 50``
    without ties or zeros, exhaustive over sign flips for ``n <= 13`` otherwise, else from the normal
    approximation with tie correction and no continuity correction (scipy's defaults).

    Examples
    --------
    >>> from ranklens.stats import wilcoxon
    >>> r = wilcoxon([0.5, 0.7, 0.2, 0.9, 0.4, 0.6], [0.4, 0.5, 0.3, 0.6, 0.1, 0.55])
    >>> r.statistic, r.p_value, r.detail  # two differences tie at 0.3
    (2.5, 0.125, 'exact (all sign flips)')
    >>> wilcoxon([0.5, 0.7, 0.2, 0.9, 0.4], [0.4, 0.45, 0.33, 0.6, 0.0]).detail
    'exact'
    """
    x, y = _pair(a, b, 1)
    d = x - y
    n_total = d.shape[0]
    nz = d[d != 0]
    count = nz.shape[0]
    mean = float(d.mean())
    if count == 0:  # scipy: its exhaustive permutation test gives 1 for n <= 13, the normal approximation NaN
        p_zero = 1.0 if n_total <= 13 else math.nan
        return PairedTest("wilcoxon", 0.0, p_zero, n_total, mean, "all differences are zero")
    r, sizes = _ranks(np.abs(nz))
    r_plus = float(r[nz > 0].sum())
    r_minus = float(r[nz < 0].sum())
    stat = min(r_plus, r_minus)
    has_ties = bool((sizes > 1).any())
    n_zero = n_total - count
    if n_total <= 50 and not has_ties and n_zero == 0:
        pmf = _wilcoxon_null(count)
        k = int(round(r_plus))
        sf = float(pmf[k:].sum())
        cdf = float(pmf[: k + 1].sum())
        p = min(1.0, 2.0 * min(sf, cdf))
        detail = "exact"
    elif n_total <= 13:
        # every one of the 2**n sign flips of the n differences (zeros stay zero), as scipy's
        # exhaustive permutation test; the ranks of |d| do not change
        signs = ((np.arange(2**n_total)[:, None] >> np.arange(n_total)[None, :]) & 1).astype(bool)
        full_r = np.zeros(n_total)
        full_r[d != 0] = r
        pos = np.where(d != 0, np.where(signs, d < 0, d > 0), False)  # flipped sign > 0
        null = (pos * full_r).sum(axis=1)
        gamma = abs(np.finfo(np.float64).eps * r_plus) * 1e2  # scipy: relative tolerance on ties
        less = float((null <= r_plus + gamma).mean())
        greater = float((null >= r_plus - gamma).mean())
        p = min(1.0, 2.0 * min(less, greater))
        detail = "exact (all sign flips)"
    else:
        mn = count * (count + 1.0) * 0.25
        se = count * (count + 1.0) * (2.0 * count + 1.0)
        se = math.sqrt((se - float((sizes**3 - sizes).sum()) / 2.0) / 24.0)
        z = (r_plus - mn) / se
        p = float(2.0 * scipy_special().ndtr(-abs(z)))
        detail = "normal approximation"
    dropped = f"; {n_zero} zero differences dropped" if n_zero else ""
    return PairedTest("wilcoxon", stat, p, n_total, mean, detail + dropped)


def sign_flip_p(d: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """p-values of the sign-flip test for each column of ``d`` (shape ``(n, m)``, zeros = not in the pair)."""
    from .._kernels.api import sign_flip_exceed

    d = np.ascontiguousarray(d, dtype=np.float64)
    observed = d.sum(axis=0)
    # sums of the same terms in another order may differ in the last bits: count those as ties
    tol = 1e-9 * np.abs(d).sum(axis=0)
    exceed = sign_flip_exceed(d, observed, tol, _key(seed, _STREAM_SIGNS), n_resamples)
    counts = exceed.sum(axis=0, dtype=np.int64)
    return (counts + 1.0) / (n_resamples + 1.0)


def randomization(a: Any, b: Any, n_resamples: int = 10000, seed: int = 0) -> PairedTest:
    """Two-sided paired randomization (sign-flip, Fisher) test of the mean difference.

    Each resample flips the sign of each query's difference ``a - b`` with probability 1/2 (swaps the
    two systems' scores of that query); ``p = (count(|mean*| >= |mean|) + 1) / (n_resamples + 1)``.

    Examples
    --------
    >>> from ranklens.stats import randomization
    >>> r = randomization([0.5, 0.7, 0.2, 0.9, 0.4, 0.6], [0.4, 0.5, 0.3, 0.6, 0.1, 0.55], seed=1)
    >>> r.n_resamples, 0.05 < r.p_value < 0.2
    (10000, True)
    """
    x, y = _pair(a, b, 1)
    n_resamples, seed = check_resamples(n_resamples), check_seed(seed)
    d = x - y
    p = float(sign_flip_p(d[:, None], n_resamples, seed)[0])
    mean = float(d.mean())
    return PairedTest("randomization", mean, p, d.shape[0], mean, f"{n_resamples} sign flips", n_resamples, seed)


def resample_means(x: np.ndarray, n_resamples: int, seed: int, stream: int) -> np.ndarray:
    """Bootstrap means of each column of ``x`` on the random ``stream`` of ``seed`` (the kernel's)."""
    from .._kernels.api import bootstrap_means

    x2 = np.ascontiguousarray(x.reshape(x.shape[0], -1), dtype=np.float64)
    return bootstrap_means(x2, _key(seed, stream), n_resamples)


def paired_bootstrap(a: Any, b: Any, n_resamples: int = 10000, seed: int = 0) -> PairedTest:
    """Two-sided paired bootstrap test of the mean difference.

    The differences are centred (their mean subtracted, so the null holds) and resampled with
    replacement; ``p = (count(|mean*| >= |mean|) + 1) / (n_resamples + 1)``.

    Examples
    --------
    >>> from ranklens.stats import paired_bootstrap
    >>> r = paired_bootstrap([0.5, 0.7, 0.2, 0.9, 0.4, 0.6], [0.4, 0.5, 0.3, 0.6, 0.1, 0.55], seed=1)
    >>> r.method, r.p_value < 0.1
    ('bootstrap', True)
    """
    x, y = _pair(a, b, 1)
    n_resamples, seed = check_resamples(n_resamples), check_seed(seed)
    d = x - y
    mean = float(d.mean())
    p = bootstrap_p(d, n_resamples, seed)
    return PairedTest("bootstrap", mean, p, d.shape[0], mean, f"{n_resamples} bootstrap resamples", n_resamples, seed)


def bootstrap_p(d: np.ndarray, n_resamples: int, seed: int) -> float:
    """Two-sided paired bootstrap p-value of the mean of the differences ``d`` (the resampled mean, centred)."""
    mean = float(d.mean())
    boot = resample_means(d - mean, n_resamples, seed, _STREAM_PAIRED_BOOT)[:, 0]
    tol = 1e-9 * max(abs(mean), float(np.abs(d).max()) if d.size else 0.0, 1e-300)
    count = int((np.abs(boot) >= abs(mean) - tol).sum())
    return (count + 1.0) / (n_resamples + 1.0)


# -- effect size, wins --------------------------------------------------------------------------------
def effect_size(a: Any, b: Any) -> EffectSize:
    """Cohen's d for paired samples, ``d_z = mean(a - b) / sd(a - b)`` (``ddof=1``).

    NaN when every difference is equal (zero spread).

    Examples
    --------
    >>> from ranklens.stats import effect_size
    >>> round(effect_size([0.5, 0.7, 0.2, 0.9], [0.4, 0.5, 0.3, 0.6]).value, 4)
    0.7319
    """
    x, y = _pair(a, b, 2)
    d = x - y
    sd = float(d.std(ddof=1))
    return EffectSize(float(d.mean()) / sd if sd > 0 else math.nan, d.shape[0])


def win_tie_loss(a: Any, b: Any, tol: float = 0.0) -> WinTieLoss:
    """Count queries where ``a > b + tol`` (wins), ``|a - b| <= tol`` (ties), ``a < b - tol`` (losses).

    Examples
    --------
    >>> from ranklens.stats import win_tie_loss
    >>> win_tie_loss([0.5, 0.7, 0.2, 0.6], [0.4, 0.5, 0.3, 0.6])
    WinTieLoss(wins=2, ties=1, losses=1, tol=0.0)
    """
    x, y = _pair(a, b, 0)
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not tol >= 0:
        raise InvalidParameterError(f"`tol` must be a number >= 0; got {tol!r}.")
    d = x - y
    wins = int((d > tol).sum())
    losses = int((d < -tol).sum())
    return WinTieLoss(wins, d.shape[0] - wins - losses, losses, float(tol))


# -- multiple testing ---------------------------------------------------------------------------------
def correct(p_values: Any, method: str = "holm", alpha: float = 0.05) -> Correction:
    """Adjust p-values for multiple testing.

    ``"bonferroni"``: ``min(1, m p)``. ``"holm"``: step-down, ``max_{j<=i} min(1, (m - j + 1) p_(j))``.
    ``"bh"``: Benjamini-Hochberg step-up, ``min_{j>=i} min(1, m p_(j) / j)`` (controls the false
    discovery rate, not the family-wise error). ``"none"``: unchanged. NaN p-values stay NaN and do
    not count in ``m``. Adjusted values are those of ``statsmodels.stats.multitest.multipletests``.

    Examples
    --------
    >>> from ranklens.stats import correct
    >>> correct([0.01, 0.04, 0.03], "holm").adjusted
    (0.03, 0.06, 0.06)
    """
    if method not in CORRECTIONS:
        raise InvalidParameterError(f"`method` must be one of {', '.join(CORRECTIONS)}; got {method!r}.")
    p = np.asarray(p_values, dtype=np.float64).reshape(-1)
    if ((p < 0) | (p > 1)).any():
        raise InvalidParameterError("`p_values` must lie in [0, 1].")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < float(alpha) < 1:
        raise InvalidParameterError(f"`alpha` must be a number in (0, 1); got {alpha!r}.")
    alpha = float(alpha)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    q = p[ok]
    m = q.shape[0]
    if m:
        order = np.argsort(q, kind="mergesort")
        s = q[order]
        if method == "bonferroni":
            adj_s = np.minimum(1.0, s * m)
        elif method == "holm":
            adj_s = np.minimum(1.0, np.maximum.accumulate(s * (m - np.arange(m))))
        elif method == "bh":
            adj_s = np.minimum(1.0, np.minimum.accumulate((s * m / np.arange(1, m + 1))[::-1])[::-1])
        else:
            adj_s = s
        adj = np.empty(m)
        adj[order] = adj_s
        out[ok] = adj
    reject = tuple(bool(v <= alpha) if not math.isnan(v) else False for v in out)
    return Correction(method, tuple(float(v) for v in p), tuple(float(v) for v in out), reject, alpha)
