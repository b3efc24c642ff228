"""ranklens against real judgments and runs with values published by other tools.

Every expected number comes from a file or a document written by someone else (see
``tests/data/*/SOURCE.md`` and ``tests/data/EXPECTED.md``):

* trec_eval's own test collection and the ``out.test*`` files its ``make quicktest`` compares
  against (parsed here, every measure ranklens supports, per query and ``all``, 4 decimals);
* TREC DL 2019/2020 passage runs with Anserini's published nDCG@10 / R@100 and the full table of
  EXPECTED.md section 3b;
* the TREC 2003 Robust run of trectools' unit tests;
* LightGBM's lambdarank example with a model's predictions and ``expected_ndcg.tsv``
  (LightGBM, XGBoost and scikit-learn values);
* gdeval.pl outputs (nDCG@k and ERR@k, 5 decimals);
* ir_measures' test cases (cwl-eval, gdeval, pytrec_eval) and ranx's hand-derived cases.

Values that exist only as text in a SOURCE.md / EXPECTED.md are written below with a pointer to
the line they come from. Nothing here is derived from ranklens's own output.
"""

from __future__ import annotations

import gzip
import math
import re
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

import ranklens
from ranklens.conventions import get_convention
from ranklens.measures import definition, parse_measure

DATA = Path(__file__).parent / "data"
TE = DATA / "trec_eval"
TT = DATA / "trectools"
DL = DATA / "trec-dl-passage"
LGB = DATA / "lightgbm-lambdarank"
IRM = DATA / "ir_measures"
GD = DATA / "gdeval-peer"

TREC_TOL = 5e-5  # trec_eval prints %6.4f


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def read_trec_eval_output(path: Path) -> dict[tuple[str, str], str]:
    """``{(measure, qid): printed value}`` from a trec_eval output file."""
    out: dict[tuple[str, str], str] = {}
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        measure, qid, value = line.split("\t")
        out[(measure.strip(), qid)] = value.strip()
    return out


_TREC_TO_RANKLENS = [
    (re.compile(r"^ndcg$"), "ndcg"),
    (re.compile(r"^ndcg_cut_(\d+)$"), "ndcg_cut.{}"),
    (re.compile(r"^map$"), "map"),
    (re.compile(r"^map_cut_(\d+)$"), "map_cut.{}"),
    (re.compile(r"^P_(\d+)$"), "P.{}"),
    (re.compile(r"^recall_(\d+)$"), "recall.{}"),
    (re.compile(r"^recip_rank$"), "recip_rank"),
    (re.compile(r"^Rprec$"), "Rprec"),
    (re.compile(r"^success_(\d+)$"), "success.{}"),
    (re.compile(r"^num_ret$"), "num_ret"),
    (re.compile(r"^num_rel$"), "num_rel"),
    (re.compile(r"^num_rel_ret$"), "num_rel_ret"),
]
_COUNTS = {"num_ret", "num_rel", "num_rel_ret"}


def ranklens_name(trec_name: str) -> str | None:
    """The ranklens spelling of a trec_eval measure it supports, else None."""
    for rx, fmt in _TREC_TO_RANKLENS:
        m = rx.match(trec_name)
        if m:
            return fmt.format(*m.groups())
    return None


def compare_with_trec_output(expected: dict[tuple[str, str], str], res: ranklens.Result,
                             name_map: dict[str, str]) -> list[str]:
    """Mismatches between trec_eval's printed values and a ranklens result (empty list = all agree)."""
    bad = []
    per_query = {key: res.per_query_dict(key) for key in res.keys}
    for (tname, qid), text in sorted(expected.items()):
        key = name_map.get(tname)
        if key is None:
            continue
        want = float(text)
        if qid == "all":
            got = res.aggregate[key]
        else:
            got = per_query[key].get(qid, math.nan)
        if tname in _COUNTS:
            ok = got == want
        else:
            ok = abs(got - want) <= TREC_TOL
        if not ok:
            bad.append(f"{tname} {qid}: trec_eval {text}, ranklens {got!r}")
    return bad


def supported_measures(expected: dict[tuple[str, str], str]) -> dict[str, str]:
    names = {m for m, _ in expected}
    return {t: ranklens_name(t) for t in sorted(names) if ranklens_name(t) is not None}


def read_trec_run(path: Path) -> dict[str, dict[str, float]]:
    """A TREC run as trec_eval reads it: fields 1, 3, 5 (trailing junk ignored), '#' lines skipped."""
    opener = gzip.open if path.suffix == ".gz" else open
    run: dict[str, dict[str, float]] = defaultdict(dict)
    with opener(path, "rt") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            t = line.split()
            run[t[0]][t[2]] = float(t[4])
    return dict(run)


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    opener = gzip.open if path.suffix == ".gz" else open
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    with opener(path, "rt") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            t = line.split()
            qrels[t[0]][t[2]] = int(t[3])
    return dict(qrels)


def truncate_like_trec_eval(run: dict[str, dict[str, float]], depth: int) -> dict[str, dict[str, float]]:
    """trec_eval ``-M depth``: per topic sort by score descending, ties by docno in descending strcmp
    order (form_res_rels.c ``comp_sim_docno``), then keep the first ``depth`` documents."""
    out = {}
    for q, docs in run.items():
        ranked = sorted(docs.items(), key=lambda kv: (-kv[1], _Desc(kv[0].encode())))
        out[q] = dict(ranked[:depth])
    return out


class _Desc:
    """Sort key that orders byte strings descending."""

    __slots__ = ("b",)

    def __init__(self, b: bytes) -> None:
        self.b = b

    def __lt__(self, other: _Desc) -> bool:
        return self.b > other.b

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.b == other.b


# ---------------------------------------------------------------------------------------------
# 1. trec_eval's test suite: every supported measure of every out.* file
# ---------------------------------------------------------------------------------------------

