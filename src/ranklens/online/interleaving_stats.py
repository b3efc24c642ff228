"""The tests and intervals of an interleaving outcome: per impression a win, a loss or a tie.

* **p-value**: the two-sided sign test over the impressions with a preference (ties dropped):
  ``wins ~ Binomial(wins + losses, 1/2)``, p = ``min(1, 2 P(X <= min(wins, losses)))`` (1 when
  ``wins == losses``), the value of ``scipy.stats.binomtest(wins, wins + losses, 0.5)``.
* **interval** for ``delta = (wins + ties / 2) / n - 1/2 = (wins - losses) / (2 n)``: Tango's score
  interval (Tango 1998) for the difference ``theta = P(win) - P(loss)`` of a trinomial (win, tie, loss;
  the discordant pairs of the paired-proportions setting), halved. It inverts the score test with the
  variance at the constrained maximum-likelihood estimate, so it stays inside [-1/2, 1/2] and is not
  empty or degenerate with zero cells (all ties, all wins), where a Wald interval is. Its test at
  ``theta = 0`` is the normal approximation of the sign test (McNemar's ``(w - l) / sqrt(w + l)``).
  The impressions are the units: each is one independent draw (see the docs on repeated users).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..stats import scipy_special

__all__ = ["sign_test", "tango_interval"]

_BISECTIONS = 50  # the limits to 2 / 2**50 (~2e-15)


def sign_test(wins: Any, losses: Any) -> np.ndarray:
    """Two-sided sign-test p-values (element-wise over arrays of win and loss counts).

    Examples
    --------
    >>> from ranklens.online.interleaving_stats import sign_test
    >>> sign_test(9, 1).round(6).tolist()  # scipy.stats.binomtest(9, 10).pvalue
    0.021484
    >>> sign_test([0, 5], [0, 5]).tolist()
    [1.0, 1.0]
    """
    sp = scipy_special()
    w = np.asarray(wins, dtype=np.int64)
    lo = np.minimum(w, np.asarray(losses, dtype=np.int64))
    m = w + np.asarray(losses, dtype=np.int64)
    p = np.minimum(1.0, 2.0 * sp.bdtr(lo, np.maximum(m, 1), 0.5))
    return np.where((m == 0) | (lo * 2 == m), 1.0, p)


def _score(theta: np.ndarray, w: np.ndarray, ls: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Tango's score statistic for ``P(win) - P(loss) = theta``, given w wins and ls losses of n."""
    a = 2.0 * n
    b = -w - ls + (2.0 * n - w + ls) * theta
    c = -ls * theta * (1.0 - theta)
    p_loss = (np.sqrt(np.maximum(b * b - 4.0 * a * c, 0.0)) - b) / (2.0 * a)  # constrained MLE of P(loss)
    var = n * (2.0 * p_loss + theta - theta * theta)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (w - ls - n * theta) / np.sqrt(var)


def tango_interval(wins: Any, losses: Any, n: Any, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Tango's score interval for ``theta = P(win) - P(loss)`` (element-wise), by bisection.

    Examples
    --------
    >>> from ranklens.online.interleaving_stats import tango_interval
    >>> lo, hi = tango_interval(0, 0, 100, 0.95)  # 100 ties: theta within +-z^2 / (n + z^2)
    >>> round(float(hi[0]), 4), round(3.8415 / 103.8415, 4)
    (0.037, 0.037)
    """
    sp = scipy_special()
    z = float(sp.ndtri(0.5 + confidence / 2.0))
    w, ls, nn = (np.atleast_1d(np.asarray(x, dtype=np.float64)) for x in (wins, losses, n))
    w, ls, nn = np.broadcast_arrays(w, ls, nn)
    est = (w - ls) / nn
    # lower limit: score(theta) = z on [-1, est]; upper: score(theta) = -z on [est, 1] (the score decreases)
    bounds = []
    for target, lo, hi in ((z, np.full_like(est, -1.0), est.copy()), (-z, est.copy(), np.ones_like(est))):
        for _ in range(_BISECTIONS):
            mid = (lo + hi) / 2.0
            above = _score(mid, w, ls, nn) > target
            lo = np.where(above, mid, lo)
            hi = np.where(above, hi, mid)
        bounds.append((lo + hi) / 2.0)
    low = np.where(ls == nn, -1.0, bounds[0])
    high = np.where(w == nn, 1.0, bounds[1])
    return low, high
