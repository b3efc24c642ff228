"""Position bias (examination per rank, relative to rank 1) from randomised traffic or across rankers.

* ``"shuffle"`` (randomised top-k: every item equally likely at every rank): ``theta_r / theta_1`` is the
  click-through rate at rank r over the one at rank 1.
* ``"swap"`` (Joachims, Swaminathan and Schnabel, WSDM 2017): a session of the experiment has a partner rank k
  (``intervention_col``) and shows the items of ranks 1 and k swapped or not, at random (a coin per session);
  over those sessions both items are equally likely at either rank, so ``theta_k / theta_1`` = clicks at rank k
  over clicks at rank 1. Sessions without an intervention (``intervention_col`` 0 or 1) are not used.
* ``"harvest"`` (intervention harvesting, Agarwal et al., WSDM 2019): no experiment; a (query, item) pair shown
  at ranks k and k' (by several rankers or a stochastic policy) enters the interventional set of (k, k'). With
  ``ctr(pair, k)`` = its clicks over its impressions at k, ``c_k^{k,k'}`` = the sum over the set of
  ``ctr(pair, k)`` and ``n_k^{k,k'}`` = the sum of ``1 - ctr``. ``harvest="all_pairs"`` (default) maximises
  ``sum c log(theta_k r_kk') + n log(1 - theta_k r_kk')`` over theta and one relevance ``r`` per unordered pair
  (k, k') (indexed by the pair, not by ``k * k'``: (1, 6) and (2, 3) stay apart); ``"pivot"`` takes
  ``c_k^{1,k} / c_1^{1,k}``; ``"adjacent"`` chains ``c_{k+1}^{k,k+1} / c_k^{k,k+1}``. A ratio whose
  denominator is 0 is not a number (no infinity): that rank stays NaN and is counted.

Intervals (swap, shuffle): the delta method on the log of the ratio, clicks of one session counted together.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError, InvalidParameterError
from ._fit import pbm_cells
from ._log import ClickLog, read_log
from .click_models import ByRank

__all__ = ["METHODS", "Propensities", "check_examination", "estimate_examination", "inverse_propensity"]

METHODS = ("swap", "shuffle", "harvest")


def check_examination(values: Any, what: str = "examination propensities") -> np.ndarray:
    """The examination per rank (from 1) relative to rank 1, from values in (0, 1] (``.examination`` if any).

    The one place where propensities by rank are checked and scaled: the counterfactual estimators and the
    monitoring store's inverse-propensity measures both take them from here.

    Examples
    --------
    >>> check_examination([0.8, 0.4, 0.2]).tolist()
    [1.0, 0.5, 0.25]
    """
    exam = np.asarray(getattr(values, "examination", values), dtype=np.float64).ravel()
    if exam.size == 0 or not np.isfinite(exam).all() or (exam <= 0).any() or (exam > 1).any():
        bad = exam[~(np.isfinite(exam) & (exam > 0) & (exam <= 1))] if exam.size else exam
        raise InputError(f"{what} must be in (0, 1] per rank; got {bad[:1].tolist() or 'none'}"
                         " (a propensity of 0 leaves a rank's clicks without a weight).")
    return exam / exam[0]


def inverse_propensity(rank: Any, exam: np.ndarray, clicked: Any, where: str = "log") -> np.ndarray:
    """``1 / exam[rank - 1]`` per row: the inverse-propensity weight of a click at its logged rank.

    ``exam`` comes from :func:`check_examination`; rows beyond its ranks get the last rank's weight unless
    they are clicked (``clicked`` true), which is refused: that click's propensity is unknown.

    Examples
    --------
    >>> inverse_propensity(np.array([1, 2, 5]), np.array([1.0, 0.5]), np.array([True, True, False])).tolist()
    [1.0, 2.0, 2.0]
    """
    r = np.asarray(rank, dtype=np.int64)
    beyond = np.asarray(clicked, dtype=bool) & (r > len(exam))
    if beyond.any():
        row = int(np.argmax(beyond))
        raise InputError(f"{where}: a click at rank {int(r[row])} (row {row}), beyond the {len(exam)} ranks the "
                         "examination covers.")
    if (r < 1).any():
        raise InputError(f"{where}: rank {int(r[np.argmax(r < 1)])} (row {int(np.argmax(r < 1))}); ranks start at 1.")
    return 1.0 / exam[np.minimum(r, len(exam)) - 1]


@dataclass(frozen=True)
class Propensities:
    """Examination per rank relative to rank 1, with its interval where the method gives one."""

    examination: ByRank
    ci_low: ByRank
    ci_high: ByRank
    method: str
    sessions: int
    support: np.ndarray = field(repr=False)  # per rank: sessions (swap, shuffle) or pairs (harvest) used
    undefined_ranks: int = 0

    def to_dict(self) -> dict[str, Any]:
        def plain(v: ByRank) -> list[float | None]:
            return [None if not math.isfinite(x) else float(x) for x in v.array]

        return {"method": self.method, "examination": plain(self.examination), "ci_low": plain(self.ci_low),
                "ci_high": plain(self.ci_high), "sessions": self.sessions, "support": self.support.tolist(),
                "undefined_ranks": self.undefined_ranks}


def _ratio_ci(x_r: np.ndarray, x_1: np.ndarray, z: float) -> tuple[float, float, float]:
    """(ratio of means, low, high) by the delta method on the log ratio (paired per session)."""
    n = len(x_r)
    m_r, m_1 = float(x_r.mean()) if n else 0.0, float(x_1.mean()) if n else 0.0
    if n < 2 or m_1 <= 0 or m_r <= 0:
        return (m_r / m_1 if m_1 > 0 else math.nan), math.nan, math.nan
    cov = np.cov(np.vstack([x_r, x_1]))
    var = (cov[0, 0] / m_r ** 2 + cov[1, 1] / m_1 ** 2 - 2 * cov[0, 1] / (m_r * m_1)) / n
    ratio = m_r / m_1
    half = z * math.sqrt(max(var, 0.0))
    return ratio, ratio * math.exp(-half), ratio * math.exp(half)


def _randomised(lg: ClickLog, method: str, partner: np.ndarray | None, z: float
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    depth = lg.depth
    C = lg.click_matrix.astype(np.float64)
    has = lg.matrix >= 0
    est, lo, hi = np.full(depth, math.nan), np.full(depth, math.nan), np.full(depth, math.nan)
    support = np.zeros(depth, dtype=np.int64)
    est[0] = lo[0] = hi[0] = 1.0
    support[0] = int(has[:, 0].sum())
    for r in range(1, depth):
        rows = has[:, 0] & has[:, r]
        if partner is not None:
            rows &= partner == r + 1
        support[r] = int(rows.sum())
        est[r], lo[r], hi[r] = _ratio_ci(C[rows, r], C[rows, 0], z)
    return est, lo, hi, support


def _harvest_sets(lg: ClickLog) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(c, n, count): per ordered rank pair (k, k') the summed ctr at k, summed 1 - ctr, and the pairs used."""
    pair, r0, c, n = pbm_cells(lg)
    depth = lg.depth
    ctr = c / n
    order = np.lexsort((r0, pair))
    pair, r0, ctr = pair[order], r0[order], ctr[order]
    starts = np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]])
    sizes = np.diff(np.r_[starts, len(pair)])
    # every ordered couple of cells of the same pair (a pair has at most `depth` cells)
    a_list, b_list = [], []
    for size in np.unique(sizes[sizes > 1]):
        s0 = starts[sizes == size]
        ii, jj = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
        keep = ii != jj
        a_list.append((s0[:, None] + ii[keep][None, :]).ravel())
        b_list.append((s0[:, None] + jj[keep][None, :]).ravel())
    cs = np.zeros((depth, depth))
    ns = np.zeros((depth, depth))
    count = np.zeros((depth, depth), dtype=np.int64)
    if a_list:
        a, b = np.concatenate(a_list), np.concatenate(b_list)
        np.add.at(cs, (r0[a], r0[b]), ctr[a])
        np.add.at(ns, (r0[a], r0[b]), 1.0 - ctr[a])
        np.add.at(count, (r0[a], r0[b]), 1)
    return cs, ns, count


