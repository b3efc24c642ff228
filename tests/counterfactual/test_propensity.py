"""Examination from interventions and across rankers, against the simulated examination (online.click_model)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from ranklens.counterfactual.propensity import estimate_examination
from ranklens.errors import InputError, InvalidParameterError

sys.path.insert(0, str(Path(__file__).parent))
from support import randomised_log

EXAM = [1.0, 0.7, 0.5, 0.35, 0.25]


@pytest.mark.parametrize("design, method, kw", [("shuffle", "shuffle", {}),
                                                ("swap", "swap", {"intervention_col": "partner"}),
                                                ("rankers", "harvest", {"harvest": "all_pairs"}),
                                                ("rankers", "harvest", {"harvest": "pivot"}),
                                                ("rankers", "harvest", {"harvest": "adjacent"})])
def test_examination_recovered(design, method, kw):
    log = randomised_log(EXAM, sessions=120_000, queries=200, candidates=10, k=5, design=design, seed=3)
    p = estimate_examination(log, method, **kw)
    assert np.abs(p.examination.array / np.array(EXAM) - 1).max() < 0.06, p.examination
    if method != "harvest":  # the delta-method interval's half width is the error's scale (within 4 of its se)
        se = (p.ci_high.array - p.ci_low.array)[1:] / (2 * 1.959963984540054)
        assert (np.abs(p.examination.array - np.array(EXAM))[1:] < 4 * se).all(), (p.ci_low, p.ci_high)


def test_harvest_keeps_rank_pairs_apart_and_refuses_infinities():
    """(1, 6) and (2, 3) are different interventional sets (ultr-bias-toolkit indexes them by k * k'); a set whose
    pivot has no click gives no number (not inf)."""
    # item a at ranks 1 and 6 (clicked only at 1), item b at ranks 2 and 3 (clicked only at 3)
    rows = []
    for s, (item, rank, click) in enumerate([("a", 1, 1), ("a", 6, 0), ("b", 2, 0), ("b", 3, 1)] * 3):
        rows.append((f"s{s}", "q", item, rank, click))
    log = {k: [r[i] for r in rows] for i, k in enumerate(["group_id", "query", "item_id", "rank", "click"])}
    p = estimate_examination(log, "harvest", harvest="pivot")
    # pivot theta_k = c_k^{1,k} / c_1^{1,k}: rank 6: a's ctr at 6 (0) over at 1 (1) = 0; ranks 2, 3: no pair with rank 1
    assert p.examination[6] == 0.0
    assert math.isnan(p.examination[2]) and math.isnan(p.examination[3])
    adj = estimate_examination(log, "harvest", harvest="adjacent")
    # rank 3 over rank 2 from b: its ctr at 2 is 0, the denominator: no number, and every rank below stays NaN
    assert math.isnan(adj.examination[3]) and adj.undefined_ranks >= 4


def test_swap_needs_its_column_and_harvest_needs_interventions():
    log = randomised_log(EXAM, sessions=1000, queries=10, candidates=10, k=5, design="swap", seed=1)
    with pytest.raises(InvalidParameterError, match="needs `intervention_col`"):
        estimate_examination(log, "swap")
    fixed = {k: v for k, v in log.items() if k != "partner"}
    fixed["item_id"] = np.tile(np.arange(5), 1000)  # every item always at its own rank
    with pytest.raises(InputError, match="no \\(query, item\\) pair was shown at two ranks"):
        estimate_examination(fixed, "harvest")
