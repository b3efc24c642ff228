"""Evidently peer runner: reads a JSON request on stdin, prints Evidently's NDCG@k as JSON.

Runs only in the separate environment ``.venv-evidently`` (Evidently 0.7 needs pandas < 3); the
conformance tests call it with that interpreter (``make install-test`` creates it).

Request: ``{"ks": [1, 3, ...], "users": [...], "items": [...], "target": [...], "preds": [...],
"per_user": true, "no_feedback_users": false}`` with one entry per (user, item) row; ``preds`` are
scores (higher is better).

Answer: ``{"aggregate": {"k": value or null}, "errors": {"k": "ExcType: message"},
"per_user": {"k": {user: value}}, "evidently": version}``.

Several requests can be sent at once as ``{"batch": [request, ...]}``; the answer is then
``{"batch": [answer, ...]}`` (one interpreter start for all).

* ``aggregate`` is ``NDCGKMetric(k, no_feedback_users=...)`` run through a legacy ``Report``
  (``current_value`` of its result), one report per k so that an error at one k (Evidently raises
  ``KeyError`` when k is beyond its deepest rank) does not hide the others.
* ``per_user`` applies the same metric class to each user's rows alone: ``collect_dataset`` (the
  function ``NDCGKMetric.calculate`` calls, same arguments) then ``NDCGKMetric.calculate_ndcg`` on the
  user's frame. A user whose series does not reach k (Evidently would raise) is left out; users that
  ``collect_dataset`` drops (no positive target) are absent.
"""

from __future__ import annotations

import json
import sys
import warnings


def answer(req: dict) -> dict:
    import evidently
    import pandas as pd
    from evidently.legacy.calculations.recommender_systems import collect_dataset
    from evidently.legacy.metrics import NDCGKMetric
    from evidently.legacy.pipeline.column_mapping import ColumnMapping, RecomType
    from evidently.legacy.report import Report

    ks = [int(k) for k in req["ks"]]
    nfu = bool(req.get("no_feedback_users", False))
    df = pd.DataFrame({"users": pd.Series(req["users"], dtype=object), "items": pd.Series(req["items"], dtype=object),
                       "target": pd.Series(req["target"], dtype=float), "preds": pd.Series(req["preds"], dtype=float)})
    mapping = ColumnMapping(recommendations_type="score", target="target", prediction="preds", user_id="users",
                            item_id="items")
    out = {"aggregate": {}, "errors": {}, "per_user": {}, "evidently": evidently.__version__}
    for k in ks:
        try:
            report = Report(metrics=[NDCGKMetric(k=k, no_feedback_users=nfu)])
            report.run(reference_data=None, current_data=df, column_mapping=mapping)
            res = report.as_dict()["metrics"][0]["result"]
            out["aggregate"][str(k)] = float(res["current_value"])
        except Exception as exc:  # the error itself is the answer
            out["aggregate"][str(k)] = None
            out["errors"][str(k)] = f"{type(exc).__name__}: {exc}"
    if req.get("per_user", True):
        metric = NDCGKMetric(k=max(ks), no_feedback_users=nfu)
        prepared = collect_dataset(df["users"], df["target"], df["preds"], RecomType.SCORE, None, nfu, False)
        per = {str(k): {} for k in ks}
        for user, rows in prepared.groupby("users", sort=False):
            series = metric.calculate_ndcg(rows, max(ks))
            for k in ks:
                if k in series.index:
                    per[str(k)][str(user)] = float(series[k])
        out["per_user"] = per
    return out


def main() -> int:
    warnings.filterwarnings("ignore")
    req = json.load(sys.stdin)
    if "batch" in req:
        out = {"batch": [answer(r) for r in req["batch"]]}
    else:
        out = answer(req)
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
