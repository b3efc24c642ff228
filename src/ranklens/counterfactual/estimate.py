"""Off-policy estimates of a target ranking's click measures from another ranker's click log.

Under a position-based model a click on item ``d`` at rank ``r`` has probability ``theta_r alpha(q, d)``;
``theta`` is the examination relative to rank 1 (from a fitted click model, interventions, or given). The
**exposure** of a logged (query, item) pair is ``rho(q, d)`` = the mean over the query's logged sessions of
``theta`` at the item's rank (0 where the session did not show it): ``theta_r`` for a deterministic logger,
the mixture's for several rankers or a stochastic policy. A click over its exposure, ``c / rho``, estimates
``alpha`` (on the scale of rank 1) without bias. For an additive measure ``V = E_q sum_j w_j alpha(q, d_j)``
(``d_j`` the target's item at position j; :mod:`ranklens.counterfactual._measures`), per session ``s``:

* ``ips``: ``Y_s = sum_j w_j c_s(d_j) / rho(d_j)``, the inverse propensity ``1 / rho`` clipped at ``clip``;
  unbiased when the model holds and every target item was logged for its query.
* ``snips``: ``sum_s Y_s / sum_s W_s`` with ``W_s = sum_j w_j theta_{r_s(d_j)} / rho(d_j) / sum_j w_j`` (expected
  value: the share of the target's weight that was logged).
* ``dm``: ``sum_j w_j alpha_hat(d_j)``, the click model's attractiveness (its mean for pairs it never saw).
* ``dr``: ``dm + sum_j w_j (c_s(d_j) - q_hat_s(d_j)) / rho(d_j)``, ``q_hat`` the model's click probability of
  the logged row: unbiased when either the exposure or the model is right, and target items never logged
  get the model's value.
* ``pi``: the pseudoinverse estimator (Swaminathan et al. 2017): ``Y_s = r_s * (Gamma_q^+ q_target) . 1_s``,
  ``r_s = sum_r c_s,r w_r / theta_r`` over the logged top k, ``Gamma_q`` the mean of ``1_s 1_s^T`` over the
  query's logged lists (slot x item indicators), ``q_target`` the target's indicator. No position model for
  clicks@k; unbiased when the reward is additive over (slot, item) and the target lies in the span of the
  logged lists.

Non-additive core measures (``click_ndcg@k``...) are computed by the core per session on the gains
``c / rho`` (ips) or ``alpha_hat`` (dm). Intervals: ``ci="normal"`` uses the estimator's variance (the
per-session values' variance over n; for snips the delta method of the ratio), ``ci="bootstrap"`` resamples
sessions (percentile). The exposures are part of the design (computed from the ranks, not the clicks), kept
fixed in both.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._core.stats import check_confidence
from ..errors import InputError, InvalidParameterError
from ..online.click_models import cascade_examination
from ._log import ClickLog, read_log
from ._measures import CounterfactualMeasure, parse_measure, position_weights
from ._target import Target, lay_target
from .click_models import FittedClickModel, fit_on
from .propensity import check_examination, inverse_propensity

__all__ = ["ESTIMATORS", "Estimate", "check_names", "estimate", "model_and_examination", "session_values", "summarise"]

#: The estimators of :func:`estimate` (the slate estimators with logged propensities are in ``slate``).
ESTIMATORS = ("ips", "snips", "dm", "dr", "pi")
_PI_MAX = 50_000_000  # entries of the pseudoinverse's matrices


@dataclass(frozen=True)
class Estimate:
    """An off-policy estimate: the value, its interval and the diagnostics.

    ``diagnostics``: ``sessions``, ``effective_sample_size`` (the sessions times the weights' efficiency
    ``mean(u)^2 / mean(u^2)`` over the logged rows the target uses, ``u`` their inverse propensity: the number of
    sessions of equal weight that would be as precise), ``max_weight`` (the largest ``u``), ``clipped_rows``,
    ``unlogged_share`` (the share of the target's (session, position) slots whose item the log never showed for
    that query), ``unlogged_items`` (distinct such target (query, item) pairs), ``sessions_without_value``
    (core measures with no value for a session), ``target_ties``.
    """

    value: float
    ci_low: float
    ci_high: float
    se: float
    estimator: str
    measure: str
    confidence: float
    interval: str
    diagnostics: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values."""
        return {"measure": self.measure, "estimator": self.estimator, "value": self.value, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "se": self.se, "confidence": self.confidence, "interval": self.interval,
                **self.diagnostics}


