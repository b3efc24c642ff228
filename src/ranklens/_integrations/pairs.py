"""``compare(..., pairs="all")``: every pair of runs on the same judgments (Tukey HSD, randomised Tukey HSD or
paired tests with a correction), omnibus tests, effect sizes with intervals, significance matrix, compact letters,
discriminative power.

The public face of this module is :mod:`ranklens.compare`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._core import multi as M
from .._core import stats as S
from .._core.discpower import estimate_discriminative_power
from .._core.intervals import bootstrap_means, interval_from_bootstrap, t_interval
from .._output.pairs import PAIR_FIELDS, SUMMARY_FIELDS
from .._output.render import render as render_output
from ..errors import InvalidParameterError
from .runs import RunValues

__all__ = ["PAIR_TESTS", "PairwiseComparison", "compare_all", "pair_correction"]

#: The tests of ``pairs="all"``: those of a baseline comparison, and the Tukey HSD in three forms.
PAIR_TESTS = ("randomization", "t", "wilcoxon", "bootstrap", "randomized_tukey", "tukey", "tukey_oneway")
_TUKEY = ("randomized_tukey", "tukey", "tukey_oneway")
_TEST_NAMES = {
    "randomization": "paired randomization (sign-flip, Fisher) test of each pair, two-sided",
    "t": "paired Student's t-test of each pair, two-sided",
    "wilcoxon": "Wilcoxon signed-rank test of each pair, two-sided (scipy's defaults)",
    "bootstrap": "paired bootstrap test (centred differences) of each pair, two-sided",
    "randomized_tukey": "randomised Tukey HSD (Carterette 2012): every query's values permuted among the runs, "
                        "one distribution of the range of the means for every pair",
    "tukey": "Tukey HSD with the queries as blocks (MSE of the repeated-measures ANOVA, (n-1)(k-1) df)",
    "tukey_oneway": "one-way Tukey HSD (scipy.stats.tukey_hsd, statsmodels' pairwise_tukeyhsd: queries not blocked)",
}

@dataclass
class PairwiseComparison:
    """Every pair of runs compared on the same judgments.

    Attributes
    ----------
    runs : list of str
        Run names, in the order given.
    measures : list of str
        Measure keys.
    summary : list of dict
        One per run and measure (:data:`SUMMARY_FIELDS`): mean with its interval over the queries every run
        counts, and the compact letters (runs sharing a letter do not differ significantly).
    rows : list of dict
        One per pair and measure (:data:`PAIR_FIELDS`): ``estimate`` = ``mean - other_mean`` with its interval,
        ``hsd_low``/``hsd_high`` (the simultaneous Tukey interval, Tukey tests), Cohen's ``d_z``
        (``effect_size``) with its bootstrap percentile interval, the test's ``p_value``, ``p_adjusted``.
    omnibus : list of dict
        Per measure, the repeated-measures ANOVA and Friedman's test (``test``, ``statistic``, ``df``,
        ``p_value``).
    power : dict of str to float
        Per measure, the share of pairs significant at ``alpha`` by the comparison's test and correction.
    sakai : dict of str to dict
        Per measure, Sakai's discriminative power (:func:`ranklens.stats.estimate_discriminative_power`: the
        paired bootstrap of Sakai 2006, or the randomised Tukey HSD when that is the test, with the comparison's
        resamples and seed): ``power`` (share of pairs with ASL < alpha), ``required_difference`` (the estimated
        difference of means needed for a pair to be significant), ``method``, ``significant``, ``pairs``...
    settings : dict
        Test, correction, alpha, confidence, interval method, resamples, seed, convention.
    notes : list of str
        Queries left out, and why.
    """

    runs: list[str]
    measures: list[str]
    summary: list[dict[str, Any]]
    rows: list[dict[str, Any]]
    omnibus: list[dict[str, Any]]
    power: dict[str, float]
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    sakai: dict[str, dict[str, Any]] = field(default_factory=dict)
    per_query: dict[str, Any] = field(default_factory=dict, repr=False)

    def row(self, run: str, other: str, measure: str) -> dict[str, Any]:
        """The row of one pair (in either order: ``estimate`` is then ``mean(run) - mean(other)`` as asked)."""
        for r in self.rows:
            if r["measure"] != measure:
                continue
            if (r["run"], r["other"]) == (run, other):
                return r
            if (r["run"], r["other"]) == (other, run):
                flip = {"run": run, "other": other, "mean": r["other_mean"], "other_mean": r["mean"],
                        "estimate": -r["estimate"], "ci_low": -r["ci_high"], "ci_high": -r["ci_low"],
                        "hsd_low": -r["hsd_high"], "hsd_high": -r["hsd_low"], "wins": r["losses"],
                        "losses": r["wins"], "effect_size": -r["effect_size"], "effect_low": -r["effect_high"],
                        "effect_high": -r["effect_low"]}
                return {**r, **flip}
        raise KeyError(f"no pair of runs {run!r} and {other!r} for measure {measure!r}")

    def matrix(self, measure: str) -> np.ndarray:
        """The significance matrix of a measure: ``p_adjusted`` of every pair, runs in :attr:`runs` order,
        NaN on the diagonal."""
        idx = {r: i for i, r in enumerate(self.runs)}
        out = np.full((len(self.runs), len(self.runs)), np.nan)
        for r in self.rows:
            if r["measure"] == measure:
                i, j = idx[r["run"]], idx[r["other"]]
                out[i, j] = out[j, i] = r["p_adjusted"]
        return out

    def letters(self, measure: str) -> dict[str, str]:
        """The compact letter display of a measure: ``{run: letters}``."""
        return {r["run"]: r["letters"] for r in self.summary if r["measure"] == measure}

    def to_dict(self) -> dict[str, Any]:
        """Plain data (NaN as None), for JSON: ``kind``, ``runs``, ``measures``, ``settings``, ``summary``,
        ``pairs``, ``omnibus``, ``discriminative_power``, ``sakai_power``, ``notes``."""
        return dict(json.loads(self.to_json()))

    def to_json(self) -> str:
        """:meth:`to_dict` as strict JSON."""
        return self.render("json")

    def to_csv(self) -> str:
        """One line per pair and measure, every field (:data:`PAIR_FIELDS`), full precision."""
        return self.render("csv")

    def render(self, format: str = "table", digits: int = 4) -> str:
        """In a format of the registry that renders comparisons of every pair (built in: table, markdown, latex,
        html: per measure the runs with their letters, the significance matrix, the pairs; csv; json)."""
        return render_output(self, format, digits=digits)

    def table(self, digits: int = 4) -> str:
        """Plain text: per measure, the runs with their letters, the significance matrix and the pairs."""
        return self.render("table", digits)

    def to_markdown(self, digits: int = 4) -> str:
        """As :meth:`table`, GitHub-flavoured Markdown tables."""
        return self.render("markdown", digits)

    def to_latex(self, digits: int = 4) -> str:
        """As :meth:`table`, LaTeX ``tabular`` (booktabs); letters as superscripts of the means."""
        return self.render("latex", digits)

    def _repr_html_(self) -> str:
        return self.render("html")

    def to_pandas(self, kind: str = "pairs") -> Any:
        """A pandas DataFrame of the pairs (``kind="pairs"``) or of the runs (``kind="summary"``)."""
        from .._base.deps import require
        from .._core.schema import plain

        if kind not in ("pairs", "summary"):
            raise InvalidParameterError(f"`kind` must be 'pairs' or 'summary'; got {kind!r}.")
        rows, fields = (self.rows, PAIR_FIELDS) if kind == "pairs" else (self.summary, SUMMARY_FIELDS)
        return require("pandas").DataFrame({k: [plain(r.get(k)) for r in rows] for k in fields})

    def __repr__(self) -> str:
        s = self.settings
        return (f"<PairwiseComparison of {len(self.runs)} runs ({', '.join(self.runs)}) on "
                f"{', '.join(self.measures)}, test={s['test']!r}, convention={s['convention']!r}>")

    def __str__(self) -> str:
        return self.table()


def _intervals(x: np.ndarray, ci: str, confidence: float, n_resamples: int, seed: int) -> list[tuple[float, float]]:
    """The interval of the mean of each column of ``x`` (bootstrap BCa/percentile, or t)."""
    if x.shape[0] < 2:
        return [(math.nan, math.nan)] * x.shape[1]
    if ci == "t":
        return [(iv.low, iv.high) for iv in (t_interval(x[:, j], confidence) for j in range(x.shape[1]))]
    boot = bootstrap_means(x, n_resamples, seed)
    return [interval_from_bootstrap(x[:, j], boot[:, j], ci, confidence) for j in range(x.shape[1])]


def _effect_intervals(d: np.ndarray, confidence: float, n_resamples: int, seed: int) -> np.ndarray:
    """Percentile bootstrap intervals of Cohen's d_z of each column of ``d`` (``(2, pairs)``): the bootstrap
    means of ``d`` and ``d**2`` on the same resampled queries give each resample's mean and sd; the bounds are
    resampled values (the quantiles below and above, not interpolated). NaN when every difference is equal
    (d_z is not defined)."""
    n, P = d.shape
    out = np.full((2, P), np.nan)
    if n < 3 or P == 0:
        return out
    boot = bootstrap_means(np.hstack([d, d * d]), n_resamples, seed)
    m1, m2 = boot[:, :P], boot[:, P:]
    sd = np.sqrt(np.maximum(m2 - m1 * m1, 0.0) * n / (n - 1.0))
    # a resample without spread: d_z is +-inf (a constant non-zero difference) or 0 (no difference at all)
    with np.errstate(divide="ignore", invalid="ignore"):
        dz = np.where(sd > 0, m1 / sd, np.where(m1 == 0, 0.0, np.sign(m1) * np.inf))
    a = (1.0 - confidence) / 2.0
    out[0] = np.quantile(dz, a, axis=0, method="lower")  # no interpolation (with an infinite resample)
    out[1] = np.quantile(dz, 1.0 - a, axis=0, method="higher")
    all_equal = (d == d[:1]).all(axis=0)  # every resample is the sample itself
    out[:, all_equal] = np.nan
    return out


def _pair_p(test: str, X: np.ndarray, ia: np.ndarray, ib: np.ndarray, n_resamples: int, seed: int,
            confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(statistic, p_value, simultaneous interval (2, pairs) or None) of every pair (ia[p], ib[p])."""
    D = X[:, ia] - X[:, ib]
    if test == "randomized_tukey":
        return np.abs(D.mean(axis=0)), M.randomized_tukey_hsd(X, n_resamples, seed)[ia, ib], None
    if test in ("tukey", "tukey_oneway"):
        t = M.tukey_hsd(X, blocked=test == "tukey", confidence=confidence)
        return t.statistic[ia, ib], t.p_value[ia, ib], np.vstack([t.ci_low[ia, ib], t.ci_high[ia, ib]])
    if test == "randomization":
        return D.mean(axis=0), S.sign_flip_p(D, n_resamples, seed), None
    stat, p = np.empty(len(ia)), np.empty(len(ia))
    for j in range(len(ia)):  # a loop over pairs
        if test == "bootstrap":
            stat[j], p[j] = D[:, j].mean(), S.bootstrap_p(D[:, j], n_resamples, seed)
        else:
            r = (S.paired_t if test == "t" else S.wilcoxon)(X[:, ia[j]], X[:, ib[j]])
            stat[j], p[j] = r.statistic, r.p_value
    return stat, p, None


