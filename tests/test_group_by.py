"""Slicing (issue #33 point 5): ``evaluate(..., group_by=)``, ``compare(..., group_by=)``, ``--group-by`` on the local
engine of ``eval`` and on ``compare``: one result per group, each the evaluation of that group's queries alone
(checked against pytrec_eval on each group's queries, and against evaluating the group's rows cut by pandas)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import ranklens
from ranklens.errors import InputError, InvalidParameterError

pd = pytest.importorskip("pandas")
pytrec_eval = pytest.importorskip("pytrec_eval")


def _frame(n_q: int = 24, seed: int = 3):
    """A long table: 6 items per query, graded labels, scores, and a per-query device."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_q):
        device = ("mobile", "desktop", "tablet")[q % 3]
        for d in range(6):
            rows.append((f"q{q}", f"d{d}", int(rng.integers(0, 3)), float(rng.random()), device))
    return pd.DataFrame(rows, columns=["query", "item", "relevance", "score", "device"])


def _pytrec_mean(sub, measure: str) -> float:
    qrels = {q: dict(zip(g["item"], map(int, g["relevance"]))) for q, g in sub.groupby("query")}
    run = {q: dict(zip(g["item"], map(float, g["score"]))) for q, g in sub.groupby("query")}
    per_q = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run)
    return float(np.mean([v[measure] for v in per_q.values()]))


def test_each_group_equals_the_peer_on_its_queries_alone():
    df = _frame()
    res = ranklens.evaluate(df, None, ["ndcg_cut.5", "map"], convention="trec_eval", group_by="device")
    assert list(res) == ["desktop", "mobile", "tablet"]
    for g in res:
        sub = df[df.device == g]
        assert res[g].counted["map"] == sub["query"].nunique()
        assert res[g]["ndcg_cut.5"] == pytest.approx(_pytrec_mean(sub, "ndcg_cut_5"), abs=1e-12)
        assert res[g]["map"] == pytest.approx(_pytrec_mean(sub, "map"), abs=1e-12)
    assert res.notes == []
    long = res.to_pandas()
    assert set(long.columns) == {"group", "measure", "value", "queries"} and len(long) == 6


def test_group_by_a_mapping_counts_and_says_what_it_leaves_out():
    df = _frame(9)
    judgments = df[["query", "item", "relevance"]]
    run = df[["query", "item", "score"]]
    groups = {"q0": "short", "q1": "short", "q2": "long", "q4": "long"}  # five queries have no group
    res = ranklens.evaluate(judgments, run, ["ndcg@3"], group_by=groups)
    assert {g: res[g].counted["ndcg@3"] for g in res} == {"long": 2, "short": 2}
    (note,) = res.notes
    assert note.startswith("5 queries have no group in the mapping `group_by`: left out of every group (q3, q5,")
    alone = ranklens.evaluate(judgments[judgments["query"].isin(["q2", "q4"])], run[run["query"].isin(["q2", "q4"])],
                              ["ndcg@3"])
    assert res["long"]["ndcg@3"] == alone["ndcg@3"]
    with pytest.raises(KeyError, match="no group 'medium'"):
        res["medium"]


def test_a_table_file_and_the_group_column_of_the_run(tmp_path):
    df = _frame(12)
    j, r = tmp_path / "j.csv", tmp_path / "r.parquet"
    df[["query", "item", "relevance"]].to_csv(j, index=False)
    df[["query", "item", "score", "device"]].to_parquet(r)
    res = ranklens.evaluate(str(j), str(r), ["mrr"], group_by="device")
    assert "column 'device' of " in res.by and res.by.endswith("r.parquet")
    for g in res:
        sub = df[df.device == g]
        assert res[g]["mrr"] == pytest.approx(_pytrec_mean(sub, "recip_rank"), abs=1e-12)


