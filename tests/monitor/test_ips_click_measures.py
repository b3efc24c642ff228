"""Debiased click measures in the store (#31 point 4): ``ips_dcg@k`` / ``ips_ndcg@k`` beside the naive ``dcg@k`` /
``ndcg@k``. Clicks are simulated here under a position-based model with known examination ``theta_r = 1/r`` and
attractiveness per item, so every expectation is computed by hand from the definitions:

* naive click DCG of a list: ``E = sum_r d_r theta_r alpha_r`` (``d_r = 1/log2(r+1)``);
* inverse-propensity click DCG: ``E = sum_r d_r alpha_r`` (the DCG of the served list with attractiveness as gains).

Logged ranker A serves ``[0.05, 0.8, 0.8, 0.8, 0.8, 0.3]`` (attractiveness by rank): the item at rank 6 gets
clicks although A buries it. Ranker B only moves that already-clicked item to the top (``[0.3, 0.05, 0.8, ...]``):
truly worse (it pushes four better items down), yet it collects more clicks where users look, so the naive click
DCG prefers it. The debiased measure must not, and must match the exact expectation of each ranker.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pyarrow as pa
import pytest

from ranklens.errors import InputError, InvalidParameterError
from ranklens.monitor import Store

N = 30_000  # lists per ranker
THETA = 1.0 / np.arange(1, 7)
A = np.array([0.05, 0.8, 0.8, 0.8, 0.8, 0.3])
B = np.r_[A[5], A[:5]]
D = 1.0 / np.log2(np.arange(2, 8))
CONFIG = {"monitors": [], "evaluation": {"empty": 0},  # lists without clicks count 0 (the expectation counts them)
          "propensity": {"source": "config", "examination": [1 / r for r in range(1, 11)]}}


def _rows(alpha, version, day, rng):
    clicks = rng.random((N, len(alpha))) < THETA * alpha
    g, r = np.divmod(np.arange(N * len(alpha)), len(alpha))
    return pa.table({
        "timestamp": [f"{day}T10:00:00"] * len(g), "model": ["m"] * len(g), "model_version": [version] * len(g),
        "environment": ["production"] * len(g), "group_id": [f"{version}-{i}" for i in g],
        "item_id": [f"{version}-{i}-{j}" for i, j in zip(g, r)], "rank": (r + 1).astype(np.int64),
        "labels": [["click"] if c else [] for c in clicks.ravel()]})


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    rng = np.random.default_rng(20261127)
    st = Store(tmp_path_factory.mktemp("ips") / "s.duckdb", config=CONFIG)
    st.ingest(pa.concat_tables([_rows(A, "A", "2026-10-01", rng), _rows(B, "B", "2026-10-02", rng)]))
    return st


def test_premise_by_hand():
    # B is truly worse, but earns more naive click DCG in expectation
    assert B @ D < A @ D
    assert B @ (D * THETA) > A @ (D * THETA)


def test_debiased_dcg_matches_truth_and_does_not_prefer_past_clicks_first(store):
    rep = store.report(["dcg@10", "ips_dcg@10"], window="week", by=["model_version"], ci="t", confidence=0.99)
    got = {(r["model_version"], r["measure"]): r for r in rep.to_pylist()}
    for v, alpha in (("A", A), ("B", B)):
        naive, ips = got[v, "dcg@10"], got[v, "ips_dcg@10"]
        assert naive["n_groups"] == ips["n_groups"] == N
        assert naive["ci_low"] <= alpha @ (D * THETA) <= naive["ci_high"]  # naive: clicks where users look
        assert ips["ci_low"] <= alpha @ D <= ips["ci_high"]  # debiased: the served list's attractiveness DCG
    # the naive measure prefers the ranker that only moved an already-clicked item up; the debiased one does not
    assert got["B", "dcg@10"]["ci_low"] > got["A", "dcg@10"]["ci_high"]
    assert got["B", "ips_dcg@10"]["value"] < got["A", "ips_dcg@10"]["value"]


def _exact_ndcg(alpha, normaliser):
    """E[ndcg] of one served list by enumeration of its 2^6 click outcomes (clicks independent, P = theta_r alpha_r),
    each outcome's value from the definition: DCG of the gains 1/theta_r at the clicked ranks over ``normaliser``
    ("ideal": the ideal DCG of those gains; "full": the DCG of the 6 items at gain 1); no click: 0 (empty = 0)."""
    p = THETA * alpha
    total = 0.0
    for bits in itertools.product((0, 1), repeat=len(alpha)):
        c = np.array(bits, dtype=float)
        if not c.any():
            continue
        g = c / THETA
        norm = np.sort(g)[::-1] @ D if normaliser == "ideal" else D.sum()
        total += np.prod(np.where(c > 0, p, 1 - p)) * (g @ D) / norm
    return total


def test_debiased_ndcg_does_not_prefer_past_clicks_first(store):
    # the premise, exactly: normalising by the ideal of a list's own weighted gains would prefer B (a single click
    # at rank r scores d_r whatever its propensity); the normaliser of ips_ndcg (the list at full gain) does not
    assert _exact_ndcg(B, "ideal") > _exact_ndcg(A, "ideal")
    assert _exact_ndcg(B, "full") < _exact_ndcg(A, "full")
    assert _exact_ndcg(A, "full") == pytest.approx(A @ D / D.sum(), abs=1e-12)  # = attractiveness DCG / constant
    rep = store.report(["ndcg@10", "ips_ndcg@10"], window="week", by=["model_version"], ci="t", confidence=0.99)
    got = {(r["model_version"], r["measure"]): r for r in rep.to_pylist()}
    for v, alpha in (("A", A), ("B", B)):
        ips = got[v, "ips_ndcg@10"]
        assert ips["n_groups"] == N
        assert ips["ci_low"] <= _exact_ndcg(alpha, "full") <= ips["ci_high"]
    assert got["B", "ndcg@10"]["ci_low"] > got["A", "ndcg@10"]["ci_high"]  # the naive ndcg prefers B
    assert got["B", "ips_ndcg@10"]["value"] < got["A", "ips_ndcg@10"]["value"]


def test_ips_values_per_list_by_hand(tmp_path):
    # one list: clicks at ranks 2 and 5; gains 1/theta = 2 and 5; DCG = 2/log2(3) + 5/log2(6)
    st = Store(tmp_path / "s.duckdb", config=CONFIG)
    rows = [{"timestamp": "2026-10-01T10:00:00", "model": "m", "model_version": "v", "environment": "production",
             "group_id": "q", "item_id": f"i{r}", "rank": r, "labels": ["click"] if r in (2, 5) else []}
            for r in range(1, 7)]
    st.ingest(pa.Table.from_pylist(rows))
    got = {r["measure"]: r["value"] for r in st.report(["ips_dcg@10", "ips_ndcg@10", "dcg@10"], ci=None).to_pylist()}
    dcg = 2 / math.log2(3) + 5 / math.log2(6)
    assert got["ips_dcg@10"] == pytest.approx(dcg, abs=1e-12)
    # ips_ndcg: over the DCG of the 6 served items each at the largest gain (binary: 1)
    assert got["ips_ndcg@10"] == pytest.approx(dcg / sum(1 / math.log2(r + 1) for r in range(1, 7)), abs=1e-12)
    assert got["dcg@10"] == pytest.approx(1 / math.log2(3) + 1 / math.log2(6), abs=1e-12)


def test_refusals(tmp_path):
    with pytest.raises(InvalidParameterError, match=r"\[propensity\]: `examination` must be in \(0, 1\]"):
        Store(tmp_path / "a.duckdb", config={"propensity": {"examination": [1.0, 0.0]}})
    with pytest.raises(InvalidParameterError, match="`source` must be one of"):
        Store(tmp_path / "b.duckdb", config={"propensity": {"source": "guess", "examination": [1.0]}})
    with pytest.raises(InvalidParameterError, match="DCG family"):
        Store(tmp_path / "c.duckdb", config={"evaluation": {"tracked": ["ips_map@10"]}})
    st = Store(tmp_path / "d.duckdb", config={"monitors": [], "propensity": {"examination": [1.0, 0.5]}})
    rows = [{"timestamp": "2026-10-01T10:00:00", "model": "m", "model_version": "v", "environment": "production",
             "group_id": "q", "item_id": f"i{r}", "rank": r, "labels": ["click"] if r == 3 else []}
            for r in range(1, 4)]
    st.ingest(pa.Table.from_pylist(rows))
    with pytest.raises(InputError, match="a click at rank 3 .*beyond the 2 ranks"):
        st.report(["ips_dcg@10"], ci=None)
    st2 = Store(tmp_path / "e.duckdb", config={"monitors": []})
    st2.ingest(pa.Table.from_pylist(rows))
    with pytest.raises(InvalidParameterError, match=r"need propensities: add a \[propensity\] table"):
        st2.report(["ips_dcg@10"], ci=None)


@pytest.mark.slow
def test_store_interval_of_ips_dcg_covers_over_repeated_logs(tmp_path):
    """The store's 95% t interval of ips_dcg@10 (over lists, propensities known and right) covers the exact
    expectation A @ D in about 95% of repeated logs: 1000 logs of 400 lists, each a model version of one store;
    the band is the binomial's 99.9% range around 0.95 for 1000 logs."""
    reps, lists = 1000, 400
    rng = np.random.default_rng(20261128)
    clicks = rng.random((reps * lists, len(A))) < THETA * A
    g, r = np.divmod(np.arange(clicks.size), len(A))
    version = (g // lists).astype(str)
    table = pa.table({
        "timestamp": pa.array(np.full(len(g), np.datetime64("2026-10-01T10:00:00", "ms"))), "model": ["m"] * len(g),
        "model_version": version, "environment": ["production"] * len(g), "group_id": g.astype(str),
        "item_id": (g * 10 + r).astype(str), "rank": (r + 1).astype(np.int64),
        "labels": pa.array([["click"] if c else [] for c in clicks.ravel()], pa.list_(pa.string()))})
    st = Store(tmp_path / "s.duckdb", config={**CONFIG, "evaluation": {"empty": 0, "tracked": ["ips_dcg@10"]}})
    st.ingest(table)
    rep = st.report(["ips_dcg@10"], window="week", by=["model_version"], ci="t", confidence=0.95).to_pylist()
    assert len(rep) == reps and all(x["n_groups"] == lists for x in rep)
    covered = np.mean([x["ci_low"] <= A @ D <= x["ci_high"] for x in rep])
    assert 0.927 <= covered <= 0.973, covered
