"""online.interleave / online.multileave: the lists each method can build, their distributions by simulation
(known truth from the definitions), and the refusals of bad input.

Expected sets of lists and first-position frequencies marked "published" are the ``interleaving`` package's
own test expectations (mpkato/interleaving@7907f7d, tests/test_team_draft.py, test_balanced.py,
test_probabilistic_interleave.py, test_probabilistic_multileave.py). That package cannot be installed here
(the PyPI name ``interleaving`` holds an unrelated placeholder), so its facts are carried over, not its code.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from scipy import stats as sst

from ranklens.errors import InvalidParameterError
from ranklens.online import interleave, multileave


def _outputs(a, b, method, k, n=200):
    return {tuple(interleave(a, b, method=method, k=k, seed=s).items) for s in range(n)}


# -- the lists each method can build (published) ------------------------------------------------------------
@pytest.mark.parametrize(("a", "b", "k", "expected"), [
    ([1, 2], [2, 3], 2, {(1, 2), (2, 1)}),
    ([1, 2], [2, 3], 3, {(1, 2, 3), (2, 1, 3)}),
    ([1, 2], [2, 3], 4, {(1, 2, 3), (2, 1, 3)}),
    ([1, 2], [3, 4], 2, {(1, 3), (3, 1)}),
    ([1, 2], [3, 4], 3, {(1, 3, 2), (1, 3, 4), (3, 1, 2), (3, 1, 4)}),
])
def test_team_draft_lists_published(a, b, k, expected):
    assert _outputs(a, b, "team_draft", k) == expected


def test_team_draft_teams_published():
    for s in range(50):
        il = interleave([1, 2], [2, 3], k=2, seed=s)  # the package's max_length: the shortest list's length
        assert dict(zip(il.items, il.teams)) == {1: "a", 2: "b"}
        il = interleave([1, 2], [3, 4], k=2, seed=s)
        assert dict(zip(il.items, il.teams)) == {1: "a", 3: "b"}


@pytest.mark.parametrize(("lists", "expected"), [
    ([[1, 2], [2, 3], [3, 4]], {(1, 2), (1, 3), (2, 1), (2, 3), (3, 1), (3, 2)}),
    ([[1, 2], [3, 4], [5, 6]], {(1, 3), (1, 5), (3, 1), (3, 5), (5, 1), (5, 3)}),
])
def test_team_draft_multileave_lists_published(lists, expected):
    assert {tuple(multileave(lists, k=2, seed=s).items) for s in range(300)} == expected


@pytest.mark.parametrize(("a", "b", "k", "expected"), [
    ([1, 2], [2, 3], 2, {(1, 2), (2, 1)}),
    ([1, 2], [3, 4], 2, {(1, 3), (3, 1)}),
    ([1, 2], [2, 3], 3, {(1, 2), (2, 1, 3)}),
    ([1, 2], [3, 4], 3, {(1, 3, 2), (3, 1, 4)}),
])
def test_balanced_lists_published(a, b, k, expected):
    assert _outputs(a, b, "balanced", k) == expected


# -- distributional properties by simulation -----------------------------------------------------------------
def _random_lists(rng, n_items=12, length=8):
    pool = rng.permutation(n_items)
    a = rng.permutation(pool)[:length].tolist()
    b = rng.permutation(pool)[:length].tolist()
    return a, b


def test_team_draft_each_team_half_of_every_position():
    """Team draft: at every position each team places the item with probability 1/2, and in every prefix the
    teams' sizes differ by at most one, each team's item being its best not shown above."""
    rng = np.random.default_rng(5)
    n, k = 3000, 6
    a_at = np.zeros(k)
    for s in range(n):
        a, b = _random_lists(rng)
        il = interleave(a, b, k=k, seed=s)
        assert len(il.items) == k
        for i, (d, t) in enumerate(zip(il.items, il.teams)):
            own = a if t == "a" else b
            assert d == next(x for x in own if x not in il.items[:i])
            sizes = Counter(il.teams[:i + 1])
            assert abs(sizes["a"] - sizes["b"]) <= 1
        a_at += np.array(il.teams) == "a"
    # binomial(n, 1/2) at each position: within 4.5 standard deviations
    assert np.all(np.abs(a_at - n / 2) < 4.5 * math.sqrt(n / 4)), a_at


def test_balanced_prefix_property():
    """Balanced interleaving (Joachims 2003): every prefix of the shown list is the union of the top k_a of A
    and the top k_b of B with |k_a - k_b| <= 1; and which list leads is a fair coin."""
    rng = np.random.default_rng(6)
    lead_a = 0
    n = 2000
    for s in range(n):
        a, b = _random_lists(rng)
        il = interleave(a, b, method="balanced", k=8, seed=s)
        for m in range(1, len(il.items) + 1):
            shown = set(il.items[:m])
            assert any(shown == set(a[:ka]) | set(b[:kb])
                       for ka in range(len(a) + 1) for kb in (ka - 1, ka, ka + 1)
                       if 0 <= kb <= len(b)), (a, b, il.items)
        lead_a += il.items[0] == a[0] and il.teams[0] == "a"
    # the first item is A's top exactly when A leads (or when both tops coincide and A leads)
    assert abs(lead_a - n / 2) < 4.5 * math.sqrt(n / 4)


def _softmax_first(lists, tau):
    """P(item at position 1) from the definition: a ranker uniformly, then its softmax over 1/rank**tau."""
    p = Counter()
    for seq in lists:
        w = 1.0 / np.arange(1, len(seq) + 1) ** tau
        for d, x in zip(seq, w / w.sum()):
            p[d] += x / len(lists)
    return p


@pytest.mark.parametrize(("lists", "published"), [
    ([[0, 1, 2], [0, 1, 2]], {0: 0.86056, 1: 0.10757, 2: 0.03187}),
    ([[0, 1], [1, 2]], {0: 0.44444, 1: 0.50000, 2: 0.05556}),
])
def test_probabilistic_first_position_published(lists, published):
    expect = _softmax_first(lists, 3.0)
    assert {d: round(v, 5) for d, v in expect.items()} == published
    n = 20000
    first = Counter(interleave(*lists, method="probabilistic", k=1, seed=s).items[0] for s in range(n))
    obs = [first[d] for d in expect]
    assert sst.chisquare(obs, [expect[d] * n for d in expect]).pvalue > 1e-3


@pytest.mark.parametrize("tau", [1.0, 2.0, 4.0])
def test_probabilistic_softmax_with_tau(tau):
    """The first two positions' joint distribution is the softmax model with tau (the second drawn with the
    first item removed from every softmax), by a chi-square test; `.probabilities` are exactly the model's."""
    a, b = [0, 1, 2, 3], [3, 2, 4, 0]

    def soft(seq, removed):
        w = {d: 1.0 / (r + 1) ** tau for r, d in enumerate(seq) if d not in removed}
        tot = sum(w.values())
        return {d: x / tot for d, x in w.items()}

    expect = Counter()
    for j0 in (a, b):
        for d0, p0 in soft(j0, set()).items():
            for j1 in (a, b):
                for d1, p1 in soft(j1, {d0}).items():
                    expect[(d0, d1)] += 0.25 * p0 * p1
    n = 20000
    seen = Counter()
    for s in range(n):
        il = interleave(a, b, method="probabilistic", k=2, seed=s, tau=tau)
        seen[tuple(il.items)] += 1
        if s < 200:
            d0, d1 = il.items
            for j, seq in enumerate((a, b)):
                assert il.probabilities[j, 0] == pytest.approx(soft(seq, set()).get(d0, 0.0), rel=1e-12)
                assert il.probabilities[j, 1] == pytest.approx(soft(seq, {d0}).get(d1, 0.0), rel=1e-12)
    keys = sorted(expect)
    assert set(seen) <= set(keys)
    assert sst.chisquare([seen[x] for x in keys], [expect[x] * n for x in keys]).pvalue > 1e-3


