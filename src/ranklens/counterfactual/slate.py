"""Slate estimators with logged propensities, on the Open Bandit Pipeline's column layout (obp).

One row per (slate, slot): ``slate_id``, ``position`` (obp's, 0-based), ``reward`` (the slot's reward, e.g. a
click), the logging policy's ``pscore`` (the whole slate's probability, the same on each of its rows),
``pscore_item_position`` (the item's probability at that slot) and ``pscore_cascade`` (the probability of the
slate's items down to that slot), and the same three with a ``target_`` prefix for the evaluated policy. With
``n`` slates and ``w`` the ratio of the target's to the logging policy's probability, the value is the expected
**sum** of slot rewards of a slate:

* ``sips`` (McInerney et al. 2020): ``(1/n) sum w(pscore) r``; ``iips`` (Li et al. 2018): the item-position
  ratio; ``rips`` (reward interaction, McInerney et al. 2020): the cascade ratio;
* ``snsips``, ``sniips``, ``snrips``: self-normalised, ``sum_l sum_i w_il r_il / sum_i w_il`` (per slot;
  snsips over all rows, its ratio being the slate's);
* ``cascade_dr`` (Kiyohara et al., WSDM 2022): ``(1/n) sum_i sum_l [w_1:l (r_l - q_hat_l(a_1:l))
  + w_1:l-1 sum_a target(a | a_1:l-1) q_hat_l(a_1:l-1, a)]``, ``w_1:0 = 1``, with the list columns ``q_hat`` (the
  estimated reward of every action at that slot given the slots above) and ``target_action_dist`` (the target
  policy's probability of every action there); slates complete and sorted by position.

These are obp's definitions (``obp.ope.estimators_slate``); tests compare with obp. Intervals: the estimator's
variance over slates (``ci="normal"``; the self-normalised ones by the delta method) or a bootstrap of slates.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

import numpy as np

from .._input.logs import LogTable
from ..errors import InputError, InvalidParameterError
from ._log import codes

__all__ = ["SLATE_ESTIMATORS", "slate_interval", "slate_values"]

SLATE_ESTIMATORS = ("sips", "iips", "rips", "snsips", "sniips", "snrips", "cascade_dr")
_PSCORE = {"sips": "pscore", "iips": "pscore_item_position", "rips": "pscore_cascade", "cascade_dr": "pscore_cascade"}


def _propensity(t: LogTable, name: str, *, target: bool) -> np.ndarray:
    if not t.has(name):
        raise InvalidParameterError(f"no column {name!r} in {t.where} (columns: {', '.join(t.names)}); the "
                                    "slate estimators read obp's layout.")
    p = t.numbers(name, "propensity").astype(np.float64, copy=False)
    bad = (p < 0) | (p > 1) | ((p == 0) if not target else False)
    if bad.any():
        row = int(np.argmax(bad))
        rule = "in [0, 1]" if target else "in (0, 1] (a logged slate had a chance to be shown)"
        raise t.holds(name, row, p[row], f"a propensity is {rule}.")
    return p


def _lists(t: LogTable, name: str) -> np.ndarray:
    import pyarrow as pa

    where = t.where
    if not t.has(name):
        raise InvalidParameterError(f"cascade_dr needs the list column {name!r} in {where} (obp's q_hat and "
                                    "evaluation_policy_action_dist, one list per row).")
    col = t.arrow(name, "list")
    if not (pa.types.is_list(col.type) or pa.types.is_large_list(col.type) or pa.types.is_fixed_size_list(col.type)):
        raise InputError(f"{where}: column {name!r} must hold one list of numbers per row (one per action).")
    sizes = np.asarray(col.value_lengths().to_numpy(zero_copy_only=False))
    if len(set(sizes.tolist())) != 1:
        raise InputError(f"{where}: column {name!r} has lists of different lengths; one value per action.")
    flat = np.asarray(col.flatten().to_numpy(zero_copy_only=False), dtype=np.float64)
    return flat.reshape(len(col), int(sizes[0]))


def slate_values(log: Any, estimator: str) -> tuple[float, np.ndarray, dict[str, Any]]:
    """(value, per-slate values whose mean is the value, diagnostics): the slate's sum of weighted rewards, or
    for the self-normalised estimators the value plus the slate's influence (the ratio linearised)."""
    t = LogTable(log, "slate log")
    where = t.where
    slate_col = t.find("slate", None, ("slate_id", "group_id"), hint="a slate_id column")
    assert slate_col is not None
    slate, _ = codes(t, slate_col, "slate", with_ids=False)
    t.need("position", "position")
    position = t.numbers("position", "position")
    if ((position < 0) | (position != np.round(position))).any():
        row = int(np.argmax((position < 0) | (position != np.round(position))))
        raise t.holds("position", row, position[row], "obp's positions are integers from 0.")
    pos = position.astype(np.int64)
    t.need("reward", "reward")
    reward = t.numbers("reward", "reward").astype(np.float64, copy=False)
    n = int(slate.max()) + 1
    kind = estimator[2:] if estimator.startswith("sn") else estimator
    col = _PSCORE[kind]
    pb = _propensity(t, col, target=False)
    pe = _propensity(t, f"target_{col}", target=True)
    w = pe / pb
    ess = float(n * w.mean() ** 2 / (w ** 2).mean()) if (w > 0).any() else 0.0  # slates of equal weight
    diag: dict[str, Any] = {"slates": n, "rows": len(w), "effective_sample_size": ess, "max_weight": float(w.max())}
    if kind == "sips":
        first = np.full(n, np.nan)
        first[slate] = pb
        if (np.abs(first[slate] - pb) > 1e-12 * np.maximum(pb, 1e-300)).any():
            row = int(np.argmax(np.abs(first[slate] - pb) > 1e-12 * pb))
            raise InputError(f"{where}: column 'pscore' differs within slate (row {row}); it is the whole slate's "
                             "probability, the same on each of its rows.")
    if kind == "cascade_dr":
        return _cascade_dr(t, slate, pos, reward, w, n, diag)
    contrib = w * reward
    if not estimator.startswith("sn"):
        return float(contrib.sum() / n), np.bincount(slate, weights=contrib, minlength=n), diag
    if kind == "sips":  # snsips: one ratio, the joint weight's mean over all rows (obp)
        a = np.bincount(slate, weights=contrib, minlength=n)
        b = np.bincount(slate, weights=w, minlength=n) * n / len(w)
        if b.sum() <= 0:
            raise InputError(f"{where}: the target policy gives every logged slate probability 0; the "
                             "self-normalised estimate has no value.")
        value = float(a.sum() / b.sum())
        return value, value + (a - value * b) / b.mean(), diag
    wsum = np.bincount(pos, weights=w)
    if (wsum[np.bincount(pos) > 0] <= 0).any():
        raise InputError(f"{where}: the target policy gives every logged item of a position probability 0; the "
                         "self-normalised estimate has no value.")
    part = np.bincount(pos, weights=contrib) / np.where(wsum > 0, wsum, 1.0)  # per position: sum w r / sum w
    value = float(part.sum())
    infl = n * (contrib - part[pos] * w) / np.where(wsum > 0, wsum, 1.0)[pos]
    return value, value + np.bincount(slate, weights=infl, minlength=n), diag


