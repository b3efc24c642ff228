"""ranklens.explain: the seeds' table, and attribution of a difference between conventions."""

from __future__ import annotations

import math

import pytest

import ranklens


def d(i: int) -> float:
    return 1.0 / math.log2(i + 1)


SEED_X = {"x": {"item_a": 0, "item_b": 0, "item_c": 1, "item_d": 1, "item_e": 1}}
SEED_RUN = {"x": {"item_a": 5, "item_b": 4, "item_c": 3, "item_d": 2, "item_e": 1}}


def test_seed_table_columns():
    e = ranklens.explain(SEED_X, SEED_RUN, "x")
    assert [r["position"] for r in e.rows] == [1, 2, 3, 4, 5]
    assert [r["relevance"] for r in e.rows] == [0, 0, 1, 1, 1]
    for r in e.rows:
        assert r["discount"] == pytest.approx(d(r["position"]), abs=1e-15)
        assert r["contribution"] == pytest.approx(r["gain"] * d(r["position"]), abs=1e-15)
    assert e.rows[-1]["running_dcg"] == pytest.approx(1.31752, abs=1e-5)  # seed 001
    assert e.idcg == pytest.approx(2.13093, abs=1e-5)
    assert e.value == pytest.approx(0.61828, abs=1e-5)
    assert [r["gain"] for r in e.ideal_rows] == [1, 1, 1, 0, 0]
    assert "running DCG" not in e.table() and "DCG" in e.table()


def test_seed_ndcg_at_3():
    e = ranklens.explain(SEED_X, SEED_RUN, "x", k=3)
    assert e.dcg == pytest.approx(0.5, abs=1e-15)
    assert e.idcg == pytest.approx(2.13093, abs=1e-5)
    assert e.value == pytest.approx(0.23464, abs=1e-5)


def test_tie_groups_use_mean_gain():
    e = ranklens.explain({"q": {"a": 3, "b": 0, "c": 1}}, {"q": {"a": 1.0, "b": 1.0, "c": 0.5}}, "q")
    assert e.rows[0]["gain_used"] == pytest.approx(1.5) and e.rows[1]["gain_used"] == pytest.approx(1.5)
    dcg = 1.5 * d(1) + 1.5 * d(2) + 1 * d(3)
    assert e.dcg == pytest.approx(dcg, abs=1e-15)
    assert "tie" in e.note


def test_compare_attributes_each_choice():
    # judged d9 (label 2) is not retrieved; ranked list labels 1, 0, 2
    qrels = {"q": {"a": 1, "b": 0, "c": 2, "d9": 2}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    e = ranklens.explain(qrels, run, "q", compare="lightgbm")
    lin_judg = (1 * d(1) + 2 * d(3)) / (2 * d(1) + 2 * d(2) + 1 * d(3))
    g = lambda x: 2.0**x - 1  # noqa: E731
    exp_list = (g(1) * d(1) + g(2) * d(3)) / (g(2) * d(1) + g(1) * d(2))
    assert e.value == pytest.approx(lin_judg, abs=1e-15)
    assert e.value_b == pytest.approx(exp_list, abs=1e-15)
    fields = [x.field for x in e.differences]
    assert fields == ["gain", "ideal"]
    exp_judg = (g(1) * d(1) + g(2) * d(3)) / (g(2) * d(1) + g(2) * d(2) + g(1) * d(3))
    assert e.differences[0].value_after == pytest.approx(exp_judg, abs=1e-15)
    assert sum(x.change for x in e.differences) == pytest.approx(exp_list - lin_judg, abs=1e-15)
    assert "queries" in e.aggregate_only


def test_unknown_query_is_an_error():
    with pytest.raises(ranklens.InputError, match="neither judged nor ranked"):
        ranklens.explain(SEED_X, SEED_RUN, "nope")


def test_shared_rank_group_past_the_cutoff_adds_nothing():
    # Evidently's ties: b, c, d tie at positions 2-4 and share rank int(1 + (3 + 1) / 2) = 3, beyond k=2, so
    # DCG@2 is a's gain alone: 1 / log2(2) = 1 (the table is the kernel's, as evaluate computes it)
    qrels = {"q": {"a": 1, "b": 2, "c": 1, "d": 1}}  # every tied item relevant: each would add if counted
    run = {"q": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 2.0}}
    e = ranklens.explain(qrels, run, "q", k=2, measure="dcg", convention="evidently")
    assert e.dcg == 1.0 and e.value == 1.0
    assert [r["contribution"] for r in e.rows] == [1.0, 0.0]
    assert e.rows[1]["discount"] == pytest.approx(d(3), abs=1e-15)  # the shared rank's discount, shown
    assert ranklens.evaluate(qrels, run, ["dcg@2"], convention="evidently")["dcg@2"] == e.dcg


def test_every_convention_field_is_a_value_or_an_aggregate_field():
    """explain attributes a difference field by field: a new Convention field must be classified in conventions.py."""
    import dataclasses

    from ranklens.conventions import AGGREGATE_FIELDS, VALUE_FIELDS, Convention

    fields = {f.name for f in dataclasses.fields(Convention)} - {"name", "mirrors", "description"}
    assert not set(VALUE_FIELDS) & set(AGGREGATE_FIELDS)
    assert sorted(VALUE_FIELDS + AGGREGATE_FIELDS) == sorted(fields)


@pytest.mark.parametrize("run", [{"q1": {"a": 0.5}, "q2": {}}, {"q1": {"a": 0.5}}])
def test_a_query_without_a_ranked_list_still_shows_its_ideal_list(run) -> None:
    # q2 judged (d: 2, c: 1) but nothing ranked: DCG 0, IDCG = 2/log2(2) + 1/log2(3) by hand
    exp = ranklens.explain({"q1": {"a": 1}, "q2": {"c": 1, "d": 2}}, run, query="q2", measure="ndcg", k=10,
                           convention="ranklens")
    assert exp.dcg == 0.0
    assert exp.idcg == pytest.approx(2.0 + 1.0 / math.log2(3), abs=1e-12)
    assert [r["item"] for r in exp.ideal_rows] == ["d", "c"]
    assert exp.value == 0.0


def test_html_is_bounded_to_the_first_positions_and_counts_the_others():
    """Issue #33 point 8: a 2,000-item list made a 1.8 MB ``_repr_html_``; the HTML shows the first
    ``HTML_ROWS`` positions and says how many it leaves out, the text table keeps them all."""
    import re

    import ranklens

    n = 2000
    qrels = {"q": {f"d{i}": i % 3 for i in range(n)}}
    run = {"q": {f"d{i}": float(n - i) for i in range(n)}}  # d0 first, d1999 last
    e = ranklens.explain(qrels, run, query="q", measure="ndcg")
    html = e._repr_html_()
    limit = e.HTML_ROWS
    assert f"{n - limit} more positions not shown (of {n})" in html
    assert len(html) < 60_000 and len(str(e)) > 20 * len(html) / 10
    rows = [re.findall(r">([^<]*)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", html)]
    assert [row[1] for row in rows if row] == [f"d{i}" for i in range(limit)]  # the run's first positions only
    assert f"d{n - 1}" in str(e)
    assert "DCG = " in html  # the values of the whole list are still given
    small = ranklens.explain({"q": {"a": 1, "b": 0}}, {"q": {"a": 2.0, "b": 1.0}}, query="q", measure="ndcg")
    assert "more positions" not in small._repr_html_()
