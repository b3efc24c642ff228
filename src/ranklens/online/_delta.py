"""The delta method over randomisation units, CUPED with ratio measures linearised, and the z comparison.

A measure's value in an arm is a ratio of sums over its units ``M = sum Y / sum X`` (``Y`` a unit's sum of
per-list values, ``X`` its number of lists with a value). Its variance by the delta method (Deng, Knoblich and
Lu 2018) is that of the unit's linearised value ``l = (Y - M X) / mean(X)`` divided by the number of units::

    Var(M) = sum l**2 / (n - 1) / n

CUPED (Deng, Xu, Kohavi and Walker 2013) with covariates ``z`` per unit (a pre-period value, or a model's
prediction: CUPAC) regresses ``l`` on ``z`` with one coefficient ``theta`` for all arms (pooled within arms),
``M_cv = M - theta (mean_arm(z) - mean_all(z))`` and ``Var(M_cv) = Var(l - theta z) / n``.

Everything works on sufficient statistics (:class:`Sums`), whose arrays have any leading shape before the arm
axis: replications, looks, cells are computed at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Sums", "compare", "cuped", "ratio", "unit_sums"]


@dataclass(frozen=True, eq=False)
class Sums:
    """Per arm (last axis; covariate axes after it): units ``n``, ``y = sum Y``, ``x = sum X``, ``yy``, ``xx``,
    ``xy``, and with covariates ``z`` (sum), ``zz`` (cross products), ``zy``, ``zx``."""

    n: np.ndarray
    y: np.ndarray
    x: np.ndarray
    yy: np.ndarray
    xx: np.ndarray
    xy: np.ndarray
    z: np.ndarray
    zz: np.ndarray
    zy: np.ndarray
    zx: np.ndarray


def unit_sums(arm: np.ndarray, y: np.ndarray, x: np.ndarray, n_arms: int, z: np.ndarray | None = None,
              cell: np.ndarray | None = None, n_cells: int = 1, present: np.ndarray | None = None) -> Sums:
    """:class:`Sums` of units (``arm`` codes, ``y``, ``x``, covariates ``z``: units x p), by ``cell`` (shape
    ``(n_cells, n_arms)``) or not (shape ``(n_arms,)``). ``present``: which units count (default all)."""
    idx = arm if cell is None else cell * n_arms + arm
    size = n_arms * n_cells
    w = np.ones(len(arm)) if present is None else present.astype(np.float64)

    def s(v: np.ndarray) -> np.ndarray:
        out = np.bincount(idx, weights=v * w, minlength=size)
        return out if cell is None else out.reshape(n_cells, n_arms)

    zz = np.zeros((len(arm), 0)) if z is None else np.asarray(z, dtype=np.float64).reshape(len(arm), -1)
    p = zz.shape[1]
    shape = (n_arms,) if cell is None else (n_cells, n_arms)
    zs = np.stack([s(zz[:, j]) for j in range(p)], axis=-1) if p else np.zeros(shape + (0,))
    zzs = (np.stack([np.stack([s(zz[:, i] * zz[:, j]) for j in range(p)], axis=-1) for i in range(p)], axis=-2)
           if p else np.zeros(shape + (0, 0)))
    zy = np.stack([s(zz[:, j] * y) for j in range(p)], axis=-1) if p else np.zeros(shape + (0,))
    zx = np.stack([s(zz[:, j] * x) for j in range(p)], axis=-1) if p else np.zeros(shape + (0,))
    return Sums(s(np.ones(len(arm))), s(y), s(x), s(y * y), s(x * x), s(x * y), zs, zzs, zy, zx)


def ratio(s: Sums) -> tuple[np.ndarray, np.ndarray]:
    """(M, Var(M)) per arm by the delta method (NaN with fewer than 2 units or no lists)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        m = s.y / s.x
        xbar = s.x / s.n
        ll = (s.yy - 2 * m * s.xy + m * m * s.xx) / (xbar * xbar)
        var = np.maximum(ll, 0.0) / (s.n - 1) / s.n
    return m, np.where(s.n >= 2, var, np.nan)


def cuped(s: Sums) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(M_cv, Var(M_cv), theta) per arm; theta (one per covariate) pooled within arms over the arm axis."""
    m, _ = ratio(s)
    with np.errstate(invalid="ignore", divide="ignore"):
        xbar = s.x / s.n
        zbar = s.z / s.n[..., None]
        szz = s.zz - s.n[..., None, None] * zbar[..., :, None] * zbar[..., None, :]  # centred within the arm
        szl = (s.zy - m[..., None] * s.zx) / xbar[..., None]
        ll = (s.yy - 2 * m * s.xy + m * m * s.xx) / (xbar * xbar)
    pooled_zz = np.nansum(szz, axis=-3)
    pooled_zl = np.nansum(szl, axis=-2)
    theta = _solve(pooled_zz, pooled_zl)  # leading shape x p
    th = theta[..., None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        resid = ll - 2 * np.einsum("...ap,...ap->...a", np.broadcast_to(th, szl.shape), szl) + np.einsum(
            "...ap,...apq,...aq->...a", np.broadcast_to(th, szl.shape), szz, np.broadcast_to(th, szl.shape))
        var = np.maximum(resid, 0.0) / (s.n - 1) / s.n
        zall = s.z.sum(axis=-2) / s.n.sum(axis=-1)[..., None]
        adj = np.einsum("...ap,...ap->...a", np.broadcast_to(th, zbar.shape), zbar - zall[..., None, :])
    return m - adj, np.where(s.n >= 2, var, np.nan), theta


def _solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a^-1 b`` over the leading axes; 0 where ``a`` is singular (a covariate constant within arms)."""
    p = b.shape[-1]
    if p == 0:
        return np.zeros(b.shape)
    out = np.zeros(b.shape)
    flat_a, flat_b, flat_o = a.reshape(-1, p, p), b.reshape(-1, p), out.reshape(-1, p)
    ok = np.abs(np.linalg.det(flat_a)) > 1e-12 * np.maximum(1.0, np.abs(flat_a).max(axis=(1, 2)) ** p)
    if ok.any():
        flat_o[ok] = np.linalg.solve(flat_a[ok], flat_b[ok][..., None])[..., 0]
    return flat_o.reshape(b.shape)


def compare(mt: Any, vt: Any, mc: Any, vc: Any, z_crit: Any) -> dict[str, Any]:
    """Treatment against control: difference, its z test, interval (``z_crit`` the two-sided quantile) and the
    relative lift ``mt / mc - 1`` with its own delta-method variance ``vt / mc^2 + mt^2 vc / mc^4``."""
    from .._base.deps import require

    norm = require("scipy.stats").norm
    mt, vt, mc, vc = (np.asarray(a, dtype=np.float64) for a in (mt, vt, mc, vc))
    d = mt - mc
    se = np.sqrt(vt + vc)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = d / se
        rel = mt / mc - 1
        rel_se = np.sqrt(vt / mc ** 2 + mt ** 2 * vc / mc ** 4)
    p = 2 * norm.sf(np.abs(z))
    return {"estimate": d, "se": se, "z": z, "p_value": p, "ci_low": d - z_crit * se, "ci_high": d + z_crit * se,
            "relative": rel, "relative_se": rel_se, "relative_ci_low": rel - z_crit * rel_se,
            "relative_ci_high": rel + z_crit * rel_se}


def z_quantile(alpha: float) -> float:
    """The two-sided normal quantile ``z_{1 - alpha / 2}``."""
    from .._base.deps import require

    return float(require("scipy.stats").norm.isf(alpha / 2)) if 0 < alpha < 1 else math.nan
