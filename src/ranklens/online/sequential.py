"""Inference that stays valid when an experiment is looked at again and again.

**Always valid** (``sequential="always_valid"``): the mixture sequential probability ratio test (mSPRT; Johari,
Pekelis and Walsh 2017) with a normal mixing distribution ``N(0, tau^2)`` over the effect, which is the normal
mixture martingale of Howard, Ramdas, McAuliffe and Sekhon (2021). With the estimate ``d`` and its variance ``V``
at a look, the information ``I = 1 / V``, the sum ``S = d I`` and ``rho = 1 / tau^2``::

    log M = 1/2 log(rho / (I + rho)) + S^2 / (2 (I + rho))

The always-valid p-value is ``min(1, 1 / M)`` kept at its running minimum over looks; the confidence sequence is
``{delta : M(delta) < 1 / alpha}``, i.e. ``d +- sqrt((I + rho) (log((I + rho) / rho) + 2 log(1 / alpha))) / I``,
kept as the running intersection. ``rho`` is fixed before the data: ``1 / tau^2`` when ``tau`` is given, else
Howard et al.'s choice making the sequence tightest at an information ``I_opt``:
``rho = I_opt / (2 log(1 / alpha) + log(1 + 2 log(1 / alpha)))``, with ``I_opt`` the information expected at
``planned_units`` (the last look's, scaled by planned units over units so far), or the last look's.

**Group sequential** (``sequential="group_sequential"``): planned looks at information fractions ``t_k`` (units
so far over ``planned_units``), two-sided boundaries ``c_k`` on the z statistic that spend
``alpha*(t_k) - alpha*(t_{k-1})`` at look ``k`` (Lan and DeMets 1983) with ``Corr(Z_j, Z_k) = sqrt(t_j / t_k)``,
computed by recursive numerical integration of the sub-density of the Brownian motion ``Z_k sqrt(t_k)`` over
the continuation region. Spending functions: O'Brien-Fleming type ``2 - 2 Phi(z_{alpha/2} / sqrt(t))``, Pocock
type ``alpha log(1 + (e - 1) t)``, power family ``alpha t^rho``, each spending half on either side (the
O'Brien-Fleming type one-sided on each side, as gsDesign's ``sfLDOF`` with ``alpha / 2``:
``alpha*(t) = 2 (2 - 2 Phi(z_{alpha/4} / sqrt(t)))``). The interval is the repeated confidence
interval ``d +- c_k se`` at the last look; the p-value the repeated p-value (the smallest alpha whose boundaries
the z statistics cross at some look).

Several measures and arms: ``ab_test(correction=...)`` runs each comparison at ``alpha / m`` (Bonferroni) for
``m`` comparisons, which keeps the family-wise error over all of them and all looks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._base.deps import require
from ..errors import InvalidParameterError

__all__ = ["SPENDING", "AlwaysValid", "GroupSequential", "always_valid", "boundaries", "design_of",
           "group_sequential", "repeated_p_value", "spent", "tuned_rho"]

SPENDING = ("obrien_fleming", "pocock", "power")
_GRID = 401


def tuned_rho(information: Any, alpha: float) -> Any:
    """Howard et al.'s mixture precision making the confidence sequence tightest at ``information``.

    >>> round(float(tuned_rho(100.0, 0.05)), 4)  # 100 / (2 log 20 + log(1 + 2 log 20)) = 100 / 7.9362
    12.6006
    """
    la = math.log(1.0 / alpha)
    return np.asarray(information, dtype=np.float64) / (2 * la + math.log(1 + 2 * la))


def always_valid(estimate: Any, variance: Any, rho: Any, alpha: float) -> dict[str, np.ndarray]:
    """mSPRT over looks (last axis): ``log_m`` at each look, the always-valid ``p_value`` (running minimum),
    the confidence sequence ``ci_low`` / ``ci_high`` (running intersection) and ``reject`` (p <= alpha)."""
    d = np.asarray(estimate, dtype=np.float64)
    v = np.asarray(variance, dtype=np.float64)
    r = np.broadcast_to(np.asarray(rho, dtype=np.float64)[..., None] if np.ndim(rho) else rho, d.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        info = 1.0 / v
        s = d * info
        log_m = 0.5 * np.log(r / (info + r)) + s * s / (2 * (info + r))
        half = np.sqrt((info + r) * (np.log((info + r) / r) + 2 * math.log(1.0 / alpha))) / info
    p = np.minimum.accumulate(np.where(np.isnan(log_m), 1.0, np.minimum(1.0, np.exp(-log_m))), axis=-1)
    lo = np.maximum.accumulate(np.where(np.isnan(half), -np.inf, d - half), axis=-1)
    hi = np.minimum.accumulate(np.where(np.isnan(half), np.inf, d + half), axis=-1)
    return {"log_m": log_m, "p_value": p, "ci_low": lo, "ci_high": hi, "reject": p <= alpha}


def spent(kind: str, alpha: float, t: Any, rho: float = 2.0) -> np.ndarray:
    """Alpha spent by information fraction ``t`` (capped at 1): the Lan-DeMets spending functions.

    >>> [round(float(spent("pocock", 0.05, x)), 6) for x in (0.5, 1.0)]  # 0.05 log(1 + (e - 1) t)
    [0.031006, 0.05]
    """
    norm = require("scipy.stats").norm
    t = np.clip(np.asarray(t, dtype=np.float64), 0.0, 1.0)
    if kind == "obrien_fleming":  # on each side, alpha / 2 spent by 2 - 2 Phi(z_{alpha/4} / sqrt(t)) (gsDesign)
        with np.errstate(divide="ignore"):
            return np.where(t > 0, 4 - 4 * norm.cdf(norm.isf(alpha / 4) / np.sqrt(np.maximum(t, 1e-300))), 0.0)
    if kind == "pocock":
        return alpha * np.log(1 + (math.e - 1) * t)
    if kind == "power":
        return alpha * t ** rho
    raise InvalidParameterError(f"spending must be one of {', '.join(SPENDING)}; got {kind!r}.")


def boundaries(t: Any, alpha: float, kind: str = "obrien_fleming", rho: float = 2.0) -> np.ndarray:
    """Two-sided z boundaries ``c_k`` at information fractions ``t`` (increasing) spending ``alpha`` by ``kind``
    (inf where a look spends nothing).

    >>> bool(abs(boundaries([1.0], 0.05)[0] - 1.959964) < 1e-5)  # one look: the fixed-horizon test
    True
    """
    special = require("scipy.special")
    optimize = require("scipy.optimize")
    ndtr, ndtri = special.ndtr, special.ndtri
    t = np.asarray(t, dtype=np.float64)
    if t.ndim != 1 or len(t) == 0 or (np.diff(t) <= 0).any() or t[0] <= 0:
        raise InvalidParameterError(f"information fractions must increase from > 0; got {t.tolist()!r}.")
    inc = np.diff(np.r_[0.0, spent(kind, alpha, t, rho)])
    out = np.full(len(t), np.inf)  # boundaries on the Brownian scale B_k = Z_k sqrt(t_k) first
    grid = dens = np.zeros(0)
    for k in range(len(t)):
        sd = math.sqrt(t[k] - (t[k - 1] if k else 0.0))
        if k == 0:  # B_1 ~ N(0, t_1)
            if inc[k] > 0:
                out[k] = -ndtri(inc[k] / 2) * sd
            lim = out[k] if np.isfinite(out[k]) else 8 * sd
            grid = np.linspace(-lim, lim, _GRID)
            dens = np.exp(-0.5 * (grid / sd) ** 2) / (sd * math.sqrt(2 * math.pi))
            continue
        wd = _weights(grid) * dens

        def excess(a: float, wd: np.ndarray = wd, grid: np.ndarray = grid, sd: float = sd, due: float = inc[k]
                   ) -> float:
            """P(in the continuation region so far, beyond +-a now) - the alpha this look spends."""
            return float(np.sum(wd * (ndtr((grid - a) / sd) + ndtr((-a - grid) / sd)))) - due

        if inc[k] > 0 and excess(1e-9) > 0:
            # beyond max|grid| + sd z_{due/2} the crossing probability is below what is due
            top = float(np.abs(grid).max()) + sd * (1.0 - float(ndtri(min(inc[k], 0.5) / 2)))
            out[k] = optimize.brentq(excess, 1e-9, top, xtol=1e-10)
        lim = out[k] if np.isfinite(out[k]) else float(np.abs(grid).max()) + 8 * sd
        new = np.linspace(-lim, lim, _GRID)
        kern = np.exp(-0.5 * ((new[:, None] - grid[None, :]) / sd) ** 2) / (sd * math.sqrt(2 * math.pi))
        dens, grid = kern @ wd, new
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(out), out / np.sqrt(t), np.inf)


def _weights(grid: np.ndarray) -> np.ndarray:
    """Simpson's rule weights on an evenly spaced grid of odd length."""
    h = grid[1] - grid[0]
    w = np.ones(len(grid))
    w[1:-1:2], w[2:-1:2] = 4.0, 2.0
    return w * h / 3


