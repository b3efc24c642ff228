"""online.interleaving_outcome / multileaving_outcome: credit assignment against the ``interleaving`` package's
published cases and against each method's definition written out per impression here; the sign test against
scipy; Tango's interval against its definition (the constrained maximum-likelihood score test); every table
form; the refusals of bad logs.

"Published" cases are the ``interleaving`` package's own test expectations (mpkato/interleaving@7907f7d,
tests/test_team_draft.py, test_balanced.py, test_probabilistic.py: lists, clicked positions (0-based) and the
pairs ``(winner, loser)`` its ``evaluate`` returns; no pair is a tie). The package itself cannot be installed
here: the PyPI name ``interleaving`` holds an unrelated placeholder.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from scipy import optimize, special
from scipy import stats as sst

from ranklens.errors import InputError, InvalidParameterError
from ranklens.online import interleave, interleaving_outcome, multileave, multileaving_outcome
from ranklens.online.interleaving_stats import sign_test, tango_interval


def _concat(logs):
    return {c: np.concatenate([lg[c] for lg in logs]) for c in logs[0]}


def _expected(pairs):
    """The package's evaluate() pairs for two rankers as a win (1), loss (-1) or tie (0) of ranker 0."""
    return 1 if (0, 1) in pairs else -1 if (1, 0) in pairs else 0


def _clicks(n, positions):
    c = np.zeros(n, np.int8)
    c[list(positions)] = 1
    return c


def _td_log(items, teams, clicks, imp):
    n = len(items)
    return {"impression": np.full(n, imp), "position": np.arange(1, n + 1), "item": np.array(items),
            "team": np.array(["a" if t == 0 else "b" for t in teams], dtype=object), "click": _clicks(n, clicks)}


# -- published credit assignment -----------------------------------------------------------------------------
TD_CASES = [  # (items, team of each item (0 = a), clicked positions, evaluate's pairs)
    ([1, 2], [0, 1], [0, 1], []), ([1, 2], [0, 1], [0], [(0, 1)]), ([1, 2], [0, 1], [1], [(1, 0)]),
    ([1, 2], [0, 1], [], []),
    ([1, 3, 4], [0, 1, 1], [0, 1, 2], [(1, 0)]), ([1, 3, 4], [0, 1, 1], [0, 1], []),
    ([1, 3, 4], [0, 1, 1], [0, 2], []), ([1, 3, 4], [0, 1, 1], [1, 2], [(1, 0)]),
    ([1, 3, 4], [0, 1, 1], [0], [(0, 1)]), ([1, 3, 4], [0, 1, 1], [1], [(1, 0)]),
    ([1, 3, 4], [0, 1, 1], [2], [(1, 0)]), ([1, 3, 4], [0, 1, 1], [], []),
]


def test_team_draft_published():
    log = _concat([_td_log(it, tm, c, i) for i, (it, tm, c, _) in enumerate(TD_CASES)])
    r = interleaving_outcome(log)
    assert r.per_impression["outcome"].tolist() == [_expected(p) for *_, p in TD_CASES]
    assert r.per_impression["impression"].tolist() == list(range(len(TD_CASES)))


BAL_CASES = [  # (shown, a, b, clicked positions, evaluate's pairs)
    ([1, 2], [1, 2], [2, 3], [0, 1], []), ([1, 2], [1, 2], [2, 3], [0], [(0, 1)]),
    ([1, 2], [1, 2], [2, 3], [1], [(1, 0)]), ([1, 2], [1, 2], [2, 3], [], []),
    ([2, 1, 3], [1, 2], [2, 3], [0, 1, 2], []), ([2, 1, 3], [1, 2], [2, 3], [0, 1], []),
    ([2, 1, 3], [1, 2], [2, 3], [0, 2], [(1, 0)]), ([2, 1, 3], [1, 2], [2, 3], [1, 2], []),
    ([2, 1, 3], [1, 2], [2, 3], [0], [(1, 0)]), ([2, 1, 3], [1, 2], [2, 3], [1], [(0, 1)]),
    ([2, 1, 3], [1, 2], [2, 3], [2], [(1, 0)]), ([2, 1, 3], [1, 2], [2, 3], [], []),
]


