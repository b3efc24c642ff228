"""Convention details not covered by a peer run: id order of trec_eval ties, overrides, validation."""

from __future__ import annotations

import pytest

import ranklens


def test_trec_eval_breaks_ties_by_id_as_string_even_for_integer_ids():
    # trec_eval sorts tied scores by docno in descending strcmp order: "9" > "10", so "9" ranks first
    for qrels, run in (({"q": {"9": 1, "10": 0}}, {"q": {"9": 1.0, "10": 1.0}}),
                       ({1: {9: 1, 10: 0}}, {1: {9: 1.0, 10: 1.0}})):
        assert ranklens.evaluate(qrels, run, ["ndcg@1"], convention="trec_eval")["ndcg@1"] == 1.0
        assert ranklens.evaluate(qrels, run, ["ndcg@1"], ties="item_asc")["ndcg@1"] == 0.0


def test_unknown_convention_lists_valid_ones():
    with pytest.raises(ranklens.InvalidParameterError, match="valid conventions: .*lightgbm.*trec_eval"):
        ranklens.get_convention("trec-evil")


def test_unknown_field_override_lists_fields():
    with pytest.raises(ranklens.InvalidParameterError, match=r"did you mean 'ties'\?.*convention fields: name, gain"):
        ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["ndcg"], tie="average")


def test_bad_field_value_names_the_field():
    with pytest.raises(ranklens.InvalidParameterError, match="`ties` must be one of"):
        ranklens.get_convention("ranklens", ties="random")


def test_query_weights_weighted_mean():
    qrels = {"a": {"x": 1, "y": 0}, "b": {"z": 1, "w": 0}}
    run = {"a": {"x": 2.0, "y": 1.0}, "b": {"z": 1.0, "w": 2.0}}  # a: RR 1, b: RR 1/2
    res = ranklens.evaluate(qrels, run, ["mrr"], weights={"a": 1, "b": 3})
    assert res["mrr"] == pytest.approx((1 * 1 + 3 * 0.5) / 4, abs=1e-15)
