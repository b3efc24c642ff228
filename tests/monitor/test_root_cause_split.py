"""The root cause of a series split by a slice column (issue #32, noticed in session 3): a monitor ``by = [...,
"country"]`` judges the series ``country=BR``; its root cause is searched in the *other* slice columns and their
pairs, never in ``country`` (fixed to one value in the series, its one cell is the series itself).

Lists written here: in each country, four cells (device x query_type) of 40 lists of 6 items, one clicked, at
rank 1 (NDCG@10 = 1); on the production day, in ``country=BR device=mobile query_type=tail`` only, the clicked
item is at rank 2 (NDCG@10 = 1 / log2(3)). The baseline (training) has every list at 1.
"""

from __future__ import annotations

import json
import math

import pyarrow as pa
import pytest

from ranklens.errors import InputError
from ranklens.monitor import Store

from .handcalc import events

CELLS = [("mobile", "head"), ("mobile", "tail"), ("desktop", "head"), ("desktop", "tail")]
N = 40
LOW = 1 / math.log2(3)  # NDCG@10 of a list whose one clicked item is at rank 2


def _groups(prefix: str, country: str, device: str, qtype: str, broken: bool) -> dict[str, list]:
    at = 2 if broken else 1
    return {f"{prefix}-{country}-{device}-{qtype}-{i}": [["click"] if r == at else [] for r in range(1, 7)]
            for i in range(N)}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    rows = []
    for env, day, prefix in (("training", "2026-09-30", "t"), ("production", "2026-10-01", "p")):
        for country in ("BR", "US"):
            for device, qtype in CELLS:
                broken = env == "production" and (country, device, qtype) == ("BR", "mobile", "tail")
                extra = {"country": country, "device": device, "query_type": qtype}
                rows += events(_groups(prefix, country, device, qtype, broken), day=day, env=env,
                               extra=lambda g, e=extra: e)
    cfg = {"monitors": [{"name": "per country", "metric": "ndcg@10", "relative_drop": 0.05, "min_groups": 30,
                         "where": {"environment": "production"}, "by": ["environment", "country"]}]}
    st = Store(tmp_path_factory.mktemp("split") / "s.duckdb", config=cfg)
    st.ingest(pa.Table.from_pylist(rows))
    return st


def test_the_root_cause_of_a_country_series_is_in_the_other_columns(store):
    fired = store.check()
    assert [a.series["country"] for a in fired] == ["BR"]  # 0.75 + 0.25 / log2(3) = 0.908: 9% below 1
    (a,) = fired
    assert a.value == pytest.approx(0.75 + 0.25 * LOW, abs=1e-12)
    top = a.extra["top_slices"]
    assert all("country" not in (t["column"], t["column2"]) for t in top), top
    # within BR every cell has a quarter of the lists on both sides (no mix effect): device=mobile and
    # query_type=tail each hold half of the lists at (1 + LOW) / 2, the pair a quarter at LOW; each contributes
    # the whole change, 0.25 * (LOW - 1)
    assert {t["slice"] for t in top} == {"device=mobile", "query_type=tail", "device=mobile query_type=tail"}
    for t in top:
        assert t["contribution"] == pytest.approx(0.25 * (LOW - 1), abs=1e-12)
    pair = next(t for t in top if t["column2"])
    assert (pair["window_value"], pair["baseline_value"], pair["n_window"]) == (pytest.approx(LOW, abs=1e-12), 1.0, N)


def test_a_column_fixed_by_the_selection_is_not_searched(store):
    tab = store.slices("ndcg@10", start="2026-10-01", end="2026-10-02",
                       where={"environment": "production", "country": "BR"})
    rows = tab.to_pylist()
    assert rows and all("country" not in (r["column"], r["column2"]) for r in rows)
    meta = json.loads(tab.schema.metadata[b"ranklens"])
    assert meta["fixed_columns"] == ["country"] and meta["columns"] == ["device", "query_type"]
    # a filter to several values leaves the column free: its values are still candidates
    both = store.slices("ndcg@10", start="2026-10-01", end="2026-10-02",
                        where={"environment": "production", "country": ["BR", "US"]}).to_pylist()
    assert any(r["column"] == "country" and r["value"] == "BR" for r in both)
    with pytest.raises(InputError, match="country is fixed to one value"):
        store.slices("ndcg@10", start="2026-10-01", end="2026-10-02", columns=["country"],
                     where={"environment": "production", "country": "BR"})