def _rank_log(shown, lists, clicks, imp, tau=None):
    n = len(shown)
    log = {"impression": np.full(n, imp), "position": np.arange(1, n + 1), "item": np.array(shown),
           "click": _clicks(n, clicks)}
    names = ["a", "b"] if len(lists) == 2 else list(range(len(lists)))
    for name, seq in zip(names, lists):
        if tau is None:
            log[f"rank_{name}"] = np.array([seq.index(d) + 1 if d in seq else np.nan for d in shown])
        else:
            log[f"prob_{name}"] = _softmax_probs(seq, shown, tau)
    return log


def test_balanced_published():
    log = _concat([_rank_log(s, [a, b], c, i) for i, (s, a, b, c, _) in enumerate(BAL_CASES)])
    r = interleaving_outcome(log, method="balanced")
    assert r.per_impression["outcome"].tolist() == [_expected(p) for *_, p in BAL_CASES]


def _softmax_probs(seq, shown, tau):
    """P(the ranker's softmax draws shown[i] at position i, the items above removed), from the definition."""
    out, removed = [], set()
    for d in shown:
        w = {x: 1.0 / (r + 1) ** tau for r, x in enumerate(seq) if x not in removed}
        out.append(w.get(d, 0.0) / sum(w.values()) if w else 0.0)
        removed.add(d)
    return np.array(out)


def test_probabilistic_published():
    # test_evaluate_interleave: B wins; test_score_interleave: allocations (0,0) weight 1/1.125 (A 2 clicks),
    # (0,1) weight 1/1.125**2 (1-1), the others 0: P(A wins) = (1/1.125) / (1/1.125 + 1/1.125**2), P(B wins) = 0
    log = _concat([_rank_log([1, 2, 3, 4], [[1, 2, 3, 4], [2, 3, 4, 1]], [1, 2], 0, tau=3.0),
                   _rank_log([1, 2], [[1, 2], [2, 3]], [0, 1], 1, tau=3.0)])
    r = interleaving_outcome(log, method="probabilistic")
    assert r.per_impression["outcome"].tolist() == [-1, 1]
    p_a = (1 / 1.125) / (1 / 1.125 + 1 / 1.125 ** 2)
    assert r.per_impression["p_a_wins"][1] == pytest.approx(p_a, rel=1e-12)
    assert r.per_impression["p_b_wins"][1] == 0.0


def test_probabilistic_multileave_published():
    # test_evaluate_multileave: lists [[1, 2], [2, 1], [2, 3]], shown [1, 2], both clicked: 0 > 1 > 2
    log = _rank_log([1, 2], [[1, 2], [2, 1], [2, 3]], [0, 1], 0, tau=3.0)
    r = multileaving_outcome(log, method="probabilistic", teams=[0, 1, 2])
    assert r.wins.tolist() == [[0, 1, 1], [0, 0, 1], [0, 0, 0]]


# -- each method's definition, per impression, on random lists and clicks -------------------------------------
def _hofmann(lists, shown, clicked, tau):
    """Hofmann et al. 2011, written out: the sum over every assignment of positions to rankers, each weighted
    by P(list | assignment) (a ranker drawn uniformly per position, its softmax with the items above removed);
    returns P(a gets more clicks), P(b gets more clicks) and each ranker's expected clicks."""
    n_r = len(lists)
    probs = [_softmax_probs(seq, shown, tau) for seq in lists]
    total, p_win, credit = 0.0, np.zeros(n_r), np.zeros(n_r)
    for assign in itertools.product(range(n_r), repeat=len(shown)):
        weight = np.prod([probs[j][i] for i, j in enumerate(assign)])
        total += weight
        got = np.bincount([j for i, j in enumerate(assign) if i in clicked], minlength=n_r)
        credit += weight * got
        if n_r == 2 and got[0] != got[1]:
            p_win[0 if got[0] > got[1] else 1] += weight
    return p_win / total, credit / total