# expected output -> (qrels, run, convention overrides); command lines in tests/data/trec_eval/SOURCE.md
# (trec_eval's Makefile `quicktest`)
TREC_EVAL_CASES = {
    "out.test": ("qrels.test", "results.test", {}),
    "out.test(with-comments)": ("qrels.test.with-comments", "results.test", {}),
    "out.test.a": ("qrels.test", "results.test", {}),
    "out.test.aq": ("qrels.test", "results.test", {}),
    "out.test.aqc": ("qrels.test", "results.trunc", {"queries": "judged"}),  # -c
    "out.test.aqcM": ("qrels.test", "results.trunc", {"queries": "judged"}),  # -c -M100
    "out.test.aql": ("qrels.rel_level", "results.test", {"relevance_level": 2}),  # -l2
    "out.test.meas_params": ("qrels.test", "results.test", {}),
    "out.comment.test": ("qrels.comment.test.gz", "results.comment.test.gz", {}),
}


@pytest.mark.parametrize("convention", ["trec_eval", "trec_eval10"])
@pytest.mark.parametrize("case", list(TREC_EVAL_CASES))
def test_trec_eval_out_files(case, convention):
    qrels, run, overrides = TREC_EVAL_CASES[case]
    out_file = case.split("(")[0]
    expected = read_trec_eval_output(TE / out_file)
    names = supported_measures(expected)
    if case == "out.test.meas_params":
        # ndcg with custom gains is checked in test_trec_eval_ndcg_custom_gains
        names.pop("ndcg_1=3,2=9,4=4.5", None)
    assert len(names) >= 5, names  # the file really holds measures ranklens supports
    run_input = TE / run
    if case == "out.test.aqcM":
        # ranklens has no "-M" (maximum documents per topic) option: truncate the run here exactly as
        # trec_eval does (sort by score desc, docno desc, keep the first 100), then evaluate.
        run_input = truncate_like_trec_eval(read_trec_run(TE / run), 100)
        assert sorted(len(d) for d in run_input.values()) == [84, 100]
    if convention == "trec_eval10" and overrides.get("queries") == "judged":
        # trec_eval 10 with -c: all judged topics, a missing one scores 0 (no abort); see also
        # test_trec_eval10_dash_c_as_the_error_message_says
        overrides = {**overrides, "missing_ranking": "zero"}
    res = ranklens.evaluate(TE / qrels, run_input, sorted(set(names.values())), convention=convention, **overrides)
    # the queries evaluated are the ones trec_eval printed
    printed = {q for (_, q) in expected if q != "all"}
    if printed:
        assert {str(q) for q in res.queries} == printed
    num_q = int(expected[("num_q", "all")]) if ("num_q", "all") in expected else None
    if num_q is not None:
        assert len(res.queries) == num_q
    bad = compare_with_trec_output(expected, res, names)
    assert not bad, f"{len(bad)} mismatches with {out_file}:\n" + "\n".join(bad)


def test_trec_eval10_aborts_without_dash_c():
    """trec_eval 10.0 without -c stops (exit status 4) when a judged topic has no ranking (trec_eval.c;
    conventions.md: "10.0 without -c aborts (exit 4) if a qrels query is missing from the run"). The
    trec_eval10 preset ("a judged query missing from the run is an error") must refuse results.trunc,
    which has no topic 302, instead of averaging over the other two topics."""
    with pytest.raises(ranklens.InputError):
        ranklens.evaluate(TE / "qrels.test", TE / "results.trunc", ["map"], convention="trec_eval10")


def test_trec_eval10_dash_c_as_the_error_message_says():
    """trec_eval 10 with -c: mean over all judged topics, 302 scores 0 (out.test.aqc). ranklens's error
    message for the case above says "(use -c, i.e. queries='judged')"; doing exactly that must work."""
    expected = read_trec_eval_output(TE / "out.test.aqc")
    res = ranklens.evaluate(TE / "qrels.test", TE / "results.trunc", ["map", "ndcg"], convention="trec_eval10",
                            queries="judged")
    assert abs(res["map"] - float(expected[("map", "all")])) <= TREC_TOL
    assert abs(res["ndcg"] - float(expected[("ndcg", "all")])) <= TREC_TOL
    assert res.per_query_dict("map")["302"] == 0.0


def test_trec_eval_out_test_key_numbers():
    """The `all` rows quoted in EXPECTED.md section 1 (a cross-check of the parser above)."""
    expected = read_trec_eval_output(TE / "out.test.aq")
    want = {"ndcg": "0.4021", "ndcg_cut_10": "0.3016", "map": "0.1785", "recip_rank": "0.4064",
            "P_10": "0.3000", "recall_100": "0.4980"}
    for m, v in want.items():
        assert expected[(m, "all")] == v
    res = ranklens.evaluate(TE / "qrels.test", TE / "results.test", [ranklens_name(m) for m in want],
                            convention="trec_eval")
    for m, v in want.items():
        assert abs(res.aggregate[ranklens_name(m)] - float(v)) <= TREC_TOL, m


@pytest.mark.parametrize("convention", ["trec_eval", "trec_eval10"])
def test_trec_eval_ndcg_custom_gains(convention):
    """out.test.meas_params: ``-mndcg.1=3,2=9,4=4.5`` = ndcg with a label -> gain mapping."""
    expected = read_trec_eval_output(TE / "out.test.meas_params")
    rows = {q: float(v) for (m, q), v in expected.items() if m == "ndcg_1=3,2=9,4=4.5"}
    assert set(rows) == {"301", "302", "303", "all"}
    res = ranklens.evaluate(TE / "qrels.test", TE / "results.test", ["ndcg"], convention=convention,
                            gain={1: 3, 2: 9, 4: 4.5})
    got = res.per_query_dict("ndcg")
    for q in ("301", "302", "303"):
        assert abs(got[q] - rows[q]) <= TREC_TOL, (q, got[q], rows[q])
    assert abs(res.aggregate["ndcg"] - rows["all"]) <= TREC_TOL


