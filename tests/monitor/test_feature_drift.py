"""Feature drift (#32 point 4): feature columns of the events declared in ``[signals] features`` give the signals
psi / js / ks(feature:NAME) per window against the baseline, checked here against numbers from their definitions
(docs/monitoring.md, "Feature drift"): PSI by hand, the Jensen-Shannon distance by scipy.spatial.distance.jensenshannon
and KS by scipy.stats.ks_2samp, run in the test."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
from click.testing import CliRunner
from scipy import stats
from scipy.spatial.distance import jensenshannon

from ranklens.cli import cli
from ranklens.errors import InputError, InvalidParameterError
from ranklens.monitor import Store

from .test_signals import one, psi_by_hand

TRAIN, PROD = "2026-09-30", "2026-10-01"
FEATURES = {"signals": {"features": {"price": "numeric", "brand": "categorical"}}}


def events(train, prod, extra=None):
    """One list per value, one item each: train / prod = [(price, brand), ...] (None: missing)."""
    out = []
    for env, day, values in (("training", TRAIN, train), ("production", PROD, prod)):
        for j, (price, brand) in enumerate(values):
            row = {"timestamp": f"{day}T{j % 20:02d}:00:00", "model": "m", "model_version": "v1", "environment": env,
                   "group_id": f"{env}-{j}", "item_id": f"i{j}", "score": 1.0, "price": price, "brand": brand}
            row.update((extra or {}).get((env, j), {}))
            out.append(row)
    return out


def store(tmp_path, train, prod, config=FEATURES, extra=None, **columns):
    st = Store(tmp_path / "s.duckdb", config=config)
    t = pa.Table.from_pylist(events(train, prod, extra))
    for name, typ in columns.items():
        t = t.set_column(t.schema.get_field_index(name), name, t.column(name).cast(typ))
    st.ingest(t)
    return st


def test_numeric_feature_psi_js_ks(tmp_path):
    # baseline prices 0..9: numpy's linear deciles are 0.9, 1.8, ..., 8.1, one baseline value per bin; the window:
    # 0.5 x3 (bin 0), 1.0 (bin 1), 8.1 x4 (an edge: the bin above, 9), 100 x2 (bin 9)
    prices = [0.5, 0.5, 0.5, 1.0, 8.1, 8.1, 8.1, 8.1, 100.0, 100.0]
    st = store(tmp_path, [(float(j), "a") for j in range(10)], [(p, "a") for p in prices])
    table = st.signals(["psi(feature:price)", "js(feature:price)", "ks(feature:price)"])
    w_counts, b_counts = [3, 1, 0, 0, 0, 0, 0, 0, 0, 6], [1] * 10
    got = one(table, "psi(feature:price)")
    assert got["value"] == pytest.approx(psi_by_hand(w_counts, b_counts), rel=1e-12)
    assert (got["n"], got["n_baseline"], got["n_excluded"], got["n_groups"]) == (10, 10, 0, 10)
    js = one(table, "js(feature:price)")
    assert js["value"] == pytest.approx(jensenshannon(w_counts, b_counts), rel=1e-12)  # natural log, a distance
    ks = one(table, "ks(feature:price)")
    ref = stats.ks_2samp(prices, np.arange(10.0), method="asymp")
    assert ks["value"] == pytest.approx(ref.statistic, abs=1e-15)
    assert ks["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)


def test_categorical_feature_psi_js_over_the_values_of_both(tmp_path):
    # baseline a x5, b x5; window a x2, b x3, c x5 (a value the baseline never had): bins a, b, c
    st = store(tmp_path, [(1.0, "a")] * 5 + [(1.0, "b")] * 5, [(1.0, "a")] * 2 + [(1.0, "b")] * 3 + [(1.0, "c")] * 5)
    table = st.signals(["psi(feature:brand)", "js(feature:brand)"])
    assert one(table, "psi(feature:brand)")["value"] == pytest.approx(psi_by_hand([2, 3, 5], [5, 5, 0]), rel=1e-12)
    assert one(table, "js(feature:brand)")["value"] == pytest.approx(jensenshannon([2, 3, 5], [5, 5, 0]), rel=1e-12)
    # the feature is no slice column
    import duckdb

    with duckdb.connect(str(st.path), read_only=True) as con:
        assert con.execute("SELECT name FROM slice_columns").fetchall() == []


def test_missing_values_are_left_out_and_counted(tmp_path):
    # prices given as text (a CSV's way): "2.5" is a number, "abc", "", "inf" and None are missing
    st = store(tmp_path, [("1.0", "a"), ("2.0", "b"), ("3.0", "a")],
               [("2.5", "a"), ("abc", None), ("", "b"), ("inf", ""), (None, "a")])
    table = st.signals(["ks(feature:price)", "psi(feature:brand)"])
    ks = one(table, "ks(feature:price)")
    assert (ks["n"], ks["n_excluded"], ks["n_baseline"]) == (1, 4, 3)
    ref = stats.ks_2samp([2.5], [1.0, 2.0, 3.0], method="asymp")
    assert ks["value"] == pytest.approx(ref.statistic, abs=1e-15)
    brand = one(table, "psi(feature:brand)")
    assert (brand["n"], brand["n_excluded"]) == (3, 2)
    assert brand["value"] == pytest.approx(psi_by_hand([2, 1], [2, 1]), abs=1e-15)


def test_default_signals_list_the_features_and_refusals(tmp_path):
    st = store(tmp_path, [(1.0, "a")] * 3, [(2.0, "b")] * 3)
    names = set(st.signals().column("signal").to_pylist())
    assert {"psi(feature:price)", "ks(feature:price)", "js(feature:price)", "psi(feature:brand)",
            "js(feature:brand)"} <= names and "ks(feature:brand)" not in names
    with pytest.raises(InvalidParameterError, match="brand is a categorical feature"):
        st.signals(["ks(feature:brand)"])
    with pytest.raises(InvalidParameterError, match="no feature 'colour'.*brand, price"):
        st.signals(["psi(feature:colour)"])
    with pytest.raises(InvalidParameterError, match="unknown signal"):
        st.signals(["gini(feature:price)"])


def test_configuration_of_features_and_a_kind_that_changes(tmp_path):
    for features, text in (({"price": "number"}, "numeric"), ({"score": "numeric"}, "other than"),
                           ({"1x": "numeric"}, "letters, digits"), ([1], "must be a table")):
        with pytest.raises(InvalidParameterError, match=text):
            Store(tmp_path / "x.duckdb", config={"signals": {"features": features}})
    st = store(tmp_path, [(1.0, "a")], [(2.0, "b")])
    other = Store(st.path, config={"signals": {"features": {"price": "categorical"}}})
    t = pa.Table.from_pylist(events([(1.0, "a")], []))
    with pytest.raises(InputError, match="feature 'price' is numeric in the store"):
        other.ingest(t.set_column(t.schema.get_field_index("group_id"), "group_id", pa.array(["new"])))


def test_feature_monitor_fires_with_its_root_cause_and_cli(tmp_path):
    # 40 lists a day; on production, the brand of the mobile lists (j % 4 == 0, all "a" before) moves to c:
    # a js monitor fires and its alert names device=mobile
    train = [(1.0, "ab"[j % 2]) for j in range(40)]
    prod = [(1.0, "c" if j % 4 == 0 else "ab"[j % 2]) for j in range(40)]
    extra = {(env, j): {"device": "mobile" if j % 4 == 0 else "desktop"} for env in ("training", "production")
             for j in range(40)}
    cfg = {**FEATURES, "monitors": [{"name": "brand drift", "metric": "js(feature:brand)", "threshold": 0.1,
                                     "where": {"environment": "production"}}]}
    st = store(tmp_path, train, prod, config=cfg, extra=extra)
    value = one(st.signals(["js(feature:brand)"]), "js(feature:brand)")["value"]
    assert value == pytest.approx(jensenshannon([10, 20, 10], [20, 20, 0]), rel=1e-12)
    alerts = [a.to_dict() for a in st.check(record=False, notify=False)]
    assert len(alerts) == 1 and alerts[0]["metric"] == "js(feature:brand)" and alerts[0]["value"] == value
    assert "device=mobile" in json.dumps(alerts[0], default=str)
    args = ["monitor", "signals", "--store", str(st.path), "--where", "environment=production", "-f", "json"]
    r = CliRunner().invoke(cli, [*args, "-m", "js(feature:brand)"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)[0]["value"] == pytest.approx(value, rel=1e-12)
    r = CliRunner().invoke(cli, [*args, "-m", "ks(feature:brand)"])
    assert r.exit_code == 2 and "categorical feature" in r.output and "Traceback" not in r.output
