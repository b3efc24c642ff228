"""ranklens.compare and `ranklens compare` on TREC DL 2019 runs, against evaluate, scipy and ranx."""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.stats as ss

import ranklens
from ranklens import stats
from ranklens.cli import main

DATA = Path(__file__).parent / "data" / "trec-dl-passage"
QRELS = str(DATA / "qrels.dl19-passage.txt.gz")
BM25 = str(DATA / "run.rank_llm.BM25.dl19.txt.gz")
TASB = str(DATA / "run.rank_llm.D_BERT_KD_TASB.dl19.txt.gz")
SPLADE = str(DATA / "run.rank_llm.SPLADE_P_P_ENSEMBLE_DISTIL.dl19.txt.gz")
RUNS = [BM25, TASB, SPLADE]
METRICS = ["ndcg@10", "map", "mrr@10"]


def _aligned(run: str, base: str, metric: str, convention: str | None = None):
    a = ranklens.evaluate(QRELS, run, [metric], convention=convention).per_query_dict(metric)
    b = ranklens.evaluate(QRELS, base, [metric], convention=convention).per_query_dict(metric)
    common = sorted(set(a) & set(b), key=str)
    return np.array([a[q] for q in common]), np.array([b[q] for q in common])


@pytest.fixture(scope="module")
def comparison():
    return ranklens.compare(QRELS, RUNS, METRICS, n_resamples=5000, seed=3)


def test_means_and_counts_are_evaluates(comparison):
    assert comparison.runs == ["BM25", "D_BERT_KD_TASB", "SPLADE_P_P_ENSEMBLE_DISTIL"]
    assert comparison.baseline == "BM25" and comparison.measures == METRICS
    for path, name in zip(RUNS, comparison.runs):
        res = ranklens.evaluate(QRELS, path, METRICS)
        for m in METRICS:
            row = comparison.row(name, m)
            assert row["mean"] == pytest.approx(res[m], rel=1e-12)
            assert row["n"] == res.counted[m] == 43


def test_pairs_against_scipy_and_hand(comparison):
    for name, path in [("D_BERT_KD_TASB", TASB), ("SPLADE_P_P_ENSEMBLE_DISTIL", SPLADE)]:
        for m in METRICS:
            a, b = _aligned(path, BM25, m)
            row = comparison.row(name, m)
            d = a - b
            assert row["n_pairs"] == len(a) == 43
            assert row["diff"] == pytest.approx(d.mean(), rel=1e-12)
            assert (row["wins"], row["ties"], row["losses"]) == (int((d > 0).sum()), int((d == 0).sum()),
                                                                 int((d < 0).sum()))
            assert row["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1))
            lo, hi = ss.ttest_rel(a, b).confidence_interval(0.95)
            assert (row["diff_t_low"], row["diff_t_high"]) == pytest.approx((lo, hi), rel=1e-10)
            x = ranklens.evaluate(QRELS, path, [m]).values[:, 0]
            assert (row["t_low"], row["t_high"]) == pytest.approx(
                ss.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=ss.sem(x)), rel=1e-10)
            # the same numbers as ranklens.stats on the aligned arrays with the same seed
            assert row["p_value"] == stats.randomization(a, b, n_resamples=5000, seed=3).p_value
            iv = stats.bootstrap_ci(d, "bca", n_resamples=5000, seed=3)
            assert (row["diff_low"], row["diff_high"]) == pytest.approx((iv.low, iv.high), rel=1e-12)
            assert row["diff_low"] <= row["diff"] <= row["diff_high"]


def test_holm_over_runs_times_metrics(comparison):
    rows = [r for r in comparison.rows if r["run"] != "BM25"]
    p = [r["p_value"] for r in rows]
    m = len(p)
    order = np.argsort(p, kind="mergesort")
    expected = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        expected[i] = running
    assert [r["p_adjusted"] for r in rows] == pytest.approx(list(expected))
    assert [r["significant"] for r in rows] == [bool(v <= 0.05) for v in expected]
    assert comparison.settings["n_tests"] == 6 and comparison.settings["correction"] == "holm"


