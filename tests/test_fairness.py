"""Fairness of exposure (issue #33, point 4): expected exposure against expeval's own output (the reference
implementation of Diaz et al. 2020, tests/data/expeval/SOURCE.md) and by hand; Plackett-Luce sampling by
simulation; AWRF and the TREC Fair Ranking Task 1 score against the track's code (tests/data/fair-trec/SOURCE.md),
by hand and with scipy's Jensen-Shannon distance.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from ranklens._input.ids import ids_to_numpy
from ranklens.errors import InputError, InvalidParameterError
from ranklens.fairness import SampledRun, awrf, expected_exposure, plackett_luce

DATA = Path(__file__).parent / "data"
EXPEVAL = DATA / "expeval"
FAIR = DATA / "fair-trec"
NAMES = {"disparity": "EE-D", "relevance": "EE-R", "difference": "EE-L"}
GROUPS = str(EXPEVAL / "groups.tsv")
#: expeval's command lines of each output file (SOURCE.md) as keyword arguments
CASES = {
    "gerr.tsv": {},
    "gerr.unnormalized.tsv": {"normalize": False},
    "rbp.tsv": {"user_model": "rbp"},
    "rbp.unnormalized.tsv": {"user_model": "rbp", "normalize": False},
    "gerr.complete.tsv": {"complete": True},
    "gerr.complete.unnormalized.tsv": {"complete": True, "normalize": False},
    "gerr.binarized.tsv": {"binarize": True},
    "gerr.p0.8.u0.3.tsv": {"patience": 0.8, "utility": 0.3},
    "gerr.p0.8.u0.3.unnormalized.tsv": {"patience": 0.8, "utility": 0.3, "normalize": False},
    "gerr.groups.unnormalized.tsv": {"groups": GROUPS},
    "gerr.groups.complete.unnormalized.tsv": {"groups": GROUPS, "complete": True},
    "rbp.complete.tsv": {"user_model": "rbp", "complete": True},
    "rbp.groups.unnormalized.tsv": {"user_model": "rbp", "groups": GROUPS},
}


def _expeval(name: str) -> dict:
    out: dict = {}
    for line in (EXPEVAL / name).read_text().splitlines():
        metric, q, v = line.split("\t")
        out.setdefault(q, {})[NAMES[metric]] = float(v)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_expected_exposure_equals_expeval(name):
    """Every query and measure as expeval printed it (to 1e-12), but one documented case: the EE-L of q4, a
    query judged and not ranked, where expeval reads a bound it set to 0 (with a single relevance grade, or over
    groups); ranklens gives the loss of an empty ranking, ||eps*||^2, checked by hand here."""
    kw = CASES[name]
    t = expected_exposure(str(EXPEVAL / "qrels.txt"), str(EXPEVAL / "samples.trec"), ci="percentile",
                          n_resamples=10, **kw)
    ours = t.per_query_dict()
    theirs = _expeval(name)
    assert sorted(ours) == sorted(theirs) == ["q1", "q2", "q3", "q4"]  # q5 is not judged: left out, as expeval
    deviation = "groups" in kw or kw.get("binarize")
    for q, row in theirs.items():
        for m, v in row.items():
            if deviation and q == "q4" and m == "EE-L":
                assert v == 0.0
                continue
            assert math.isclose(ours[q][m], v, rel_tol=1e-12, abs_tol=1e-12), (q, m, ours[q][m], v)
    if deviation:
        # q4: d07 (grade 2) and d09 (grade 1), not ranked; its loss is the squared norm of its target
        p, u = kw.get("patience", 0.5), kw.get("utility", 0.5)
        gerr = kw.get("user_model", "gerr") == "gerr"
        pp = p * (1 - u) if gerr else p  # the targets' patience
        pp_bound = p * u if gerr else p  # the one expeval's bounds use (metrics.py)
        if "groups" not in kw:  # binarized: one grade, two documents sharing the first two ranks' exposure
            t1 = (1 - pp**2) / (2 * (1 - pp))
            expected = 2 * t1**2
        else:  # d07 in group 1, d09 in group 0; with complete=True d08 (grade 0, group 2) has a target too
            t07, t09 = 1.0, pp
            expected = t07**2 + t09**2
            if kw.get("complete"):
                t08 = (1 - u) ** 2 * p**2 if kw.get("user_model", "gerr") == "gerr" else p**2
                expected += t08**2
        raw = ours["q4"]["EE-L"] if not kw.get("binarize") else None
        if raw is not None:
            assert math.isclose(raw, expected, rel_tol=1e-12)
        else:  # normalised under binarize: (loss - 0) / (||t||^2 + 1 / (1 - pp))
            assert math.isclose(ours["q4"]["EE-L"], expected / (expected + 1 / (1 - pp_bound)), rel_tol=1e-12)


def test_expected_exposure_by_hand():
    """One deterministic ranking a, c, b, d under RBP (p = 0.5): exposures 1, 1/2, 1/4, 1/8; a and b relevant
    (grade 1), c judged 0: targets (1 - p^2) / (2 (1 - p)) = 3/4 for a and b."""
    qrels = {"q": {"a": 1, "b": 1, "c": 0}}
    run = {"q": {"a": 4.0, "c": 3.0, "b": 2.0, "d": 1.0}}
    t = expected_exposure(qrels, run, user_model="rbp", normalize=False, ci="percentile", n_resamples=10)
    d, r, l_ = (t.per_query_dict()["q"][m] for m in ("EE-D", "EE-R", "EE-L"))
    assert d == 1 + 1 / 4 + 1 / 16 + 1 / 64
    assert r == 3 / 4 * 1 + 3 / 4 * 1 / 4
    assert math.isclose(l_, (3 / 4 - 1) ** 2 + (3 / 4 - 1 / 4) ** 2 + (1 / 2) ** 2 + (1 / 8) ** 2, rel_tol=1e-15)
    # GERR (u = 0.5): c and b after one relevant item (a): 1/2 * 1/2 and 1/4 * 1/2; d after two: 1/8 * 1/4
    g = expected_exposure(qrels, run, normalize=False, ci="percentile", n_resamples=10).per_query_dict()["q"]
    assert g["EE-D"] == 1 + (1 / 4) ** 2 + (1 / 8) ** 2 + (1 / 32) ** 2


def test_expected_exposure_of_sampled_rankings_by_enumeration():
    """Plackett-Luce samples of three items: the expected exposure converges to its exact value, the sum over
    the six permutations of P(permutation) x exposure (by hand, from the model), within 4 standard errors."""
    scores = {"a": 1.0, "b": 0.0, "c": -1.0}
    w = {k: math.exp(v) for k, v in scores.items()}
    exact = dict.fromkeys(scores, 0.0)
    for perm in itertools.permutations(scores):
        prob, left = 1.0, sum(w.values())
        for d in perm:
            prob *= w[d] / left
            left -= w[d]
        for i, d in enumerate(perm):
            exact[d] += prob * 0.5**i
    n = 20000
    s = plackett_luce({"q": scores}, n_samples=n, seed=7)
    items = [str(x) for x in ids_to_numpy(s.item)]
    got = dict.fromkeys(scores, 0.0)
    sq = dict.fromkeys(scores, 0.0)
    for d, r in zip(items, s.rank.tolist()):
        got[d] += 0.5 ** (r - 1) / n
        sq[d] += 0.25 ** (r - 1) / n
    for d in scores:
        se = math.sqrt((sq[d] - got[d] ** 2) / n)
        assert abs(got[d] - exact[d]) < 4 * se, (d, got[d], exact[d], se)
    # and EE-D of the samples is the squared norm of those exposures (qrels: a relevant)
    t = expected_exposure({"q": {"a": 1}}, s, user_model="rbp", normalize=False, ci="percentile", n_resamples=10)
    assert math.isclose(t["EE-D"], sum(v * v for v in got.values()), rel_tol=1e-9)


def test_plackett_luce_draws_the_first_item_by_its_weight():
    """The first item of a sample is d with probability exp(s_d / T) / sum exp(s / T) (known truth), here for two
    temperatures, within 4 standard errors; the same seed gives the same samples."""
    scores = {"a": 2.0, "b": 1.0, "c": 0.0, "d": 0.0}
    n = 20000
    for temperature in (1.0, 2.0):
        s = plackett_luce({"q": scores}, n_samples=n, temperature=temperature, seed=3)
        items = np.array([str(x) for x in ids_to_numpy(s.item)])
        first = items[s.rank == 1]
        z = sum(math.exp(v / temperature) for v in scores.values())
        for d, v in scores.items():
            p = math.exp(v / temperature) / z
            assert abs(np.mean(first == d) - p) < 4 * math.sqrt(p * (1 - p) / n)
    again = plackett_luce({"q": scores}, n_samples=50, seed=3, depth=2)
    same = plackett_luce({"q": scores}, n_samples=50, seed=3, depth=2)
    assert len(again) == 100 and again.rank.max() == 2 and np.array_equal(again.rank, same.rank)


def test_expected_exposure_refusals(tmp_path):
    qrels = {"q": {"a": 1}}
    with pytest.raises(InvalidParameterError, match="normalize=True with group labels"):
        expected_exposure(qrels, {"q": {"a": 1.0}}, groups={"a": "g"}, normalize=True)
    with pytest.raises(InvalidParameterError, match="patience"):
        expected_exposure(qrels, {"q": {"a": 1.0}}, patience=1.0)
    with pytest.raises(InvalidParameterError, match="user_model"):
        expected_exposure(qrels, {"q": {"a": 1.0}}, user_model="dcg")
    p = tmp_path / "samples.trec"
    p.write_text("q 0 a 1 1 x\nq 0 b 1 1 x\n")
    with pytest.raises(InputError, match="rank 1 appears twice in one sample of query q"):
        expected_exposure(qrels, str(p))
    p.write_text("q 0 a 1 1 x\nq 0 a 2 1 x\n")
    with pytest.raises(InputError, match="item a appears twice"):
        expected_exposure(qrels, str(p))
    run = SampledRun(np.array(["q"], dtype=object), np.array(["a"], dtype=object), np.zeros(1, np.int64),
                     np.ones(1))
    assert expected_exposure(qrels, run, normalize=False, ci="t")["EE-D"] == 1.0


def _reference() -> dict:
    out: dict = {}
    for line in (FAIR / "reference.tsv").read_text().splitlines():
        year, m, q, v = line.split("\t")
        out.setdefault(int(year), {}).setdefault(q, {})[m] = float(v)
    return out


@pytest.mark.parametrize("edition", [2021, 2022])
def test_awrf_equals_the_track_code(edition):
    """nDCG, AWRF and Score per query as the track's code computed them on the fixture (to 1e-7: its attention
    is float32)."""
    t = awrf(str(FAIR / "qrels.txt"), str(FAIR / "run.trec"), str(FAIR / "alignment.tsv"),
             str(FAIR / "targets.tsv"), edition=edition, ci="percentile", n_resamples=10)
    ours = t.per_query_dict()
    for q, row in _reference()[edition].items():
        for m, v in row.items():
            assert math.isclose(ours[q][m], v, rel_tol=1e-7, abs_tol=1e-7), (q, m, ours[q][m], v)


def test_awrf_by_hand_with_scipy():
    """AWRF = 1 - jensenshannon(x, target)^2 (scipy, natural log), x the attention-weighted group distribution;
    the target built from the relevant items and mixed with a population (weight 0.5), by hand."""
    from scipy.spatial.distance import jensenshannon

    qrels = {"q": {"a": 1, "c": 1, "d": 1}}
    run = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "e": 1.0}}  # e has no group label
    groups = {"a": "x", "b": "y", "c": {"x": 0.5, "y": 0.5}, "d": "y"}
    att = [1.0, 1.0, 1 / math.log2(3), 1 / math.log2(4)]
    x = np.array([att[0] + 0.5 * att[2], att[1] + 0.5 * att[2]])
    relevant = np.array([1 + 0.5, 0.5 + 1])  # a, c, d
    target = 0.5 * relevant / relevant.sum() + 0.5 * np.array([0.2, 0.8])
    t = awrf(qrels, run, groups, "relevant", population={"x": 0.2, "y": 0.8}, ci="percentile", n_resamples=10)
    row = t.per_query_dict()["q"]
    assert math.isclose(row["AWRF"], 1 - jensenshannon(x, target) ** 2, rel_tol=1e-12)
    ndcg = (att[0] + att[2]) / sum(att[:3])  # ideal: three relevant items
    assert math.isclose(row["nDCG"], ndcg, rel_tol=1e-12)
    assert math.isclose(row["Score"], ndcg * row["AWRF"], rel_tol=1e-12)


def test_awrf_editions_and_refusals():
    qrels = {"q": {"a": 1}}
    unlabelled = {"q": {"a": 2.0, "b": 1.0}}
    groups = {"z": "x", "y": "y"}
    old = awrf(qrels, unlabelled, groups, {"x": 0.5, "y": 0.5}, edition=2021, ci="percentile", n_resamples=10)
    assert old.per_query_dict("AWRF") == {"q": 1.0}  # 2021's code: a uniform distribution
    new = awrf(qrels, unlabelled, groups, {"x": 0.5, "y": 0.5}, edition=2022, ci="percentile", n_resamples=10)
    assert new.per_query_dict("AWRF") == {} and any("without any item with a group label" in n for n in new.notes)
    long_run = {"q": {f"d{i}": float(-i) for i in range(501)}}
    with pytest.raises(InputError, match="ranks 501 items"):
        awrf(qrels, long_run, groups, {"x": 1.0})
    awrf(qrels, long_run, groups, {"x": 1.0, "y": 1.0}, edition=2021, ci="t")  # up to 1000 in 2021
    with pytest.raises(InvalidParameterError, match="edition"):
        awrf(qrels, unlabelled, groups, {"x": 1.0}, edition=2020)
    with pytest.raises(InputError, match="no distribution for query q"):
        awrf(qrels, unlabelled, groups, {"other": {"x": 1.0}})


def test_query_table_formats_and_intervals():
    """The intervals are those of ranklens.stats (t, bootstrap) over the queries with a value; every format."""
    from ranklens import stats

    t = expected_exposure(str(EXPEVAL / "qrels.txt"), str(EXPEVAL / "samples.trec"), ci="t")
    x = np.array([v for v in t.per_query_dict("EE-L").values()])
    iv = stats.t_interval(x, 0.95)
    assert (t.intervals["EE-L"].low, t.intervals["EE-L"].high) == (iv.low, iv.high)
    b = expected_exposure(str(EXPEVAL / "qrels.txt"), str(EXPEVAL / "samples.trec"), n_resamples=500, seed=4)
    ib = stats.bootstrap_ci(x, "bca", 0.95, 500, 4)
    assert (b.intervals["EE-L"].low, b.intervals["EE-L"].high) == (ib.low, ib.high)
    for fmt in ("table", "json", "csv", "markdown", "latex", "html"):
        assert "EE-L" in t.render(fmt, per_query=True)
    assert t.to_dict()["rows"][0]["measure"] == "EE-D"
    assert list(t.to_pandas().columns) == ["EE-D", "EE-R", "EE-L"]
