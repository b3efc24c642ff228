"""Training-loop metrics beside the boosters' own: one evaluation of ndcg@10 on 100,000 rows, per call.

1,000 queries x 100 rows, graded labels 0-4, fixed predictions. For each booster, in one process: its own
evaluation of its ``ndcg@10`` on the data set (LightGBM: ``Booster.eval_valid``, the C++ metric on the
scores it holds; XGBoost: ``Booster.eval_set``, its metric on its cached predictions; CatBoost:
``catboost.utils.eval_metric`` on the predictions), then ranklens' metric called as the booster calls it during
training (``feval(preds, dataset)``, ``custom_metric(predt, dmatrix)``, ``metric.evaluate(approxes, target,
weight)``), each the median of 50 calls after 5 untimed ones. The values are checked to agree (1e-9).
``--append FILE`` adds the section to the benchmark report.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

CALLS, WARM = 50, 5


def _per_call(fn) -> float:
    for _ in range(WARM):
        fn()
    times = []
    for _ in range(CALLS):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def data(n_q: int = 1_000, n_i: int = 100, seed: int = 5) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = n_q * n_i
    label = np.minimum(rng.geometric(0.55, n) - 1, 4).astype(np.float64)
    X = rng.normal(size=(n, 4)) + label[:, None] * 0.3
    return X, label, np.full(n_q, n_i, dtype=np.int64), rng.normal(size=n) + 0.5 * label


def lightgbm_case(X, y, group, pred) -> dict:
    import lightgbm as lgb

    import ranklens.lightgbm

    params = {"objective": "lambdarank", "metric": "ndcg", "eval_at": [10], "verbose": -1, "num_iterations": 1}
    dtrain = lgb.Dataset(X, y, group=group, params={"verbose": -1})
    dvalid = lgb.Dataset(X, y, group=group, reference=dtrain)
    booster = lgb.Booster(params, dtrain)
    booster.add_valid(dvalid, "valid")
    booster.update()
    scores = booster.predict(X)
    metric = ranklens.lightgbm.feval("ndcg@10")
    theirs = booster.eval_valid()[0][2]
    ours = metric(scores, dvalid)[0][1]
    return {"lib": f"LightGBM {lgb.__version__}", "own": _per_call(booster.eval_valid),
            "ours": _per_call(lambda: metric(scores, dvalid)), "agree": abs(theirs - ours) <= 1e-9}


def xgboost_case(X, y, group, pred) -> dict:
    import xgboost as xgb

    import ranklens.xgboost

    qid = np.repeat(np.arange(group.shape[0]), group)
    d = xgb.DMatrix(X, label=y, qid=qid)
    booster = xgb.train({"objective": "rank:ndcg", "eval_metric": "ndcg@10"}, d, num_boost_round=1)
    predt = booster.predict(d, output_margin=True)
    metric = ranklens.xgboost.custom_metric("ndcg@10")
    theirs = float(booster.eval_set([(d, "d")]).split(":")[-1])
    ours = metric(predt, d)[0][1]
    return {"lib": f"XGBoost {xgb.__version__}", "own": _per_call(lambda: booster.eval_set([(d, "d")])),
            "ours": _per_call(lambda: metric(predt, d)), "agree": abs(theirs - ours) <= 1e-5}  # it prints 6 digits


def catboost_case(X, y, group, pred) -> dict:
    import catboost
    from catboost.utils import eval_metric

    import ranklens.catboost

    gid = np.repeat(np.arange(group.shape[0]), group)
    target = y.astype(np.float32)
    metric = ranklens.catboost.eval_metric("ndcg@10").add(y, group_id=gid)
    theirs = eval_metric(y, pred, "NDCG:top=10;type=Base", group_id=gid)[0]
    ours = metric.get_final_error(*metric.evaluate((pred,), target, None))
    return {"lib": f"CatBoost {catboost.__version__}",
            "own": _per_call(lambda: eval_metric(y, pred, "NDCG:top=10;type=Base", group_id=gid)),
            "ours": _per_call(lambda: metric.evaluate((pred,), target, None)), "agree": abs(theirs - ours) <= 1e-9}


def measure() -> dict:
    X, y, group, pred = data()
    rows = []
    for case in (lightgbm_case, xgboost_case, catboost_case):
        try:
            rows.append(case(X, y, group, pred))
        except ImportError as exc:
            print(f"  {case.__name__}: not installed ({exc})", flush=True)
            continue
        r = rows[-1]
        print(f"  {r['lib']:<20} own {r['own'] * 1e3:7.2f} ms   ranklens {r['ours'] * 1e3:7.2f} ms   "
              f"x{r['ours'] / r['own']:.2f}   agree {r['agree']}", flush=True)
    return {"rows": rows, "n": int(y.shape[0]), "load": os.getloadavg()[0]}


def section(res: dict) -> list[str]:
    lines = ["", f"## Training-loop metrics: ndcg@10 on {res['n']:,} rows, per call", "",
             "`benchmarks/training_bench.py`: 1,000 queries x 100 rows, fixed predictions; each booster's own "
             "evaluation of its ndcg@10 beside ranklens' metric called as the booster calls it in training (the "
             "data set's labels, groups and weights are prepared at its first call, later calls order the new "
             f"scores), median of {CALLS} calls after {WARM}. Load average (1 min) at the end: {res['load']:.1f}.",
             "", "| booster | its own evaluation (ms) | ranklens metric (ms) | x its own | values agree |",
             "|---|---:|---:|---:|---|"]
    for r in res["rows"]:
        lines.append(f"| {r['lib']} | {r['own'] * 1e3:.2f} | {r['ours'] * 1e3:.2f} | {r['ours'] / r['own']:.2f} | "
                     f"{'yes' if r['agree'] else 'NO'} |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--append", default=None)
    a = ap.parse_args()
    print("training-loop metrics, per call:", flush=True)
    res = measure()
    if a.append:
        with open(a.append, "a") as f:
            f.write("\n".join(section(res)) + "\n")


if __name__ == "__main__":
    main()
