"""The values read (storage/values.py ``events``): each stored item with its attribution and its largest given
relevance, worked out by the kernel ``attribute_labels`` from the stored items and outcome rows. Checked against the
definition written out here (per item: the set of its distinct labels, the weights of those added in the order of
the labels from 0.0; the largest relevance given, none without one), on random arrays and on stores ingested from
hand-made events: every list of a range, a choice of lists within it, one list, none.
"""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from ranklens._kernels import api
from ranklens._kernels.dispatch import call
from ranklens.monitor import Store, load_config
from ranklens.monitor.storage.values import events


def _by_hand(item_gid, item_iid, lab_gid, lab_iid, lab_bit, lab_rel, weights, g_lo, span):
    labels: dict[tuple[int, int], set[int]] = {}
    best: dict[tuple[int, int], float] = {}
    for g, i, b, v in zip(lab_gid.tolist(), lab_iid.tolist(), lab_bit.tolist(), lab_rel.tolist()):
        if not g_lo <= g < g_lo + span:
            continue
        if b >= 0:
            labels.setdefault((g, i), set()).add(b)
        if not math.isnan(v):
            best[(g, i)] = max(best.get((g, i), v), v)
    attr, rel = [], []
    for g, i in zip(item_gid.tolist(), item_iid.tolist()):
        a = 0.0
        for j, w in enumerate(weights.tolist()):  # in the order of the labels
            if j in labels.get((g, i), ()):
                a += w
        attr.append(a)
        rel.append(best.get((g, i), math.nan))
    return np.array(attr), np.array(rel)


def _case(rng, n_lists, g_lo, n_labels):
    sizes = rng.integers(0, 15, n_lists)
    gid = np.repeat(np.arange(g_lo, g_lo + n_lists), sizes).astype(np.int64)
    iid = rng.integers(1, 40, len(gid)).astype(np.int64)  # an item number repeats across lists
    perm = rng.permutation(len(gid))  # the items in any order, not by list
    gid, iid = gid[perm], iid[perm]
    m = 3 * len(gid) // 2
    lg = rng.integers(g_lo - 2, g_lo + n_lists + 2, m).astype(np.int64)  # some outside the range read
    li = rng.integers(1, 45, m).astype(np.int64)  # some of items not in their list
    lb = rng.integers(-1, n_labels, m).astype(np.int64)  # -1: a row with a relevance only, or a label not counted
    lr = np.where(rng.random(m) < 0.3, rng.integers(0, 4, m).astype(np.float64), np.nan)
    w = np.round(rng.random(n_labels) * 3, 2) + 0.1
    return gid, iid, lg, li, lb, lr, w, g_lo, n_lists


@pytest.mark.parametrize("mode", ["aot", "jit"])
def test_attribute_labels_by_hand(mode):
    rng = np.random.default_rng(11)
    cases = [_case(rng, n, lo, k) for n, lo, k in ((1, 1, 1), (5, 1, 3), (300, 7, 62), (2000, 100, 5))]
    empty = np.zeros(0, np.int64)
    cases.append((empty, empty, empty, empty, empty, np.zeros(0), np.ones(2), 1, 1))  # nothing to read
    gid, iid, *_ = cases[1]
    cases.append((gid, iid, empty, empty, empty, np.zeros(0), np.ones(3), 1, 5))  # no outcome: 0.0, none
    with api.forced(mode):
        for c in cases:
            attr, rel = call("attribute_labels", *c)
            want_attr, want_rel = _by_hand(*c)
            assert np.array_equal(attr, want_attr)  # the same additions in the same order: equal, not close
            assert np.array_equal(rel, want_rel, equal_nan=True)


# items in served order per list: (item, labels, relevance given in-line or None)
LISTS = {
    "a": [("i1", ["click"], None), ("i2", [], None), ("i3", ["buy", "click"], None), ("i4", [], 2.0)],
    "b": [("i1", [], None), ("i5", ["favorite"], None), ("i6", [], None)],
    "c": [("i7", [], None), ("i8", [], None)],
    "d": [("i9", ["click", "click"], None), ("i1", ["other"], 1.0)],
    "e": [("i2", ["buy"], None), ("i3", [], None), ("i5", ["click"], None)],  # served by score, no rank
}
SCORES = {"i2": 0.75, "i3": 0.5, "i5": -1.25}  # list e's scores, in served order
# label rows arriving later (group_id, item_id, labels, relevance): a repeat, an item never served, a relevance
LATE = [("a", "i2", ["buy"], None), ("a", "i2", ["buy"], None), ("b", "i99", ["click"], None),
        ("c", "i8", [], 3.0), ("c", "i8", ["click"], 1.0), ("b", "i6", ["favorite", "buy"], None)]