def _cascade_dr(t: LogTable, slate: np.ndarray, pos: np.ndarray, reward: np.ndarray, w: np.ndarray,
                n: int, diag: dict[str, Any]) -> tuple[float, np.ndarray, dict[str, Any]]:
    where = t.where
    q_hat = _lists(t, "q_hat")
    dist = _lists(t, "target_action_dist")
    item_col = "item_id" if t.has("item_id") else "action"
    action = t.numbers(item_col, "action").astype(np.int64)
    L = int(pos.max()) + 1
    if len(w) != n * L or not (np.array_equal(pos, np.tile(np.arange(L), n))
                               and np.array_equal(slate, np.repeat(np.arange(n), L))):
        raise InputError(f"{where}: cascade_dr needs complete slates sorted by slate and position (0..{L - 1}).")
    if q_hat.shape != dist.shape or (action < 0).any() or (action >= q_hat.shape[1]).any():
        raise InputError(f"{where}: q_hat and target_action_dist need one value per action ({q_hat.shape[1]}) and "
                         "item ids 0..n_actions-1.")
    q_obs = q_hat[np.arange(len(action)), action]
    expected = (dist * q_hat).sum(axis=1)
    w_prev = np.ones_like(w)
    w_prev[pos > 0] = w[np.flatnonzero(pos > 0) - 1]
    contrib = w * (reward - q_obs) + w_prev * expected
    return float(contrib.sum() / n), np.bincount(slate, weights=contrib, minlength=n), diag


def slate_interval(value: float, per_slate: np.ndarray, confidence: float, ci: str, n_resamples: int, seed: int
                   ) -> tuple[float, float, float]:
    """(se, low, high) from the per-slate values (normal, or a percentile bootstrap of their mean)."""
    n = len(per_slate)
    se = float(per_slate.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    if ci == "normal":
        z = statistics.NormalDist().inv_cdf(0.5 + confidence / 2)
        return se, value - z * se, value + z * se
    from .._core.intervals import bootstrap_means

    boot = bootstrap_means(per_slate[:, None], n_resamples, seed)[:, 0] + (value - float(per_slate.mean()))
    a = (1 - confidence) / 2
    lo, hi = np.quantile(boot, [a, 1 - a])
    return float(boot.std(ddof=1)), float(lo), float(hi)