def test_probabilistic_exhausted_ranker_stops_drawing():
    il = interleave([0], [1, 2, 3], method="probabilistic", k=4, seed=0)
    assert sorted(il.items) == [0, 1, 2, 3]
    after = il.items.index(0)
    assert all(t == "b" for t in il.teams[after + 1:])
    assert np.all(il.probabilities[0, after + 1:] == 0)


def test_multileave_probabilistic_uniform_rankers():
    """Each position's ranker is uniform among the rankers (published: 1/3 each for three disjoint lists)."""
    lists = [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    n = 6000
    first = Counter(multileave(lists, method="probabilistic", k=1, seed=s).items[0] % 3 for s in range(n))
    assert sst.chisquare([first[j] for j in range(3)]).pvalue > 1e-3


def test_team_draft_shorter_list_fills_to_k():
    il = interleave([1], [2, 3, 4, 5], k=4, seed=0)
    assert sorted(il.items) == [1, 2, 3, 4] and il.teams.count("a") == 1


def test_log_columns():
    il = interleave(["x", "y", "z"], ["z", "w", "x"], method="balanced", k=4, seed=2)
    log = il.log([1, 0, 0, 1], impression="q7")
    assert log["impression"].tolist() == ["q7"] * 4
    for d, ra, rb in zip(log["item"], log["rank_a"], log["rank_b"]):
        assert (ra == ["x", "y", "z"].index(d) + 1) if d in ("x", "y", "z") else np.isnan(ra)
        assert (rb == ["z", "w", "x"].index(d) + 1) if d in ("z", "w", "x") else np.isnan(rb)


# -- refusals ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("call", "match"), [
    (lambda: interleave([1, 2, 1], [3]), "ranking a holds item 1 twice"),
    (lambda: interleave("abc", [1]), "ranking a must be a list"),
    (lambda: interleave([1], np.zeros((2, 2))), "ranking b must be 1-D"),
    (lambda: interleave([[1]], [2]), "not hashable"),
    (lambda: interleave([], []), "every ranking is empty"),
    (lambda: interleave([1], [2], k=0), "`k`"),
    (lambda: interleave([1], [2], method="optimized"), "`method` must be one of"),
    (lambda: interleave([1], [2], tau=2.0), "`tau` is the softmax exponent"),
    (lambda: interleave([1], [2], method="probabilistic", tau=-1), "`tau` must be a positive"),
    (lambda: interleave([1], [2], seed=-3), "`seed`"),
    (lambda: multileave([[1], [2], [3]], method="balanced"), "`method` must be one of 'team_draft', 'probabilistic'"),
    (lambda: multileave([[1]]), "at least two rankers"),
    (lambda: interleave([1, 2], [2, 1], k=2, seed=0).log([1]), "one value per shown item"),
    (lambda: interleave([1, 2], [2, 1], k=2, seed=0).log([1, 2]), "booleans or 0/1"),
])
def test_refusals(call, match):
    with pytest.raises(InvalidParameterError, match=match):
        call()
