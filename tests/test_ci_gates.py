"""CI gates (`eval --fail-under`, `compare --fail-if-worse`: exit 1 with one line each) and progress lines."""

from __future__ import annotations

import io
import math
import subprocess
import sys

import pytest

from ranklens._base import progress as _progress
from ranklens._base.progress import Progress


def d(i: int) -> float:
    return 1.0 / math.log2(i + 1)


# q1: relevant d1 (2) and d3 (1); q2: relevant e1 at rank 2. Hand-computed NDCG@2 (linear gain):
QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 e1 1\nq2 0 e2 0\n"
RUN = "q1 Q0 d1 1 4.0 s\nq1 Q0 d2 2 3.0 s\nq1 Q0 d3 3 2.0 s\nq2 Q0 e2 1 2.0 s\nq2 Q0 e1 2 1.0 s\n"
NDCG2 = ((2 * d(1)) / (2 * d(1) + 1 * d(2)) + d(2) / d(1)) / 2  # = 0.6047...


def cli(*args: str) -> subprocess.CompletedProcess:
    code = "import sys; from ranklens.cli import main; main(sys.argv[1:])"  # as the `ranklens` script runs
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)


@pytest.fixture()
def files(tmp_path):
    q, r = tmp_path / "qrels.txt", tmp_path / "run.txt"
    q.write_text(QRELS)
    r.write_text(RUN)
    return str(q), str(r)


def test_fail_under_passes_and_fails_with_one_line(files):
    q, r = files
    ok = cli("eval", q, r, "-m", "ndcg@2", "--fail-under", f"ndcg@2={NDCG2 - 0.001:.4f}")
    assert ok.returncode == 0, ok.stderr
    bad = cli("eval", q, r, "-m", "ndcg@2", "--fail-under", "ndcg@2=0.70")
    assert bad.returncode == 1
    assert "ndcg@2" in bad.stdout  # the table is still printed
    lines = bad.stderr.strip().splitlines()
    assert lines == [f"ranklens: fail: ndcg@2 = {NDCG2:.4f} is below 0.7 by {0.70 - NDCG2:.4f} (run.txt)"]


def test_fail_under_evaluates_a_measure_not_asked_and_checks_every_gate(files):
    q, r = files
    res = cli("eval", q, r, "-m", "mrr", "--fail-under", "ndcg@2=0.9", "--fail-under", "mrr=0.5", "-f", "json")
    assert res.returncode == 1
    assert '"ndcg@2"' in res.stdout  # added to the evaluation
    # MRR = (1 + 1/2) / 2 = 0.75 passes; only ndcg@2 fails
    assert res.stderr.strip().splitlines() == [f"ranklens: fail: ndcg@2 = {NDCG2:.4f} is below 0.9 by "
                                               f"{0.9 - NDCG2:.4f} (run.txt)"]


@pytest.mark.parametrize("gate", ["ndcg@2", "ndcg@2=high", "=0.5"])
def test_fail_under_usage_errors_exit_2(files, gate):
    q, r = files
    res = cli("eval", q, r, "--fail-under", gate)
    assert res.returncode == 2
    assert len(res.stderr.strip().splitlines()) == 1 and "--fail-under" in res.stderr


def test_fail_under_unknown_measure_exits_2(files):
    q, r = files
    res = cli("eval", q, r, "--fail-under", "nope@3=0.5")
    assert res.returncode == 2 and "unknown measure 'nope@3'" in res.stderr


@pytest.fixture()
def three_runs(tmp_path):
    """12 queries, each with one relevant item a; 'good' ranks it first, 'bad' second, 'same' as good."""
    qrels = "".join(f"q{i} 0 a 1\nq{i} 0 b 0\n" for i in range(12))
    good = "".join(f"q{i} Q0 a 1 2.0 s\nq{i} Q0 b 2 1.0 s\n" for i in range(12))
    bad = "".join(f"q{i} Q0 b 1 2.0 s\nq{i} Q0 a 2 1.0 s\n" for i in range(12))
    paths = {}
    for name, text in (("qrels", qrels), ("good", good), ("bad", bad), ("same", good)):
        p = tmp_path / f"{name}.txt"
        p.write_text(text)
        paths[name] = str(p)
    return paths


