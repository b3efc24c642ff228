"""Sakai's discriminative power of a measure over a set of runs, and the difference it needs to call a pair
significant.

Input: a complete block ``X`` of shape ``(n_queries, k_runs)`` (``X[i, j]`` run ``j``'s value on query ``i``), as
:mod:`ranklens._core.multi` takes it. Two methods, the two of Sakai's papers (and of Ferro & Silvello's MATTERS
``discriminativePower.m``, written from Sakai's own C/shell code):

* ``"bootstrap"`` -- Sakai (2006), "Evaluating evaluation metrics based on the bootstrap", SIGIR, Figures 1, 2
  and 5. Per pair, ``z = X[:, a] - X[:, b]``, ``t(z) = |mean(z)| / (sd(z) / sqrt(n))`` (sd with ``n - 1``) and
  the centred differences ``w = z - mean(z)`` (the null hypothesis). ``B`` bootstrap replicates (one set of
  resampled queries shared by every pair) give ``t(w*b)``; the achieved significance level is
  ``ASL = #{b: t(w*b) >= t(z)} / B`` and the pair is significant when ``ASL < alpha``. The **estimated difference
  required** is, per pair, ``|mean(w*b)|`` of the replicate whose ``t(w*b)`` is the ``ceil(alpha B)``-th largest
  (the first such replicate when several are equal), and over the runs the largest of these (Sakai's Figure 5).
* ``"randomized_tukey"`` -- Sakai (2012) "Evaluation with informational and navigational intents", WWW, and
  Sakai (2014) "Metrics, statistics, tests", after Carterette (2012): ``B`` permutations of every query's values
  among the runs; ``hsd_b`` = the largest minus the smallest run mean of permutation ``b``; a pair's
  ``ASL = #{b: hsd_b >= |mean_a - mean_b|} / B``, significant when ``ASL < alpha``. The difference required is
  the ``ceil(alpha B)``-th largest ``hsd_b``: a pair is significant exactly when its difference of means exceeds
  it (one threshold for every pair: the test is a range test). MATTERS reports, instead, the largest observed
  difference among the significant pairs; ranklens gives the threshold, which is what the name says.

Both report ``ASL`` as Sakai does (``count / B``, so 0 can occur), not ranklens' ``(count + 1) / (B + 1)`` of the
resampling tests of :func:`ranklens.compare`; the discriminative power is the share of the ``k (k - 1) / 2``
pairs with ``ASL < alpha``. Defaults ``B`` = 1000 (bootstrap) and 5000 (randomised Tukey), Sakai's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidParameterError
from .stats import check_resamples, check_seed

__all__ = ["POWER_METHODS", "DiscriminativePower", "estimate_discriminative_power", "tukey_ranges"]

#: The methods of :func:`estimate_discriminative_power`, and their default numbers of resamples (Sakai's).
POWER_METHODS = {"bootstrap": 1000, "randomized_tukey": 5000}


@dataclass(frozen=True)
class DiscriminativePower:
    """Sakai's discriminative power of a measure over ``k`` runs.

    Attributes
    ----------
    method : str
        ``"bootstrap"`` (Sakai 2006) or ``"randomized_tukey"`` (Sakai 2012/2014).
    power : float
        Share of the ``k (k - 1) / 2`` pairs with ``asl < alpha``.
    required_difference : float
        The estimated difference of means required for a pair to be significant (see the module's text).
    asl : ndarray of shape (k, k)
        Achieved significance level of every pair (symmetric, NaN on the diagonal).
    pair_difference : ndarray of shape (k, k)
        ``"bootstrap"``: each pair's estimated difference required (its maximum is ``required_difference``);
        ``"randomized_tukey"``: ``required_difference`` everywhere off the diagonal.
    alpha : float
    n_resamples : int
    seed : int
    n : int
        Queries.
    """

    method: str
    power: float
    required_difference: float
    asl: np.ndarray
    pair_difference: np.ndarray
    alpha: float
    n_resamples: int
    seed: int
    n: int

    @property
    def significant(self) -> np.ndarray:
        """``asl < alpha`` of every pair (False on the diagonal)."""
        with np.errstate(invalid="ignore"):
            return np.asarray(self.asl < self.alpha)

    def to_dict(self) -> dict[str, Any]:
        """The scalars: method, power, required_difference, alpha, n_resamples, seed, n, pairs, significant."""
        k = self.asl.shape[0]
        return {"method": self.method, "power": self.power, "required_difference": self.required_difference,
                "alpha": self.alpha, "n_resamples": self.n_resamples, "seed": self.seed, "n": self.n,
                "pairs": k * (k - 1) // 2, "significant": int(np.triu(self.significant, 1).sum())}


def _block(X: Any) -> np.ndarray:
    x = np.asarray(X, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] < 2 or x.shape[0] < 2:
        raise InvalidParameterError(f"expected values of shape (queries >= 2, runs >= 2); got {x.shape}.")
    if not np.isfinite(x).all():
        raise InvalidParameterError("the values of every run on every query must be finite numbers.")
    return x


def _replicates(n: int, n_resamples: int, seed: int, chunk: int) -> Any:
    """Chunks of bootstrap replicates as counts: ``(b, n)`` matrices, row ``b`` the number of times each query is
    drawn in replicate ``b`` (n draws with replacement)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2006]))
    for start in range(0, n_resamples, chunk):  # a loop over chunks of replicates
        b = min(chunk, n_resamples - start)
        draws = rng.integers(0, n, size=(b, n))
        yield np.bincount((np.arange(b)[:, None] * n + draws).ravel(), minlength=b * n).reshape(b, n)


