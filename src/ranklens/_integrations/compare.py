"""``compare``: several runs on the same judgments -> means, intervals, paired tests against a baseline.

The public face of this module is :mod:`ranklens.compare`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, Literal, overload

import numpy as np

from .._base.renamed import RenamedKeys, renamed_keywords
from .._core import stats as S
from .._core.intervals import bootstrap_means, interval_from_bootstrap, t_interval
from .._defs.irmeasures import is_ir_measures_object
from ..errors import InvalidParameterError
from .comparison import Comparison
from .pairs import PAIR_TESTS, PairwiseComparison, compare_all, pair_correction
from .runs import RunValues, baseline_index, evaluate_runs, run_names

__all__ = ["compare"]

_TEST_NAMES = {
    "randomization": "paired randomization (sign-flip, Fisher) test, two-sided",
    "t": "paired Student's t-test, two-sided",
    "wilcoxon": "Wilcoxon signed-rank test, two-sided (scipy's defaults)",
    "bootstrap": "paired bootstrap test (centred differences), two-sided",
}


@overload
def compare(
    judgments: Any,
    runs: Iterable[Any] | Mapping[str, Any],
    measures: Any = ...,
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
    measures: Any = ...,
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
    measures: Any = ...,
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


@renamed_keywords(metrics="measures")
def compare(
    judgments: Any,
    runs: Iterable[Any] | Mapping[str, Any],
    measures: Any = ("ndcg@10",),
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
    measures : str or list of str (or of ir_measures measures)
        Measures (``ndcg@10``, ``map``, ``nDCG@10``, ``ir_measures.RR@10``...); the summed counts
        (``num_ret``...) are not compared. (``metrics=`` is its deprecated name.)
    baseline : name, path or index, optional
        The run the others are compared with (default: the first); not with ``pairs="all"``.
    pairs : {"baseline", "all"}
        ``"baseline"`` (default): each run against the baseline, a :class:`Comparison`. ``"all"``: every
        pair of runs over the queries every run counts, a :class:`PairwiseComparison` (per pair the
        difference with its interval, Cohen's d_z with its interval, p-value and adjusted p-value; per
        measure a significance matrix, compact letters, the repeated-measures ANOVA and Friedman's test,
        and the discriminative power: the share of pairs significant at ``alpha``).
    group_by : str or mapping, optional
        Slice as for :func:`ranklens.evaluate` (each run's rows cut by its group columns): a dict
        ``{group: Comparison}`` (or ``PairwiseComparison``), each the comparison of that group's rows alone.
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
        Multiple-testing correction over all runs x measures (or pairs x measures). Default Holm: controls
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
    confidence, n_resamples, seed = _check_settings(correction, alpha, confidence, ci, n_resamples, seed, options)
    names, items = run_names(runs)
    if len(items) < 2:
        raise InvalidParameterError(f"compare needs at least two runs; got {len(items)}.")
    metric_list = [measures] if isinstance(measures, str) or is_ir_measures_object(measures) else list(measures)
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

    keys, V, notes = table.keys, table.values, list(table.notes)
    out_rows: list[dict[str, Any]] = []
    with Progress(len(keys), "compare: intervals and tests") as progress:
        for mi, key in enumerate(keys):
            progress.advance(0, f"compare: intervals and tests of {key}")
            vals = V[mi]
            valid = ~np.isnan(vals)
            intervals = _intervals(vals, valid, bi, ci, confidence, n_resamples, seed)
            rand_p = _randomization_p(vals, valid, bi, n_resamples, seed) if test == "randomization" else {}
            for ri, name in enumerate(names):
                row = _run_row(key, name, names[bi], vals[valid[:, ri], ri], intervals[("run", ri)], confidence)
                if ri != bi:
                    row.update(_paired_row(key, name, names[bi], vals[:, ri], vals[:, bi], intervals[("diff", ri)],
                                           test, rand_p.get(ri, math.nan), confidence, n_resamples, seed, notes))
                out_rows.append(row)
            progress.advance()

    n_tests = _correct(out_rows, correction, alpha)
    settings = {
        "test": test, "test_description": _TEST_NAMES[test], "correction": correction, "alpha": float(alpha),
        "confidence": confidence, "ci_method": ci, "n_resamples": n_resamples, "seed": seed,
        "convention": table.convention, "n_tests": n_tests,
        "p_value_rule": "(count + 1) / (n_resamples + 1)" if test in ("randomization", "bootstrap") else "analytic",
    }
    per_query = {"queries": table.queries, "values": V, "runs": names, "measures": keys}
    return Comparison(names, names[bi], keys, out_rows, settings, notes, per_query)


def _check_settings(correction: str | None, alpha: Any, confidence: Any, ci: str, n_resamples: Any, seed: Any,
                    options: dict[str, Any]) -> tuple[float, int, int]:
    """The correction, interval and resampling settings checked; ``confidence``, ``n_resamples``, ``seed``."""
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
    return confidence, n_resamples, seed


def _intervals(vals: np.ndarray, valid: np.ndarray, bi: int, ci: str, confidence: float, n_resamples: int,
               seed: int) -> dict[tuple[str, int], tuple[float, float]]:
    """The interval of each run's mean (``("run", ri)``) and of each difference with the baseline
    (``("diff", ri)``) of one measure's values (queries x runs).

    Bootstrap means are grouped by query set, so that columns over the same queries share one kernel call (and
    equal :func:`ranklens.stats.bootstrap_ci`'s numbers).
    """
    base = vals[:, bi]
    n_runs = vals.shape[1]
    columns: list[tuple[str, int, np.ndarray]] = [("run", ri, valid[:, ri]) for ri in range(n_runs)]
    columns += [("diff", ri, valid[:, ri] & valid[:, bi]) for ri in range(n_runs) if ri != bi]
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
                iv = t_interval(X[:, j], confidence)
                intervals[columns[c][:2]] = (iv.low, iv.high)
            continue
        boot = bootstrap_means(X, n_resamples, seed)
        for j, c in enumerate(idxs):
            intervals[columns[c][:2]] = interval_from_bootstrap(X[:, j], boot[:, j], ci, confidence)
    return intervals


def _randomization_p(vals: np.ndarray, valid: np.ndarray, bi: int, n_resamples: int, seed: int) -> dict[int, float]:
    """The sign-flip test of every run against the baseline in one kernel call: differences over the baseline's
    queries, zero where the other run does not count the query (a zero adds nothing to any sign flip)."""
    base = vals[:, bi]
    others = [ri for ri in range(vals.shape[1]) if ri != bi]
    bmask = valid[:, bi]
    D = np.zeros((int(bmask.sum()), len(others)))
    for j, ri in enumerate(others):
        dcol = vals[bmask, ri] - base[bmask]
        D[:, j] = np.where(np.isnan(dcol), 0.0, dcol)
    if not D.shape[0]:
        return {}
    ps = S.sign_flip_p(D, n_resamples, seed)
    return {ri: float(ps[j]) for j, ri in enumerate(others)}


def _run_row(key: str, name: str, baseline: str, x: np.ndarray, interval: tuple[float, float],
             confidence: float) -> dict[str, Any]:
    """A run's mean of one measure over the queries it counts (``x``), with its intervals."""
    n = int(x.shape[0])
    t_iv = t_interval(x, confidence) if n >= 2 else None
    return RenamedKeys({
        "measure": key, "run": name, "baseline": baseline, "mean": float(x.mean()) if n else math.nan, "n": n,
        "ci_low": interval[0], "ci_high": interval[1],
        "t_low": t_iv.low if t_iv else math.nan, "t_high": t_iv.high if t_iv else math.nan,
    }, renamed={"metric": "measure"})


def _paired_row(key: str, name: str, baseline: str, run_vals: np.ndarray, base_vals: np.ndarray,
                interval: tuple[float, float], test: str, rand_p: float, confidence: float, n_resamples: int,
                seed: int, notes: list[str]) -> dict[str, Any]:
    """The fields of a run's row that compare it with the baseline over the queries both count (a note says
    which queries only one of them counts)."""
    run_ok, base_ok = ~np.isnan(run_vals), ~np.isnan(base_vals)
    both = run_ok & base_ok
    a, b = run_vals[both], base_vals[both]
    n_pairs = int(both.sum())
    only_b = int((base_ok & ~run_ok).sum())
    only_r = int((run_ok & ~base_ok).sum())
    if only_b or only_r:
        notes.append(f"{key}: {name} vs {baseline} over the {n_pairs} queries both count; left out: {only_b} "
                     f"counted only for {baseline}, {only_r} only for {name}")
    row: dict[str, Any] = {"n_pairs": n_pairs, "diff": float((a - b).mean()) if n_pairs else math.nan,
                           "diff_low": interval[0], "diff_high": interval[1]}
    if n_pairs >= 2:
        dt = t_interval(a - b, confidence)
        wtl = S.win_tie_loss(a, b)
        es = S.effect_size(a, b).value
        if test == "randomization":
            stat, p = float((a - b).mean()), rand_p
        elif test == "t":
            r = S.paired_t(a, b)
            stat, p = r.statistic, r.p_value
        elif test == "wilcoxon":
            r = S.wilcoxon(a, b)
            stat, p = r.statistic, r.p_value
        else:
            stat, p = float((a - b).mean()), S.bootstrap_p(a - b, n_resamples, seed)
        row.update({"diff_t_low": dt.low, "diff_t_high": dt.high, "wins": wtl.wins, "ties": wtl.ties,
                    "losses": wtl.losses, "effect_size": es, "test": test, "statistic": stat, "p_value": p})
    else:
        row.update({"diff_t_low": math.nan, "diff_t_high": math.nan, "wins": 0, "ties": 0, "losses": 0,
                    "effect_size": math.nan, "test": test, "statistic": math.nan, "p_value": math.nan})
    row.update({"only_baseline": only_b, "only_run": only_r})
    return row


def _correct(rows: list[dict[str, Any]], correction: str, alpha: float) -> int:
    """``p_adjusted`` and ``significant`` of every tested row, corrected over all of them; the number of tests."""
    tested = [row for row in rows if "p_value" in row]
    corr = S.correct([row["p_value"] for row in tested], correction, alpha)
    for row, adj, rej in zip(tested, corr.adjusted, corr.reject):
        row["p_adjusted"] = adj
        row["significant"] = bool(rej)
    return sum(1 for row in tested if not math.isnan(row["p_value"]))
