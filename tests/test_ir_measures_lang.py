"""ir_measures' measure language (:mod:`ranklens._defs.irmeasures`), checked against ir_measures itself.

Every measure string below, and the ir_measures object it parses to, is evaluated by ranklens under
``convention="ir_measures"`` and by ir_measures (its default pipeline: pytrec_eval, its MS MARCO provider for
``RR@k``, gdeval for ``nDCG(dcg='exp-log2')@k`` and ``ERR@k``) in the test, per query and on average, on the
TREC DL 2019/2020 runs of ``tests/data/trec-dl-passage`` (SOURCE.md; the SPLADE runs have tied scores in most
topics) and on random runs made of ties. What ranklens does not reproduce is refused in one line naming it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import ranklens
from ranklens import InvalidParameterError
from ranklens._defs.irmeasures import convention_groups, parse, provider
from ranklens.measures import check_measures, parse_measure, parse_measures

ir_measures = pytest.importorskip("ir_measures")

DL = Path(__file__).parent / "data" / "trec-dl-passage"

#: every measure of ir_measures' language ranklens computes, in ir_measures' spelling
SUPPORTED = [
    "nDCG@10", "nDCG", "NDCG@5", "nDCG@1000", "nDCG(dcg='log2')@10", "nDCG(dcg='exp-log2')@10",
    "nDCG(dcg='exp-log2')@20", "nDCG(gains={0:0,1:1,2:3})", "nDCG(gains={0:0,1:1,2:3,3:7})@10",
    "P@10", "P@5", "P(rel=2)@10", "P(rel=1)@10", "Precision@20", "R@100", "R(rel=2)@100", "Recall@10",
    "AP", "MAP", "AP(rel=2)", "AP@100", "AP(rel=2)@10", "RR", "MRR", "RR@10", "MRR@10", "RR(rel=2)", "RR(rel=2)@5",
    "ERR@20", "ERR@10", "Success@10", "Success(rel=2)@5", "Rprec", "RPrec(rel=2)", "NumRet", "NumRel",
    "NumRelRet", "NumRet(rel=2)", "SetP", "SetP(rel=2)", "SetR", "SetR(rel=2)", "SetF", "SetF(rel=2)",
    "SetF(beta=0.5)", "Bpref", "BPref(rel=2)", "infAP", "infAP(rel=2)", "IPrec@0.5", "IPrec@0.0", "IPrec(rel=2)@0.3",
    "Judged@10", "Judged@100", "Judged",
]


def _ir_measures(measures, qrels, run):
    """ir_measures' aggregates and per-query values ({str(measure): {query: value}})."""
    objs = list(dict.fromkeys(ir_measures.parse_measure(m) for m in measures))  # MAP is AP, P(rel=1)@10 is P@10
    # ir_measures 0.4.3's pytrec_eval provider may put an nDCG without gains= into the invocation of an
    # nDCG(gains=...) of the same call (the first of a set, which depends on the hash seed): each measure with
    # gains= goes alone, so that every value is the one ir_measures gives for the measure alone
    qrels, run = list(qrels), list(run)
    batches = [[o for o in objs if "gains" not in o.params]] + [[o] for o in objs if "gains" in o.params]
    agg, per = {}, {str(o): {} for o in objs}
    for batch in (b for b in batches if b):
        agg.update({str(o): v for o, v in ir_measures.calc_aggregate(batch, qrels, run).items()})
        for metric in ir_measures.iter_calc(batch, qrels, run):
            per[str(metric.measure)][metric.query_id] = metric.value
    return objs, agg, per


def _same(res, key, agg, per, tol=1e-12):
    assert math.isclose(res[key], agg, rel_tol=0, abs_tol=tol), (key, res[key], agg)
    ours = res.per_query_dict(key)
    assert set(ours) == set(per), key  # the same queries: every judged query
    for q, v in per.items():
        assert math.isclose(ours[q], v, rel_tol=0, abs_tol=tol), (key, q, ours[q], v)


def _dl(year: str, retriever: str) -> tuple[Path, Path]:
    return DL / f"qrels.{year}-passage.txt.gz", DL / f"run.rank_llm.{retriever}.{year}.txt.gz"


