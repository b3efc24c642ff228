"""Bad input gives a clear error (Python API), and the command line prints exactly one line on stderr
with exit status 2 and no traceback.
"""

from __future__ import annotations

import gzip
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ranklens
from ranklens import CONVENTIONS, FormatError, InputError, InvalidParameterError, RanklensError
from ranklens.cli import main as cli_main
from ranklens.measures import FAMILIES

RANKLENS = Path(sys.executable).with_name("ranklens")


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    texts = {
        "qrels": "301 0 d1 1\n301 0 d2 0\n301 0 d3 2\n302 0 x1 1\n",
        "run": "301 Q0 d1 1 2.5 t\n301 Q0 d2 2 1.5 t\n303 Q0 z1 1 1.0 t\n",
        "qrels_3_fields": "301 0 d1 1\n# fine\n301 0 d2 0\n301 0 d3\n",
        "qrels_bad_label": "301 0 d1 1\n301 0 d2 high\n",
        "qrels_nan_label": "301 0 d1 1\n301 0 d2 nan\n",
        "run_bad_score": "301 Q0 d1 1 2.5 t\n301 Q0 d2 2 abc t\n",
        "run_4_fields": "301 Q0 d1 1 2.5 t\n301 Q0 d2 2\n",
        "run_nan": "301 Q0 d1 1 2.5 t\n301 Q0 d2 2 nan t\n",
        "run_inf": "301 Q0 d1 1 inf t\n",
        "run_dup": "301 Q0 d1 1 2.5 t\n301 Q0 d2 2 1.5 t\n301 Q0 d1 3 0.5 t\n",
        "qrels_dup": "301 0 d1 1\n301 0 d1 0\n",
        "qrels_neg": "301 0 d1 -1\n301 0 d2 1\n",
        "qrels_frac": "301 0 d1 1.5\n301 0 d2 1\n",
        "empty": "",
        "comments": "# nothing but a comment\n\n",
        "run_nan_csv": "query,item,score\n301,d1,0.5\n301,d2,nan\n",
        "table_no_label_csv": "query,item,score\nq,a,0.5\n",
        "svm_bad": "1 qid:1 1:0.5\n0 qid:1 1:0.2\nx qid:1 1:0.1\n",
    }
    out = {}
    for name, text in texts.items():
        p = tmp_path / (name[:-4] + ".csv" if name.endswith("_csv") else name + ".txt")
        p.write_text(text)
        out[name] = p
    gz = tmp_path / "run_bad_score.txt.gz"
    gz.write_bytes(gzip.compress(texts["run_bad_score"].encode()))
    out["run_bad_score_gz"] = gz
    return out


# ---------------------------------------------------------------------------------------------
# malformed files: file, line number, offending text
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "judgments,run,line,text",
    [
        ("qrels_3_fields", "run", 4, "301 0 d3"),
        ("qrels_bad_label", "run", 2, "301 0 d2 high"),
        ("qrels_nan_label", "run", 2, "301 0 d2 nan"),
        ("qrels", "run_bad_score", 2, "301 Q0 d2 2 abc t"),
        ("qrels", "run_bad_score_gz", 2, "301 Q0 d2 2 abc t"),
        ("qrels", "run_4_fields", 2, "301 Q0 d2 2"),
        ("qrels", "run_nan", 2, "301 Q0 d2 2 nan t"),
        ("qrels", "run_inf", 1, "301 Q0 d1 1 inf t"),
        ("run", "qrels", 1, "301 Q0 d1 1 2.5 t"),  # swapped arguments: a run line read as judgments
        ("svm_bad", None, 3, "x qid:1 1:0.1"),
    ],
)
def test_malformed_file_names_file_line_and_text(files, judgments, run, line, text):
    jpath = files[judgments]
    rpath = files[run] if run else None
    with pytest.raises(FormatError) as err:
        if rpath is None:
            ranklens.read_judgments(jpath)
        else:
            ranklens.evaluate(jpath, rpath, ["ndcg"])
    msg = str(err.value)
    bad = rpath if judgments in ("qrels",) and rpath is not None else jpath
    assert str(bad) in msg
    assert f"line {line}" in msg
    assert text in msg
    assert "\n" not in msg


