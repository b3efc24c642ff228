"""A series whose split value is missing (None: a list without a value in the split column) is a series of its
own: judged against the lists without one in the baseline, not against every value of the column."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pytest

from ranklens.monitor import Store

sys.path.insert(0, str(Path(__file__).parent))
from handcalc import events, ndcg

# the clicked item's rank, by country (None: no country); the same in training and production: nothing changed
RANK = {"US": 1, None: 3}


def _rows():
    rows = []
    for env, day in (("training", "2026-09-30"), ("production", "2026-10-01")):
        for country, r in RANK.items():
            groups = {f"{env}-{country}-{i}": [["click"] if k == r else [] for k in range(1, 5)] for i in range(30)}
            rows += events(groups, day=day, env=env, extra=lambda g, c=country: {"country": c})
    return pa.Table.from_pylist(rows)


def test_missing_split_value_is_its_own_series(tmp_path):
    cfg = {"monitors": [{"name": "by-country", "metric": "ndcg@4", "relative_drop": 0.2, "min_groups": 10,
                         "by": ["model", "model_version", "environment", "country"],
                         "where": {"environment": "production"}}]}
    st = Store(tmp_path / "s.duckdb", config=cfg)
    st.ingest(_rows())
    missing = ndcg([0, 0, 1, 0], 4)  # 0.5 by hand: 1 / log2(4)
    assert missing == pytest.approx(0.5)
    rep = {r["country"]: r for r in st.report(["ndcg@4"], by=["country"], where={"environment": "production"},
                                               ci=None).to_pylist()}
    assert rep[None]["value"] == pytest.approx(missing, abs=1e-12) and rep[None]["n_groups"] == 30
    # judged against the 30 training lists without a country (0.5), not all 60 (0.75: a 33% "drop")
    res = st.check()
    assert list(res) == [], [a.reason for a in res]
    base = st.baseline("ndcg@4", where={"environment": "production", "country": None})
    assert base["value"] == pytest.approx(missing, abs=1e-12)
