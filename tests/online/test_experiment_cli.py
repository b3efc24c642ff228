"""`ranklens experiment` as a user runs it: simulate, ab (table, csv, json; CUPED; sequential), report --html,
calibrate; bad input gets one line and exit status 2."""

from __future__ import annotations

import csv
import json
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from ranklens.cli import cli
from ranklens.online import ab_test, simulate


def run(args, code=0):
    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    if code is not None:
        assert r.exit_code == code, r.output
    return r


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    d = tmp_path_factory.mktemp("exp")
    out = run(["experiment", "simulate", str(d / "ev.parquet"), "--users", "3000", "--queries", "40", "--rho",
               "0.5", "--seed", "3", "-m", "clicks@10", "-f", "json"]).output
    return d, out


def test_simulate_prints_the_truth_of_the_written_log(log):
    d, out = log
    rows = json.loads(out[out.index("["):])
    sim = simulate(n_users=3000, n_queries=40, rho=0.5, seed=3)
    assert rows[0]["difference"] == pytest.approx(sim.truth("clicks@10").difference("clicks@10", "treatment"))
    assert pq.read_table(d / "ev.parquet").equals(sim.events)


def test_ab_matches_the_library(log):
    d, _ = log
    out = run(["experiment", "ab", str(d / "ev.parquet"), "-m", "ndcg@10", "-m", "clicks@10", "--covariate",
               "pre_period", "-f", "json"]).output
    got = json.loads(out)
    lib = ab_test(pq.read_table(d / "ev.parquet"), ["ndcg@10", "clicks@10"], covariates="pre_period")
    for r in got["rows"]:
        want = lib.row(r["measure"], r["arm"])
        assert r["estimate"] == pytest.approx(want["estimate"]) and r["ci_low"] == pytest.approx(want["ci_low"])
    assert got["unit"] == "user_id" and got["srm"]["p_value"] == pytest.approx(lib.srm["p_value"])
    table = run(["experiment", "ab", str(d / "ev.parquet"), "-m", "clicks@10"]).output
    assert table.splitlines()[0].split()[:3] == ["measure", "arm", "n_units"]
    assert "unit: user_id" in table and "sample ratio" in table
    rows = list(csv.DictReader(run(["experiment", "ab", str(d / "ev.parquet"), "--sequential", "always_valid",
                                    "-f", "csv"]).output.splitlines()))
    assert {r["sequential"] for r in rows} == {"always_valid"}


def test_report_is_one_self_contained_page(log):
    d, _ = log
    page = d / "p.html"
    run(["experiment", "report", str(d / "ev.parquet"), "--html", str(page), "--sequential", "group_sequential",
         "--segment-col", "segment", "-m", "clicks@10"])
    html = page.read_text()
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert not re.search(r"(src|href)=['\"]https?://", html)
    assert "no sample ratio mismatch" in html and "segment=mobile" in html and "segment=desktop" in html
    data = json.loads(html.split("id='rl-data'>")[1].split("</script>")[0])
    assert len(data["charts"]) == 1 and len(data["charts"][0]["points"]) == 14


def test_calibrate(tmp_path):
    f = tmp_path / "past.csv"
    f.write_text("offline_delta,online_delta\n0.01,0.004\n0.02,0.009\n-0.01,-0.003\n0.03,0.012\n0.005,0.001\n")
    out = run(["experiment", "calibrate", str(f), "--predict", "0.015", "-f", "csv"]).output
    rows = {r["statistic"]: r for r in csv.DictReader(out.splitlines())}
    assert float(rows["sign agreement"]["value"]) == 1.0
    assert "slope (ols)" in rows and "predicted online delta at offline 0.015" in rows


