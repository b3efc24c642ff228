"""spotify-confidence peer runner: reads a JSON request on stdin, prints its z test and sample-ratio test as JSON.

Runs only in the separate environment ``.venv-confidence`` (spotify-confidence 4.1 needs pandas < 3); the tests
and ``make bench`` call it with that interpreter (``make install-test`` creates it).

Request: ``{"cases": [case, ...]}``, a case ``{"arm": [...], "value": [...], "control": "c", "treatment": "t",
"interval": 0.95, "expected": {"c": 0.5, "t": 0.5}}`` with one entry per unit (its arm and its value), or with
``"npz": path`` instead of ``arm`` / ``value``: a numpy file holding them (large inputs, ``make bench``). The
runner does what a user of spotify-confidence does with unit-level data: a pandas group-by into the sufficient
statistics it reads (``numerator_column`` = sum of the values, ``numerator_sum_squares_column`` = sum of their
squares, ``denominator_column`` = number of units; one row per arm), then ``ZTest(...).difference(control,
treatment, absolute=True)``, and ``sample_ratio_test`` on the units per arm.

Answer: ``{"cases": [{"difference", "ci_lower", "ci_upper", "p_value", "srm_p_value", "seconds"}, ...],
"version": ...}``; ``seconds`` is the time of the group-by and the z test (not of reading the request).
"""

from __future__ import annotations

import json
import sys
import time
import warnings


def answer(case: dict) -> dict:
    import numpy as np
    import pandas as pd
    import spotify_confidence as sc
    from spotify_confidence.analysis.frequentist.sample_ratio_test import sample_ratio_test

    if "npz" in case:
        with np.load(case["npz"], allow_pickle=False) as f:
            arm, value = f["arm"].astype(str).astype(object), f["value"]
    else:
        arm, value = case["arm"], case["value"]
    units = pd.DataFrame({"arm": pd.Series(arm, dtype=object), "value": pd.Series(value, dtype=np.float64)})
    t0 = time.perf_counter()
    agg = units.assign(sq=units["value"] ** 2).groupby("arm", sort=False).agg(
        s=("value", "sum"), ss=("sq", "sum"), n=("value", "size")).reset_index()
    z = sc.ZTest(agg, numerator_column="s", numerator_sum_squares_column="ss", denominator_column="n",
                 categorical_group_columns="arm", interval_size=float(case.get("interval", 0.95)))
    d = z.difference(level_1=case["control"], level_2=case["treatment"], absolute=True).iloc[0]
    seconds = time.perf_counter() - t0
    srm = None
    if case.get("expected"):
        srm, _ = sample_ratio_test(agg, all_group_columns=["arm"], denominator="n",
                                   expected_proportions=dict(case["expected"]))
    return {"difference": float(d["difference"]), "ci_lower": float(d["ci_lower"]), "ci_upper": float(d["ci_upper"]),
            "p_value": float(d["p-value"]), "srm_p_value": None if srm is None else float(srm), "seconds": seconds}


def main() -> None:
    warnings.simplefilter("ignore")
    import spotify_confidence

    req = json.load(sys.stdin)
    json.dump({"cases": [answer(c) for c in req["cases"]], "version": spotify_confidence.__version__}, sys.stdout)


if __name__ == "__main__":
    main()