def _model(lg: ClickLog, click_model: Any, needed: bool) -> FittedClickModel | None:
    """The click model: the one given, or fitted on the log (by name; default pbm) when ``needed``."""
    if isinstance(click_model, FittedClickModel):
        return click_model
    if click_model is not None and not isinstance(click_model, str):
        raise InvalidParameterError(f"`click_model` is a model name or a FittedClickModel; got "
                                    f"{type(click_model).__name__}.")
    return fit_on(lg, str(click_model or "pbm")) if needed or click_model is not None else None


def model_and_examination(lg: ClickLog, click_model: Any, examination: Any, estimator: str
                          ) -> tuple[FittedClickModel | None, np.ndarray]:
    """The click model (fitted when needed) and the relative examination per rank an estimator uses."""
    model = _model(lg, click_model, needed=examination is None or estimator in ("dm", "dr"))
    return model, _examination(lg, model, examination)


def _examination(lg: ClickLog, model: FittedClickModel | None, examination: Any) -> np.ndarray:
    """The relative examination per rank: ``examination`` when given, else the model's."""
    if examination is not None:
        exam = check_examination(examination)
    else:
        assert model is not None
        exam = model.examination.array
        if not (np.isfinite(exam) & (exam > 0)).all():
            raise InputError(f"the {model.kind} click model gives rank {int(np.argmax(~(exam > 0))) + 1} an "
                             "examination of 0: its clicks cannot be weighted.")
    if lg.depth > len(exam):  # refuses a click beyond its ranks (none when the log is not deeper)
        inverse_propensity(lg.rank, exam, lg.click, lg.source)
    return exam


def _model_alpha(model: FittedClickModel | None, lg: ClickLog) -> np.ndarray:
    """The model's attractiveness of each log pair on the scale of rank 1 (NaN: the model never saw it)."""
    if model is None:
        raise InvalidParameterError("the dm and dr estimators need a click model (`click_model=`), not only "
                                    "`examination`.")
    idx = model.pair_index(*lg.pair_ids())
    a = np.where(idx >= 0, model.attractiveness[np.maximum(idx, 0)] * model.theta1, np.nan)
    return a


def _row_model_click(model: FittedClickModel, lg: ClickLog, alpha: np.ndarray, exam: np.ndarray,
                     rows: np.ndarray) -> np.ndarray:
    """The model's click probability of the logged ``rows`` (indices), each in its logged list."""
    if model.kind == "pbm":
        return exam[np.minimum(lg.rank[rows] - 1, len(exam) - 1)] * alpha[lg.pair[rows]]
    P = lg.matrix
    has = P >= 0
    A = np.where(has, alpha[np.where(has, P, 0)], 0.0)
    if model.kind == "dcm":
        lam = np.asarray(model.continuation, dtype=np.float64)
        s = np.broadcast_to(1.0 - lam[None, : A.shape[1]], A.shape)
        gamma: float = 1.0
    else:
        idx = model.pair_index(*lg.pair_ids())
        sig = model.satisfaction[np.maximum(idx, 0)] if model.satisfaction is not None else np.ones(lg.n_pairs)
        s = np.where(has, sig[np.where(has, P, 0)], 0.0)
        gamma = float(model.continuation) if isinstance(model.continuation, float) else 1.0
    pc = cascade_examination(A, s, gamma) * A
    return pc[lg.session[rows], lg.rank[rows] - 1]


