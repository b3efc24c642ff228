"""No traceback for anything a user can type (issue #18, point 3).

Every command-line entry point answers a user's error with exactly one line on stderr and exit status 2,
anything else (a bug) with one "internal error" line and status 70, the traceback only with ``--debug`` or
``RANKLENS_DEBUG=1``. A few hundred typed values go through the options of ``eval``, ``compare``,
``explain``, ``conventions``, ``report``, ``serve`` and ``monitor``; the values the issue lists are refused
(status 2), and the inputs that have an answer give the number computed by hand. The scikit-learn drop-ins
raise the exception type (and message) scikit-learn 1.9 raises for the same input, checked against
scikit-learn itself.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ranklens
from ranklens.cli import main
from ranklens.errors import InvalidParameterError, describe
from ranklens.measures import parse_measure

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 e1 1\nq2 0 e2 0\n"
RUN = "q1 Q0 d1 1 4.0 s\nq1 Q0 d2 2 3.0 s\nq1 Q0 d3 3 2.0 s\nq2 Q0 e2 1 2.0 s\nq2 Q0 e1 2 1.0 s\n"
RUN2 = "q1 Q0 d1 1 4.0 t\nq1 Q0 d3 2 3.0 t\nq1 Q0 d2 3 2.0 t\nq2 Q0 e1 1 2.0 t\nq2 Q0 e2 2 1.0 t\n"
BIG = "q1 0 d1 2000\nq1 0 d2 0\nq1 0 d3 1\n"  # a label of 1024 or more

# by hand, linear gain, discount 1/log2(rank + 1), ideal from the judgments:
# q1 ranks labels 2, 0, 1: DCG = 2 + 1/log2(4) = 2.5, ideal 2 + 1/log2(3); q2 ranks 0, 1: DCG = 1/log2(3), ideal 1
NDCG_Q1 = 2.5 / (2 + 1 / math.log2(3))
NDCG_Q2 = 1 / math.log2(3)
NDCG_BIG = (2000 + 1 / math.log2(4)) / (2000 + 1 / math.log2(3))


@pytest.fixture()
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, text in (("qrels", QRELS), ("run", RUN), ("run2", RUN2), ("big", BIG)):
        (tmp_path / name).write_text(text)
    (tmp_path / "folder").mkdir()
    os.symlink(tmp_path / "loop_a", tmp_path / "loop_b")
    os.symlink(tmp_path / "loop_b", tmp_path / "loop_a")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RANKLENS_DEBUG", raising=False)
    return tmp_path


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``ranklens ARGS`` in this process: (exit status, stdout, stderr)."""
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line_error(code: int, err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2, f"exit {code}: {err!r}"
    assert len(lines) == 1, err
    assert lines[0].startswith("ranklens: error: "), err
    return lines[0]


def clean(code: int, err: str) -> None:
    """A number (exit 0) or one line and exit 2; never a traceback, never an internal error."""
    assert "Traceback" not in err, err
    assert "internal error" not in err, err
    if code != 0:
        one_line_error(code, err)


# --- the causes the issue lists: refused in one line ---------------------------------------------------------

REFUSED = {
    "huge cutoff": (["eval", "qrels", "run", "-m", "ndcg@99999999999999999999"], "cutoff"),
    "unicode digits in a measure": (["eval", "qrels", "run", "-m", "ndcg@１０"], "ASCII"),
    "fullwidth digits in P.k": (["eval", "qrels", "run", "-m", "P.５"], "ASCII"),
    "rel=nan": (["eval", "qrels", "run", "-m", "recall@100(rel=nan)"], "finite"),
    "rel=inf": (["eval", "qrels", "run", "-m", "P@5(rel=inf)"], "finite"),
    "rel=1e400": (["eval", "qrels", "run", "-m", "P@5(rel=1e400)"], "finite"),
    "rel in unicode digits": (["eval", "qrels", "run", "-m", "P@5(rel=２)"], "finite"),
    "--set relevance_level=abc": (["eval", "qrels", "run", "--set", "relevance_level=abc"], "relevance_level"),
    "--set relevance_level=nan": (["eval", "qrels", "run", "--set", "relevance_level=nan"], "relevance_level"),
    "--set log_base=inf": (["eval", "qrels", "run", "--set", "log_base=inf"], "log_base"),
    "--set default_cutoff=abc": (["eval", "qrels", "run", "--set", "default_cutoff=abc"], "default_cutoff"),
    "--set default_cutoff in unicode": (["eval", "qrels", "run", "--set", "default_cutoff=１０"], "default_cutoff"),
    "--set round_per_query=400": (["eval", "qrels", "run", "--set", "round_per_query=400"], "round_per_query"),
    "--set min_items=-1": (["eval", "qrels", "run", "--set", "min_items=-1"], "min_items"),
    "--set clamp_mean=3": (["eval", "qrels", "run", "--set", "clamp_mean=3"], "clamp_mean"),
    "--set gain map of text": (["eval", "qrels", "run", "--set", "gain=0:0,1:abc"], "gain"),
    "--set gain map of nan": (["eval", "qrels", "run", "--set", "gain=0:0,1:nan"], "gain"),
    "--set without a field": (["eval", "qrels", "run", "--set", "=3"], "FIELD=VALUE"),
    "compare --digits -1": (["compare", "qrels", "run", "run2", "--digits", "-1"], "--digits"),
    "compare --resamples 1e13": (["compare", "qrels", "run", "run2", "--resamples", "1e13"], "--resamples"),
    "compare --resamples 10**13": (["compare", "qrels", "run", "run2", "--resamples", "10000000000000"],
                                   "n_resamples"),
    "compare --alpha nan": (["compare", "qrels", "run", "run2", "--alpha", "nan"], "--alpha"),
    "compare --confidence inf": (["compare", "qrels", "run", "run2", "--confidence", "inf"], "--confidence"),
    "compare --seed in unicode": (["compare", "qrels", "run", "run2", "--seed", "１"], "ASCII"),
    "eval --digits in unicode": (["eval", "qrels", "run", "--digits", "１０"], "ASCII"),
    "explain -k -1": (["explain", "qrels", "run", "-Q", "q1", "-k", "-1"], "-k"),
    "explain -k in unicode": (["explain", "qrels", "run", "-Q", "q1", "-k", "２"], "ASCII"),
    "--threads 0": (["--threads", "0", "eval", "qrels", "run"], "--threads"),
    "ERR with a label of 2000": (["eval", "big", "run", "-m", "err@10"], "ERR"),
    "exponential gain of 2000": (["eval", "big", "run", "--set", "gain=exponential"], "exponential"),
    "a symlink loop": (["eval", "loop_a", "run"], "symbolic links"),
    "a directory as the run": (["eval", "qrels", "folder"], "folder"),
    "a missing file": (["eval", "qrels", "no_such_run"], "no_such_run"),
    "an unknown command": (["evaluate", "qrels", "run"], "evaluate"),
    "an unknown option": (["eval", "qrels", "run", "--bogus"], "--bogus"),
    "--output without spark": (["eval", "qrels", "run", "--output", ""], "--engine spark"),
    "monitor --wait nan": (["monitor", "info", "--store", "none.duckdb", "--wait", "nan"], "--wait"),
    "monitor -k in unicode": (["monitor", "report", "--store", "none.duckdb", "-k", "１０"], "ASCII"),
    "report --top in unicode": (["report", "qrels", "run", "--top", "３"], "ASCII"),
    "serve --port 70000": (["serve", "--port", "70000"], "--port"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_issue_cases_are_refused_in_one_line(case, here, capsys):
    args, word = REFUSED[case]
    code, _, err = cli(args, capsys)
    line = one_line_error(code, err)
    assert word in line, line


def test_a_usage_error_of_a_monitor_command_names_its_help(here, capsys):
    code, _, err = cli(["monitor", "report", "--wait", "nan"], capsys)
    assert "'ranklens monitor report --help'" in one_line_error(code, err)


# --- inputs that have an answer: the number, by hand ---------------------------------------------------------

def test_a_label_of_2000_evaluates_under_the_default_convention(here, capsys):
    """2**2000 overflows a double: it was computed for ERR even when no ERR was asked."""
    code, out, err = cli(["eval", "big", "run", "-m", "ndcg", "-f", "json"], capsys)
    assert code == 0, err
    import json

    assert json.loads(out)["aggregate"]["ndcg"] == pytest.approx(NDCG_BIG, abs=1e-15)


def test_the_largest_cutoff_is_the_whole_list(here, capsys):
    import json

    code, out, err = cli(["eval", "qrels", "run", "-m", "ndcg@9223372036854775807", "-f", "json"], capsys)
    assert code == 0, err
    assert json.loads(out)["aggregate"]["ndcg@9223372036854775807"] == pytest.approx((NDCG_Q1 + NDCG_Q2) / 2,
                                                                                     abs=1e-15)


def test_err_with_small_grades_is_unchanged(here, capsys):
    """ERR@3 of q1 (labels 2, 0, 1; max grade 2): R = (2**g - 1) / 4, ERR = sum R_r prod(1 - R_i) / r."""
    import json

    r1, r3 = 3 / 4, 1 / 4
    err_q1 = r1 + (1 - r1) * r3 / 3
    r2 = 1 / 4  # q2: labels 0, 1 under the query set's max grade 2
    err_q2 = r2 / 2
    code, out, err = cli(["eval", "qrels", "run", "-m", "err@3", "-f", "json", "-q"], capsys)
    assert code == 0, err
    per_query = json.loads(out)["per_query"]
    assert per_query["q1"]["err@3"] == pytest.approx(err_q1, abs=1e-15)
    assert per_query["q2"]["err@3"] == pytest.approx(err_q2, abs=1e-15)


def test_gain_map_and_numbers_through_set(here, capsys):
    """--set gain=0:0,1:1,2:3 (trec_eval's gain table): q1 DCG = 3 + 1/2, ideal 3 + 1/log2(3)."""
    import json

    code, out, err = cli(["eval", "qrels", "run", "-m", "ndcg", "--set", "gain=0:0,1:1,2:3", "-f", "json", "-q"],
                         capsys)
    assert code == 0, err
    assert json.loads(out)["per_query"]["q1"]["ndcg"] == pytest.approx(3.5 / (3 + 1 / math.log2(3)), abs=1e-15)


# --- a few hundred typed values through every option: a number or one line -----------------------------------

TYPED = ["-1", "0", "1", "2", "1e13", "10000000000000", "nan", "inf", "-inf", "", " ", "１０", "abc",
         "99999999999999999999", "-99999999999999999999", "0.5", "é", "1,2", "=", "@", "ndcg@10", "/", "folder",
         "missing.txt", "loop_a", "q1", "a=b", "ndcg@10=nan", "x" * 300]

OPTIONS = {
    "eval": (["eval", "qrels", "run"], ["-m", "-c", "--set", "-f", "--digits", "--fail-under", "--partitions",
                                        "--judgments-format", "--run-format", "--groups"]),
    "compare": (["compare", "qrels", "run", "run2", "--resamples", "20", "--ci", "t"],
                ["--resamples", "--seed", "--alpha", "--confidence", "--digits", "-b", "-t", "--correction", "-m"]),
    "explain": (["explain", "qrels", "run", "-Q", "q1"], ["-Q", "-k", "-m", "--compare", "-c"]),
    "conventions": (["conventions"], ["-f"]),
}
TYPED_CASES = [(cmd, opt, value) for cmd, (_, opts) in OPTIONS.items() for opt in opts for value in TYPED]
NUMERIC = {"--digits", "--partitions", "--resamples", "--seed", "--alpha", "--confidence", "-k"}
NOT_A_NUMBER = {"nan", "inf", "-inf", "", " ", "１０", "abc", "é", "1,2", "=", "@"}


@pytest.mark.parametrize(("cmd", "opt", "value"), TYPED_CASES)
def test_typed_values_give_a_number_or_one_line(cmd, opt, value, here, capsys):
    base, _ = OPTIONS[cmd]
    code, _, err = cli(base + [opt, value], capsys)
    clean(code, err)
    if opt in NUMERIC and value in NOT_A_NUMBER:
        one_line_error(code, err)


@pytest.mark.parametrize("value", TYPED)
def test_typed_values_as_files_and_commands(value, here, capsys):
    for args in (["eval", value, "run"], ["eval", "qrels", value], ["compare", "qrels", "run", value],
                 ["conventions", value], [value], ["--threads", value, "conventions"]):
        code, _, err = cli(args, capsys)
        clean(code, err)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A monitoring store of 2 simulated days (made through the command line itself)."""
    root = tmp_path_factory.mktemp("monitor")
    with pytest.raises(SystemExit) as done:
        main(["monitor", "simulate", str(root / "sim"), "--days", "2", "--groups-per-day", "20", "--format", "csv"])
    assert done.value.code in (0, None)
    events = sorted(str(p) for p in (root / "sim").glob("events-*.csv"))
    with pytest.raises(SystemExit) as done:
        main(["monitor", "ingest", *events, "--store", str(root / "st.duckdb")])
    assert done.value.code in (0, None)
    return root / "st.duckdb"


MONITOR_OPTIONS = {
    "report": ["-m", "-k", "--window", "--by", "--where", "--start", "--end", "--ci", "--resamples", "--wait"],
    "slices": ["-m", "--start", "--baseline", "--limit", "--where"],
    "groups": ["-m", "--limit", "--where", "--start"],
    "check": ["--at", "--start", "--webhook"],
}
MONITOR_TYPED = ["-1", "0", "99999999999999999999", "nan", "inf", "", "１０", "abc", "=", "a=b", "2026-13-45",
                 "2026-10-01", "ndcg@１０", "recall@100(rel=nan)", "country=BR", "7d", "0d"]
MONITOR_CASES = [(cmd, opt, v) for cmd, opts in MONITOR_OPTIONS.items() for opt in opts for v in MONITOR_TYPED]


@pytest.mark.parametrize(("cmd", "opt", "value"), MONITOR_CASES)
def test_monitor_typed_values_give_a_table_or_one_line(cmd, opt, value, store, capsys):
    code, _, err = cli(["monitor", cmd, "--store", str(store), opt, value], capsys)
    assert "Traceback" not in err and "internal error" not in err, err
    if code not in (0, 1) or cmd != "check":  # `check` exits 1 for an alert, as a CI gate
        clean(code, err)


@pytest.mark.parametrize(("opt", "value"), [("--days", "99999999999999999999"), ("--days", "0"),
                                            ("--groups-per-day", "99999999999999999999"),
                                            ("--items", "2-99999999999999999999"), ("--items", "5-1"),
                                            ("--training-groups", "99999999999999999999"),
                                            ("--validation-groups", "-1"), ("--late-fraction", "nan"),
                                            ("--seed", "１"), ("--start", "2026-02-30")])
def test_monitor_simulate_refuses_sizes_it_cannot_hold(opt, value, tmp_path, capsys):
    code, _, err = cli(["monitor", "simulate", str(tmp_path / "sim"), "--days", "1", "--groups-per-day", "5", opt,
                        value], capsys)
    one_line_error(code, err)


# --- anything else: an internal error in one line, the traceback on demand ------------------------------------

def _broken_evaluate(*args, **kwargs):
    raise ZeroDivisionError("planted failure")


def test_an_unexpected_exception_is_one_internal_error_line(here, capsys, monkeypatch):
    monkeypatch.setattr(sys.modules["ranklens._core.evaluate"], "evaluate", _broken_evaluate)
    code, out, err = cli(["eval", "qrels", "run"], capsys)
    assert code == 70 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ranklens: internal error: ZeroDivisionError: planted failure"), err
    assert "--debug" in lines[0] and "RANKLENS_DEBUG=1" in lines[0]


@pytest.mark.parametrize("how", ["--debug", "RANKLENS_DEBUG=1"])
def test_debug_prints_the_traceback(how, here, capsys, monkeypatch):
    monkeypatch.setattr(sys.modules["ranklens._core.evaluate"], "evaluate", _broken_evaluate)
    args = ["eval", "qrels", "run"]
    if how == "--debug":
        args = ["--debug", *args]
    else:
        monkeypatch.setenv("RANKLENS_DEBUG", "1")
    code, _, err = cli(args, capsys)
    assert code == 70
    assert err.startswith("Traceback (most recent call last):"), err
    assert "_broken_evaluate" in err and "ZeroDivisionError: planted failure" in err
    assert err.splitlines()[-1].startswith("ranklens: internal error: ZeroDivisionError"), err


def test_debug_also_shows_the_traceback_of_a_user_error(here, capsys):
    code, _, err = cli(["--debug", "eval", "qrels", "run", "-m", "ndcg@１０"], capsys)
    assert code == 2
    assert "Traceback" in err and err.splitlines()[-1].startswith("ranklens: error: measure 'ndcg@１０'")


def test_debug_is_off_again_in_the_next_command(here, capsys, monkeypatch):
    cli(["--debug", "conventions"], capsys)
    monkeypatch.setattr(sys.modules["ranklens._core.evaluate"], "evaluate", _broken_evaluate)
    code, _, err = cli(["eval", "qrels", "run"], capsys)
    assert code == 70 and "Traceback" not in err


@pytest.mark.parametrize("args", [["eval", "qrels", "run\x00x"], ["eval", "qrels\x00", "run"],
                                  ["eval", "qrels", "run", "--groups", "g\x00"]])
def test_a_nul_byte_in_a_path_is_one_line(args, here, capsys):
    code, _, err = cli(args, capsys)
    assert "NUL byte" in one_line_error(code, err)


def test_an_interrupt_is_one_line_and_status_130(here, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(sys.modules["ranklens._core.evaluate"], "evaluate", interrupted)
    code, _, err = cli(["eval", "qrels", "run"], capsys)
    assert code == 130 and err == "ranklens: error: interrupted\n"


PLANTED = (
    "import sys, ranklens.evaluate\n"
    "def boom(*a, **k):\n"
    "    raise RuntimeError('planted')\n"
    "sys.modules['ranklens._core.evaluate'].evaluate = boom\n"
    "from ranklens.cli import main\n"
    "main()\n"
)


@pytest.mark.parametrize(("script", "args", "code", "start"), [
    ("from ranklens.cli import main; main()", ["eval", "loop_a", "run"], 2, "ranklens: error: loop_a: "),
    ("from ranklens.cli import main; main()", ["eval", "qrels", "run", "-m", "ndcg@99999999999999999999"], 2,
     "ranklens: error: measure"),
    (PLANTED, ["eval", "qrels", "run"], 70, "ranklens: internal error: RuntimeError: planted"),
])
def test_in_a_real_process(script, args, code, start, here):
    env = {**os.environ, "PYTHONPATH": str(Path(ranklens.__file__).parents[1])}
    env.pop("RANKLENS_DEBUG", None)
    proc = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120,
                          env=env, cwd=here)
    assert proc.returncode == code, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(start), proc.stderr


@pytest.mark.parametrize(("exc", "code"), [
    (FileNotFoundError(2, "No such file or directory", "a.txt"), 2),
    (PermissionError(13, "Permission denied", "a.txt"), 2),
    (IsADirectoryError(21, "Is a directory", "runs"), 2),
    (NotADirectoryError(20, "Not a directory", "a.txt/b"), 2),
    (OSError(40, "Too many levels of symbolic links", "loop"), 2),
    (InvalidParameterError("bad"), 2),
    (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"), 2),
    (MemoryError(), 71),
    (OSError(28, "No space left on device", "out.json"), 71),
    (ValueError("x"), 70),
    (RecursionError("deep"), 70),
    (ValueError("embedded null byte"), 2),
])
def test_describe_sorts_user_errors_from_bugs(exc, code):
    message, status = describe(exc)
    assert status == code
    assert message and "\n" not in message
    if code == 70:
        assert message.startswith("internal error: ")


# --- the API: the same refusals -----------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["ndcg@１０", "P.５", "ndcg@٣", "recall@100(rel=nan)", "recall@100(rel=-inf)",
                                  "P@5(rel=1e999)", "P@5(rel=)", "ndcg@99999999999999999999", "ndcg@0",
                                  "map@9223372036854775808", "ndcg@10(gain=nan)", ""])
def test_parse_measure_refuses(text):
    with pytest.raises(InvalidParameterError):
        parse_measure(text)


def test_parse_measure_keeps_ascii_numbers():
    (m,) = parse_measure("recall@100(rel=2.5)")
    assert (m.k, m.relevance_level) == (100, 2.5)
    (m,) = parse_measure("ndcg@9223372036854775807")
    assert m.k == 2**63 - 1


@pytest.mark.parametrize(("field", "value"), [
    ("relevance_level", float("nan")), ("relevance_level", "abc"), ("relevance_level", True),
    ("gain_threshold", float("inf")), ("max_label", float("nan")), ("err_max_grade", "4"),
    ("log_base", float("inf")), ("log_base", "2"), ("default_cutoff", 2.5), ("default_cutoff", "10"),
    ("round_per_query", -1), ("round_per_query", 18), ("min_items", None), ("max_items", 0),
    ("clamp_mean", "yes"), ("gain", {0: 0, 1: float("nan")}), ("gain", {"a": 1}),
])
def test_evaluate_refuses_a_convention_field_that_is_not_a_number(field, value):
    with pytest.raises(InvalidParameterError, match=field):
        ranklens.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"a": 2.0, "b": 1.0}}, ["ndcg"], **{field: value})


@pytest.mark.parametrize("value", [0, -1, -10**30])
def test_err_max_grade_must_be_positive(value):
    with pytest.raises(InvalidParameterError, match="err_max_grade"):
        ranklens.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"a": 2.0, "b": 1.0}}, ["err"], err_max_grade=value)


def _id(value):
    """A test id that is the same in every process (``make test`` collects on two): not an object's address."""
    return "object()" if type(value) is object else repr(value)


@pytest.mark.parametrize("metrics", [None, 3, 2.5, float("nan"), True, np.int64(3), object()], ids=_id)
def test_measures_that_are_not_measures(metrics):
    with pytest.raises(InvalidParameterError, match="`measures`"):
        ranklens.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"a": 2.0, "b": 1.0}}, metrics)