# ---------------------------------------------------------------------------------------------
# NaN / inf scores, duplicates
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_scores_are_refused(bad):
    qrels = {"q": {"a": 1, "b": 0}}
    with pytest.raises(InputError, match="NaN or infinite"):
        ranklens.evaluate(qrels, {"q": {"a": bad, "b": 1.0}}, ["ndcg"])
    with pytest.raises(InputError, match="NaN or infinite"):
        ranklens.evaluate([[1, 0]], [[bad, 1.0]], ["ndcg"])
    with pytest.raises(InputError, match=r"query q item a"):
        ranklens.evaluate(qrels, {"q": {"a": bad, "b": 1.0}}, ["ndcg"])


def test_non_finite_labels_are_refused():
    with pytest.raises(InputError, match="NaN or infinite"):
        ranklens.evaluate({"q": {"a": math.inf}}, {"q": {"a": 1.0}}, ["ndcg"])


def test_nan_score_in_tables(files):
    with pytest.raises(InputError, match="NaN or infinite"):
        ranklens.evaluate(files["qrels"], files["run_nan_csv"], ["ndcg"])
    pd = pytest.importorskip("pandas")
    run = pd.DataFrame({"query": ["q", "q"], "item": ["a", "b"], "score": [np.nan, 1.0]})
    with pytest.raises(InputError, match="NaN or infinite"):
        ranklens.evaluate({"q": {"a": 1}}, run, ["ndcg"])
    pl = pytest.importorskip("polars")
    with pytest.raises(InputError, match="NaN or infinite"):
        ranklens.evaluate({"q": {"a": 1}}, pl.from_pandas(run), ["ndcg"])


def test_duplicate_items_are_refused(files):
    pd = pytest.importorskip("pandas")
    with pytest.raises(InputError, match=r"duplicate .*query 301 item d1"):
        ranklens.evaluate(files["qrels"], files["run_dup"], ["ndcg"])
    with pytest.raises(InputError, match=r"duplicate .*judgments"):
        ranklens.evaluate(files["qrels_dup"], files["run"], ["ndcg"])
    run = pd.DataFrame({"query": ["q", "q", "r"], "item": ["a", "a", "a"], "score": [2.0, 1.0, 1.0]})
    with pytest.raises(InputError, match="duplicate"):
        ranklens.evaluate({"q": {"a": 1}, "r": {"a": 1}}, run, ["ndcg"])
    # the same item in two different queries is not a duplicate
    ok = pd.DataFrame({"query": ["q", "r"], "item": ["a", "a"], "score": [2.0, 1.0]})
    assert ranklens.evaluate({"q": {"a": 1}, "r": {"a": 1}}, ok, ["ndcg"])["ndcg"] == 1.0


# ---------------------------------------------------------------------------------------------
# negative and fractional labels, per convention
# ---------------------------------------------------------------------------------------------

NEG_QRELS = {"q": {"a": -1, "b": 2, "c": 0}}
NEG_RUN = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}


def test_negative_label_default_is_judged_non_relevant():
    res = ranklens.evaluate(NEG_QRELS, NEG_RUN, ["ndcg", "dcg", "map", "P@1", "mrr"])
    zero = ranklens.evaluate({"q": {"a": 0, "b": 2, "c": 0}}, NEG_RUN, ["ndcg", "dcg", "map", "P@1", "mrr"])
    assert res.aggregate == zero.aggregate
    # by hand: gains 0, 2, 0 -> DCG 2/log2(3), ideal 2 -> 1/log2(3) (pytrec_eval and ranx: 0.6309)
    assert res["ndcg"] == pytest.approx(1 / math.log2(3), rel=1e-12)
    assert res["P@1"] == 0.0 and res["mrr"] == 0.5


def test_negative_label_refused_by_lightgbm_and_sklearn():
    for conv in ("lightgbm", "xgboost", "sklearn"):
        with pytest.raises(InputError, match=rf"'{conv}'.*negative.*query q item a"):
            ranklens.evaluate(NEG_QRELS, NEG_RUN, ["ndcg"], convention=conv)


