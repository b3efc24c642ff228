"""Input forms of other libraries (issue #18): recognised explicitly, never guessed into a matrix.

Every form gives exactly the Result of the same data given as a dict of dicts; where the peer is
installed, the peer's own number on the same objects (ir_measures.calc_aggregate on the records,
ranx.evaluate on the Qrels/Run) under the matching convention. Hand values: by the definitions.
"""

from __future__ import annotations

import math

import datasets
import ir_datasets.formats as irdf
import ir_measures
import numpy as np
import pandas as pd
import polars as pl
import pytest
import ranx
from ir_measures import Qrel, ScoredDoc

import ranklens
from ranklens.errors import InputError, InvalidParameterError

MEASURES = ["ndcg@10", "map", "mrr", "p@5"]


def _data(seed: int = 18, n_q: int = 12) -> tuple[dict, dict]:
    """Random judgments and runs (string ids, distinct scores: the forms, not ties, are under test)."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_q):
        docs = [f"d{q}_{i}" for i in range(int(rng.integers(3, 15)))]
        judged = rng.choice(len(docs), size=max(1, len(docs) // 2), replace=False)
        qrels[f"q{q}"] = {docs[i]: int(rng.integers(0, 4)) for i in judged}
        scores = rng.permutation(len(docs)) + rng.random()
        run[f"q{q}"] = {d: float(s) for d, s in zip(docs, scores)}
    return qrels, run


QRELS, RUN = _data()


def _rows(nested: dict) -> list[tuple]:
    return [(q, d, v) for q, docs in nested.items() for d, v in docs.items()]


def _forms() -> dict[str, tuple]:
    jr, rr = _rows(QRELS), _rows(RUN)
    jdf = pd.DataFrame(jr, columns=["query_id", "doc_id", "relevance"])
    rdf = pd.DataFrame(rr, columns=["query_id", "doc_id", "score"])
    # a PyTerrier result frame: qid, the query text, Terrier's internal docid, docno, score, rank (0-based)
    pt_run = pd.DataFrame({
        "qid": rdf.query_id, "query": "text of " + rdf.query_id, "docid": np.arange(len(rdf)) * 7,
        "docno": rdf.doc_id, "score": rdf.score,
        "rank": rdf.groupby("query_id").score.rank(ascending=False, method="first").astype(int) - 1,
    })
    pt_qrels = pd.DataFrame({"qid": jdf.query_id, "docno": jdf.doc_id, "label": jdf.relevance})
    return {
        "ir_measures lists": ([Qrel(*r) for r in jr], [ScoredDoc(*r) for r in rr]),
        "ir_measures iterators": (iter([Qrel(*r) for r in jr]), (ScoredDoc(*r) for r in rr)),
        "ir_datasets records": ([irdf.TrecQrel(q, d, v, "0") for q, d, v in jr],
                                [irdf.GenericScoredDoc(*r) for r in rr]),
        "ir_datasets iterators": ((irdf.TrecQrel(q, d, v, "Q0") for q, d, v in jr),
                                  map(irdf.GenericScoredDoc._make, rr)),
        "ranx": (ranx.Qrels(QRELS), ranx.Run(RUN)),
        "datasets.Dataset": (datasets.Dataset.from_pandas(jdf), datasets.Dataset.from_pandas(rdf)),
        "datasets.IterableDataset": (datasets.Dataset.from_pandas(jdf).to_iterable_dataset(),
                                     datasets.Dataset.from_pandas(rdf).to_iterable_dataset()),
        "rows as dicts": (jdf.to_dict("records"), iter(rdf.to_dict("records"))),
        "PyTerrier frames": (pt_qrels, pt_run),
        "PyTerrier frames (polars)": (pl.from_pandas(pt_qrels), pl.from_pandas(pt_run)),
    }


FORM_NAMES = list(_forms())


@pytest.mark.parametrize("convention", ["ranklens", "ir_measures", "ranx"])
@pytest.mark.parametrize("form", FORM_NAMES)
def test_every_form_gives_the_dict_of_dicts_result(form: str, convention: str) -> None:
    judgments, rankings = _forms()[form]
    got = ranklens.evaluate(judgments, rankings, MEASURES, convention=convention).to_dict()
    expected = ranklens.evaluate(QRELS, RUN, MEASURES, convention=convention).to_dict()
    assert got == expected
    assert len(expected["per_query"]) == len(QRELS)


IRM = [ir_measures.nDCG @ 10, ir_measures.AP, ir_measures.RR, ir_measures.P @ 5]


@pytest.mark.parametrize("form", ["ir_measures lists", "ir_datasets records"])
def test_records_give_ir_measures_own_numbers(form: str) -> None:
    judgments, rankings = _forms()[form]
    peer = ir_measures.calc_aggregate(IRM, judgments, rankings)
    got = ranklens.evaluate(judgments, rankings, MEASURES, convention="ir_measures")
    for ours, theirs in zip(MEASURES, IRM):
        assert got[ours] == pytest.approx(peer[theirs], rel=1e-12, abs=1e-15), ours


def test_ranx_objects_give_ranx_own_numbers() -> None:
    metrics = ["ndcg@10", "map", "mrr", "precision@5"]
    peer = ranx.evaluate(ranx.Qrels(QRELS), ranx.Run(RUN), metrics)
    got = ranklens.evaluate(ranx.Qrels(QRELS), ranx.Run(RUN), MEASURES, convention="ranx")
    for ours, theirs in zip(MEASURES, metrics):
        assert got[ours] == pytest.approx(float(peer[theirs]), rel=1e-12, abs=1e-15), ours


@pytest.mark.parametrize("ids", [(1, 1, 2), ("q1", "d1", "d2"), ("7", "1", "2")], ids=["int", "str", "digits"])
@pytest.mark.parametrize("wrap", [list, iter], ids=["list", "iterator"])
def test_records_by_hand(ids: tuple, wrap) -> None:
    """One query, two documents: the relevant one ranked second, so NDCG = (1/log2 3) / 1 = 0.631.

    Read as a matrix (three columns of numbers per row) the same records once gave 1.0.
    """
    q, a, b = ids
    qrels = [Qrel(q, a, 0), Qrel(q, b, 1)]
    run = [ScoredDoc(q, a, 0.9), ScoredDoc(q, b, 0.1)]
    res = ranklens.evaluate(wrap(qrels), wrap(run), ["ndcg", "mrr"])
    assert res["ndcg"] == pytest.approx(1 / math.log2(3), rel=1e-15)
    assert res["mrr"] == 0.5
    assert list(res.per_query_dict("ndcg")) == [q]


def test_trec_qrels_iteration_field_is_not_a_value() -> None:
    """TrecQrel carries (query_id, doc_id, relevance, iteration): the iteration is never read."""
    qrels = [irdf.TrecQrel("q", "a", 2, "5"), irdf.TrecQrel("q", "b", 0, "9")]
    res = ranklens.evaluate(qrels, {"q": {"a": 0.1, "b": 0.2}}, ["ndcg"], gain="exponential")
    # b (not relevant) first, then a (gain 2^2 - 1 = 3): DCG 3/log2 3, ideal 3
    assert res["ndcg"] == pytest.approx(1 / math.log2(3), rel=1e-15)


def test_pyterrier_frame_reads_qid_and_docno_not_query_text_or_docid() -> None:
    run = pd.DataFrame({"qid": ["1", "1"], "query": ["cheap flights", "cheap flights"], "docid": [0, 1],
                        "docno": ["b", "a"], "score": [2.0, 1.0], "rank": [0, 1]})
    qrels = pd.DataFrame({"qid": ["1"], "docno": ["a"], "label": [1]})
    res = ranklens.evaluate(qrels, run, ["mrr"])
    assert res["mrr"] == 0.5  # "a" is second
    assert list(res.per_query_dict("mrr")) == ["1"]
    both = run.merge(qrels, on=["qid", "docno"], how="left")  # one frame with label and score
    with pytest.raises(InputError, match=r"row 0: relevance \('label'\) is missing.*missing='exclude'"):
        ranklens.evaluate(both, None, ["mrr"])  # "b" has no label (NaN after the merge): refused unless asked
    res = ranklens.evaluate(both, None, ["mrr"], missing="exclude")
    assert res["mrr"] == 0.5 and [(e.count, e.examples) for e in res.excluded] == [(1, ("query 1 item b",))]


def test_dataset_selection_is_read_as_selected() -> None:
    ds = datasets.Dataset.from_dict({"query_id": ["q", "q", "q"], "doc_id": ["a", "b", "c"], "score": [3., 2., 1.]})
    res = ranklens.evaluate({"q": {"c": 1}}, ds.select([2, 0]), ["mrr"])  # the run is c then a: c first
    assert res["mrr"] == 0.5
    assert ranklens.evaluate({"q": {"c": 1}}, ds, ["mrr"])["mrr"] == pytest.approx(1 / 3)


GENERIC_DOC = irdf.GenericDoc("d1", "some text")

REFUSED = {
    "list of lists holding ids": ([["q1", "d1", 1], ["q1", "d2", 0]], InputError, "must be numbers"),
    "run records as judgments": ([ScoredDoc("q", "a", 1.0)], InvalidParameterError, "a record of rankings"),
    "records mixed with rows": ([Qrel("q", "a", 1), [1, 2, 3]], InvalidParameterError, "row 1 is a list"),
    "rows mixed with records": ([[1, 2, 3], Qrel("q", "a", 1)], InvalidParameterError, "row 0 is a list"),
    "documents": ([GENERIC_DOC], InvalidParameterError, "fields doc_id, text"),
    "one record": (Qrel("q", "a", 1), InvalidParameterError, "one Qrel record"),
    "iterator of rows": (iter([[1, 0, 1]]), InvalidParameterError, "iterator of list"),
    "empty iterator": (iter([]), InputError, "the iterator gave no records"),
    "ranx Run as judgments": (ranx.Run({"q": {"a": 1.0}}), InvalidParameterError, "ranx.Run"),
    "DatasetDict": (datasets.DatasetDict({"test": datasets.Dataset.from_dict({"query_id": ["q"]})}),
                    InvalidParameterError, "ds['test']"),
    "a set": ({("q", "a", 1)}, InvalidParameterError, "cannot read judgments from a set"),
    "plain tuples of numbers": ([(1, 7, 1), (1, 8, 0)], InvalidParameterError, "list of plain tuples"),
    "plain tuples among lists": ([[0, 1], (1, 0)], InvalidParameterError, "list of plain tuples"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_ambiguous_judgments_refused_with_what_is_accepted(case: str) -> None:
    obj, err, text = REFUSED[case]
    with pytest.raises(err) as info:
        ranklens.evaluate(obj, {"q": {"a": 1.0}}, ["ndcg"])
    msg = str(info.value)
    assert text in msg
    if case != "empty iterator":
        assert "Accepted judgments:" in msg and "query_id, doc_id, relevance" in msg and "ranx Qrels" in msg
    assert "\n" not in msg


@pytest.mark.parametrize("obj, text", [
    ([Qrel("q", "a", 1)], "a record of judgments"),
    (ranx.Qrels({"q": {"a": 1}}), "ranx.Qrels"),
    ([ScoredDoc("q", "a", 1.0), {"query_id": "q"}], "row 1 is a dict"),
    ([(1, 7, 0.5)], "list of plain tuples"),
])
def test_ambiguous_rankings_refused_with_what_is_accepted(obj, text: str) -> None:
    with pytest.raises(InvalidParameterError) as info:
        ranklens.evaluate({"q": {"a": 1}}, obj, ["ndcg"])
    assert text in str(info.value)
    assert "Accepted rankings:" in str(info.value) and "query_id, doc_id, score" in str(info.value)


def test_cli_style_message_names_the_accepted_forms_for_a_matrix_of_strings() -> None:
    with pytest.raises(InputError, match=r"read as a matrix of numbers .*ir_measures.ScoredDoc"):
        ranklens.evaluate({"q": {"a": 1}}, [["q", "a", 0.5]], ["ndcg"])


def test_one_table_forms_with_labels_and_scores() -> None:
    """rankings=None: a Hugging Face Dataset or rows as dicts holding both the label and the score."""
    rows = [{"query_id": "q", "doc_id": "a", "relevance": 0, "score": 2.0},
            {"query_id": "q", "doc_id": "b", "relevance": 1, "score": 1.0}]
    for obj in (rows, datasets.Dataset.from_list(rows)):
        assert ranklens.evaluate(obj, None, ["mrr"])["mrr"] == 0.5


def test_beir_style_dataset_needs_its_label_column_named() -> None:
    """BEIR / MTEB qrels on the Hub: query-id, corpus-id, score, where score is the relevance."""
    qrels = datasets.Dataset.from_dict({"query-id": ["q", "q"], "corpus-id": ["a", "b"], "score": [0, 1]})
    run = {"q": {"a": 2.0, "b": 1.0}}
    with pytest.raises(InvalidParameterError, match="no label column"):
        ranklens.evaluate(qrels, run, ["mrr"])
    assert ranklens.evaluate(qrels, run, ["mrr"], label_col="score")["mrr"] == 0.5


def test_lists_of_numbers_stay_a_matrix() -> None:
    """The scikit-learn form (row = query, column = item) is unchanged: relevant item ranked second."""
    for y_true, y_score in (([[0, 1]], [[0.9, 0.1]]), (np.array([[0, 1]]), np.array([[0.9, 0.1]]))):
        assert ranklens.evaluate(y_true, y_score, ["ndcg"])["ndcg"] == pytest.approx(1 / math.log2(3), rel=1e-15)


def test_compare_reads_an_iterator_of_judgments_once_for_every_run() -> None:
    qrels = [Qrel("q1", "a", 0), Qrel("q1", "b", 1), Qrel("q2", "c", 1)]
    runs = {"first": [ScoredDoc("q1", "a", 0.9), ScoredDoc("q1", "b", 0.1), ScoredDoc("q2", "c", 0.5)],
            "second": ranx.Run({"q1": {"a": 0.1, "b": 0.9}, "q2": {"c": 0.5}})}
    cmp = ranklens.compare(iter(qrels), runs, ["mrr"], n_resamples=100)
    # first: q1 has b second (1/2), q2 has c first (1): mean 0.75; second: both first
    assert cmp.row("first", "mrr")["mean"] == 0.75 and cmp.row("second", "mrr")["mean"] == 1.0


def test_compare_refuses_one_run_given_as_its_records() -> None:
    with pytest.raises(InvalidParameterError, match="list of records, which is one run"):
        ranklens.compare({"q": {"a": 1}}, [ScoredDoc("q", "a", 1.0), ScoredDoc("q", "b", 0.5)], ["mrr"])


@pytest.mark.parametrize("judgments", [{10**30: {"a": 1}}, {"q": {-(10**5000): 1}}, [Qrel(2**64, "a", 1)]],
                         ids=["query", "item", "record"])
def test_integer_ids_beyond_64_bits_refused_in_one_line(judgments) -> None:
    with pytest.raises(InputError, match=r"^the integer id .* does not fit in 64 bits; give such ids as strings\.$"):
        ranklens.evaluate(judgments, {"q": {"a": 1.0}}, ["ndcg"])


def test_rankings_table_without_an_item_column_refused() -> None:
    """The item ids are never guessed: row numbers once stood in for them (NDCG 0.631 where "x", the one
    relevant item, is ranked first: 1.0)."""
    run = pd.DataFrame({"query": ["q", "q"], "corpus": ["x", "y"], "score": [0.9, 0.1]})
    with pytest.raises(InvalidParameterError, match=r"no item column .*pass `item_col=`"):
        ranklens.evaluate({"q": {0: 0, 1: 1, "x": 1}}, run, ["ndcg"])
    assert ranklens.evaluate({"q": {"x": 1}}, run, ["ndcg"], item_col="corpus")["ndcg"] == 1.0


# A query declared with no ranked item ({"q": {}}): ranx, pytrec_eval and ir_measures score it as an
# empty ranking (0 on every measure here), so it counts in the mean; it is not "judged but not ranked".
EMPTY_Q = {"q1": {"a": 1, "b": 2, "c": 0}, "q2": {"c": 1, "d": 2}, "q3": {"e": 1}}
EMPTY_R = {"q1": {"a": 0.5, "b": 0.9, "c": 0.7}, "q2": {}, "q3": {"e": 0.3, "f": 0.8}}


def test_ranx_scores_a_query_with_an_empty_run_and_so_does_its_convention() -> None:
    measures = ["ndcg@10", "map", "mrr", "precision@2", "recall@2"]
    want = ranx.evaluate(ranx.Qrels(EMPTY_Q), ranx.Run(EMPTY_R), measures, make_comparable=False)
    per_query = ranx.evaluate(ranx.Qrels(EMPTY_Q), ranx.Run(EMPTY_R), measures, return_mean=False)
    for run in (EMPTY_R, ranx.Run(EMPTY_R)):
        got = ranklens.evaluate(ranx.Qrels(EMPTY_Q), run, measures, convention="ranx")
        assert got.excluded == []
        for m in measures:
            assert got.counted[m] == 3
            assert got.aggregate[m] == pytest.approx(float(want[m]), abs=1e-12)
            assert [got.per_query_dict()[q][m] for q in ("q1", "q2", "q3")] == pytest.approx(
                list(per_query[m]), abs=1e-12)


@pytest.mark.parametrize("run", [EMPTY_R])
def test_pytrec_eval_and_ir_measures_count_a_query_with_an_empty_run(run) -> None:
    import pytrec_eval

    want = pytrec_eval.RelevanceEvaluator(EMPTY_Q, {"ndcg_cut_10", "map", "recip_rank"}).evaluate(run)
    got = ranklens.evaluate(EMPTY_Q, run, ["ndcg@10", "map", "mrr"], convention="trec_eval").per_query_dict()
    assert sorted(got) == sorted(want) == ["q1", "q2", "q3"]
    for q in want:
        assert got[q]["ndcg@10"] == pytest.approx(want[q]["ndcg_cut_10"], abs=1e-12)
        assert got[q]["map"] == pytest.approx(want[q]["map"], abs=1e-12)
        assert got[q]["mrr"] == pytest.approx(want[q]["recip_rank"], abs=1e-12)
    irm = {(m.query_id, str(m.measure)): m.value
           for m in ir_measures.iter_calc([ir_measures.nDCG @ 10, ir_measures.AP], EMPTY_Q, run)}
    got = ranklens.evaluate(EMPTY_Q, run, ["ndcg@10", "map"], convention="ir_measures").per_query_dict()
    for q in ("q1", "q2", "q3"):
        assert got[q]["ndcg@10"] == pytest.approx(irm[(q, "nDCG@10")], abs=1e-12)
        assert got[q]["map"] == pytest.approx(irm[(q, "AP")], abs=1e-12)


def test_a_rankings_dict_with_no_query_is_still_refused() -> None:
    with pytest.raises(InputError, match="rankings is empty"):
        ranklens.evaluate(EMPTY_Q, {}, ["ndcg@10"])
    # queries declared but nothing ranked at all: a broken export more likely than a system that
    # returned nothing for every query (pytrec_eval would print zeros): refused, saying so
    with pytest.raises(InputError, match="every query's list is empty"):
        ranklens.evaluate(EMPTY_Q, {"q1": {}, "q2": {}, "q3": {}}, ["ndcg@10"])


def test_random_runs_with_empty_queries_match_ranx_and_pytrec_eval() -> None:
    import pytrec_eval

    rng = np.random.default_rng(7)
    qrels, run = {}, {}
    for q in range(60):
        docs = [f"d{i}" for i in range(int(rng.integers(1, 12)))]
        qrels[f"q{q}"] = {d: int(rng.integers(0, 3)) for d in docs}
        ranked = [d for d in docs + ["x1", "x2"] if rng.random() < 0.6] if q % 4 else []
        run[f"q{q}"] = {d: float(rng.integers(0, 4)) / 2 for d in ranked}  # ties; every 4th query empty
    measures = ["ndcg@10", "map", "mrr", "precision@5", "recall@10"]
    rx = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), measures, return_mean=False)
    ours = ranklens.evaluate(qrels, run, measures, convention="ranx")
    assert ours.counted["map"] == 60
    per = ours.per_query_dict()
    for m in measures:
        got = [per[q][m] for q in ranx.Run(run).keys()]
        assert got == pytest.approx(list(rx[m]), abs=1e-12), m
    pt = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "map", "recip_rank", "P_5", "recall_10"}).evaluate(run)
    per = ranklens.evaluate(qrels, run, measures, convention="trec_eval").per_query_dict()
    names = {"ndcg@10": "ndcg_cut_10", "map": "map", "mrr": "recip_rank", "precision@5": "P_5",
             "recall@10": "recall_10"}
    assert sorted(per) == sorted(pt)
    for q in pt:
        for m, name in names.items():
            assert per[q][m] == pytest.approx(pt[q][name], abs=1e-6), (q, m)