def test_fail_if_worse(three_runs):
    p = three_runs
    worse = cli("compare", p["qrels"], p["good"], p["bad"], "-m", "mrr", "--fail-if-worse", "--resamples", "999")
    assert worse.returncode == 1, worse.stderr
    assert "mrr" in worse.stdout
    (line,) = worse.stderr.strip().splitlines()
    # RR 1/2 instead of 1 on all 12 queries: worse by 0.5; every sign flip but none is as extreme
    assert line.startswith("ranklens: fail: bad: mrr is significantly worse than good by 0.5000 (0.5000 vs 1.0000 "
                           "over 12 queries; p = ")
    assert "after holm, randomization test, alpha 0.05)" in line
    better = cli("compare", p["qrels"], p["bad"], p["good"], "-m", "mrr", "--fail-if-worse", "--resamples", "999")
    assert better.returncode == 0, better.stderr
    same = cli("compare", p["qrels"], p["good"], p["same"], "-m", "mrr", "--fail-if-worse", "-t", "t")
    assert same.returncode == 0, same.stderr
    # without the flag a regression is only reported
    assert cli("compare", p["qrels"], p["good"], p["bad"], "-m", "mrr", "--resamples", "999").returncode == 0


def test_no_progress_line_when_stderr_is_not_a_terminal(three_runs):
    p = three_runs
    res = cli("eval", p["qrels"], p["good"], p["bad"])
    assert res.returncode == 0 and res.stderr == ""


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_on_a_terminal_after_the_delay_and_off_with_quiet(monkeypatch):
    monkeypatch.delenv("RANKLENS_PROGRESS", raising=False)
    out = _Tty()
    with Progress(4, "bootstrap", delay=0, stream=out) as p:
        for _ in range(4):
            p.advance()
    assert out.getvalue().endswith("\n") and "ranklens: bootstrap 4/4 (100%)" in out.getvalue()
    late = _Tty()
    with Progress(4, "bootstrap", delay=60, stream=late) as p:  # short work shows nothing
        p.advance(4)
    assert late.getvalue() == ""
    assert Progress(1, "x", delay=0, stream=io.StringIO()).enabled is False  # not a terminal
    monkeypatch.setenv("RANKLENS_PROGRESS", "0")
    assert Progress(1, "x", stream=_Tty()).enabled is False
    monkeypatch.delenv("RANKLENS_PROGRESS")
    from click.testing import CliRunner

    from ranklens.cli import cli as group

    try:
        assert Progress(1, "x", stream=_Tty()).enabled is True
        CliRunner().invoke(group, ["eval", "--quiet", "--help"])
        assert Progress(1, "x", stream=_Tty()).enabled is False
    finally:
        _progress.set_quiet(False)


def test_progress_line_moves_during_one_long_step(monkeypatch):
    monkeypatch.delenv("RANKLENS_PROGRESS", raising=False)
    import time

    out = _Tty()
    with Progress(1, "reading run.txt", delay=0, stream=out):
        time.sleep(1.2)  # one step, no advance: the elapsed time is still redrawn
    assert out.getvalue().count("\r") >= 2 and out.getvalue().endswith("\n")
    assert "ranklens: reading run.txt 0/1 (0%)" in out.getvalue()


@pytest.fixture()
def one_query_worse(three_runs, tmp_path):
    """'dip' is 'good' but for q0, where the relevant item is second: MRR 1 - (1 - 1/2)/12 = 1 - 1/24."""
    text = open(three_runs["good"]).read()
    dip = text.replace("q0 Q0 a 1 2.0 s\nq0 Q0 b 2 1.0 s\n", "q0 Q0 b 1 2.0 s\nq0 Q0 a 2 1.0 s\n")
    assert dip != text
    p = tmp_path / "dip.txt"
    p.write_text(dip)
    return dict(three_runs, dip=str(p))


