"""Measure parameters in range in every spelling, each given once; no internal error from any measure string or
monitoring configuration value (issue #29, point 3).

The ranges are the definitions' own: RBP's persistence p in (0, 1) (Moffat & Zobel 2008: ``(1 - p) sum p^(i-1)``
is a weighted mean only there), the F measure's beta a finite number >= 0 (van Rijsbergen), a recall level in
[0, 1], a multiple of R >= 0, a cutoff from 1 to 2**63 - 1 (the kernels' integers). The fuzz tests feed
hypothesis' strings and values to the parsers: every answer is a parsed measure or one ``InvalidParameterError``
(``RanklensError`` for an evaluation); the command line answers one line and exit 2.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import math
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens import InvalidParameterError, RanklensError
from ranklens._defs.irmeasures import IR_MEASURES_NAMES
from ranklens.measures import REGISTRY, parse_measure
from ranklens.monitor.config import load_config

QRELS = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"d": 1}}
RUN = {"q1": {"a": 0.3, "b": 0.9, "c": 0.1}, "q2": {"d": 0.5, "e": 0.2}}

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --- each parameter in range, in each spelling -------------------------------------------------------------

OUT_OF_RANGE = [
    # (measure as written, the parameter named in the refusal)
    ("RBP(p=1.5)", "p must be a persistence between 0 and 1"),  # ir_measures' spelling
    ("RBP(p=1.0)", "p must be a persistence"), ("RBP(p=0.0)", "p must be a persistence"),
    ("RBP(p=1e400)", "p must be a persistence"),  # a float literal Python reads as inf
    ("rbp(p=1.5)", "p must be a persistence"), ("rbp(p=0)", "p must be a persistence"),  # ours
    ("rbp@10(p=nan)", "p must be a persistence"), ("rbp_resid(p=1)", "p must be a persistence"),
    ("SetF(beta=1e400)", "beta must be a finite number >= 0"), ("f1(beta=-1)", "beta must be a finite number"),
    ("set_F(beta=inf)", "beta must be a finite number"), ("f1@10(beta=1e309)", "beta must be a finite number"),
    ("IPrec@1.5", "recall must be a recall level from 0 to 1"), ("iprec_at_recall_1.5", "recall must be"),
    ("iprec@1.01", "recall must be"), ("iprec_at_recall..5,1.2", "recall must be"),  # trec_eval's list
    ("Rprec_mult(mult=-1)", "mult must be"), ("Rprec_mult(mult=1e400)", "mult must be"),
    ("P@0", "cutoff must be an integer from 1"), ("P.9223372036854775808", "cutoff must be an integer from 1"),
    ("P@1" + "0" * 5000, "cutoff must be an integer from 1"),  # more digits than Python converts
    ("P(rel=2)@9223372036854775808", "cutoff must be an integer from 1"),
    ("P(rel=100000000000000000000000000000000000000000)@5", "rel must be an integer a double holds"),
]


@pytest.mark.parametrize(("text", "why"), OUT_OF_RANGE)
def test_a_parameter_out_of_range_is_refused_in_every_spelling(text, why):
    with pytest.raises(InvalidParameterError, match="measure .*" + why.replace("(", r"\(")):
        parse_measure(text)
    with pytest.raises(InvalidParameterError, match=why.replace("(", r"\(")):
        ranklens.evaluate(QRELS, RUN, [text], convention="trec_eval")


@pytest.mark.parametrize(("make", "why"), [
    (lambda m: m.RBP(p=1.5), "p must be a persistence"),
    (lambda m: m.SetF(beta=float("inf")), "beta must be a finite number"),
    (lambda m: m.SetF(beta=float("nan")), "beta must be a finite number"),
    (lambda m: m.IPrec @ 2.0, "recall must be a recall level"),
    (lambda m: m.P @ (2**64), "cutoff must be an integer from 1"),
])
def test_an_ir_measures_object_out_of_range_is_refused(make, why):
    ir_measures = pytest.importorskip("ir_measures")
    with pytest.raises(InvalidParameterError, match=why):
        ranklens.evaluate(QRELS, RUN, [make(ir_measures)], convention="ir_measures")


@pytest.mark.parametrize("text", ["RBP(p=0.5)", "rbp(p=0.999)", "SetF(beta=0.0)", "f1(beta=1e300)",
                                  "IPrec@0.0", "IPrec@1.0", "iprec_at_recall_1.00", "Rprec_mult(mult=0)",
                                  "P@9223372036854775807", "P(rel=9007199254740992)@5"])
def test_the_bounds_that_belong_to_a_range_are_taken(text):
    assert parse_measure(text)


@pytest.mark.parametrize("text", ["P(rel=2, rel=3)@5", "P(cutoff=5)@10", "IPrec(recall=0.5)@0.3",
                                  "rbp(p=0.5,p=0.6)", "P@5(rel=1,rel=2)", "P@5(rel=1,level=2)",
                                  "ndcg@10(gain=linear,gain=exp)", "nDCG(dcg='log2', dcg='exp-log2')@10"])
def test_a_parameter_given_twice_is_refused(text):
    """ir_measures keeps the last of ``P(rel=2, rel=3)@5`` and the ``@`` of ``P(cutoff=5)@10``: one of the two
    numbers written is dropped without a word, so ranklens refuses the measure."""
    with pytest.raises(InvalidParameterError, match="given twice"):
        parse_measure(text)


def test_ir_measures_keeps_the_last_of_a_repeated_parameter():
    """Why a repeated parameter is refused rather than read as ir_measures reads it: ir_measures drops one."""
    ir_measures = pytest.importorskip("ir_measures")
    assert ir_measures.parse_measure("P(rel=2, rel=3)@5").params == {"rel": 3, "cutoff": 5}
    assert ir_measures.parse_measure("P(cutoff=5)@10").params == {"cutoff": 10}


def test_ranx_persistence_spelling_is_named_under_the_ranx_preset():
    """ranx reads ``rbp.95`` as persistence 0.95 (``float("0." + "95")``); ranklens reads a cutoff there, which the
    ranx preset refuses, saying how to write the persistence."""
    with pytest.raises(InvalidParameterError, match=r"rbp\(p=0\.95\)"):
        ranklens.evaluate(QRELS, RUN, ["rbp.95"], convention="ranx")


# --- gain maps ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("gains", "why"), [("0:0,1:-1", "takes gains >= 0"), ("0:0,1:nan", "finite numbers"),
                                            ("0:0,1:inf", "finite numbers"), ("0:0,1:-inf", "finite numbers"),
                                            ("0:0,nan:1", "finite numbers")])
def test_ranklens_eval_refuses_a_gain_map_with_a_negative_nan_or_infinite_gain(gains, why, tmp_path, run_cli):
    (tmp_path / "q").write_text("q1 0 a 1\nq1 0 b 0\n")
    (tmp_path / "r").write_text("q1 Q0 a 1 0.5 x\nq1 Q0 b 2 0.9 x\n")
    code, out, err = run_cli(["eval", str(tmp_path / "q"), str(tmp_path / "r"), "--set", f"gain={gains}"])
    assert code == 2 and out == "" and err.count("\n") == 1 and why in err and "`gain`" in err, err


def test_trec_eval_convention_computes_negative_gains_as_trec_eval():
    """trec_eval's ndcg gain parameters take any number (m_ndcg.c); under its preset the value is the one
    trec_eval computes by hand: ranking a (gain -1) then b (gain 0) of ideal b, a -> DCG -1/log2(2) ... / IDCG."""
    res = ranklens.evaluate({"q": {"a": 1, "b": 2}}, {"q": {"a": 0.9, "b": 0.5}}, ["ndcg"], convention="trec_eval",
                            gain={1: -1.0, 2: 3.0})
    dcg = -1.0 / math.log2(2) + 3.0 / math.log2(3)
    idcg = 3.0 / math.log2(2) - 1.0 / math.log2(3)
    assert res["ndcg"] == pytest.approx(dcg / idcg, abs=1e-4)  # trec_eval prints 4 decimals; float32 scores


# --- fuzz: no internal error from any measure string ----------------------------------------------------------

_NAMES = sorted({n for s in REGISTRY.values() for n in s.spellings} | set(IR_MEASURES_NAMES)
                | {"ndcg_cut", "map_cut", "set_P", "set_recall", "set_F", "iprec_at_recall", "P", "R"})
_NUMBERS = st.one_of(st.integers(-10, 10**25).map(str), st.floats(allow_nan=True, allow_infinity=True).map(repr),
                     st.sampled_from(["nan", "inf", "-inf", "1e400", "0" * 30 + "5", "1" + "0" * 5000, ".5", "5.",
                                      "１０", "0x10", "1_0", "", "-0"]))
_KEYS = st.sampled_from(["p", "beta", "rel", "gain", "level", "relevance_level", "recall", "mult", "cutoff", "dcg",
                         "gains", "judged_only", "relative", "x", ""])


@st.composite
def measure_texts(draw):
    """Strings in the shape of a measure in our syntax, trec_eval's or ir_measures': a name, cutoffs, options."""
    name = draw(st.sampled_from(_NAMES))
    sep = draw(st.sampled_from(["@", ".", "_", "", "..", "@@"]))
    cut = draw(st.lists(_NUMBERS, max_size=3).map(",".join)) if sep else ""
    minus = draw(st.sampled_from(["", "-"]))
    opts = draw(st.lists(st.tuples(_KEYS, st.one_of(_NUMBERS, st.sampled_from(
        ["'exp-log2'", "True", "{0: 0, 1: 1e400}", "{0: 0, 1: -1}", "'x'", "None", "[1]", "(1, 2)"]))),
        max_size=3))
    body = ", ".join(f"{k}={v}" for k, v in opts)
    where = draw(st.sampled_from(["after", "before", "none"]))
    if where == "after":
        return f"{name}{sep}{cut}{minus}({body})"
    if where == "before":
        return f"{name}({body}){sep}{cut}"
    return f"{name}{sep}{cut}{minus}"


def _parses_or_refuses(text):
    try:
        ms = parse_measure(text)
    except InvalidParameterError:
        return None
    return ms


@FUZZ
@given(st.one_of(measure_texts(), st.text(max_size=60)))
def test_fuzz_parse_measure_gives_a_measure_or_one_refusal(text):
    ms = _parses_or_refuses(text)
    if ms is None:
        return
    for m in ms:  # what parses, evaluates (or is refused by the convention in one RanklensError)
        for conv in ("ranklens", "trec_eval", "ir_measures", "ranx"):
            try:
                ranklens.evaluate(QRELS, RUN, [m], convention=conv)
            except RanklensError:
                pass


@FUZZ
@given(text=measure_texts())
def test_fuzz_trec_eval_m_strings_never_end_in_an_internal_error(tmp_path_factory, text):
    d = tmp_path_factory.getbasetemp()
    q, r = d / "fz.qrels", d / "fz.run"
    if not q.exists():
        q.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 d 1\n")
        r.write_text("q1 Q0 a 1 0.3 x\nq1 Q0 b 2 0.9 x\nq2 Q0 d 1 0.5 x\n")
    from ranklens.trec_eval_cli import run

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            run(["-m", text, str(q), str(r)])
        except SystemExit as exc:
            assert exc.code != 1 or "internal error" not in err.getvalue(), err.getvalue()
    assert "internal error" not in err.getvalue() and "Traceback" not in err.getvalue(), err.getvalue()


# --- fuzz: no internal error from any configuration value -----------------------------------------------------

_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(), st.text(max_size=12),
              st.sampled_from(["0.5", "day", "ndcg@10", "production", "2026-10-01", "2d", "click", "http://x",
                               "previous", "training..production", "psi(score)", "coverage@10"]),
              st.dates(), st.datetimes(), st.times()),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6).filter(lambda v: v is not None)

_SCHEMA = {
    "attribution": ["rule", "positive", "weights"], "evaluation": ["convention", "empty", "tracked"],
    "baseline": ["environment", "start", "end", "previous"], "alerts": ["webhook", "webhook_format", "retries",
                                                                        "backoff"],
    "labels": ["maturity"], "ingest": ["max_quarantine"], "signals": ["items", "attribute", "catalogue_size"],
}
_MONITOR_KEYS = ["name", "metric", "window", "threshold", "relative_drop", "absolute_drop", "min_groups",
                 "significance", "where", "by", "baseline"]


@st.composite
def configs(draw):
    """Configuration documents of the right shape with values of any TOML type (and some of the wrong shape)."""
    doc = {}
    for section, keys in _SCHEMA.items():
        if draw(st.booleans()):
            doc[section] = {k: draw(_VALUES) for k in keys if draw(st.booleans())} if draw(
                st.integers(0, 9)) else draw(_VALUES)
    if draw(st.booleans()):
        doc["monitors"] = [{**{"name": "m", "metric": "ndcg@10", "threshold": 0.5},
                            **{k: draw(_VALUES) for k in _MONITOR_KEYS if draw(st.booleans())}}
                           for _ in range(draw(st.integers(0, 2)))] if draw(st.integers(0, 9)) else draw(_VALUES)
    return doc


@FUZZ
@given(configs())
def test_fuzz_a_configuration_is_read_or_refused_in_one_line(doc):
    try:
        load_config(doc)
    except InvalidParameterError as exc:
        assert "\n" not in str(exc)


@pytest.mark.parametrize(("toml", "why"), [
    ('[[monitors]]\nname = "m"\nmetric = "ndcg@10"\nthreshold = nan\n', "`threshold` must be a finite number"),
    ('[[monitors]]\nname = "m"\nmetric = "ndcg@10"\nthreshold = "0.5"\n', "without quotes"),
    ('[[monitors]]\nname = "m"\nmetric = "ndcg@10"\nthreshold = inf\n', "`threshold` must be a finite number"),
    ('[[monitors]]\nname = "m"\nmetric = "ndcg@10"\nrelative_drop = true\n', "`relative_drop` must be a finite"),
    ('[[monitors]]\nname = "m"\nmetric = "ndcg@10"\nthreshold = 0.5\nmin_groups = true\n', "`min_groups`"),
    ('[[monitors]]\nname = "m"\nmetric = "ndcg@10"\nthreshold = 0.5\nwhere = "production"\n', "`where`"),
    ('[[monitors]]\nname = "m"\nmetric = "ndcg@10"\nthreshold = 0.5\nby = 3\n', "`by`"),
    ('[evaluation]\nconvention = ["ranklens"]\n', "`convention` must be a string"),
    ('[evaluation]\ntracked = 10\n', "`tracked` must be a string or a list"),
    ("attribution = 5\n", "expected a table"),
    ('[baseline]\nprevious = "yes"\n', "`previous` must be true or false"),
    # a key holding a newline (found by the fuzz test below): listed by its repr, the message stays one line
    ('[baseline]\n"pre\\nvious" = true\n', "unknown key(s) 'pre\\nvious'"),
    ("x = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
    ("a = 1\n\xff\n", "not UTF-8"),
])
def test_monitor_check_refuses_a_bad_config_value_in_one_line(toml, why, tmp_path, run_cli):
    cfg = tmp_path / "ranklens.toml"
    cfg.write_bytes(toml.encode("utf-8", "surrogateescape") if "\xff" not in toml else toml.encode("latin-1"))
    code, out, err = run_cli(["monitor", "check", "--store", str(tmp_path / "s.duckdb"), "--config", str(cfg)])
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("ranklens: error: ") and why in err, err


def test_the_deep_toml_is_refused_without_a_traceback_in_a_real_process(tmp_path):
    """The 5,000-deep TOML that was an internal error: one line, exit 2, in a process of its own."""
    import subprocess

    cfg = tmp_path / "ranklens.toml"
    cfg.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    proc = subprocess.run([sys.executable, "-m", "ranklens.cli", "monitor", "check", "--store",
                           str(tmp_path / "s.duckdb"), "--config", str(cfg)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "nested too deeply" in proc.stderr, proc.stderr


def test_dates_in_a_baseline_table_stay_accepted():
    cfg = load_config({"baseline": {"start": dt.date(2026, 10, 1), "end": "2026-10-08"}})
    assert cfg.baseline.kind == "range"


def test_a_valid_configuration_still_loads(tmp_path):
    cfg = tmp_path / "ranklens.toml"
    cfg.write_text('[evaluation]\ntracked = "ndcg@10"\n[[monitors]]\nname = "m"\nmetric = "ndcg@10"\n'
                   'threshold = 0.5\nby = "model"\nwhere = { environment = "production" }\n')
    c = load_config(Path(cfg))
    assert c.tracked == ("ndcg@10",) and c.monitors[0].by == ("model",) and c.monitors[0].threshold == 0.5


@pytest.mark.parametrize("flag,text,printed", [
    ("-m", "P." + "1" * 5000, "P_9223372036854775807"),   # atol saturates; more digits than Python converts
    ("-m", "P.0" + "0" * 5000 + "3", "P_3"),              # leading zeros only: the number is 3
    ("-M", "0" * 5000 + "2", "P_5"),
])
def test_trec_eval_numbers_longer_than_pythons_digit_limit(tmp_path, capsys, flag, text, printed):
    """A fuzz draw: 5,000 digits gave an internal error (Python refuses to convert more than 4,300)."""
    from ranklens.trec_eval_cli import run

    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("q1 0 a 1\nq1 0 b 0\n")
    r.write_text("q1 Q0 a 1 0.3 x\nq1 Q0 b 2 0.9 x\n")
    args = [flag, text] + ([] if flag == "-m" else ["-m", "P.5"])
    try:
        run(args + [str(q), str(r)])
    except SystemExit as exc:
        assert exc.code == 0, capsys.readouterr().err
    out, err = capsys.readouterr()
    assert out.split()[0] == printed and "internal error" not in err