def test_trec_eval_comment_test_key_numbers():
    """EXPECTED.md: out.comment.test map 0.2689, recip_rank 0.8595, P_10 0.7710 ('#' inside docnos)."""
    res = ranklens.evaluate(TE / "qrels.comment.test.gz", TE / "results.comment.test.gz",
                            ["map", "recip_rank", "P.10", "num_ret"], convention="trec_eval")
    assert abs(res["map"] - 0.2689) <= TREC_TOL
    assert abs(res["recip_rank"] - 0.8595) <= TREC_TOL
    assert abs(res["P.10"] - 0.7710) <= TREC_TOL
    assert res["num_ret"] == 3100  # 31 judged topics x 100 (the run's other 270 topics are not judged)


def test_trec_eval_per_topic_from_expected_md():
    """Per-topic values quoted in EXPECTED.md section 1 (out.test.aq and out.test.meas_params)."""
    want = {  # topic: ndcg, ndcg_cut_10, map, recip_rank, P_10
        "301": (0.1584, 0.1518, 0.0324, 0.1667, 0.2),
        "302": (0.6617, 0.7530, 0.4175, 1.0, 0.7),
        "303": (0.3862, 0.0, 0.0858, 0.0526, 0.0),
    }
    keys = ["ndcg", "ndcg_cut.10", "map", "recip_rank", "P.10"]
    res = ranklens.evaluate(TE / "qrels.test", TE / "results.test", keys + ["ndcg_cut.23"], convention="trec_eval")
    for q, vals in want.items():
        for k, v in zip(keys, vals):
            assert abs(res.per_query_dict(k)[q] - v) <= TREC_TOL, (q, k)
    assert abs(res.per_query_dict("ndcg_cut.23")["301"] - 0.1814) <= TREC_TOL


# ---------------------------------------------------------------------------------------------
# 1b. the CLI prints trec_eval's layout
# ---------------------------------------------------------------------------------------------

CLI_MEASURES = ["num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "recip_rank", "P.5", "P.10", "P.30",
                "P.1000", "ndcg", "ndcg_cut.10", "recall.100", "map_cut.100", "success.10"]
_TREC_LINE = re.compile(r"^(?P<m>\S+) *\t(?P<q>\S+)\t(?P<v>-?\d+(?:\.\d{4})?)$")


def _run_cli(args: list[str]) -> str:
    from click.testing import CliRunner

    from ranklens.cli import cli

    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout if hasattr(result, "stdout") else result.output


@pytest.mark.parametrize("per_query", [False, True])
def test_cli_trec_output_matches_trec_eval(per_query):
    args = ["eval", str(TE / "qrels.test"), str(TE / "results.test"), "-c", "trec_eval", "-f", "trec"]
    for m in CLI_MEASURES:
        args += ["-m", m]
    if per_query:
        args.append("--per-query")
    out = _run_cli(args)
    lines = [line for line in out.splitlines() if line.strip()]
    expected_lines = set((TE / "out.test.aq").read_text().splitlines())
    trec_names = set()
    for line in lines:
        m = _TREC_LINE.match(line)
        assert m, f"not trec_eval's layout: {line!r}"
        # trec_eval: printf("%-22s\t%s\t%6.4f\n") - the name padded to 22 columns
        assert len(line.split("\t")[0]) == max(22, len(m["m"])), line
        assert line in expected_lines, f"line not in trec_eval's out.test.aq: {line!r}"
        trec_names.add(m["m"])
    qids = [_TREC_LINE.match(line)["q"] for line in lines]
    n = len(CLI_MEASURES)
    if per_query:
        assert len(lines) == 4 * n and set(qids) == {"301", "302", "303", "all"}
        assert qids[-n:] == ["all"] * n  # the summary comes last, as in trec_eval -q
    else:
        assert len(lines) == n and set(qids) == {"all"}
    assert trec_names == {"num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "recip_rank", "P_5", "P_10", "P_30",
                          "P_1000", "ndcg", "ndcg_cut_10", "recall_100", "map_cut_100", "success_10"}
    # and against the default-measure file (no -q): every 'all' line printed also appears in out.test
    if not per_query:
        default_lines = set((TE / "out.test").read_text().splitlines())
        for line in lines:
            if _TREC_LINE.match(line)["m"] in {"num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "recip_rank",
                                               "P_5", "P_10", "P_30", "P_1000"}:
                assert line in default_lines, line


def test_cli_trec_output_relevance_level_and_all_topics():
    """``-l2`` and ``-c`` through ``--set``: the lines of out.test.aql / out.test.aqc."""
    for qrels, run, sets, out_file in [
        ("qrels.rel_level", "results.test", ["relevance_level=2"], "out.test.aql"),
        ("qrels.test", "results.trunc", ["queries=judged"], "out.test.aqc"),
    ]:
        args = ["eval", str(TE / qrels), str(TE / run), "-c", "trec_eval", "-f", "trec", "-q"]
        for s in sets:
            args += ["--set", s]
        for m in ["num_rel", "num_rel_ret", "map", "P.10", "ndcg", "recip_rank"]:
            args += ["-m", m]
        out = _run_cli(args)
        expected_lines = set((TE / out_file).read_text().splitlines())
        lines = [line for line in out.splitlines() if line.strip()]
        assert len(lines) == 4 * 6
        for line in lines:
            assert line in expected_lines, f"{out_file}: {line!r}"


# ---------------------------------------------------------------------------------------------
# 1c. the same numbers from the TREC files, a Parquet copy and a gzip copy
# ---------------------------------------------------------------------------------------------

def _has(measure: str, convention: str) -> bool:
    try:
        definition(parse_measure(measure)[0], get_convention(convention))
    except ranklens.InvalidParameterError:
        return False
    return True


