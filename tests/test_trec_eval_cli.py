"""``ranklens trec_eval``: trec_eval's command lines, compared byte for byte with trec_eval's own output.

1. trec_eval 10.0's ``test/`` expected outputs (tests/data/trec_eval, command lines in its SOURCE.md): for
   every measure of each file, the same command line asking that one measure (with the file's parameters and
   flags) either prints exactly that measure's lines of the file, or is refused with the measure's name;
   when every measure of a file is computed, the file's own command line prints the whole file. Nothing is
   skipped: a refused measure must also make the full command line fail, naming it.
2. Random runs (ties, missing topics, -M, -l, -c, -J, -n, -q), odd parameters, edges and misuse against the
   trec_eval C program (10.0, built from https://github.com/usnistgov/trec_eval with ``make``): run when
   ``TREC_EVAL_BIN`` names it (and then checked against the record), else its answers as recorded from it in
   tests/data/trec_eval/program-answers.json.gz (``trec_eval_program``; SOURCE.md says how). Never skipped: an
   answer neither run nor recorded fails the test.
3. Misuse: one line on stderr, exit status 2, nothing on stdout.
"""

from __future__ import annotations

import ctypes
import functools
import gzip
import hashlib
import io
import json
import math
import os
import platform
import re
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ranklens.cli import main as ranklens_main
from ranklens.trec_eval_cli import run

ROOT = Path(__file__).resolve().parents[1]
TE = ROOT / "tests" / "data" / "trec_eval"

# trec_eval's measure names (its measures.c), to tell which measure a printed line belongs to
ROOTS = (
    "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P relstring recall "
    "infAP gm_bpref Rprec_mult utility 11pt_avg binG G ndcg ndcg_rel Rndcg ndcg_cut map_cut relative_P success "
    "set_P set_relative_P set_recall set_map set_F num_nonrel_judged_ret rbp rbp_resid unj"
).split()

# the measures ranklens computes today as trec_eval does; the list may grow (every other measure is compared
# too as soon as it is computed), never shrink
COMPUTED = ("runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P relstring "
            "recall infAP gm_bpref Rprec_mult utility 11pt_avg binG G ndcg ndcg_rel Rndcg ndcg_cut map_cut relative_P "
            "success set_P set_relative_P set_recall set_map set_F num_nonrel_judged_ret rbp rbp_resid unj").split()

# expected output -> trec_eval's arguments (tests/data/trec_eval/SOURCE.md, trec_eval's Makefile quicktest)
CASES = {
    "out.test": ["qrels.test", "results.test"],
    "out.comment.test": ["qrels.comment.test.gz", "results.comment.test.gz"],
    "out.test.a": ["-m", "all_trec", "qrels.test", "results.test"],
    "out.test.aq": ["-m", "all_trec", "-q", "qrels.test", "results.test"],
    "out.test.aqc": ["-m", "all_trec", "-q", "-c", "qrels.test", "results.trunc"],
    "out.test.aqcM": ["-m", "all_trec", "-q", "-c", "-M100", "qrels.test", "results.trunc"],
    "out.test.aql": ["-m", "all_trec", "-mrelstring.20", "-q", "-l2", "qrels.rel_level", "results.test"],
    "out.test.meas_params": ["-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000",
                             "-m", "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75",
                             "-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20",
                             "qrels.test", "results.test"],
}


# the trec_eval C program's answers: (exit status, stdout) for a command line whose files are named by content
PROGRAM_ANSWERS = TE / "program-answers.json.gz"


@functools.cache
def _recorded() -> dict[str, list]:
    if not PROGRAM_ANSWERS.exists():
        return {}
    with gzip.open(PROGRAM_ANSWERS, "rt", encoding="utf-8") as f:
        return dict(json.load(f))


def trec_eval_program(args: list[str]) -> tuple[int, str]:
    """The trec_eval C program's (exit status, stdout) for ``trec_eval ARGS``.

    Run when ``TREC_EVAL_BIN`` names the program, and then checked against the record (a command line missing
    from it fails: the record stays complete); with ``TREC_EVAL_RECORD=1`` too, written into the record
    instead. Without the program, read from the record; a command line missing from it fails the test. Files
    are named in the record by the SHA-256 of their bytes, so temporary paths do not matter and a test whose
    inputs change no longer finds its answer.
    """
    key = json.dumps([f"sha256:{hashlib.sha256(Path(a).read_bytes()).hexdigest()}" if Path(a).is_file() else a
                      for a in args], ensure_ascii=False)
    answers = _recorded()
    binary = os.environ.get("TREC_EVAL_BIN")
    if not binary:
        assert key in answers, (f"trec_eval's answer to {args} is not recorded in {PROGRAM_ANSWERS.name}: run this "
                                "test with TREC_EVAL_BIN naming trec_eval 10.0 and TREC_EVAL_RECORD=1")
        return answers[key][0], answers[key][1]
    res = subprocess.run([binary, *args], capture_output=True, text=True, errors="surrogateescape")
    got = [res.returncode, res.stdout]
    if os.environ.get("TREC_EVAL_RECORD"):
        answers[key] = got
        with gzip.GzipFile(PROGRAM_ANSWERS, "wb", mtime=0) as f:
            f.write(json.dumps(answers, sort_keys=True, ensure_ascii=False, indent=0).encode())
    else:
        assert answers.get(key) == got, f"{PROGRAM_ANSWERS.name} does not hold what {binary} prints for {args}"
    return res.returncode, res.stdout


def root_of(name: str) -> str:
    """The trec_eval measure a printed name belongs to: ``P_5`` -> P, ``ndcg_cut_10`` -> ndcg_cut,
    ``ndcg_1=3,2=9,4=4.5`` -> ndcg, ``iprec_at_recall_0.10`` -> iprec_at_recall."""
    if name in ROOTS:
        return name
    roots = [r for r in ROOTS if name.startswith(r + "_") and not name[len(r) + 1].isalpha()]
    assert len(roots) == 1, name
    return roots[0]


def split_args(args: list[str]) -> tuple[list[str], dict[str, str], list[str]]:
    """(flags other than -m, measure -> its parameters as given, the two files)."""
    flags, params, i = [], {}, 0
    while i < len(args) - 2:
        a = args[i]
        m = args[i + 1] if a == "-m" else a[2:] if a.startswith("-m") else None
        if m is None:
            flags.append(a)
        else:
            name, dot, p = m.partition(".")
            if dot:
                params.setdefault(name, p)
            i += a == "-m"
        i += 1
    return flags, params, [str(TE / f) for f in args[-2:]]