def _t(mean: np.ndarray, var: np.ndarray, n: int) -> np.ndarray:
    """``|mean| / sqrt(var / n)``; without spread: +inf for a non-zero mean, 0 for a zero one."""
    se = np.sqrt(np.maximum(var, 0.0) / n)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(se > 0, np.abs(mean) / se, np.where(mean == 0, 0.0, np.inf))


def _bootstrap(x: np.ndarray, alpha: float, n_resamples: int, seed: int,
               counts: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(ASL, estimated difference required) of every pair (upper-triangle order)."""
    n, k = x.shape
    ia, ib = np.triu_indices(k, 1)
    z = x[:, ia] - x[:, ib]
    zbar = z.mean(axis=0)
    # a tolerance: the same sum in another order may differ in the last bits
    tol = 1e-12 * (1.0 + np.abs(z).max())
    spread = np.abs(z - zbar).max(axis=0) > tol
    t_obs = _t(zbar, z.var(axis=0, ddof=1), n)
    w = np.where(spread, z - zbar, 0.0)
    tb = np.empty((n_resamples, z.shape[1]))
    mb = np.empty((n_resamples, z.shape[1]))
    chunks = [counts] if counts is not None else _replicates(n, n_resamples, seed, max(1, 4_000_000 // n))
    start = 0
    for c in chunks:
        c = np.asarray(c, dtype=np.float64)
        m1 = c @ w / n
        m2 = c @ (w * w) / n
        var = (m2 - m1 * m1) * n / (n - 1.0)
        m1 = np.where(np.abs(m1) <= tol, 0.0, m1)
        tb[start:start + c.shape[0]] = _t(m1, np.where(var <= tol * tol, 0.0, var), n)
        mb[start:start + c.shape[0]] = m1
        start += c.shape[0]
    asl = (tb >= t_obs * (1.0 - 1e-12)).sum(axis=0) / n_resamples
    asl = np.where(spread | (np.abs(zbar) > tol), asl, 1.0)  # every query equal: no difference at all
    ba = max(1, math.ceil(alpha * n_resamples))
    kth = -np.sort(-tb, axis=0)[ba - 1]
    first = np.argmax(tb == kth, axis=0)  # the first replicate with that t, as MATTERS takes it
    delta = np.abs(mb[first, np.arange(z.shape[1])])
    return asl, np.where(spread, delta, np.nan)


def tukey_ranges(x: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """The range (largest minus smallest run mean) of each of ``n_resamples`` random permutations of every
    query's values among the runs (the randomised Tukey HSD's null distribution), sorted ascending."""
    n, k = x.shape
    ranges = np.empty(n_resamples)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 33]))
    chunk = max(1, 2_000_000 // (n * k))
    for start in range(0, n_resamples, chunk):  # a loop over chunks of resamples, not over queries
        b = min(chunk, n_resamples - start)
        order = np.argsort(rng.random((b, n, k)), axis=2)
        m = np.take_along_axis(np.broadcast_to(x, (b, n, k)), order, axis=2).mean(axis=1)
        ranges[start:start + b] = m.max(axis=1) - m.min(axis=1)
    ranges.sort()
    return ranges


def estimate_discriminative_power(X: Any, method: str = "bootstrap", *, alpha: float = 0.05,
                                  n_resamples: int | None = None, seed: int = 0,
                                  replicates: Any = None) -> DiscriminativePower:
    """Sakai's discriminative power of a measure over the runs (columns) of ``X``, and the difference required.

    Parameters
    ----------
    X : array-like of shape (n_queries, k_runs)
        Every run's value on every query (finite).
    method : {"bootstrap", "randomized_tukey"}
        Sakai's (2006) paired bootstrap test of each pair, or the randomised Tukey HSD (Sakai 2012, 2014).
    alpha : float
        Significance level (default 0.05): a pair is significant when its ASL is below it.
    n_resamples : int, optional
        Bootstrap replicates (default 1000) or permutations (default 5000).
    seed : int
        Seed of the resamples.
    replicates : array-like of shape (B, n_queries), optional
        ``"bootstrap"`` only: the replicates themselves, each row the query indices drawn (0-based); ``B`` is
        then ``n_resamples``.

    Examples
    --------
    Four queries, three runs, four replicates given (by hand: the first pair's t(z) is 0.728 and three of the
    four t(w*b) reach it; the other pairs' ASL are 0 and 1/4):

    >>> X = [[0.2, 0.4, 0.5], [0.5, 0.4, 0.4], [0.3, 0.6, 0.8], [0.2, 0.1, 0.6]]
    >>> reps = [[0, 0, 1, 2], [3, 3, 3, 1], [1, 2, 3, 0], [2, 2, 0, 1]]
    >>> dp = estimate_discriminative_power(X, alpha=0.5, replicates=reps)
    >>> float(dp.asl[0, 1]), float(dp.asl[0, 2]), float(dp.asl[1, 2]), round(dp.power, 4)
    (0.75, 0.0, 0.25, 0.6667)
    >>> round(dp.required_difference, 4)  # |mean(w*b)| at the 2nd largest t(w*b), largest over the pairs
    0.1
    """
    if method not in POWER_METHODS:
        raise InvalidParameterError(f"`method` must be one of {', '.join(POWER_METHODS)}; got {method!r}.")
    x = _block(X)
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise InvalidParameterError(f"`alpha` must lie strictly between 0 and 1; got {alpha!r}.")
    seed = check_seed(seed)
    n, k = x.shape
    counts = None
    if replicates is not None:
        if method != "bootstrap":
            raise InvalidParameterError("`replicates` are the bootstrap's; the randomised Tukey HSD draws its "
                                        "permutations from `seed`.")
        idx = np.asarray(replicates)
        if idx.ndim != 2 or idx.shape[1] != n or idx.dtype.kind not in "iu" or (idx < 0).any() or (idx >= n).any():
            raise InvalidParameterError(f"`replicates` must be whole query indices from 0 to {n - 1}, one row of "
                                        f"{n} per replicate; got shape {idx.shape}.")
        counts = np.zeros((idx.shape[0], n))
        np.add.at(counts, (np.repeat(np.arange(idx.shape[0]), n), idx.ravel()), 1.0)
        n_resamples = idx.shape[0]
    n_resamples = check_resamples(POWER_METHODS[method] if n_resamples is None else n_resamples)
    iu = np.triu_indices(k, 1)
    asl, pair_diff = np.full((k, k), np.nan), np.full((k, k), np.nan)
    if method == "bootstrap":
        asl[iu], pair_diff[iu] = _bootstrap(x, alpha, n_resamples, seed, counts)
        required = float(np.nanmax(pair_diff[iu])) if not np.isnan(pair_diff[iu]).all() else math.nan
    else:
        ranges = tukey_ranges(x, n_resamples, seed)
        means = x.mean(axis=0)
        observed = np.abs(means[:, None] - means[None, :])[iu]
        tol = 1e-9 * (1.0 + np.abs(x).max())  # the same sum in another order may differ in the last bits
        asl[iu] = (n_resamples - np.searchsorted(ranges, observed - tol, side="left")) / n_resamples
        required = float(ranges[n_resamples - max(1, math.ceil(alpha * n_resamples))])
        pair_diff[iu] = required
    asl[(iu[1], iu[0])] = asl[iu]
    pair_diff[(iu[1], iu[0])] = pair_diff[iu]
    power = float((asl[iu] < alpha).mean())
    return DiscriminativePower(method, power, required, asl, pair_diff, alpha, n_resamples, seed, n)