FORMAT_MEASURES = ["ndcg", "ndcg_cut.10", "map", "recip_rank", "P.10", "recall.100", "Rprec", "num_rel_ret",
                   "success.5", "err@20", "ndcg@10(gain=exp)"]


def _write_parquet(tmp: Path, qrels: dict, run: dict) -> tuple[Path, Path]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    jq, ji, jl = zip(*[(q, d, r) for q, docs in qrels.items() for d, r in docs.items()])
    rq, ri, rs = zip(*[(q, d, s) for q, docs in run.items() for d, s in docs.items()])
    qp, rp = tmp / "qrels.parquet", tmp / "run.parquet"
    pq.write_table(pa.table({"query": pa.array(jq, pa.string()), "docno": pa.array(ji, pa.string()),
                             "relevance": pa.array(jl, pa.int64())}), qp)
    pq.write_table(pa.table({"query": pa.array(rq, pa.string()), "docno": pa.array(ri, pa.string()),
                             "score": pa.array(rs, pa.float64())}), rp)
    return qp, rp


def _gzip_copy(src: Path, dst: Path) -> Path:
    with open(src, "rb") as f, gzip.open(dst, "wb") as g:
        shutil.copyfileobj(f, g)
    return dst


@pytest.mark.parametrize("convention", ["trec_eval", "ir_measures", "gdeval", "ranklens"])
@pytest.mark.parametrize("pair", [("qrels.test", "results.test"), ("qrels.rel_level", "results.test"),
                                  ("qrels.test", "results.trunc")])
def test_same_numbers_from_trec_parquet_and_gzip(tmp_path, pair, convention):
    # the measures the convention's peer has (the others are refused: tests/conformance/test_peer_definitions.py)
    measures = [m for m in FORMAT_MEASURES if _has(m, convention)]
    qrels_path, run_path = TE / pair[0], TE / pair[1]
    qp, rp = _write_parquet(tmp_path, read_qrels(qrels_path), read_trec_run(run_path))
    gq = _gzip_copy(qrels_path, tmp_path / (pair[0] + ".gz"))
    gr = _gzip_copy(run_path, tmp_path / (pair[1] + ".gz"))
    results = {
        "trec": ranklens.evaluate(qrels_path, run_path, measures, convention=convention),
        "parquet": ranklens.evaluate(qp, rp, measures, convention=convention),
        "gzip": ranklens.evaluate(gq, gr, measures, convention=convention),
        "mixed": ranklens.evaluate(gq, rp, measures, convention=convention),
    }
    base = results["trec"]
    for name, res in results.items():
        assert [str(q) for q in res.queries] == [str(q) for q in base.queries], name
        assert res.aggregate == base.aggregate, name
        for key in measures:
            assert res.per_query_dict(key) == base.per_query_dict(key), (name, key)
    # and the numbers are trec_eval's (out.test.aq; out.test.aql for the graded qrels, where ndcg does not
    # depend on -l2)
    if convention == "trec_eval" and pair[1] == "results.test":
        graded = pair[0] == "qrels.rel_level"
        expected = read_trec_eval_output(TE / ("out.test.aql" if graded else "out.test.aq"))
        checks = ["ndcg", "ndcg_cut_10"] if graded else ["ndcg", "ndcg_cut_10", "map", "recip_rank", "P_10",
                                                          "recall_100", "Rprec", "num_rel_ret", "success_5"]
        for name in ("parquet", "gzip"):
            for q in ("301", "302", "303", "all"):
                for t in checks:
                    key = ranklens_name(t)
                    got = results[name].aggregate[key] if q == "all" else results[name].per_query_dict(key)[q]
                    assert abs(got - float(expected[(t, q)])) <= TREC_TOL, (name, t, q)