def session_values(lg: ClickLog, target: Target, m: CounterfactualMeasure, estimator: str, exam: np.ndarray,
                   model: FittedClickModel | None, *, clip: float | None, convention: Any
                   ) -> tuple[np.ndarray, np.ndarray | None, dict[str, Any]]:
    """(per-session values Y, per-session normalisers W (snips) or None, diagnostics)."""
    k = target.pairs.shape[1]
    n_q = np.bincount(lg.session_query, minlength=len(lg.query_ids)).astype(np.float64)
    theta_row = exam[lg.rank - 1] if lg.depth <= len(exam) else exam[np.minimum(lg.rank - 1, len(exam) - 1)]
    rho = np.bincount(lg.pair, weights=theta_row, minlength=lg.n_pairs) / n_q[lg.pair_query]
    # only the rows of target items are weighted: every per-row quantity below is over them (``used``)
    used = np.flatnonzero(target.position_of_row)
    u_used = 1.0 / rho[lg.pair[used]]
    clipped = 0
    if clip is not None:
        clipped = int((u_used > clip).sum())
        u_used = np.minimum(u_used, clip)
    slot_logged = target.pairs >= 0
    diag: dict[str, Any] = {
        "sessions": lg.n_sessions, "rows": lg.n_rows,
        "effective_sample_size": float(lg.n_sessions * u_used.mean() ** 2 / (u_used ** 2).mean())
        if u_used.size else 0.0,
        "max_weight": float(u_used.max()) if u_used.size else math.nan, "clipped_rows": clipped,
        # per session, its query's slots: summed over queries weighted by their sessions (no sessions x k copy)
        "unlogged_share": float(n_q @ (~slot_logged & target.present).sum(axis=1) / max(n_q @ target.lengths, 1)),
        "unlogged_items": int((~slot_logged & target.present).sum()), "target_ties": target.ties,
    }
    if m.additive:
        w = np.zeros((len(lg.query_ids), k))
        if k > len(exam) and m.kind in ("clicks", "ctr"):
            raise InputError(f"measure {m.key} needs the examination of ranks 1..{k}; it covers {len(exam)} (a "
                             "deeper log, or a shorter cutoff).")
        w[:, :] = position_weights(m, k, exam, convention)[None, :]
        if m.kind == "ctr":
            w = w / np.maximum(target.lengths, 1)[:, None]
        if estimator == "pi":
            from ._pi import pi_values

            return pi_values(lg, target, w, exam, diag), None, diag
        w = np.where(target.present, w, 0.0)
        return _additive(lg, target, estimator, w, used, u_used, theta_row[used], exam, model, diag)
    if estimator not in ("ips", "dm"):
        raise InvalidParameterError(f"measure {m.key} is not additive over positions: it is estimated by ips or dm "
                                    f"(the core on per-session gains), not {estimator}.")
    return _per_session_core(lg, target, m, estimator, used, u_used, model, convention, diag)


def _additive(lg: ClickLog, target: Target, estimator: str, w: np.ndarray, used: np.ndarray, u_used: np.ndarray,
              theta_used: np.ndarray, exam: np.ndarray, model: FittedClickModel | None, diag: dict[str, Any]
              ) -> tuple[np.ndarray, np.ndarray | None, dict[str, Any]]:
    """Per-session values of an additive measure from the rows ``used`` (those of target items: indices), their
    inverse propensities ``u_used`` and examinations ``theta_used``."""
    S = lg.n_sessions
    sess = lg.session[used]
    wq = w[lg.query[used], target.position_of_row[used] - 1]
    wu = wq * u_used
    click = lg.click[used]
    if estimator in ("ips", "snips"):
        y = np.bincount(sess, weights=wu * click, minlength=S)
        if estimator == "ips":
            return y, None, diag
        total = w.sum(axis=1)[lg.session_query]
        wsum = np.bincount(sess, weights=wu * theta_used, minlength=S) / np.where(total > 0, total, 1.0)
        return y, wsum, diag
    alpha = _model_alpha(model, lg)
    assert model is not None
    fallback = float(np.nanmean(alpha)) if np.isfinite(alpha).any() else 0.0
    diag["model_unseen_pairs"] = int((~np.isfinite(alpha)).sum())
    a = np.where(np.isfinite(alpha), alpha, fallback)
    ta = np.where(target.pairs >= 0, a[np.maximum(target.pairs, 0)], fallback)
    dm = (w * ta).sum(axis=1)[lg.session_query]
    if estimator == "dm":
        return dm, None, diag
    q_hat = _row_model_click(model, lg, a, exam, used)
    return dm + np.bincount(sess, weights=wu * (click - q_hat), minlength=S), None, diag


