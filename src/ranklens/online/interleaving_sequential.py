"""Sequential inference for interleaving (Kharitonov, Vorobev, Macdonald, Serdyukov & Ounis 2015: stopping an
interleaving experiment early), on the sequential machinery of the A/B tests (:mod:`ranklens.online.sequential`).

The looks are the distinct values of a column of the log (a day, an hour, a batch number), in sorted order;
look ``j`` holds the impressions up to it. With ``o = 1, 0, -1`` per impression (a won, tie, b won), the
estimate at a look is ``theta_j = (wins_j - losses_j) / n_j`` (twice ``delta``) with variance
``((wins_j + losses_j) / n_j - theta_j**2) / n_j``. Then, as ``ab_test`` does:

* ``"always_valid"``: the normal-mixture mSPRT (always-valid p-value, the running minimum) and its confidence
  sequence, valid however often the experiment is looked at;
* ``"group_sequential"``: Lan-DeMets boundaries on ``z_j = theta_j / se_j`` at information fractions
  ``n_j / planned`` (impressions), the repeated p-value and the repeated confidence interval at the last look.

``delta``'s interval is ``theta``'s halved. The unit is the impression.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .sequential import AlwaysValid, GroupSequential, always_valid, group_sequential, repeated_p_value

__all__ = ["sequential_fields"]


def sequential_fields(outcome: np.ndarray, look: np.ndarray, design: AlwaysValid | GroupSequential,
                      alpha: float) -> tuple[dict[str, Any], tuple[dict[str, Any], ...]]:
    """The final ``p_value``, ``ci_low``, ``ci_high`` (of delta) and the looks, for per-impression
    ``outcome`` (1, 0, -1) and the look number of each impression (0, 1, ... in time order)."""
    n_looks = int(look.max()) + 1
    n = np.cumsum(np.bincount(look, minlength=n_looks)).astype(np.float64)
    w = np.cumsum(np.bincount(look, weights=outcome > 0, minlength=n_looks))
    ls = np.cumsum(np.bincount(look, weights=outcome < 0, minlength=n_looks))
    theta = (w - ls) / n
    var = ((w + ls) / n - theta ** 2) / n
    ok = var > 0
    looks = [{"look": k + 1, "impressions": int(n[k]), "wins": int(w[k]), "losses": int(ls[k]),
              "delta": float(theta[k] / 2)} for k in range(n_looks)]
    if isinstance(design, AlwaysValid):
        last = int(np.flatnonzero(ok)[-1]) if ok.any() else n_looks - 1
        rho = design.rho(float(var[last]) if ok.any() else 1.0, int(n[last]), alpha)
        av = always_valid(np.where(ok, theta, np.nan), np.where(ok, var, np.nan), rho, alpha)
        for k, lk in enumerate(looks):
            lk.update(p_value=float(av["p_value"][k]), ci_low=float(av["ci_low"][k] / 2),
                      ci_high=float(av["ci_high"][k] / 2))
        final = {"p_value": float(av["p_value"][-1]), "ci_low": max(-0.5, float(av["ci_low"][-1]) / 2),
                 "ci_high": min(0.5, float(av["ci_high"][-1]) / 2), "sequential": "always_valid",
                 "interval": "always_valid"}
        return final, tuple(looks)
    planned = float(design.planned_units) if design.planned_units else float(n[-1])
    frac = np.minimum(n / planned, 1.0)
    idx = np.flatnonzero(ok & np.r_[True, frac[1:] > frac[:-1]])
    final = {"p_value": math.nan, "ci_low": math.nan, "ci_high": math.nan,
             "sequential": f"group_sequential ({design.spending})", "interval": "repeated"}
    for lk in looks:
        lk.update(p_value=math.nan, ci_low=math.nan, ci_high=math.nan)
    if len(idx):
        se = np.sqrt(var[idx])
        z = theta[idx] / se
        gs = group_sequential(z, frac[idx], alpha, design.spending, design.rho)
        for j, k in enumerate(idx.tolist()):
            c = float(gs["boundary"][j])
            looks[k].update(ci_low=float(theta[k] - c * se[j]) / 2, ci_high=float(theta[k] + c * se[j]) / 2)
        c = float(gs["boundary"][-1])
        final.update(p_value=float(repeated_p_value(z, frac[idx], design.spending, design.rho)),
                     ci_low=max(-0.5, float(theta[idx[-1]] - c * se[-1]) / 2),
                     ci_high=min(0.5, float(theta[idx[-1]] + c * se[-1]) / 2))
    return final, tuple(looks)
