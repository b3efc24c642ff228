"""Offline against online: how past experiments' offline deltas predicted their online deltas.

A table of past experiments holds, per experiment, the offline difference of a ranking measure on judged data
(``offline``, with its standard error ``offline_se`` when known) and the online difference of a measure in the
A/B test (``online``, with ``online_se``). :func:`calibrate` reports:

* **sign agreement**: the share of experiments whose online delta has the offline delta's sign, over all of them
  and over those whose online delta is significant (``|online| / online_se > z_{1 - alpha/2}``);
* **Kendall's tau-b** between the two deltas (ties counted as in Kendall 1945), with its two-sided p-value
  from the normal approximation of its variance under independence, ties corrected;
* **the regression of online on offline delta**, with intervals for its slope and intercept and the predicted
  online delta (with a prediction interval) for new offline deltas. Both deltas are measured with error, and
  ordinary least squares of online on offline is then biased toward 0 (attenuation); so when both standard
  errors are given the regression is **Deming's** (errors in both variables, their variance ratio
  ``lambda = mean(online_se^2) / mean(offline_se^2)``; intervals by the jackknife over experiments, Student t
  with n - 2 degrees of freedom), else **weighted least squares** with weights ``1 / online_se^2`` when
  ``online_se`` is given, else **ordinary least squares** (intervals from the t distribution). The method is
  named in the result.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._base.deps import require
from ..errors import InputError, InvalidParameterError

__all__ = ["Calibration", "calibrate", "deming", "kendall_tau"]


def kendall_tau(x: Any, y: Any) -> tuple[float, float]:
    """Kendall's tau-b and its two-sided asymptotic p-value (ties corrected).

    >>> round(kendall_tau([1, 2, 3, 4], [1, 3, 2, 4])[0], 6)  # 5 concordant, 1 discordant pair of 6
    0.666667
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n = len(x)
    i, j = np.triu_indices(n, k=1)
    sx, sy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    s = float(np.sum(sx * sy))
    n0 = n * (n - 1) / 2
    tx = _tie_sizes(x)
    ty = _tie_sizes(y)
    n1, n2 = float(np.sum(tx * (tx - 1)) / 2), float(np.sum(ty * (ty - 1)) / 2)
    den = math.sqrt((n0 - n1) * (n0 - n2))
    tau = s / den if den > 0 else math.nan
    v0 = n * (n - 1) * (2 * n + 5)
    vt = float(np.sum(tx * (tx - 1) * (2 * tx + 5)))
    vu = float(np.sum(ty * (ty - 1) * (2 * ty + 5)))
    var = (v0 - vt - vu) / 18
    if n > 2:
        var += float(np.sum(tx * (tx - 1) * (tx - 2))) * float(np.sum(ty * (ty - 1) * (ty - 2))) / (
            9 * n * (n - 1) * (n - 2))
    var += float(np.sum(tx * (tx - 1))) * float(np.sum(ty * (ty - 1))) / (2 * n * (n - 1))
    if var <= 0 or math.isnan(tau):
        return tau, math.nan
    p = float(2 * require("scipy.stats").norm.sf(abs(s) / math.sqrt(var)))
    return tau, min(1.0, p)


def _tie_sizes(v: np.ndarray) -> np.ndarray:
    _, counts = np.unique(v, return_counts=True)
    return counts[counts > 1].astype(np.float64)