RUNS = [("dl19", "BM25"), ("dl20", "BM25"), ("dl19", "SPLADE_P_P_ENSEMBLE_DISTIL"),
        ("dl20", "SPLADE_P_P_ENSEMBLE_DISTIL")]
MORE_RUNS = [("dl19", "BM25_RM3"), ("dl20", "BM25_RM3"), ("dl19", "D_BERT_KD_TASB"), ("dl20", "D_BERT_KD_TASB"),
             ("dl19", "OPEN_AI_ADA2"), ("dl20", "OPEN_AI_ADA2")]


def _check_dl(year, retriever):
    qp, rp = _dl(year, retriever)
    qrels, run = list(ir_measures.read_trec_qrels(str(qp))), list(ir_measures.read_trec_run(str(rp)))
    objs, agg, per = _ir_measures(SUPPORTED, qrels, run)
    by_string = ranklens.evaluate(qp, rp, SUPPORTED, convention="ir_measures")
    by_object = ranklens.evaluate(qp, rp, objs, convention="ir_measures")
    assert by_string.keys == SUPPORTED and by_object.keys == [str(o) for o in objs]
    for text in SUPPORTED:
        obj = str(ir_measures.parse_measure(text))
        _same(by_string, text, agg[obj], per[obj])
        _same(by_object, obj, agg[obj], per[obj])


@pytest.mark.parametrize("year, retriever", RUNS)
def test_trec_dl_runs_every_measure_string_and_object(year, retriever):
    _check_dl(year, retriever)


@pytest.mark.slow
@pytest.mark.parametrize("year, retriever", MORE_RUNS)
def test_trec_dl_other_runs(year, retriever):
    _check_dl(year, retriever)