@pytest.mark.parametrize("edit, args, text", [
    (None, ["--control", "base"], "control arm 'base' is not in column 'arm'"),
    (None, ["--covariate", "nope"], "covariate 'nope' is not a column"),
    (None, ["--expected-split", "control=0.4", "--expected-split", "treatment=0.4", "--expected-split", "c=0.2"],
     "arm 'c' of expected_split has no units"),
    ("two_arms", [], "is in two arms"),
    (None, ["--unit-col", "visitor"], "no column 'visitor'"),
])
def test_bad_input_one_line_exit_2(log, tmp_path, edit, args, text):
    d, _ = log
    path = d / "ev.parquet"
    if edit == "two_arms":  # the first user's second list served by the other arm
        t = pq.read_table(path)
        arm = t.column("arm").to_pylist()
        users, groups = t.column("user_id").to_pylist(), t.column("group_id").to_pylist()
        first = users[0]
        lists = [g for u, g in zip(users, groups) if u == first]
        second = next(g for g in lists if g != lists[0]) if len(set(lists)) > 1 else None
        other = "treatment" if arm[0] == "control" else "control"
        if second is None:  # a user with one list: move a whole other user's list into this user
            second = next(g for u, g in zip(users, groups) if u != first and arm[users.index(u)] == other)
            users = [first if g == second else u for u, g in zip(users, groups)]
        arm = [other if g == second else a for g, a in zip(groups, arm)]
        t = t.set_column(t.column_names.index("arm"), "arm", pa.array(arm))
        t = t.set_column(t.column_names.index("user_id"), "user_id", pa.array(users))
        path = tmp_path / "bad.parquet"
        pq.write_table(t, path)
    r = run(["experiment", "ab", str(path), "-m", "clicks@10", *args], code=2)
    assert text in r.output and len(r.output.strip().splitlines()) == 1 and "Traceback" not in r.output


def test_csv_and_json_lines_logs_give_the_parquet_numbers(tmp_path):
    rows = {}
    for ext in ("parquet", "csv", "jsonl"):
        path = tmp_path / f"ev.{ext}"
        run(["experiment", "simulate", str(path), "--users", "600", "--queries", "20", "--seed", "5"])
        out = run(["experiment", "ab", str(path), "-m", "clicks@10", "-m", "ndcg@10", "--sequential", "always_valid",
                   "-f", "json"]).output
        rows[ext] = json.loads(out)["rows"]
    for ext in ("csv", "jsonl"):
        for a, b in zip(rows["parquet"], rows[ext]):
            assert (a["estimate"], a["ci_low"], a["p_value"]) == pytest.approx((b["estimate"], b["ci_low"],
                                                                                 b["p_value"]))


def test_errors_name_the_events_files(log, tmp_path):
    """A broken rule names the file the events came from (not "events"); two files name both, and two files whose
    columns cannot be put one after the other are refused naming both, not an internal error."""
    d, _ = log
    t = pq.read_table(d / "ev.parquet").slice(0, 200)
    ranks = t.column("rank").to_pylist()
    bad = t.set_column(t.column_names.index("rank"), "rank", pa.array(ranks[:7] + [-3] + ranks[8:]))
    one = tmp_path / "one.parquet"
    pq.write_table(bad, one)
    r = run(["experiment", "ab", str(one), "-m", "clicks@10"], code=2)
    assert r.output.strip() == f"ranklens: error: {one}: rank -3 on row 7 is not a positive integer."
    good = tmp_path / "good.parquet"
    pq.write_table(t, good)
    r = run(["experiment", "ab", str(good), str(one), "-m", "clicks@10"], code=2)  # row 7 of the second: 207
    assert r.output.strip() == (f"ranklens: error: the events of {good}, {one} (rows counted across them): rank -3 "
                                "on row 207 is not a positive integer.")
    text = tmp_path / "text.parquet"  # the times as text: they do not merge with the first file's times
    pq.write_table(t.set_column(t.column_names.index("timestamp"), "timestamp",
                                t.column("timestamp").cast(pa.string())), text)
    r = run(["experiment", "ab", str(good), str(text), "-m", "clicks@10"], code=2)
    assert re.fullmatch(f"ranklens: error: {re.escape(str(good))} and {re.escape(str(text))}: column 'timestamp' is "
                        r"timestamp\[\w+\] in the first and string in the second, which do not merge; give the events "
                        r"in files of one layout \(or one table\).", r.output.strip()), r.output