def group_sequential(z: Any, t: Any, alpha: float, kind: str = "obrien_fleming", rho: float = 2.0
                     ) -> dict[str, np.ndarray]:
    """Boundaries at the looks' fractions ``t``, whether ``|z|`` crossed one so far, and the first look
    that did (-1: none)."""
    c = boundaries(t, alpha, kind, rho)
    zz = np.abs(np.asarray(z, dtype=np.float64))
    hit = zz >= c
    crossed = np.logical_or.accumulate(hit, axis=-1)
    first = np.where(hit.any(axis=-1), hit.argmax(axis=-1), -1)
    return {"boundary": c, "crossed": crossed, "first": first}


def repeated_p_value(z: Any, t: Any, kind: str = "obrien_fleming", rho: float = 2.0) -> float:
    """The smallest alpha whose boundaries the z statistics (one per look) cross at some look."""
    zz = np.abs(np.asarray(z, dtype=np.float64))
    if np.isnan(zz).all():
        return math.nan

    def crosses(a: float) -> bool:
        return bool((zz >= boundaries(t, a, kind, rho)).any())

    if not crosses(1.0 - 1e-9):
        return 1.0
    lo, hi = 1e-300, 1.0 - 1e-9
    if crosses(lo):
        return lo
    for _ in range(48):
        mid = math.sqrt(lo * hi) if hi / lo > 10 else (lo + hi) / 2
        lo, hi = (lo, mid) if crosses(mid) else (mid, hi)
    return hi