@pytest.mark.parametrize("weights", ["abc", "", b"x", [1, "a"], {"q": "x", "r": 1}, [[1, 2], [1]], object()],
                         ids=_id)
def test_weights_that_are_not_numbers(weights):
    with pytest.raises(InvalidParameterError, match="weights"):
        ranklens.evaluate({"q": {"a": 1}, "r": {"a": 1}}, {"q": {"a": 1.0}, "r": {"a": 1.0}}, ["ndcg"],
                          weights=weights)


def test_numpy_integers_stay_valid_convention_fields():
    res = ranklens.evaluate({"q": {"a": 1, "b": 0, "c": 1}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, ["ndcg"],
                            default_cutoff=np.int64(2), relevance_level=np.float32(1.0))
    assert res.aggregate["ndcg"] == pytest.approx(1 / (1 + 1 / math.log2(3)), abs=1e-15)


@pytest.mark.parametrize("n", [0, -1, 10**13, 10**7 + 1, 2.5, True, "100"])
def test_compare_refuses_resamples_it_cannot_hold(n):
    qrels = {"q": {"a": 1, "b": 0}}
    with pytest.raises(InvalidParameterError, match="n_resamples"):
        ranklens.compare(qrels, {"x": {"q": {"a": 2.0, "b": 1.0}}, "y": {"q": {"a": 1.0, "b": 2.0}}}, ["ndcg"],
                         n_resamples=n)


def test_a_label_of_2000_through_the_api():
    res = ranklens.evaluate({"q": {"a": 2000, "b": 0, "c": 1}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}},
                            ["ndcg", "dcg", "map"])
    assert res.aggregate["ndcg"] == pytest.approx(NDCG_BIG, abs=1e-15)
    assert res.aggregate["dcg"] == pytest.approx(2000.5, abs=1e-12)
    with pytest.raises(InvalidParameterError, match="ERR"):
        ranklens.evaluate({"q": {"a": 2000, "b": 0}}, {"q": {"a": 3.0, "b": 2.0}}, ["err"])
    with pytest.raises(InvalidParameterError, match="ERR"):
        ranklens.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"a": 3.0, "b": 2.0}}, ["err"], err_max_grade=1024)


