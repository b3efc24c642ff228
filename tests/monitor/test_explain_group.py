"""`monitor explain` / Store.explain: the whole list beyond the cutoff, each item's labels and its real score."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest
from click.testing import CliRunner

from ranklens.cli import cli
from ranklens.monitor import Store


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("explain") / "e.duckdb"
    st = Store(path, config={"attribution": {"rule": "binary", "positive": ["click"]}})
    ranked = pa.table({"timestamp": ["2026-10-01T10:00:00"] * 4, "model": ["m"] * 4, "model_version": ["v1"] * 4,
                       "environment": ["production"] * 4, "group_id": ["g"] * 4, "item_id": ["a", "b", "c", "d"],
                       "score": [0.9, 0.5, 0.1, -2.5], "labels": [[], ["buy"], ["click"], []]})
    st.ingest(ranked)
    # a late label row: b is clicked too
    st.ingest(pa.table({"timestamp": ["2026-10-01T11:00:00"], "group_id": ["g"], "item_id": ["b"],
                        "labels": [["click"]]}))
    return st


def test_explain_goes_beyond_k_with_labels_and_the_real_score(store):
    e = store.explain("g", k=2)
    # served by decreasing score: a (0.9), b (0.5), c (0.1), d (-2.5); gains (binary click): 0, 1, 1, 0
    assert [r["item"] for r in e.rows] == ["a", "b", "c", "d"]
    assert [r["score"] for r in e.rows] == [0.9, 0.5, 0.1, -2.5]  # the score as served, not a sort key
    assert [r["rank"] for r in e.rows] == [None] * 4
    assert [r["labels"] for r in e.rows] == [[], ["buy", "click"], ["click"], []]
    assert [r["gain"] for r in e.rows] == [0, 1, 1, 0]
    assert [r["beyond_cutoff"] for r in e.rows] == [False, False, True, True]
    # values at k = 2 by the definition: DCG@2 = 1/log2(3); IDCG@2 = 1 + 1/log2(3)
    assert e.dcg == pytest.approx(1 / math.log2(3), abs=1e-12)
    assert e.idcg == pytest.approx(1 + 1 / math.log2(3), abs=1e-12)
    assert e.value == pytest.approx(e.dcg / e.idcg, abs=1e-12)
    # the rows past k keep their own discount and contribution (what they would add at a deeper cutoff)
    assert e.rows[2]["contribution"] == pytest.approx(1 / math.log2(4), abs=1e-12)
    assert [g["item"] for g in e.ideal_rows][:2] in (["b", "c"], ["c", "b"]) and len(e.ideal_rows) == 4
    d = e.to_dict()
    assert d["n_items"] == 4 and d["k"] == 2 and d["order_by"] == "score"


def test_cli_explain_table_marks_the_cutoff(store):
    out = CliRunner().invoke(cli, ["monitor", "explain", "g", "-k", "1", "--store", str(store.path)],
                             catch_exceptions=False).output
    lines = out.splitlines()
    assert lines[0].startswith("group g (m v1 production, served by score) - ndcg@1")
    assert lines[1].split()[:5] == ["pos", "rank", "score", "item", "labels"]
    assert lines[3] == "--- cutoff k=1: the positions below do not count in ndcg@1 ---"
    assert "buy,click" in lines[4] and "-2.5" in lines[-2]
    assert lines[-1].startswith("DCG@1 = 0.000000   IDCG@1 = 1.000000")