def test_bad_groupings_are_refused_naming_the_query_or_column():
    df = _frame(6)
    two = df.copy()
    two.loc[0, "device"] = "tv"
    # the column only in the judgments' table: the run's rows of q0 cannot be split between its two groups
    with pytest.raises(InputError, match=r"gives query q0 2 groups \(mobile, tv\), and the run, which has no such "
                                         r"column, cannot be split"):
        ranklens.evaluate(two, two[["query", "item", "score"]], group_by="device")
    nulls = df.copy()
    nulls["device"] = nulls["device"].astype(object)
    nulls.loc[3, "device"] = None
    with pytest.raises(InputError, match=r"column 'device' of the judgments has no value in row 3 \(query q0; 1 rows"):
        ranklens.evaluate(nulls, None, group_by="device")
    with pytest.raises(InputError, match=r"column 'device' of the run has no value in row 3 \(query q0"):
        ranklens.evaluate(df[["query", "item", "relevance"]], nulls[["query", "item", "score", "device"]],
                          group_by="device")
    nan = df.assign(bucket=np.where(np.arange(len(df)) == 7, np.nan, 1.0))
    with pytest.raises(InputError, match=r"column 'bucket' of the judgments has no value in row 7 \(query q1"):
        ranklens.evaluate(nan, None, group_by="bucket")
    with pytest.raises(InvalidParameterError, match="is the query column"):
        ranklens.evaluate(df, None, group_by="query")
    with pytest.raises(InvalidParameterError, match="'locale' is not a column"):
        ranklens.evaluate(df, None, group_by="locale")
    with pytest.raises(InvalidParameterError, match="must be a mapping"):
        ranklens.evaluate(df, None, group_by="device", weights=[1.0] * 6)
    with pytest.raises(InvalidParameterError, match="no group"):
        ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, group_by={"q": None})
    with pytest.raises(InvalidParameterError, match="bare vector"):
        ranklens.evaluate(df, df["score"].to_numpy(), group_by="device")


def test_compare_by_group_equals_comparing_each_group_alone():
    df = _frame(18)
    rng = np.random.default_rng(9)
    other = df.assign(score=rng.random(len(df)))
    j = df[["query", "item", "relevance", "device"]]
    runs = {"a": df[["query", "item", "score", "device"]], "b": other[["query", "item", "score", "device"]]}
    by = ranklens.compare(j, runs, ["ndcg@5"], group_by="device", n_resamples=999)
    assert sorted(by) == ["desktop", "mobile", "tablet"]
    for g, c in by.items():
        keep = df.device == g
        alone = ranklens.compare(j[keep], {"a": runs["a"][keep], "b": runs["b"][keep]}, ["ndcg@5"], n_resamples=999)
        for key in ("mean", "diff", "p_value", "diff_low", "diff_high", "wins", "losses"):
            assert c.row("b", "ndcg@5")[key] == alone.row("b", "ndcg@5")[key]
    pairs = ranklens.compare(j, {**runs, "c": runs["a"]}, ["ndcg@5"], group_by="device", pairs="all", test="tukey")
    assert all(p.row("a", "c", "ndcg@5")["estimate"] == 0 for p in pairs.values())


def cli(*args: str) -> subprocess.CompletedProcess:
    code = "import sys; from ranklens.cli import main; main(sys.argv[1:])"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)


