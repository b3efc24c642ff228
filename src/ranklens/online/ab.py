"""A/B tests on ranking measures: per-list values by the core, the delta method over units, CUPED, SRM.

:func:`ab_test` reads a log of served lists (the monitoring store's event layout plus the arm and the
randomisation unit), computes each list's value of every measure (the ranking measures by
:func:`ranklens.evaluate_arrays`, the same numbers as :func:`ranklens.evaluate` on the list's gains; the online
measures of :mod:`ranklens.online.measures` from its clicks and purchases), and compares every treatment arm
with the control arm unit by unit (:mod:`ranklens.online._delta`). A measure's aggregate follows the store's
rule for it (:class:`ranklens.monitor.reports.aggregates.StoreAggregate`): a mean over lists; the geometric mean
of ``gm_map`` (on the logarithms, mapped back); ``gauc`` weighted by each list's items; a count such as
``num_rel_ret`` as its mean per list.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._base.deps import require
from ..errors import InputError, InvalidParameterError
from ._delta import compare, cuped, ratio, unit_sums, z_quantile
from ._events import Lists, read_events, served_lists
from .measures import is_online, list_values, parse_online

__all__ = ["CORRECTIONS", "ABResult", "ab_test", "list_measures", "srm_test"]

CORRECTIONS = ("none", "bonferroni", "holm")


@dataclass(frozen=True)
class ABResult:
    """The comparisons of an A/B test: one row per measure and treatment arm.

    Attributes
    ----------
    rows : tuple of dict
        ``measure``, ``arm``, ``control_arm``, ``unit``, ``n_units`` / ``n_units_control``, ``n_lists`` /
        ``n_lists_control`` (lists with a value), ``control_mean``, ``treatment_mean``, ``estimate`` (their
        difference), ``se``, ``z``, ``ci_low``, ``ci_high``, ``p_value``, ``p_adjusted``, ``relative`` with
        ``relative_ci_low`` / ``relative_ci_high``, ``method`` (``delta`` or ``cuped``), ``variance_reduction``
        (CUPED: 1 - its variance over the delta method's), ``sequential``, ``significant``, ``srm_p_value``.
    srm : dict
        Sample-ratio test: ``chi2``, ``df``, ``p_value``, ``units`` and ``expected`` share per arm.
    """

    rows: tuple[dict[str, Any], ...]
    srm: dict[str, Any]
    arms: tuple[str, ...]
    control: str
    unit: str
    alpha: float
    correction: str
    covariates: tuple[str, ...] = ()
    sequential: str | None = None
    looks: tuple[dict[str, Any], ...] = field(default=(), repr=False)

    def row(self, measure: str, arm: str) -> dict[str, Any]:
        """The row of one measure and treatment arm."""
        for r in self.rows:
            if r["measure"] == measure and r["arm"] == arm:
                return r
        raise KeyError(f"no row for measure {measure!r} and arm {arm!r}; measures: "
                       f"{sorted({r['measure'] for r in self.rows})}, arms: {sorted({r['arm'] for r in self.rows})}")

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame."""
        return require("pandas").DataFrame(list(self.rows))

    def table(self) -> tuple[list[str], list[dict[str, Any]]]:
        """``(column names, rows)`` for :func:`ranklens.render.render_rows`."""
        names = list(self.rows[0]) if self.rows else []
        return names, [dict(r) for r in self.rows]


def srm_test(units: Any, expected: Any) -> dict[str, Any]:
    """Chi-square test of units per arm against the planned shares (``df`` = arms - 1).

    >>> round(srm_test([5200, 4800], [0.5, 0.5])["chi2"], 6)  # 10000 * ((0.52-0.5)^2/0.5 + (0.48-0.5)^2/0.5)
    16.0
    """
    n = np.asarray(units, dtype=np.float64)
    p = np.asarray(expected, dtype=np.float64)
    total = n.sum()
    chi2 = float(((n - total * p) ** 2 / (total * p)).sum())
    df = len(n) - 1
    pval = float(require("scipy.stats").chi2.sf(chi2, df)) if df > 0 else math.nan
    return {"chi2": chi2, "df": df, "p_value": pval, "units": n.astype(np.int64).tolist(), "expected": p.tolist()}


def list_measures(lists: Lists, measures: Sequence[str], convention: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per list (rows) and measure (columns): the value ``y`` and weight ``x`` whose unit sums make the ratio
    (``x`` 0: the list has no value), on the scale the measure's aggregate is a mean of."""
    from ..evaluate import evaluate_arrays
    from ..monitor.reports.aggregates import StoreAggregate

    n = len(lists.arm)
    y, x = np.zeros((n, len(measures))), np.zeros((n, len(measures)))
    core = [i for i, m in enumerate(measures) if not is_online(m)]
    if core:
        keys = [measures[i] for i in core]
        res = evaluate_arrays(lists.row_list, lists.key, lists.gain, keys, convention=convention, per_query=True)
        vals = np.full((n, len(keys)), np.nan)
        vals[np.asarray(res.queries, dtype=np.int64)] = res.values
        for j, i in enumerate(core):
            agg = StoreAggregate.of(keys[j])
            v = vals[:, j]
            ok = ~np.isnan(v)
            lw = agg.weights(lists.lengths.astype(np.float64))
            w = lw if lw is not None else np.ones(n)
            t = agg.transform(np.where(ok, v, 1.0))
            y[:, i] = np.where(ok, w * t, 0.0)
            x[:, i] = np.where(ok, w, 0.0)
    for i, m in enumerate(measures):
        if is_online(m):
            y[:, i] = list_values(parse_online(m), lists.row_list, lists.position, lists.click, lists.buy,
                                  lists.lengths)
            x[:, i] = 1.0
    return y, x


def _kinds(measures: Sequence[str]) -> list[str]:
    from ..monitor.reports.aggregates import StoreAggregate

    return ["mean" if is_online(m) else StoreAggregate.of(m).kind for m in measures]


def _check_measures(measures: str | Sequence[str]) -> list[str]:
    from ..measures import parse_measure

    ms = [measures] if isinstance(measures, str) else list(measures)
    if not ms:
        raise InvalidParameterError("`measures` is empty; name at least one, e.g. ['ndcg@10', 'clicks@10'].")
    out = []
    for m in ms:
        if is_online(m):
            out.append(parse_online(m).key)
        else:
            out.extend(p.key for p in parse_measure(m))
    return list(dict.fromkeys(out))


def _design(lists: Lists, control: str, expected_split: Mapping[str, float] | None, arm_col: str
            ) -> tuple[list[int], np.ndarray]:
    """(arm codes in report order: control first, expected shares)."""
    if control not in lists.arms:
        raise InputError(f"control arm {control!r} is not in column {arm_col!r} (arms: {', '.join(lists.arms)}).")
    order = [lists.arms.index(control)] + [i for i, a in enumerate(lists.arms) if a != control]
    if len(order) < 2:
        raise InputError(f"column {arm_col!r} has only the control arm {control!r}: nothing to compare.")
    if expected_split is None:
        return order, np.full(len(order), 1.0 / len(order))
    split = {str(k): float(v) for k, v in expected_split.items()}
    for a in split:
        if a not in lists.arms:
            raise InputError(f"arm {a!r} of expected_split has no units in the events (arms: "
                             f"{', '.join(lists.arms)}).")
    missing = [lists.arms[i] for i in order if lists.arms[i] not in split]
    if missing:
        raise InvalidParameterError(f"expected_split gives no share to arm {missing[0]!r}.")
    p = np.array([split[lists.arms[i]] for i in order])
    if (p <= 0).any() or not math.isclose(p.sum(), 1.0, abs_tol=1e-6):
        raise InvalidParameterError(f"expected_split shares must be > 0 and sum to 1; got {split!r}.")
    return order, p


def _adjust(p: np.ndarray, method: str) -> np.ndarray:
    """Family-wise adjusted p-values over all rows."""
    p = np.asarray(p, dtype=np.float64)
    m = int(np.sum(~np.isnan(p)))
    if method == "none" or m == 0:
        return p
    if method == "bonferroni":
        return np.minimum(1.0, p * m)
    order = np.argsort(np.where(np.isnan(p), np.inf, p))
    adj = np.full(len(p), np.nan)
    running = 0.0
    for rank, i in enumerate(order[:m]):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adj[i] = running
    return adj


def ab_test(
    events: Any,
    measures: str | Sequence[str] = ("ndcg@10", "clicks@10"),
    *,
    arm_col: str = "arm",
    control: str = "control",
    unit_col: str = "user_id",
    covariates: str | Sequence[str] | None = None,
    alpha: float = 0.05,
    sequential: Any = None,
    expected_split: Mapping[str, float] | None = None,
    correction: str = "none",
    attribution: Any = None,
    convention: Any = "ranklens",
    click_label: str = "click",
    purchase_label: str = "buy",
    group_col: str = "group_id",
) -> ABResult:
    """Compare each treatment arm with the control arm on ranking and online measures, unit by unit.

    Parameters
    ----------
    events : table or path(s)
        One row per served item (``group_id``, ``item_id``, ``rank`` or ``score``, ``relevance`` and/or
        ``labels``, ``timestamp``) with the arm and the unit of its list: pyarrow / pandas / polars, or
        Parquet, CSV, TSV, JSON Lines files.
    measures : str or list of str
        Any measure of ranklens (``ndcg@10``, ``map``, ``P@5``...) and the online measures (``clicks@10``,
        ``ctr@10``, ``abandonment``, ``first_click_rr``, ``purchases``).
    arm_col, control, unit_col, group_col : str
        The arm column and the control arm's name, the randomisation unit, the served list.
    covariates : str or list of str, optional
        Unit-level columns (one value per unit: a pre-period value, or a model's prediction) for CUPED.
    alpha : float
        Two-sided level of the tests and 1 - the intervals' coverage.
    sequential : None, "always_valid", "group_sequential", AlwaysValid or GroupSequential
        None: the fixed-horizon z test. Otherwise one look per day of the log (``timestamp``), and p-values and
        intervals valid under those looks (:mod:`ranklens.online.sequential`); ``looks`` holds each day's.
    expected_split : mapping arm -> share, optional
        The planned split for the sample-ratio test (default: equal shares).
    correction : {"none", "bonferroni", "holm"}
        Over all rows (measures x treatment arms): ``p_adjusted``; intervals at level ``alpha / rows`` unless
        "none".
    attribution : ranklens.monitor.Attribution, optional
        How labels become gains (default: binary, positive class ``click``), as in the monitoring store.
    convention : str or Convention
        The ranking measures' convention.
    click_label, purchase_label : str
        The labels that are a click and a purchase for the online measures.

    Returns
    -------
    ABResult

    Examples
    --------
    >>> from ranklens import online
    >>> sim = online.simulate({"control": 1.0, "treatment": 0.3}, n_users=3000, n_queries=30, seed=2)
    >>> res = online.ab_test(sim.events, ["ndcg@10", "clicks@10"])
    >>> r = res.row("clicks@10", "treatment")
    >>> r["ci_low"] < sim.truth("clicks@10").difference("clicks@10", "treatment") < r["ci_high"]
    True
    """
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise InvalidParameterError(f"`alpha` must be in (0, 1); got {alpha!r}.")
    if correction not in CORRECTIONS:
        raise InvalidParameterError(f"`correction` must be one of {', '.join(CORRECTIONS)}; got {correction!r}.")
    ms = _check_measures(measures)
    from .sequential import design_of

    seq = design_of(sequential)
    covs = tuple([covariates] if isinstance(covariates, str) else list(covariates or ()))
    table = read_events(events)
    lists = served_lists(table, arm_col=arm_col, unit_col=unit_col, group_col=group_col, covariates=covs,
                         attribution=attribution, click_label=click_label, purchase_label=purchase_label)
    order, expected = _design(lists, control, expected_split, arm_col)
    y, x = list_measures(lists, ms, convention)
    return analyse(lists, ms, y, x, order, expected, alpha=alpha, correction=correction, covariates=covs,
                   sequential=seq, unit=unit_col)


def analyse(lists: Lists, ms: Sequence[str], y: np.ndarray, x: np.ndarray, order: Sequence[int],
            expected: np.ndarray, *, alpha: float, correction: str, covariates: tuple[str, ...], sequential: Any,
            unit: str) -> ABResult:
    """The :class:`ABResult` of per-list values ``y`` / ``x`` (lists x measures) of the :class:`Lists`."""
    n_units, n_arms = len(lists.units), len(lists.arms)
    remap = np.empty(n_arms, dtype=np.int64)
    remap[np.asarray(order)] = np.arange(n_arms)
    arm = remap[lists.unit_arm]
    units_per_arm = np.bincount(arm, minlength=n_arms)
    srm = srm_test(units_per_arm, expected)
    kinds = _kinds(ms)
    n_rows = len(ms) * (n_arms - 1)
    level = alpha if correction == "none" else alpha / n_rows
    zc = z_quantile(level)
    rows: list[dict[str, Any]] = []
    looks: list[dict[str, Any]] = []
    for j, m in enumerate(ms):
        yy = np.bincount(lists.unit, weights=y[:, j], minlength=n_units)
        xx = np.bincount(lists.unit, weights=x[:, j], minlength=n_units)
        s = unit_sums(arm, yy, xx, n_arms, lists.covariates if covariates else None)
        valued = np.bincount(arm[lists.unit], weights=(x[:, j] > 0), minlength=n_arms)
        mean, var = ratio(s)
        method, vr = "delta", math.nan
        est, est_var = mean, var
        if covariates:
            est, est_var, _ = cuped(s)
            method = "cuped"
        back = (lambda a: np.exp(a)) if kinds[j] == "geometric" else (lambda a: a)
        scale = np.exp(2 * est) if kinds[j] == "geometric" else np.ones_like(est)
        val, val_var = back(est), est_var * scale
        for a in range(1, n_arms):
            c = compare(val[a], val_var[a], val[0], val_var[0], zc)
            if covariates:
                plain = compare(back(mean[a]), var[a] * (np.exp(2 * mean[a]) if kinds[j] == "geometric" else 1),
                                back(mean[0]), var[0] * (np.exp(2 * mean[0]) if kinds[j] == "geometric" else 1), zc)
                vr = 1 - float(c["se"]) ** 2 / float(plain["se"]) ** 2
            row = {"measure": m, "arm": lists.arms[order[a]], "control_arm": lists.arms[order[0]], "unit": unit,
                   "n_units": int(units_per_arm[a]), "n_units_control": int(units_per_arm[0]),
                   "n_lists": int(valued[a]), "n_lists_control": int(valued[0]),
                   "control_mean": float(val[0]), "treatment_mean": float(val[a])}
            row.update({k: float(v) for k, v in c.items()})
            row.update({"method": method, "variance_reduction": vr, "sequential": "none"})
            rows.append(row)
        if sequential is not None:
            looks.extend(_sequential(sequential, lists, y[:, j], x[:, j], arm, n_arms, bool(covariates),
                                     kinds[j] == "geometric", level, rows[-(n_arms - 1):]))
    p_adj = _adjust(np.array([r["p_value"] for r in rows]), correction)
    for r, pa_ in zip(rows, p_adj):
        r["p_adjusted"] = float(pa_)
        if sequential is None:
            r["significant"] = bool(r["p_adjusted"] < alpha) if correction != "none" else bool(r["p_value"] < alpha)
        else:
            r["significant"] = r.pop("significant_at_level")
        r["srm_p_value"] = srm["p_value"]
    srm["arms"] = [lists.arms[i] for i in order]
    return ABResult(tuple(rows), srm, tuple(lists.arms[i] for i in order), lists.arms[order[0]], unit, alpha,
                    correction, covariates, None if sequential is None else sequential.name, tuple(looks))


def _sequential(design: Any, lists: Lists, y: np.ndarray, x: np.ndarray, arm: np.ndarray, n_arms: int,
                covariates: bool, geometric: bool, level: float, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Looks by day for one measure: the rows' p-values and intervals replaced by the sequential ones, and each
    treatment arm's looks."""
    from ._looks import daily_sums, sequential_rows

    if lists.start is None:
        raise InputError("events: sequential inference looks at the data day by day: the events need a "
                         "'timestamp' column.")
    n_days = int(lists.day.max()) + 1
    s = daily_sums(arm, lists.unit, lists.day, y, x, n_days, n_arms, lists.covariates if covariates else None)
    finals, series = sequential_rows(design, s, covariates, geometric, level, lists.start)
    out: list[dict[str, Any]] = []
    for row, final, looks in zip(rows, finals, series):
        row.update(final)
        out.extend({"measure": row["measure"], "arm": row["arm"], **look} for look in looks)
    return out
