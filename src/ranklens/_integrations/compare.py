"""``compare``: several runs on the same judgments -> means, intervals, paired tests against a baseline.

The public face of this module is :mod:`ranklens.compare`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, overload

import numpy as np

from .._core import stats as S
from .._defs.irmeasures import is_ir_measures_object
from .._output import render
from ..errors import InvalidParameterError
from .pairs import PAIR_TESTS, PairwiseComparison, compare_all, pair_correction
from .runs import RunValues, baseline_index, evaluate_runs, run_names

__all__ = ["Comparison", "PairwiseComparison", "check_max_drop", "compare"]

_TEST_NAMES = {
    "randomization": "paired randomization (sign-flip, Fisher) test, two-sided",
    "t": "paired Student's t-test, two-sided",
    "wilcoxon": "Wilcoxon signed-rank test, two-sided (scipy's defaults)",
    "bootstrap": "paired bootstrap test (centred differences), two-sided",
}


@dataclass
class Comparison:
    """Runs compared on the same judgments.

    Attributes
    ----------
    runs : list of str
        Run names, in the order given; ``baseline`` is one of them.
    metrics : list of str
        Measure keys.
    rows : list of dict
        One per run and metric: ``run``, ``metric``, ``mean``, ``n``, ``ci_low``, ``ci_high``,
        ``t_low``, ``t_high``; for a run other than the baseline also ``n_pairs``, ``diff``,
        ``diff_low``, ``diff_high``, ``wins``, ``ties``, ``losses``, ``effect_size``, ``statistic``,
        ``p_value``, ``p_adjusted``, ``significant``, ``only_baseline``, ``only_run``.
    settings : dict
        Test, correction, alpha, confidence, interval method, resamples, seed, convention.
    notes : list of str
        Queries left out, and why.
    """

    runs: list[str]
    baseline: str
    metrics: list[str]
    rows: list[dict[str, Any]]
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    per_query: dict[str, Any] = field(default_factory=dict, repr=False)

    def row(self, run: str, metric: str) -> dict[str, Any]:
        """The row of one run and metric."""
        for r in self.rows:
            if r["run"] == run and r["metric"] == metric:
                return r
        raise KeyError(f"no row for run {run!r} and metric {metric!r}")

    def to_dict(self) -> dict[str, Any]:
        """Plain data (NaN as None), for JSON: the comparison schema of :mod:`ranklens.render`."""
        return render.comparison_dict(self)

    def to_json(self) -> str:
        """:meth:`to_dict` as strict JSON."""
        return render.to_json(self)

    def to_csv(self) -> str:
        """One line per run and metric, every field, full precision."""
        return render.render(self, "csv")

    # -- display --------------------------------------------------------------------------------------
    def table(self, digits: int = 4) -> str:
        """A plain-text table per metric; significant differences are marked with ``*``."""
        return render.render(self, "table", digits=digits)

    def to_markdown(self, digits: int = 4) -> str:
        """A GitHub-flavoured Markdown table (one row per run and metric)."""
        return render.render(self, "markdown", digits=digits)

    def to_latex(self, digits: int = 4) -> str:
        """A LaTeX ``tabular`` (booktabs); significant differences in bold with a dagger."""
        return render.render(self, "latex", digits=digits)

    def __repr__(self) -> str:
        return (f"<Comparison of {len(self.runs)} runs ({', '.join(self.runs)}; baseline {self.baseline!r}) on "
                f"{', '.join(self.metrics)}, convention={self.settings['convention']!r}>")

    def _repr_html_(self) -> str:
        return render.render(self, "html")

    # -- frames -------------------------------------------------------------------------------------------
    def _frame_columns(self, kind: str) -> dict[str, list[Any]]:
        if kind == "summary":
            return {k: [render.plain(r.get(k)) for r in self.rows] for k in render.COMPARISON_FIELDS}
        if kind != "per_query":
            raise InvalidParameterError(f"`kind` must be 'summary' or 'per_query'; got {kind!r}.")
        V = self.per_query["values"]  # (metrics, queries, runs)
        n_m, n_q, n_r = V.shape
        return {
            "query": list(np.tile(np.asarray(self.per_query["queries"], dtype=object), n_m * n_r)),
            "metric": list(np.repeat(np.asarray(self.metrics, dtype=object), n_q * n_r)),
            "run": list(np.tile(np.repeat(np.asarray(self.runs, dtype=object), n_q), n_m)),
            "value": list(V.transpose(0, 2, 1).reshape(-1)),
        }

    def to_pandas(self, kind: str = "summary") -> Any:
        """A pandas DataFrame: one row per run and metric with every field (``kind="summary"``: means,
        intervals, differences, p-values), or the per-query values in long form (``kind="per_query"``:
        ``query``, ``metric``, ``run``, ``value``; NaN where a run does not count a query)."""
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
        >>> [(r["run"], r["metric"], r["diff"]) for r in c.regressions()]
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
            Allowances (finite, >= 0) by measure key, as in :attr:`metrics`.

        Returns
        -------
        list of dict
            ``run``, ``metric``, ``baseline``, ``baseline_mean``, ``mean``, ``drop``, ``max_drop``,
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
            if key not in self.metrics:
                raise InvalidParameterError(f"`max_drop` names {key!r}, which is not among the compared measures "
                                            f"({', '.join(self.metrics)}).")
        out = []
        for key, tol in allow.items():
            base = self.row(self.baseline, key)
            for run in self.runs:
                if run == self.baseline:
                    continue
                r = self.row(run, key)
                drop = base["mean"] - r["mean"]
                if math.isnan(drop) or drop - tol > 1e-12:
                    out.append({"run": run, "metric": key, "baseline": self.baseline, "baseline_mean": base["mean"],
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


@overload
def compare(
    judgments: Any,
    runs: Iterable[Any] | Mapping[str, Any],
    metrics: Any = ...,
    *,
    baseline: Any = ...,
    pairs: Literal["baseline"] = ...,
    group_by: None = ...,
    convention: Any = ...,
    test: str = ...,
    correction: str | None = ...,
    alpha: float = ...,
    confidence: float = ...,
    ci: str = ...,
    n_resamples: int = ...,
    seed: int = ...,
    **options: Any,
) -> Comparison: ...


@overload
def compare(
    judgments: Any,
    runs: Iterable[Any] | Mapping[str, Any],
    metrics: Any = ...,
    *,
    baseline: Any = ...,
    pairs: Literal["all"],
    group_by: None = ...,
    convention: Any = ...,
    test: str = ...,
    correction: str | None = ...,
    alpha: float = ...,
    confidence: float = ...,
    ci: str = ...,
    n_resamples: int = ...,
    seed: int = ...,
    **options: Any,
) -> PairwiseComparison: ...


@overload
def compare(
    judgments: Any,
    runs: Iterable[Any] | Mapping[str, Any],
    metrics: Any = ...,
    *,
    baseline: Any = ...,
    pairs: str = ...,
    group_by: str | Mapping[Any, Any],
    convention: Any = ...,
    test: str = ...,
    correction: str | None = ...,
    alpha: float = ...,
    confidence: float = ...,
    ci: str = ...,
    n_resamples: int = ...,
    seed: int = ...,
    **options: Any,
) -> dict[Any, Any]: ...


def compare(
    judgments: Any,
    runs: Iterable[Any] | Mapping[str, Any],
    metrics: Any = ("ndcg@10",),
    *,
    baseline: Any = None,
    pairs: str = "baseline",
    group_by: Any = None,
    convention: Any = None,
    test: str = "randomization",
    correction: str | None = None,
    alpha: float = 0.05,
    confidence: float = 0.95,
    ci: str = "bca",
    n_resamples: int = 10000,
    seed: int = 0,
    **options: Any,
) -> Comparison | PairwiseComparison | dict[Any, Any]:
    """Compare runs on the same judgments: means with intervals, and paired tests against a baseline (or of
    every pair of runs, with ``pairs="all"``).

    Parameters
    ----------
    judgments : path, dict, array-like or table
        As for :func:`ranklens.evaluate`.
    runs : list of runs, or mapping ``{name: run}``
        At least two runs (paths, dicts, tables...). Paths are named by their file name.
    metrics : str or list of str (or of ir_measures measures)
        Measures (``ndcg@10``, ``map``, ``nDCG@10``, ``ir_measures.RR@10``...); the summed counts
        (``num_ret``...) are not compared.
    baseline : name, path or index, optional
        The run the others are compared with (default: the first); not with ``pairs="all"``.
    pairs : {"baseline", "all"}
        ``"baseline"`` (default): each run against the baseline, a :class:`Comparison`. ``"all"``: every
        pair of runs over the queries every run counts, a :class:`PairwiseComparison` (per pair the
        difference with its interval, Cohen's d_z with its interval, p-value and adjusted p-value; per
        measure a significance matrix, compact letters, the repeated-measures ANOVA and Friedman's test,
        and the discriminative power: the share of pairs significant at ``alpha``).
    group_by : str or mapping, optional
        Slice by a per-query attribute, as for :func:`ranklens.evaluate`: a dict ``{group: Comparison}``
        (or ``PairwiseComparison``), each the comparison of that group's queries alone.
    convention : str or Convention, optional
        As for ``evaluate``; its query rule decides which queries each run counts.
    test : {"randomization", "t", "wilcoxon", "bootstrap", "randomized_tukey", "tukey", "tukey_oneway"}
        Paired test of each run against the baseline (or of each pair). Default: the sign-flip
        randomization test, which Smucker, Allan & Carterette (CIKM 2007) recommend for IR evaluation.
        With ``pairs="all"`` also the Tukey HSD, which holds the family-wise error over the pairs by
        itself: ``"randomized_tukey"`` (Carterette 2012: every query's values permuted among the runs),
        ``"tukey"`` (parametric, the queries as blocks: the MSE of the repeated-measures ANOVA) and
        ``"tukey_oneway"`` (``scipy.stats.tukey_hsd``: queries not blocked).
    correction : {"holm", "bonferroni", "bh", "none"}, optional
        Multiple-testing correction over all runs x metrics (or pairs x measures). Default Holm: controls
        the family-wise error without Bonferroni's loss of power; none needed (and refused) with a Tukey test.
    alpha : float
        Level at which a corrected p-value is called significant (default 0.05).
    confidence : float
        Level of the intervals (default 0.95).
    ci : {"bca", "percentile", "t"}
        Interval of the means and of the differences: bootstrap BCa (default) or percentile, or
        ``"t"`` (no bootstrap: fastest on large inputs). The t interval is always given too
        (``t_low``, ``t_high``).
    n_resamples, seed : int
        Resamples of the randomization test and of the bootstrap; a seed gives the same numbers for
        any number of threads.
    **options
        Passed to ``evaluate`` (column names, formats, convention fields).

    Returns
    -------
    Comparison, or PairwiseComparison with ``pairs="all"``; a dict of them by group with ``group_by``

    Examples
    --------
    >>> import ranklens
    >>> qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}, "q3": {"d": 1, "e": 1}}
    >>> bm25 = {"q1": {"a": 1.0, "b": 2.0}, "q2": {"c": 1.0}, "q3": {"d": 0.5, "x": 0.9}}
    >>> dense = {"q1": {"a": 3.0, "b": 2.0}, "q2": {"c": 1.0}, "q3": {"d": 0.9, "e": 0.8}}
    >>> c = ranklens.compare(qrels, {"bm25": bm25, "dense": dense}, ["mrr"], n_resamples=1000)
    >>> row = c.row("dense", "mrr")
    >>> round(row["diff"], 4), (row["wins"], row["ties"], row["losses"])
    (0.3333, (2, 1, 0))
    >>> rand = {"q1": {"a": 2.0, "b": 3.0}, "q2": {"c": 1.0}, "q3": {"e": 0.9, "d": 0.5}}
    >>> p = ranklens.compare(qrels, {"bm25": bm25, "dense": dense, "rand": rand}, ["mrr"], pairs="all",
    ...                      test="tukey")
    >>> r = p.row("dense", "bm25", "mrr")
    >>> round(r["estimate"], 4), r["n"]
    (0.3333, 3)
    >>> p.letters("mrr")
    {'bm25': 'a', 'dense': 'a', 'rand': 'a'}
    """
    if pairs not in ("baseline", "all"):
        raise InvalidParameterError(f"`pairs` must be 'baseline' or 'all'; got {pairs!r}.")
    if pairs == "baseline" and test not in S.TESTS:
        hint = " (the Tukey tests compare every pair: pairs='all')" if test in PAIR_TESTS else ""
        raise InvalidParameterError(f"`test` must be one of {', '.join(S.TESTS)}; got {test!r}{hint}.")
    if correction is not None and correction not in S.CORRECTIONS:
        raise InvalidParameterError(f"`correction` must be one of {', '.join(S.CORRECTIONS)}; got {correction!r}.")
    if ci not in ("bca", "percentile", "t"):
        raise InvalidParameterError(f"`ci` must be 'bca', 'percentile' or 't'; got {ci!r}.")
    if "weights" in options:
        raise InvalidParameterError("compare does not take `weights`: its tests and intervals are of plain means.")
    confidence = S.check_confidence(confidence)
    n_resamples, seed = S.check_resamples(n_resamples), S.check_seed(seed)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise InvalidParameterError(f"`alpha` must be a number in (0, 1); got {alpha!r}.")
    names, items = run_names(runs)
    if len(items) < 2:
        raise InvalidParameterError(f"compare needs at least two runs; got {len(items)}.")
    metric_list = [metrics] if isinstance(metrics, str) or is_ir_measures_object(metrics) else list(metrics)
    if pairs == "all":
        if baseline is not None:
            raise InvalidParameterError("`baseline` is for pairs='baseline'; pairs='all' compares every pair.")
        correction = pair_correction(test, correction)
    else:
        correction = correction or "holm"
        bi = baseline_index(baseline, names, items)
    tables = evaluate_runs(judgments, names, items, metric_list, convention, options, group_by)
    out: dict[Any, Any] = {}
    for group, table in tables.items():  # one table, or one per group of queries
        if pairs == "all":
            out[group] = compare_all(table, names, test=test, correction=correction, alpha=alpha,
                                     confidence=confidence, ci=ci, n_resamples=n_resamples, seed=seed)
        else:
            out[group] = _against_baseline(table, names, bi, test, correction, alpha, confidence, ci, n_resamples,
                                           seed)
    return out[None] if group_by is None else out


def _against_baseline(table: RunValues, names: list[str], bi: int, test: str, correction: str, alpha: float,
                      confidence: float, ci: str, n_resamples: int, seed: int) -> Comparison:
    """Each run against the baseline ``names[bi]`` on the runs' values: the work of ``compare``."""
    from .._base.progress import Progress

    items = names
    keys, conv_name, universe, V = table.keys, table.convention, table.queries, table.values
    out_rows: list[dict[str, Any]] = []
    notes = list(table.notes)

    with Progress(len(keys), "compare: intervals and tests") as progress:
        for mi, key in enumerate(keys):
            progress.advance(0, f"compare: intervals and tests of {key}")
            vals = V[mi]
            valid = ~np.isnan(vals)
            base = vals[:, bi]
            # bootstrap means of each run's values and of each difference, grouped by query set so that
            # columns over the same queries share one kernel call (and equal stats.bootstrap_ci's numbers)
            columns: list[tuple[str, int, np.ndarray]] = []
            for ri in range(len(items)):
                columns.append(("run", ri, valid[:, ri]))
            for ri in range(len(items)):
                if ri != bi:
                    columns.append(("diff", ri, valid[:, ri] & valid[:, bi]))
            intervals: dict[tuple[str, int], tuple[float, float]] = {}
            groups: dict[bytes, list[int]] = {}
            for ci_idx, (_, _, mask) in enumerate(columns):
                groups.setdefault(np.packbits(mask).tobytes(), []).append(ci_idx)
            for idxs in groups.values():
                mask = columns[idxs[0]][2]
                if mask.sum() < 2:
                    for c in idxs:
                        intervals[columns[c][:2]] = (math.nan, math.nan)
                    continue
                X = np.empty((int(mask.sum()), len(idxs)))
                for j, c in enumerate(idxs):
                    kind, ri, _ = columns[c]
                    X[:, j] = vals[mask, ri] if kind == "run" else vals[mask, ri] - base[mask]
                if ci == "t":
                    for j, c in enumerate(idxs):
                        iv = S.t_interval(X[:, j], confidence)
                        intervals[columns[c][:2]] = (iv.low, iv.high)
                    continue
                boot = S.bootstrap_means(X, n_resamples, seed)
                for j, c in enumerate(idxs):
                    intervals[columns[c][:2]] = S.interval_from_bootstrap(X[:, j], boot[:, j], ci, confidence)

            # the sign-flip test of every pair in one kernel call: differences over the baseline's queries,
            # zero where the other run does not count the query (a zero adds nothing to any sign flip)
            rand_p: dict[int, float] = {}
            if test == "randomization":
                others = [ri for ri in range(len(items)) if ri != bi]
                bmask = valid[:, bi]
                D = np.zeros((int(bmask.sum()), len(others)))
                for j, ri in enumerate(others):
                    dcol = vals[bmask, ri] - base[bmask]
                    D[:, j] = np.where(np.isnan(dcol), 0.0, dcol)
                if D.shape[0]:
                    ps = S.sign_flip_p(D, n_resamples, seed)
                    rand_p = {ri: float(ps[j]) for j, ri in enumerate(others)}

            for ri, name in enumerate(names):
                x = vals[valid[:, ri], ri]
                n = int(x.shape[0])
                mean = float(x.mean()) if n else math.nan
                t_iv = S.t_interval(x, confidence) if n >= 2 else None
                lo, hi = intervals[("run", ri)]
                row: dict[str, Any] = {
                    "metric": key, "run": name, "baseline": names[bi], "mean": mean, "n": n, "ci_low": lo,
                    "ci_high": hi,
                    "t_low": t_iv.low if t_iv else math.nan, "t_high": t_iv.high if t_iv else math.nan,
                }
                if ri != bi:
                    both = valid[:, ri] & valid[:, bi]
                    a, b = vals[both, ri], base[both]
                    n_pairs = int(both.sum())
                    only_b = int((valid[:, bi] & ~valid[:, ri]).sum())
                    only_r = int((valid[:, ri] & ~valid[:, bi]).sum())
                    if only_b or only_r:
                        notes.append(
                            f"{key}: {name} vs {names[bi]} over the {n_pairs} queries both count; left out: {only_b} "
                            f"counted only for {names[bi]}, {only_r} only for {name}"
                        )
                    dlo, dhi = intervals[("diff", ri)]
                    row.update({"n_pairs": n_pairs, "diff": float((a - b).mean()) if n_pairs else math.nan,
                                "diff_low": dlo, "diff_high": dhi})
                    if n_pairs >= 2:
                        dt = S.t_interval(a - b, confidence)
                        wtl = S.win_tie_loss(a, b)
                        es = S.effect_size(a, b).value
                        if test == "randomization":
                            stat, p = float((a - b).mean()), rand_p[ri]
                        elif test == "t":
                            r = S.paired_t(a, b)
                            stat, p = r.statistic, r.p_value
                        elif test == "wilcoxon":
                            r = S.wilcoxon(a, b)
                            stat, p = r.statistic, r.p_value
                        else:
                            stat, p = float((a - b).mean()), S.bootstrap_p(a - b, n_resamples, seed)
                        row.update({"diff_t_low": dt.low, "diff_t_high": dt.high, "wins": wtl.wins, "ties": wtl.ties,
                                    "losses": wtl.losses, "effect_size": es, "test": test, "statistic": stat,
                                    "p_value": p})
                    else:
                        row.update({"diff_t_low": math.nan, "diff_t_high": math.nan, "wins": 0, "ties": 0,
                                    "losses": 0, "effect_size": math.nan, "test": test, "statistic": math.nan,
                                    "p_value": math.nan})
                    row.update({"only_baseline": only_b, "only_run": only_r})
                out_rows.append(row)
            progress.advance()

    tested = [row for row in out_rows if "p_value" in row]
    corr = S.correct([row["p_value"] for row in tested], correction, alpha)
    for row, adj, rej in zip(tested, corr.adjusted, corr.reject):
        row["p_adjusted"] = adj
        row["significant"] = bool(rej)
    n_tests = sum(1 for row in tested if not math.isnan(row["p_value"]))
    settings = {
        "test": test, "test_description": _TEST_NAMES[test], "correction": correction, "alpha": float(alpha),
        "confidence": confidence, "ci_method": ci, "n_resamples": n_resamples, "seed": seed,
        "convention": conv_name, "n_tests": n_tests,
        "p_value_rule": "(count + 1) / (n_resamples + 1)" if test in ("randomization", "bootstrap") else "analytic",
    }
    per_query = {"queries": universe, "values": V, "runs": names, "metrics": keys}
    return Comparison(names, names[bi], keys, out_rows, settings, notes, per_query)
