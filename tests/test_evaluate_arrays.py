"""``evaluate_arrays``: flat arrays with integer query codes, no ids made up. Two paths, one definition:
it must give what ``ranklens.evaluate`` gives on the same rows as a long table, to the bit."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

import ranklens
from ranklens.errors import InputError
from ranklens.evaluate import evaluate_arrays
from ranklens.measures import definition, parse_measure

MEASURES = ["ndcg", "ndcg@3", "ndcg@5-", "dcg@5", "map", "mrr@10", "P.5", "recall@10", "hit_rate@3", "err@10",
            "r_precision", "num_ret", "num_rel", "num_rel_ret"]


def _rows(seed: int):
    rng = np.random.default_rng(seed)
    n_q = 60
    sizes = rng.integers(2, 15, n_q)
    query = np.repeat(rng.choice(10_000, n_q, replace=False), sizes)  # codes need not be 0..n-1
    item = np.concatenate([rng.permutation(200)[:s] for s in sizes])
    score = rng.integers(0, 5, query.shape[0]).astype(float) / 4  # many ties
    label = rng.integers(0, 4, query.shape[0]) * (rng.random(query.shape[0]) < 0.4)
    order = rng.permutation(query.shape[0])  # rows of a query not consecutive
    return query[order], item[order], score[order], label[order].astype(float)


def _same(a, b):
    assert list(a.keys) == list(b.keys)
    assert a.queries.tolist() == b.queries.tolist()
    np.testing.assert_array_equal(a.values, b.values)  # NaN where both skip; bit-equal otherwise
    assert [float(v).hex() if not math.isnan(v) else "nan" for v in a.aggregate.values()] == \
        [float(v).hex() if not math.isnan(v) else "nan" for v in b.aggregate.values()]
    assert a.counted == b.counted
    assert [str(e) for e in a.excluded] == [str(e) for e in b.excluded]


def _has(measure: str, conv: ranklens.Convention) -> bool:
    try:
        spec = definition(parse_measure(measure)[0], conv)
    except ranklens.InvalidParameterError:
        return False
    return not spec.binary_labels  # XGBoost's map and pre refuse the graded labels of these rows


@pytest.mark.parametrize("convention", ["ranklens", "trec_eval", "lightgbm", "xgboost", "catboost", "sklearn",
                                        "ranx", "torchmetrics"])
@pytest.mark.parametrize("seed", [0, 1])
def test_same_as_evaluate_on_a_long_table(convention, seed):
    query, item, score, label = _rows(seed)
    conv = ranklens.get_convention(convention)
    ms = [m for m in MEASURES if _has(m, conv)]  # the measures the preset's peer has (the rest are refused)
    assert "ndcg@3" in ms
    table = pa.table({"query": query, "item": item, "score": score, "relevance": label})
    expected = ranklens.evaluate(table, None, ms, convention=conv)
    got = evaluate_arrays(query, score, label, ms, convention=conv, item=item)
    _same(got, expected)
    assert got.queries.tolist() == sorted(set(query.tolist()))
    if conv.ties not in ("item_desc", "item_asc"):  # no item ids needed
        _same(evaluate_arrays(query, score, label, ms, convention=conv), expected)


def test_ndcg_by_hand():
    # query 5: labels 2, 0, 1 scored 0.1, 0.9, 0.5 -> ranked 0, 1, 2 (gains linear)
    # query 2: one relevant item ranked second of two
    res = evaluate_arrays([5, 2, 5, 5, 2], [0.1, 0.3, 0.9, 0.5, 0.7], [2, 1, 0, 1, 0], ["ndcg", "ndcg@1"])
    dcg5 = 0 / math.log2(2) + 1 / math.log2(3) + 2 / math.log2(4)
    idcg5 = 2 / math.log2(2) + 1 / math.log2(3) + 0 / math.log2(4)
    ndcg2 = (1 / math.log2(3)) / 1
    assert res.queries.tolist() == [2, 5]
    assert res.values[:, 0].tolist() == pytest.approx([ndcg2, dcg5 / idcg5], rel=1e-15)
    assert res.values[:, 1].tolist() == [0.0, 0.0]
    assert res["ndcg"] == pytest.approx((ndcg2 + dcg5 / idcg5) / 2, rel=1e-15)


def test_ties_by_item_need_items():
    with pytest.raises(InputError, match=r"convention 'trec_eval' breaks ties by item id.*give the item ids"):
        evaluate_arrays([1, 1], [0.5, 0.5], [1, 0], "map", convention="trec_eval")


def test_bad_arrays_are_named():
    with pytest.raises(InputError, match="`query` must hold integer query codes"):
        evaluate_arrays(["a", "b"], [0.5, 0.4], [1, 0], "ndcg")
    with pytest.raises(InputError, match="same length"):
        evaluate_arrays([1, 1], [0.5], [1, 0], "ndcg")
    with pytest.raises(InputError, match="relevance labels in the arrays are NaN"):
        evaluate_arrays([1, 1], [0.5, 0.4], [1, np.nan], "ndcg")
    with pytest.raises(InputError, match="duplicate"):
        evaluate_arrays([1, 1], [0.5, 0.4], [1, 0], "ndcg", item=[7, 7])


def test_grouped_rows_with_ids_of_any_kind():
    # the training-loop metrics' core: string query ids become codes in the ids' order, and back
    from ranklens._integrations.grouped import evaluate_grouped

    res = evaluate_grouped([1, 0, 0, 2, 1], [0.2, 0.9, 0.1, 0.5, 0.3], ["ndcg@2", "mrr"], qid=["b", "b", "a", "a", "c"],
                           per_query=True)
    assert res.queries.tolist() == ["a", "b", "c"]
    # query b ranks its relevant item second: NDCG@2 1/log2(3), RR 1/2; a and c rank it first
    assert res.per_query_dict("mrr") == {"a": 1.0, "b": 0.5, "c": 1.0}
    assert res.per_query_dict("ndcg@2")["b"] == pytest.approx(1 / math.log2(3), rel=1e-15)
    same = ranklens.evaluate({"b": {"0": 1, "1": 0}, "a": {"2": 0, "3": 2}, "c": {"4": 1}},
                             {"b": {"0": 0.2, "1": 0.9}, "a": {"2": 0.1, "3": 0.5}, "c": {"4": 0.3}}, ["ndcg@2", "mrr"])
    _same(res, same)