# --- the scikit-learn drop-ins raise what scikit-learn raises ------------------------------------------------

def _sparse_inputs():
    import scipy.sparse as sp

    good = np.array([[3, 2, 0, 1], [0, 1, 2, 0]])
    return [sp.csr_matrix(good), sp.csr_array(good), sp.coo_matrix(good), sp.lil_array(good)]


GOOD = np.array([[3, 2, 0, 1], [0, 1, 2, 0]])
SCORE = np.array([[0.1, 0.4, 0.3, 0.2], [0.5, 0.5, 0.2, 0.1]])
Y_INPUTS = {
    "list": GOOD.tolist(), "matrix": np.asarray(GOOD).view(np.matrix), "int": 3, "str": "abc", "None": None,
    "one": [[1]],
    "empty": [], "zero rows": np.zeros((0, 3)), "nan": np.array([[np.nan, 1, 2, 0], [0, 1, 2, 0]]),
    "inf": np.array([[np.inf, 1, 2, 0], [0, 1, 2, 0]]), "ragged": [[1, 2], [1]], "3d": np.ones((2, 4, 1)),
    "text": np.array([["a", "b", "c", "d"]]), "complex": np.array([[1j, 1, 1, 1]]),
    "negative": [[-1, 2, 0, 1], [0, 1, 2, 0]], "bool 1d": np.array([True, False]),
    "bool": np.array([[True, False, True, False], [False, True, True, False]]), "1d": [1, 2, 3, 4],
    "dict": {"a": 1}, "0d": np.array(5), "fractional": [[0.5, 1.5, 2.0, 0.0], [1.0, 1.0, 0.0, 0.0]],
    "huge": np.array([[1e308, 1e308, 0, 1], [0, 1, 2, 0]]), "objects": np.array([[1, 2, 3, 4]], dtype=object),
    "2000": np.array([[2000, 0, 1, 0], [0, 1, 2, 0]]), "one column": [[1], [0]],
}
KEYWORDS = {
    "k=0": {"k": 0}, "k=-1": {"k": -1}, "k=2.0": {"k": 2.0}, "k='3'": {"k": "3"}, "k=10**30": {"k": 10**30},
    "k=True": {"k": True}, "k=int64": {"k": np.int64(2)}, "k=nan": {"k": float("nan")}, "k=5": {"k": 5},
    "w=[1]": {"sample_weight": [1]}, "w='x'": {"sample_weight": "x"}, "w=nan": {"sample_weight": [np.nan, 1]},
    "w=zeros": {"sample_weight": [0, 0]}, "w=negative": {"sample_weight": [-1, 2]}, "w=3": {"sample_weight": 3},
    "w=2d": {"sample_weight": [[1, 1]]}, "ties=1": {"ignore_ties": 1}, "ties=None": {"ignore_ties": None},
    "ties=np.bool": {"ignore_ties": np.bool_(True)}, "ties='yes'": {"ignore_ties": "yes"},
}
LOG_BASES = [2, 0, -1, 1, float("nan"), float("inf"), "2", None, 1e-300, True, 1e308]


