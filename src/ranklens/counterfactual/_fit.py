"""The fitting of click models on a :class:`~ranklens.counterfactual._log.ClickLog` (numpy, no loop over sessions).

Notation of Chuklin, Markov and de Rijke, *Click Models for Web Search* (2015), as in :mod:`ranklens.online`:
examination ``E_r``, attractiveness ``alpha`` of a (query, item) pair, click ``C_r = E_r A_r``.

* **PBM** by EM on the sufficient statistics (clicks and impressions per pair and rank, one bincount):
  for a row without a click, ``P(E=1 | C=0) = theta (1 - alpha) / (1 - theta alpha)`` and
  ``P(A=1 | C=0) = alpha (1 - theta) / (1 - theta alpha)``; the M-step averages ``c + (1 - c) P(.)`` per rank
  (theta) and per pair (alpha). With ``features``, alpha is ``sigmoid(features @ w)`` refitted in each M-step
  by Newton steps on the expected attracted counts (the regression EM of Wang et al., WSDM 2018, with the
  posterior as a soft label instead of a sampled one).
* **Cascade**: alpha = clicks / impressions over the ranks up to the first click (all ranks without one).
* **DCM**: alpha over the ranks up to the last click; ``lambda_r`` = share of the clicks at rank r that are
  not the session's last.
* **SDBN**: alpha over the ranks up to the last click; sigma = share of a pair's clicks that are the last.
* **DBN** by EM (one global gamma): the posterior of each session's examination after its last click ``l`` is
  closed form: with ``p0 = gamma (1 - sigma_l)`` (1 without a click), ``B_r`` = P(no click at r.. | E_r) and
  ``F_r = prod_{l<j<r} gamma (1 - alpha_j)``, ``P(E_r | clicks) = p0 F_r B_r / Z`` with
  ``Z = 1 - p0 + p0 B_{l+1}``; ``P(A_r | no click) = alpha_r (1 - P(E_r | clicks))`` and
  ``P(S_l | clicks) = sigma_l / Z``.

The log-likelihood uses the forward filter ``P(C_r | clicks above r)`` of each model, which also gives the
perplexity per rank.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidParameterError
from ..online.click_models import forward_click_probability
from ._log import ClickLog

__all__ = ["EPS", "fit_cascade_family", "fit_dbn", "fit_pbm", "forward_loglik", "pbm_cells"]

#: Probabilities are kept within [EPS, 1 - EPS] in logarithms (a cascade model gives 0 to a second click).
EPS = 1e-12


def pbm_cells(log: ClickLog) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(pair, rank - 1, clicks, impressions) of each distinct (pair, rank) of the log."""
    depth = log.depth
    key = log.pair * depth + (log.rank - 1)
    size = log.n_pairs * depth
    if size <= 4 * len(key) + 1_000_000:
        n = np.bincount(key, minlength=size)
        c = np.bincount(key, weights=log.click, minlength=size)
        keys = np.flatnonzero(n)
        n, c = n[keys], c[keys]
    else:
        keys, inv = np.unique(key, return_inverse=True)
        n = np.bincount(inv)
        c = np.bincount(inv, weights=log.click)
    return keys // depth, keys % depth, c.astype(np.float64), n.astype(np.float64)