def test_same_numbers_from_trec_and_parquet_with_integer_ids(tmp_path):
    """TREC DL ids are numbers: a natural Parquet copy stores them as int64. Per-query values must not change
    (the runs have tied scores between passages whose ids differ in length), and the means stay Anserini's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for year, retriever in [("dl19", "SPLADE_P_P_ENSEMBLE_DISTIL"), ("dl20", "D_BERT_KD_TASB")]:
        qrels_path, run_path = _dl_paths(year, retriever)
        qrels, run = read_qrels(qrels_path), read_trec_run(run_path)
        jq, ji, jl = zip(*[(int(q), int(d), r) for q, docs in qrels.items() for d, r in docs.items()])
        rq, ri, rs = zip(*[(int(q), int(d), s) for q, docs in run.items() for d, s in docs.items()])
        qp, rp = tmp_path / f"{year}.qrels.parquet", tmp_path / f"{year}.run.parquet"
        pq.write_table(pa.table({"qid": jq, "docid": ji, "relevance": jl}), qp)
        pq.write_table(pa.table({"qid": rq, "docid": ri, "score": rs}), rp)
        a = ranklens.evaluate(qrels_path, run_path, DL_MEASURES, convention="ir_measures")
        b = ranklens.evaluate(qp, rp, DL_MEASURES, convention="ir_measures")
        assert sorted(str(q) for q in b.queries) == sorted(str(q) for q in a.queries)
        for key in DL_MEASURES:
            pa_, pb = a.per_query_dict(key), b.per_query_dict(key)
            assert {str(q): v for q, v in pb.items()} == pa_, key
            assert abs(a[key] - b[key]) <= 1e-12, key  # same values summed in another query order
        want = DL_TABLE[(year, retriever)]
        for key, w in zip(DL_MEASURES, want):
            assert abs(b[key] - w) <= TREC_TOL, (year, retriever, key)


def test_gzip_copies_in_repo_match_plain_text(tmp_path):
    """The repository stores the Robust 2003 pair gzipped; reading the decompressed text gives the same."""
    plain_q, plain_r = tmp_path / "robust03_cs_qrels.txt", tmp_path / "input.uic0301"
    plain_q.write_bytes(gzip.decompress((TT / "robust03_cs_qrels.txt.gz").read_bytes()))
    plain_r.write_bytes(gzip.decompress((TT / "input.uic0301.gz").read_bytes()))
    ms = ["map", "recip_rank", "P.1000", "ndcg_cut.10"]
    a = ranklens.evaluate(TT / "robust03_cs_qrels.txt.gz", TT / "input.uic0301.gz", ms, convention="trec_eval")
    b = ranklens.evaluate(plain_q, plain_r, ms, convention="trec_eval")
    assert a.aggregate == b.aggregate
    assert abs(a["map"] - 0.2396) <= TREC_TOL


# ---------------------------------------------------------------------------------------------
# 2. TREC DL 2019 / 2020 passage (Anserini regressions; EXPECTED.md section 3b)
# ---------------------------------------------------------------------------------------------

# EXPECTED.md 3b table: nDCG@10, nDCG@100, P@10, RR (rel>=1), MAP@100 (l2), R@100 (l2), RR (l2);
# pytrec_eval, mean over all qrels topics (= trec_eval -c). Rows BM25 / BM25_RM3 nDCG@10 and R@100 are
# also Anserini's published numbers (regressions-dl19/dl20-passage.md).
DL_TABLE = {
    ("dl19", "BM25"): (0.5058, 0.5018, 0.6186, 0.8245, 0.2476, 0.4910, 0.7036),
    ("dl19", "BM25_RM3"): (0.5216, 0.5316, 0.6512, 0.8100, 0.2807, 0.5259, 0.6767),
    ("dl19", "D_BERT_KD_TASB"): (0.7210, 0.6360, 0.8093, 0.9510, 0.4050, 0.6097, 0.8765),
    ("dl19", "OPEN_AI_ADA2"): (0.7035, 0.6407, 0.8070, 0.9186, 0.4151, 0.6235, 0.8353),
    ("dl19", "SPLADE_P_P_ENSEMBLE_DISTIL"): (0.7308, 0.6725, 0.8093, 0.9729, 0.4464, 0.6390, 0.9186),
    ("dl20", "BM25"): (0.4796, 0.4901, 0.5389, 0.8269, 0.2685, 0.5599, 0.6583),
    ("dl20", "BM25_RM3"): (0.4896, 0.5105, 0.5852, 0.7669, 0.2821, 0.6182, 0.6208),
    ("dl20", "D_BERT_KD_TASB"): (0.6854, 0.6346, 0.7352, 0.9242, 0.4520, 0.7135, 0.8350),
    ("dl20", "OPEN_AI_ADA2"): (0.6759, 0.6365, 0.7278, 0.9393, 0.4587, 0.7237, 0.8431),
    ("dl20", "SPLADE_P_P_ENSEMBLE_DISTIL"): (0.7197, 0.6771, 0.7722, 0.9565, 0.4826, 0.7653, 0.8434),
}
DL_MEASURES = ["ndcg_cut.10", "ndcg_cut.100", "P.10", "recip_rank", "map@100(rel=2)", "recall@100(rel=2)",
               "recip_rank(rel=2)"]
# Anserini's published values (SOURCE.md of trec-dl-passage): trec_eval -c -m ndcg_cut.10 / -c -l 2 -m recall.100
ANSERINI = {
    ("dl19", "BM25"): (0.5058, 0.4910), ("dl20", "BM25"): (0.4796, 0.5599),
    ("dl19", "BM25_RM3"): (0.5216, 0.5259), ("dl20", "BM25_RM3"): (0.4896, 0.6182),
}


def _dl_paths(year: str, retriever: str) -> tuple[Path, Path]:
    return DL / f"qrels.{year}-passage.txt.gz", DL / f"run.rank_llm.{retriever}.{year}.txt.gz"


@pytest.mark.parametrize("conv", [("ir_measures", {}), ("trec_eval", {"queries": "judged"})],
                         ids=["ir_measures", "trec_eval-c"])
@pytest.mark.parametrize("year,retriever", list(DL_TABLE))
def test_trec_dl_table(year, retriever, conv):
    qrels, run = _dl_paths(year, retriever)
    res = ranklens.evaluate(qrels, run, DL_MEASURES, convention=conv[0], **conv[1])
    got = [res.aggregate[m] for m in DL_MEASURES]
    want = DL_TABLE[(year, retriever)]
    bad = [f"{m}: expected {w}, got {g:.6f}" for m, g, w in zip(DL_MEASURES, got, want) if abs(g - w) > TREC_TOL]
    assert not bad, bad
    # MAP@100 equals full MAP on these 100-deep runs
    full = ranklens.evaluate(qrels, run, ["map(rel=2)"], convention=conv[0], **conv[1])
    assert abs(full["map(rel=2)"] - want[4]) <= TREC_TOL


@pytest.mark.parametrize("year,retriever", list(ANSERINI))
def test_trec_dl_anserini_published(year, retriever):
    qrels, run = _dl_paths(year, retriever)
    res = ranklens.evaluate(qrels, run, ["ndcg@10", "recall@100(rel=2)"], convention="trec_eval", queries="judged")
    ndcg, r100 = ANSERINI[(year, retriever)]
    assert abs(res["ndcg@10"] - ndcg) <= TREC_TOL
    assert abs(res["recall@100(rel=2)"] - r100) <= TREC_TOL
    assert len(res.queries) == {"dl19": 43, "dl20": 54}[year]


# ---------------------------------------------------------------------------------------------
# 3. trectools: TREC 2003 Robust (trec_eval semantics, 4 decimals)
# ---------------------------------------------------------------------------------------------

ROBUST_RECALL = {5: 0.0858, 10: 0.1314, 15: 0.1686, 20: 0.1968, 30: 0.2530, 100: 0.4243, 200: 0.5323,
                 500: 0.6569, 1000: 0.7518}


@pytest.fixture(scope="module")
def robust():
    ms = (["recip_rank", "map", "P.1000", "P.30", "recall.30", "ndcg", "ndcg_cut.10"]
          + [f"recall.{k}" for k in ROBUST_RECALL])
    return ranklens.evaluate(TT / "robust03_cs_qrels.txt.gz", TT / "input.uic0301.gz", ms, convention="trec_eval")


def test_trectools_robust03_means(robust):
    assert len(robust.queries) == 100
    assert abs(robust["recip_rank"] - 0.6466) <= TREC_TOL
    assert abs(robust["map"] - 0.2396) <= TREC_TOL
    assert abs(robust["P.1000"] - 0.0371) <= TREC_TOL
    for k, v in ROBUST_RECALL.items():
        assert abs(robust[f"recall.{k}"] - v) <= TREC_TOL, k
    # computed by pytrec_eval (SOURCE.md: "not asserted by trectools"), 6 decimals
    assert abs(robust["ndcg"] - 0.523317) <= 5e-7
    assert abs(robust["ndcg_cut.10"] - 0.391371) <= 5e-7


def test_trectools_robust03_per_topic(robust):
    want = {
        "recip_rank": {"378": 0.0017, "650": 0.1429, "624": 0.3333},
        "map": {"622": 0.4926, "609": 0.2808, "320": 0.2335},
        "P.30": {"607": 0.1333, "433": 0.0333, "375": 0.5333},
        "recall.30": {"607": 0.3636, "433": 0.0769, "375": 0.2000, "303": 0.1000},
    }
    for key, rows in want.items():
        got = robust.per_query_dict(key)
        for q, v in rows.items():
            assert abs(got[q] - v) <= TREC_TOL, (key, q, got[q], v)


def test_trectools_depth_consistency():
    """trectools: for the 10 topics of input.uic0301_top30, RR / AP / P@30 / R@30 of the top-30 run equal
    the full run's values at depth 30, while P@500 / R@500 differ."""
    top30 = ranklens.evaluate(TT / "robust03_cs_qrels.txt.gz", TT / "input.uic0301_top30",
                              ["recip_rank", "map", "P.30", "recall.30", "P.500", "recall.500"], convention="trec_eval")
    full = ranklens.evaluate(TT / "robust03_cs_qrels.txt.gz", TT / "input.uic0301.gz",
                             ["mrr@30", "map@30", "P.30", "recall.30", "P.500", "recall.500"], convention="trec_eval")
    qs = [str(q) for q in top30.queries]
    assert qs == ["303", "307", "310", "314", "320", "322", "325", "330", "336", "341"]
    for a, b in [("recip_rank", "mrr@30"), ("map", "map@30"), ("P.30", "P.30"), ("recall.30", "recall.30")]:
        fa, fb = top30.per_query_dict(a), full.per_query_dict(b)
        for q in qs:
            assert abs(fa[q] - fb[q]) <= 1e-12, (a, q)
    assert any(abs(top30.per_query_dict("P.500")[q] - full.per_query_dict("P.500")[q]) > 1e-3 for q in qs)
    assert any(abs(top30.per_query_dict("recall.500")[q] - full.per_query_dict("recall.500")[q]) > 1e-3 for q in qs)