def test_negative_label_kept_by_catboost():
    # CatBoost Base uses the label as the gain: DCG = -1 + 2/log2(3), ideal (from the list) = 2 - 1/2
    res = ranklens.evaluate(NEG_QRELS, NEG_RUN, ["ndcg"], convention="catboost")
    assert res["ndcg"] == pytest.approx((-1 + 2 / math.log2(3)) / (2 - 0.5), rel=1e-12)
    assert round(res["ndcg"], 4) == 0.1746  # ../shared/conventions.md, edge probes


FRAC_QRELS = {"q": {"a": 1.5, "b": 1, "c": 0}}
FRAC_RUN = {"q": {"a": 1.0, "b": 2.0, "c": 3.0}}


def test_fractional_labels_are_never_truncated_silently():
    res = ranklens.evaluate(FRAC_QRELS, FRAC_RUN, ["dcg"])
    assert res["dcg"] == pytest.approx(1 / math.log2(3) + 1.5 / 2, rel=1e-12)  # 1.5 stays 1.5
    for conv in ("lightgbm", "xgboost", "trec_eval", "gdeval"):
        with pytest.raises(InputError, match=rf"'{conv}' accepts only integer labels.*label 1.5"):
            ranklens.evaluate(FRAC_QRELS, FRAC_RUN, ["ndcg@5"], convention=conv)  # gdeval: ndcg@k only
    # ranx truncates by its own rule (label_precision="int"), which is the explicit way
    ranx = ranklens.evaluate(FRAC_QRELS, {"q": {"a": 1.0, "b": 2.0, "c": 3.0}}, ["dcg"], convention="ranx")
    assert ranx["dcg"] == pytest.approx(1 / math.log2(3) + 1 / 2, rel=1e-12)


def test_label_convention_errors_from_files(files):
    with pytest.raises(InputError, match="negative"):
        ranklens.evaluate(files["qrels_neg"], files["run"], ["ndcg"], convention="lightgbm")
    with pytest.raises(InputError, match="integer"):
        ranklens.evaluate(files["qrels_frac"], files["run"], ["ndcg"], convention="trec_eval")


# ---------------------------------------------------------------------------------------------
# queries on one side only: reported in result.excluded, per the convention's query rule
# ---------------------------------------------------------------------------------------------

QRELS = {"1": {"a": 1, "b": 0}, "2": {"c": 1}}  # query 2 judged, never ranked
RUN = {"1": {"a": 1.0, "b": 2.0}, "3": {"z": 1.0, "y": 0.5}}  # query 3 ranked, never judged


def _excluded(res) -> dict[str, str]:
    """query id -> reasons that mention it."""
    out: dict[str, str] = {}
    for e in res.excluded:
        for q in e.examples:
            out[q] = out.get(q, "") + e.text + ";"
    return out


def test_one_sided_queries_default():
    res = ranklens.evaluate(QRELS, RUN, ["ndcg", "map"])
    ex = _excluded(res)
    assert "judged but not ranked" in ex["2"] and "empty ranking" in ex["2"]
    assert "3" in ex  # ranked, nothing judged: no relevant item, so not in the mean
    assert "skipped" in ex["3"] or "not judged" in ex["3"]
    # query 1: ranking b (0), a (1) -> ndcg 1/log2(3), map 1/2; query 2 scores 0; query 3 skipped
    assert res.counted["ndcg"] == 2
    assert res["ndcg"] == pytest.approx((1 / math.log2(3) + 0) / 2, rel=1e-12)
    assert res["map"] == pytest.approx(0.25, rel=1e-12)


@pytest.mark.parametrize("conv", ["trec_eval"])
def test_one_sided_queries_intersection(conv):
    res = ranklens.evaluate(QRELS, RUN, ["ndcg", "map"], convention=conv)
    ex = _excluded(res)
    assert "judged but not ranked" in ex["2"] and "left out" in ex["2"]
    assert "ranked but not judged" in ex["3"] and "left out" in ex["3"]
    assert res.counted["ndcg"] == 1 and res["map"] == 0.5


