"""ir_measures' own test cases, run through ranklens under the ``ir_measures`` convention.

Ported from ir_measures (github.com/terrierteam/ir_measures) ``test/test_pytrec_eval.py``: the qrels and
run of test_NumRet / test_NumRel / test_Success / test_SetP / test_SetR, and those of test_infAP (labels -1
among them) for AP. Their literal expectations are checked, and every measure of ours that has an ir_measures
counterpart (P, R, AP, nDCG, RR, Rprec, Success, NumRel, with and without ``rel=``) is compared, per query
and on average, with what ir_measures itself computes in the test on the same files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import ranklens

ir_measures = pytest.importorskip("ir_measures")

QRELS = "0 0 D0 0\n0 0 D1 1\n0 0 D2 2\n0 0 D3 2\n0 0 D4 0\n1 0 D0 1\n1 0 D3 2\n1 0 D5 0\n"
QRELS_INFAP = "0 0 D0 1\n0 0 D1 -1\n0 0 D2 0\n0 0 D3 2\n0 0 D4 0\n1 0 D0 1\n1 0 D3 2\n1 0 D4 -1\n1 0 D5 0\n"
RUN = ("0 0 D0 1 0.8 run\n0 0 D2 2 0.7 run\n0 0 D1 3 0.3 run\n0 0 D3 4 0.4 run\n0 0 D4 5 0.1 run\n"
       "1 0 D1 1 0.8 run\n1 0 D4 2 0.7 run\n1 0 D3 3 0.3 run\n1 0 D2 4 0.4 run\n")

# (qrels, ranklens measure, ir_measures measure, ir_measures' literal {query: value} or None)
CASES = [
    (QRELS, "num_rel", "NumRel", {"0": 3, "1": 2}),  # test_NumRel
    (QRELS, "hit_rate@2", "Success@2", {"0": 1, "1": 0}),  # test_Success
    (QRELS, "hit_rate@2(rel=2)", "Success(rel=2)@2", {"0": 1, "1": 0}),
    (QRELS, "hit_rate@2(rel=3)", "Success(rel=3)@2", {"0": 0, "1": 0}),
    (QRELS, "P(rel=1)", "SetP(rel=1)", {"0": 0.6, "1": 0.25}),  # test_SetP
    (QRELS, "P(rel=2)", "SetP(rel=2)", {"0": 0.4, "1": 0.25}),
    (QRELS, "P(rel=3)", "SetP(rel=3)", {"0": 0, "1": 0}),
    (QRELS, "recall(rel=1)", "SetR(rel=1)", {"0": 1.0, "1": 0.5}),  # test_SetR
    (QRELS, "recall(rel=2)", "SetR(rel=2)", {"0": 1.0, "1": 1.0}),
    (QRELS, "recall(rel=3)", "SetR(rel=3)", {"0": 0, "1": 0}),
    (QRELS_INFAP, "map", "AP", {"0": 0.8333333333333333, "1": 0.125}),  # test_infAP
    (QRELS_INFAP, "map(rel=2)", "AP(rel=2)", {"0": 1 / 3, "1": 0.25}),
]
for _q in (QRELS, QRELS_INFAP):
    CASES += [(_q, ours, theirs, None) for ours, theirs in (
        ("map", "AP"), ("map(rel=2)", "AP(rel=2)"), ("map@3", "AP@3"), ("ndcg", "nDCG"), ("ndcg@3", "nDCG@3"),
        ("mrr", "RR"), ("mrr(rel=2)", "RR(rel=2)"), ("P@2", "P@2"), ("P@2(rel=2)", "P(rel=2)@2"), ("R@2", "R@2"),
        ("recall@3(rel=2)", "R(rel=2)@3"), ("r_precision", "Rprec"), ("num_rel", "NumRel"),
        ("hit_rate@1", "Success@1"), ("P", "SetP"), ("recall", "SetR"))]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("irm")
    out = {}
    for name, text in (("qrels", QRELS), ("qrels_infap", QRELS_INFAP), ("run", RUN)):
        (d / name).write_text(text)
        out[text] = d / name
    return out


@pytest.mark.parametrize("qrels, ours, theirs, literal", CASES,
                         ids=[f"{'infap' if c[0] is QRELS_INFAP else 'qrels'}-{c[2]}" for c in CASES])
def test_ir_measures_case(files, qrels, ours, theirs, literal):
    m = ir_measures.parse_measure(theirs)
    qr = list(ir_measures.read_trec_qrels(str(files[qrels])))
    rn = list(ir_measures.read_trec_run(str(files[RUN])))
    per = {r.query_id: r.value for r in ir_measures.iter_calc([m], qr, rn)}
    agg = ir_measures.calc_aggregate([m], qr, rn)[m]
    if literal is not None:
        assert per == pytest.approx(literal, abs=1e-12)
    res = ranklens.evaluate(files[qrels], files[RUN], [ours], convention="ir_measures")
    assert res.per_query_dict(ours) == pytest.approx(per, abs=1e-12)
    assert res[ours] == pytest.approx(agg, abs=1e-12)


@pytest.mark.parametrize("rel", [1, 2, 3])
def test_num_ret_with_a_relevance_level_is_ir_measures_numret(rel):
    """ir_measures' test_pytrec_eval.py::test_NumRet: NumRet(rel=N) counts the retrieved items labelled N or more
    (per query, as ir_measures itself gives them; before, ranklens ignored rel= on num_ret)."""
    from ir_measures import NumRet, Qrel, ScoredDoc

    qrels = [Qrel("0", "D0", 0), Qrel("0", "D1", 1), Qrel("0", "D2", 1), Qrel("0", "D3", 2), Qrel("0", "D4", 0),
             Qrel("1", "D0", 1), Qrel("1", "D3", 2), Qrel("1", "D5", 2)]
    run = [ScoredDoc("0", d, 5.0 - i) for i, d in enumerate(["D0", "D2", "D1", "D3", "D4"])]
    run += [ScoredDoc("1", d, 4.0 - i) for i, d in enumerate(["D1", "D3", "D4", "D2"])]
    want = {m.query_id: m.value for m in ir_measures.iter_calc([NumRet(rel=rel)], qrels, run)}
    key = f"num_ret(rel={rel})"
    got = ranklens.evaluate(qrels, run, [key], convention="ir_measures").per_query_dict(key)
    assert got == want and want == {1: {"0": 3.0, "1": 1.0}, 2: {"0": 1.0, "1": 1.0}, 3: {"0": 0.0, "1": 0.0}}[rel]