def deming(x: Any, y: Any, ratio: float) -> tuple[float, float]:
    """(slope, intercept) of Deming's regression of ``y`` on ``x`` with error variance ratio
    ``ratio = var(error of y) / var(error of x)``.

    >>> [round(v, 9) for v in deming([0, 1, 2], [1, 3, 5], 1.0)]  # points on a line: the line
    [2.0, 1.0]
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    mx, my = x.mean(), y.mean()
    sxx, syy, sxy = np.mean((x - mx) ** 2), np.mean((y - my) ** 2), np.mean((x - mx) * (y - my))
    if sxy == 0:
        return math.nan, math.nan
    d = syy - ratio * sxx
    slope = (d + math.sqrt(d * d + 4 * ratio * sxy * sxy)) / (2 * sxy)
    return float(slope), float(my - slope * mx)


@dataclass(frozen=True)
class Calibration:
    """What past experiments say about offline deltas as predictors of online ones (see the module)."""

    n: int
    sign_agreement: float
    n_significant: int
    sign_agreement_significant: float
    kendall_tau: float
    kendall_p_value: float
    method: str
    slope: float
    slope_ci: tuple[float, float]
    intercept: float
    intercept_ci: tuple[float, float]
    alpha: float
    predictions: tuple[dict[str, float], ...] = field(default=())

    def rows(self) -> list[dict[str, Any]]:
        """One row per statistic (``statistic``, ``value``, ``ci_low``, ``ci_high``), then the predictions."""
        out: list[dict[str, Any]] = [
            {"statistic": "experiments", "value": self.n, "ci_low": None, "ci_high": None},
            {"statistic": "sign agreement", "value": self.sign_agreement, "ci_low": None, "ci_high": None},
            {"statistic": f"sign agreement ({self.n_significant} significant online)",
             "value": self.sign_agreement_significant, "ci_low": None, "ci_high": None},
            {"statistic": "kendall tau-b", "value": self.kendall_tau, "ci_low": None, "ci_high": None},
            {"statistic": "kendall p-value", "value": self.kendall_p_value, "ci_low": None, "ci_high": None},
            {"statistic": f"slope ({self.method})", "value": self.slope, "ci_low": self.slope_ci[0],
             "ci_high": self.slope_ci[1]},
            {"statistic": f"intercept ({self.method})", "value": self.intercept, "ci_low": self.intercept_ci[0],
             "ci_high": self.intercept_ci[1]},
        ]
        for p in self.predictions:
            out.append({"statistic": f"predicted online delta at offline {p['offline']:g}", "value": p["predicted"],
                        "ci_low": p["low"], "ci_high": p["high"]})
        return out


def _col(table: Any, name: str | None, what: str) -> np.ndarray | None:
    if name is None:
        return None
    low = {c.lower(): c for c in table.column_names}
    if name.lower() not in low:
        raise InputError(f"experiments: no column {name!r} ({what}); columns are {', '.join(table.column_names)}.")
    col = table.column(low[name.lower()])
    if col.null_count:
        raise InputError(f"experiments: column {name!r} has an empty value.")
    try:
        v = col.to_numpy().astype(np.float64)
    except (TypeError, ValueError):
        raise InputError(f"experiments: column {name!r} must be numbers.") from None
    if not np.isfinite(v).all():
        raise InputError(f"experiments: column {name!r} holds a value that is not a finite number.")
    return v


def calibrate(experiments: Any, *, offline: str = "offline_delta", online: str = "online_delta",
              online_se: str | None = "online_se", offline_se: str | None = "offline_se", alpha: float = 0.05,
              predict: Sequence[float] = ()) -> Calibration:
    """Calibrate offline deltas against online ones over a table of past experiments (see the module).

    Parameters
    ----------
    experiments : table or path
        One row per experiment (pyarrow / pandas / polars, or a CSV / Parquet / JSON Lines file).
    offline, online : str
        Columns of the offline and online deltas.
    online_se, offline_se : str or None
        Columns of their standard errors; a column named by default and absent is left out.
    alpha : float
        1 - the intervals' coverage, and the level of "significant online".
    predict : sequence of float
        New offline deltas whose online delta is predicted.

    Examples
    --------
    >>> import pyarrow as pa
    >>> t = pa.table({"offline_delta": [0.01, 0.02, -0.01, 0.03, 0.005],
    ...               "online_delta": [0.004, 0.009, -0.003, 0.012, 0.001]})
    >>> c = calibrate(t, predict=[0.015])
    >>> c.method, c.sign_agreement, round(c.kendall_tau, 3)
    ('ols', 1.0, 1.0)
    """
    from ._events import read_events

    if not 0 < alpha < 1:
        raise InvalidParameterError(f"`alpha` must be in (0, 1); got {alpha!r}.")
    t = read_events(experiments)
    names = {c.lower() for c in t.column_names}
    x = _col(t, offline, "the offline delta")
    y = _col(t, online, "the online delta")
    assert x is not None and y is not None
    se_y = _col(t, online_se, "the online standard error") if online_se and online_se.lower() in names else None
    se_x = _col(t, offline_se, "the offline standard error") if offline_se and offline_se.lower() in names else None
    n = len(x)
    if n < 3:
        raise InputError(f"experiments: {n} rows; calibration needs at least 3 past experiments.")
    stats = require("scipy.stats")
    zc = float(stats.norm.isf(alpha / 2))
    agree = np.sign(x) == np.sign(y)
    sig = (np.abs(y) / se_y > zc) if se_y is not None else np.zeros(n, dtype=bool)
    tau, tau_p = kendall_tau(x, y)
    tq = float(stats.t.isf(alpha / 2, n - 2))
    if se_x is not None and se_y is not None:
        method = "deming"
        ratio = float(np.mean(se_y ** 2) / np.mean(se_x ** 2)) if np.mean(se_x ** 2) > 0 else math.inf
        slope, icpt, slope_se, icpt_se, pred = _deming_fit(x, y, ratio, predict)
    else:
        w = 1.0 / se_y ** 2 if se_y is not None else np.ones(n)
        method = "wls" if se_y is not None else "ols"
        slope, icpt, slope_se, icpt_se, pred = _wls_fit(x, y, w, predict)
    preds = tuple({"offline": float(x0), "predicted": float(m), "low": float(m - tq * s), "high": float(m + tq * s)}
                  for x0, (m, s) in zip(predict, pred))
    return Calibration(n, float(agree.mean()), int(sig.sum()),
                       float(agree[sig].mean()) if sig.any() else math.nan, tau, tau_p, method, slope,
                       (slope - tq * slope_se, slope + tq * slope_se), icpt, (icpt - tq * icpt_se, icpt + tq * icpt_se),
                       alpha, preds)


def _wls_fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, predict: Sequence[float]
             ) -> tuple[float, float, float, float, list[tuple[float, float]]]:
    """Weighted least squares: coefficients, their standard errors, and (prediction, its prediction error)."""
    n = len(x)
    a = np.column_stack([np.ones(n), x])
    sw = np.sqrt(w)
    coef, *_ = np.linalg.lstsq(a * sw[:, None], y * sw, rcond=None)
    resid = y - a @ coef
    s2 = float(np.sum(w * resid ** 2) / (n - 2))
    cov = s2 * np.linalg.inv((a * w[:, None]).T @ a)
    pred = []
    for x0 in predict:
        v = np.array([1.0, float(x0)])
        # a new experiment: the line's uncertainty plus one experiment's scatter (at the mean weight)
        pred.append((float(v @ coef), math.sqrt(float(v @ cov @ v) + s2 / float(np.mean(w)))))
    return float(coef[1]), float(coef[0]), math.sqrt(cov[1, 1]), math.sqrt(cov[0, 0]), pred


def _deming_fit(x: np.ndarray, y: np.ndarray, ratio: float, predict: Sequence[float]
                ) -> tuple[float, float, float, float, list[tuple[float, float]]]:
    """Deming's fit with jackknife standard errors of the coefficients and of each prediction."""
    n = len(x)
    slope, icpt = deming(x, y, ratio)
    keep = ~np.eye(n, dtype=bool)
    loo = np.array([deming(x[k], y[k], ratio) for k in keep])  # n fits of n - 1 experiments (n is small)
    jk = lambda v: math.sqrt((n - 1) / n * float(np.sum((v - v.mean()) ** 2)))  # noqa: E731
    resid = y - (icpt + slope * x)
    scatter = float(np.sum(resid ** 2) / (n - 2))
    pred = []
    for x0 in predict:
        loo_pred = loo[:, 1] + loo[:, 0] * float(x0)
        pred.append((icpt + slope * float(x0), math.sqrt(jk(loo_pred) ** 2 + scatter)))
    return slope, icpt, jk(loo[:, 0]), jk(loo[:, 1]), pred
