"""The measures added in #22 in the monitoring store: per-list measures reported as NDCG is (values from
the definitions, by hand); GroupAUC weighted by the lists' items (the other aggregates: test_store_aggregates)."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pytest

from ranklens.errors import InvalidParameterError
from ranklens.monitor import Store

sys.path.insert(0, str(Path(__file__).parent))
from handcalc import events

# gains 0/1 in served order (click labels)
GROUPS = {
    "x": [[], [], ["click"], ["click"], ["click"]],
    "y": [["click"], [], ["click"], [], ["click"]],
    "z": [["click"], [], [], [], []],
}
GAINS = {"x": [0, 0, 1, 1, 1], "y": [1, 0, 1, 0, 1], "z": [1, 0, 0, 0, 0]}


def _auc(g):
    pos = [i for i, v in enumerate(g) if v]
    neg = [i for i, v in enumerate(g) if not v]
    return sum(a < b for a in pos for b in neg) / (len(pos) * len(neg))


def _rbp(g, p, k):
    return (1 - p) * sum(v * p**i for i, v in enumerate(g[:k]))


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "s.duckdb", config={"monitors": []})
    s.ingest(pa.Table.from_pylist(events(GROUPS)))
    return s


def test_per_list_measures_by_hand(store):
    keys = ["auc", "rbp@3(p=0.5)", "f1@2", "set_P"]
    rep = {r["measure"]: r for r in store.report(keys, ci=None).to_pylist()}
    assert rep["auc"]["value"] == pytest.approx(sum(_auc(g) for g in GAINS.values()) / 3)
    assert rep["rbp@3(p=0.5)"]["value"] == pytest.approx(sum(_rbp(g, 0.5, 3) for g in GAINS.values()) / 3)
    f1 = [2 * sum(g[:2]) / (2 + sum(g)) for g in GAINS.values()]
    assert rep["f1@2"]["value"] == pytest.approx(sum(f1) / 3)
    assert rep["set_P"]["value"] == pytest.approx(sum(sum(g) / 5 for g in GAINS.values()) / 3)
    groups = {r["group_id"]: r["value"] for r in store.groups("auc", order="best").to_pylist()}
    assert groups == pytest.approx({gid: _auc(g) for gid, g in GAINS.items()})


def test_groupauc_report_weighs_lists_by_their_items(tmp_path):
    """GroupAUC per window and series: the per-list AUCs weighted by each list's items (lists of 5, 3 and 4
    items here; a list with one class left out); gauc@3 weighs each by at most 3. Its interval is that of the
    weighted mean (tests/monitor/test_store_aggregates.py checks it); groups gives each list's AUC."""
    groups = {"a": [["click"], [], [], ["click"], []], "b": [[], ["click"], []], "c": [["click"], [], ["click"], []],
              "d": [[], [], []]}
    gains = {"a": [1, 0, 0, 1, 0], "b": [0, 1, 0], "c": [1, 0, 1, 0]}
    s = Store(tmp_path / "g.duckdb", config={"monitors": []})
    s.ingest(pa.Table.from_pylist(events(groups)))
    rep = {r["measure"]: r for r in s.report(["gauc", "auc", "gauc@3"], ci="bootstrap").to_pylist()}
    auc = {g: _auc(v) for g, v in gains.items()}
    assert rep["gauc"]["value"] == pytest.approx(sum(len(gains[g]) * auc[g] for g in gains) / 12)
    assert rep["auc"]["value"] == pytest.approx(sum(auc.values()) / 3)
    assert rep["gauc"]["n_groups"] == 3 and rep["gauc"]["n_excluded"] == 1
    top3 = {g: _auc(v[:3]) for g, v in gains.items() if 0 < sum(v[:3]) < 3}
    assert rep["gauc@3"]["value"] == pytest.approx(sum(3 * x for x in top3.values()) / (3 * len(top3)))
    assert rep["gauc"]["ci_low"] <= rep["gauc"]["value"] <= rep["gauc"]["ci_high"]
    assert {r["group_id"]: r["value"] for r in s.groups("gauc").to_pylist()} == pytest.approx(auc)


def test_trec_eval_set_measures_by_hand(store):
    """trec_eval's other measures (#22 point 1) the store can give, per list from the definitions: set_map
    a² / (n R), relative_P@2 hits / min(2, R), utility a - (n - a), Rprec_mult(mult=0.5) precision at
    (long)(0.5 R + 0.9) items; unj (nothing is unjudged in the store: 0); those needing a tie order refused by name."""
    keys = ["set_map", "relative_P@2", "utility", "Rprec_mult(mult=0.5)"]
    rep = {r["measure"]: r["value"] for r in store.report(keys, ci=None).to_pylist()}
    n = {gid: len(g) for gid, g in GAINS.items()}
    big_r = {gid: sum(g) for gid, g in GAINS.items()}
    cut = {gid: int(0.5 * big_r[gid] + 0.9) for gid in GAINS}
    want = {
        "set_map": [big_r[k] ** 2 / (n[k] * big_r[k]) for k in GAINS],
        "relative_P@2": [sum(g[:2]) / min(2, big_r[k]) for k, g in GAINS.items()],
        "utility": [big_r[k] - (n[k] - big_r[k]) for k in GAINS],
        "Rprec_mult(mult=0.5)": [sum(g[:cut[k]]) / cut[k] for k, g in GAINS.items()],
    }
    for key, values in want.items():
        assert rep[key] == pytest.approx(sum(values) / 3), key
    # every served item is judged in the store (non-relevant without a label): nothing unjudged in the top 3
    assert store.report(["unj@3"], ci=None).to_pylist()[0]["value"] == 0.0
    for key, words in (("rbp_resid", "tie"), ("binG", "tie order")):
        with pytest.raises(InvalidParameterError, match=words):
            store.report([key], ci=None)
