"""ranx's own metric test cases, run through ranklens under the ``ranx`` convention.

Ported from ranx (github.com/AmenRa/ranx) ``tests/unit/ranx/meta/evaluate_test.py`` and
``tests/unit/ranx/metrics_test.py`` (test_hits*, test_hit_rate*, test_precision*, test_average_precision*,
test_reciprocal_rank*, test_r_precision*, test_recall*, test_dcg_jarvelin, test_ndcg_jarvelin, test_dcg_burges,
test_ndcg_burges, test_python_dict_2, test_keys_control) and ``tests/unit/ranx/metrics/zero_division_error_test.py``.
ranx's cases give each query's relevant (id, grade) pairs and its ranked ids; here the ranked ids get strictly
decreasing scores in the listed order (the order ranx's tests mean). Each expectation is the literal value of
the ranx test (or, for the two parallel cases whose ranx test compares with the mean of single-query calls,
the per-query values by hand) and, in the tests marked slow (ranx compiles each metric with numba on first
use: tens of seconds), the value ranx itself computes in the test on the same dicts.
"""

from __future__ import annotations

import numpy as np
import pytest

import ranklens

ranx = pytest.importorskip("ranx")


def _dicts(cases):
    """[(relevant [(id, grade)], ranked [id])] -> (qrels, run) dicts, query ids q0, q1, ..."""
    qrels, run = {}, {}
    for i, (rel, ranked) in enumerate(cases):
        qrels[f"q{i}"] = {f"d{d}": int(g) for d, g in rel}
        run[f"q{i}"] = {f"d{d}": float(len(ranked) - j) for j, d in enumerate(ranked)}
    return qrels, run


def _ranx(qrels, run, metric):
    return float(ranx.evaluate(ranx.Qrels.from_dict(qrels), ranx.Run.from_dict(run), metric))


def _ours(qrels, run, metric):
    return float(ranklens.evaluate(qrels, run, [metric], convention="ranx")[metric])


A = [(1, 1), (4, 1), (5, 1), (6, 1)]
RANK_A = [1, 2, 3, 4, 5, 7]
THREE = [([(1, 1), (2, 1), (3, 1)], [4, 5, 6, 2, 1, 7, 3]), ([(4, 1), (5, 1), (6, 1), (7, 1)], [4, 5, 6, 2, 1, 7, 3]),
         ([(8, 1), (9, 1)], [4, 5, 6, 2, 1, 7, 3])]
RPREC = [([(1, 1), (2, 1), (3, 1)], [2, 4, 3, 1, 5, 6, 7]), ([(1, 1), (2, 1)], [2, 4, 3, 1, 5, 6, 7])]
GRADED = [(2, 5), (4, 4), (5, 3), (10, 2)]
IDCG = 5 / np.log2(2) + 4 / np.log2(3) + 3 / np.log2(4) + 2 / np.log2(5)
IDCG_B = (2**5 - 1) / np.log2(2) + (2**4 - 1) / np.log2(3) + (2**3 - 1) / np.log2(4) + (2**2 - 1) / np.log2(5)
DCG_1 = 5 / np.log2(3) + 4 / np.log2(5) + 3 / np.log2(6)
DCG_2 = 2 / np.log2(2) + 3 / np.log2(3) + 5 / np.log2(4) + 4 / np.log2(5)
DCG_B1 = (2**5 - 1) / np.log2(3) + (2**4 - 1) / np.log2(5) + (2**3 - 1) / np.log2(6)
DCG_B2 = (2**2 - 1) / np.log2(2) + (2**3 - 1) / np.log2(3) + (2**5 - 1) / np.log2(4) + (2**4 - 1) / np.log2(5)