def _random_case(seed: int):
    """Queries with scores drawn from 4 values (ties everywhere), labels 0-3 and -1; some judged queries not
    ranked, some ranked queries not judged, a query judged with no relevant item; numeric ids (gdeval's)."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(40):
        qid = str(100 + q)
        docs = [f"d{rng.integers(0, 120)}" for _ in range(int(rng.integers(1, 45)))]
        if q % 7 != 3:
            qrels[qid] = {d: int(rng.integers(-1, 4)) for d in docs[: max(1, len(docs) // 2)]}
        if q == 5:
            qrels[qid] = dict.fromkeys(qrels[qid], 0)
        if q % 5 != 2:
            run[qid] = {d: float(rng.integers(0, 4)) / 3 for d in {*docs, f"x{rng.integers(0, 300)}"}}
    return qrels, run


RANDOM = SUPPORTED


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_tie_heavy_runs(seed):
    qrels, run = _random_case(seed)
    q = [ir_measures.Qrel(qid, d, rel) for qid, docs in qrels.items() for d, rel in docs.items()]
    r = [ir_measures.ScoredDoc(qid, d, s) for qid, docs in run.items() for d, s in docs.items()]
    objs, agg, per = _ir_measures(RANDOM, q, r)
    res = ranklens.evaluate(qrels, run, objs, convention="ir_measures")
    assert res.keys == [str(o) for o in objs]
    for o in objs:
        _same(res, str(o), agg[str(o)], per[str(o)])
    # the same numbers one measure at a time (each under its provider's convention alone)
    for text in RANDOM[:: 5]:
        alone = ranklens.evaluate(qrels, run, [text], convention="ir_measures")
        o = str(ir_measures.parse_measure(text))
        _same(alone, text, agg[o], per[o])


def test_one_meaning_per_name():
    # a name means the same measure in ranklens' spelling and in ir_measures' (the convention says how it is
    # computed): the parsed fields agree, and an ir_measures object is the measure its str() spells
    pairs = [("P@10", "p@10"), ("R@100", "recall@100"), ("AP", "map"), ("AP@100", "map@100"), ("RR", "mrr"),
             ("RR@10", "mrr@10"), ("nDCG@10", "ndcg@10"), ("Success@10", "success@10"), ("Rprec", "r_precision"),
             ("ERR@20", "err@20"), ("AP(rel=2)", "map(rel=2)"), ("R(rel=2)@100", "recall@100(rel=2)"),
             ("P(rel=2)@10", "P@10(rel=2)"), ("nDCG(dcg='exp-log2')@10", "ndcg_exp@10"), ("SetP", "P"),
             ("SetR", "recall"), ("NumRet", "num_ret"), ("NumRel", "num_rel"), ("NumRet(rel=2)", "num_ret(rel=2)")]
    fields = ("family", "k", "gain", "empty", "relevance_level", "settings")
    for theirs, ours in pairs:
        a, b = parse_measure(theirs)[0], parse_measure(ours)[0]
        assert [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields], (theirs, ours)
        c = parse_measure(ir_measures.parse_measure(theirs))[0]
        assert [getattr(c, f) for f in fields] == [getattr(a, f) for f in fields], theirs
        assert c.key == str(ir_measures.parse_measure(theirs))
    # rel=1 is ir_measures' default: P(rel=1)@10 is P@10 there (equal objects), and here (the convention's level)
    assert ir_measures.parse_measure("P(rel=1)@10") == ir_measures.P @ 10
    assert parse_measure("P(rel=1)@10")[0].relevance_level is None
    # the same numbers for an object and its string under other conventions too
    qrels, run = _random_case(3)
    for conv in ("ranklens", "trec_eval"):
        objs = [ir_measures.nDCG @ 10, ir_measures.P(rel=2) @ 5, ir_measures.AP, ir_measures.R @ 20]
        a = ranklens.evaluate(qrels, run, objs, convention=conv)
        b = ranklens.evaluate(qrels, run, [str(o) for o in objs], convention=conv)
        assert a.aggregate == b.aggregate and np.array_equal(a.values, b.values, equal_nan=True), conv


def test_parsed_as_ir_measures_parses():
    # aliases and the names that fix parameters: ir_measures' own equality says which measure each string is
    for text, same_as in [("NDCG@10", "nDCG@10"), ("MAP", "AP"), ("MRR@10", "RR@10"), ("Precision@5", "P@5"),
                          ("Recall@5", "R@5"), ("RPrec", "Rprec"), ("NumRelRet", "NumRet(rel=1)"),
                          ("nDCG(dcg='log2')@10", "nDCG@10")]:
        assert ir_measures.parse_measure(text) == ir_measures.parse_measure(same_as)
        a, b = parse_measure(text)[0], parse_measure(same_as)[0]
        assert (a.family, a.k, a.gain, a.relevance_level) == (b.family, b.k, b.gain, b.relevance_level), text
    # a space-separated list, as ir_measures' command line takes it
    assert [m.key for m in parse_measures("nDCG@10 P(rel=2)@5  RR@10")] == ["nDCG@10", "P(rel=2)@5", "RR@10"]
    f = parse("nDCG(gains={0: 0, 1: 1, 2: 3})@10")
    assert (f["family"], f["k"], dict(f["settings"])["gain"]) == ("ndcg", 10, ((0.0, 0.0), (1.0, 1.0), (2.0, 3.0)))
    # the provider ir_measures picks for each (its DefaultPipeline's first that supports the measure)
    pipeline = ir_measures.DefaultPipeline.providers
    for text in ("nDCG@10", "nDCG(dcg='exp-log2')@10", "RR", "RR@10", "ERR@20", "P(rel=2)@10", "SetP", "NumRet"):
        first = next(p.NAME for p in pipeline if p.is_available() and p.supports(ir_measures.parse_measure(text)))
        assert provider(parse_measure(text)[0]) == first, text


# (measure, a piece of the refusal) : each refused in one line naming it; ir_measures refuses the syntax too
REFUSED_SYNTAX = ["P(2)@10", "P(rel=-1)@10", "nDCG@@10", "P@10.5", "P(rel=2.5)@10", "nDCG(dcg='exp')@10",
                  "nDCG(foo=1)@10", "P(rel=x)@10", "SetF(beta=2)", "RBP(p=1)"]
REFUSED_NAMES = ["Foo@10", "ndcg@10 Bar", "alpha_nDCG@10"]
# (Bpref, infAP, IPrec@r: computed since #22 point 3, checked against ir_measures in
# tests/conformance/test_cited_peers.py::test_ir_measures)
NOT_REPRODUCED = ["RBP(p=0.8)", "RBP", "NumQ", "nDCG(judged_only=True)@10", "AP(judged_only=True)", "INST", "SDCG@10"]


@pytest.mark.parametrize("text", REFUSED_SYNTAX + REFUSED_NAMES + NOT_REPRODUCED)
def test_refusals_name_the_measure(text):
    with pytest.raises(InvalidParameterError) as err:
        ranklens.evaluate({"1": {"a": 1}}, {"1": {"a": 1.0}}, [text], convention="ir_measures")
    line = str(err.value)
    assert "\n" not in line
    named = [t for t in text.split() if t not in ("ndcg@10",)][-1]
    assert repr(named) in line or named in line, line
    if text in NOT_REPRODUCED:  # said why, not "unknown"
        assert "unknown measure" not in line and ("ranklens" in line or "provider" in line), line
    if text in REFUSED_SYNTAX or text in ("Foo@10",):
        try:  # ir_measures refuses them too (when it parses them, its validation refuses the parameters)
            ir_measures.parse_measure(text).validate_params()
        except (ValueError, NameError, AssertionError):
            pass
        else:
            pytest.fail(f"ir_measures accepts {text}")


@pytest.mark.parametrize("text, why", [
    ("nDCG(dcg='exp-log2')", "ranx provider"), ("ERR", "ERR without a cutoff"), ("NumRel(rel=2)", "rel=1 only"),
    ("P", None), ("nDCG(gains={0:0,1:0.5,2:3})", "fractional gain"), ("nDCG(gains={1:1.5})@10", "fractional gain")])
def test_refusals_under_the_ir_measures_preset(text, why):
    qrels, run = {"1": {"a": 1}}, {"1": {"a": 1.0}}
    if why is None:  # P without a cutoff: ir_measures needs one for its P; ours is trec_eval's set_P, as SetP
        obj_p = ir_measures.P
        with pytest.raises(InvalidParameterError, match="needs cutoff"):
            ranklens.evaluate(qrels, run, [obj_p], convention="ir_measures")
        return
    with pytest.raises(InvalidParameterError, match=why) as err:
        ranklens.evaluate(qrels, run, [text], convention="ir_measures")
    assert text in str(err.value)
    obj = ir_measures.parse_measure(text)
    if why == "fractional gain":  # its provider is found, and refuses the gains when it evaluates
        with pytest.raises(TypeError, match="integer"):
            ir_measures.calc_aggregate([obj], [ir_measures.Qrel("1", "a", 1)], [ir_measures.ScoredDoc("1", "a", 1.0)])
        return
    supported = [p.NAME for p in ir_measures.DefaultPipeline.providers if p.is_available() and p.supports(obj)]
    assert supported == (["ranx"] if why == "ranx provider" else [])  # ir_measures' own providers for it


def test_numrel_of_a_judged_query_missing_from_the_run():
    # ir_measures reports every measure of a judged query missing from the run as 0 (its Evaluator's default),
    # NumRel included (the preset does too); trec_eval -c counts that query's relevant items
    qrels = {"1": {"a": 1, "b": 2}, "2": {"c": 1}}
    run = {"1": {"a": 0.5, "b": 0.2}}
    q = [ir_measures.Qrel(qid, d, rel) for qid, docs in qrels.items() for d, rel in docs.items()]
    r = [ir_measures.ScoredDoc(qid, d, s) for qid, docs in run.items() for d, s in docs.items()]
    theirs = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.NumRel], q, r)}
    assert theirs == {"1": 2, "2": 0}
    res = ranklens.evaluate(qrels, run, [ir_measures.NumRel, "num_rel"], convention="ir_measures")
    assert res.per_query_dict("NumRel") == res.per_query_dict("num_rel") == theirs and res["NumRel"] == 2
    assert ranklens.evaluate(qrels, run, ["num_rel"], convention="ranklens").per_query_dict("num_rel") == {
        "1": 2, "2": 1}  # counted by hand: q2 has one relevant item


def test_providers_group_and_join():
    conv = ranklens.get_convention("ir_measures")
    ms = parse_measures(["nDCG@10", "RR@10", "ERR@20", "AP", "nDCG(gains={0:0,1:1,2:3})"])
    groups = convention_groups(conv, ms)
    assert [idx for _, idx in groups] == [[0, 3], [1], [2], [4]]
    assert [(c.ties, c.score_precision, c.gain if isinstance(c.gain, str) else "map") for c, _ in groups] == [
        ("item_desc", "float32", "linear"), ("item_asc", "float64", "linear"), ("item_desc", "float64", "exponential"),
        ("item_desc", "float32", "map")]
    # one plan takes one convention: a measure computed under other fields is refused there, by name
    with pytest.raises(InvalidParameterError, match="RR@10"):
        check_measures(ms, conv)
    # fields changed from the preset are changed for every provider
    changed = convention_groups(conv.replace(ties="item_asc", score_precision="float64"), ms[:2])
    assert len(changed) == 1


def test_command_line_and_compare():
    from click.testing import CliRunner

    from ranklens.cli import cli

    qp, rp = _dl("dl19", "SPLADE_P_P_ENSEMBLE_DISTIL")
    measures = "nDCG@10 RR@10 nDCG(dcg='exp-log2')@10 P(rel=2)@10 R@100"
    out = CliRunner().invoke(cli, ["eval", str(qp), str(rp), "-c", "ir_measures", "-m", measures, "-f", "json"])
    assert out.exit_code == 0, out.output
    got = json.loads(out.output)
    agg = got["aggregate"] if "aggregate" in got else next(iter(got.values()))["aggregate"]
    objs, theirs, _ = _ir_measures(measures.split(), list(ir_measures.read_trec_qrels(str(qp))),
                                   list(ir_measures.read_trec_run(str(rp))))
    for o in objs:
        assert math.isclose(agg[str(o)], theirs[str(o)], abs_tol=1e-12), o
    one = CliRunner().invoke(cli, ["explain", str(qp), str(rp), "-Q", "1037798", "-c", "ir_measures", "-m",
                                   "nDCG(dcg='exp-log2')@10", "-f", "json"])
    assert one.exit_code == 0, one.output
    per = _ir_measures(["nDCG(dcg='exp-log2')@10"], list(ir_measures.read_trec_qrels(str(qp))),
                       list(ir_measures.read_trec_run(str(rp))))[2]["nDCG(dcg='exp-log2')@10"]
    assert math.isclose(json.loads(one.output)["value"], per["1037798"], abs_tol=1e-12)
    bad = CliRunner().invoke(cli, ["eval", str(qp), str(rp), "-c", "ir_measures", "-m", "NumQ"])
    assert bad.exit_code == 2 and "NumQ" in bad.output and "Traceback" not in bad.output
    # compare takes the same measures, strings or objects
    other = _dl("dl19", "BM25")[1]
    cmp = ranklens.compare(qp, [rp, other], [ir_measures.nDCG @ 10, ir_measures.RR @ 10], convention="ir_measures",
                           n_resamples=200)
    assert cmp.measures == ["nDCG@10", "RR@10"]
    for key in cmp.measures:
        alone = ranklens.evaluate(qp, rp, [key], convention="ir_measures")[key]
        assert math.isclose(cmp.row(cmp.runs[0], key)["mean"], alone, abs_tol=1e-12)


def test_explain_takes_the_measure_and_its_provider():
    qp, rp = _dl("dl20", "SPLADE_P_P_ENSEMBLE_DISTIL")
    objs, _, per = _ir_measures(["nDCG@10", "nDCG(dcg='exp-log2')@10"], list(ir_measures.read_trec_qrels(str(qp))),
                                list(ir_measures.read_trec_run(str(rp))))
    for query in sorted(per["nDCG@10"])[:3]:
        for o in objs:
            e = ranklens.explain(qp, rp, query, measure=o, convention="ir_measures")
            assert math.isclose(e.value, per[str(o)][query], abs_tol=1e-12), (query, o)
        e = ranklens.explain(qp, rp, query, k=10, measure="nDCG(dcg='exp-log2')", convention="trec_eval")
        assert (e.measure, e.k, e.convention.name) == ("nDCG(dcg='exp-log2')@10", 10, "trec_eval")
    with pytest.raises(InvalidParameterError, match="one NDCG or DCG measure"):
        ranklens.explain(qp, rp, "1030303", measure="RR@10", convention="ir_measures")