@pytest.mark.parametrize("test,ref", [("t", ss.ttest_rel), ("wilcoxon", ss.wilcoxon)])
def test_analytic_tests_equal_scipy(test, ref):
    c = ranklens.compare(QRELS, RUNS, ["ndcg@10", "map"], test=test, correction="bonferroni", n_resamples=200)
    for name, path in [("D_BERT_KD_TASB", TASB), ("SPLADE_P_P_ENSEMBLE_DISTIL", SPLADE)]:
        for m in ["ndcg@10", "map"]:
            a, b = _aligned(path, BM25, m)
            r = ref(a, b)
            row = c.row(name, m)
            assert row["p_value"] == pytest.approx(r.pvalue, rel=1e-9)
            assert row["statistic"] == pytest.approx(r.statistic, rel=1e-12)
            assert row["p_adjusted"] == pytest.approx(min(1.0, 4 * r.pvalue), rel=1e-9)


@pytest.mark.slow
def test_randomization_against_ranx_fisher(tmp_path):
    """ranx's compare(..., stat_test="fisher") runs the same sign-flip test on the same per-query values
    (convention="ranx" reproduces its numbers); its random stream differs, and it reports count / B where
    ranklens reports (count + 1) / (B + 1), so the p-values agree within Monte-Carlo error."""
    from ranx import Qrels, Run
    from ranx import compare as ranx_compare

    files = {}
    for path, name in [(QRELS, "qrels"), (BM25, "bm25"), (TASB, "tasb"), (SPLADE, "splade")]:
        out = tmp_path / f"{name}.txt"
        with gzip.open(path, "rb") as f, open(out, "wb") as g:
            shutil.copyfileobj(f, g)
        files[name] = str(out)
    qrels = Qrels.from_file(files["qrels"], kind="trec")
    runs = []
    for name in ("bm25", "tasb", "splade"):
        r = Run.from_file(files[name], kind="trec")
        r.name = name
        runs.append(r)
    B = 20000
    rep = ranx_compare(qrels, runs, ["ndcg@10", "map"], stat_test="fisher", n_permutations=B, random_seed=42,
                       max_p=0.05)
    c = ranklens.compare(files["qrels"], {"bm25": files["bm25"], "tasb": files["tasb"], "splade": files["splade"]},
                         ["ndcg@10", "map"], convention="ranx", n_resamples=B, seed=1, correction="none")
    for name in ("tasb", "splade"):
        for m in ("ndcg@10", "map"):
            assert c.row(name, m)["mean"] == pytest.approx(rep.results[name][m], rel=1e-9)
            p_ranx = rep.comparisons["bm25", name][m]["p_value"]
            p = c.row(name, m)["p_value"]
            q = max(p_ranx, 1 / B)
            assert abs(p - p_ranx) <= 5 * math.sqrt(2 * q * (1 - q) / B) + 2 / B, (name, m, p, p_ranx)
    # a pair where the p-value is not tiny, so the check is not vacuous
    rep2 = ranx_compare(qrels, runs[1:], ["ndcg@10"], stat_test="fisher", n_permutations=B, random_seed=42)
    c2 = ranklens.compare(files["qrels"], {"tasb": files["tasb"], "splade": files["splade"]}, ["ndcg@10"],
                          convention="ranx", n_resamples=B, seed=1)
    p_ranx = rep2.comparisons["tasb", "splade"]["ndcg@10"]["p_value"]
    p = c2.row("splade", "ndcg@10")["p_value"]
    assert p_ranx > 0.05
    assert abs(p - p_ranx) <= 5 * math.sqrt(2 * p_ranx * (1 - p_ranx) / B) + 2 / B