def _per_session_core(lg: ClickLog, target: Target, m: CounterfactualMeasure, estimator: str, used: np.ndarray,
                      u_used: np.ndarray, model: FittedClickModel | None, convention: Any, diag: dict[str, Any]
                      ) -> tuple[np.ndarray, np.ndarray | None, dict[str, Any]]:
    from .._core.evaluate import evaluate_arrays

    S, k = lg.n_sessions, target.pairs.shape[1]
    sq = lg.session_query
    present = target.present[sq]  # sessions x k
    if estimator == "dm":
        alpha = _model_alpha(model, lg)
        fallback = float(np.nanmean(alpha)) if np.isfinite(alpha).any() else 0.0
        a = np.where(np.isfinite(alpha), alpha, fallback)
        gains = np.where(target.pairs >= 0, a[np.maximum(target.pairs, 0)], fallback)[sq]
    else:
        gains = np.zeros((S, k))
        gains[lg.session[used], target.position_of_row[used] - 1] = lg.click[used] * u_used
    s_idx, j_idx = np.nonzero(present)
    res = evaluate_arrays(s_idx, -j_idx.astype(np.float64), gains[s_idx, j_idx], [m.core or ""],
                          convention=convention, per_query=True)
    y = np.full(S, np.nan)
    y[np.asarray(res.queries, dtype=np.int64)] = np.asarray(res.values)[:, 0]
    diag["sessions_without_value"] = int(np.isnan(y).sum())
    return y, None, diag