def _outcome(f, *args, **kwargs):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ("value", f(*args, **kwargs))
        except Exception as exc:  # the outcome of the peer and ours, compared below
            return ("error", exc)


def _same_outcome(ours, theirs):
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "value":
        a, b = ours[1], theirs[1]
        assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12, abs=1e-12)
        return
    a, b = ours[1], theirs[1]
    # `except ValueError` / `except TypeError` written for scikit-learn catch ours the same way
    assert (isinstance(a, ValueError), isinstance(a, TypeError)) == (isinstance(b, ValueError),
                                                                      isinstance(b, TypeError)), (a, b)
    assert str(a) == str(b)


def _pairs():
    from sklearn.metrics import dcg_score as sk_dcg
    from sklearn.metrics import ndcg_score as sk_ndcg

    from ranklens.sklearn import dcg_score, ndcg_score

    return [(ndcg_score, sk_ndcg), (dcg_score, sk_dcg)]


@pytest.mark.parametrize("name", sorted(Y_INPUTS))
def test_sklearn_dropins_raise_what_sklearn_raises_for_inputs(name):
    y = Y_INPUTS[name]
    for ours, theirs in _pairs():
        for score in (SCORE, y):
            _same_outcome(_outcome(ours, y, score), _outcome(theirs, y, score))


