"""Thin drivers around the real peer libraries: each returns what the peer itself computed.

Nothing here re-implements a measure; the only arithmetic is averaging per-query values that a peer
returns per query and leaves the mean to its caller (pytrec_eval, scikit-learn on ragged lists).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import defaultdict
from pathlib import Path

import numpy as np

from _gen import Query, long_arrays

REPO = Path(__file__).resolve().parents[2]
EVIDENTLY_PYTHON = REPO / ".venv-evidently" / "bin" / "python"
EVIDENTLY_RUNNER = REPO / "tests" / "peers" / "evidently_runner.py"


# -- scikit-learn ---------------------------------------------------------------------------------

def sklearn_per_query(qs: list[Query], k: int | None) -> dict[str, float]:
    from sklearn.metrics import ndcg_score

    return {q.qid: float(ndcg_score([q.labels], [q.scores], k=k)) for q in qs}


# -- pytrec_eval (trec_eval 9.x) ------------------------------------------------------------------

def pytrec_eval(qrels: dict, run: dict, measures: set[str]) -> dict[str, dict[str, float]]:
    import pytrec_eval as pte

    return pte.RelevanceEvaluator(qrels, measures).evaluate(run)


# -- ir_measures ----------------------------------------------------------------------------------

def ir_measures_calc(provider_name: str, measures: list, qrels: dict, run: dict):
    """(per-query {measure str: {qid: value}}, aggregate {measure str: value}) from one provider."""
    import ir_measures

    provider = getattr(ir_measures, provider_name)
    per: dict[str, dict[str, float]] = defaultdict(dict)
    for m in provider.iter_calc(measures, qrels, run):
        per[str(m.measure)][m.query_id] = float(m.value)
    agg = {str(k): float(v) for k, v in provider.calc_aggregate(measures, qrels, run).items()}
    return dict(per), agg


# -- ranx -----------------------------------------------------------------------------------------

def ranx_calc(qrels: dict, run: dict, metrics: list[str], **kw):
    """(per-query {metric: {qid: value}}, aggregate {metric: value}) from ranx Qrels/Run objects."""
    from ranx import Qrels, Run, evaluate

    r = Run.from_dict(run)
    agg = evaluate(Qrels.from_dict(qrels), r, metrics, **kw)
    if len(metrics) == 1:
        agg = {metrics[0]: agg}
    per = {m: {q: float(v) for q, v in r.scores[m].items()} for m in metrics}
    return per, {m: float(v) for m, v in agg.items()}


# -- LightGBM -------------------------------------------------------------------------------------

def _lgb_params(eval_at, metric="ndcg"):
    return dict(objective="lambdarank", metric=metric, eval_at=list(eval_at), verbose=-1, num_threads=1,
                min_data_in_leaf=1, min_data_in_bin=1)


def lightgbm_eval(qs: list[Query], eval_at, weights: dict[str, float] | None = None,
                  per_query: bool = True, metric: str = "ndcg"):
    """LightGBM's ``metric``@k (ndcg or map) of the init scores (no boosting round): aggregate and per-query values.

    The scores are the Dataset's ``init_score``; a Booster that has not been updated evaluates exactly
    them. Per-query values come from one single-query validation Dataset per query.
    """
    import lightgbm as lgb

    a = long_arrays(qs)
    n = a["score"].shape[0]
    X = np.zeros((n, 1))
    w = None
    if weights is not None:
        w = np.repeat([weights[q.qid] for q in qs], a["sizes"])
    ds = lgb.Dataset(X, label=a["relevance"], group=a["sizes"], init_score=a["score"], weight=w,
                     params={"verbose": -1}, free_raw_data=False)
    bst = lgb.Booster(params=_lgb_params(eval_at, metric), train_set=ds)
    agg = {r[1]: float(r[2]) for r in bst.eval_train()}
    per: dict[str, dict[str, float]] = defaultdict(dict)
    if per_query:
        off = np.concatenate([[0], np.cumsum(a["sizes"])])
        for i, q in enumerate(qs):
            lo, hi = off[i], off[i + 1]
            dq = lgb.Dataset(X[lo:hi], label=a["relevance"][lo:hi], group=[hi - lo], init_score=a["score"][lo:hi],
                             reference=ds, params={"verbose": -1})
            for r in bst.eval(dq, "q"):
                per[r[1]][q.qid] = float(r[2])
    return dict(per), agg


# -- XGBoost --------------------------------------------------------------------------------------

def _xgb_parse(text: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for part in text.split("\t")[1:]:
        name, value = part.rsplit(":", 1)
        data, metric = name.split("-", 1)
        out[data][metric] = float(value)
    return out


def xgboost_eval(qs: list[Query], metrics: list[str], weights: dict[str, float] | None = None,
                 per_query: bool = True, params: dict | None = None):
    """XGBoost's ranking metrics of ``base_margin`` = the scores, with a booster of zero rounds (eta=0).

    Returns (per-query {metric: {qid: value}}, aggregate {metric: value}).
    """
    import xgboost as xgb

    a = long_arrays(qs)
    X = np.zeros((a["score"].shape[0], 1))
    d = xgb.DMatrix(X, label=a["relevance"], base_margin=a["score"])
    d.set_group(a["sizes"])
    if weights is not None:
        d.set_weight(np.array([weights[q.qid] for q in qs], dtype=np.float64))
    p = {"objective": "rank:ndcg", "eval_metric": list(metrics), "eta": 0.0, "nthread": 1}
    p.update(params or {})
    bst = xgb.train(p, d, num_boost_round=0)
    agg = _xgb_parse(bst.eval(d, "all"))["all"]
    per: dict[str, dict[str, float]] = defaultdict(dict)
    if per_query:
        off = np.concatenate([[0], np.cumsum(a["sizes"])])
        mats = []
        for i in range(len(qs)):
            lo, hi = off[i], off[i + 1]
            dq = xgb.DMatrix(X[lo:hi], label=a["relevance"][lo:hi], base_margin=a["score"][lo:hi])
            dq.set_group([hi - lo])
            mats.append((dq, f"q{i}"))
        parsed = _xgb_parse(bst.eval_set(mats))
        for i, q in enumerate(qs):
            for m, v in parsed[f"q{i}"].items():
                per[m][q.qid] = v
    return dict(per), agg


# -- CatBoost -------------------------------------------------------------------------------------

def catboost_eval(qs: list[Query], metric: str, weights: dict[str, float] | None = None,
                  per_query: bool = True):
    """CatBoost's metric via ``catboost.utils.eval_metric`` (no model): aggregate and per-query values."""
    from catboost.utils import eval_metric

    a = long_arrays(qs)
    gid = np.repeat(np.arange(len(qs)), a["sizes"])
    gw = None if weights is None else np.repeat([weights[q.qid] for q in qs], a["sizes"]).tolist()
    agg = float(eval_metric(a["relevance"].tolist(), a["score"].tolist(), metric, group_id=gid.tolist(),
                            group_weight=gw)[0])
    per = {}
    if per_query:
        for q in qs:
            per[q.qid] = float(eval_metric(q.labels.tolist(), q.scores.tolist(), metric,
                                           group_id=[0] * q.n)[0])
    return per, agg