def test_one_sided_queries_judged_universe():
    res = ranklens.evaluate(QRELS, RUN, ["ndcg", "map"], convention="ir_measures")
    ex = _excluded(res)
    assert "judged but not ranked" in ex["2"] and "empty ranking" in ex["2"]
    assert "ranked but not judged" in ex["3"] and "left out" in ex["3"]
    assert res.counted["ndcg"] == 2 and res["map"] == pytest.approx(0.25)


def test_one_sided_queries_ranked_universe():
    res = ranklens.evaluate(QRELS, RUN, ["ndcg"], convention="lightgbm")
    ex = _excluded(res)
    assert "judged but not ranked" in ex["2"] and "left out" in ex["2"]
    assert "3" in ex and "scored 1" in ex["3"]  # LightGBM: a query without relevant item scores 1


def test_one_sided_queries_refused():
    with pytest.raises(InputError, match=r"trec_eval10.*\b2\b"):
        ranklens.evaluate(QRELS, RUN, ["ndcg"], convention="trec_eval10")
    with pytest.raises(InputError, match=r"ranx.*judged but not ranked \(2\).*ranked but not judged \(3\)"):
        ranklens.evaluate(QRELS, RUN, ["ndcg"], convention="ranx")


def test_no_common_query():
    with pytest.raises(InputError, match="no query"):
        ranklens.evaluate({"1": {"a": 1}}, {"2": {"a": 1.0}}, ["ndcg"], convention="trec_eval")


# ---------------------------------------------------------------------------------------------
# empty input
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "judgments,run",
    [
        ({}, {"q": {"a": 1.0}}),
        ({"q": {"a": 1}}, {}),
        ({"q": {}}, {"q": {"a": 1.0}}),
        ([], []),
        ([[]], [[]]),
        (np.zeros((0, 3)), np.zeros((0, 3))),
        (np.zeros((2, 0)), np.zeros((2, 0))),
    ],
    ids=["empty qrels dict", "empty run dict", "empty inner dict", "empty lists", "empty rows", "0 rows", "0 cols"],
)
def test_empty_input_is_an_error(judgments, run):
    with pytest.raises(InputError, match="empty"):
        ranklens.evaluate(judgments, run, ["ndcg"])


def test_empty_tables_and_files(files):
    pd = pytest.importorskip("pandas")
    with pytest.raises(InputError, match="no rows"):
        ranklens.evaluate(pd.DataFrame({"query": [], "item": [], "relevance": [], "score": []}))
    for name in ("empty", "comments"):
        with pytest.raises(InputError, match=r"empty|no data"):
            ranklens.evaluate(files[name], files["run"], ["ndcg"])
        with pytest.raises(InputError, match=r"empty|no data"):
            ranklens.evaluate(files["qrels"], files[name], ["ndcg"])
    with pytest.raises(InputError, match="no such file"):
        ranklens.evaluate(files["qrels"].with_name("missing.txt"), files["run"], ["ndcg"])


# ---------------------------------------------------------------------------------------------
# unknown measure / convention: the error lists the valid ones
# ---------------------------------------------------------------------------------------------


def test_unknown_measure_lists_valid_measures():
    with pytest.raises(InvalidParameterError) as err:
        ranklens.evaluate(QRELS, RUN, ["ndgc@10"])
    for family in FAMILIES:
        assert family in str(err.value)
    assert "ndgc@10" in str(err.value)


@pytest.mark.parametrize("text, message", [
    ("ndcg@-1", "measure 'ndcg@-1': the cutoff must be an integer from 1 to 9223372036854775807; got '-1'."),
    ("map@1e3", "measure 'map@1e3': the cutoff must be an integer from 1 to 9223372036854775807; got '1e3'."),
    ("mrr@", "measure 'mrr@': the cutoff must be an integer from 1 to 9223372036854775807; got ''."),
    # "ndcg @10" is a list of two measures in ir_measures' language: the second has no name
    ("ndcg @10", "measure '@10' is a cutoff without its measure: write them together, with no space (e.g. ndcg@10)."),
])
def test_a_known_measure_with_a_bad_cutoff_says_so(text, message):
    with pytest.raises(InvalidParameterError) as err:
        ranklens.evaluate(QRELS, RUN, [text])
    assert str(err.value) == message


