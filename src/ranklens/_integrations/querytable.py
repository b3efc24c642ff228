"""Per-query values of several named quantities, their means and confidence intervals, in every output format.

The result of the measures that :func:`ranklens.evaluate`'s registry does not hold (fairness of exposure,
the two stages of a system): :class:`QueryTable`. Intervals come from :mod:`ranklens.stats` (bootstrap
percentile or BCa, or t), over the queries that have a value.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._base.display import html_table, latex_table, markdown_table, text_table
from .._core import intervals as I
from .._core import stats as S
from .._core.schema import plain
from ..errors import InvalidParameterError

__all__ = ["CI_METHODS", "QueryTable"]

#: The intervals a :class:`QueryTable` gives its means.
CI_METHODS = ("bca", "percentile", "t")
_FORMATS = ("table", "json", "csv", "markdown", "latex", "html")


def _py(q: Any) -> Any:
    return q.item() if isinstance(q, np.generic) else q


@dataclass
class QueryTable:
    """Per-query values of named quantities (``measures``), their means and intervals.

    Attributes
    ----------
    measures : list of str
        The quantities, in order (the columns of ``values``).
    queries : ndarray
        Query ids (the rows of ``values``).
    values : ndarray of shape (n_queries, n_measures)
        Per-query values; NaN where a query has none (left out of that mean).
    intervals : dict
        Measure -> :class:`ranklens.stats.Interval` of its mean over the queries with a value.
    settings : dict
        The parameters the values were computed with (and the interval's).
    notes : list of str
        What was left out, and why; what a definition says.
    """

    measures: list[str]
    queries: np.ndarray
    values: np.ndarray
    intervals: dict[str, Any]
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    title: str = ""

    @classmethod
    def build(cls, measures: Sequence[str], queries: np.ndarray, values: np.ndarray, *, confidence: float = 0.95,
              ci: str = "bca", n_resamples: int = 10000, seed: int = 0, settings: dict[str, Any] | None = None,
              notes: Sequence[str] = (), title: str = "") -> QueryTable:
        """The table of ``values`` with each measure's interval (``ci``: bca, percentile or t)."""
        if ci not in CI_METHODS:
            raise InvalidParameterError(f"`ci` must be one of {', '.join(CI_METHODS)}; got {ci!r}.")
        c, n_resamples, seed = S.check_confidence(confidence), S.check_resamples(n_resamples), S.check_seed(seed)
        values = np.asarray(values, np.float64).reshape(len(queries), len(measures))
        intervals = {}
        for j, m in enumerate(measures):
            x = values[:, j][~np.isnan(values[:, j])]
            if x.shape[0] < 2:
                mean = float(x.mean()) if x.shape[0] else math.nan
                intervals[m] = I.Interval(mean, math.nan, math.nan, c, ci, int(x.shape[0]))
            elif ci == "t":
                intervals[m] = I.t_interval(x, c)
            else:
                intervals[m] = I.bootstrap_ci(x, ci, c, n_resamples, seed)
        return cls(list(measures), np.asarray(queries), values, intervals,
                   {**(settings or {}), "confidence": c, "ci": ci,
                    "n_resamples": None if ci == "t" else n_resamples, "seed": None if ci == "t" else seed},
                   list(notes), title)

    # -- access ------------------------------------------------------------------------------------
    @property
    def aggregate(self) -> dict[str, float]:
        """Measure -> mean over the queries with a value (NaN when none has one)."""
        return {m: self.intervals[m].estimate for m in self.measures}

    @property
    def counted(self) -> dict[str, int]:
        """Measure -> the number of queries with a value."""
        return {m: int((~np.isnan(self.values[:, j])).sum()) for j, m in enumerate(self.measures)}

    def __getitem__(self, measure: str) -> float:
        try:
            return self.aggregate[measure]
        except KeyError:
            raise KeyError(f"{measure!r} is not in this result; measures: {', '.join(self.measures)}") from None

    def per_query_dict(self, measure: str | None = None) -> dict[Any, Any]:
        """``{query: value}`` for one measure, else ``{query: {measure: value}}`` (missing values, and queries
        without any, left out)."""
        if measure is not None:
            j = self.measures.index(measure)
            return {_py(q): float(v) for q, v in zip(self.queries, self.values[:, j]) if not math.isnan(v)}
        out: dict[Any, Any] = {}
        for i, q in enumerate(self.queries):
            row = {m: float(v) for m, v in zip(self.measures, self.values[i]) if not math.isnan(v)}
            if row:
                out[_py(q)] = row
        return out

    def rows(self) -> list[dict[str, Any]]:
        """One row per measure: ``measure``, ``mean``, ``ci_low``, ``ci_high``, ``queries``."""
        return [{"measure": m, "mean": self.intervals[m].estimate, "ci_low": self.intervals[m].low,
                 "ci_high": self.intervals[m].high, "queries": self.counted[m]} for m in self.measures]

    # -- output ------------------------------------------------------------------------------------
    def to_dict(self, per_query: bool = True) -> dict[str, Any]:
        """Plain data (NaN as None): ``rows``, ``per_query`` (optional), ``settings``, ``notes``."""
        out: dict[str, Any] = {"rows": plain(self.rows())}
        if per_query:
            out["per_query"] = {str(k): v for k, v in plain(self.per_query_dict()).items()}
        out["settings"] = plain(self.settings)
        out["notes"] = list(self.notes)
        return out

    def to_json(self, per_query: bool = True) -> str:
        """:meth:`to_dict` as strict JSON."""
        return json.dumps(self.to_dict(per_query), indent=2)

    def to_pandas(self, kind: str = "per_query") -> Any:
        """A pandas DataFrame: per-query values (index ``query``, a column per measure) or, with
        ``kind="summary"``, one row per measure (``mean``, ``ci_low``, ``ci_high``, ``queries``)."""
        from .._base.deps import require

        pd = require("pandas")
        if kind == "summary":
            return pd.DataFrame(self.rows()).set_index("measure")
        if kind != "per_query":
            raise InvalidParameterError(f"`kind` must be 'per_query' or 'summary'; got {kind!r}.")
        return pd.DataFrame({m: self.values[:, j] for j, m in enumerate(self.measures)},
                            index=pd.Index([_py(q) for q in self.queries], name="query"))

    def _cells(self, digits: int) -> tuple[list[str], list[list[str]]]:
        level = f"{round(self.settings['confidence'] * 100, 6):g}%"
        header = ["measure", "mean", f"{level} {self.settings['ci']} low", "high", "queries"]

        def num(v: float) -> str:
            return "n/a" if v is None or math.isnan(v) else f"{v:.{digits}f}"

        return header, [[r["measure"], num(r["mean"]), num(r["ci_low"]), num(r["ci_high"]), str(r["queries"])]
                        for r in self.rows()]

    def render(self, format: str = "table", *, digits: int = 4, per_query: bool = False) -> str:
        """The table as ``table``, ``json``, ``csv``, ``markdown``, ``latex`` or ``html``; ``per_query``
        adds the per-query values (table, csv and json)."""
        if format not in _FORMATS:
            raise InvalidParameterError(f"`format` must be one of {', '.join(_FORMATS)}; got {format!r}.")
        if format == "json":
            return self.to_json(per_query)
        if format == "csv":
            buf = io.StringIO()
            w = csv.writer(buf, lineterminator="\n")
            w.writerow(["query", "measure", "value", "ci_low", "ci_high", "queries"])
            for r in self.rows():
                w.writerow(["all", r["measure"], repr(r["mean"]), repr(r["ci_low"]), repr(r["ci_high"]), r["queries"]])
            if per_query:
                for i, q in enumerate(self.queries):
                    for j, m in enumerate(self.measures):
                        w.writerow([_py(q), m, repr(float(self.values[i, j])), "", "", ""])
            return buf.getvalue()
        header, cells = self._cells(digits)
        if format == "markdown":
            return "\n".join(markdown_table(header, cells)) + "\n"
        if format == "latex":
            return "\n".join(latex_table(header, cells, [self.title] if self.title else [])) + "\n"
        if format == "html":
            return html_table(header, cells, title=self.title, notes=self.notes)
        lines = ([self.title] if self.title else []) + text_table(header, cells)
        if per_query:
            pq_header = ["query", *self.measures]
            pq = [[str(_py(q)), *(("n/a" if math.isnan(v) else f"{v:.{digits}f}") for v in self.values[i])]
                  for i, q in enumerate(self.queries)]
            lines += [""] + text_table(pq_header, pq)
        return "\n".join(lines + [f"note: {n}" for n in self.notes]) + "\n"

    def table(self, digits: int = 4) -> str:
        """A plain-text table of the means and intervals, then the notes."""
        return self.render("table", digits=digits)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        agg = ", ".join(f"{k}={v:.4f}" for k, v in self.aggregate.items())
        return f"<{type(self).__name__} {agg} over {len(self.queries)} queries>"

    def _repr_html_(self) -> str:
        return self.render("html")