# -- torchmetrics ---------------------------------------------------------------------------------

def torchmetrics_eval(qs: list[Query], top_k: int | None, empty_target_action: str = "neg"):
    """(per-query from the functional, aggregate from ``RetrievalNormalizedDCG``)."""
    import torch
    from torchmetrics.functional.retrieval import retrieval_normalized_dcg
    from torchmetrics.retrieval import RetrievalNormalizedDCG

    a = long_arrays(qs)
    idx = torch.as_tensor(np.repeat(np.arange(len(qs)), a["sizes"]), dtype=torch.long)
    preds = torch.as_tensor(a["score"])
    target = torch.as_tensor(a["relevance"])
    metric = RetrievalNormalizedDCG(top_k=top_k, empty_target_action=empty_target_action)
    agg = float(metric(preds, target, indexes=idx))
    per = {}
    for q in qs:
        per[q.qid] = float(retrieval_normalized_dcg(torch.as_tensor(q.scores), torch.as_tensor(q.labels),
                                                    top_k=top_k))
    return per, agg


# -- Evidently (separate environment) --------------------------------------------------------------

class EvidentlyEnvMissing(RuntimeError):
    pass


def _evidently_request(qs: list[Query], ks: list[int], per_user: bool, no_feedback_users: bool) -> dict:
    a = long_arrays(qs)
    return {
        "ks": ks,
        "per_user": per_user,
        "no_feedback_users": no_feedback_users,
        "users": a["query"].tolist(),
        "items": a["item"].tolist(),
        "target": a["relevance"].tolist(),
        "preds": a["score"].tolist(),
    }


def evidently_eval_many(cases: list[list[Query]], ks: list[int], per_user: bool = True,
                        no_feedback_users: bool = False) -> list[dict]:
    """Run tests/peers/evidently_runner.py in .venv-evidently (one process for all cases)."""
    if not EVIDENTLY_PYTHON.exists():
        raise EvidentlyEnvMissing(
            f"the Evidently peer environment {EVIDENTLY_PYTHON.parent.parent} is missing: run `make install-test` "
            "(Evidently 0.7 needs pandas<3, so it lives in its own venv)"
        )
    payload = {"batch": [_evidently_request(qs, ks, per_user, no_feedback_users) for qs in cases]}
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    proc = subprocess.run([str(EVIDENTLY_PYTHON), str(EVIDENTLY_RUNNER)], input=json.dumps(payload),
                          capture_output=True, text=True, env=env, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"evidently_runner failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)["batch"]


def evidently_eval(qs: list[Query], ks: list[int], per_user: bool = True, no_feedback_users: bool = False) -> dict:
    return evidently_eval_many([qs], ks, per_user, no_feedback_users)[0]