# (ranx test, cases, metric, ranx's literal expectation)
CASES = [
    ("test_hits_single", [(A, RANK_A)], "hits@5", 3),
    ("test_hits_parallel", [(A, RANK_A), ([(1, 1), (4, 1), (6, 1)], [1, 2, 4, 3, 5, 7])], "hits@5", 2.5),
    ("test_hit_rate_single", [([(1, 1), (2, 1), (4, 1)], [1, 2, 4, 3, 5, 7])], "hit_rate@5", 1),
    ("test_hit_rate_parallel", [([(9, 1), (6, 1), (8, 1)], RANK_A), ([(1, 1), (2, 1), (4, 1)], [1, 2, 4, 3, 5, 7])],
     "hit_rate@5", 0.5),
    ("test_precision_single", [(A, RANK_A)], "precision@5", 3 / 5),
    ("test_precision_parallel", THREE, "precision@5", (2 / 5 + 3 / 5 + 0) / 3),
    ("test_average_precision", [(A, RANK_A)], "map@6", 0.525),
    ("test_average_precision_parallel", THREE, "map@7",
     ((1 / 4 + 2 / 5 + 3 / 7) / 3 + (1 + 1 + 1 + 4 / 6) / 4 + 0) / 3),
    ("test_reciprocal_rank_single", [([(3, 1)], [2, 3, 1, 4, 5])], "mrr@5", 0.5),
    ("test_reciprocal_rank_single_no_match", [([(3, 1)], [2, 1, 4, 5])], "mrr@5", 0.0),
    ("test_reciprocal_rank_parallel (first two queries)", [([(3, 1)], [2, 3, 1, 4, 5]), ([(1, 1)], [1, 2, 3, 4, 5])],
     "mrr@5", 0.75),
    ("test_r_precision_single", RPREC[:1], "r-precision", 2 / 3),
    ("test_r_precision_parallel", RPREC, "r-precision", (2 / 3 + 1 / 2) / 2),
    ("test_recall_single", RPREC[:1], "recall@2", 1 / 3),
    ("test_recall_parallel", RPREC, "recall@2", (1 / 3 + 1 / 2) / 2),
    ("test_dcg_jarvelin 1", [(GRADED, [1, 2, 3, 4, 5])], "dcg@10", DCG_1),
    ("test_dcg_jarvelin 2", [(GRADED, [10, 5, 2, 4, 3])], "dcg@10", DCG_2),
    ("test_dcg_jarvelin 3", [(GRADED, [1, 3, 6, 7, 8])], "dcg@10", 0.0),
    ("test_ndcg_jarvelin 1", [(GRADED, [1, 2, 3, 4, 5])], "ndcg@10", DCG_1 / IDCG),
    ("test_ndcg_jarvelin 2", [(GRADED, [10, 5, 2, 4, 3])], "ndcg@10", DCG_2 / IDCG),
    ("test_ndcg_jarvelin 3", [(GRADED, [1, 3, 6, 7, 8])], "ndcg@10", 0.0),
    ("test_dcg_burges 1", [(GRADED, [1, 2, 3, 4, 5])], "dcg_burges@10", DCG_B1),
    ("test_dcg_burges 2", [(GRADED, [10, 5, 2, 4, 3])], "dcg_burges@10", DCG_B2),
    ("test_ndcg_burges 1", [(GRADED, [1, 2, 3, 4, 5])], "ndcg_burges@10", DCG_B1 / IDCG_B),
    ("test_ndcg_burges 2", [(GRADED, [10, 5, 2, 4, 3])], "ndcg_burges@10", DCG_B2 / IDCG_B),
]


@pytest.mark.parametrize("name, cases, metric, literal", CASES, ids=[c[0] for c in CASES])
def test_ranx_case(name, cases, metric, literal):
    qrels, run = _dicts(cases)
    assert _ours(qrels, run, metric) == pytest.approx(literal, abs=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("name, cases, metric, literal", CASES, ids=[c[0] for c in CASES])
def test_ranx_case_against_ranx(name, cases, metric, literal):
    qrels, run = _dicts(cases)
    expected = _ranx(qrels, run, metric)
    assert expected == pytest.approx(literal, abs=1e-12)
    assert _ours(qrels, run, metric) == pytest.approx(expected, abs=1e-12)


PY_QRELS = {"q_1": {"doc_12": 5, "doc_25": 3}, "q_2": {"doc_11": 6, "doc_2": 1}}
PY_RUN = {"q_1": {"doc_12": 0.9, "doc_23": 0.8, "doc_25": 0.7, "doc_36": 0.6, "doc_32": 0.5, "doc_35": 0.4},
          "q_2": {"doc_12": 0.9, "doc_11": 0.8, "doc_25": 0.7, "doc_36": 0.6, "doc_2": 0.5, "doc_35": 0.4}}


@pytest.mark.parametrize("metric", ["ndcg@5", "ndcg_burges@5", "map@5", "mrr", "precision@3", "recall@5", "hits@5",
                                    "hit_rate@1", "r-precision"])
@pytest.mark.slow
def test_python_dict(metric):
    # test_python_dict / test_python_dict_2: the same run in any key order gives the same value
    shuffled = {q: dict(reversed(list(d.items()))) for q, d in PY_RUN.items()}
    expected = _ranx(PY_QRELS, PY_RUN, metric)
    assert _ranx(PY_QRELS, shuffled, metric) == expected
    assert _ours(PY_QRELS, PY_RUN, metric) == pytest.approx(expected, abs=1e-12)
    assert _ours(PY_QRELS, shuffled, metric) == pytest.approx(expected, abs=1e-12)


@pytest.mark.slow
def test_keys_control():
    # ranx refuses a run whose queries are not the qrels' (q_2 judged, q_3 ranked) unless make_comparable
    run = {"q_1": PY_RUN["q_1"], "q_3": PY_RUN["q_2"]}
    with pytest.raises(AssertionError, match="query ids do not match"):
        _ranx(PY_QRELS, run, "ndcg@5")
    with pytest.raises(ranklens.errors.InputError, match="same queries"):
        _ours(PY_QRELS, run, "ndcg@5")