def test_unknown_convention_lists_valid_conventions():
    with pytest.raises(InvalidParameterError) as err:
        ranklens.evaluate(QRELS, RUN, ["ndcg"], convention="trec-eval-11")
    for name in CONVENTIONS:
        assert name in str(err.value)


def test_unknown_convention_field_lists_valid_fields():
    with pytest.raises(InvalidParameterError, match=r"unknown keyword 'tie' \(did you mean 'ties'\?\)"):
        ranklens.evaluate(QRELS, RUN, ["ndcg"], tie="average")


def test_bad_convention_value_lists_choices():
    with pytest.raises(InvalidParameterError, match="'average'.*'input'"):
        ranklens.evaluate(QRELS, RUN, ["ndcg"], ties="random")


def test_errors_are_ranklens_errors_and_value_errors(files):
    for call in (
        lambda: ranklens.evaluate({}, {}),
        lambda: ranklens.evaluate(QRELS, RUN, ["nope"]),
        lambda: ranklens.evaluate(files["qrels_3_fields"], files["run"]),
    ):
        with pytest.raises(RanklensError) as err:
            call()
        assert isinstance(err.value, ValueError)


# ---------------------------------------------------------------------------------------------
# command line: exactly one line on stderr, exit status 2, no traceback
# ---------------------------------------------------------------------------------------------

CLI_CASES = {
    "malformed qrels": (["eval", "{qrels_3_fields}", "{run}"], "line 4"),
    "malformed run": (["eval", "{qrels}", "{run_bad_score}"], "line 2"),
    "malformed gz run": (["eval", "{qrels}", "{run_bad_score_gz}"], "line 2"),
    "swapped files": (["eval", "{run}", "{qrels}"], "line 1"),
    "nan score": (["eval", "{qrels}", "{run_nan}"], "nan"),
    "inf score": (["eval", "{qrels}", "{run_inf}"], "inf"),
    "nan in a table": (["eval", "{qrels}", "{run_nan_csv}"], "NaN"),
    "duplicate item": (["eval", "{qrels}", "{run_dup}"], "duplicate"),
    "duplicate judgment": (["eval", "{qrels_dup}", "{run}"], "duplicate"),
    "negative label lightgbm": (["eval", "{qrels_neg}", "{run}", "-c", "lightgbm"], "negative"),
    "fractional label trec_eval": (["eval", "{qrels_frac}", "{run}", "-c", "trec_eval"], "integer"),
    "missing ranking trec_eval10": (["eval", "{qrels}", "{run}", "-c", "trec_eval10"], "302"),
    "query sets differ ranx": (["eval", "{qrels}", "{run}", "-c", "ranx"], "same queries"),
    "empty judgments": (["eval", "{empty}", "{run}"], "empty"),
    "comments only": (["eval", "{comments}", "{run}"], "no data"),
    "empty run": (["eval", "{qrels}", "{empty}"], "empty"),
    "missing file": (["eval", "{qrels}", "/nonexistent/run.txt"], "run.txt"),
    "table without labels": (["eval", "{table_no_label_csv}"], "relevance"),
    "unknown measure": (["eval", "{qrels}", "{run}", "-m", "ndgc@10"], "valid measures"),
    "bad cutoff": (["eval", "{qrels}", "{run}", "-m", "ndcg@0"], "cutoff"),
    "unknown convention": (["eval", "{qrels}", "{run}", "-c", "nope"], "valid conventions"),
    "unknown field": (["eval", "{qrels}", "{run}", "--set", "foo=1"], "valid fields"),
    "bad field value": (["eval", "{qrels}", "{run}", "--set", "ties=random"], "ties"),
    "bad --set syntax": (["eval", "{qrels}", "{run}", "--set", "ties"], "FIELD=VALUE"),
    "explain unknown query": (["explain", "{qrels}", "{run}", "--query", "999"], "999"),
    "explain malformed": (["explain", "{qrels_3_fields}", "{run}", "--query", "301"], "line 4"),
    "explain unknown convention": (["explain", "{qrels}", "{run}", "--query", "301", "--compare", "nope"],
                                   "valid conventions"),
    # usage errors are user errors too
    "explain bad k": (["explain", "{qrels}", "{run}", "--query", "301", "-k", "0"], "-k"),
    "unknown option": (["eval", "{qrels}", "{run}", "--cutoff", "3"], "--cutoff"),
    "directory as judgments": (["eval", "{dir}", "{run}"], "directory"),
    "missing argument": (["eval"], "JUDGMENTS"),
    "bad output format": (["eval", "{qrels}", "{run}", "-f", "xml"], "xml"),
}


