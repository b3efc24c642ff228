"""The result of :func:`ranklens.compare`: runs compared on the same judgments, and its output formats.

The public face of this module is :mod:`ranklens.compare`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._base.renamed import deprecated_alias, renamed_keywords
from .._output import render
from ..errors import InvalidParameterError

__all__ = ["Comparison", "check_max_drop"]


@dataclass
class Comparison:
    """Runs compared on the same judgments.

    Attributes
    ----------
    runs : list of str
        Run names, in the order given; ``baseline`` is one of them.
    measures : list of str
        Measure keys (``metrics`` is its deprecated name).
    rows : list of dict
        One per run and measure: ``run``, ``measure`` (``metric``, deprecated), ``mean``, ``n``, ``ci_low``,
        ``ci_high``, ``t_low``, ``t_high``; for a run other than the baseline also ``n_pairs``, ``diff``,
        ``diff_low``, ``diff_high``, ``wins``, ``ties``, ``losses``, ``effect_size``, ``statistic``,
        ``p_value``, ``p_adjusted``, ``significant``, ``only_baseline``, ``only_run``.
    settings : dict
        Test, correction, alpha, confidence, interval method, resamples, seed, convention.
    notes : list of str
        Queries left out, and why.
    """

    runs: list[str]
    baseline: str
    measures: list[str]
    rows: list[dict[str, Any]]
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    per_query: dict[str, Any] = field(default_factory=dict, repr=False)

    metrics = deprecated_alias("measures", "metrics")

    @renamed_keywords(metric="measure")
    def row(self, run: str, measure: str) -> dict[str, Any]:
        """The row of one run and measure."""
        for r in self.rows:
            if r["run"] == run and r["measure"] == measure:
                return r
        raise KeyError(f"no row for run {run!r} and measure {measure!r}")

    def to_dict(self) -> dict[str, Any]:
        """Plain data (NaN as None), for JSON: the comparison schema of :mod:`ranklens.render`."""
        return render.comparison_dict(self)

    def to_json(self) -> str:
        """:meth:`to_dict` as strict JSON."""
        return render.to_json(self)

    def to_csv(self) -> str:
        """One line per run and measure, every field, full precision."""
        return render.render(self, "csv")

    # -- display --------------------------------------------------------------------------------------
    def table(self, digits: int = 4) -> str:
        """A plain-text table per measure; significant differences are marked with ``*``."""
        return render.render(self, "table", digits=digits)

    def to_markdown(self, digits: int = 4) -> str:
        """A GitHub-flavoured Markdown table (one row per run and measure)."""
        return render.render(self, "markdown", digits=digits)

    def to_latex(self, digits: int = 4) -> str:
        """A LaTeX ``tabular`` (booktabs); significant differences in bold with a dagger."""
        return render.render(self, "latex", digits=digits)

    def __repr__(self) -> str:
        return (f"<Comparison of {len(self.runs)} runs ({', '.join(self.runs)}; baseline {self.baseline!r}) on "
                f"{', '.join(self.measures)}, convention={self.settings['convention']!r}>")

    def _repr_html_(self) -> str:
        return render.render(self, "html")

    # -- frames -------------------------------------------------------------------------------------------
    def _frame_columns(self, kind: str) -> dict[str, list[Any]]:
        if kind == "summary":
            return {k: [render.plain(r.get(k)) for r in self.rows] for k in render.COMPARISON_FIELDS}
        if kind != "per_query":
            raise InvalidParameterError(f"`kind` must be 'summary' or 'per_query'; got {kind!r}.")
        V = self.per_query["values"]  # (measures, queries, runs)
        n_m, n_q, n_r = V.shape
        return {
            "query": list(np.tile(np.asarray(self.per_query["queries"], dtype=object), n_m * n_r)),
            "measure": list(np.repeat(np.asarray(self.measures, dtype=object), n_q * n_r)),
            "run": list(np.tile(np.repeat(np.asarray(self.runs, dtype=object), n_q), n_m)),
            "value": list(V.transpose(0, 2, 1).reshape(-1)),
        }

    def to_pandas(self, kind: str = "summary") -> Any:
        """A pandas DataFrame: one row per run and measure with every field (``kind="summary"``: means,
        intervals, differences, p-values), or the per-query values in long form (``kind="per_query"``:
        ``query``, ``measure``, ``run``, ``value``; NaN where a run does not count a query)."""
        from .._base.deps import require

        pd = require("pandas")
        return pd.DataFrame(self._frame_columns(kind))

    def to_polars(self, kind: str = "summary") -> Any:
        """As :meth:`to_pandas`, a polars DataFrame (null where a value is missing)."""
        from .._base.deps import require

        pl = require("polars")
        data = self._frame_columns(kind)
        if kind == "per_query":
            return pl.DataFrame(data).fill_nan(None)
        return pl.DataFrame(data, strict=False)

    # -- CI gate ------------------------------------------------------------------------------------------
    def regressions(self) -> list[dict[str, Any]]:
        """The rows of runs significantly worse than the baseline (after the correction), worst first.

        Examples
        --------
        >>> import ranklens
        >>> qrels = {f"q{i}": {"a": 1, "b": 0} for i in range(8)}
        >>> good = {f"q{i}": {"a": 2.0, "b": 1.0} for i in range(8)}
        >>> bad = {f"q{i}": {"a": 1.0, "b": 2.0} for i in range(8)}
        >>> c = ranklens.compare(qrels, {"good": good, "bad": bad}, ["mrr"], n_resamples=999)
        >>> [(r["run"], r["measure"], r["diff"]) for r in c.regressions()]
        [('bad', 'mrr', -0.5)]
        """
        worse = [r for r in self.rows if r["run"] != self.baseline and r.get("significant") and r["diff"] < 0]
        return sorted(worse, key=lambda r: r["diff"])

    def drops(self, max_drop: Mapping[str, float]) -> list[dict[str, Any]]:
        """The gate on size: the runs whose mean falls below the baseline's by more than an allowance,
        whatever the p-value, largest drop first.

        ``drop = baseline's mean - run's mean`` (each over the queries it counts); a run fails a measure
        when ``drop > allowance`` (a drop equal to the allowance up to 1e-12, the rounding of two means,
        passes). A run whose mean is NaN (no query counted) fails with ``drop`` NaN.

        Parameters
        ----------
        max_drop : mapping {measure key: allowance}
            Allowances (finite, >= 0) by measure key, as in :attr:`measures`.

        Returns
        -------
        list of dict
            ``run``, ``measure``, ``baseline``, ``baseline_mean``, ``mean``, ``drop``, ``max_drop``,
            ``n``, ``baseline_n``, ``p_value``, ``p_adjusted``.

        Examples
        --------
        >>> import ranklens
        >>> qrels = {f"q{i}": {"a": 1, "b": 0} for i in range(4)}
        >>> good = {f"q{i}": {"a": 2.0, "b": 1.0} for i in range(4)}
        >>> bad = dict(good, q0={"a": 1.0, "b": 2.0})  # RR 1/2 on one query of four
        >>> c = ranklens.compare(qrels, {"good": good, "bad": bad}, ["mrr"], n_resamples=999)
        >>> [(r["run"], r["drop"]) for r in c.drops({"mrr": 0.1})]  # p = 1 here: not significant
        [('bad', 0.125)]
        >>> c.drops({"mrr": 0.125})
        []
        """
        allow = check_max_drop(max_drop)
        for key in allow:
            if key not in self.measures:
                raise InvalidParameterError(f"`max_drop` names {key!r}, which is not among the compared measures "
                                            f"({', '.join(self.measures)}).")
        out = []
        for key, tol in allow.items():
            base = self.row(self.baseline, key)
            for run in self.runs:
                if run == self.baseline:
                    continue
                r = self.row(run, key)
                drop = base["mean"] - r["mean"]
                if math.isnan(drop) or drop - tol > 1e-12:
                    out.append({"run": run, "measure": key, "baseline": self.baseline, "baseline_mean": base["mean"],
                                "mean": r["mean"], "drop": drop, "max_drop": tol, "n": r["n"],
                                "baseline_n": base["n"], "p_value": r.get("p_value", math.nan),
                                "p_adjusted": r.get("p_adjusted", math.nan)})
        return sorted(out, key=lambda r: -r["drop"] if not math.isnan(r["drop"]) else -math.inf)

    def __str__(self) -> str:
        return self.table()


def check_max_drop(max_drop: Any) -> dict[str, float]:
    """``max_drop`` checked: a mapping {measure key: allowance}, each allowance a finite number >= 0.

    >>> check_max_drop({"ndcg@10": 0.01})
    {'ndcg@10': 0.01}
    """
    if not isinstance(max_drop, Mapping) or not max_drop:
        raise InvalidParameterError(f"`max_drop` must be a non-empty mapping {{measure: allowance}}; got {max_drop!r}.")
    out = {}
    for key, tol in max_drop.items():
        if not isinstance(key, str) or not key.strip():
            raise InvalidParameterError(f"`max_drop` keys must be measure names; got {key!r}.")
        if isinstance(tol, bool) or not isinstance(tol, (int, float, np.integer, np.floating)) \
                or not math.isfinite(tol) or tol < 0:
            raise InvalidParameterError(f"`max_drop` of {key!r} must be a finite number >= 0; got {tol!r}.")
        out[key] = float(tol)
    return out
