"""The pseudoinverse estimator (Swaminathan et al., NeurIPS 2017) over (slot, item) indicators, per query.

A logged list of query ``q`` is the indicator vector ``1_s`` of its (slot, item) pairs over the top ``K`` slots
(``K = min(k, deepest logged rank)``) and the query's logged items. ``Gamma_q`` = the mean of ``1_s 1_s^T`` over
the query's logged sessions (identical lists counted once with their number); ``q_target`` = the target's
indicator (slots whose item the log never showed for ``q`` cannot be written in that basis: they are the
estimator's unlogged share). Each session's value is ``r_s * (pinv(Gamma_q) q_target) . 1_s`` with
``r_s = sum_r c_s,r w_r / theta_r`` (clicks@k: the clicks in the logged top k). The pseudoinverses are computed
for all queries at once (numpy's batched ``pinv``), padded to the largest query.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError
from ._log import ClickLog
from ._target import Target

__all__ = ["PI_MAX", "pi_values"]

#: The most matrix entries the estimator builds (queries x dimension**2, lists x slots**2).
PI_MAX = 50_000_000


def pi_values(lg: ClickLog, target: Target, w: np.ndarray, exam: np.ndarray, diag: dict[str, Any]) -> np.ndarray:
    """Per-session values of the pseudoinverse estimator (module docstring); ``w`` is queries x k."""
    k = w.shape[1]
    K = min(k, lg.depth)
    Q = len(lg.query_ids)
    # each pair's index among its query's pairs
    order = np.argsort(lg.pair_query, kind="stable")
    per_q = np.bincount(lg.pair_query, minlength=Q)
    local = np.empty(lg.n_pairs, dtype=np.int64)
    local[order] = np.arange(lg.n_pairs) - np.repeat(np.cumsum(per_q) - per_q, per_q)
    m = int(per_q.max())
    D = K * m
    P = lg.matrix[:, :K]
    sq = lg.session_query
    lists, inv, counts = np.unique(np.column_stack([sq, P]), axis=0, return_inverse=True, return_counts=True)
    inv = np.asarray(inv).ravel()
    if Q * D * D > PI_MAX or len(lists) * K * K > PI_MAX:
        raise InputError(f"the pseudoinverse estimator would need {Q} matrices of {D} x {D} ({len(lists)} distinct "
                         "lists): too large; use ips or dr, or a shorter cutoff.")
    lq, lp = lists[:, 0], lists[:, 1:]
    idx = np.where(lp >= 0, np.arange(K)[None, :] * m + local[np.maximum(lp, 0)], -1)  # lists x K
    ii = np.repeat(idx, K, axis=1)
    jj = np.tile(idx, (1, K))
    ok = (ii >= 0) & (jj >= 0)
    gamma = np.zeros((Q, D, D))
    np.add.at(gamma, (np.broadcast_to(lq[:, None], ii.shape)[ok], ii[ok], jj[ok]),
              np.broadcast_to(counts[:, None].astype(np.float64), ii.shape)[ok])
    n_q = np.bincount(sq, minlength=Q).astype(np.float64)
    gamma /= np.maximum(n_q, 1.0)[:, None, None]
    qt = np.zeros((Q, D))
    tp = target.pairs[:, :K]
    qi, ji = np.nonzero(tp >= 0)
    qt[qi, ji * m + local[tp[qi, ji]]] = 1.0
    coef = np.einsum("qij,qj->qi", np.linalg.pinv(gamma, hermitian=True), qt)
    score_list = np.where(idx >= 0, coef[lq[:, None], np.maximum(idx, 0)], 0.0).sum(axis=1)
    # the reward of each session: its clicks in the top K, each weighted w_r / theta_r
    top = lg.rank <= K
    rw = np.zeros(lg.n_rows)
    rw[top] = lg.click[top] * w[lg.query[top], lg.rank[top] - 1] / exam[lg.rank[top] - 1]
    reward = np.bincount(lg.session, weights=rw, minlength=lg.n_sessions)
    diag["distinct_lists"] = int(len(lists))
    return reward * score_list[inv]