def test_cli_group_by_on_eval_and_compare(tmp_path):
    df = _frame(12)
    t, j, a, b = (tmp_path / n for n in ("t.csv", "j.csv", "a.csv", "b.csv"))
    df.to_csv(t, index=False)
    df[["query", "item", "relevance"]].to_csv(j, index=False)
    good = df.assign(score=df["relevance"] + 0.1 * df["score"])  # the ideal order
    good[["query", "item", "score", "device"]].to_csv(a, index=False)
    worse = good.assign(score=-good["score"])  # the reverse order: worse on every group
    worse[["query", "item", "score", "device"]].to_csv(b, index=False)
    res = cli("eval", str(t), "--group-by", "device", "-m", "map", "-c", "trec_eval", "-f", "json")
    assert res.returncode == 0, res.stderr
    got = {g: v["aggregate"]["map"] for g, v in json.loads(res.stdout)["runs"].items()}
    assert got == pytest.approx({g: _pytrec_mean(df[df.device == g], "map") for g in got}, abs=1e-12)
    assert "desktop" in cli("eval", str(t), "--group-by", "device").stdout
    holes = tmp_path / "holes.csv"
    df.assign(device=df["device"].where(df.index != 4, None)).to_csv(holes, index=False)
    bad = cli("eval", str(holes), "--group-by", "device")
    assert bad.returncode == 2 and "has no value in row 4 (query q0" in bad.stderr, bad.stderr
    for extra, words in ((("--fail-under", "map=0.5"), "--fail-under"),
                         (("-f", "trec"), "-f trec"), (("--group-by", "device"), "named twice")):
        bad = cli("eval", str(t), "--group-by", "device", *extra)
        assert bad.returncode == 2 and words in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    gate = cli("compare", str(j), str(a), str(b), "-m", "ndcg@5", "--group-by", "device", "--resamples", "99",
               "--max-drop", "ndcg@5=0.01")
    assert gate.returncode == 1, gate.stderr
    lines = gate.stderr.strip().splitlines()
    assert [line.split(":")[2].strip() for line in lines] == ["group desktop", "group mobile", "group tablet"]
    assert "device = mobile" in gate.stdout
    csv_out = cli("compare", str(j), str(a), str(b), "-m", "ndcg@5", "--group-by", "device", "--resamples", "99",
                  "-f", "csv").stdout.splitlines()
    assert csv_out[0].startswith("group,measure,run") and len(csv_out) == 1 + 3 * 2


def _frame2(n_q: int = 30, seed: int = 5):
    """As _frame, with a second per-query column (locale) crossing the device."""
    df = _frame(n_q, seed)
    q = df["query"].str[1:].astype(int)
    return df.assign(locale=np.where(q % 2 == 0, "en", "de"))


def test_group_by_several_columns_one_result_per_combination():
    df = _frame2()
    res = ranklens.evaluate(df, None, ["ndcg_cut.5", "map"], convention="trec_eval", group_by=["device", "locale"])
    combos = sorted(set(zip(df.device, df.locale)))
    assert list(res) == combos and len(combos) == 6
    for dev, loc in res:
        sub = df[(df.device == dev) & (df.locale == loc)]
        alone = ranklens.evaluate(sub, None, ["ndcg_cut.5", "map"], convention="trec_eval")
        assert res[dev, loc]["map"] == alone["map"] == pytest.approx(_pytrec_mean(sub, "map"), abs=1e-12)
        assert res[dev, loc]["ndcg_cut.5"] == pytest.approx(_pytrec_mean(sub, "ndcg_cut_5"), abs=1e-12)
        assert res[dev, loc].counted["map"] == sub["query"].nunique()
    assert "columns 'device' and 'locale'" in res.by and res.columns == ["device", "locale"]
    long = res.to_pandas()
    assert list(long.columns) == ["device", "locale", "measure", "value", "queries"] and len(long) == 12
    # one column in a list is that column
    one = ranklens.evaluate(df, None, ["map"], convention="trec_eval", group_by=["device"])
    assert list(one) == ["desktop", "mobile", "tablet"]
    assert one["mobile"]["map"] == ranklens.evaluate(df, None, ["map"], convention="trec_eval",
                                                     group_by="device")["mobile"]["map"]


def test_group_by_several_columns_refusals():
    df = _frame2(6)
    with pytest.raises(InvalidParameterError, match="'locale', 'nope' are not columns"):
        ranklens.evaluate(df, None, ["map"], group_by=["locale", "nope"])
    with pytest.raises(InvalidParameterError, match="names a column twice"):
        ranklens.evaluate(df, None, ["map"], group_by=["device", "device"])
    with pytest.raises(InvalidParameterError, match="list of column names"):
        ranklens.evaluate(df, None, ["map"], group_by=["device", 3])
    with pytest.raises(InputError, match=r"columns 'device' and 'item' of the judgments give query q0 6 groups "
                                         r"\(mobile,d0, .*the run, which has no such column, cannot be split"):
        ranklens.evaluate(df, df[["query", "item", "score"]], ["map"], group_by=["device", "item"])