def _all_pairs(cs: np.ndarray, ns: np.ndarray, count: np.ndarray) -> np.ndarray:
    """The extremum estimate of theta (relative to rank 1) over every interventional set."""
    from .._base.deps import require

    optimize = require("scipy.optimize")
    depth = cs.shape[0]
    iu = np.argwhere(np.triu(count + count.T > 0, 1))  # unordered pairs with data
    if len(iu) == 0:
        raise InputError("intervention harvesting: no (query, item) pair was shown at two ranks; the log holds no "
                         "intervention (one ranker, deterministic).")
    pid = -np.ones((depth, depth), dtype=np.int64)
    pid[iu[:, 0], iu[:, 1]] = np.arange(len(iu))
    pid[iu[:, 1], iu[:, 0]] = np.arange(len(iu))
    kk, kp = np.nonzero(count > 0)
    c, nn, p = cs[kk, kp], ns[kk, kp], pid[kk, kp]

    def loss(x: np.ndarray) -> tuple[float, np.ndarray]:
        lt, lr = x[:depth], x[depth:]
        t = 1 / (1 + np.exp(-lt))
        r = 1 / (1 + np.exp(-lr))
        prod = np.clip(t[kk] * r[p], 1e-12, 1 - 1e-12)
        f = -(c * np.log(prod) + nn * np.log1p(-prod)).sum()
        g_prod = -(c / prod - nn / (1 - prod))
        g_t = np.bincount(kk, weights=g_prod * r[p], minlength=depth) * t * (1 - t)
        g_r = np.bincount(p, weights=g_prod * t[kk], minlength=len(iu)) * r * (1 - r)
        return float(f), np.r_[g_t, g_r]

    x0 = np.zeros(depth + len(iu))
    res = optimize.minimize(loss, x0, jac=True, method="L-BFGS-B")
    t = 1 / (1 + np.exp(-res.x[:depth]))
    seen = np.bincount(kk, minlength=depth) > 0
    return np.where(seen, t / t[0], math.nan) if seen[0] else np.full(depth, math.nan)