def _balanced_credit(shown, a, b, clicked):
    """Joachims 2003 / Chapelle et al. 2012: the lowest click's best rank k; clicks in each list's top k."""
    if not clicked:
        return 0, 0
    d = shown[max(clicked)]
    k = min(a.index(d) + 1 if d in a else np.inf, b.index(d) + 1 if d in b else np.inf)
    ha = sum(1 for i in clicked if shown[i] in a[:int(min(k, len(a)))])
    hb = sum(1 for i in clicked if shown[i] in b[:int(min(k, len(b)))])
    return ha, hb


@pytest.mark.parametrize("method", ["team_draft", "balanced", "probabilistic"])
def test_credit_against_definition(method):
    rng = np.random.default_rng(11)
    logs, expect, hof = [], [], []
    for imp in range(300 if method != "probabilistic" else 120):
        pool = rng.permutation(9)
        a, b = rng.permutation(pool)[:6].tolist(), rng.permutation(pool)[:6].tolist()
        k = 6 if method != "probabilistic" else int(rng.integers(1, 7))
        tau = 2.0 if method == "probabilistic" else None
        il = interleave(a, b, method=method, k=k, seed=int(rng.integers(1 << 30)), tau=tau)
        clicks = (rng.random(len(il.items)) < 0.35).astype(int)
        logs.append(il.log(clicks, impression=1000 + imp))
        clicked = list(np.flatnonzero(clicks))
        if method == "team_draft":
            ca = sum(1 for i in clicked if il.teams[i] == "a")
            expect.append(int(np.sign(ca - (len(clicked) - ca))))
        elif method == "balanced":
            ha, hb = _balanced_credit(il.items, a, b, clicked)
            expect.append(int(np.sign(ha - hb)))
        else:
            p_win, credit = _hofmann([a, b], il.items, set(clicked), 2.0)
            hof.append((p_win, credit))
            expect.append(int(np.sign(p_win[0] - p_win[1])) if abs(p_win[0] - p_win[1]) > 1e-9 else 0)
    log = _concat(logs)
    r = interleaving_outcome(log, method=method)
    assert r.per_impression["outcome"].tolist() == expect
    assert (r.wins, r.losses, r.ties) == (expect.count(1), expect.count(-1), expect.count(0))
    if method == "probabilistic":
        got = np.column_stack([r.per_impression["p_a_wins"], r.per_impression["p_b_wins"]])
        np.testing.assert_allclose(got, [p for p, _ in hof], rtol=1e-9, atol=1e-14)
        credit = np.column_stack([r.per_impression["credit_a"], r.per_impression["credit_b"]])
        np.testing.assert_allclose(credit, [c for _, c in hof], rtol=1e-9, atol=1e-14)