def summarise(y: np.ndarray, wsum: np.ndarray | None, confidence: float, ci: str = "normal",
              n_resamples: int = 2000, seed: int = 0) -> tuple[float, float, float, float]:
    """(value, se, low, high) from per-session values (and normalisers for snips); NaN values left out."""
    ok = np.isfinite(y)
    y = y[ok]
    n = len(y)
    if n == 0:
        return math.nan, math.nan, math.nan, math.nan
    z = statistics.NormalDist().inv_cdf(0.5 + confidence / 2)
    if wsum is None:
        value = float(y.mean())
        se = float(y.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    else:
        wsum = wsum[ok]
        mw = float(wsum.mean())
        if mw <= 0:
            raise InputError("snips: no logged session shows a target item (the normaliser is 0).")
        value = float(y.sum() / wsum.sum())
        se = float((y - value * wsum).std(ddof=1) / mw / math.sqrt(n)) if n > 1 else math.nan
    if ci == "normal":
        return value, se, value - z * se, value + z * se
    from .._core.intervals import bootstrap_means

    cols = np.column_stack([y] if wsum is None else [y, wsum])
    boot = bootstrap_means(cols, n_resamples, seed)
    stat = boot[:, 0] if wsum is None else boot[:, 0] / boot[:, 1]
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(stat, [alpha, 1 - alpha])
    return value, float(stat.std(ddof=1)), float(lo), float(hi)


def estimate(log: Any, target: Any = None, *, estimator: str = "ips", measure: str = "clicks@10",
             click_model: Any = None, examination: Any = None, clip: float | None = None, confidence: float = 0.95,
             ci: str = "normal", n_resamples: int = 2000, seed: int = 0, convention: Any = "ranklens",
             session_col: str | None = None, query_col: str | None = None, item_col: str | None = None,
             rank_col: str | None = None, click_col: str | None = None, click_label: str = "click") -> Estimate:
    """Estimate a target ranking's click measure from a click log (see the module for the estimators).

    Parameters
    ----------
    log : table, mapping of columns or path
        The click log (as :func:`ranklens.counterfactual.fit_click_model` reads it); it needs a query column.
    target : rankings
        Any rankings input of ranklens (a run file, a table, ``{query: {item: score}}``) over the log's queries.
        Not with the slate estimators, which read the target policy's propensities from the log.
    estimator : str
        ``ips``, ``snips``, ``dm``, ``dr``, ``pi``; or ``sips``, ``iips``, ``rips``, ``snsips``, ``sniips``,
        ``snrips``, ``cascade_dr``, which read obp's column layout (:mod:`ranklens.counterfactual.slate`).
    measure : str
        ``clicks@k``, ``ctr@k`` or ``click_<measure>`` (``click_dcg@10``, ``click_ndcg@10``...).
    click_model : str or FittedClickModel, optional
        The position bias (its examination, unless ``examination`` is given) and, for dm / dr, the direct method.
        A name fits that model on the log; default: a PBM fitted by EM on the log when one is needed.
    examination : array-like or Propensities, optional
        Examination per rank (relative to rank 1), e.g. from interventions (``estimate_examination``).
    clip : float, optional
        The largest inverse propensity ``1 / rho`` used (rows above it are clipped and counted).
    confidence, ci, n_resamples, seed
        The interval: ``"normal"`` (the estimator's variance) or ``"bootstrap"`` (sessions resampled).
    convention : str or Convention
        Of the core measures (``click_...``).

    Returns
    -------
    Estimate

    Examples
    --------
    >>> log = {"group_id": [1, 1, 2, 2], "query": ["q"] * 4, "item_id": ["a", "b", "a", "b"],
    ...        "rank": [1, 2, 1, 2], "click": [0, 1, 1, 0]}
    >>> e = estimate(log, {"q": {"b": 2.0, "a": 1.0}}, measure="clicks@1", examination=[1.0, 0.5])
    >>> e.value  # b's one click at rank 2 over its exposure 0.5, in two sessions: 2 / 2
    1.0
    """
    from .slate import SLATE_ESTIMATORS, slate_interval, slate_values

    est = str(estimator).lower().replace("-", "_")
    if est not in ESTIMATORS + SLATE_ESTIMATORS:
        raise InvalidParameterError(f"`estimator` must be one of {', '.join(ESTIMATORS + SLATE_ESTIMATORS)}; got "
                                    f"{estimator!r}.")
    if ci not in ("normal", "bootstrap"):
        raise InvalidParameterError(f"`ci` must be 'normal' or 'bootstrap'; got {ci!r}.")
    confidence = check_confidence(confidence)
    if est in SLATE_ESTIMATORS:
        if target is not None:
            raise InvalidParameterError(f"the slate estimator {est} reads the target policy's propensities from the "
                                        "log's target_* columns; `target` is for ips, snips, dm, dr and pi.")
        value, per_slate, diag = slate_values(log, est)
        se, lo, hi = slate_interval(value, per_slate, float(confidence), ci, int(n_resamples), int(seed))
        return Estimate(value, lo, hi, se, est, "reward", float(confidence), ci, diag)
    if target is None:
        raise InvalidParameterError(f"the {est} estimator needs the `target` ranking to evaluate.")
    if clip is not None and not (isinstance(clip, (int, float)) and clip >= 1 and math.isfinite(clip)):
        raise InvalidParameterError(f"`clip` must be a number >= 1 (a largest inverse propensity); got {clip!r}.")
    m = parse_measure(measure)
    lg = read_log(log, session_col=session_col, query_col=query_col, item_col=item_col, rank_col=rank_col,
                  click_col=click_col, click_label=click_label, need_query=True)
    model, exam = model_and_examination(lg, click_model, examination, est)
    k = m.k if m.k is not None else lg.depth
    tg = lay_target(target, lg, k)
    y, wsum, diag = session_values(lg, tg, m, est, exam, model, clip=clip, convention=convention)
    value, se, lo, hi = summarise(y, wsum, float(confidence), ci, int(n_resamples), int(seed))
    return Estimate(value, lo, hi, se, est, m.key, float(confidence), ci, diag)


def check_names(targets: Mapping[str, Any] | Sequence[Any]) -> dict[str, Any]:
    """Targets as a name -> run mapping (a list gets names target1, target2...)."""
    if isinstance(targets, Mapping):
        return {str(k): v for k, v in targets.items()}
    return {f"target{i + 1}": t for i, t in enumerate(targets)}

