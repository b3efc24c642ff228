"""Feature drift: the distribution of a feature column of the served items in a window against the baseline's.

A feature is a column of the events declared in ``[signals] features`` (``numeric`` or ``categorical``),
stored with the items (:mod:`ranklens.monitor.storage.events`). Per window and series, the values of the
window's served rows are compared with those of the baseline's rows (the same baseline as every signal:
the training lists of the same model version, a date range, or the previous window). Definitions
(``docs/monitoring.md``, "Feature drift"):

* **bins**: for a numeric feature, the deciles of the baseline's values (numpy's linear quantiles; a value
  equal to an edge goes to the bin above; repeated edges merged), as for ``psi(score)``; for a categorical
  feature, one bin per value seen in the window or the baseline;
* ``psi(feature:NAME)``: ``sum_b (w_b - r_b) ln(w_b / r_b)`` over the bins, a share of 0 replaced by 1e-4;
* ``js(feature:NAME)``: the Jensen-Shannon **distance** of the two histograms, natural logarithm (scipy's
  ``jensenshannon``, Evidently's rule; no zero fill): ``sqrt((KL(w || m) + KL(r || m)) / 2)``,
  ``m = (w + r) / 2``; between 0 and ``sqrt(ln 2)`` ~ 0.833;
* ``ks(feature:NAME)`` (numeric only): the two-sample Kolmogorov-Smirnov ``D`` of the values with its
  asymptotic p-value, as ``ks(score)``.

A missing value (no column in the batch, empty, or for a numeric feature not a finite number) is left out
and counted (``n_excluded`` of the window).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from ..._base.deps import require
from ...errors import InvalidParameterError
from .names import FEATURE_KINDS, SignalName

__all__ = ["DECILES", "check_features", "feature_arrays", "feature_distance", "js_distance", "shares"]

#: The quantiles whose baseline values are a numeric feature's (and the scores') bin edges.
DECILES = np.arange(1, 10) / 10.0


def shares(window_counts: np.ndarray, baseline_counts: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The two histograms as shares (each summing to 1), or None when either is empty.

    Examples
    --------
    >>> shares(np.array([1, 3]), np.array([2, 2]))
    (array([0.25, 0.75]), array([0.5, 0.5]))
    """
    w = np.asarray(window_counts, dtype=np.float64)
    r = np.asarray(baseline_counts, dtype=np.float64)
    if w.sum() == 0 or r.sum() == 0:
        return None
    return w / w.sum(), r / r.sum()


def js_distance(window_counts: np.ndarray, baseline_counts: np.ndarray) -> float:
    """Jensen-Shannon distance (natural log) of two histograms over the same bins.

    Examples
    --------
    >>> round(js_distance(np.array([1, 0]), np.array([0, 1])), 6)  # disjoint: sqrt(ln 2)
    0.832555
    """
    both = shares(window_counts, baseline_counts)
    if both is None:
        return math.nan
    w, r = both
    m = (w + r) / 2

    def kl(p: np.ndarray) -> float:
        ok = p > 0
        return float(np.sum(p[ok] * np.log(p[ok] / m[ok])))

    return math.sqrt(max((kl(w) + kl(r)) / 2, 0.0))


def feature_distance(kind: str, categorical: bool, window: np.ndarray, baseline: np.ndarray,
                     psi: Callable[[np.ndarray, np.ndarray], float],
                     ks: Callable[[np.ndarray, np.ndarray], tuple[float, float]]) -> dict[str, Any]:
    """``value``, ``p_value``, ``n``, ``n_baseline``, ``n_excluded`` of one feature distance on one cell.

    ``window`` and ``baseline`` hold the values of the rows: floats (NaN: missing) for a numeric feature,
    codes into one dictionary shared by both (-1: missing) for a categorical one; ``psi`` and ``ks`` are the
    signals' own definitions (:mod:`ranklens.monitor.signals.compute`).
    """
    w_ok = window >= 0 if categorical else ~np.isnan(window)
    b_ok = baseline >= 0 if categorical else ~np.isnan(baseline)
    w, b = window[w_ok], baseline[b_ok]
    out: dict[str, Any] = {"value": math.nan, "baseline": math.nan, "p_value": math.nan, "n": int(w.shape[0]),
                           "n_baseline": int(b.shape[0]), "n_excluded": int((~w_ok).sum())}
    if w.shape[0] == 0 or b.shape[0] == 0:
        return out
    if kind == "ks":
        out["value"], out["p_value"] = ks(w, b)
        return out
    if categorical:
        nb = int(max(w.max(), b.max())) + 1
        wc, bc = np.bincount(w.astype(np.int64), minlength=nb), np.bincount(b.astype(np.int64), minlength=nb)
        seen = (wc + bc) > 0
        wc, bc = wc[seen], bc[seen]
    else:
        edges = np.unique(np.quantile(b, DECILES))
        nb = edges.shape[0] + 1
        wc = np.bincount(np.searchsorted(edges, w, side="right"), minlength=nb)
        bc = np.bincount(np.searchsorted(edges, b, side="right"), minlength=nb)
    out["value"] = psi(wc, bc) if kind == "psi" else js_distance(wc, bc)
    return out


def check_features(keys: list[SignalName], stored: dict[str, str]) -> list[str]:
    """The features the signals compare, each stored, and of a kind its distance applies to (else an error)."""
    out: list[str] = []
    for sig in keys:
        f = sig.feature
        if f is None:
            continue
        if f not in stored:
            raise InvalidParameterError(
                f"signal {sig.key!r}: the store has no feature {f!r} (features: {', '.join(sorted(stored)) or 'none'}"
                "; a feature is an event column named in [signals] features of the configuration at ingest).")
        if sig.kind not in FEATURE_KINDS[stored[f]]:
            raise InvalidParameterError(f"signal {sig.key!r}: {f} is a {stored[f]} feature; {sig.kind} compares "
                                        f"numbers (use {' or '.join(FEATURE_KINDS[stored[f]])}).")
        if f not in out:
            out.append(f)
    return out


def feature_arrays(t: Any, features: Iterable[str], codes: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The ``feature:<name>`` columns of a fetched Arrow table as arrays: floats (NaN: missing), or for a
    categorical feature (in ``codes``: its values, shared by the window and the baselines) codes (-1: missing)."""
    pc = require("pyarrow.compute")
    out: dict[str, np.ndarray] = {}
    for f in features:
        col = t.column("feature:" + f)
        if f in codes:
            out[f] = np.asarray(pc.fill_null(pc.index_in(col, value_set=codes[f]), -1).to_numpy(
                zero_copy_only=False)).astype(np.int64)
        else:
            out[f] = np.asarray(pc.fill_null(col.cast("double"), float("nan")).to_numpy(zero_copy_only=False),
                                dtype=np.float64)
    return out