@pytest.mark.parametrize("method", ["team_draft", "probabilistic"])
def test_multileave_credit_against_definition(method):
    """Team-draft multileaving: clicks per team; probabilistic multileaving: each ranker's expected clicks over
    every assignment (Schuth et al. 2015's outcome, which the package samples), all pairs compared."""
    rng = np.random.default_rng(12)
    logs, credits = [], []
    names = ["x", "y", "z"]
    for imp in range(150):
        lists = {nm: rng.permutation(8)[:5].tolist() for nm in names}
        tau = 3.0 if method != "team_draft" else None
        m = multileave(lists, method=method, k=int(rng.integers(1, 6)), seed=imp, tau=tau)
        clicks = (rng.random(len(m.items)) < 0.4).astype(int)
        logs.append(m.log(clicks, impression=imp))
        clicked = set(np.flatnonzero(clicks).tolist())
        if method == "team_draft":
            credits.append([sum(1 for i in clicked if m.teams[i] == nm) for nm in names])
        else:
            credits.append(_hofmann(list(lists.values()), m.items, clicked, 3.0)[1])
    r = multileaving_outcome(_concat(logs), method=method, teams=names)
    got = np.column_stack([r.per_impression[f"credit_{nm}"] for nm in names])
    np.testing.assert_allclose(got, credits, rtol=1e-9, atol=1e-14)
    c = np.asarray(credits)
    for i, j in itertools.permutations(range(3), 2):
        d = c[:, i] - c[:, j]
        assert r.wins[i, j] == int(np.sum(d > 1e-9))
        assert r.ties[i, j] == int(np.sum(np.abs(d) <= 1e-9))
        pair = r.pair(names[i], names[j])
        assert (pair.wins, pair.losses, pair.ties) == (r.wins[i, j], r.wins[j, i], r.ties[i, j])


# -- the statistics --------------------------------------------------------------------------------------------
def test_delta_and_sign_test_against_scipy():
    log = {"impression": np.repeat(np.arange(10), 2), "team": np.tile(["a", "b"], 10),
           "click": np.array([1, 0] * 6 + [0, 1] * 1 + [0, 0] * 3)}
    r = interleaving_outcome(log)
    assert (r.wins, r.losses, r.ties, r.impressions) == (6, 1, 3, 10)
    assert r.delta == pytest.approx((6 + 3 / 2) / 10 - 0.5)
    assert r.p_value == pytest.approx(sst.binomtest(6, 7, 0.5).pvalue, rel=1e-12)
    rng = np.random.default_rng(3)
    w = rng.integers(0, 3000, 300)
    ls = rng.integers(0, 3000, 300)
    w[:5], ls[:5] = [0, 4, 0, 17, 1500], [0, 4, 9, 0, 1500]
    expect = [sst.binomtest(int(x), int(x + y), 0.5).pvalue if x + y else 1.0 for x, y in zip(w, ls)]
    np.testing.assert_allclose(sign_test(w, ls), expect, rtol=1e-9, atol=1e-250)  # scipy underflows to 0 first


def _tango_score_from_definition(theta, w, ls, n):
    """The score statistic for P(win) - P(loss) = theta: the trinomial's constrained MLE found numerically."""
    t = n - w - ls

    def negll(pl_):
        pw = pl_ + theta
        return -(w * np.log(max(pw, 1e-300)) + t * np.log(max(1 - pw - pl_, 1e-300)) + ls * np.log(max(pl_, 1e-300)))

    lo, hi = max(0.0, -theta), (1 - theta) / 2
    pl_ = optimize.minimize_scalar(negll, bounds=(lo, hi), method="bounded", options={"xatol": 1e-13}).x
    return (w - ls - n * theta) / np.sqrt(n * (pl_ + theta + pl_ - theta ** 2))


@pytest.mark.parametrize(("w", "ls", "n"), [(30, 12, 100), (5, 0, 40), (0, 0, 25), (200, 230, 1000), (9, 1, 10)])
def test_tango_interval_inverts_the_score_test(w, ls, n):
    lo, hi = tango_interval(w, ls, n, 0.95)
    z = special.ndtri(0.975)
    for limit, target in ((lo[0], z), (hi[0], -z)):
        if abs(limit) < 1 - 1e-9:
            assert _tango_score_from_definition(limit, w, ls, n) == pytest.approx(target, abs=2e-5)
    assert lo[0] <= (w - ls) / n <= hi[0]