def test_trectools_toy_r4():
    res = ranklens.evaluate(TT / "qrel1.txt", TT / "r4.run", ["recip_rank", "map", "P.1000", "recall.1000"],
                            convention="trec_eval")
    assert abs(res["recip_rank"] - 0.5) <= TREC_TOL
    assert abs(res["map"] - 0.2685) <= TREC_TOL
    assert abs(res["P.1000"] - 0.0010) <= TREC_TOL
    assert abs(res["recall.1000"] - 0.3889) <= TREC_TOL


# ---------------------------------------------------------------------------------------------
# 4. LightGBM lambdarank sample: expected_ndcg.tsv
# ---------------------------------------------------------------------------------------------

def _read_expected_ndcg() -> list[tuple[str, int, str, str]]:
    rows = []
    for line in (LGB / "expected_ndcg.tsv").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        s, k, conv, value = line.split("\t")
        rows.append((s, int(k), conv, value))
    return rows


LGB_ROWS = _read_expected_ndcg()

# expected_ndcg.tsv header -> ranklens convention, overrides and measure suffix
LGB_CONVENTIONS = {
    # LightGBM "ndcg@k": 2^rel-1, stable sort (input order for ties), ideal from the list, all-zero query = 1
    "lgb": [("lightgbm", {}, ""), ("xgboost", {}, "")],  # XGBoost ndcg@k "gives identical numbers"
    # XGBoost "ndcg@k-": all-zero query = 0
    "xgb_minus": [("xgboost", {}, "-")],
    # sklearn ndcg_score on y_true = 2^rel-1 (ties averaged); all-zero (and the 1-doc) query count 1 / 0
    "sk_exp_z1": [("sklearn", {"gain": "exponential", "empty": 1.0, "min_items": 1}, "")],
    "sk_exp_z0": [("sklearn", {"gain": "exponential", "empty": 0.0, "min_items": 1}, "")],
    # sklearn ndcg_score on the raw labels, ties averaged, all-zero queries 0
    "sk_lin_z0": [("sklearn", {"min_items": 1}, "")],
}


def _tolerance(value: str) -> float:
    decimals = len(value.split(".")[1])
    return 1e-12 if decimals >= 13 else 0.5 * 10.0 ** -decimals + 1e-15


