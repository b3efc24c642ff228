"""Slate estimators on obp's column layout against obp 0.4.1 (SIPS, IIPS, RIPS) on its SyntheticSlateBanditDataset,
and the self-normalised versions and cascade-DR against their definitions written out here (obp 0.5's, which
needs Python < 3.11: online-anchors.md B3), cascade-DR also against obp's RIPS when its Q-hat is 0."""

from __future__ import annotations

import numpy as np
import obp  # noqa: F401  (installed by `make install-test` with --no-deps: tests/test_setup.py checks the step)
import pyarrow as pa
import pytest

from ranklens.counterfactual import estimate
from ranklens.errors import InputError, InvalidParameterError

pytestmark = [pytest.mark.peer, pytest.mark.filterwarnings("ignore:overflow encountered in exp:RuntimeWarning")]

N_ACTIONS, L = 8, 3


@pytest.fixture(scope="module")
def feedback():
    from obp.dataset import SyntheticSlateBanditDataset, linear_behavior_policy_logit, logistic_reward_function

    ds = SyntheticSlateBanditDataset(n_unique_action=N_ACTIONS, len_list=L, dim_context=2,
                                     base_reward_function=logistic_reward_function,
                                     behavior_policy_function=linear_behavior_policy_logit,
                                     reward_type="binary", reward_structure="cascade_additive", random_state=7)
    fb = ds.obtain_batch_bandit_feedback(n_rounds=300, return_pscore_item_position=True)
    logit = np.random.default_rng(1).normal(size=(300, N_ACTIONS))
    pe, pe_item, pe_cascade = ds.obtain_pscore_given_evaluation_policy_logit(fb["action"], logit, True)
    table = pa.table({"slate_id": fb["slate_id"], "position": fb["position"], "item_id": fb["action"],
                      "reward": fb["reward"].astype(np.float64), "pscore": fb["pscore"],
                      "pscore_item_position": fb["pscore_item_position"], "pscore_cascade": fb["pscore_cascade"],
                      "target_pscore": pe, "target_pscore_item_position": pe_item,
                      "target_pscore_cascade": pe_cascade})
    return fb, table, logit


@pytest.mark.parametrize("name, cls, col", [("sips", "SlateStandardIPS", "pscore"),
                                            ("iips", "SlateIndependentIPS", "pscore_item_position"),
                                            ("rips", "SlateRewardInteractionIPS", "pscore_cascade")])
def test_equal_to_obp(feedback, name, cls, col):
    import obp.ope

    fb, table, _ = feedback
    est = getattr(obp.ope, cls)(len_list=L)
    kw = {"pscore" if name == "sips" else col: fb[col],
          ("evaluation_policy_pscore" if name == "sips" else f"evaluation_policy_{col}"):
              table.column(f"target_{col}").to_numpy()}
    expected = est.estimate_policy_value(slate_id=fb["slate_id"], reward=fb["reward"], position=fb["position"], **kw)
    got = estimate(table, estimator=name)
    assert got.value == pytest.approx(expected, abs=1e-9)
    assert got.ci_low < got.value < got.ci_high


def _by_definition(table, name):
    t = {c: table.column(c).to_numpy() for c in table.column_names}
    col = {"snsips": "pscore", "sniips": "pscore_item_position", "snrips": "pscore_cascade"}[name]
    w = t[f"target_{col}"] / t[col]
    n = len(np.unique(t["slate_id"]))
    if name == "snsips":  # reward * w / mean(w over all rows), summed, over n
        return float((t["reward"] * w / w.mean()).sum() / n)
    total = 0.0
    for pos in range(L):  # per position: reward * w / mean(w at that position)
        idx = t["position"] == pos
        total += float((t["reward"][idx] * w[idx] / w[idx].mean()).sum())
    return total / n


@pytest.mark.parametrize("name", ["snsips", "sniips", "snrips"])
def test_self_normalised_by_definition(feedback, name):
    _, table, _ = feedback
    got = estimate(table, estimator=name)
    assert got.value == pytest.approx(_by_definition(table, name), abs=1e-12)
    assert got.ci_low < got.value < got.ci_high


def test_cascade_dr_by_definition_and_rips_when_q_hat_is_zero(feedback):
    import obp.ope

    fb, table, logit = feedback
    rng = np.random.default_rng(3)
    n = 300
    q_hat = rng.random((n * L, N_ACTIONS))
    dist = rng.dirichlet(np.ones(N_ACTIONS), size=n * L)
    t = table.append_column("q_hat", pa.array(list(q_hat))).append_column("target_action_dist", pa.array(list(dist)))
    w = t.column("target_pscore_cascade").to_numpy() / t.column("pscore_cascade").to_numpy()
    reward, action = fb["reward"], fb["action"]
    total = 0.0
    for i in range(n):  # Kiyohara et al. 2022: w_1:l (r_l - q(a_1:l)) + w_1:l-1 sum_a pi_e(a | .) q(a_1:l-1, a)
        for pos in range(L):
            row = i * L + pos
            prev = 1.0 if pos == 0 else w[row - 1]
            total += w[row] * (reward[row] - q_hat[row, action[row]]) + prev * float(dist[row] @ q_hat[row])
    assert estimate(t, estimator="cascade_dr").value == pytest.approx(total / n, abs=1e-12)
    zero = table.append_column("q_hat", pa.array(list(np.zeros((n * L, N_ACTIONS))))).append_column(
        "target_action_dist", pa.array(list(dist)))
    rips = obp.ope.SlateRewardInteractionIPS(len_list=L).estimate_policy_value(
        slate_id=fb["slate_id"], reward=fb["reward"], position=fb["position"], pscore_cascade=fb["pscore_cascade"],
        evaluation_policy_pscore_cascade=table.column("target_pscore_cascade").to_numpy())
    assert estimate(zero, estimator="cascade_dr").value == pytest.approx(rips, abs=1e-9)


def test_bad_propensities_get_one_line(feedback):
    _, table, _ = feedback
    p = table.column("pscore_item_position").to_numpy().copy()
    p[4] = 0.0
    bad = table.set_column(table.column_names.index("pscore_item_position"), "pscore_item_position", pa.array(p))
    with pytest.raises(InputError, match=r"'pscore_item_position' holds 0 at row 4; a propensity is in \(0, 1\]"):
        estimate(bad, estimator="iips")
    p[4] = 1.5
    bad = table.set_column(table.column_names.index("pscore_item_position"), "pscore_item_position", pa.array(p))
    with pytest.raises(InputError, match="holds 1.5 at row 4"):
        estimate(bad, estimator="iips")
    with pytest.raises(InvalidParameterError, match="reads the target policy's propensities"):
        estimate(table, {"q": {"a": 1.0}}, estimator="sips")
    with pytest.raises(InvalidParameterError, match="list column 'q_hat'"):
        estimate(table, estimator="cascade_dr")
