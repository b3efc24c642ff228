"""Several target rankings against the logged one, on the same log: each estimate and its difference.

The logged ranker's value is its own (on-policy) value on the log: the online measures of the logged lists
(:func:`ranklens.online.measures.list_values`), or for ``click_<measure>`` the core measure of the logged lists
with the same relevance estimates (a click over its exposure) the estimators use. A target's difference with it
(``estimate`` = target - logged, the project's word) is paired by session: the per-session difference of the
target's (linearised, for snips) value and the logged value, with its normal interval.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._core.stats import check_confidence
from ..errors import InvalidParameterError
from ._log import ClickLog, read_log
from ._measures import CounterfactualMeasure, parse_measure
from ._target import lay_target
from .estimate import ESTIMATORS, check_names, model_and_examination, session_values, summarise

__all__ = ["COLUMNS", "compare", "logged_values"]

#: The columns of :func:`compare`'s table.
COLUMNS = ("run", "measure", "estimator", "value", "ci_low", "ci_high", "se", "estimate", "estimate_ci_low",
           "estimate_ci_high", "effective_sample_size", "max_weight", "unlogged_share", "sessions")


def logged_values(lg: ClickLog, m: CounterfactualMeasure, exam: np.ndarray, convention: Any) -> np.ndarray:
    """Each session's value of the measure for the list it was logged with (see the module)."""
    k = m.k if m.k is not None else lg.depth
    if m.kind in ("clicks", "ctr"):
        from ..online.measures import list_values, parse_online

        lengths = np.bincount(lg.session, minlength=lg.n_sessions)
        return list_values(parse_online(m.key), lg.session, lg.rank, lg.click, np.zeros(lg.n_rows, dtype=bool),
                           lengths)
    from .._core.evaluate import evaluate_arrays

    theta = exam[np.minimum(lg.rank - 1, len(exam) - 1)]
    n_q = np.bincount(lg.session_query, minlength=len(lg.query_ids)).astype(np.float64)
    rho = np.bincount(lg.pair, weights=theta, minlength=lg.n_pairs) / n_q[lg.pair_query]
    top = lg.rank <= k
    gain = lg.click[top] / rho[lg.pair[top]]
    res = evaluate_arrays(lg.session[top], -lg.rank[top].astype(np.float64), gain, [m.core or ""],
                          convention=convention, per_query=True)
    out = np.full(lg.n_sessions, np.nan)
    out[np.asarray(res.queries, dtype=np.int64)] = np.asarray(res.values)[:, 0]
    return out


def compare(log: Any, targets: Mapping[str, Any] | Sequence[Any], *, estimator: str = "ips",
            measure: str = "clicks@10", click_model: Any = None, examination: Any = None, clip: float | None = None,
            confidence: float = 0.95, convention: Any = "ranklens", **columns: Any) -> Any:
    """Estimate each target ranking and its difference with the logged ranker (a pyarrow Table, :data:`COLUMNS`).

    The first row is the logged ranker itself (``run`` = ``"logged"``, its on-policy value, difference 0).
    Arguments as :func:`ranklens.counterfactual.estimate` (the ranking estimators: ips, snips, dm, dr, pi).

    Examples
    --------
    >>> log = {"group_id": [1, 1, 2, 2], "query": ["q"] * 4, "item_id": ["a", "b", "a", "b"],
    ...        "rank": [1, 2, 1, 2], "click": [0, 1, 1, 0]}
    >>> t = compare(log, {"b_first": {"q": {"b": 2, "a": 1}}}, measure="clicks@1", examination=[1.0, 0.5])
    >>> t.column("run").to_pylist(), t.column("value").to_pylist()
    (['logged', 'b_first'], [0.5, 1.0])
    """
    import pyarrow as pa

    confidence = check_confidence(confidence)
    est = str(estimator).lower()
    if est not in ESTIMATORS:
        raise InvalidParameterError(f"compare runs the ranking estimators ({', '.join(ESTIMATORS)}); got "
                                    f"{estimator!r}.")
    named = check_names(targets)
    if not named:
        raise InvalidParameterError("compare needs at least one target ranking.")
    m = parse_measure(measure)
    lg = read_log(log, need_query=True, **columns)
    model, exam = model_and_examination(lg, click_model, examination, est)
    z = statistics.NormalDist().inv_cdf(0.5 + float(confidence) / 2)
    base = logged_values(lg, m, exam, convention)
    ok_b = np.isfinite(base)
    bv = float(base[ok_b].mean()) if ok_b.any() else math.nan
    bse = float(base[ok_b].std(ddof=1) / math.sqrt(ok_b.sum())) if ok_b.sum() > 1 else math.nan
    rows = [{"run": "logged", "measure": m.key, "estimator": "on-policy", "value": bv, "ci_low": bv - z * bse,
             "ci_high": bv + z * bse, "se": bse, "estimate": 0.0, "estimate_ci_low": 0.0, "estimate_ci_high": 0.0,
             "effective_sample_size": float(ok_b.sum()), "max_weight": 1.0, "unlogged_share": 0.0,
             "sessions": lg.n_sessions}]
    k = m.k if m.k is not None else lg.depth
    for name, run in named.items():
        tg = lay_target(run, lg, k, name)
        y, wsum, diag = session_values(lg, tg, m, est, exam, model, clip=clip, convention=convention)
        value, se, lo, hi = summarise(y, wsum, float(confidence))
        lin = y if wsum is None else value + (y - value * wsum) / float(np.mean(wsum))
        both = np.isfinite(lin) & ok_b
        d = lin[both] - base[both]
        dse = float(d.std(ddof=1) / math.sqrt(len(d))) if len(d) > 1 else math.nan
        dv = float(d.mean()) if len(d) else math.nan
        rows.append({"run": name, "measure": m.key, "estimator": est, "value": value, "ci_low": lo, "ci_high": hi,
                     "se": se, "estimate": dv, "estimate_ci_low": dv - z * dse, "estimate_ci_high": dv + z * dse,
                     "effective_sample_size": diag["effective_sample_size"], "max_weight": diag["max_weight"],
                     "unlogged_share": diag["unlogged_share"], "sessions": lg.n_sessions})
    return pa.Table.from_pylist(rows)