def test_max_drop_fails_on_size_whatever_the_p_value(one_query_worse):
    p = one_query_worse
    args = ("compare", p["qrels"], p["good"], p["dip"], "-m", "mrr", "--resamples", "999")
    # the drop of 1/24 = 0.0417 is not significant (one query of twelve: p = 1): --fail-if-worse passes ...
    assert cli(*args, "--fail-if-worse").returncode == 0
    # ... and the gate on size fails
    res = cli(*args, "--max-drop", "mrr=0.01")
    assert res.returncode == 1, res.stderr
    assert "mrr" in res.stdout  # the table is still printed
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith(f"ranklens: fail: dip: mrr dropped by {1 / 24:.4f} from good (1.0000 over 12 queries -> "
                           f"{1 - 1 / 24:.4f} over 12), more than the allowed 0.01 (p = 1 after holm)")
    assert cli(*args, "--max-drop", "mrr=0.05").returncode == 0
    # a run better than the baseline never fails; a large significant drop within the allowance passes
    assert cli("compare", p["qrels"], p["dip"], p["good"], "-m", "mrr", "--max-drop", "mrr=0").returncode == 0
    big = cli("compare", p["qrels"], p["good"], p["bad"], "-m", "mrr", "--resamples", "999", "--max-drop", "mrr=0.6",
              "--fail-if-worse")
    assert big.returncode == 1 and "significantly worse" in big.stderr and "dropped" not in big.stderr
    assert cli("compare", p["qrels"], p["good"], p["bad"], "-m", "mrr", "--max-drop", "mrr=0.6").returncode == 0


def test_max_drop_compares_a_measure_not_asked_and_checks_every_gate(one_query_worse):
    p = one_query_worse
    # ndcg@2 of q0 in dip: relevant at rank 2, 1/log2(3); the drop is (1 - 1/log2(3)) / 12
    drop = (1 - 1 / math.log2(3)) / 12
    res = cli("compare", p["qrels"], p["good"], p["dip"], "-m", "mrr", "--max-drop", "ndcg@2=0.02",
              "--max-drop", "mrr=0.05", "-f", "json", "--resamples", "99")
    assert res.returncode == 1, res.stderr
    assert '"ndcg@2"' in res.stdout
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith(f"ranklens: fail: dip: ndcg@2 dropped by {drop:.4f} from good")


@pytest.mark.parametrize("gate, words", [("mrr", "MEASURE=VALUE"), ("mrr=-0.1", "must be >= 0"),
                                         ("mrr=inf", "MEASURE=VALUE"), ("P.5,10=0.1", "names 2 measures"),
                                         ("nope@3=0.1", "unknown measure 'nope@3'")])
def test_max_drop_usage_errors_exit_2(one_query_worse, gate, words):
    p = one_query_worse
    res = cli("compare", p["qrels"], p["good"], p["dip"], "--max-drop", gate)
    assert res.returncode == 2
    assert len(res.stderr.strip().splitlines()) == 1 and words in res.stderr


def test_drops_in_python():
    import ranklens

    qrels = {f"q{i}": {"a": 1, "b": 0} for i in range(12)}
    good = {f"q{i}": {"a": 2.0, "b": 1.0} for i in range(12)}
    dip = dict(good, q0={"a": 1.0, "b": 2.0})
    c = ranklens.compare(qrels, {"good": good, "dip": dip}, ["mrr"], n_resamples=99)
    (row,) = c.drops({"mrr": 0.01})
    assert row["run"] == "dip" and row["drop"] == pytest.approx(1 / 24, abs=1e-15)
    assert c.drops({"mrr": 1 / 24}) == []  # equal to the allowance (up to the rounding of the means): passes
    for bad in ({"mrr": -0.01}, {"mrr": math.nan}, {"mrr": True}, {}, {"ndcg@10": 0.1}, [("mrr", 0.1)]):
        with pytest.raises(ranklens.errors.InvalidParameterError, match="max_drop"):
            c.drops(bad)