def pair_correction(test: str, correction: str | None) -> str:
    """The correction of a comparison of every pair: ``"tukey"`` for a Tukey test (which refuses another), the
    one given (default Holm) otherwise."""
    if test not in PAIR_TESTS:
        raise InvalidParameterError(f"`test` must be one of {', '.join(PAIR_TESTS)}; got {test!r}.")
    if test in _TUKEY:
        if correction not in (None, "none"):
            raise InvalidParameterError(f"`correction` {correction!r}: the {test} test adjusts for the pairs itself; "
                                        "leave `correction` unset (or 'none').")
        return "tukey"
    return correction or "holm"


def compare_all(table: RunValues, names: list[str], *, test: str, correction: str, alpha: float, confidence: float,
                ci: str, n_resamples: int, seed: int) -> PairwiseComparison:
    """Every pair of runs: the work of ``compare(..., pairs="all")`` on the runs' values (parameters checked
    there, the correction by :func:`pair_correction`)."""
    k = len(names)
    ia, ib = np.triu_indices(k, 1)
    notes, summary, rows, omnibus = list(table.notes), [], [], []
    for mi, key in enumerate(table.keys):
        vals = table.values[mi]
        full = ~np.isnan(vals).any(axis=1)
        X = vals[full]
        n = X.shape[0]
        left = int((~full).sum())
        if left:
            some = np.isnan(vals[~full]).sum(axis=0)
            notes.append(f"{key}: over the {n} queries every run counts; left out: {left} queries not counted by "
                         "every run (" + ", ".join(f"{nm} lacks {int(c)}" for nm, c in zip(names, some) if c) + ")")
        if n < 2:
            raise InvalidParameterError(f"{key}: {n} queries counted by every run; comparing all pairs needs at "
                                        "least 2.")
        D = X[:, ia] - X[:, ib]
        ivs = _intervals(np.hstack([X, D]), ci, confidence, n_resamples, seed)
        eff = _effect_intervals(D, confidence, n_resamples, seed)
        stat, p, hsd = _pair_p(test, X, ia, ib, n_resamples, seed, confidence)
        means = X.mean(axis=0)
        for j, name in enumerate(names):
            summary.append({"measure": key, "run": name, "mean": float(means[j]), "n": n, "ci_low": ivs[j][0],
                            "ci_high": ivs[j][1]})
        for j in range(len(ia)):
            a, b = int(ia[j]), int(ib[j])
            wtl = S.win_tie_loss(X[:, a], X[:, b])
            sd = float(D[:, j].std(ddof=1))
            rows.append({
                "measure": key, "run": names[a], "other": names[b], "mean": float(means[a]),
                "other_mean": float(means[b]), "n": n, "estimate": float(D[:, j].mean()),
                "ci_low": ivs[k + j][0], "ci_high": ivs[k + j][1],
                "hsd_low": float(hsd[0, j]) if hsd is not None else math.nan,
                "hsd_high": float(hsd[1, j]) if hsd is not None else math.nan,
                "wins": wtl.wins, "ties": wtl.ties, "losses": wtl.losses,
                "effect_size": float(D[:, j].mean()) / sd if sd > 0 else math.nan,
                "effect_low": float(eff[0, j]), "effect_high": float(eff[1, j]),
                "test": test, "statistic": float(stat[j]), "p_value": float(p[j]),
            })
        for om in (M.rm_anova(X), M.friedman(X)):
            omnibus.append({"measure": key, "test": om.test, "statistic": om.statistic, "df": list(om.df),
                            "p_value": om.p_value, "n": om.n})
    if correction == "tukey":
        for r in rows:
            r["p_adjusted"], r["significant"] = r["p_value"], bool(r["p_value"] <= alpha)
    else:
        corr = S.correct([r["p_value"] for r in rows], correction, alpha)
        for r, adj, rej in zip(rows, corr.adjusted, corr.reject):
            r["p_adjusted"], r["significant"] = adj, bool(rej)
    power, sakai = {}, {}
    method = "randomized_tukey" if test == "randomized_tukey" else "bootstrap"
    for mi, key in enumerate(table.keys):
        X = table.values[mi][~np.isnan(table.values[mi]).any(axis=1)]
        sakai[key] = estimate_discriminative_power(X, method, alpha=alpha, n_resamples=n_resamples,
                                                   seed=seed).to_dict()
        sig = np.zeros((k, k), dtype=bool)
        mine = [r for r in rows if r["measure"] == key]
        for r, pi, pj in zip(mine, ia, ib):
            sig[pi, pj] = sig[pj, pi] = r["significant"]
        runs_rows = [r for r in summary if r["measure"] == key]
        for r, letters in zip(runs_rows, M.compact_letters([r["mean"] for r in runs_rows], sig)):
            r["letters"] = letters
        power[key] = float(np.mean([r["significant"] for r in mine]))
    settings = {
        "test": test, "test_description": _TEST_NAMES[test], "correction": correction, "alpha": float(alpha),
        "confidence": confidence, "ci_method": ci, "n_resamples": n_resamples, "seed": seed,
        "convention": table.convention, "n_tests": len(rows), "pairs": "all",
        "p_value_rule": "(count + 1) / (n_resamples + 1)"
        if test in ("randomization", "bootstrap", "randomized_tukey") else "analytic",
    }
    per_query = {"queries": table.queries, "values": table.values, "runs": names, "measures": table.keys}
    return PairwiseComparison(names, table.keys, summary, rows, omnibus, power, settings, notes, sakai, per_query)