@pytest.mark.parametrize("index", range(4))
def test_sklearn_dropins_refuse_sparse_input_as_sklearn_does(index):
    """scikit-learn's InvalidParameterError (a ValueError and a TypeError), not a bare TypeError."""
    sparse = _sparse_inputs()[index]
    for ours, theirs in _pairs():
        for args in ((sparse, SCORE), (GOOD, sparse), (sparse, sparse)):
            mine, peer = _outcome(ours, *args), _outcome(theirs, *args)
            _same_outcome(mine, peer)
            assert isinstance(mine[1], ValueError)
        weights = type(sparse)(np.array([[1.0, 2.0]]))
        _same_outcome(_outcome(ours, GOOD, SCORE, sample_weight=weights),
                      _outcome(theirs, GOOD, SCORE, sample_weight=weights))


@pytest.mark.parametrize("name", sorted(KEYWORDS))
def test_sklearn_dropins_raise_what_sklearn_raises_for_keywords(name):
    for ours, theirs in _pairs():
        _same_outcome(_outcome(ours, GOOD, SCORE, **KEYWORDS[name]), _outcome(theirs, GOOD, SCORE, **KEYWORDS[name]))


@pytest.mark.parametrize("log_base", LOG_BASES, ids=repr)
def test_dcg_score_log_base_as_sklearn(log_base):
    (_, _), (ours, theirs) = _pairs()
    _same_outcome(_outcome(ours, GOOD, SCORE, log_base=log_base), _outcome(theirs, GOOD, SCORE, log_base=log_base))