def estimate_examination(log: Any, method: str = "harvest", *, intervention_col: str | None = None,
                         harvest: str = "all_pairs", confidence: float = 0.95, session_col: str | None = None,
                         query_col: str | None = None, item_col: str | None = None, rank_col: str | None = None,
                         click_col: str | None = None, click_label: str = "click") -> Propensities:
    """The examination per rank relative to rank 1 from randomised traffic or across rankers (see the module).

    Parameters
    ----------
    log : table, mapping of columns or path
        The click log (as :func:`ranklens.counterfactual.fit_click_model` reads it).
    method : {"swap", "shuffle", "harvest"}
    intervention_col : str
        swap: the column holding each session's partner rank k (0 or 1: no intervention).
    harvest : {"all_pairs", "pivot", "adjacent"}

    Returns
    -------
    Propensities

    Examples
    --------
    >>> log = {"group_id": [1, 1, 2, 2], "item_id": ["a", "b", "b", "a"], "rank": [1, 2, 1, 2],
    ...        "click": [1, 0, 1, 1]}
    >>> estimate_examination(log, "shuffle").examination[2]  # ctr 1/2 at rank 2, 2/2 at rank 1
    0.5
    """
    if method not in METHODS:
        raise InvalidParameterError(f"`method` must be one of {', '.join(METHODS)}; got {method!r}.")
    if harvest not in ("all_pairs", "pivot", "adjacent"):
        raise InvalidParameterError(f"`harvest` must be all_pairs, pivot or adjacent; got {harvest!r}.")
    if method == "swap" and intervention_col is None:
        raise InvalidParameterError("method 'swap' needs `intervention_col`: each session's partner rank (the rank "
                                    "swapped with rank 1).")
    extra = (intervention_col,) if method == "swap" and intervention_col else ()
    lg = read_log(log, session_col=session_col, query_col=query_col, item_col=item_col, rank_col=rank_col,
                  click_col=click_col, click_label=click_label, extra_cols=extra)
    z = statistics.NormalDist().inv_cdf(0.5 + float(confidence) / 2)
    if method in ("swap", "shuffle"):
        partner = None
        if method == "swap":
            assert intervention_col is not None
            per_row = lg.extra[intervention_col]
            partner = np.zeros(lg.n_sessions)
            partner[lg.session] = per_row
            if (np.round(partner) != partner).any() or (partner < 0).any():
                raise InputError(f"{lg.source}: column {intervention_col!r} must hold ranks (integers >= 0).")
        est, lo, hi, support = _randomised(lg, method, partner, z)
    else:
        cs, ns, count = _harvest_sets(lg)
        depth = lg.depth
        with np.errstate(divide="ignore", invalid="ignore"):
            if harvest == "all_pairs":
                est = _all_pairs(cs, ns, count)
            elif harvest == "pivot":
                est = np.where(cs[0, :] > 0, cs[:, 0] / np.where(cs[0, :] > 0, cs[0, :], 1.0), math.nan)
                est[0] = 1.0
            else:
                step = np.array([cs[r + 1, r] / cs[r, r + 1] if cs[r, r + 1] > 0 else math.nan
                                 for r in range(depth - 1)])
                est = np.r_[1.0, np.cumprod(step)]
        lo = hi = np.full(depth, math.nan)
        support = count[:, 0] if harvest == "pivot" else count.sum(axis=1)
    undefined = int((~np.isfinite(est)).sum())
    return Propensities(ByRank(est), ByRank(lo), ByRank(hi), method if method != "harvest" else f"harvest/{harvest}",
                        lg.n_sessions, np.asarray(support), undefined)