def test_interval_in_the_outcome_is_half_tango():
    log = {"impression": np.repeat(np.arange(50), 2), "team": np.tile(["a", "b"], 50),
           "click": np.array([1, 0] * 20 + [0, 1] * 10 + [0, 0] * 20)}
    r = interleaving_outcome(log, confidence=0.9)
    lo, hi = tango_interval(20, 10, 50, 0.9)
    assert (r.ci_low, r.ci_high) == (lo[0] / 2, hi[0] / 2)
    assert r.ci_low < r.delta < r.ci_high and r.confidence == 0.9 and r.interval == "tango"


# -- table forms ----------------------------------------------------------------------------------------------
def test_every_table_form_gives_the_same_outcome():
    rng = np.random.default_rng(4)
    logs = []
    for imp in range(200):
        il = interleave(list(range(8)), rng.permutation(8).tolist(), method="balanced", k=6, seed=imp)
        logs.append(il.log((rng.random(len(il.items)) < 0.3).astype(int), impression=f"q{imp}"))
    log = _concat(logs)
    df = pd.DataFrame(log)
    forms = [log, df, pl.from_pandas(df), pl.from_pandas(df).lazy(), pa.Table.from_pandas(df),
             {c: list(v) for c, v in log.items()}]
    outs = [interleaving_outcome(f, method="balanced").to_dict() for f in forms]
    assert all(o == outs[0] for o in outs)
    r = interleaving_outcome(df, method="balanced")
    assert list(r.per_impression["impression"][:2]) == ["q0", "q1"]


# -- refusals of bad logs --------------------------------------------------------------------------------------
def _good():
    return {"impression": np.array([1, 1, 2, 2]), "position": np.array([1, 2, 1, 2]),
            "item": np.array(["x", "y", "x", "z"], dtype=object), "team": np.array(["a", "b", "b", "a"], dtype=object),
            "click": np.array([1, 0, 0, 1]), "rank_a": np.array([1.0, np.nan, 2, 1]),
            "rank_b": np.array([2.0, 1, 1, np.nan]), "prob_a": np.array([0.5, 0, 0.2, 1]),
            "prob_b": np.array([0.3, 1, 0.8, 0])}


def _with(**cols):
    log = _good()
    log.update({c: np.asarray(v, dtype=object if any(isinstance(x, str) or x is None for x in v) else None)
                for c, v in cols.items()})
    return log


@pytest.mark.parametrize(("log", "kw", "match"), [
    (_with(impression=[1, None, 2, 2]), {}, r"column 'impression', row 1: the impression is missing"),
    (_with(team=["a", "b", "c", "a"]), {}, r"column 'team', row 2: unknown team label 'c'; the teams are 'a', 'b'"),
    (_with(team=["a", None, "b", "a"]), {}, r"column 'team', row 1: the team is missing"),
    (_with(click=[1, 2, 0, 0]), {}, r"column 'click', row 1: a click is 0 or 1"),
    (_with(click=[1, np.nan, 0, 0]), {}, r"column 'click', row 1: the click is missing"),
    (_with(click=[1, "yes", 0, 0]), {}, r"column 'click', row 1: the click must be a number; found 'yes'"),
    (_with(click=[1, "1", 0, 0]), {}, r"column 'click', row 1: the click must be a number; found '1'"),  # text
    (_with(position=[1, 1, 1, 2]), {}, r"column 'position', row 1: impression 1 has two rows at position 1"),
    (_with(position=[1, 0, 1, 2]), {}, r"column 'position', row 1: a position is an integer from 1"),
    (_with(item=["x", "y", "z", "z"]), {"item_col": "item"},
     r"column 'item', row 3: impression 2 shows item 'z' twice"),
    (_with(rank_a=[1, np.nan, 2, np.nan], rank_b=[2, 1, 1, np.nan]), {"method": "balanced"},
     r"column 'rank_a', row 3: the item is in no ranker's list"),
    (_with(rank_a=[1, 1.5, 2, 1]), {"method": "balanced"}, r"column 'rank_a', row 1: a rank is an integer from 1"),
    (_with(prob_a=[0.5, 1.2, 0.2, 1]), {"method": "probabilistic"}, r"column 'prob_a', row 1: a probability"),
    (_with(prob_a=[0.5, 0, 0.2, 1], prob_b=[0.3, 0, 0.8, 0]), {"method": "probabilistic"},
     r"column 'prob_a', row 1: no ranker could have drawn this item"),
    (_with(prob_b=[0.3, 1, None, 0]), {"method": "probabilistic"},
     r"column 'prob_b', row 2: the probability is missing"),
])
def test_bad_logs_are_refused_naming_column_and_row(log, kw, match):
    with pytest.raises(InputError, match=match):
        interleaving_outcome(log, **kw)
    with pytest.raises(InputError, match=match):  # the same rule in a pandas frame
        interleaving_outcome(pd.DataFrame(log), **kw)