def _logistic(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _newton(X: np.ndarray, y: np.ndarray, n: np.ndarray, w: np.ndarray, steps: int = 3) -> np.ndarray:
    """Newton steps of a binomial logistic regression (``y`` successes of ``n`` trials per row of ``X``)."""
    for _ in range(steps):
        p = _logistic(X @ w)
        grad = X.T @ (y - n * p)
        hess = (X * (n * p * (1 - p))[:, None]).T @ X + 1e-9 * np.eye(X.shape[1])
        w = w + np.linalg.solve(hess, grad)
    return w


class _PbmCells:
    """The PBM's sufficient statistics, clicks and non-clicks per (pair, rank): a dense pairs x ranks matrix when
    most cells are filled (reductions along an axis), else the list of filled cells (bincounts)."""

    def __init__(self, log: ClickLog) -> None:
        pair, r0, c, n = pbm_cells(log)
        self.depth, self.n_pairs = log.depth, log.n_pairs
        self.dense = log.n_pairs * log.depth <= 2 * len(pair) + 100_000
        if self.dense:
            self.c = np.zeros((log.n_pairs, log.depth))
            self.nc = np.zeros((log.n_pairs, log.depth))
            self.c[pair, r0] = c
            self.nc[pair, r0] = n - c
            self.n_rank, self.n_pair = self.c.sum(0) + self.nc.sum(0), self.c.sum(1) + self.nc.sum(1)
            self.c_rank, self.c_pair = self.c.sum(0), self.c.sum(1)
        else:
            self.pair, self.r0, self.cc, self.ncc = pair, r0, c, n - c
            self.n_rank = np.bincount(r0, weights=n, minlength=log.depth)
            self.n_pair = np.bincount(pair, weights=n, minlength=log.n_pairs)
            self.c_rank = np.bincount(r0, weights=c, minlength=log.depth)
            self.c_pair = np.bincount(pair, weights=c, minlength=log.n_pairs)

    def expected(self, theta: np.ndarray, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """E-step: (expected examined rows per rank, expected attracted rows per pair)."""
        if self.dense:  # q = nc / (1 - alpha theta), then two matrix-vector products
            q = np.multiply.outer(alpha, -theta)
            q += 1.0
            np.maximum(q, EPS, out=q)
            np.divide(self.nc, q, out=q)
            return self.c_rank + theta * ((1 - alpha) @ q), self.c_pair + alpha * (q @ (1 - theta))
        t, a = theta[self.r0], alpha[self.pair]
        q = self.ncc / np.maximum(1.0 - t * a, EPS)
        return (self.c_rank + np.bincount(self.r0, weights=q * t * (1 - a), minlength=self.depth),
                self.c_pair + np.bincount(self.pair, weights=q * a * (1 - t), minlength=self.n_pairs))

    def step(self, theta: np.ndarray, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One EM step of the PBM with a free alpha per pair."""
        ex, at = self.expected(theta, alpha)
        return (np.clip(ex / np.maximum(self.n_rank, 1.0), EPS, 1 - EPS),
                np.clip(at / np.maximum(self.n_pair, 1.0), EPS, 1 - EPS))

    def loglik(self, theta: np.ndarray, alpha: np.ndarray) -> np.ndarray:
        """The log-likelihood per rank."""
        if self.dense:
            p = np.clip(alpha[:, None] * theta[None, :], EPS, 1 - EPS)
            return (self.c * np.log(p) + self.nc * np.log1p(-p)).sum(0)
        p = np.clip(theta[self.r0] * alpha[self.pair], EPS, 1 - EPS)
        return np.bincount(self.r0, weights=self.cc * np.log(p) + self.ncc * np.log1p(-p), minlength=self.depth)


def _squarem(cells: _PbmCells, theta: np.ndarray, alpha: np.ndarray, iterations: int, tol: float
             ) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """EM accelerated by SQUAREM (Varadhan and Roland 2008, step length S3), each cycle kept only when it does not
    lower the likelihood (else the plain EM's second step); ``iterations`` counts EM steps."""
    d = len(theta)
    x0 = np.r_[theta, alpha]
    ll0 = -np.inf
    steps = 0
    while steps < iterations:
        x1 = np.r_[cells.step(x0[:d], x0[d:])]
        if steps + 3 > iterations:  # no room for a cycle: plain EM steps
            steps += 1
            change = float(np.abs(x1 - x0).max())
            x0 = x1
            if change < tol:
                return x0[:d], x0[d:], steps, True
            continue
        x2 = np.r_[cells.step(x1[:d], x1[d:])]
        steps += 2
        r, v = x1 - x0, x2 - 2 * x1 + x0
        nv = float(np.linalg.norm(v))
        x_new = x2
        if nv > 0:
            a = min(-float(np.linalg.norm(r)) / nv, -1.0)
            xs = np.clip(x0 - 2 * a * r + a * a * v, EPS, 1 - EPS)
            x3 = np.r_[cells.step(xs[:d], xs[d:])]
            steps += 1
            ll3 = float(cells.loglik(x3[:d], x3[d:]).sum())
            if ll3 >= ll0:
                x_new, ll_new = x3, ll3
            else:
                ll_new = float(cells.loglik(x2[:d], x2[d:]).sum())
        else:
            ll_new = float(cells.loglik(x2[:d], x2[d:]).sum())
        change = float(np.abs(x_new - x0).max())
        x0, ll0 = x_new, ll_new
        if change < tol:
            return x0[:d], x0[d:], steps, True
    return x0[:d], x0[d:], steps, False


def fit_pbm(log: ClickLog, *, iterations: int, tol: float, features: np.ndarray | None = None
            ) -> dict[str, Any]:
    """PBM by EM (module docstring); ``features`` (pairs x f) switch alpha to the regression EM."""
    cells = _PbmCells(log)
    theta = np.full(log.depth, 0.5)
    alpha = np.full(log.n_pairs, 0.5)
    w = None
    if features is None:
        theta, alpha, it, done = _squarem(cells, theta, alpha, iterations, tol)
    else:
        X = np.column_stack([np.ones(log.n_pairs), features])
        w = np.zeros(X.shape[1])
        done, it = False, 0
        while it < iterations:
            it += 1
            ex, attracted = cells.expected(theta, alpha)
            w = _newton(X, attracted, cells.n_pair, w)
            new_theta = np.clip(ex / np.maximum(cells.n_rank, 1.0), EPS, 1 - EPS)
            new_alpha = np.clip(_logistic(X @ w), EPS, 1 - EPS)
            change = max(float(np.abs(new_theta - theta).max()), float(np.abs(new_alpha - alpha).max()))
            theta, alpha = new_theta, new_alpha
            if change < tol:
                done = True
                break
    return {"theta": theta, "alpha": alpha, "iterations": it, "converged": done,
            "ll_rank": cells.loglik(theta, alpha), "n_rank": cells.n_rank, "coef": w, "clicks_rank": cells.c_rank}


def _first_last(C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first, last) clicked column of each row; -1 without a click."""
    any_c = C.any(axis=1)
    first = np.where(any_c, np.argmax(C, axis=1), -1)
    last = np.where(any_c, C.shape[1] - 1 - np.argmax(C[:, ::-1], axis=1), -1)
    return first, last


def fit_cascade_family(log: ClickLog, kind: str) -> dict[str, Any]:
    """Cascade, DCM and SDBN by their closed-form estimates (module docstring)."""
    P, C = log.matrix, log.click_matrix
    S, L = P.shape
    has = P >= 0
    first, last = _first_last(C)
    col = np.arange(L)[None, :]
    stop = first if kind == "cascade" else last
    upto = np.where((stop >= 0)[:, None], col <= stop[:, None], True) & has
    alpha = _ratio(np.bincount(P[upto & C], minlength=log.n_pairs),
                   np.bincount(P[upto], minlength=log.n_pairs))
    out: dict[str, Any] = {"alpha": alpha, "gamma": 1.0}
    if kind == "cascade":
        out["sigma"] = np.ones(log.n_pairs)
        out["ignored_clicks"] = int((C & ~upto).sum())
    elif kind == "dcm":
        not_last = C & (col < last[:, None])
        out["lam"] = _ratio(not_last.sum(axis=0), C.sum(axis=0), fill=0.5)
    else:  # sdbn
        is_last = C & (col == last[:, None])
        out["sigma"] = _ratio(np.bincount(P[is_last], minlength=log.n_pairs),
                              np.bincount(P[C & has], minlength=log.n_pairs), fill=0.5)
    out["iterations"], out["converged"] = 1, True
    return out


def _ratio(num: np.ndarray, den: np.ndarray, fill: float = 0.0) -> np.ndarray:
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    return np.clip(np.where(den > 0, num / np.where(den > 0, den, 1.0), fill), 0.0, 1.0)


def _dbn_estep(a: np.ndarray, s: np.ndarray, gamma: float, last: np.ndarray, tail: np.ndarray, has: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P(E_r | clicks), P(S_r | clicks) at clicks, P(E_{r+1} | clicks)) per session and rank; ``last`` is each
    session's last clicked column (-1: none), ``tail`` the columns after it."""
    S, L = a.shape
    B = np.ones((S, L + 1))
    for r in range(L - 1, -1, -1):
        B[:, r] = (1 - a[:, r]) * (gamma * B[:, r + 1] + (1 - gamma))
    rows = np.arange(S)
    clicked = last >= 0
    s_last = np.where(clicked, s[rows, np.maximum(last, 0)], 0.0)
    p0 = np.where(clicked, gamma * (1 - s_last), 1.0)
    Z = np.maximum(1 - p0 + p0 * B[rows, last + 1], EPS)
    step = np.where(tail, gamma * (1 - a), 1.0)  # F_{r+1} = F_r * gamma (1 - a_r) in the tail
    F = np.ones((S, L))
    F[:, 1:] = np.cumprod(step[:, :-1], axis=1)  # F_{l+1} = 1 (the steps up to l are 1)
    e = np.where(tail, (p0 / Z)[:, None] * F * B[:, :L], 1.0)
    e = np.where(has, e, 0.0)
    sat = np.zeros((S, L))
    k = np.flatnonzero(clicked)
    sat[k, last[k]] = s_last[k] / Z[k]
    nxt = np.zeros((S, L))
    nxt[:, :-1] = e[:, 1:]
    return e, sat, nxt


def _distinct_sessions(P: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pairs, clicks, count) of the distinct (list, click pattern) sessions: they share their posteriors."""
    L = P.shape[1]
    bits = (C.astype(np.int64) << np.arange(L)).sum(axis=1)
    u, inv, count = np.unique(np.column_stack([P, bits]), axis=0, return_inverse=True, return_counts=True)
    first = np.zeros(len(u), dtype=np.int64)
    first[np.asarray(inv).ravel()[::-1]] = np.arange(len(P))[::-1]
    return P[first], C[first], count.astype(np.float64)


def fit_dbn(log: ClickLog, *, iterations: int, tol: float) -> dict[str, Any]:
    """DBN by EM (module docstring), on the distinct sessions weighted by their number."""
    P, C, wt = _distinct_sessions(log.matrix, log.click_matrix)
    has = P >= 0
    Pz = np.where(has, P, 0)
    _, last = _first_last(C)
    tail = np.arange(P.shape[1])[None, :] > last[:, None]
    W = np.broadcast_to(wt[:, None], P.shape)
    alpha = np.full(log.n_pairs, 0.5)
    sigma = np.full(log.n_pairs, 0.5)
    gamma = 0.9
    n_pair = np.bincount(P[has], weights=W[has], minlength=log.n_pairs)
    clk = C & has
    clicks_pair = np.bincount(P[clk], weights=W[clk], minlength=log.n_pairs)
    trans = np.zeros(has.shape, dtype=bool)
    trans[:, :-1] = has[:, :-1] & has[:, 1:]
    done, it = False, 0
    while it < iterations:
        it += 1
        a = np.where(has, alpha[Pz], 0.0)
        s = np.where(has, sigma[Pz], 0.0)
        e, sat, nxt = _dbn_estep(a, s, gamma, last, tail, has)
        post_a = np.where(C, 1.0, a * (1 - e)) * W
        new_alpha = _ratio(np.bincount(P[has], weights=post_a[has], minlength=log.n_pairs), n_pair, 0.5)
        new_sigma = _ratio(np.bincount(P[clk], weights=(sat * W)[clk], minlength=log.n_pairs), clicks_pair, 0.5)
        unsat = np.where(C, 1.0 - sat, 1.0) * e * W
        new_gamma = float((nxt * W)[trans].sum() / max(unsat[trans].sum(), EPS))
        new_alpha, new_sigma = np.clip(new_alpha, EPS, 1 - EPS), np.clip(new_sigma, EPS, 1 - EPS)
        new_gamma = min(max(new_gamma, EPS), 1 - EPS)
        change = max(float(np.abs(new_alpha - alpha).max()), float(np.abs(new_sigma - sigma).max()),
                     abs(new_gamma - gamma))
        alpha, sigma, gamma = new_alpha, new_sigma, new_gamma
        if change < tol:
            done = True
            break
    return {"alpha": alpha, "sigma": sigma, "gamma": gamma, "iterations": it, "converged": done}


def forward_loglik(a: np.ndarray, s: np.ndarray, gamma: float, C: np.ndarray, has: np.ndarray,
                   theta: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """``log P(C_r = c_r | clicks above r)`` per session and rank (0 where no item), and the number of clicks the
    model gives probability 0 (counted at ``EPS``): the forward recursion of
    :func:`ranklens.online.click_models.forward_click_probability`. PBM (``theta`` given): independent
    positions."""
    L = a.shape[1]
    if theta is not None:
        p = np.clip(theta[None, :L] * a, EPS, 1 - EPS)
        return np.where(has, np.where(C, np.log(p), np.log1p(-p)), 0.0), 0
    pc = forward_click_probability(a, s, gamma, C, EPS)
    impossible = int((C & has & (pc <= EPS)).sum())
    pc = np.clip(pc, EPS, 1 - EPS)
    return np.where(has, np.where(C, np.log(pc), np.log1p(-pc)), 0.0), impossible


def check_kind(model: str, kinds: tuple[str, ...]) -> str:
    """The model's name, lower-cased, or an error naming the valid ones."""
    m = str(model).lower()
    if m not in kinds:
        raise InvalidParameterError(f"`model` must be one of {', '.join(kinds)}; got {model!r}.")
    return m