def test_compare_and_cli_group_by_several_columns(tmp_path):
    df = _frame2(24)
    rng = np.random.default_rng(2)
    other = df.assign(score=rng.random(len(df)))
    cols = ["query", "item", "score", "device", "locale"]
    j = df[["query", "item", "relevance"]]
    by = ranklens.compare(j, {"a": df[cols], "b": other[cols]}, ["ndcg@5"], group_by=["device", "locale"],
                          n_resamples=499)
    assert sorted(by) == sorted(set(zip(df.device, df.locale)))
    for (dev, loc), c in by.items():
        keep = (df.device == dev) & (df.locale == loc)
        alone = ranklens.compare(j[keep], {"a": df[cols][keep], "b": other[cols][keep]}, ["ndcg@5"], n_resamples=499)
        assert c.row("b", "ndcg@5")["diff"] == alone.row("b", "ndcg@5")["diff"]
        assert c.row("b", "ndcg@5")["p_value"] == alone.row("b", "ndcg@5")["p_value"]
    t, jf, a, b = (tmp_path / n for n in ("t.csv", "j.csv", "a.csv", "b.csv"))
    df.to_csv(t, index=False)
    j.to_csv(jf, index=False)
    df[cols].to_csv(a, index=False)
    other[cols].to_csv(b, index=False)
    for spelling in (("--group-by", "device,locale"), ("--group-by", "device", "--group-by", "locale")):
        res = cli("eval", str(t), *spelling, "-m", "map", "-c", "trec_eval", "-f", "json")
        assert res.returncode == 0, res.stderr
        got = json.loads(res.stdout)["runs"]
        assert got["mobile,en"]["aggregate"]["map"] == pytest.approx(
            _pytrec_mean(df[(df.device == "mobile") & (df.locale == "en")], "map"), abs=1e-12)
        assert len(got) == 6
    out = cli("compare", str(jf), str(a), str(b), "-m", "ndcg@5", "--group-by", "device,locale", "--resamples", "99",
              "-f", "csv")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("device,locale,measure,run") and len(lines) == 1 + 6 * 2
    js = json.loads(cli("compare", str(jf), str(a), str(b), "-m", "ndcg@5", "--group-by", "device,locale",
                        "--resamples", "99", "-f", "json").stdout)
    assert js["group_by"] == "device,locale" and "tablet,de" in js["groups"]
    bad = cli("compare", str(jf), str(a), str(b), "--group-by", "device,,locale")
    assert bad.returncode == 2 and "--group-by" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------------------------------------
# a query whose rows fall in several groups: each group's rows evaluated alone
# ---------------------------------------------------------------------------------------------


def _split_frame(n_q: int = 18, seed: int = 7):
    """A long table whose device varies within a query: each row shown on one device (a query on several)."""
    df = _frame(n_q, seed)
    rng = np.random.default_rng(seed + 1)
    return df.assign(device=rng.choice(["mobile", "desktop", "tablet"], size=len(df)))


def _pytrec_on(qrels_rows, run_rows, measure: str) -> float:
    """pytrec_eval's mean over the queries of ``run_rows`` (judgments: ``qrels_rows`` of those queries)."""
    qrels = {q: dict(zip(g["item"], map(int, g["relevance"]))) for q, g in qrels_rows.groupby("query")}
    run = {q: dict(zip(g["item"], map(float, g["score"]))) for q, g in run_rows.groupby("query")}
    per_q = pytrec_eval.RelevanceEvaluator({q: qrels.get(q, {}) for q in run}, {measure}).evaluate(run)
    return float(np.mean([v[measure] for v in per_q.values()]))


def test_a_query_in_several_groups_is_evaluated_in_each_on_its_rows():
    df = _split_frame()
    assert (df.groupby("query")["device"].nunique() > 1).all()
    ms = ["ndcg_cut.5", "map", "recip_rank"]
    res = ranklens.evaluate(df, None, ms, convention="trec_eval", group_by="device")
    assert list(res) == ["desktop", "mobile", "tablet"] and res.notes == []
    for g in res:
        sub = df[df.device == g]
        alone = ranklens.evaluate(sub, None, ms, convention="trec_eval")
        assert res[g].aggregate == alone.aggregate and list(res[g].queries) == list(alone.queries)
        assert np.array_equal(res[g].values, alone.values, equal_nan=True)
        for m, peer in (("map", "map"), ("ndcg_cut.5", "ndcg_cut_5"), ("recip_rank", "recip_rank")):
            assert res[g][m] == pytest.approx(_pytrec_on(sub, sub, peer), abs=1e-12)


