"""How the store's reports turn per-list values into one value, an interval and a test, per measure.

One rule per kind, taken from the measure's :class:`~ranklens._registry.MeasureSpec` (the aggregate
``ranklens.evaluate`` uses):

* ``mean`` (most measures): the mean of the per-list values;
* ``geometric`` (``gm_map``, ``gm_bpref``): ``exp(mean(log(max(v, 0.00001))))``, trec_eval's geometric
  mean with its floor ``MIN_GEO_MEAN`` (trec_eval.h; :data:`ranklens.result.MIN_GEO_MEAN`);
* ``weighted`` (``gauc``): the mean weighted by each list's items (at most the cutoff);
* ``sum`` (``num_ret``, ``num_rel``, ``num_rel_ret``, ...): the total over the lists.

Each kind is a mean of per-list columns mapped back (:meth:`StoreAggregate.columns`,
:meth:`StoreAggregate.finish`): the bootstrap resamples lists and maps each resample's column means back
(so a geometric mean's interval is that of the geometric mean, a total's that of a total over as many
lists); Student's t runs on :meth:`StoreAggregate.test_values` (the per-list values; their logarithms for
a geometric mean, mapped back by ``exp``; a weighted mean's linearised values) and Welch's tests compare
those same test values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._core.intervals import bootstrap_means, t_interval
from ..._core.result import MIN_GEO_MEAN, list_weights
from ..propensity import parse_store_measure as parse_measure
from .stats import summary, welch

__all__ = ["KINDS", "StoreAggregate", "counted"]

KINDS = ("mean", "geometric", "weighted", "sum")


@dataclass(frozen=True)
class StoreAggregate:
    """The aggregate of one measure key in the store's reports.

    Parameters
    ----------
    key : str
        The measure key (``"gm_map"``).
    kind : {"mean", "geometric", "weighted", "sum"}
        See the module.
    cutoff : int or None
        The measure's cutoff (a list's weight is at most it, for ``weighted``).

    Examples
    --------
    >>> import numpy as np
    >>> a = StoreAggregate.of("gm_map")
    >>> a.kind, round(a.value(np.array([0.25, 1.0])), 6)  # sqrt(0.25 * 1.0)
    ('geometric', 0.5)
    >>> StoreAggregate.of("num_rel_ret").value(np.array([2.0, 3.0]))
    5.0
    """

    key: str
    kind: str
    cutoff: int | None = None

    @classmethod
    def of(cls, key: str) -> StoreAggregate:
        """The aggregate of ``key`` from its measure's fields (``summed``, ``aggregate``, ``weighting``)."""
        m = parse_measure(key)[0]
        spec = m.spec
        if spec.summed:
            kind = "sum"
        elif spec.aggregate == "geometric":
            kind = "geometric"
        elif spec.weighting == "impressions":
            kind = "weighted"
        else:
            kind = "mean"
        return cls(m.key, kind, m.k)

    @property
    def scale(self) -> str:
        """The scale of slice contributions and tests: ``log`` (geometric), ``total`` (sum), else ``value``."""
        return {"geometric": "log", "sum": "total"}.get(self.kind, "value")

    def weights(self, n_items: np.ndarray) -> np.ndarray | None:
        """Each list's weight from its number of items (``weighted``: at most the cutoff); None: unweighted."""
        return list_weights(n_items, self.cutoff) if self.kind == "weighted" else None

    def transform(self, v: np.ndarray) -> np.ndarray:
        """Per-list values on the scale their mean is taken (``log(max(v, 0.00001))`` for geometric)."""
        v = np.asarray(v, dtype=np.float64)
        return np.log(np.maximum(v, MIN_GEO_MEAN)) if self.kind == "geometric" else v

    def back(self, m: Any, n: Any = 1) -> Any:
        """A mean on the transformed scale mapped back to the measure's (``n`` lists, for a total)."""
        if self.kind == "geometric":
            return np.exp(m)
        if self.kind == "sum":
            return np.asarray(n) * m
        return m

    def columns(self, v: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
        """The per-list columns whose means :meth:`finish` maps to the aggregate."""
        x = self.transform(v)
        if self.kind == "weighted":
            ww = np.ones_like(x) if w is None else np.asarray(w, dtype=np.float64)
            return np.column_stack([ww * x, ww])
        return x.reshape(-1, 1)

    def finish(self, means: np.ndarray, n: Any) -> Any:
        """Column means (last axis) of ``n`` lists -> the aggregate."""
        if self.kind == "weighted":
            with np.errstate(invalid="ignore", divide="ignore"):
                return means[..., 0] / means[..., 1]
        return self.back(means[..., 0], n)

    def value(self, v: np.ndarray, w: np.ndarray | None = None) -> float:
        """The aggregate of the counted values ``v`` (weights ``w``); NaN when there are none."""
        if len(v) == 0:
            return math.nan
        return float(self.finish(self.columns(v, w).mean(axis=0), len(v)))

    def test_values(self, v: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
        """The per-list values whose mean Welch's test and Student's t take: the values (mean, sum: the
        per-list counts), their logarithms (geometric), or a weighted mean's linearised values
        ``m + (w / mean(w)) (v - m)`` (their mean is ``m``, their variance the delta method's)."""
        x = self.transform(v)
        if self.kind != "weighted" or len(x) == 0:
            return x
        ww = np.ones_like(x) if w is None else np.asarray(w, dtype=np.float64)
        m = float((ww * x).sum() / ww.sum())
        return m + ww / ww.mean() * (x - m)

    def interval(self, v: np.ndarray, w: np.ndarray | None, ci: str | None, confidence: float, n_resamples: int,
                 seed: int) -> tuple[float, float]:
        """(low, high) of the aggregate: percentile bootstrap over lists (``"bootstrap"``), Student's t on the
        test values mapped back (``"t"``), or none (NaN); NaN under 2 lists."""
        if ci not in ("bootstrap", "t") or len(v) < 2:
            return math.nan, math.nan
        n = len(v)
        if ci == "t":
            iv = t_interval(self.test_values(v, w), confidence)
            return float(self.back(iv.low, n)), float(self.back(iv.high, n))
        cols = self.columns(v, w)
        if np.all(cols == cols[0]):
            x = self.value(v, w)
            return x, x
        boot = self.finish(bootstrap_means(np.ascontiguousarray(cols), n_resamples, seed), n)
        alpha = 1 - confidence
        lo, hi = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
        return float(lo), float(hi)

    def summary(self, v: np.ndarray, w: np.ndarray | None, confidence: float, n_resamples: int,
                seed: int) -> dict[str, Any]:
        """Aggregate of the counted values with its percentile bootstrap interval over lists."""
        if self.kind == "mean":  # the plain mean's summary, as before
            return summary(v, confidence, n_resamples, seed)
        lo, hi = self.interval(v, w, "bootstrap", confidence, n_resamples, seed)
        return {"value": self.value(v, w), "ci_low": lo, "ci_high": hi, "n_groups": len(v)}

    def difference(self, a: np.ndarray, wa: np.ndarray | None, b: np.ndarray, wb: np.ndarray | None,
                   confidence: float, n_resamples: int, seed: int) -> dict[str, Any]:
        """aggregate(a) - aggregate(b), the percentile interval from bootstrapping each side's lists, and
        Welch's test of the test values (for a total: of the per-list counts)."""
        d = self.value(a, wa) - self.value(b, wb) if len(a) and len(b) else math.nan
        if len(a) < 2 or len(b) < 2:
            return {"difference": d, "ci_low": math.nan, "ci_high": math.nan, "p_value": math.nan, "test": "welch"}
        ba = self.finish(bootstrap_means(np.ascontiguousarray(self.columns(a, wa)), n_resamples, seed), len(a))
        bb = self.finish(bootstrap_means(np.ascontiguousarray(self.columns(b, wb)), n_resamples, seed + 1), len(b))
        alpha = 1 - confidence
        lo, hi = np.quantile(ba - bb, [alpha / 2, 1 - alpha / 2])
        t = welch(self.test_values(a, wa), self.test_values(b, wb))
        return {"difference": d, "ci_low": float(lo), "ci_high": float(hi), "p_value": t["p_value"],
                "statistic": t["statistic"], "df": t["df"], "test": "welch"}


def counted(agg: StoreAggregate, v: np.ndarray, n_items: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """(values, weights) of the counted lists: a value, and for a weighted mean a known number of items."""
    w = agg.weights(np.asarray(n_items, dtype=np.float64)) if agg.kind == "weighted" else None
    ok = ~np.isnan(v) if w is None else ~np.isnan(v) & ~np.isnan(w)
    return v[ok], (w[ok] if w is not None else None)