def test_queries_missing_from_one_run_follow_the_convention(tmp_path):
    partial = tmp_path / "bm25_partial.txt"
    with gzip.open(BM25, "rt") as f:
        lines = [ln for ln in f if ln.split()[0] not in ("19335", "47923")]
    partial.write_text("".join(lines))
    # trec_eval leaves out a judged query the run does not rank: the pair is over 41 queries
    c = ranklens.compare(QRELS, [str(partial), SPLADE], ["ndcg@10"], convention="trec_eval", n_resamples=500)
    row = c.row(c.runs[1], "ndcg@10")
    assert row["n_pairs"] == 41 and row["only_run"] == 2 and row["only_baseline"] == 0
    assert c.row(c.runs[0], "ndcg@10")["n"] == 41 and row["n"] == 43
    a, b = _aligned(SPLADE, str(partial), "ndcg@10", "trec_eval")
    assert len(a) == 41 and row["diff"] == pytest.approx((a - b).mean())
    assert any("41 queries both count" in n for n in c.notes)
    assert any("19335" in n and "left out" in n for n in c.notes)
    # ranklens's default scores it as an empty ranking: all 43 queries are paired, and it says so
    c0 = ranklens.compare(QRELS, [str(partial), SPLADE], ["ndcg@10"], n_resamples=500)
    assert c0.row(c0.runs[1], "ndcg@10")["n_pairs"] == 43
    assert any("scored as an empty ranking" in n for n in c0.notes)


def test_outputs(comparison):
    text = comparison.table()
    assert "ndcg@10  (baseline: BM25)" in text and "*" in text and "Holm" in text
    assert "paired randomization" in text and "5000 resamples, seed 3" in text
    d = json.loads(comparison.to_json())
    assert set(d) == {"settings", "baseline", "runs", "measures", "rows", "notes"}
    assert len(d["rows"]) == 9 and d["settings"]["test"] == "randomization"
    rows = list(csv.DictReader(io.StringIO(comparison.to_csv())))
    assert len(rows) == 9 and float(rows[0]["mean"]) == comparison.rows[0]["mean"]
    md = comparison.to_markdown()
    assert md.startswith("| measure | run | mean |") and md.count("\n| ") == 9  # data rows after header and separator
    tex = comparison.to_latex()
    assert "\\begin{tabular}" in tex and "\\textbf{" in tex and "D\\_BERT\\_KD\\_TASB" in tex


def test_errors():
    with pytest.raises(ranklens.InvalidParameterError, match="at least two runs"):
        ranklens.compare(QRELS, [BM25], ["map"])
    with pytest.raises(ranklens.InvalidParameterError, match="`test`"):
        ranklens.compare(QRELS, RUNS, ["map"], test="z")
    with pytest.raises(ranklens.InvalidParameterError, match="`baseline`"):
        ranklens.compare(QRELS, RUNS, ["map"], baseline="nope")
    with pytest.raises(ranklens.InvalidParameterError, match="summed"):
        ranklens.compare(QRELS, RUNS, ["num_ret"])
    c = ranklens.compare(QRELS, RUNS, ["map"], baseline=SPLADE, n_resamples=100)
    assert c.baseline == "SPLADE_P_P_ENSEMBLE_DISTIL"