@pytest.mark.parametrize("row", LGB_ROWS, ids=[f"{s}-{c}-ndcg@{k}" for s, k, c, _ in LGB_ROWS])
def test_lightgbm_expected_ndcg(row):
    split, k, conv_name, value = row
    want = float(value)
    for convention, overrides, suffix in LGB_CONVENTIONS[conv_name]:
        key = f"ndcg@{k}{suffix}"
        res = ranklens.evaluate(LGB / f"rank.{split}.gz", LGB / f"rank.{split}.pred", [key],
                                convention=convention, **overrides)
        assert len(res.queries) == {"test": 50, "train": 201}[split]
        assert res.counted[key] == len(res.queries)
        got = res[key]
        assert abs(got - want) <= _tolerance(value), f"{convention} {overrides} {key}: {got!r} vs {value}"


def test_lightgbm_expected_md_columns():
    """EXPECTED.md section 2: lgb == sklearn-exp on test (no ties, no all-zero query)."""
    by = {(s, k, c): float(v) for s, k, c, v in LGB_ROWS}
    for k in (1, 3, 5, 10):
        assert abs(by[("test", k, "lgb")] - by[("test", k, "sk_exp_z1")]) <= 1e-10
    res = ranklens.evaluate(LGB / "rank.test.gz", LGB / "rank.test.pred", ["ndcg@10"], convention="lightgbm")
    assert abs(res["ndcg@10"] - 0.7477712744462751) <= 1e-12


# ---------------------------------------------------------------------------------------------
# 5. gdeval.pl: nDCG@k and ERR@k (2^g-1 gain, ERR max grade 4, 5 decimals)
# ---------------------------------------------------------------------------------------------

GDEVAL_FILES = {
    "trec_eval.qrels.rel_level__results.test.tsv": (TE / "qrels.rel_level", TE / "results.test"),
    "trec_eval.qrels.test__results.test.tsv": (TE / "qrels.test", TE / "results.test"),
    "trectools.robust03_cs_qrels__input.uic0301.tsv": (TT / "robust03_cs_qrels.txt.gz", TT / "input.uic0301.gz"),
}


def _read_gdeval(path: Path) -> dict[tuple[str, str], float]:
    out = {}
    for line in path.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        m, q, v = line.split("\t")
        out[(m, q)] = float(v)
    return out


@pytest.mark.parametrize("name", list(GDEVAL_FILES))
def test_gdeval_peer(name):
    expected = _read_gdeval(GD / name)
    measures = sorted({m for m, _ in expected})
    assert measures == ["ERR@10", "ERR@20", "ERR@5", "nDCG@10", "nDCG@20", "nDCG@5"]
    keys = [m.lower() for m in measures]
    qrels, run = GDEVAL_FILES[name]
    res = ranklens.evaluate(qrels, run, keys, convention="gdeval")
    bad = []
    for (m, q), want in expected.items():
        key = m.lower()
        got = res.aggregate[key] if q == "all" else res.per_query_dict(key).get(q, math.nan)
        # per-topic values are printed with 5 decimals and the convention rounds the same way;
        # 'all' is the mean of the printed values
        if not abs(got - want) <= 1e-9:
            bad.append(f"{m} {q}: gdeval {want}, ranklens {got!r}")
    assert not bad, f"{len(bad)} mismatches:\n" + "\n".join(bad)


def test_gdeval_expected_md_key_numbers():
    """EXPECTED.md 3d: ERR@20 0.22050 and nDCG@10 0.25530 (rel_level), ERR@20 0.06163 (qrels.test),
    ERR@20 0.11230 and nDCG@10 0.37587 (robust03)."""
    for (qrels, run), want in [
        ((TE / "qrels.rel_level", TE / "results.test"), {"err@20": 0.22050, "ndcg@10": 0.25530}),
        ((TE / "qrels.test", TE / "results.test"), {"err@20": 0.06163}),
        ((TT / "robust03_cs_qrels.txt.gz", TT / "input.uic0301.gz"), {"err@20": 0.11230, "ndcg@10": 0.37587}),
    ]:
        res = ranklens.evaluate(qrels, run, list(want), convention="gdeval")
        for k, v in want.items():
            assert abs(res[k] - v) <= 5e-6, (qrels.name, k, res[k], v)


# ---------------------------------------------------------------------------------------------
# 6. ir_measures test cases (tests/test_cwl_eval.py, test_gdeval.py, test_pytrec_eval.py)
# ---------------------------------------------------------------------------------------------

def test_ir_measures_cwl():
    """cwl-eval values (tolerance 1e-4 as in ir_measures' test); the run's 2nd column is E1/E2/E3."""
    want = {
        "map": (0.7087, 0.7438, 0.3068),
        "recip_rank": (1.0, 1.0, 0.1667),
        "P@1": (1, 1, 0), "P@5": (0.6, 0.6, 0), "P@10": (0.5, 0.6, 0.4), "P@20": (0.25, 0.3, 0.2),
    }
    for convention in ("trec_eval", "ir_measures"):
        res = ranklens.evaluate(IRM / "cwl.qrels", IRM / "cwl.run", list(want), convention=convention)
        assert [str(q) for q in res.queries] == ["T1", "T2", "T3"]
        for key, vals in want.items():
            got = res.per_query_dict(key)
            for q, v in zip(["T1", "T2", "T3"], vals):
                assert abs(got[q] - v) <= 1e-4, (convention, key, q, got[q], v)
    # SOURCE.md: "pytrec_eval ndcg_cut_10 = 0.8700 0.8980 0.5052"
    res = ranklens.evaluate(IRM / "cwl.qrels", IRM / "cwl.run", ["ndcg_cut.10"], convention="trec_eval")
    for q, v in zip(["T1", "T2", "T3"], (0.8700, 0.8980, 0.5052)):
        assert abs(res.per_query_dict("ndcg_cut.10")[q] - v) <= TREC_TOL


