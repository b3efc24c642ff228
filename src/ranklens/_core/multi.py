"""Statistics of many systems on the same queries: omnibus tests, Tukey HSD (parametric and randomised),
compact letter display, discriminative power.

Every function takes a complete block ``X`` of shape ``(n_queries, k_systems)``: ``X[i, j]`` is system ``j``'s
value on query ``i``, finite, every system on every query.

* :func:`rm_anova` — the repeated-measures (two-way, without replication) ANOVA with queries as blocks:
  ``statsmodels.stats.anova.AnovaRM(..., subject=query, within=[system])``.
* :func:`friedman` — ``scipy.stats.friedmanchisquare`` (ranks within each query, ties averaged and corrected).
* :func:`tukey_hsd` — Tukey's honestly significant difference: ``|mean_a - mean_b| / sqrt(MSE / n)`` against
  the studentized range with ``k`` means. ``blocked=True`` (the IR practice, Sakai 2014) takes the MSE and
  its ``(n - 1)(k - 1)`` degrees of freedom from :func:`rm_anova`; ``blocked=False`` is the one-way test of
  ``scipy.stats.tukey_hsd`` and ``statsmodels``' ``pairwise_tukeyhsd`` (MSE within systems, ``k (n - 1)``
  degrees of freedom), which ignores that the systems share the queries.
* :func:`randomized_tukey_hsd` — the randomised Tukey HSD of Carterette (2012) and Sakai (2012): each resample
  permutes the values of every query among the systems; a pair's p-value is the share of resamples whose
  range of system means (max minus min) reaches the pair's observed difference. One distribution for every
  pair, so the family-wise error is controlled without a further correction. p-values are
  ``(count + 1) / (n_resamples + 1)`` (Phipson & Smyth), as every resampling test of ranklens.
* :func:`compact_letters` — the insert-absorb algorithm of Piepho (2004): systems sharing a letter are not
  significantly different.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidParameterError, MissingDependencyError
from .discpower import tukey_ranges
from .stats import check_confidence, check_resamples, check_seed

__all__ = [
    "Omnibus",
    "TukeyHSD",
    "compact_letters",
    "discriminative_power",
    "friedman",
    "randomized_tukey_hsd",
    "rm_anova",
    "tukey_hsd",
]


@dataclass(frozen=True)
class Omnibus:
    """An omnibus test that all systems have the same mean (``rm_anova``) or the same ranks (``friedman``)."""

    test: str
    statistic: float
    df: tuple[float, ...]
    p_value: float
    n: int
    k: int

    @property
    def pvalue(self) -> float:
        """Alias of ``p_value`` (scipy's spelling)."""
        return self.p_value


@dataclass(frozen=True)
class TukeyHSD:
    """Pairwise Tukey HSD: ``p_value[a, b]`` for every pair, the studentized statistic, and the simultaneous
    interval of ``mean_a - mean_b`` (``ci_low[a, b]``, ``ci_high[a, b]``) at ``confidence``."""

    means: np.ndarray
    statistic: np.ndarray
    p_value: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    mse: float
    df: float
    confidence: float
    blocked: bool


def _block(X: Any, min_n: int = 2) -> np.ndarray:
    """``X`` checked: a finite 2-d float array with at least two systems and ``min_n`` queries."""
    x = np.asarray(X, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] < 2 or x.shape[0] < min_n:
        raise InvalidParameterError(f"expected values of shape (queries >= {min_n}, systems >= 2); got {x.shape}.")
    if not np.isfinite(x).all():
        raise InvalidParameterError("the values of every system on every query must be finite numbers.")
    return x


def _scipy_stats() -> Any:
    """``scipy.stats``, or :class:`MissingDependencyError` naming the ``stats`` extra."""
    try:
        import scipy.stats as st
    except ImportError:
        raise MissingDependencyError("the tests of many systems need scipy (F, chi-squared and studentized range "
                                     "distributions); install it with: pip install 'ranklens[stats]'") from None
    return st


def _anova_terms(x: np.ndarray) -> tuple[float, float, float, float]:
    """(SS of the systems, SS of the error, df of the systems, df of the error) of the two-way layout."""
    n, k = x.shape
    grand = x.mean()
    ss_sys = n * float(((x.mean(axis=0) - grand) ** 2).sum())
    ss_q = k * float(((x.mean(axis=1) - grand) ** 2).sum())
    ss_tot = float(((x - grand) ** 2).sum())
    return ss_sys, max(ss_tot - ss_sys - ss_q, 0.0), k - 1.0, (n - 1.0) * (k - 1.0)


def rm_anova(X: Any) -> Omnibus:
    """Repeated-measures ANOVA of the systems, queries as blocks: ``F = MS_systems / MS_error``.

    Examples
    --------
    >>> r = rm_anova([[0.2, 0.4, 0.5], [0.1, 0.4, 0.4], [0.3, 0.6, 0.8]])
    >>> round(r.statistic, 4), r.df
    (24.25, (2.0, 4.0))
    """
    x = _block(X)
    ss_sys, ss_err, df1, df2 = _anova_terms(x)
    if ss_err == 0:
        f_stat = math.inf if ss_sys > 0 else math.nan
        p = 0.0 if ss_sys > 0 else math.nan
    else:
        f_stat = (ss_sys / df1) / (ss_err / df2)
        p = float(_scipy_stats().f.sf(f_stat, df1, df2))
    return Omnibus("rm_anova", f_stat, (df1, df2), p, x.shape[0], x.shape[1])


def friedman(X: Any) -> Omnibus:
    """Friedman's test: ranks within each query (ties averaged), chi-squared with ``k - 1`` degrees of freedom,
    corrected for ties.

    Examples
    --------
    >>> r = friedman([[0.2, 0.4, 0.5], [0.1, 0.4, 0.4], [0.3, 0.6, 0.8]])
    >>> round(r.statistic, 4), round(r.p_value, 4)
    (5.6364, 0.0597)
    """
    x = _block(X)
    n, k = x.shape
    st = _scipy_stats()
    ranks = st.rankdata(x, axis=1)
    r = ranks.sum(axis=0)
    chi2 = 12.0 / (n * k * (k + 1)) * float((r**2).sum()) - 3.0 * n * (k + 1)
    # sum over tie groups of t^3 - t = sum over values of (t^2 - 1), t the size of the value's group
    t = (x[:, :, None] == x[:, None, :]).sum(axis=2)
    ties = float((t * t - 1).sum())
    c = 1.0 - ties / (n * k * (k * k - 1.0))
    if c <= 0:
        return Omnibus("friedman", math.nan, (k - 1.0,), math.nan, n, k)
    chi2 /= c
    return Omnibus("friedman", chi2, (k - 1.0,), float(st.chi2.sf(chi2, k - 1)), n, k)


def tukey_hsd(X: Any, *, blocked: bool = True, confidence: float = 0.95) -> TukeyHSD:
    """Tukey's HSD over every pair of systems (see the module's text for ``blocked``).

    Examples
    --------
    >>> r = tukey_hsd([[0.2, 0.4, 0.5], [0.1, 0.4, 0.4], [0.3, 0.6, 0.8]])
    >>> round(float(r.p_value[0, 2]), 4), r.df
    (0.0056, 4.0)
    """
    x = _block(X)
    confidence = check_confidence(confidence)
    n, k = x.shape
    means = x.mean(axis=0)
    if blocked:
        _, ss_err, _, df = _anova_terms(x)
    else:
        ss_err, df = float(((x - means) ** 2).sum()), k * (n - 1.0)
    mse = ss_err / df
    se = math.sqrt(mse / n)
    diff = means[:, None] - means[None, :]
    sr = _scipy_stats().studentized_range
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.abs(diff) / se
    p = np.ones((k, k))
    iu = np.triu_indices(k, 1)
    if se > 0:
        p[iu] = sr.sf(q[iu], k, df)
    else:
        p[iu] = np.where(diff[iu] == 0, math.nan, 0.0)
    p[(iu[1], iu[0])] = p[iu]
    half = float(sr.ppf(confidence, k, df)) * se
    return TukeyHSD(means, q, np.minimum(p, 1.0), diff - half, diff + half, mse, df, confidence, blocked)


def randomized_tukey_hsd(X: Any, n_resamples: int = 10000, seed: int = 0) -> np.ndarray:
    """p-values of the randomised Tukey HSD, a symmetric ``(k, k)`` matrix (1 on the diagonal).

    Examples
    --------
    >>> p = randomized_tukey_hsd([[0.2, 0.4, 0.5], [0.1, 0.4, 0.4], [0.3, 0.6, 0.8]], 9999)
    >>> round(float(p[0, 2]), 2)  # exactly 12 of the 6**3 permutations reach the range 0.4: p = 1/18
    0.06
    """
    x = _block(X, 1)
    n_resamples, seed = check_resamples(n_resamples), check_seed(seed)
    means = x.mean(axis=0)
    observed = np.abs(means[:, None] - means[None, :])
    tol = 1e-9 * (1.0 + np.abs(x).max())  # the same sum in another order may differ in the last bits
    ranges = tukey_ranges(x, n_resamples, seed)
    counts = n_resamples - np.searchsorted(ranges, observed - tol, side="left")
    p = (counts + 1.0) / (n_resamples + 1.0)
    np.fill_diagonal(p, 1.0)
    return p


def compact_letters(means: Any, significant: Any) -> list[str]:
    """Compact letter display (Piepho's insert-absorb): systems that share no letter differ significantly,
    systems that share one do not. Letters are assigned from the highest mean (``a``) down.

    Parameters
    ----------
    means : array of shape (k,)
        The systems' means (they order the letters only).
    significant : bool array of shape (k, k)
        ``significant[a, b]``: the pair (a, b) differs significantly (symmetric).

    Examples
    --------
    >>> sig = [[0, 0, 1], [0, 0, 0], [1, 0, 0]]  # only the first and the last differ
    >>> compact_letters([0.9, 0.5, 0.1], sig)
    ['a', 'ab', 'b']
    """
    m = np.asarray(means, dtype=np.float64)
    s = np.asarray(significant, dtype=bool)
    k = m.shape[0]
    if s.shape != (k, k) or (s != s.T).any():
        raise InvalidParameterError("`significant` must be a symmetric (k, k) matrix for k means.")
    columns: list[set[int]] = [set(range(k))]
    for a in range(k):
        for b in range(a + 1, k):
            if not s[a, b]:
                continue
            new: list[set[int]] = []
            for col in columns:
                if a in col and b in col:  # insert: split the column so that a and b share no letter
                    new += [col - {a}, col - {b}]
                else:
                    new.append(col)
            # absorb: drop a column contained in another (and duplicates)
            uniq = [c for i, c in enumerate(new) if c not in new[:i]]
            columns = [c for c in uniq if not any(c < o for o in uniq)]
    order = np.argsort(-m, kind="mergesort")
    rank = {int(j): i for i, j in enumerate(order)}
    columns.sort(key=lambda c: (min(rank[j] for j in c), sorted(rank[j] for j in c)))
    letters = [""] * k
    for i, col in enumerate(columns):
        for j in col:
            letters[j] += _letter(i)
    return letters


def _letter(i: int) -> str:
    """a..z, then A..Z, then a1, b1...: the ``i``-th letter of a display."""
    base = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return base[i % 52] + (str(i // 52) if i >= 52 else "")


def discriminative_power(p_values: Any, alpha: float = 0.05) -> float:
    """Sakai's discriminative power: the share of the ``k (k - 1) / 2`` pairs of systems whose (family-wise
    adjusted) p-value is at most ``alpha``.

    >>> discriminative_power([[1, 0.01, 0.2], [0.01, 1, 0.04], [0.2, 0.04, 1]])
    0.6666666666666666
    """
    p = np.asarray(p_values, dtype=np.float64)
    iu = np.triu_indices(p.shape[0], 1)
    return float((p[iu] <= alpha).mean()) if iu[0].size else math.nan
