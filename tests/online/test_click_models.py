"""Click models: exact probabilities by hand from the definitions (Chuklin, Markov, de Rijke 2015), the
enumeration of click patterns against them, and the sampler against the exact probabilities."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ranklens.errors import InvalidParameterError
from ranklens.online import click_model

ALPHA = [0.1, 0.3, 0.6, 0.9]  # attractiveness of grades 0..3
SIGMA = [0.2, 0.4, 0.6, 0.8]
GRADES = np.array([[3, 0, 2], [1, 1, -1]])  # the second list has two items


def _patterns(n):
    return ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(bool)


def test_pbm_by_hand():
    m = click_model("pbm", attractiveness=ALPHA, examination=[1.0, 0.6, 0.3])
    p = m.click_probability(GRADES)
    assert p[0].tolist() == pytest.approx([1.0 * 0.9, 0.6 * 0.1, 0.3 * 0.6])
    assert p[1].tolist() == pytest.approx([0.3, 0.6 * 0.3, 0.0])  # no item: no click
    first = m.first_click_probability(GRADES)[0]
    assert first.tolist() == pytest.approx([0.9, 0.1 * 0.06, 0.1 * 0.94 * 0.18])
    # one pattern by hand: click at 1 and 3, none at 2
    pat = np.array([[True, False, True]])
    assert m.pattern_probability(GRADES[:1], pat)[0, 0] == pytest.approx(0.9 * (1 - 0.06) * 0.18)


def test_pbm_default_examination_is_reciprocal_rank():
    m = click_model("pbm", attractiveness=[1.0])
    assert m.examination_probability(np.zeros((1, 4), dtype=int))[0].tolist() == pytest.approx([1, 1 / 2, 1 / 3, 1 / 4])


def test_cascade_by_hand():
    m = click_model("cascade", attractiveness=ALPHA)
    a1, a2, a3 = 0.9, 0.1, 0.6
    assert m.click_probability(GRADES)[0].tolist() == pytest.approx([a1, (1 - a1) * a2, (1 - a1) * (1 - a2) * a3])
    # at most one click: every pattern with two clicks has probability 0
    pats = _patterns(3)
    p = m.pattern_probability(GRADES[:1], pats)[0]
    assert p[pats.sum(axis=1) > 1].tolist() == [0.0] * 4
    assert p[0] == pytest.approx((1 - a1) * (1 - a2) * (1 - a3))  # no click at all


def test_dbn_by_hand():
    gamma = 0.7
    m = click_model("dbn", attractiveness=ALPHA, satisfaction=SIGMA, continuation=gamma)
    a1, a2, a3 = 0.9, 0.1, 0.6
    s1, s2 = 0.8, 0.2
    e2 = gamma * (1 - a1 * s1)
    e3 = e2 * gamma * (1 - a2 * s2)
    assert m.examination_probability(GRADES)[0].tolist() == pytest.approx([1.0, e2, e3])
    assert m.click_probability(GRADES)[0].tolist() == pytest.approx([a1, e2 * a2, e3 * a3])
    # first click at 3: not attracted at 1 and 2, went on twice, attracted at 3
    assert m.first_click_probability(GRADES)[0, 2] == pytest.approx((1 - a1) * gamma * (1 - a2) * gamma * a3)
    # pattern (click, no, click): click 1, not satisfied, go on, not attracted at 2, go on, click 3
    want = a1 * (1 - s1) * gamma * (1 - a2) * gamma * a3
    assert m.pattern_probability(GRADES[:1], np.array([[1, 0, 1]], bool))[0, 0] == pytest.approx(want)


@pytest.mark.parametrize("kind", ["pbm", "cascade", "dbn"])
def test_patterns_sum_to_one_and_give_the_marginals(kind):
    m = click_model(kind, attractiveness=ALPHA, satisfaction=SIGMA, continuation=0.8)
    pats = _patterns(3)
    p = m.pattern_probability(GRADES, pats)
    assert p.sum(axis=1).tolist() == pytest.approx([1.0, 1.0])
    assert (p[:, :, None] * pats[None]).sum(axis=1) == pytest.approx(m.click_probability(GRADES))
    # the first click: patterns whose lowest click is at r
    first = np.where(pats.any(axis=1), pats.argmax(axis=1), -1)
    by_rank = np.stack([p[:, first == r].sum(axis=1) for r in range(3)], axis=1)
    assert by_rank == pytest.approx(m.first_click_probability(GRADES))


@pytest.mark.parametrize("kind", ["pbm", "cascade", "dbn"])
def test_sampled_clicks_follow_the_exact_probabilities(kind):
    m = click_model(kind, attractiveness=ALPHA, satisfaction=SIGMA, continuation=0.8, purchase=[0, 0.1, 0.3, 0.5])
    n = 200_000
    g = np.repeat(GRADES, n, axis=0)
    clicks, buys = m.sample(g, np.random.default_rng(7), np.full(len(g), 0.9))
    p = m.click_probability(GRADES, np.full(2, 0.9))
    b = p * m.purchase_probability(GRADES)
    for i in range(2):
        rows = slice(i * n, (i + 1) * n)
        se = np.sqrt(p[i] * (1 - p[i]) / n) + 1e-12
        assert np.all(np.abs(clicks[rows].mean(axis=0) - p[i]) < 5 * se)
        se_b = np.sqrt(b[i] * (1 - b[i]) / n) + 1e-12
        assert np.all(np.abs(buys[rows].mean(axis=0) - b[i]) < 5 * se_b)
    assert not (buys & ~clicks).any()


def test_multiplier_scales_attractiveness_capped_at_one():
    m = click_model("pbm", attractiveness=ALPHA)
    assert m.alpha(np.array([[3, 1]]), [2.0])[0].tolist() == pytest.approx([1.0, 0.6])


def test_patience():
    m = click_model("pbm", attractiveness=[1.0]).with_patience(2.0)
    assert m.examination_probability(np.zeros((1, 3), int))[0].tolist() == pytest.approx(
        [1.0, math.sqrt(0.5), math.sqrt(1 / 3)])
    d = click_model("dbn", continuation=0.81).with_patience(0.5)
    assert d.gamma == pytest.approx(0.81 ** 2)


@pytest.mark.parametrize("kwargs, text", [
    ({"kind": "ubm"}, "click model must be one of"),
    ({"attractiveness": [0.2, 1.5]}, "attractiveness"),
    ({"purchase": [0.1, 0.2, 0.3]}, "one value per grade"),
    ({"kind": "dbn", "examination": [1.0, 0.5]}, "parameter of the pbm"),
])
def test_bad_parameters(kwargs, text):
    kind = kwargs.pop("kind", "pbm")
    with pytest.raises(InvalidParameterError, match=text):
        click_model(kind, **kwargs)


def test_grade_out_of_range():
    with pytest.raises(InvalidParameterError, match="grades must be integers in"):
        click_model("pbm").click_probability(np.array([[7]]))
