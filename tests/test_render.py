"""One output schema and its renderers (ranklens.render), on cases small enough to compute by hand.

The expected texts below are written from the layouts the module documents and from values computed by
hand, not pasted from ranklens' output.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import ranklens
from ranklens.cli import cli
from ranklens.errors import InvalidParameterError
from ranklens.render import comparison_cells, format_value, plain, render, result_cells, result_dict

# q1: the relevant item a is ranked 2nd (RR 1/2, P@1 0); q2: the relevant c is ranked 1st (RR 1, P@1 1)
QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2, "d": 0}}
RUN = {"q1": {"a": 0.1, "b": 0.9}, "q2": {"c": 0.8, "d": 0.2}}
# a better run: a first in q1 too (RR 1 on both queries)
BETTER = {"q1": {"a": 0.9, "b": 0.1}, "q2": {"c": 0.8, "d": 0.2}}
MEASURES = ["mrr", "P@1", "num_ret"]
MRR, P1, NUM_RET = (0.5 + 1.0) / 2, (0.0 + 1.0) / 2, 2 + 2


@pytest.fixture(scope="module")
def res():
    return ranklens.evaluate(QRELS, RUN, MEASURES)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("render")
    q, r = tmp / "qrels.txt", tmp / "run.txt"
    q.write_text("".join(f"{qid} 0 {item} {rel}\n" for qid, items in QRELS.items() for item, rel in items.items()))
    lines = []
    for qid, items in RUN.items():
        for rank, (item, score) in enumerate(sorted(items.items(), key=lambda kv: -kv[1]), start=1):
            lines.append(f"{qid} Q0 {item} {rank} {score} run\n")
    r.write_text("".join(lines))
    return str(q), str(r)


def cli_out(*args: str) -> str:
    out = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert out.exit_code == 0, out.output
    return out.output


# -- one schema ---------------------------------------------------------------------------------------------
def test_cli_json_python_dict_and_report_data_are_one_shape(res, files):
    q, r = files
    expected = {
        "aggregate": {"mrr": MRR, "P@1": P1, "num_ret": NUM_RET},
        "per_query": {"q1": {"mrr": 0.5, "P@1": 0.0, "num_ret": 2}, "q2": {"mrr": 1.0, "P@1": 1.0, "num_ret": 2}},
        "counted": {"mrr": 2, "P@1": 2, "num_ret": 2},
        "excluded": [],
        "convention": "ranklens",
    }
    assert res.to_dict() == expected
    assert json.loads(res.to_json()) == expected
    args = ["eval", q, r, *[a for m in MEASURES for a in ("-m", m)], "-f", "json"]
    assert json.loads(cli_out(*args, "--per-query")) == expected
    without = {k: v for k, v in expected.items() if k != "per_query"}
    assert json.loads(cli_out(*args)) == without == res.to_dict(per_query=False)
    # the web report embeds each run's result in the same shape
    from ranklens.web import build_report

    page = build_report(QRELS, {"base": RUN, "better": BETTER}, MEASURES[:2], n_resamples=99, curves=False)
    data = json.loads(re.search(r"<script type='application/json' id='rl-data'>(.*?)</script>", page, re.S).group(1))
    base = ranklens.evaluate(QRELS, RUN, MEASURES[:2])
    assert data["results"]["base"] == base.to_dict(per_query=False)
    assert set(data["results"]["better"]) == set(without)
    assert data["results"]["better"]["aggregate"] == {"mrr": 1.0, "P@1": 1.0}
    assert set(data["comparison"]) == {"settings", "baseline", "runs", "measures", "rows", "notes"}
    # several runs on the command line: {"runs": {name: result}}, each run in the same shape
    multi = json.loads(cli_out("eval", q, r, r, "-m", "mrr", "-f", "json"))
    assert list(multi) == ["runs"] and len(multi["runs"]) == 2
    assert all(v == {"aggregate": {"mrr": MRR}, "counted": {"mrr": 2}, "excluded": [], "convention": "ranklens"}
               for v in multi["runs"].values())


def test_schema_nan_is_null_and_exclusions_are_plain():
    # q2 has no relevant item: skipped by the default convention, so a measure over q2 alone has no value
    res = ranklens.evaluate({"q2": {"x": 0}}, {"q2": {"x": 1.0}}, ["mrr"])
    d = result_dict(res)
    assert d["aggregate"] == {"mrr": None} and d["counted"] == {"mrr": 0} and d["per_query"] == {}
    assert d["excluded"] == [{"reason": "no relevant item: skipped (not in the mean)", "count": 1,
                              "examples": ["q2"], "measures": ["mrr"]}]
    assert json.loads(res.to_json())["aggregate"] == {"mrr": None}  # strict JSON: null, not NaN
    scored = result_dict(ranklens.evaluate({"q2": {"x": 0}}, {"q2": {"x": 1.0}}, ["mrr"], empty=0.0))
    assert scored["aggregate"] == {"mrr": 0.0} and scored["counted"] == {"mrr": 1}
    assert scored["excluded"][0]["reason"] == "no relevant item: scored 0 by the convention"
    assert "n/a" in render(res, "table")


def test_plain():
    import datetime as dt

    import numpy as np

    assert plain({"x": np.float64("inf"), "y": [np.int32(2), (1.5, None)], 3: dt.datetime(2024, 1, 2, 3, 4)}) == {
        "x": None, "y": [2, [1.5, None]], "3": "2024-01-02T03:04:00Z"}
    assert plain(np.array([1.0, math.nan])) == [1.0, None]


# -- renderers of a result ------------------------------------------------------------------------------------
def test_table(res):
    assert render(res, "table") == (
        "measure   value  queries\n"
        "------------------------\n"
        "mrr      0.7500        2\n"
        "P@1      0.5000        2\n"
        "num_ret       4        2\n"
        "convention: ranklens"
    )
    assert res.table(2) == render(res, "table", digits=2) and "0.75 " in res.table(2)
    assert str(res) == render(res, "table")


def test_table_per_query_and_named_runs(res):
    better = ranklens.evaluate(QRELS, BETTER, ["mrr"])
    assert render({"bm25": ranklens.evaluate(QRELS, RUN, ["mrr"]), "dense": better}, "table", per_query=True) == (
        "per query (bm25):\n"
        "query     mrr\n"
        "-------------\n"
        "q1     0.5000\n"
        "q2     1.0000\n"
        "\n"
        "per query (dense):\n"
        "query     mrr\n"
        "-------------\n"
        "q1     1.0000\n"
        "q2     1.0000\n"
        "\n"
        "measure    bm25   dense  queries\n"
        "--------------------------------\n"
        "mrr      0.7500  1.0000        2\n"
        "convention: ranklens"
    )
    header, rows, below = result_cells(res, 3)
    assert header == ["measure", "value", "queries"] and rows[2] == ["num_ret", "4", "2"] and rows[0][1] == "0.750"


def test_csv(res):
    assert render(res, "csv") == "query,measure,value\nall,mrr,0.75\nall,P@1,0.5\nall,num_ret,4.0\n"
    rows = list(csv.DictReader(io.StringIO(render({"r": res}, "csv", per_query=True))))
    got = {(x["run"], x["query"], x["measure"]): float(x["value"]) for x in rows}
    assert got == {("r", "q1", "mrr"): 0.5, ("r", "q1", "P@1"): 0.0, ("r", "q1", "num_ret"): 2.0,
                   ("r", "q2", "mrr"): 1.0, ("r", "q2", "P@1"): 1.0, ("r", "q2", "num_ret"): 2.0,
                   ("r", "all", "mrr"): MRR, ("r", "all", "P@1"): P1, ("r", "all", "num_ret"): NUM_RET}


def test_trec(res):
    # trec_eval's names and "%-22s\t%s\t%.4f" lines; counts printed as integers
    pad = lambda name: name + " " * (22 - len(name))  # noqa: E731
    assert render(res, "trec", per_query=True).splitlines() == [
        f"{pad('recip_rank')}\tq1\t0.5000", f"{pad('P_1')}\tq1\t0.0000", f"{pad('num_ret')}\tq1\t2",
        f"{pad('recip_rank')}\tq2\t1.0000", f"{pad('P_1')}\tq2\t1.0000", f"{pad('num_ret')}\tq2\t2",
        f"{pad('recip_rank')}\tall\t0.7500", f"{pad('P_1')}\tall\t0.5000", f"{pad('num_ret')}\tall\t4",
    ]


def test_markdown_and_latex(res):
    assert render(res, "markdown", digits=2) == (
        "| measure | value | queries |\n"
        "|:--|--:|--:|\n"
        "| mrr | 0.75 | 2 |\n"
        "| P@1 | 0.50 | 2 |\n"
        "| num_ret | 4 | 2 |\n"
        "\n"
        "convention: ranklens\n"
    )
    assert render(res, "latex", digits=2) == (
        "% convention: ranklens\n"
        "\\begin{tabular}{lrr}\n"
        "\\toprule\n"
        "measure & value & queries \\\\\n"
        "\\midrule\n"
        "mrr & 0.75 & 2 \\\\\n"
        "P@1 & 0.50 & 2 \\\\\n"
        "num\\_ret & 4 & 2 \\\\\n"
        "\\bottomrule\n"
        "\\end{tabular}\n"
    )


def test_html(res):
    html = render(res, "html")
    assert html == res._repr_html_()
    assert html.startswith('<div class="ranklens">') and html.count("<table") == 1
    assert "ranklens Result: 2 queries, convention &#x27;ranklens&#x27;" in html
    cells = re.findall(r"<td[^>]*>(.*?)</td>", html)
    assert cells == ["mrr", "0.7500", "2", "P@1", "0.5000", "2", "num_ret", "4", "2"]
    assert render(res, "html", per_query=True).count("<table") == 2


def test_format_value():
    assert format_value(2 / 3) == "0.6667" and format_value(2 / 3, 2) == "0.67"
    assert format_value(7.0, summed=True) == "7" and format_value(7.5, 1, summed=True) == "7.5"
    assert format_value(math.nan) == "n/a"


# -- renderers of a comparison ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def comparison():
    return ranklens.compare(QRELS, {"base": RUN, "better": BETTER}, ["mrr"], n_resamples=99)


def test_comparison_renderers(comparison):
    c = comparison
    better = c.row("better", "mrr")
    # mrr 1 against 0.75: +0.25 over the 2 queries both count, better on q1, equal on q2
    cells = comparison_cells(c, better, 4)
    assert cells[:2] == ["better", "1.0000"] and cells[3] == "2" and cells[4] == "+0.2500" and cells[6] == "1/1/0"
    assert comparison_cells(c, c.row("base", "mrr"))[4] == "(baseline)"
    text = render(c, "table")
    assert text.startswith("mrr  (baseline: base)\nrun       mean") and c.table() == text
    md = render(c, "markdown").splitlines()
    assert md[0].startswith("| measure | run | mean | 95% CI | queries | diff |")
    assert md[2].startswith("| mrr | base | 0.7500 |") and md[3].startswith("| mrr | better | 1.0000 |")
    tex = render(c, "latex")
    assert "\\begin{tabular}{ll" + "r" * 9 + "}" in tex and "mrr & better & 1.0000 &" in tex
    rows = list(csv.DictReader(io.StringIO(render(c, "csv"))))
    assert [(r["run"], float(r["mean"])) for r in rows] == [("base", 0.75), ("better", 1.0)]
    assert rows[1]["diff"] == "0.25" and rows[0]["diff"] == ""  # the baseline has no difference
    d = json.loads(render(c, "json"))
    assert d == c.to_dict() and d["rows"][1]["wins"] == 1 and d["rows"][0]["run"] == "base"
    assert render(c, "html").count("<table") == 1 and ">+0.2500</td>" in render(c, "html")
    with pytest.raises(InvalidParameterError, match="trec"):
        render(c, "trec")


def test_bad_arguments_name_themselves(res):
    with pytest.raises(InvalidParameterError, match="`format`.*'yaml'"):
        render(res, "yaml")
    with pytest.raises(InvalidParameterError, match="`digits`"):
        render(res, "table", digits=-1)
    with pytest.raises(InvalidParameterError, match="Result"):
        render([1, 2], "table")
    with pytest.raises(InvalidParameterError, match="empty"):
        render({}, "table")
    aggregates_only = ranklens.evaluate(QRELS, RUN, ["mrr"], per_query=False)
    assert "per_query" not in aggregates_only.to_dict()
    with pytest.raises(InvalidParameterError, match="per_query=False"):
        aggregates_only.to_dict(per_query=True)
    with pytest.raises(InvalidParameterError, match="per_query=False"):
        render(aggregates_only, "trec", per_query=True)


# -- the command line: -f/--format is the output format everywhere -------------------------------------------
def test_format_is_the_output_format_and_inputs_have_their_own_options(files):
    q, r = files
    # the failing command: --format json used to be the format of the qrels
    assert json.loads(cli_out("eval", q, r, "-m", "mrr", "--format", "json"))["aggregate"] == {"mrr": MRR}
    out = cli_out("eval", q, r, "-m", "mrr", "--judgments-format", "trec", "--run-format", "trec", "-f", "csv")
    assert out.splitlines()[-1] == f"{Path(r).name},all,mrr,0.75"
    res = CliRunner().invoke(cli, ["eval", q, r, "--format", "svmlight"])
    assert res.exit_code == 2 and "--judgments-format" in res.output
    res = CliRunner().invoke(cli, ["eval", q, r, "--judgments-format", "svmlight"])
    assert res.exit_code != 0  # a TREC qrels file read as svmlight fails, naming the file
    res = CliRunner().invoke(cli, ["eval", q, r, "--engine", "spark", "--group-by", "day", "-f", "trec"])
    assert res.exit_code == 2 and "per-group rows" in res.output  # refused before Spark starts
    for command in (["compare", q, r, r], ["explain", q, r, "--query", "q1"], ["conventions"]):
        res = CliRunner().invoke(cli, [*command, "--format", "yaml"])
        assert res.exit_code == 2 and "'yaml' is not one of" in res.output, command


def test_conventions_json():
    d = json.loads(cli_out("conventions", "trec_eval", "-f", "json"))
    assert list(d) == ["trec_eval"] and d["trec_eval"]["name"] == "trec_eval"
    assert set(json.loads(cli_out("conventions", "--format", "json"))) >= {"ranklens", "sklearn", "lightgbm"}