def ranklens_trec_eval(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``ranklens trec_eval ARGS`` in-process: (exit status, stdout, stderr)."""
    status = 0
    try:
        run(args)
    except SystemExit as exc:
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("out_file", sorted(CASES))
def test_trec_eval_test_outputs(out_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    expected = (TE / out_file).read_text()
    lines = expected.splitlines(keepends=True)
    by_root: dict[str, list[str]] = {}
    for line in lines:
        by_root.setdefault(root_of(line.split("\t")[0].rstrip()), []).append(line)
    flags, params, files = split_args(CASES[out_file])
    computed, refused = [], []
    for measure, want in by_root.items():
        m = measure + ("." + params[measure] if measure in params else "")
        status, out, err = ranklens_trec_eval([*flags, "-m", m, *files], capsys)
        if status == 0:
            assert out == "".join(want), f"{out_file}: -m {m}"
            computed.append(measure)
        else:
            assert status == 2 and out == "" and measure in err and len(err.splitlines()) == 1, (m, status, err)
            refused.append(measure)
    # 11pt_avg is computed at its default recall levels only (other levels are refused by name)
    must = set(COMPUTED) & set(by_root) - ({"11pt_avg"} if "11pt_avg" in params else set())
    assert must <= set(computed), f"{out_file}: no longer computed: {sorted(must - set(computed))}"
    status, out, err = ranklens_trec_eval([*CASES[out_file][:-2], *files], capsys)
    if refused:
        assert status == 2 and out == "" and len(err.splitlines()) == 1, err
        assert all(re.search(rf"\b{re.escape(r)}\b", err) for r in refused), (refused, err)
    else:
        assert status == 0 and out == expected, out_file


def test_comments_in_qrels_change_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    # trec_eval's quicktest: qrels.test.with-comments gives out.test too (here with the measures computed)
    ms = ["-m", "num_ret", "-m", "map", "-m", "P.5,10", "-m", "Rprec", "-m", "recip_rank", "-q"]
    a = ranklens_trec_eval([*ms, str(TE / "qrels.test"), str(TE / "results.test")], capsys)
    b = ranklens_trec_eval([*ms, str(TE / "qrels.test.with-comments"), str(TE / "results.test")], capsys)
    assert a[0] == 0 and a == b


def test_runid_and_counts_by_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # q1: d1 (relevant) ranked 2nd after d2; q2 missing from the run; q9 ranked but not judged (ignored)
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d1 1\n")
    (tmp_path / "run").write_text("q1 Q0 d2 1 2.0 first\nq1 Q0 d1 2 1.0 first\nq9 Q0 d1 1 5 tag9\n"
                                  "# a comment\n")
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    status, out, _ = ranklens_trec_eval(["-c", "-q", "-m", "runid", "-m", "num_q", "-m", "num_rel", "-m", "map",
                                         *files], capsys)
    # AP(q1) = (1/2) / 2 relevant = 0.25; q2 scores 0 under -c; num_rel summed 2 + 1; runid of the last line
    assert status == 0
    assert out == ("num_rel               \tq1\t2\nmap                   \tq1\t0.2500\n"
                   "num_rel               \tq2\t1\nmap                   \tq2\t0.0000\n"
                   "runid                 \tall\ttag9\nnum_q                 \tall\t2\n"
                   "num_rel               \tall\t3\nmap                   \tall\t0.1250\n")
    # trec_eval 10 without -c stops on the judged query the run lacks, with status 4, after printing the -q
    # lines of the queries before it (trec_eval.c: "result qid not found", exit(4)); no summary
    status, out, err = ranklens_trec_eval(["-m", "map", *files], capsys)
    assert status == 4 and out == "" and "q2" in err and len(err.splitlines()) == 1
    status, out, err = ranklens_trec_eval(["-q", "-m", "map", *files], capsys)
    assert (status, out) == (4, "map                   \tq1\t0.2500\n") and "q2" in err and len(err.splitlines()) == 1
    # -n: no summary; the run from standard input ('-'), as trec_eval 10 reads it
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((tmp_path / "run").read_bytes())))
    status, out, _ = ranklens_trec_eval(["-n", "-q", "-c", "-m", "map", files[0], "-"], capsys)
    assert out == "map                   \tq1\t0.2500\nmap                   \tq2\t0.0000\n"


def test_summary_summed_as_trec_eval_sums(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 32 queries whose P_20 are k/20: trec_eval adds them one after the other in query order, then divides;
    # here that mean rounds to 0.5563 while numpy's pairwise sum gives 0.5562
    ks = [7, 16, 17, 18, 0, 6, 18, 12, 7, 18, 12, 0, 19, 17, 1, 20, 11, 20, 4, 2, 14, 1, 17, 6, 5, 12, 18, 16, 3, 16,
          10, 13]
    total = 0.0
    for k in ks:
        total += k / 20
    assert f"{total / 32:6.4f}" == "0.5563" != f"{float(np.sum(np.array(ks) / 20)) / 32:6.4f}"
    with open(tmp_path / "qrels", "w") as q, open(tmp_path / "run", "w") as r:
        for i, k in enumerate(ks):
            for d in range(20):
                q.write(f"q{i:02d} 0 d{d} {int(d < k)}\n")
                r.write(f"q{i:02d} Q0 d{d} {d + 1} {100 - d} run\n")
    status, out, _ = ranklens_trec_eval(["-m", "P.20", str(tmp_path / "qrels"), str(tmp_path / "run")], capsys)
    assert (status, out) == (0, "P_20                  \tall\t0.5563\n")


def test_missing_query_under_c_is_trec_evals_stand_in(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # trec_eval -c evaluates a judged query missing from the run on one stand-in unjudged document
    # (trec_eval.c: bogus_ranking), then zeroes num_ret, unj*, and by their exact names utility, relstring and
    # rbp_resid: with parameters in their names they keep the stand-in's values. q1: d1 (relevant) first, d2
    # (judged 0) second: utility 1 - 1 = 0, relstring '10', rbp_resid 0 (nothing unjudged). q2 (missing,
    # R = 1): utility_1,-1,0,0 = -1 (one non-relevant ranked), relstring_3 '-', rbp_resid_p=0.5 = 0.5 + 0.5 * 1
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 1\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n")
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    plain = ["-c", "-q", "-m", "relstring", "-m", "utility", "-m", "rbp_resid", *files]
    named = ["-c", "-q", "-m", "relstring.3", "-m", "utility.1,-1,0,0", "-m", "rbp_resid.p=0.5", *files]
    wants = {
        "plain": ("relstring             \tq1\t'10'\nutility               \tq1\t0.0000\n"
                  "rbp_resid             \tq1\t0.0000\nrelstring             \tq2\t''\n"
                  "utility               \tq2\t0.0000\nrbp_resid             \tq2\t0.0000\n"
                  "utility               \tall\t0.0000\nrbp_resid             \tall\t0.0000\n"),
        "named": ("relstring_3           \tq1\t'10'\nutility_1,-1,0,0      \tq1\t0.0000\n"
                  "rbp_resid_p=0.5       \tq1\t0.0000\nrelstring_3           \tq2\t'-'\n"
                  "utility_1,-1,0,0      \tq2\t-1.0000\nrbp_resid_p=0.5       \tq2\t1.0000\n"
                  "utility_1,-1,0,0      \tall\t-0.5000\nrbp_resid_p=0.5       \tall\t0.5000\n"),
    }
    for which, args in (("plain", plain), ("named", named)):
        status, out, _ = ranklens_trec_eval(args, capsys)
        assert (status, out) == (0, wants[which]), which
        assert trec_eval_program(args) == (0, wants[which]), which


def test_judged_only_keeps_emptied_queries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # -J removes the unjudged d9 and d7 before ranking: q1's d1 comes first (AP 1), q2 has no document left
    # but is still evaluated (num_ret 0, AP 0), as trec_eval does; without -J, d1 is second (AP 1/2)
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq2 0 d5 0\n")
    (tmp_path / "run").write_text("q1 Q0 d9 1 2 r\nq1 Q0 d1 2 1 r\nq2 Q0 d7 1 1 r\n")
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    ms = ["-m", "num_q", "-m", "num_ret", "-m", "map"]
    status, out, _ = ranklens_trec_eval(["-J", "-q", *ms, *files], capsys)
    assert (status, out) == (0, "num_ret               \tq1\t1\nmap                   \tq1\t1.0000\n"
                                "num_ret               \tq2\t0\nmap                   \tq2\t0.0000\n"
                                "num_q                 \tall\t2\nnum_ret               \tall\t1\n"
                                "map                   \tall\t0.5000\n")
    status, out, _ = ranklens_trec_eval([*ms, *files], capsys)
    assert (status, out) == (0, "num_q                 \tall\t2\nnum_ret               \tall\t3\n"
                                "map                   \tall\t0.2500\n")
    # every document unjudged: every query evaluated on an empty list
    (tmp_path / "run").write_text("q1 Q0 d9 1 2 r\nq2 Q0 d7 1 1 r\n")
    status, out, _ = ranklens_trec_eval(["-J", *ms, *files], capsys)
    assert (status, out) == (0, "num_q                 \tall\t2\nnum_ret               \tall\t0\n"
                                "map                   \tall\t0.0000\n")


def test_labels_read_as_trec_eval_reads_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # trec_eval's get_qrels.c reads a label with C's atol: 1.5 -> 1, 2x -> 2, 0.9 -> 0, -0.5 -> 0, +3 -> 3. By hand
    # (d1 first, d2 second, d3 third): q1's labels 1, 2, 0 with d3 ranked 3rd (0): num_rel 2, AP (1/1 + 2/2) / 2 = 1;
    # q2: d4 is judged 0 (from 0.9), so R = 0 and AP 0; q3: d5 is 3 (+3): AP 1
    (tmp_path / "qrels").write_text("q1 0 d1 1.5\nq1 0 d2 2x\nq1 0 d3 -0.5\nq2 0 d4 0.9\nq3 0 d5 +3\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d3 3 1 r\nq2 Q0 d4 1 1 r\nq3 Q0 d5 1 1 r\n")
    args = ["-q", "-m", "num_rel", "-m", "map", "-m", "relstring", str(tmp_path / "qrels"), str(tmp_path / "run")]
    status, out, err = ranklens_trec_eval(args, capsys)
    assert status == 0 and out == (
        "num_rel               \tq1\t2\nmap                   \tq1\t1.0000\nrelstring             \tq1\t'120'\n"
        "num_rel               \tq2\t0\nmap                   \tq2\t0.0000\nrelstring             \tq2\t'0'\n"
        "num_rel               \tq3\t1\nmap                   \tq3\t1.0000\nrelstring             \tq3\t'3'\n"
        "num_rel               \tall\t3\nmap                   \tall\t0.6667\n")
    # one line on stderr says that 4 labels were read as other numbers (+3 is 3: not one of them)
    assert len(err.splitlines()) == 1 and "4 relevance labels" in err and "line 1: '1.5' as 1" in err, err
    assert trec_eval_program(args) == (0, out)


def test_no_document_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # -M0 keeps no document (C's atol: -M x is 0 too): num_ret 0, AP 0; the interpolated precisions are trec_eval's
    # 0 / 0 ("-nan") at the levels whose lround(level R) is 0 (R = 2: 0.0 and 0.2, lround(0.4) = 0), 0 at 0.5
    # (lround(1.0) = 1 relevant never reached); the mean of a column holding -nan is -nan
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq1 0 d2 1\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 2 r\nq1 Q0 d2 2 1 r\n")
    for m in ("0", "x"):
        args = ["-q", "-M", m, "-m", "num_ret", "-m", "map", "-m", "iprec_at_recall.0,.2,.5",
                str(tmp_path / "qrels"), str(tmp_path / "run")]
        status, out, err = ranklens_trec_eval(args, capsys)
        assert status == 0 and out == (
            "num_ret               \tq1\t0\nmap                   \tq1\t0.0000\n"
            "iprec_at_recall_0.00  \tq1\t  -nan\niprec_at_recall_0.20  \tq1\t  -nan\n"
            "iprec_at_recall_0.50  \tq1\t0.0000\n"
            "num_ret               \tall\t0\nmap                   \tall\t0.0000\n"
            "iprec_at_recall_0.00  \tall\t  -nan\niprec_at_recall_0.20  \tall\t  -nan\n"
            "iprec_at_recall_0.50  \tall\t0.0000\n"), out
        assert ("read as 0" in err) == (m == "x")
        assert trec_eval_program(args) == (0, out)


def test_stops_where_trec_eval_stops(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # trec_eval evaluates the judged queries in strcmp order and stops (exit 4) at the first one it cannot: q2 has
    # d1 twice in the run (form_res_rels: duplicate docs); q1's -q lines are printed before, no summary
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq2 0 d1 1\nq3 0 d1 1\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 1 r\nq2 Q0 d1 1 1 r\nq2 Q0 d1 2 0.5 r\nq3 Q0 d1 1 1 r\n")
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    status, out, err = ranklens_trec_eval(["-q", "-m", "map", "-m", "P.1", *files], capsys)
    assert (status, out) == (4, "map                   \tq1\t1.0000\nP_1                   \tq1\t1.0000\n")
    assert "q2" in err and "twice" in err and len(err.splitlines()) == 1
    assert trec_eval_program(["-q", "-m", "map", "-m", "P.1", *files]) == (status, out)
    # runid and num_q read no list: trec_eval does not see the duplicate
    status, out, err = ranklens_trec_eval(["-q", "-m", "runid", "-m", "num_q", *files], capsys)
    assert (status, out, err) == (0, "runid                 \tall\tr\nnum_q                 \tall\t3\n", "")
    assert trec_eval_program(["-q", "-m", "runid", "-m", "num_q", *files]) == (status, out)
    # the same document twice in the qrels of q3: q1 and q2 (now ranked once) are printed
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq2 0 d1 1\nq3 0 d1 1\nq3 0 d1 0\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 1 r\nq2 Q0 d1 1 1 r\nq3 Q0 d1 1 1 r\n")
    status, out, err = ranklens_trec_eval(["-q", "-m", "map", *files], capsys)
    assert (status, out) == (4, "map                   \tq1\t1.0000\nmap                   \tq2\t1.0000\n")
    assert trec_eval_program(["-q", "-m", "map", *files]) == (status, out)
    # a measure with no value at the query it stops at (G of a document judged twice) is not asked for it
    (tmp_path / "qrels").write_text("q2 0 d0 4\nq2 0 d0 0\n")
    (tmp_path / "run").write_text("q2 Q0 d0 1 2.25 r\nq2 Q0 d0 1 -2.66 r\nq3 Q0 d0 1 1.0 r\n")
    for args in (["-q", "-l0", "-m", "G.1=3,2=9", "-m", "rbp_resid", *files], ["-c", "-m", "G.1=3,2=9", *files]):
        status, out, err = ranklens_trec_eval(args, capsys)
        assert (status, out) == trec_eval_program(args) and status == 4 and "'q2'" in err, err
    # G of a relevant document ranked twice: its gains pass the ideal's cost, log2(1) = 0 (C's inf), no crash
    (tmp_path / "qrels").write_text("q2 0 d0 4\nq2 0 d2 2\nq3 0 d1 1\n")
    (tmp_path / "run").write_text("q2 Q0 d2 2 2.8 r\nq3 Q0 d1 1 1.0 r\nq3 Q0 d1 3 -1.9 r\nq3 Q0 d3 2 0.15 r\n")
    for args in (["-q", "-m", "G.1=3,2=9", *files], ["-c", "-m", "G", *files]):
        status, out, err = ranklens_trec_eval(args, capsys)
        assert (status, out) == trec_eval_program(args) and status == 4 and "'q3'" in err, err


def test_refused_where_trec_eval_crashes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a query after the first whose judgments are all -2 or below: form_res_rels.c memsets (largest label + 1)
    # counts, a negative size, and trec_eval dies of a signal; ranklens refuses in one line naming the query
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    (tmp_path / "qrels").write_text("4 0 d1 2\n42 0 d1 -2\n42 0 d2 -3\n5 0 d1 -1\n")
    (tmp_path / "run").write_text("4 Q0 d1 1 0.5 r\n42 Q0 d1 1 1.8 r\n5 Q0 d1 1 1 r\n")
    for args in (["-m", "map"], ["-c", "-M", "3", "-q", "-m", "P.2"], ["-J", "-m", "ndcg"]):
        status, out, err = ranklens_trec_eval([*args, *files], capsys)
        assert (status, out) == (2, "") and "'42'" in err and "crashes" in err and len(err.splitlines()) == 1
        assert trec_eval_program([*args, *files])[0] < 0  # killed by a signal
    # runid and num_q read no list; a query before it where trec_eval stops (status 4, not in the run)
    args = ["-m", "runid", "-m", "num_q", *files]
    assert ranklens_trec_eval(args, capsys)[:2] == trec_eval_program(args) == (0, "runid                 \tall\tr\n"
                                                                               "num_q                 \tall\t3\n")
    (tmp_path / "qrels").write_text("4 0 d1 2\n40 0 d1 1\n42 0 d1 -2\n")
    status, out, err = ranklens_trec_eval(["-q", "-m", "map", *files], capsys)
    assert (status, out) == trec_eval_program(["-q", "-m", "map", *files]) == (4, "map                   \t4\t1.0000\n")
    assert "'40'" in err


def test_duplicates_below_max_docs_are_not_seen(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # form_res_rels.c cuts each list to its first -M documents (score descending, ties by docno descending) before
    # it looks for a document twice: q2's d2 (twice) is third and fourth, q3's d9 twice in its qrels counts always
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq2 0 d3 1\nq2 0 d2 1\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 1 r\nq2 Q0 d2 1 0.5 r\nq2 Q0 d3 2 0.5 r\nq2 Q0 d4 3 0.7 r\n"
                                  "q2 Q0 d2 4 0.5 r\n")
    for flags, stops in ((["-M", "1"], False), (["-M", "3"], False), (["-M", "4"], True), (["-M", "0"], False),
                         (["-J", "-M", "2"], False), (["-J", "-M", "4"], True), ([], True)):
        args = ["-q", *flags, "-m", "map", "-m", "num_ret", *files]
        status, out, err = ranklens_trec_eval(args, capsys)
        assert (status == 4) == stops and (status, out) == trec_eval_program(args), flags
        assert ("'q2'" in err and "twice" in err) == stops
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq2 0 d3 1\nq2 0 d2 1\nq3 0 d9 1\nq3 0 d9 0\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 1 r\nq2 Q0 d2 1 0.5 r\nq2 Q0 d2 2 0.5 r\nq3 Q0 d9 1 1 r\n")
    for flags in (["-M", "1"], ["-M", "0"], ["-M", "1", "-c"]):
        args = ["-q", *flags, "-m", "map", *files]
        status, out, err = ranklens_trec_eval(args, capsys)
        assert status == 4 and "'q3'" in err and (status, out) == trec_eval_program(args), flags


def test_stops_where_the_first_query_has_only_negative_judgments(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # trec_eval 10.0 sizes its count of relevance levels by the largest label + 1 at the first query it evaluates
    # (form_res_rels.c); with every label negative that is 0 and te_chk_and_malloc hands back no buffer: "Can't
    # calculate measure", exit 4, nothing printed. A later query with only negative labels reuses the buffer.
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    (tmp_path / "run").write_text("q1 Q0 d1 1 1 r\nq1 Q0 d2 2 0.5 r\nq2 Q0 d1 1 1 r\nq2 Q0 d3 2 0.5 r\n")
    (tmp_path / "qrels").write_text("q1 0 d1 -1\nq1 0 d2 -2\nq2 0 d3 1\n")
    for args in (["-q", "-m", "map", "-m", "P.1"], ["-J", "-m", "ndcg"], ["-c", "-m", "num_rel"]):
        status, out, err = ranklens_trec_eval([*args, *files], capsys)
        assert (status, out) == (4, "")
        assert "q1" in err and "negative" in err and len(err.splitlines()) == 1
        assert trec_eval_program([*args, *files]) == (status, out)
    # runid and num_q read no list: trec_eval evaluates
    status, out, err = ranklens_trec_eval(["-m", "runid", "-m", "num_q", *files], capsys)
    assert (status, out, err) == (0, "runid                 \tall\tr\nnum_q                 \tall\t2\n", "")
    assert trec_eval_program(["-m", "runid", "-m", "num_q", *files]) == (status, out)
    # the same judgments second in strcmp order: evaluated (q1's d1 and d2 are in the pool, not judged)
    (tmp_path / "qrels").write_text("q1 0 d3 1\nq2 0 d1 -1\nq2 0 d3 -2\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 1 r\nq1 Q0 d3 2 0.5 r\nq2 Q0 d1 1 1 r\nq2 Q0 d3 2 0.5 r\n")
    status, out, err = ranklens_trec_eval(["-q", "-m", "map", "-m", "num_rel", *files], capsys)
    assert (status, err) == (0, "")
    assert out == ("num_rel               \tq1\t1\nmap                   \tq1\t0.5000\n"
                   "num_rel               \tq2\t0\nmap                   \tq2\t0.0000\n"
                   "num_rel               \tall\t1\nmap                   \tall\t0.2500\n")
    assert trec_eval_program(["-q", "-m", "map", "-m", "num_rel", *files]) == (status, out)


def test_ndcg_gains_less_than_1_apart_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # trec_eval sorts the gain levels with comp_rel_gain, (int) (g1 - g2): gains less than 1 apart compare equal
    # and their order is the C library's sort's. ndcg.1=0.5,2=0.7 here: trec_eval's ideal list starts at level 0
    # (gain 0) and it prints 0 for q1, whose ranking by the gains' values is not 0
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d1 3\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d3 3 1 r\nq2 Q0 d1 1 1 r\n")
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    assert trec_eval_program(["-q", "-m", "ndcg.1=0.5,2=0.7", *files])[1].splitlines()[0].endswith("\tq1\t0.0000")
    for param, levels in (("1=0.5,2=0.7", "0.5 (level 1) and 0.0 (level 0)"),
                          ("2=1.5", "1.5 (level 2) and 1.0 (level 1)"),
                          ("1=2,2=2.5", "2.0 (level 1) and 2.5 (level 2)"), ("0=-0.5", None),
                          ("7=3.5", "3.5 (level 7) and 3.0 (level 3)"), ("5=0.5", "0.5 (level 5) and 0.0 (level 0)"),
                          ("2=2.5", "2.5 (level 2) and 3.0 (level 3)")):
        status, out, err = ranklens_trec_eval(["-m", f"ndcg.{param}", *files], capsys)
        assert (status, out) == (2, "") and len(err.splitlines()) == 1, err
        assert (levels or "negative gain") in err
    # gains at least 1 apart, fractional or not, with levels given above the qrels' largest label: trec_eval's
    for param in ("2=5.5", "1=3,2=9,4=4.5", "1=2,2=4", "3=4.5,9=7.25", "0=1,1=4.5"):
        args = ["-q", "-m", f"ndcg.{param}", *files]
        status, out, err = ranklens_trec_eval(args, capsys)
        assert (status, out) == trec_eval_program(args) and status == 0 and err == "", (param, err)


def test_rndcg_of_no_positive_gain_is_trec_evals_nan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # m_Rndcg.c averages ndcg over the R levels whose ideal gain changed with an ideal DCG above 0: a query with
    # relevant documents (num_rel > 0, at -l0 a label 0 is relevant) but no judged level of positive gain has
    # none, and its value is 0 / 0, printed "-nan", as is then the mean
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d1 0\nq3 0 d2 1\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d3 3 1 r\nq2 Q0 d1 1 1 r\nq3 Q0 d1 1 1 r\n")
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    status, out, err = ranklens_trec_eval(["-q", "-l0", "-m", "Rndcg", *files], capsys)
    assert out.splitlines()[1] == "Rndcg                 \tq2\t  -nan" and out.endswith("\tall\t  -nan\n"), out
    for args in (["-q", "-l0", "-m", "Rndcg"], ["-q", "-m", "Rndcg.1=0"],
                 ["-q", "-c", "-J", "-l0", "-m", "Rndcg.1=0,2=3"], ["-q", "-m", "Rndcg"]):
        status, out, err = ranklens_trec_eval([*args, *files], capsys)
        assert (status, out) == trec_eval_program([*args, *files]) and err == "", args


def test_rbp_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # m_rbp.c rescales the gains between min and max, two doubles it never initialises: its value depends on its
    # stack. ranklens gives the value for bounds starting at 0, and says so in one line on stderr. Here trec_eval's
    # stack did not hold 0 (the same program gives other numbers for other measures asked beside rbp)
    (tmp_path / "qrels").write_text("3 0 d0 2\n3 0 d1 4\n3 0 d5 3\n3 0 d6 0\n3 0 d7 3\n3 0 d9 2\n")
    (tmp_path / "run").write_text("3 Q0 d2 6 0.0 r\n3 Q0 d8 5 1.0 r\n3 Q0 d4 2 0.0 r\n3 Q0 d0 3 1.533412 r\n"
                                  "3 Q0 d1 4 -1.0 r\n3 Q0 d3 1 -1.0 r\n")
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    # ranked d0 (2), d8, d4, d2 (unjudged), d3 (unjudged), d1 (4): the labels / 4, p = 0.9
    by_hand = (1 - 0.9) * (2 / 4 + 4 / 4 * 0.9 ** 5)
    for extra in ([], ["-m", "ndcg_cut"], ["-N", "0", "-m", "ndcg_cut"]):
        status, out, err = ranklens_trec_eval(["-q", "-m", "rbp", *extra, *files], capsys)
        assert status == 0 and f"rbp                   \t3\t{by_hand:.4f}\n" in out, out
        assert len(err.splitlines()) == 1 and "never initialises" in err and "m_rbp.c" in err, err
    theirs = trec_eval_program(["-q", "-m", "rbp", "-N", "0", "-m", "ndcg_cut", *files])
    assert theirs[0] == 0 and f"\t3\t{by_hand:.4f}" not in theirs[1]  # its stack's numbers
    assert ranklens_trec_eval(["-m", "all_trec", *files], capsys)[2].count("never initialises") == 1
    assert "never initialises" not in ranklens_trec_eval(["-m", "rbp_resid", "-m", "map", *files], capsys)[2]


# -m parameters read with C's atol / atof (P.1e99 is P_1, P.1.5 P_1, a full-width digit no digit, nan and hex
# floats are numbers, a long recall level is cut to 9 characters in the name): ranklens prints what trec_eval
# prints, or refuses by name what it does not reproduce; a note on stderr when a number is read as something else
ODD_PARAMS = {  # parameter -> whether it is read as something else than written (a note on stderr)
    "P.1e99": True, "P.1.5": True, "P.5x,3": True, "P.99999999999999999999": True, "P. 7": False, "P.+4": False,
    "recall.\uff10,5": True, "success.1.5": True, "ndcg_cut.3x": True, "map_cut.0x10": True,
    "iprec_at_recall.nan": False, "iprec_at_recall.-nan": False, "iprec_at_recall.1e99": False,
    "iprec_at_recall.inf": False, "iprec_at_recall.0x1p-1": False, "iprec_at_recall.123456.7": False,
    "iprec_at_recall.1.5": False, "iprec_at_recall.-0.3,1e18": False, "iprec_at_recall..5x": True,
    "Rprec_mult.0x1p1": False, "Rprec_mult.nan": False, "relstring.1e9": False, "relstring.nan": False,
    "relstring.2.9": False, "relstring.-3": False, "utility.1,nan,0,0": False, "utility.0x1,-1,0,0": False,
    "set_F.1e0": False, "set_F.2,5": False, "11pt_avg.-1,0.5,1": False, "11pt_avg.0,.5x": True, "ndcg.x=3": True,
    "ndcg.1=4,+2=8": False, "ndcg.=2": True, "ndcg.1=1e400": False, "ndcg.1=-3": False, "G.1=3,x=9": True,
    "rbp_resid.p=0.5x": True, "unj.5.5": True,
}


@pytest.mark.parametrize("param", ODD_PARAMS)
def test_odd_parameters_against_trec_eval(param: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _random_case(31, tmp_path)
    for flags in (["-q", "-c"], ["-q", "-c", "-M", "2"], ["-J", "-c", "-q"]):
        args = [*flags, "-m", param, *files]
        theirs = trec_eval_program(args)
        status, out, err = ranklens_trec_eval(args, capsys)
        if status == 2 and theirs[0] == 0:  # refused by name, one line, nothing printed
            assert out == "" and len(err.splitlines()) == 1 and param.partition(".")[0] in err, err
            continue
        assert (status, out) == theirs, (args, err)
    if status == 0:  # a number read as something else than written is said on stderr, once; nothing else is
        assert (param in err) == ODD_PARAMS[param] and len(err.splitlines()) == ODD_PARAMS[param], (param, err)


C_TEXTS = ["0", "7", "+4", "-12", " 5", "\t-3x", "1.5", "1.5.2", ".5", "5.", "1e99", "1e400", "-1e-400", "2x", "x",
           "", "-", "+", "0x10", "0x1p-1", "0X1.8P1", "0x", "0x.8", "nan", "-nan", "NaN(123)", "inf", "-Infinity",
           "infin", "99999999999999999999", "-99999999999999999999", "9223372036854775807", "\uff15", "1\uff15",
           "1e", "1e+", "1.2e-3x", "0.49999999999999994", "00012", "-0", " \u00a05"]


@pytest.mark.skipif(not (sys.platform.startswith("linux") and platform.machine() == "x86_64"),
                    reason="trec_eval's numbers are glibc's on x86-64")
def test_c_numbers_are_the_c_librarys() -> None:
    # what trec_eval's atol, atof, lround and printf do, from the C library of this process itself
    from ranklens._defs.trec_eval import c_atof, c_atol, c_fixed, c_lround

    libc = ctypes.CDLL(None)
    libc.atol.restype, libc.atol.argtypes = ctypes.c_long, [ctypes.c_char_p]
    libc.atof.restype, libc.atof.argtypes = ctypes.c_double, [ctypes.c_char_p]
    libc.lround.restype, libc.lround.argtypes = ctypes.c_long, [ctypes.c_double]
    libc.snprintf.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_double]
    def bits(x: float) -> object:  # a NaN by its sign (printed), not its payload
        return ("nan", math.copysign(1.0, x)) if math.isnan(x) else struct.pack("<d", x)

    buf = ctypes.create_string_buffer(512)
    for text in C_TEXTS:
        raw = text.encode()
        assert c_atol(text)[0] == libc.atol(raw), text
        assert bits(c_atof(text)[0]) == bits(libc.atof(raw)), text
    values = [c_atof(t)[0] for t in C_TEXTS] + [2.5, -2.5, 0.5, -0.5, 1.5e18, 9.3e18, -9.3e18, 2.0**62, -(2.0**63)]
    for x in values:
        assert c_lround(x) == libc.lround(x), x
        for fmt, args in ((b"%6.4f", (4, 6)), (b"%3.2f", (2, 3))):
            libc.snprintf(buf, 512, fmt, x)
            assert c_fixed(x, *args) == buf.value.decode(), (x, fmt)


# (arguments, words of the one stderr line, exit status, whether trec_eval refuses too): trec_eval's own
# statuses where it refuses (trec_eval.c: 1 for a usage error, 2 for a parameter it cannot initialise or a file
# it cannot read, 4 for a measure it cannot calculate), 2 where ranklens refuses what it does not reproduce
MISUSE = [
    (["-m", "nosuch"], ["illegal measure", "nosuch"], 1, True),
    (["-m", "P."], ["improper measure", "P"], 1, True),
    (["-x"], ["option -x not recognized"], 1, True),
    (["-m", "P.0"], ["Negative cutoff", "P"], 2, True),
    (["-m", "P.\uff15"], ["Negative cutoff", "P"], 2, True),  # a full-width 5 is no digit to C's atol: 0
    (["-m", "P.5,5"], ["duplicate cutoffs"], 2, True),
    (["-m", "iprec_at_recall..5,0.50"], ["duplicate cutoffs"], 2, True),
    (["-m", "ndcg.1=2,,3"], ["malformed pair"], 2, True),
    (["-m", "ndcg.1"], ["malformed pair"], 2, True),
    (["-m", "utility.1,2"], ["utility", "coefficients"], 4, True),
    (["-R", "prefs"], ["-R prefs"], 2, True),
    (["-m", "rbp.p=0.5"], ["rbp"], 2, False),
    (["-m", "rbp_resid.p=1.5"], ["rbp_resid", "p must be"], 2, False),
    (["-m", "G.1=2.5"], ["G", "whole-number gains"], 2, False),
    (["-m", "ndcg.1=2,1=3"], ["level 1 is given twice"], 2, False),
    (["-m", "P.5,3000000000"], ["2**31"], 2, False),
    (["-m", "iprec_at_recall.nan,0.5"], ["NaN"], 2, False),
    (["-m", "set_F.nan"], ["set_F"], 2, False),
    (["-M", "-1"], ["-M", "0 or more"], 2, False),  # trec_eval crashes (segmentation fault)
    (["-l", "-1"], ["-l", "negative relevance level"], 2, False),
    (["-m", "prefs_simp"], ["-R prefs"], 2, False),
    (["-Z", "zfile"], ["-Z"], 2, False),
]


@pytest.mark.parametrize("args, words, code, theirs_too", MISUSE)
def test_misuse_is_one_line(args: list[str], words: list[str], code: int, theirs_too: bool,
                            capsys: pytest.CaptureFixture[str]) -> None:
    files = [str(TE / "qrels.test"), str(TE / "results.test")]
    status, out, err = ranklens_trec_eval([*args, *files], capsys)
    assert status == code and out == "" and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert all(w in err for w in words), err
    if theirs_too:  # trec_eval refuses with the same status, printing nothing
        assert trec_eval_program([*args, *files]) == (code, ""), args


def test_missing_file_and_argument_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = ranklens_trec_eval(["-m", "map", str(TE / "qrels.test"), str(tmp_path / "nope")], capsys)
    assert status == 2 and out == "" and "nope" in err and len(err.splitlines()) == 1
    status, out, err = ranklens_trec_eval(["-m", "map", str(TE / "qrels.test")], capsys)
    assert status == 1 and out == "" and "expected 2 arguments" in err  # trec_eval's usage error: 1


def test_ranklens_subcommand_passes_trec_eval_flags(capsys: pytest.CaptureFixture[str]) -> None:
    # inside `ranklens trec_eval`, -c is trec_eval's (every judged query), -h its help, -q its per-query flag
    args = ["trec_eval", "-q", "-c", "-M100", "-m", "map", "-m", "P.5", str(TE / "qrels.test"),
            str(TE / "results.trunc")]
    with pytest.raises(SystemExit) as exc:
        ranklens_main(args)
    out = capsys.readouterr().out
    assert exc.value.code == 0
    want = [ln for ln in (TE / "out.test.aqcM").read_text().splitlines(keepends=True)
            if ln.split()[0] in ("map", "P_5")]
    assert out == "".join(want)
    with pytest.raises(SystemExit):
        ranklens_main(["trec_eval", "-h"])
    assert "-c " in capsys.readouterr().out


def test_long_options_and_grouped_flags(capsys: pytest.CaptureFixture[str]) -> None:
    # trec_eval's getopt_long: --query_eval_wanted --measure=P.5 and -qc mean -q -m P.5 and -q -c
    files = [str(TE / "qrels.test"), str(TE / "results.trunc")]
    short = ranklens_trec_eval(["-q", "-c", "-m", "P.5", "-m", "map", *files], capsys)
    long = ranklens_trec_eval(["--query_eval_wanted", "--complete_rel_info_wanted", "--measure=P.5", "--measure",
                               "map", *files], capsys)
    grouped = ranklens_trec_eval(["-qc", "-mP.5", "-mmap", *files], capsys)
    assert short[0] == 0 and short == long == grouped
    want = [ln for ln in (TE / "out.test.aqc").read_text().splitlines(keepends=True) if ln.split()[0] in ("map", "P_5")]
    assert short[1] == "".join(want)


def test_script_is_declared() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    # through the console scripts' entry module (one BLAS thread for the command's process: tests/test_cli.py)
    assert re.search(r'^ranklens-trec_eval = "ranklens\._cli\.entry:trec_eval_main"$', text, re.M)


# ---------------------------------------------------------------------------------------------------------
# 2. random runs against trec_eval itself

def _random_case(seed: int, path: Path) -> list[str]:
    """A qrels and a run with many tied scores, topics missing on either side, graded and -1 labels."""
    rng = np.random.default_rng(seed)
    topics = [f"{t}" for t in rng.choice(900, size=rng.integers(2, 9), replace=False)]
    with open(path / "qrels", "w") as q, open(path / "run", "w") as r:
        for i, t in enumerate(topics):
            docs = [f"D{d:03d}" for d in rng.choice(400, size=rng.integers(3, 60), replace=False)]
            if i != 0:  # the first topic has no judgments
                # at least one label of 0 or more (a first topic with only negative labels: its own test)
                for n, d in enumerate(docs[: rng.integers(1, len(docs) + 1)]):
                    q.write(f"{t} 0 {d} {rng.choice([-1, 0, 0, 1, 2, 3]) if n else rng.choice([0, 1, 2])}\n")
            if i != 1 or seed % 2:  # the second topic is missing from half of the runs
                for j, d in enumerate(docs[rng.integers(0, 3):]):
                    score = rng.integers(0, 4) if seed % 3 else round(float(rng.normal()), 2)
                    r.write(f"{t} Q0 {d} {j + 1} {score} run{seed}\n")
    return [str(path / "qrels"), str(path / "run")]


FLAGS = [[], ["-q"], ["-c", "-q"], ["-M", "5", "-q"], ["-l", "2", "-q"], ["-J", "-q"], ["-c", "-J", "-q", "-M3"],
         ["-n", "-q", "-c"], ["-c", "-l3"]]
MEASURES = ["-m", "runid", "-m", "num_q", "-m", "num_ret", "-m", "num_rel", "-m", "num_rel_ret", "-m", "map",
            "-m", "Rprec", "-m", "recip_rank", "-m", "P.1,3,5,10,100", "-m", "recall.2,10", "-m", "ndcg",
            "-m", "ndcg_cut.3,10", "-m", "map_cut.4,50", "-m", "success.1,2,10", "-m", "set_P", "-m", "set_recall"]


# the other measures of all_trec: compared too, each as soon as ranklens computes it (a refusal names it)
OTHERS = ("gm_map bpref iprec_at_recall relstring infAP gm_bpref Rprec_mult utility 11pt_avg binG G ndcg_rel Rndcg "
          "relative_P set_relative_P set_map set_F num_nonrel_judged_ret rbp rbp_resid unj").split()


@pytest.mark.parametrize("seed", range(12))
def test_random_runs_against_trec_eval(seed: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _random_case(seed, tmp_path)
    others = []
    for m in OTHERS:
        status, _, err = ranklens_trec_eval(["-c", "-m", m, *files], capsys)
        assert status == 0 or (status == 2 and m in err), (m, err)
        others += ["-m", m] if status == 0 else []
    for flags in FLAGS:
        args = [*flags, *MEASURES, *others, *files]
        theirs = trec_eval_program(args)
        status, out, err = ranklens_trec_eval(args, capsys)
        # the same output byte for byte (trec_eval's 0 / 0, "-nan", for a list -J empties included) and the same
        # exit status: where trec_eval stops at a judged topic missing from the run (4), the -q lines before it
        assert (status, out) == theirs, (seed, flags, err)
        # one line when it stops, and the note on rbp when rbp is asked for (test_rbp_note)
        assert len(err.splitlines()) == (theirs[0] != 0) + ("rbp" in others), err


# trec_eval's measure parameters: gains of G / ndcg_rel / Rndcg, other recall levels of 11pt_avg, utility's
# coefficients with -N, relstring's length, rbp_resid's p, cutoffs and multiples
PARAMS = ["-m", "G.1=3,2=9,3=5", "-m", "ndcg_rel.0=1,2=5", "-m", "Rndcg.1=2,3=1", "-m", "11pt_avg.0,.3,.35,1",
          "-N", "1000", "-m", "utility.1,-2,0.5,0.01", "-m", "relstring.3", "-m", "rbp_resid.p=0.8",
          "-m", "unj.1,2,70", "-m", "relative_P.1,3,50", "-m", "Rprec_mult.0.1,0.5,3", "-m", "set"]


@pytest.mark.parametrize("seed", range(12, 18))
def test_random_runs_with_parameters_against_trec_eval(seed: int, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    files = _random_case(seed, tmp_path)
    for flags in (["-q"], ["-c", "-q"], ["-J", "-c", "-q"], ["-M", "4", "-q", "-l2"], ["-c", "-q", "-l0"]):
        args = [*flags, *PARAMS, *files]
        their_status, their_out = trec_eval_program(args)
        status, out, err = ranklens_trec_eval(args, capsys)
        # trec_eval's 0 / 0 (-nan) too: Rndcg of a query with items at the level -l0 but no positive gain
        assert (status, out) == (their_status, their_out), (seed, flags, err)


# ---------------------------------------------------------------------------------------------------------
# 4. the installed script

@pytest.mark.slow
def test_installed_script_runs(tmp_path: Path) -> None:
    # pip installs the package (its entry points too) into a fresh virtual environment of its own, so this
    # environment's installation is never touched; the script then finds numpy & co. through PYTHONPATH
    # (this environment's site-packages, where ranklens itself is only an editable .pth, not importable)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-deps", "-q", str(ROOT)],
                         capture_output=True, text=True, timeout=1800)
    assert pip.returncode == 0, pip.stderr[-3000:]
    script = venv / "bin" / "ranklens-trec_eval"
    assert script.exists() and os.access(script, os.X_OK)
    (site,) = venv.glob("lib/python*/site-packages")
    deps = next(p for p in sys.path if p.endswith("site-packages") and (Path(p) / "numpy").is_dir())
    env = {**os.environ, "PYTHONPATH": deps}
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import ranklens; print(ranklens.__file__)"],
                           env=env, capture_output=True, text=True, cwd=tmp_path)
    assert where.stdout.startswith(str(site)), (where.stdout, where.stderr)
    res = subprocess.run([str(script), "-q", "-c", "-M100", "-m", "map", "-m", "P.5",
                          str(TE / "qrels.test"), str(TE / "results.trunc")], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=600)
    want = [ln for ln in (TE / "out.test.aqcM").read_text().splitlines(keepends=True)
            if ln.split()[0] in ("map", "P_5")]
    assert res.returncode == 0 and res.stdout == "".join(want), res.stderr
    bad = subprocess.run([str(script), "-m", "P.0", str(TE / "qrels.test"), str(TE / "results.trunc")],
                         capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert bad.returncode == 2 and bad.stdout == "" and len(bad.stderr.splitlines()) == 1


def test_gzip_run_gives_runid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with gzip.open(tmp_path / "run.gz", "wt") as f:
        f.write("q1 Q0 d1 1 1.0 zipped\n")
    (tmp_path / "qrels").write_text("q1 0 d1 1\n")
    status, out, _ = ranklens_trec_eval(["-m", "runid", "-m", "P.1", str(tmp_path / "qrels"),
                                         str(tmp_path / "run.gz")], capsys)
    assert (status, out) == (0, "runid                 \tall\tzipped\nP_1                   \tall\t1.0000\n")