def _check_planned(planned: Any) -> None:
    if planned is not None and (isinstance(planned, bool) or not isinstance(planned, (int, np.integer))
                                or planned < 1):
        raise InvalidParameterError(f"`planned_units` must be None or an integer >= 1; got {planned!r}.")


@dataclass(frozen=True)
class AlwaysValid:
    """Always-valid inference (see the module). ``tau``: the mixing standard deviation in the measure's units
    (fixed in advance); else ``rho`` tuned at ``planned_units`` (or at the last look)."""

    tau: float | None = None
    planned_units: int | None = None
    name: str = "always_valid"

    def __post_init__(self) -> None:
        _check_planned(self.planned_units)
        t = self.tau
        ok = t is None or (not isinstance(t, bool) and isinstance(t, (int, float)) and 0 < t < math.inf
                           and float(t) * float(t) > 0 and math.isfinite(1.0 / (float(t) * float(t))))
        if not ok:  # rho = 1 / tau^2 must be a number (1e-300 squared is 0)
            raise InvalidParameterError(f"`tau` (the mixing standard deviation, in the measure's units) must be a "
                                        f"finite number > 0 whose 1 / tau^2 is finite; got {t!r}.")

    def rho(self, variance_last: float, units_last: int, alpha: float) -> float:
        """The mixture precision used."""
        if self.tau is not None:
            return 1.0 / (self.tau * self.tau)
        scale = (self.planned_units / units_last) if self.planned_units else 1.0
        return float(tuned_rho(scale / variance_last, alpha))


@dataclass(frozen=True)
class GroupSequential:
    """A group-sequential design: one look per day of data, information fraction = units so far /
    ``planned_units`` (default: the units at the last look, which is then the final one), ``spending`` one
    of :data:`SPENDING` (``rho`` the power family's exponent)."""

    planned_units: int | None = None
    spending: str = "obrien_fleming"
    rho: float = 2.0
    name: str = "group_sequential"

    def __post_init__(self) -> None:
        _check_planned(self.planned_units)
        if isinstance(self.rho, bool) or not isinstance(self.rho, (int, float)) or not 0 < self.rho < math.inf:
            raise InvalidParameterError(f"`rho` (the power spending's exponent) must be a finite number > 0; got "
                                        f"{self.rho!r}.")
        if self.spending not in SPENDING:
            raise InvalidParameterError(f"spending must be one of {', '.join(SPENDING)}; got {self.spending!r}.")


def design_of(sequential: Any) -> AlwaysValid | GroupSequential | None:
    """The design of ``ab_test(sequential=...)``: None, a name, or a design object."""
    if sequential is None or isinstance(sequential, (AlwaysValid, GroupSequential)):
        return sequential
    if sequential == "always_valid":
        return AlwaysValid()
    if sequential == "group_sequential":
        return GroupSequential()
    raise InvalidParameterError(f"`sequential` must be None, 'always_valid', 'group_sequential' or a design "
                                f"(AlwaysValid(...), GroupSequential(...)); got {sequential!r}.")