def test_judgments_without_the_group_column_are_the_querys_every_judgment():
    df = _split_frame(seed=11)
    j, r = df[["query", "item", "relevance"]], df[["query", "item", "score", "device"]]
    res = ranklens.evaluate(j, r, ["map", "recall.100"], convention="trec_eval", group_by="device")
    for g in res:
        rows = r[r.device == g]
        judged = j[j["query"].isin(rows["query"])]  # every judgment of the queries the group ranks
        alone = ranklens.evaluate(judged, rows.drop(columns="device"), ["map", "recall.100"], convention="trec_eval")
        assert res[g].aggregate == alone.aggregate
        # a relevant item ranked on another device counts as missed here (recall below 1), as pytrec_eval says
        assert res[g]["recall.100"] == pytest.approx(_pytrec_on(judged, rows, "recall_100"), abs=1e-12)
        assert res[g]["map"] == pytest.approx(_pytrec_on(judged, rows, "map"), abs=1e-12)
    assert min(res[g]["recall.100"] for g in res) < 1.0


def test_judgments_with_the_group_column_are_cut_by_group_too():
    df = _split_frame(seed=13)
    j = df[["query", "item", "relevance", "device"]]
    r = df[["query", "item", "score", "device"]]
    extra = pd.DataFrame({"query": ["q0"], "item": ["zz"], "relevance": [2], "device": ["watch"]})
    res = ranklens.evaluate(pd.concat([j, extra]), r, ["map"], convention="trec_eval", group_by="device")
    assert list(res) == ["desktop", "mobile", "tablet"]  # the groups of the ranked rows
    assert res.notes == ["1 judgment rows are in groups no ranked row is in (watch): left out of every group"]
    for g in res:
        sub = df[df.device == g]
        alone = ranklens.evaluate(j[j.device == g], r[r.device == g], ["map"], convention="trec_eval")
        assert res[g]["map"] == alone["map"] == pytest.approx(_pytrec_on(sub, sub, "map"), abs=1e-12)


def test_rows_left_out_by_missing_exclude_keep_their_groups():
    df = _split_frame(seed=17)
    holes = df.assign(score=df["score"].where(np.arange(len(df)) % 7 != 3, np.nan))
    res = ranklens.evaluate(holes, None, ["map"], convention="trec_eval", group_by="device", missing="exclude")
    for g in res:
        sub = holes[holes.device == g]
        alone = ranklens.evaluate(sub, None, ["map"], convention="trec_eval", missing="exclude")
        assert res[g]["map"] == alone["map"]
        ranked = sub[sub["score"].notna()]
        assert res[g]["map"] == pytest.approx(_pytrec_on(sub, ranked, "map"), abs=1e-12)


def test_compare_and_cli_with_a_query_in_several_groups(tmp_path):
    df = _split_frame(seed=19)
    rng = np.random.default_rng(3)
    other = df.assign(score=rng.random(len(df)))
    cols = ["query", "item", "score", "device"]
    j = df[["query", "item", "relevance"]]
    by = ranklens.compare(j, {"a": df[cols], "b": other[cols]}, ["ndcg@5"], group_by="device", n_resamples=499)
    for g, c in by.items():
        keep = df.device == g
        judged = j[j["query"].isin(df.loc[keep, "query"])]
        alone = ranklens.compare(judged, {"a": df[cols][keep], "b": other[cols][keep]}, ["ndcg@5"], n_resamples=499)
        for key in ("mean", "diff", "p_value"):
            assert c.row("b", "ndcg@5")[key] == alone.row("b", "ndcg@5")[key]
    t = tmp_path / "t.csv"
    df.to_csv(t, index=False)
    out = cli("eval", str(t), "--group-by", "device", "-m", "map", "-c", "trec_eval", "-f", "json")
    assert out.returncode == 0, out.stderr
    got = {g: v["aggregate"]["map"] for g, v in json.loads(out.stdout)["runs"].items()}
    assert got == pytest.approx({g: _pytrec_on(df[df.device == g], df[df.device == g], "map") for g in got},
                                abs=1e-12)