# -- command line -------------------------------------------------------------------------------------
def _run(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr()
    return e.value.code, out.out, out.err


def test_cli_json_equals_evaluate(capsys):
    code, out, err = _run(["compare", QRELS, BM25, TASB, SPLADE, "-m", "ndcg@10", "-m", "map", "--seed", "2",
                           "--resamples", "2000", "-f", "json"], capsys)
    assert code == 0, err
    d = json.loads(out)
    assert d["baseline"] == "BM25" and d["settings"]["n_resamples"] == 2000 and d["settings"]["seed"] == 2
    for path, name in zip(RUNS, d["runs"]):
        res = ranklens.evaluate(QRELS, path, ["ndcg@10", "map"])
        for row in d["rows"]:
            if row["run"] == name:
                assert row["mean"] == pytest.approx(res[row["measure"]], rel=1e-12)


@pytest.mark.parametrize("fmt,marker", [("table", "(baseline)"), ("markdown", "| measure |"), ("latex", "\\toprule"),
                                        ("csv", "measure,run,baseline")])
def test_cli_formats(capsys, fmt, marker):
    code, out, err = _run(["compare", QRELS, BM25, SPLADE, "-m", "map", "--resamples", "500", "-f", fmt,
                           "--test", "wilcoxon", "--correction", "bh", "--baseline", BM25], capsys)
    assert code == 0, err
    assert marker in out


@pytest.mark.parametrize("args,message", [
    (["compare", QRELS, BM25, "-m", "map"], "at least two runs"),
    (["compare", QRELS, BM25, SPLADE, "--baseline", "nope"], "not one of the runs"),
    (["compare", QRELS, BM25, SPLADE, "-m", "bogus@3"], ""),
    (["compare", QRELS, BM25, SPLADE, "--test", "z"], "--test"),
    (["compare", QRELS, BM25, BM25], f"run {BM25!r} is given twice; give each run once"),
])
def test_cli_errors_one_line_exit_2(capsys, args, message):
    code, out, err = _run(args, capsys)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("ranklens: error:") and message in err


def test_cli_same_numbers_on_1_and_2_threads():
    exe = os.path.join(os.path.dirname(sys.executable), "ranklens")
    outs = []
    for t in ("1", "2"):
        outs.append(subprocess.run([exe, "--threads", t, "compare", QRELS, BM25, TASB, SPLADE, "-m", "ndcg@10",
                                    "--resamples", "3000", "--seed", "9", "--test", "bootstrap", "-f", "json"],
                                   capture_output=True, text=True, check=True).stdout)
    assert outs[0] == outs[1]
    d = json.loads(outs[0])
    assert all(r["p_value"] is not None for r in d["rows"] if r["run"] != d["baseline"])


# -- plots --------------------------------------------------------------------------------------------
def test_cli_plots_png_and_svg(tmp_path, capsys):
    out_dir = tmp_path / "plots"
    code, out, err = _run(["compare", QRELS, BM25, TASB, SPLADE, "-m", "ndcg@10", "-m", "map", "--resamples", "500",
                           "--plot", str(out_dir)], capsys)
    assert code == 0, err
    names = sorted(os.listdir(out_dir))
    assert names == sorted(f"{stem}.{ext}" for stem in ("diff_ndcg_10", "diff_map", "forest_ndcg_10", "forest_map",
                                                        "curve_ndcg") for ext in ("png", "svg"))
    for n in names:
        data = (out_dir / n).read_bytes()
        assert data.startswith(b"\x89PNG") if n.endswith(".png") else b"<svg" in data
    assert "wrote 10 plots" in err


def test_cutoff_curves_are_evaluate_means():
    from ranklens.plot import cutoff_curves

    curves = cutoff_curves(QRELS, {"bm25": BM25, "splade": SPLADE}, ["ndcg@10", "map", "P@5"], ks=(1, 10))
    assert set(curves) == {"ndcg", "P"}
    res = ranklens.evaluate(QRELS, SPLADE, ["ndcg@1", "ndcg@10", "P@1", "P@10"])
    assert curves["ndcg"]["splade"] == [(1, res["ndcg@1"]), (10, res["ndcg@10"])]
    assert curves["P"]["splade"] == [(1, res["P@1"]), (10, res["P@10"])]


def test_plot_without_matplotlib_is_one_line_exit_2(tmp_path):
    code = ("import sys; sys.modules['matplotlib'] = None\n"
            "from ranklens.cli import main\n"
            f"main(['compare', {QRELS!r}, {BM25!r}, {SPLADE!r}, '--plot', {str(tmp_path / 'p')!r}])\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "pip install 'ranklens[plot]'" in p.stderr


def test_ci_t_gives_the_t_intervals():
    c = ranklens.compare(QRELS, RUNS, ["map"], ci="t", n_resamples=200)
    for name, path in [("D_BERT_KD_TASB", TASB), ("SPLADE_P_P_ENSEMBLE_DISTIL", SPLADE)]:
        row = c.row(name, "map")
        a, b = _aligned(path, BM25, "map")
        lo, hi = ss.ttest_rel(a, b).confidence_interval(0.95)
        assert (row["diff_low"], row["diff_high"]) == pytest.approx((lo, hi), rel=1e-10)
        assert (row["ci_low"], row["ci_high"]) == (row["t_low"], row["t_high"])
    assert "intervals: Student's t" in c.table()
