"""Automatic slices (issue #32 point 2), on lists written here: every slice (values and pairs) of the series
against its own baseline, the one-sided Welch p-values of their drops (scipy) adjusted by Holm's method over the
slices tested (by hand), one alert per slice that crosses the rule. The default monitor misses the collapse:
the slice holds 8% of the day's lists. The slow reproduction of the issue is tests/monitor/test_root_cause.py."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
from click.testing import CliRunner

from ranklens.cli import cli
from ranklens.monitor import Store

from .handcalc import events, ndcg

SIZES = {("US", "mobile"): 200, ("US", "desktop"): 200, ("DE", "mobile"): 40, ("DE", "desktop"): 40}


def _lists(prefix: str, collapsed: bool) -> dict[tuple[str, str], dict[str, list]]:
    """Lists of 6 items, one clicked: at rank 1 or 2 (alternately); in DE x mobile when ``collapsed``, at 4 or 5."""
    out = {}
    for (country, device), n in SIZES.items():
        low = collapsed and (country, device) == ("DE", "mobile")
        out[(country, device)] = {
            f"{prefix}-{country}-{device}-{i}": [["click"] if r == (4 + i % 2 if low else 1 + i % 2) else []
                                                 for r in range(1, 7)] for i in range(n)}
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    train, prod = _lists("t", False), _lists("p", True)
    rows = []
    for cells, env, day in ((train, "training", "2026-09-30"), (prod, "production", "2026-10-01")):
        for (country, device), groups in cells.items():
            rows += events(groups, day=day, env=env, extra=lambda g, c=country, d=device: {"country": c, "device": d})
    cfg = {"monitors": [
        {"name": "default", "metric": "ndcg@10", "relative_drop": 0.05, "min_groups": 30, "significance": 0.05,
         "where": {"environment": "production"}},
        {"name": "auto", "metric": "ndcg@10", "slices": "auto", "relative_drop": 0.2, "significance": 0.05,
         "where": {"environment": "production"}}]}
    store = Store(tmp_path_factory.mktemp("auto") / "s.duckdb", config=cfg)
    store.ingest(pa.Table.from_pylist(rows))
    return store, train, prod


def _values(groups: dict[str, list]) -> list[float]:
    return [ndcg([1.0 if x else 0.0 for x in items], 10) for items in groups.values()]


def _holm(p: list[float]) -> list[float]:
    """Holm's step-down adjustment, from its definition."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    out, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        out[i] = running
    return out


def test_auto_slices_by_hand(world):
    scipy_stats = pytest.importorskip("scipy.stats")
    store, train, prod = world
    res = store.check()
    assert not [a for a in res if a.monitor == "default"]  # the day moved by less than 5%
    day = [v for g in prod.values() for v in _values(g)]
    base = [v for g in train.values() for v in _values(g)]
    assert np.mean(day) > 0.95 * np.mean(base)
    # the candidates: each value of country and device, and each pair, against the same cell in training
    cells = {}
    for col, i in (("country", 0), ("device", 1)):
        for v in {k[i] for k in SIZES}:
            cells[f"{col}={v}"] = ([x for k, g in prod.items() if k[i] == v for x in _values(g)],
                                   [x for k, g in train.items() if k[i] == v for x in _values(g)])
    for k in SIZES:
        cells[f"country={k[0]} device={k[1]}"] = (_values(prod[k]), _values(train[k]))
    names = sorted(cells)
    p = [scipy_stats.ttest_ind(*cells[n], equal_var=False, alternative="less").pvalue for n in names]
    adjusted = dict(zip(names, _holm(p)))
    fires = {n for n in names if np.mean(cells[n][0]) < 0.8 * np.mean(cells[n][1]) and adjusted[n] < 0.05}
    assert fires == {"country=DE", "country=DE device=mobile"}
    auto = {a.series["slice"]: a for a in res if a.monitor == "auto"}
    assert set(auto) == fires
    for n, a in auto.items():
        assert a.value == pytest.approx(np.mean(cells[n][0]), abs=1e-12)
        assert a.baseline == pytest.approx(np.mean(cells[n][1]), abs=1e-12)
        assert a.p_value == pytest.approx(adjusted[n], rel=1e-9)
        assert a.threshold == pytest.approx(0.8 * a.baseline, abs=1e-12) and a.n_groups == len(cells[n][0])
        assert a.extra["status"] == "opened" and a.extra["top_slices"][0]["slice"] == n
        assert f"ndcg@10 in {n} = " in a.reason and "Holm-adjusted over 8 slices" in a.reason
    # each slice is its own alert series: a second check changes nothing
    assert [a.extra["status"] for a in store.check() if a.monitor == "auto"] == ["firing", "firing"]
    # monitor slices --auto: the same search, the same numbers
    r = CliRunner().invoke(cli, ["monitor", "slices", "--auto", "--store", str(store.path),
                                 "--start", "2026-10-01", "--end", "2026-10-02", "--relative-drop", "0.2",
                                 "--where", "environment=production", "-f", "json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    rows = {" ".join(f"{x[c]}={x[v]}" for c, v in (("column", "value"), ("column2", "value2")) if x[c]): x
            for x in json.loads(r.stdout)}
    assert set(rows) == fires
    for n, x in rows.items():
        assert x["p_drop_adjusted"] == pytest.approx(adjusted[n], rel=1e-9)
        assert x["relative_change"] == pytest.approx(np.mean(cells[n][0]) / np.mean(cells[n][1]) - 1, abs=1e-12)
    table = CliRunner().invoke(cli, ["monitor", "slices", "--auto", "--store", str(store.path), "--start",
                                     "2026-10-01", "--end", "2026-10-02", "--relative-drop", "0.2"]).stdout
    assert "2 of 8 slices tested cross the rule" in table and "country=DE device=mobile" in table


def test_auto_slices_with_only_the_split_column_say_nothing_to_search(tmp_path):
    """A monitor that splits its series by country and searches only country has nothing to search in any
    series (country is one value in each): said so, not "no baseline" (both sides have lists)."""
    rows = []
    for env, day in (("training", "2026-09-30"), ("production", "2026-10-01")):
        for country in ("US", "DE"):
            groups = {f"{env}-{country}-{i}": [["click"] if r == 1 + i % 2 else [] for r in range(1, 4)]
                      for i in range(40)}
            rows += events(groups, day=day, env=env, extra=lambda g, c=country: {"country": c, "device": "mobile"})
    cfg = {"monitors": [{"name": "split", "metric": "ndcg@10", "slices": "auto", "columns": ["country"],
                         "by": ["model", "model_version", "environment", "country"], "relative_drop": 0.2,
                         "where": {"environment": "production"}}]}
    store = Store(tmp_path / "s.duckdb", config=cfg)
    store.ingest(pa.Table.from_pylist(rows))
    res = store.check()
    assert list(res) == []
    assert res.not_judged == {"nothing to search": 2}  # one window, two series (country US and DE)
    # the same search asked directly names why
    with pytest.raises(Exception, match="country is fixed to one value in each series"):
        store.auto_slices("ndcg@10", columns=["country"], by=["country"], where={"environment": "production"})