@pytest.mark.parametrize(("log", "kw", "match"), [
    (_good(), {"teams": ("a", "b", "c")}, "For more rankers use multileaving_outcome"),
    (_good(), {"team_col": "ranker"}, r"column 'ranker' \(the team column\) is not in the interleaving log"),
    ({k: v for k, v in _good().items() if k != "position"}, {"method": "balanced"}, "needs the shown positions"),
    ([1, 2, 3], {}, "must be a pandas, polars or pyarrow table or a dict of columns"),
    (_good(), {"method": "balanced", "rank_cols": {"a": "rank_a"}}, "`rank_cols` must map every team"),
    (_good(), {"confidence": 1.5}, "`confidence`"),
])
def test_bad_arguments_are_refused(log, kw, match):
    with pytest.raises(InvalidParameterError, match=match):
        interleaving_outcome(log, **kw)


def test_columns_of_different_lengths():
    log = _good()
    log["click"] = np.array([1, 0, 0])
    with pytest.raises(InputError, match="column 'click' has 3 values, the other columns 4"):
        interleaving_outcome(log)


def test_unordered_log_and_multileave_pair_errors():
    log = {c: v[::-1] for c, v in _good().items()}
    assert interleaving_outcome(log).wins == interleaving_outcome(_good()).wins
    r = multileaving_outcome({"impression": [1, 1], "team": [0, 1], "click": [1, 0]}, teams=[0, 1])
    with pytest.raises(InvalidParameterError, match="no team 5"):
        r.pair(0, 5)
    assert r.to_pandas().shape[0] == 2


def test_team_labels_in_every_encoding():
    """Categoricals (Arrow dictionaries, chunk by chunk), small integers and strings give the same teams; an
    unknown label is named in each."""
    log = {"impression": np.repeat(np.arange(6), 2), "team": np.tile(["a", "b"], 6),
           "click": np.array([1, 0, 1, 0, 0, 1, 0, 0, 1, 1, 1, 0])}
    want = interleaving_outcome(log).to_dict()
    cat = pd.DataFrame(dict(log, team=pd.Categorical(log["team"], categories=["b", "z", "a"])))
    chunked = pa.Table.from_batches([pa.RecordBatch.from_pandas(cat.iloc[:5]),
                                     pa.RecordBatch.from_pandas(cat.iloc[5:])])
    assert chunked.column("team").num_chunks == 2
    assert interleaving_outcome(cat).to_dict() == want
    assert interleaving_outcome(chunked).to_dict() == want
    ints = dict(log, team=np.where(log["team"] == "a", 10, 20))
    assert interleaving_outcome(ints, teams=(10, 20)).to_dict() == dict(want, team_a=10, team_b=20)
    for bad, teams, shown in ((cat.assign(team=cat["team"].where(np.arange(12) != 7, "z")), ("a", "b"), "'z'"),
                              (dict(ints, team=np.where(np.arange(12) == 7, 30, ints["team"])), (10, 20), "30")):
        with pytest.raises(InputError, match=f"column 'team', row 7: unknown team label {shown}"):
            interleaving_outcome(bad, teams=teams)