def test_ir_measures_toy_gdeval():
    """gdeval.pl via ir_measures: nDCG@20, nDCG@2, ERR@20, ERR@2 per query and mean."""
    want = {
        "ndcg@20": ((0.6201, 0.35099), 0.485545),
        "ndcg@2": ((0.17377, 0.38685), 0.28031),
        "err@20": ((0.10175, 0.09375), 0.09775),
        "err@2": ((0.03125, 0.09375), 0.0625),
    }
    res = ranklens.evaluate(IRM / "toy.qrels", IRM / "toy.run", list(want), convention="gdeval")
    for key, (per_q, mean) in want.items():
        got = res.per_query_dict(key)
        for q, v in zip(["0", "1"], per_q):
            assert abs(got[q] - v) <= 1e-9, (key, q, got[q], v)
        assert abs(res[key] - mean) <= 1e-9, (key, res[key], mean)


def test_ir_measures_toy_neg_pytrec_eval():
    """pytrec_eval on labels -1 and a rank column contradicting the scores (test_pytrec_eval.py::test_nDCG
    and SOURCE.md)."""
    want = {
        "ndcg": (0.76018, 0.32739),
        "ndcg_cut.3": (0.76018, 0.0),
        "map": (0.83333, 0.125),
        "map(rel=2)": (0.33333, 0.25),
        "recip_rank": (1.0, 0.25),
        "P.4": (0.5, 0.25),
    }
    for convention in ("trec_eval", "ir_measures", "trec_eval10"):
        res = ranklens.evaluate(IRM / "toy_neg.qrels", IRM / "toy_neg.run", list(want), convention=convention)
        for key, vals in want.items():
            got = res.per_query_dict(key)
            for q, v in zip(["0", "1"], vals):
                assert abs(got[q] - v) < 5e-5, (convention, key, q, got[q], v)  # ir_measures: places=4


def test_ir_measures_toy_neg_custom_gains():
    """nDCG with gains {0: 1, 1: 4} (trec_eval ``-m ndcg.0=1,1=4``): 0.97177 / 0.14949.

    In trec_eval (m_ndcg.c / gain_init.c) a gain belongs to a judged relevance level >= 0: retrieved documents
    absent from the qrels (-1) or judged negative (-2, "in pool, unjudged") get gain 0 and negative judgments
    are not in the ideal list, while level 0 documents get the gain 1 given here."""
    res = ranklens.evaluate(IRM / "toy_neg.qrels", IRM / "toy_neg.run", ["ndcg"], convention="trec_eval",
                            gain={0: 1, 1: 4})
    got = res.per_query_dict("ndcg")
    assert abs(got["0"] - 0.97177) < 5e-5, got  # ir_measures' assertMetrics: places=4
    assert abs(got["1"] - 0.14949) < 5e-5, got


# ---------------------------------------------------------------------------------------------
# 7. ranx hand-derived cases (tests/unit/ranx/metrics_test.py) and ranx on trec_eval's data
# ---------------------------------------------------------------------------------------------

RANX_QRELS = {"q1": {"d2": 5, "d4": 4, "d5": 3, "d10": 2}}
RANX_RUNS = {
    "A": ["d1", "d2", "d3", "d4", "d5"],
    "B": ["d10", "d5", "d2", "d4", "d3"],
    "C": ["d1", "d3", "d6", "d7", "d8"],
}
RANX_WANT = {  # run: ndcg@10 linear (Jarvelin), ndcg@10 exp (Burges), dcg@10 linear, dcg@10 exp
    "A": (0.6108112659, 0.6347656804, 6.0379134219, 28.7269403825),
    "B": (0.8209849545, 0.6491221548, 8.115495493, 29.3766566461),
    "C": (0.0, 0.0, None, None),
}


@pytest.mark.parametrize("run_name", list(RANX_RUNS))
def test_ranx_hand_cases(run_name):
    run = {"q1": {d: float(len(RANX_RUNS[run_name]) - i) for i, d in enumerate(RANX_RUNS[run_name])}}
    ms = ["ndcg@10", "ndcg_burges@10", "dcg@10", "dcg_burges@10"]
    res = ranklens.evaluate(RANX_QRELS, run, ms, convention="ranx")
    for key, want in zip(ms, RANX_WANT[run_name]):
        if want is None:
            continue
        assert abs(res[key] - want) <= 5e-10 * max(1.0, want), (run_name, key, res[key], want)
    # the same linear / exponential DCG under the generic convention fields
    lin = ranklens.evaluate(RANX_QRELS, run, ["ndcg@10", "dcg@10"], convention="ranklens", empty=0)
    exp = ranklens.evaluate(RANX_QRELS, run, ["ndcg@10", "dcg@10"], convention="ranklens", empty=0,
                            gain="exponential")
    n_lin, n_exp, d_lin, d_exp = RANX_WANT[run_name]
    assert abs(lin["ndcg@10"] - n_lin) <= 5e-10 and abs(exp["ndcg@10"] - n_exp) <= 5e-10
    if d_lin is not None:
        assert abs(lin["dcg@10"] - d_lin) <= 5e-9 and abs(exp["dcg@10"] - d_exp) <= 5e-9


def test_ranx_matches_trec_eval_on_results_test():
    """EXPECTED.md 3e: ranx 0.3.21 on results.test: ndcg@10 0.3016, map 0.1785, mrr 0.4064; graded ndcg@10
    0.2656 (qrels.rel_level)."""
    res = ranklens.evaluate(TE / "qrels.test", TE / "results.test", ["ndcg@10", "map", "mrr"], convention="ranx")
    assert abs(res["ndcg@10"] - 0.3016) <= TREC_TOL
    assert abs(res["map"] - 0.1785) <= TREC_TOL
    assert abs(res["mrr"] - 0.4064) <= TREC_TOL
    graded = ranklens.evaluate(TE / "qrels.rel_level", TE / "results.test", ["ndcg@10"], convention="ranx")
    assert abs(graded["ndcg@10"] - 0.2656) <= TREC_TOL
