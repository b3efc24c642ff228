"""``ranklens counterfactual fit | estimate | compare``: the same numbers as by hand, -f, --html, one-line errors."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from click.testing import CliRunner

from ranklens.cli import cli

# query q: s1 shows a, b, c and clicks b; s2 shows a, b, c and clicks a; query r: s3 shows x, y and clicks y
LOG = ("group_id,query,item_id,rank,click\n"
       "s1,q,a,1,0\ns1,q,b,2,1\ns1,q,c,3,0\ns2,q,a,1,1\ns2,q,b,2,0\ns2,q,c,3,0\ns3,r,x,1,0\ns3,r,y,2,1\n")
RUN_A = "q Q0 b 1 3 a\nq Q0 c 2 2 a\nq Q0 a 3 1 a\nr Q0 y 1 2 a\nr Q0 x 2 1 a\n"
RUN_B = "q Q0 a 1 3 b\nq Q0 b 2 2 b\nq Q0 c 3 1 b\nr Q0 x 1 2 b\nr Q0 y 2 1 b\n"


@pytest.fixture()
def files(tmp_path):
    paths = {}
    for name, text in (("log.csv", LOG), ("a.txt", RUN_A), ("b.txt", RUN_B)):
        (tmp_path / name).write_text(text)
        paths[name] = str(tmp_path / name)
    return paths


def run(args):
    return CliRunner().invoke(cli, ["counterfactual", *args], catch_exceptions=False)


def test_fit_json_cascade_by_hand(files):
    res = run(["fit", files["log.csv"], "--model", "cascade", "-f", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["model"] == "cascade" and out["sessions"] == 3
    # cascade examination: rank 1 always; rank 2 when rank 1 is not clicked: s1 (a: alpha 1/2 over s1, s2), s3
    # (x: alpha 0) -> mean over the 3 sessions of P(E_2) = (1 - 1/2 + 1 - 1/2 + 1 - 0) / 3
    assert out["examination"][1] == pytest.approx((0.5 + 0.5 + 1.0) / 3)
    assert [r["rank"] for r in out["ranks"]] == [1, 2, 3]


def test_estimate_table_csv_json(files):
    res = run(["estimate", files["log.csv"], files["a.txt"], "-m", "clicks@2", "--examination", "1,0.5,0.25",
               "-f", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    # target a: q -> b, c; r -> y, x. s1: b clicked at rank 2 -> 1 / 0.5; s3: y at rank 2 -> 1 / 0.5; s2: 0
    assert out["value"] == pytest.approx(4 / 3) and out["estimator"] == "ips" and out["unlogged_share"] == 0
    rows = list(csv.DictReader(io.StringIO(run(["estimate", files["log.csv"], files["a.txt"], "-m", "clicks@2",
                                                "--examination", "1,0.5,0.25", "-f", "csv"]).output)))
    assert float(rows[0]["value"]) == pytest.approx(4 / 3)
    table = run(["estimate", files["log.csv"], files["a.txt"], "-m", "clicks@2", "--examination", "1,0.5,0.25"])
    assert re.search(r"clicks@2\s+ips\s+1\.3333", table.output), table.output


def test_compare_against_the_logged_ranker(files, tmp_path):
    html = tmp_path / "r.html"
    res = run(["compare", files["log.csv"], files["a.txt"], files["b.txt"], "-m", "clicks@2", "--examination",
               "1,0.5,0.25", "-f", "json", "--html", str(html)])
    assert res.exit_code == 0, res.output
    rows = {r["run"]: r for r in json.loads(res.output)}
    # logged clicks@2 per session: s1 1 (b at 2), s2 1 (a at 1), s3 1 (y at 2)
    assert rows["logged"]["value"] == pytest.approx(1.0)
    assert rows[files["a.txt"]]["value"] == pytest.approx(4 / 3)
    # b: q -> a (1), b (2): s1 b at 2 -> theta_2 / rho(b) = 0.5 / 0.5 = 1; s2 a at 1 -> 1; r -> x, y: s3 y -> 1
    assert rows[files["b.txt"]]["value"] == pytest.approx(1.0)
    assert rows[files["a.txt"]]["estimate"] == pytest.approx(4 / 3 - 1.0)
    page = html.read_text()
    assert "<svg" in page and "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not re.search(r"(src|href)=['\"]https?:", page), "the report fetches nothing"
    assert "1.3333" in page


def test_bad_input_one_line_exit_2(files, tmp_path):
    import subprocess
    import sys

    bad = tmp_path / "bad.csv"
    bad.write_text(LOG.replace("s1,q,c,3,0", "s1,q,c,0,0"))
    for args, pattern in (([str(bad), files["a.txt"]], r"column 'rank' holds 0 at row 2"),
                          ([str(tmp_path / "none.csv"), files["a.txt"]], r"none\.csv: No such file or directory"),
                          ([files["log.csv"], files["a.txt"], "--examination", "1,0,0.2"],
                           r"examination propensities must be in \(0, 1\]")):
        r = subprocess.run([sys.executable, "-m", "ranklens.cli", "counterfactual", "estimate", *args],
                           capture_output=True, text=True, timeout=120, check=False)
        assert r.returncode == 2, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and re.search(pattern, lines[0]), r.stderr
    # a 100% or 0% interval is no interval (compare's was an internal error, exit 70)
    for command, targets in (("estimate", [files["a.txt"]]), ("compare", [files["a.txt"], files["a.txt"]])):
        for level in ("1", "0"):
            r = subprocess.run([sys.executable, "-m", "ranklens.cli", "counterfactual", command, files["log.csv"],
                                *targets, "--confidence", level], capture_output=True, text=True, timeout=120,
                               check=False)
            assert r.returncode == 2 and r.stderr.strip() == (
                f"ranklens: error: `confidence` must be a number in (0, 1); got {float(level)!r}."), r.stderr