def _args(template: list[str], files: dict[str, Path]) -> list[str]:
    names = {k: str(v) for k, v in files.items()}
    names["dir"] = str(files["qrels"].parent)
    return [a.format(**names) if a.startswith("{") else a for a in template]


def _check_one_line(code: int | None, out: str, err: str, expect: str) -> None:
    assert "Traceback" not in err and "Traceback" not in out
    assert code == 2, (code, err)
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert expect.lower() in lines[0].lower(), lines[0]
    assert out == ""


@pytest.mark.parametrize("case", list(CLI_CASES), ids=list(CLI_CASES))
def test_cli_user_error_is_one_line(case, files, capsys):
    template, expect = CLI_CASES[case]
    with pytest.raises(SystemExit) as exc:
        cli_main(_args(template, files))
    captured = capsys.readouterr()
    _check_one_line(exc.value.code, captured.out, captured.err, expect)


@pytest.mark.parametrize("case", ["malformed run", "unknown measure", "empty judgments", "unknown option"])
def test_cli_user_error_through_the_installed_script(case, files):
    template, expect = CLI_CASES[case]
    exe = str(RANKLENS) if RANKLENS.exists() else None
    cmd = [exe] if exe else [sys.executable, "-c", "from ranklens.cli import main; main()"]
    proc = subprocess.run(cmd + _args(template, files), capture_output=True, text=True, timeout=120)
    _check_one_line(proc.returncode, proc.stdout, proc.stderr, expect)


def test_cli_success_still_works(files, capsys):
    """The files above that are valid evaluate fine (the error tests are not vacuous)."""
    with pytest.raises(SystemExit) as exc:
        cli_main(["eval", str(files["qrels"]), str(files["run"]), "-m", "ndcg", "-f", "json"])
    assert exc.value.code in (0, None)
    captured = capsys.readouterr()
    assert captured.err == "" and '"ndcg"' in captured.out


@pytest.mark.parametrize("form", ["pandas", "arrow", "arrow_chunked", "polars_chunked"])
def test_duplicate_items_in_one_table_are_refused(form):
    """One table of (query, item, score, label), item ids kept as Arrow strings: the duplicate is found on
    the hashes, confirmed on the ids, and named; the same item under two queries is not a duplicate."""
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    rows = {"query": ["q", "q", "q", "r", "r", "s", "s"], "item": ["a", "b", "c", "a", "b", "x", "x"],
            "score": [3.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0], "label": [1, 0, 2, 1, 0, 1, 0]}

    def make(d):
        if form == "pandas":
            return pd.DataFrame(d)
        t = pa.table(d)
        if form == "arrow":
            return t
        t = pa.Table.from_batches(t.to_batches(max_chunksize=2))  # the two x of query s in two chunks
        if form == "arrow_chunked":
            return t
        pl = pytest.importorskip("polars")
        df = pl.from_arrow(t)
        return pl.concat([df[i:i + 2] for i in range(0, df.height, 2)], rechunk=False)

    with pytest.raises(InputError, match=r"1 duplicate \(query, item\) rows .*query s item x"):
        ranklens.evaluate(make(rows), None, ["ndcg"])
    ok = dict(rows, item=["a", "b", "c", "a", "b", "x", "y"])
    # by hand, linear gain (trec_eval): q ranks a(1) b(0) c(2): DCG = 1 + 2/log2(4) = 2, ideal 2 + 1/log2(3);
    # r and s are in ideal order
    q = 2 / (2 + 1 / math.log2(3))
    assert ranklens.evaluate(make(ok), None, ["ndcg"], convention="trec_eval")["ndcg"] == pytest.approx((q + 2) / 3)
