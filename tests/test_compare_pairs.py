"""``compare(..., pairs="all")`` and ``ranklens compare --pairs all`` (issue #33 point 1): every pair of runs.

Expectations come from peers run here (scipy.stats.tukey_hsd, statsmodels' pairwise_tukeyhsd, AnovaRM and
multipletests, scipy.stats.friedmanchisquare, ttest_rel), from the definitions written out in the test (the
blocked Tukey HSD, exact enumeration of the randomised Tukey HSD, compact letters by hand) and from simulation
with known truth (family-wise error of the randomised Tukey HSD, coverage of the effect-size interval).
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys

import numpy as np
import pytest

import ranklens
from ranklens._core import multi
from ranklens.errors import InvalidParameterError

scipy_stats = pytest.importorskip("scipy.stats")
sm_multicomp = pytest.importorskip("statsmodels.stats.multicomp")
sm_multitest = pytest.importorskip("statsmodels.stats.multitest")
sm_anova = pytest.importorskip("statsmodels.stats.anova")
pd = pytest.importorskip("pandas")


def _data(n_q: int = 25, seed: int = 7, noises=(0.6, 0.8, 1.5, 3.0)):
    """Graded judgments of 8 items per query and runs whose scores are the grade plus noise (less noise: better)."""
    rng = np.random.default_rng(seed)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(8)} for i in range(n_q)}
    runs = {}
    for s, noise in enumerate(noises):
        runs[f"s{s}"] = {q: {d: g + float(rng.normal(0, noise)) for d, g in ds.items()} for q, ds in qrels.items()}
    return qrels, runs


def _block(c, measure: str) -> np.ndarray:
    """The per-query values of every run (queries x runs) that the comparison tested."""
    V = c.per_query["values"][c.measures.index(measure)]
    return V[~np.isnan(V).any(axis=1)]


@pytest.fixture(scope="module")
def data():
    return _data()


def test_tukey_oneway_equals_scipy_and_statsmodels(data):
    qrels, runs = data
    c = ranklens.compare(qrels, runs, ["ndcg@5"], pairs="all", test="tukey_oneway", ci="t")
    X = _block(c, "ndcg@5")
    ref = scipy_stats.tukey_hsd(*X.T)
    iv = ref.confidence_interval(0.95)
    long = X.T.reshape(-1)
    groups = np.repeat(np.asarray(c.runs), X.shape[0])
    sm = sm_multicomp.pairwise_tukeyhsd(long, groups, alpha=0.05)
    sm_p = dict(zip(zip(sm.groupsunique[sm._multicomp.pairindices[0]], sm.groupsunique[sm._multicomp.pairindices[1]]),
                    sm.pvalues))
    idx = {r: i for i, r in enumerate(c.runs)}
    for r in c.rows:
        a, b = idx[r["run"]], idx[r["other"]]
        assert r["p_value"] == pytest.approx(ref.pvalue[a, b], rel=1e-9, abs=1e-12)
        assert r["p_adjusted"] == r["p_value"]
        assert r["statistic"] == pytest.approx(abs(ref.statistic[a, b]) / math.sqrt(_mse_oneway(X) / X.shape[0]))
        assert (r["hsd_low"], r["hsd_high"]) == pytest.approx((iv.low[a, b], iv.high[a, b]), rel=1e-9)
        # statsmodels' p-values come from its own studentized-range table (psturng): a few decimals
        assert r["p_value"] == pytest.approx(sm_p[(r["run"], r["other"])], abs=2e-3)
        assert r["significant"] == (r["p_value"] <= 0.05)


def _mse_oneway(X: np.ndarray) -> float:
    n, k = X.shape
    return float(((X - X.mean(axis=0)) ** 2).sum()) / (k * (n - 1))


def test_blocked_tukey_and_rm_anova_follow_anovarm(data):
    qrels, runs = data
    c = ranklens.compare(qrels, runs, ["ndcg@5", "map"], pairs="all", test="tukey", ci="t")
    for m in c.measures:
        X = _block(c, m)
        n, k = X.shape
        frame = pd.DataFrame({"q": np.repeat(np.arange(n), k), "s": np.tile(np.arange(k), n), "v": X.reshape(-1)})
        table = sm_anova.AnovaRM(frame, "v", "q", within=["s"]).fit().anova_table
        (om,) = [o for o in c.omnibus if o["measure"] == m and o["test"] == "rm_anova"]
        assert om["statistic"] == pytest.approx(table["F Value"].iloc[0], rel=1e-9)
        assert om["p_value"] == pytest.approx(table["Pr > F"].iloc[0], rel=1e-7)
        assert om["df"] == [table["Num DF"].iloc[0], table["Den DF"].iloc[0]]
        # Tukey HSD with the error of that ANOVA (Sakai 2014): MSE = MS_systems / F, df = (n-1)(k-1)
        ms_sys = n * ((X.mean(axis=0) - X.mean()) ** 2).sum() / (k - 1)
        mse, df = ms_sys / table["F Value"].iloc[0], (n - 1) * (k - 1)
        se = math.sqrt(mse / n)
        half = scipy_stats.studentized_range.ppf(0.95, k, df) * se
        for r in (r for r in c.rows if r["measure"] == m):
            d = X[:, c.runs.index(r["run"])].mean() - X[:, c.runs.index(r["other"])].mean()
            assert r["estimate"] == pytest.approx(d, abs=1e-15)
            assert r["p_value"] == pytest.approx(scipy_stats.studentized_range.sf(abs(d) / se, k, df), rel=1e-7)
            assert (r["hsd_low"], r["hsd_high"]) == pytest.approx((d - half, d + half), rel=1e-9)


def test_friedman_equals_scipy_with_ties():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 4, size=(30, 5)).astype(float) / 3  # many ties within queries
    ref = scipy_stats.friedmanchisquare(*X.T)
    got = multi.friedman(X)
    assert got.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert got.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert got.df == (4.0,)


@pytest.mark.parametrize("correction, sm_method", [("holm", "holm"), ("bonferroni", "bonferroni"),
                                                   ("bh", "fdr_bh"), ("none", None)])
def test_paired_tests_of_every_pair_with_corrections(data, correction, sm_method):
    qrels, runs = data
    c = ranklens.compare(qrels, runs, ["ndcg@5", "map"], pairs="all", test="t", correction=correction, ci="t")
    assert len(c.rows) == 2 * 6
    p = []
    for r in c.rows:
        X = _block(c, r["measure"])
        ref = scipy_stats.ttest_rel(X[:, c.runs.index(r["run"])], X[:, c.runs.index(r["other"])])
        assert r["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)
        assert r["statistic"] == pytest.approx(ref.statistic, rel=1e-9)
        p.append(ref.pvalue)
    if sm_method is None:
        expected = p
    else:
        expected = sm_multitest.multipletests(p, alpha=0.05, method=sm_method)[1]
    assert [r["p_adjusted"] for r in c.rows] == pytest.approx(list(expected), rel=1e-12)
    assert [r["significant"] for r in c.rows] == [bool(e <= 0.05) for e in expected]


def _exact_randomized_tukey(X: np.ndarray) -> np.ndarray:
    """The randomised Tukey HSD by its definition: over every assignment of each query's values to the systems,
    the share whose range of system means reaches the observed |difference| of a pair."""
    n, k = X.shape
    means = X.mean(axis=0)
    obs = np.abs(means[:, None] - means[None, :])
    count, total = np.zeros((k, k)), 0
    for perm in itertools.product(itertools.permutations(range(k)), repeat=n):
        m = np.array([X[i, list(p)] for i, p in enumerate(perm)]).mean(axis=0)
        count += (m.max() - m.min()) >= obs - 1e-12
        total += 1
    return count / total


def test_randomized_tukey_matches_exact_enumeration():
    rng = np.random.default_rng(11)
    X = rng.random((4, 3)) + np.array([0.0, 0.2, 0.5])
    exact = _exact_randomized_tukey(X)
    B = 40000
    got = multi.randomized_tukey_hsd(X, B, seed=1)
    iu = np.triu_indices(3, 1)
    # (count + 1) / (B + 1) against the exact share: within 4 binomial standard errors
    se = np.sqrt(exact[iu] * (1 - exact[iu]) / B) + 1 / B
    assert np.all(np.abs(got[iu] - exact[iu]) <= 4 * se + 1 / B)
    assert np.array_equal(got, got.T) and (np.diag(got) == 1).all()
    assert np.array_equal(got, multi.randomized_tukey_hsd(X, B, seed=1))  # a seed gives the same numbers


def test_randomized_tukey_holds_the_family_wise_error():
    """Simulation with known truth: 6 exchangeable systems (no difference at all); the share of data sets where
    any of the 15 pairs is significant at 0.05 stays at most about 0.05, while 15 uncorrected sign-flip tests
    find one far more often."""
    rng = np.random.default_rng(2024)
    reps, any_sig, any_raw = 300, 0, 0
    for r in range(reps):
        X = rng.normal(size=(15, 1)) + rng.normal(size=(15, 6))  # query effect + noise, no system effect
        p = multi.randomized_tukey_hsd(X, 499, seed=r)
        any_sig += bool((p[np.triu_indices(6, 1)] <= 0.05).any())
        ia, ib = np.triu_indices(6, 1)
        from ranklens.stats import sign_flip_p

        any_raw += bool((sign_flip_p(X[:, ia] - X[:, ib], 499, r) <= 0.05).any())
    fwer = any_sig / reps
    assert fwer <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)
    assert any_raw / reps > 0.2  # the check can fail: without the range distribution the error is inflated


def _letters_ok(letters: list[str], sig: np.ndarray) -> bool:
    k = len(letters)
    return all((not set(letters[a]) & set(letters[b])) == bool(sig[a, b]) for a in range(k) for b in range(k) if a != b)


def test_compact_letters_by_hand_and_their_defining_property():
    # four runs by decreasing mean; significant: 1-3, 1-4, 2-4 -> a, ab, bc, c (the textbook staircase)
    sig = np.zeros((4, 4), dtype=bool)
    for a, b in ((0, 2), (0, 3), (1, 3)):
        sig[a, b] = sig[b, a] = True
    assert multi.compact_letters([0.9, 0.7, 0.5, 0.3], sig) == ["a", "ab", "bc", "c"]
    # the letters follow the means, not the order given
    assert multi.compact_letters([0.3, 0.5, 0.7, 0.9], sig[::-1, ::-1]) == ["c", "bc", "ab", "a"]
    assert multi.compact_letters([1, 2, 3], np.zeros((3, 3), bool)) == ["a", "a", "a"]
    assert multi.compact_letters([1, 2, 3], ~np.eye(3, dtype=bool)) == ["c", "b", "a"]
    rng = np.random.default_rng(0)
    for _ in range(200):  # any significance pattern: two runs share a letter exactly when they do not differ
        k = int(rng.integers(2, 8))
        s = np.triu(rng.random((k, k)) < 0.5, 1)
        s = s | s.T
        assert _letters_ok(multi.compact_letters(rng.random(k), s), s)
    with pytest.raises(InvalidParameterError, match="symmetric"):
        multi.compact_letters([1, 2], [[0, 1], [0, 0]])


def test_discriminative_power_and_letters_of_a_comparison(data):
    qrels, runs = data
    c = ranklens.compare(qrels, runs, ["ndcg@5"], pairs="all", test="randomized_tukey", n_resamples=2000)
    mine = [r for r in c.rows if r["measure"] == "ndcg@5"]
    assert c.power["ndcg@5"] == sum(r["p_adjusted"] <= 0.05 for r in mine) / 6
    P = c.matrix("ndcg@5")
    assert np.isnan(np.diag(P)).all() and np.allclose(P, P.T, equal_nan=True)
    letters = [c.letters("ndcg@5")[r] for r in c.runs]
    assert _letters_ok(letters, np.nan_to_num(P, nan=1.0) <= 0.05)
    assert c.row("s0", "s3", "ndcg@5")["estimate"] == -c.row("s3", "s0", "ndcg@5")["estimate"]


def test_effect_size_and_its_interval():
    """d_z by hand; the percentile bootstrap interval of d_z covers the true value about as often as it says
    (simulation with known truth: normal differences, delta = 0.5)."""
    from ranklens._integrations.pairs import _effect_intervals

    rng = np.random.default_rng(5)
    reps, hits, n = 300, 0, 40
    for r in range(reps):
        d = rng.normal(0.5, 1.0, size=(n, 1))
        lo, hi = _effect_intervals(d, 0.9, 999, r)[:, 0]
        hits += lo <= 0.5 <= hi
    assert 0.83 <= hits / reps <= 0.96
    qrels, runs = _data(12)
    c = ranklens.compare(qrels, runs, ["ndcg@5"], pairs="all", test="t", ci="t")
    for row in c.rows:
        X = _block(c, "ndcg@5")
        d = X[:, c.runs.index(row["run"])] - X[:, c.runs.index(row["other"])]
        assert row["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
        assert row["effect_low"] <= row["effect_size"] <= row["effect_high"]
        t = scipy_stats.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=scipy_stats.sem(d))
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(t, rel=1e-9)


def test_queries_not_counted_by_every_run_are_left_out_and_said():
    qrels, runs = _data(10)
    runs["s1"] = {q: v for q, v in runs["s1"].items() if q not in ("q0", "q1")}
    # trec_eval's rule: a query the run does not rank is not counted for that run
    c = ranklens.compare(qrels, runs, ["ndcg_cut.5"], pairs="all", test="tukey", ci="t", convention="trec_eval")
    assert {r["n"] for r in c.rows} == {8}
    assert any("left out: 2 queries not counted by every run (s1 lacks 2)" in n for n in c.notes)


def test_bad_parameters_are_refused(data):
    qrels, runs = data
    with pytest.raises(InvalidParameterError, match="`pairs`"):
        ranklens.compare(qrels, runs, pairs="some")
    with pytest.raises(InvalidParameterError, match="adjusts for the pairs itself"):
        ranklens.compare(qrels, runs, pairs="all", test="tukey", correction="holm")
    with pytest.raises(InvalidParameterError, match="pairs='all'"):
        ranklens.compare(qrels, runs, test="tukey")
    with pytest.raises(InvalidParameterError, match="`baseline`"):
        ranklens.compare(qrels, runs, pairs="all", baseline="s1")


def cli(*args: str) -> subprocess.CompletedProcess:
    code = "import sys; from ranklens.cli import main; main(sys.argv[1:])"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)


def test_cli_pairs_all_in_every_format(tmp_path, data):
    qrels, runs = data
    q = tmp_path / "qrels.txt"
    q.write_text("".join(f"{qi} 0 {d} {g}\n" for qi, ds in qrels.items() for d, g in ds.items()))
    paths = []
    for name, run in runs.items():
        p = tmp_path / f"run.{name}.txt"
        p.write_text("".join(f"{qi} Q0 {d} 0 {s!r} x\n" for qi, ds in run.items() for d, s in ds.items()))
        paths.append(str(p))
    base = ("compare", str(q), *paths, "-m", "ndcg@5", "--pairs", "all", "-t", "tukey", "--ci", "t")
    py = ranklens.compare(str(q), paths, ["ndcg@5"], pairs="all", test="tukey", ci="t")
    table = cli(*base)
    assert table.returncode == 0, table.stderr
    assert "letters" in table.stdout and "adjusted p-values" in table.stdout and "Friedman" in table.stdout
    for fmt, marker in (("markdown", "| letters |"), ("latex", "$^{\\mathrm{"), ("html", "<table"),
                        ("csv", "measure,run,other,mean")):
        res = cli(*base, "-f", fmt)
        assert res.returncode == 0 and marker in res.stdout, (fmt, res.stderr)
    import json

    js = json.loads(cli(*base, "-f", "json").stdout)
    assert js["kind"] == "pairwise_comparison" and len(js["pairs"]) == 6
    assert [p["p_value"] for p in js["pairs"]] == pytest.approx([r["p_value"] for r in py.rows], rel=1e-12)
    for extra, words in ((("--baseline", "s0"), "--baseline"), (("--fail-if-worse",), "--fail-if-worse"),
                         (("--max-drop", "ndcg@5=0.1"), "--max-drop"), (("--correction", "bh"), "adjusts")):
        res = cli(*base, *extra)
        assert res.returncode == 2 and words in res.stderr and len(res.stderr.strip().splitlines()) == 1
