"""The command line: output formats, multiple runs, single tables, conventions, --set."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from ranklens.cli import cli

# one query, 4 ranked docs (d4 unjudged), one judged relevant doc (d9) not retrieved
QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq1 0 d9 1\nq2 0 e1 1\nq2 0 e2 0\n"
RUN = "q1 Q0 d1 1 4.0 s\nq1 Q0 d2 2 3.0 s\nq1 Q0 d3 3 2.0 s\nq1 Q0 d4 4 1.0 s\nq2 Q0 e2 1 2.0 s\nq2 Q0 e1 2 1.0 s\n"


def d(i: int) -> float:
    return 1.0 / math.log2(i + 1)


# hand computation, linear gain, ideal from all judgments
NDCG_Q1 = (2 * d(1) + 0 + 1 * d(3)) / (2 * d(1) + 1 * d(2) + 1 * d(3))
NDCG_Q2 = (1 * d(2)) / (1 * d(1))
AP_Q1 = (1 / 1 + 2 / 3) / 3  # relevant at ranks 1 and 3, R = 3 (d1, d3, d9)
AP_Q2 = (1 / 2) / 1


@pytest.fixture()
def files(tmp_path):
    q = tmp_path / "qrels.txt"
    r = tmp_path / "run.txt"
    q.write_text(QRELS)
    r.write_text(RUN)
    return str(q), str(r)


def run(args):
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    return res


def test_json_full_precision_keys_as_written(files):
    q, r = files
    res = run(["eval", q, r, "-m", "ndcg", "-m", "map", "-m", "ndcg_cut.10", "--per-query", "-f", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert set(out["aggregate"]) == {"ndcg", "map", "ndcg_cut.10"}
    assert out["aggregate"]["ndcg"] == pytest.approx((NDCG_Q1 + NDCG_Q2) / 2, abs=1e-15)
    assert out["aggregate"]["map"] == pytest.approx((AP_Q1 + AP_Q2) / 2, abs=1e-15)
    assert out["per_query"]["q1"]["ndcg"] == pytest.approx(NDCG_Q1, abs=1e-15)
    assert out["per_query"]["q2"]["map"] == pytest.approx(AP_Q2, abs=1e-15)
    assert out["per_query"]["q1"]["ndcg_cut.10"] == pytest.approx(NDCG_Q1, abs=1e-15)


def test_json_without_per_query_has_no_per_query(files):
    q, r = files
    out = json.loads(run(["eval", q, r, "-m", "ndcg@2", "-f", "json"]).output)
    assert "per_query" not in out
    ndcg2_q1 = (2 * d(1)) / (2 * d(1) + 1 * d(2))
    ndcg2_q2 = d(2) / d(1)
    assert out["aggregate"]["ndcg@2"] == pytest.approx((ndcg2_q1 + ndcg2_q2) / 2, abs=1e-15)


def test_trec_format_layout(files):
    q, r = files
    res = run(["eval", q, r, "-m", "ndcg_cut.10", "-m", "P.2", "-m", "recip_rank", "-m", "num_ret", "-q", "-f", "trec",
               "-c", "trec_eval"])
    lines = res.output.strip().split("\n")
    rows = [ln.split("\t") for ln in lines]
    assert all(len(r) == 3 for r in rows)
    table = {(a.strip(), b): c for a, b, c in rows}
    assert table[("ndcg_cut_10", "q1")] == f"{NDCG_Q1:.4f}"
    assert table[("P_2", "all")] == f"{(1 / 2 + 1 / 2) / 2:.4f}"  # q1: d1 of d1,d2; q2: e1 of e2,e1
    assert table[("recip_rank", "q2")] == "0.5000"
    assert table[("num_ret", "all")] == "6"  # summed, as trec_eval does
    # measure column padded like trec_eval's "%-22s"
    assert lines[0].startswith("ndcg_cut_10" + " " * (22 - len("ndcg_cut_10")) + "\t")


def test_csv_format(files):
    q, r = files
    res = run(["eval", q, r, "-m", "map", "-q", "-f", "csv"])
    rows = list(csv.DictReader(io.StringIO(res.output)))
    got = {(x["query"], x["measure"]): float(x["value"]) for x in rows}
    assert got[("q1", "map")] == pytest.approx(AP_Q1, abs=1e-15)
    assert got[("all", "map")] == pytest.approx((AP_Q1 + AP_Q2) / 2, abs=1e-15)


def test_table_two_runs(files, tmp_path):
    q, r = files
    r2 = tmp_path / "run2.txt"
    r2.write_text(RUN.replace("4.0", "0.5"))  # d1 drops to the bottom of q1
    res = run(["eval", q, r, str(r2), "-m", "ndcg"])
    assert res.exit_code == 0
    assert "run.txt" in res.output and "run2.txt" in res.output
    ndcg_q1_b = (0 + 1 * d(2) + 2 * d(4)) / (2 * d(1) + 1 * d(2) + 1 * d(3))
    assert f"{(ndcg_q1_b + NDCG_Q2) / 2:.4f}" in res.output


def test_single_table_with_scores_and_labels(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    t = pa.table({"search_group_id": ["x"] * 5, "item_id": list("abcde"), "Ranks": [1, 2, 3, 4, 5],
                  "Gains (relevance score)": [0, 0, 1, 1, 1]})
    p = tmp_path / "seed.parquet"
    pq.write_table(t, p)
    out = json.loads(run(["eval", str(p), "-m", "ndcg", "-f", "json"]).output)
    dcg = d(3) + d(4) + d(5)
    idcg = d(1) + d(2) + d(3)
    assert out["aggregate"]["ndcg"] == pytest.approx(dcg / idcg, abs=1e-15)


def test_set_overrides_a_field(files):
    q, r = files
    out = json.loads(run(["eval", q, r, "-m", "ndcg", "--set", "gain=exponential", "-f", "json", "-q"]).output)
    g = lambda x: 2.0**x - 1  # noqa: E731
    exp_q1 = (g(2) * d(1) + g(1) * d(3)) / (g(2) * d(1) + g(1) * d(2) + g(1) * d(3))
    assert out["per_query"]["q1"]["ndcg"] == pytest.approx(exp_q1, abs=1e-15)


def test_empty_query_is_reported(tmp_path):
    q = tmp_path / "q.txt"
    r = tmp_path / "r.txt"
    q.write_text("a 0 x 1\nb 0 y 0\n")
    r.write_text("a Q0 x 1 1.0 s\nb Q0 y 1 1.0 s\n")
    res = run(["eval", str(q), str(r), "-m", "ndcg"])
    assert "1 query: no relevant item: skipped" in res.output
    out = json.loads(run(["eval", str(q), str(r), "-m", "ndcg", "-f", "json"]).output)
    assert out["counted"]["ndcg"] == 1
    assert out["excluded"][0]["examples"] == ["b"]
    out0 = json.loads(run(["eval", str(q), str(r), "-m", "ndcg", "-f", "json", "--set", "empty=0"]).output)
    assert out0["aggregate"]["ndcg"] == pytest.approx(0.5)


def test_conventions_listing():
    res = run(["conventions"])
    for name in ("ranklens", "sklearn", "trec_eval", "lightgbm", "xgboost", "ranx", "evidently"):
        assert name in res.output
    res = run(["conventions", "xgboost"])
    assert "default_cutoff = 32" in res.output


def test_explain_command(files):
    q, r = files
    res = run(["explain", q, r, "--query", "q1", "-k", "3", "--compare", "sklearn"])
    assert res.exit_code == 0, res.output
    assert "ideal item" in res.output and "d9" in res.output  # unretrieved judged item is in the ideal
    assert "ideal: 'judgments' -> 'ranking'" in res.output
    res = run(["explain", q, r, "--query", "q1", "-f", "json"])
    data = json.loads(res.output)
    assert data["value"] == pytest.approx(NDCG_Q1, abs=1e-15)
    assert [row["item"] for row in data["rows"]] == ["d1", "d2", "d3", "d4"]


def _child(code: str, **env: str) -> list[str]:
    base = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", code], env={**base, **env}, capture_output=True, text=True,
                         timeout=120, check=True).stdout
    return out.split()


THREADS = ("import os\n"
           "print(os.environ.get('OPENBLAS_NUM_THREADS'))\n"
           "import numpy\n"
           "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('Threads:')][0])\n")


@pytest.mark.skipif(not os.path.exists("/proc/self/status") or (os.cpu_count() or 1) < 2,
                    reason="counts a process's threads in /proc, on a machine with more than one core")
def test_the_console_scripts_give_numpys_blas_one_thread():
    from importlib.metadata import entry_points

    # both scripts start in ranklens._cli.entry, which sets the variable before numpy is imported
    scripts = {e.name: e.value for e in entry_points(group="console_scripts") if e.name.startswith("ranklens")}
    assert scripts == {"ranklens": "ranklens._cli.entry:main",
                       "ranklens-trec_eval": "ranklens._cli.entry:trec_eval_main"}
    # numpy alone starts OpenBLAS's threads, one per core; after prepare() there is only the main thread
    assert _child(THREADS)[1] != "1"
    assert _child("from ranklens._cli.entry import prepare\nprepare()\n" + THREADS) == ["1", "1"]
    # the user's own setting wins, and importing ranklens (even its command line) sets nothing
    chosen = _child("from ranklens._cli.entry import prepare\nprepare()\n" + THREADS, OPENBLAS_NUM_THREADS="2")
    assert chosen == ["2", "2"]
    assert _child("import ranklens, ranklens.cli\n" + THREADS)[0] == "None"
