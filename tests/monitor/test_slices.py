"""Root cause by hand: slices of one and two columns, the shift-share decomposition (rate + mix effects adding up
to the change), Welch's p-values against scipy, Holm's correction computed here, the minimum support, and the
baseline of each series as the monitors use it."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from handcalc import events, ndcg
from ranklens.cli import cli
from ranklens.monitor import Store

scipy_stats = pytest.importorskip("scipy.stats")

# Lists of two items; their NDCG@10 by the definition: [click, -] = 1, [-, click] = 1/log2(3).
TOP, LOW = [["click"], []], [[], ["click"]]
HI, LO = 1.0, ndcg([0, 1])


def _groups(prefix, cells):
    """cells: {(country, device): [pattern, ...]} -> ({gid: pattern}, {gid: (country, device)})."""
    gs, where = {}, {}
    for (country, device), patterns in cells.items():
        for i, p in enumerate(patterns):
            gid = f"{prefix}-{country}-{device}-{i}"
            gs[gid], where[gid] = p, (country, device)
    return gs, where


# baseline (training) and window (production) of model m, version v1
BASE = {("BR", "mobile"): [TOP] * 3 + [LOW] * 1, ("BR", "desktop"): [TOP] * 2 + [LOW] * 2,
        ("US", "mobile"): [TOP] * 4 + [LOW] * 2, ("US", "desktop"): [TOP] * 5 + [LOW] * 1}
WIN = {("BR", "mobile"): [TOP] * 1 + [LOW] * 5, ("BR", "desktop"): [TOP] * 2 + [LOW] * 1,
       ("US", "mobile"): [TOP] * 4 + [LOW] * 1, ("US", "desktop"): [TOP] * 3 + [LOW] * 2,
       ("DE", "mobile"): [TOP] * 2}  # DE: in the window only


def _rows(prefix, cells, day, env, version="v1"):
    gs, where = _groups(prefix, cells)
    return events(gs, day=day, env=env, version=version,
                  extra=lambda gid: {"country": where[gid][0], "device": where[gid][1]})


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("slices") / "s.duckdb"
    st = Store(path, config={})
    rows = _rows("b", BASE, "2026-10-01", "training") + _rows("w", WIN, "2026-10-02", "production")
    # v2 in production, without training lists of its own: its baseline is the model's training over all versions
    rows += _rows("v", {("BR", "mobile"): [LOW] * 3, ("US", "desktop"): [TOP] * 3}, "2026-10-02", "production", "v2")
    st.ingest(pa.Table.from_pylist(rows))
    return st


def _value(p):
    return HI if p is TOP else LO


def _cell_values(cells, key):
    """Values of the groups whose (country, device) match key (None = any)."""
    return [_value(p) for c, ps in cells.items() if all(k is None or k == x for k, x in zip(key, c)) for p in ps]


def _hand(key):
    """Rate, mix and contribution of one cell from the definitions."""
    b_all, w_all = _cell_values(BASE, (None, None)), _cell_values(WIN, (None, None))
    b, w = _cell_values(BASE, key), _cell_values(WIN, key)
    sb, sw = len(b) / len(b_all), len(w) / len(w_all)
    big_mb = sum(b_all) / len(b_all)
    if b and w:
        mb, mw = sum(b) / len(b), sum(w) / len(w)
        rate, mix = sw * (mw - mb), (sw - sb) * (mb - big_mb)
    elif w:
        rate, mix = 0.0, sw * (sum(w) / len(w) - big_mb)
    else:
        rate, mix = 0.0, -sb * (sum(b) / len(b) - big_mb)
    return rate, mix, b, w


def _v1(store, **kw):
    tab = store.slices("ndcg@10", start="2026-10-02", end="2026-10-03", where={"model_version": "v1"}, **kw)
    return tab.to_pylist(), json.loads(tab.schema.metadata[b"ranklens"])


def test_one_and_two_columns_by_hand(store):
    rows, meta = _v1(store, min_support=1)
    w_all, b_all = _cell_values(WIN, (None, None)), _cell_values(BASE, (None, None))
    total = sum(w_all) / len(w_all) - sum(b_all) / len(b_all)
    assert meta["change"] == pytest.approx(total, abs=1e-12)
    assert meta["baseline"] == "model_version=v1 model=m environment=training"
    got = {(r["column"], r["value"], r["column2"], r["value2"]): r for r in rows}
    keys = {("country", c, None, None): (c, None) for c in ("BR", "US", "DE")}
    keys.update({("device", d, None, None): (None, d) for d in ("mobile", "desktop")})
    keys.update({("country", c, "device", d): (c, d) for c, d in set(BASE) | set(WIN)})
    # DE has no baseline list: below any minimum support, it is pooled (alone) into the "(other)" rows
    keys[("country", "(other)", None, None)] = keys.pop(("country", "DE", None, None))
    keys[("country", "(other)", "device", "(other)")] = keys.pop(("country", "DE", "device", "mobile"))
    assert set(got) == set(keys)
    for k, cell in keys.items():
        rate, mix, b, w = _hand(cell)
        r = got[k]
        assert (r["n_baseline"], r["n_window"]) == (len(b), len(w))
        assert r["rate_effect"] == pytest.approx(rate, abs=1e-12)
        assert r["mix_effect"] == pytest.approx(mix, abs=1e-12)
        assert r["contribution"] == pytest.approx(rate + mix, abs=1e-12)
    # over the cells of one column, or of one pair of columns, the contributions add up to the change exactly
    for column, column2 in (("country", None), ("device", None), ("country", "device")):
        part = [r for r in rows if r["column"] == column and r["column2"] == column2]
        assert sum(r["contribution"] for r in part) == pytest.approx(total, abs=1e-12)
    # worst first: BR x mobile fell from 3/4 top lists to 1/6
    assert (rows[0]["column"], rows[0]["value"]) == ("country", "BR")
    listed = [r["contribution"] for r in rows if not r["pooled"]]
    assert listed == sorted(listed) and all(r["pooled"] for r in rows[len(listed):])


def test_p_values_are_welch_and_holm_adjusted(store):
    rows, meta = _v1(store, min_support=2)
    tested = [r for r in rows if not r["pooled"]]
    for r in tested:
        cell = {r["column"]: r["value"], **({r["column2"]: r["value2"]} if r["column2"] else {})}
        _, _, b, w = _hand((cell.get("country"), cell.get("device")))
        ref = scipy_stats.ttest_ind(w, b, equal_var=False).pvalue
        if math.isnan(ref):  # both sides constant: scipy gives NaN; the change is then certain (0) or nil (1)
            ref = 1.0 if sum(w) / len(w) == sum(b) / len(b) else 0.0
        assert r["p_value"] == pytest.approx(ref, rel=1e-9, abs=1e-15)
    # Holm over the m listed slices, computed here: sorted p, (m - j + 1) * p_(j), running maximum, capped at 1
    m = len(tested)
    assert meta["n_tested"] == m and meta["correction"] == "holm"
    order = sorted(range(m), key=lambda i: tested[i]["p_value"])
    running, expected = 0.0, [0.0] * m
    for j, i in enumerate(order):
        running = max(running, min(1.0, (m - j) * tested[i]["p_value"]))
        expected[i] = running
    assert [r["p_adjusted"] for r in tested] == pytest.approx(expected, rel=1e-12)
    # Benjamini-Hochberg, computed here: m * p_(j) / j, running minimum from the largest
    rows_bh, _ = _v1(store, min_support=2, correction="bh")
    bh = {(r["column"], r["value"], r["column2"], r["value2"]): r["p_adjusted"] for r in rows_bh if not r["pooled"]}
    ps = sorted((r["p_value"], (r["column"], r["value"], r["column2"], r["value2"])) for r in tested)
    best = 1.0
    for j in range(m, 0, -1):
        best = min(best, m * ps[j - 1][0] / j)
        assert bh[ps[j - 1][1]] == pytest.approx(best, rel=1e-12)


def test_cells_below_the_minimum_support_are_pooled_and_still_add_up(store):
    rows, meta = _v1(store, min_support=4)
    # listed alone: a cell with >= 4 counted groups on both sides; DE (window only) and small cells are pooled
    alone = {(r["column"], r["value"], r["column2"], r["value2"]) for r in rows if not r["pooled"]}
    assert alone == {("country", "BR", None, None), ("country", "US", None, None), ("device", "mobile", None, None),
                     ("device", "desktop", None, None), ("country", "BR", "device", "mobile"),
                     ("country", "US", "device", "mobile"), ("country", "US", "device", "desktop")}
    other = [r for r in rows if r["pooled"]]  # DE (window only); BR x desktop (3 window lists) and DE x mobile
    assert sorted((r["column"], r["column2"] or "", r["n_cells"]) for r in other) == [("country", "", 1),
                                                                                      ("country", "device", 2)]
    assert rows[-2:] == other  # pooled rows come last
    assert other[0]["value"] == "(other)" and other[0]["p_value"] != other[0]["p_value"]  # no test: NaN
    de_rate, de_mix, _, _ = _hand(("DE", None))
    assert other[0]["contribution"] == pytest.approx(de_rate + de_mix, abs=1e-12)
    for column, column2 in (("country", None), ("country", "device")):
        part = [r for r in rows if r["column"] == column and r["column2"] == column2]
        assert sum(r["contribution"] for r in part) == pytest.approx(meta["change"], abs=1e-12)
    assert meta["n_tested"] == len(alone)


def test_each_series_against_its_own_baseline_as_the_monitors(store):
    tab = store.slices("ndcg@10", start="2026-10-02", end="2026-10-03", min_support=1, depth=1)
    meta = json.loads(tab.schema.metadata[b"ranklens"])
    by_version = {s["series"]["model_version"]: s for s in meta["series"]}
    assert set(by_version) == {"v1", "v2"}
    every_base = _cell_values(BASE, (None, None))
    # v2 has no training lists: the model's training lists (v1's here), as the monitors fall back
    assert by_version["v2"]["baseline_value"] == pytest.approx(sum(every_base) / len(every_base), abs=1e-12)
    assert "this version has none" in by_version["v2"]["baseline"]
    assert by_version["v2"]["window_value"] == pytest.approx((3 * LO + 3 * HI) / 6, abs=1e-12)
    b = {r["model_version"]: r for r in store.baselines("ndcg@10", start="2026-10-02", end="2026-10-03",
                                                          where={"environment": "production"}).to_pylist()}
    assert b["v1"]["value"] == pytest.approx(by_version["v1"]["baseline_value"], abs=1e-12)
    assert b["v2"]["value"] == pytest.approx(by_version["v2"]["baseline_value"], abs=1e-12)
    assert b["v2"]["n_groups"] == 20
    # Store.baseline of a selection follows the same rule (v2: the model's training lists)
    one = store.baseline("ndcg@10", where={"model": "m", "model_version": "v2", "environment": "production"})
    assert one["value"] == pytest.approx(b["v2"]["value"], abs=1e-12)
    assert "this version has none" in one["spec"]["selection"]
    # the monitor judges v2 against the same baseline value
    from ranklens.monitor import MonitorConfig, MonitorSpec

    cfg = MonitorConfig(monitors=(MonitorSpec("any drop", relative_drop=0.01, where={"environment": "production"}),))
    alerts = Store(store.path, config=cfg).check(at="2026-10-02T12:00:00", record=False, notify=False)
    fired = {a.series["model_version"]: a for a in alerts}
    assert fired["v2"].baseline == pytest.approx(b["v2"]["value"], abs=1e-12)
    assert fired["v1"].baseline == pytest.approx(b["v1"]["value"], abs=1e-12)


def test_cli_slices_prints_each_rows_groups_command_and_drill_uses_the_last_day(store):
    runner = CliRunner()
    base = ["monitor", "slices", "--store", str(store.path), "--min-support", "1", "--limit", "3", "--where",
            "model_version=v1"]
    out = runner.invoke(cli, base, catch_exceptions=False)
    assert out.exit_code == 0, out.output
    assert "p-values Holm-adjusted over" in out.output
    line = next(x for x in out.output.splitlines() if x.strip().startswith("1  ranklens monitor groups"))
    cmd = line.strip().split("  ", 1)[1].split()[1:]
    first = json.loads(runner.invoke(cli, base + ["-f", "json"], catch_exceptions=False).output)[0]
    assert first["groups_command"].split()[1:] == cmd
    groups = runner.invoke(cli, cmd + ["--store", str(store.path), "-f", "json", "--limit", "1000"],
                           catch_exceptions=False)
    got = json.loads(groups.output)
    assert len(got) == first["n_window"]  # the row's lists in the window, no training list
    for g in got:
        assert g[first["column"]] == first["value"] and g["model_version"] == "v1"
        assert first["column2"] is None or g[first["column2"]] == first["value2"]
    # --drill without --start/--end: the last day, as the slices (training lists of 2026-10-01 are not in it)
    drill = runner.invoke(cli, ["monitor", "slices", "--store", str(store.path), "--drill", "country=BR", "-f", "json",
                                "--limit", "100"], catch_exceptions=False)
    days = {g["timestamp"][:10] for g in json.loads(drill.output)}
    assert days == {"2026-10-02"}


@pytest.mark.parametrize("args", [["report", "-m", "ndcg@99999999999"], ["report", "-k", "1001"],
                                  ["slices", "-m", "ndcg@5000"], ["explain", "x", "-k", "2000"]])
def test_cutoffs_above_1000_are_refused_in_one_line(store, args, capsys):
    from ranklens.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["monitor", *args, "--store", str(store.path)])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert len(err.strip().splitlines()) == 1 and "1000" in err and "Traceback" not in err


def test_compare_defaults_to_the_same_period(store):
    # v1 was served on 2026-10-01 (training) and 2026-10-02 (production), v2 on 2026-10-02 only: by default both
    # sides are the days both were served, 2026-10-02
    c = store.compare("ndcg@10", a={"where": {"model_version": "v1"}}, b={"where": {"model_version": "v2"}},
                      n_resamples=100)
    va, vb = _cell_values(WIN, (None, None)), [LO] * 3 + [HI] * 3
    assert (c["a"]["start"], c["a"]["end"]) == ("2026-10-02T00:00:00", "2026-10-03T00:00:00")
    assert (c["b"]["start"], c["b"]["end"]) == (c["a"]["start"], c["a"]["end"])
    assert c["a"]["n_groups"] == len(va) and c["b"]["n_groups"] == len(vb)
    assert c["difference"] == pytest.approx(sum(va) / len(va) - sum(vb) / len(vb), abs=1e-12)
    assert c["p_value"] == pytest.approx(scipy_stats.ttest_ind(va, vb, equal_var=False).pvalue, rel=1e-9)
    # as given: v1's training day counts too
    c = store.compare("ndcg@10", a={"where": {"model_version": "v1"}}, b={"where": {"model_version": "v2"}},
                      n_resamples=100, same_period=False)
    assert c["a"]["n_groups"] == len(va) + len(_cell_values(BASE, (None, None))) and c["a"]["start"] is None
