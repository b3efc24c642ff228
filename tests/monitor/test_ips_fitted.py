"""Propensities fitted on the store's own logs (#31 point 4a): ``[propensity] source = "fitted"``.

The log is the shared simulator's (:func:`ranklens.online.simulate`): a position-based click model with a known
examination curve (``sim.model.exam_curve``), one segment, no user heterogeneity, lists drawn by Plackett-Luce
(every item moves over the ranks: the examination is identified). Expected numbers come from the simulation's
truth (the curve) and from hand computations in the test on the events themselves (which lists are mature, the
inverse-propensity DCG of each list with the recorded curve).
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow.compute as pc
import pytest

from ranklens import online
from ranklens.errors import InputError, InvalidParameterError
from ranklens.monitor import Store

K = 8
COLUMNS = ["timestamp", "model", "model_version", "environment", "group_id", "item_id", "rank", "labels", "query"]
CONFIG = {"monitors": [], "evaluation": {"empty": 0, "tracked": ["ips_dcg@10", "dcg@10"]},
          "labels": {"maturity": "2d"}, "propensity": {"source": "fitted", "query": "query"}}


@pytest.fixture(scope="module")
def sim():
    return online.simulate({"control": 1.0}, n_users=30_000, n_queries=40, n_candidates=12, k=K,
                           policy="plackett_luce", temperature=2.0, heterogeneity=0.0,
                           segments={"all": (1.0, 1.0)}, days=14, seed=11)


@pytest.fixture(scope="module")
def events(sim):
    return sim.events.select(COLUMNS)


@pytest.fixture(scope="module")
def store(tmp_path_factory, events):
    st = Store(tmp_path_factory.mktemp("fitted") / "s.duckdb", config=CONFIG)
    st.ingest(events)
    return st


def _clicked(events):
    return np.asarray(["click" in (v or []) for v in events.column("labels").to_pylist()], dtype=bool)


def _hand_ips(events, exam):
    """Per day: the mean over lists of sum over clicked items of d(rank) / exam[rank], and the same over the DCG@10
    of a list of K items of gain 1 (lists without a click count 0: ``empty = 0``)."""
    rank = events.column("rank").to_numpy()
    click = _clicked(events)
    gid = pc.dictionary_encode(events.column("group_id")).combine_chunks().indices.to_numpy()
    d = 1.0 / np.log2(rank + 1.0)
    per_list = np.bincount(gid, weights=np.where(click, d / np.asarray(exam)[rank - 1], 0.0))
    day = np.zeros(len(per_list), dtype="datetime64[D]")
    day[gid] = events.column("timestamp").to_numpy().astype("datetime64[D]")
    ideal = (1.0 / np.log2(np.arange(2, K + 2))).sum()
    return {str(x): (per_list[day == x].mean(), per_list[day == x].mean() / ideal) for x in np.unique(day)}


def _report(st, measures):
    return {(r["measure"], str(r["window"])[:10]): r["value"] for r in st.report(measures, ci=None).to_pylist()}


def test_fitted_examination_is_the_simulated_one(store, sim, events):
    info = store.info()["propensity"]
    assert info["source"] == "fitted" and "error" not in info
    truth = sim.model.exam_curve(K)
    fitted = np.asarray(info["examination"])
    assert np.abs(fitted / truth - 1).max() < 0.04, (fitted, truth)
    # what it was fitted on: the lists served before the store clock minus the 2 days of maturity
    ts = events.column("timestamp").to_numpy()
    mature = ts < ts.max() - np.timedelta64(2, "D")
    assert info["rows"] == int(mature.sum())
    assert info["sessions"] == len(set(np.asarray(events.column("group_id").to_pylist())[mature]))
    assert info["clicks"] == int(_clicked(events)[mature].sum())
    assert info["fitted_on"]["end"] == (ts.max() - np.timedelta64(2, "D")).astype(dt.datetime).isoformat()
    assert info["fitted_on"]["query"] == "query" and np.isfinite(info["log_likelihood"]) and info["converged"]


def test_store_ips_values_use_the_fitted_curve(store, events):
    exam = store.info()["propensity"]["examination"]
    hand = _hand_ips(events, exam)
    got = _report(store, ["ips_dcg@10", "ips_ndcg@10"])
    assert len(got) == 2 * len(hand) == 2 * 14
    for day, (dcg, ndcg) in hand.items():
        assert got["ips_dcg@10", day] == pytest.approx(dcg, rel=1e-9)  # stored at ingest (tracked)
        assert got["ips_ndcg@10", day] == pytest.approx(ndcg, rel=1e-9)  # computed on demand


@pytest.mark.slow
def test_a_new_batch_refits_and_recomputes_stored_values(tmp_path, events):
    half = events.num_rows // 2 // K * K
    st = Store(tmp_path / "s.duckdb", config=CONFIG)
    st.ingest(events.slice(0, half))
    first = st.info()["propensity"]
    st.ingest(events.slice(half))
    second = st.info()["propensity"]
    assert second["rows"] > first["rows"] and second["examination"] != first["examination"]
    got = _report(st, ["ips_dcg@10"])
    for day, (dcg, _) in _hand_ips(events, second["examination"]).items():
        assert got["ips_dcg@10", day] == pytest.approx(dcg, rel=1e-9)


def test_fitted_refusals(tmp_path, events):
    with pytest.raises(InvalidParameterError, match='`examination` goes with source = "config"'):
        Store(tmp_path / "a.duckdb", config={"propensity": {"source": "fitted", "examination": [1.0]}})
    with pytest.raises(InvalidParameterError, match=r"\[propensity\]: `window` must be a duration"):
        Store(tmp_path / "b.duckdb", config={"propensity": {"source": "fitted", "window": "a month"}})
    with pytest.raises(InvalidParameterError, match="unknown key 'depth'"):
        Store(tmp_path / "c.duckdb", config={"propensity": {"source": "fitted", "depth": 3}})
    st = Store(tmp_path / "d.duckdb", config={"monitors": [], "evaluation": {"tracked": ["dcg@10"]},
                                               "propensity": {"source": "fitted", "query": "nope"}})
    st.ingest(events.slice(0, 80))
    assert "'nope' is not a slice column" in st.info()["propensity"]["error"]
    with pytest.raises(InputError, match=r"no propensities fitted on the store's logs: \[propensity\] query: 'nope'"):
        st.report(["ips_dcg@10"], ci=None)