PAIRS = {
    "None in the scores": ([[1, 0, 2]], [[1, None, 2]]),
    "text in the scores": ([[1, 0, 2]], [[1, "2", 3]]),
    "None in the labels": ([[1, None, 2]], [[0.1, 0.2, 0.3]]),
    "NaN in object labels": (np.array([[1, np.nan, 2]], dtype=object), [[0.1, 0.2, 0.3]]),
    "boolean scores": (GOOD, SCORE > 0.25),
    "one boolean score": ([[2, 3]], [[False]]),
    "more score columns": (GOOD[:, :3], SCORE),
    "fewer score rows": (GOOD, SCORE[:1]),
    "fewer score columns": (GOOD, SCORE[:, :2]),
    "small integer scores": (GOOD, np.array([[1, 1, 0, 1], [2, 2, 2, 0]], dtype=np.int8)),
    "object scores of numbers": (GOOD, SCORE.astype(object)),
}


@pytest.mark.parametrize("keywords", [{}, {"k": 2}, {"ignore_ties": True}], ids=repr)
@pytest.mark.parametrize("name", sorted(PAIRS))
def test_sklearn_dropins_raise_what_sklearn_raises_for_pairs(name, keywords):
    y_true, y_score = PAIRS[name]
    for ours, theirs in _pairs():
        _same_outcome(_outcome(ours, y_true, y_score, **keywords), _outcome(theirs, y_true, y_score, **keywords))