def _rows():
    rows = []
    for h, (g, items) in enumerate(LISTS.items()):
        for r, (item, labels, rel) in enumerate(items, start=1):
            rows.append({"timestamp": f"2026-10-01T1{h}:00:00", "model": "m", "model_version": "v1",
                         "environment": "production", "group_id": g, "item_id": item,
                         "rank": None if g == "e" else r, "score": SCORES[item] if g == "e" else None,
                         "labels": labels, "relevance": rel})
    late = [{"timestamp": "2026-10-02T09:00:00", "model": None, "model_version": None, "environment": None,
             "group_id": g, "item_id": item, "rank": None, "score": None, "labels": labels, "relevance": rel}
            for g, item, labels, rel in LATE]
    return rows, late


def _gain_by_hand(weights: dict[str, float], rule: str) -> dict[tuple[str, str], float]:
    """Each served item's gain from the definition: its largest relevance given, else the weights of its distinct
    labels (binary: at most 1)."""
    labels: dict[tuple[str, str], set[str]] = {}
    rels: dict[tuple[str, str], float] = {}
    for g, items in LISTS.items():
        for item, labs, rel in items:
            labels.setdefault((g, item), set()).update(labs)
            if rel is not None:
                rels[(g, item)] = max(rels.get((g, item), rel), rel)
    for g, item, labs, rel in LATE:
        if (g, item) in labels:
            labels[(g, item)].update(labs)
            if rel is not None:
                rels[(g, item)] = max(rels.get((g, item), rel), rel)
    out = {}
    for key, labs in labels.items():
        s = sum(w for lab, w in weights.items() if lab in labs)
        out[key] = rels[key] if key in rels else (min(s, 1.0) if rule == "binary" else s)
    return out


@pytest.mark.parametrize("attribution", [
    {"rule": "binary", "positive": ["click", "buy"]},
    {"rule": "weighted", "weights": {"click": 1.0, "favorite": 0.25, "buy": 3.5, "never": 9.0}},
])
def test_events_gains_by_hand(tmp_path, attribution):
    rows, late = _rows()
    path = tmp_path / "s.duckdb"
    st = Store(path, config={"attribution": attribution, "monitors": []})
    st.ingest(pa.Table.from_pylist(rows))
    st.ingest(pa.Table.from_pylist(late))  # late labels: stored as outcome rows of the lists served before
    cfg = load_config({"attribution": attribution})
    weights = cfg.attribution.label_values()
    want = _gain_by_hand(weights, attribution["rule"])
    con = duckdb.connect(str(path), read_only=True)
    gid_of = dict(con.execute("SELECT group_id, gid FROM groups").fetchall())
    group_of = {v: k for k, v in gid_of.items()}
    choices = {  # (gid query, parameters, lo, hi): the lists expected
        "every list": ("SELECT gid FROM groups", (), None, None, set(LISTS)),
        "a choice (not a range)": ("SELECT gid FROM groups WHERE group_id IN (?, ?)", ("a", "c"), None, None,
                                   {"a", "c"}),
        "a range": ("SELECT gid FROM groups", (), gid_of["b"], gid_of["c"], {"b", "c"}),
        "a list served by score": ("SELECT ?", (gid_of["e"],), None, None, {"e"}),
        "one list": ("SELECT ?", (gid_of["d"],), None, None, {"d"}),
        "none": ("SELECT gid FROM groups WHERE gid < 0", (), None, None, set()),
    }
    for name, (q, params, lo, hi, lists) in choices.items():
        for full in (True, False):
            ev = events(con, cfg.attribution, q, params, lo, hi, full=full)
            assert {group_of[g] for g in ev.column("gid").to_pylist()} == lists, name
            assert ev.num_rows == sum(len(LISTS[g]) for g in lists), name
            if not full:
                assert ev.schema.names == ["gid", "key", "relevance", "attr"]
                continue
            for g, item, rank, score, key, rel, attr in zip(*(ev.column(c).to_pylist() for c in (
                    "gid", "item_id", "rank", "score", "key", "relevance", "attr"))):
                g = group_of[g]
                served = [x[0] for x in LISTS[g]]
                if g == "e":  # ordered by score: the key is the score
                    assert rank is None and score == key == SCORES[item], (name, g, item)
                else:  # ordered by rank: the key is minus the rank
                    assert score is None and rank == served.index(item) + 1 and key == -rank, (name, g, item)
                gain = rel if rel is not None else (min(attr, 1.0) if attribution["rule"] == "binary" else attr)
                assert gain == want[(g, item)], (name, g, item)
    con.close()
