"""Label-free signals (Store.signals, `ranklens monitor signals`, monitors on them) against numbers computed
here from their definitions (docs/monitoring.md, "Signals without labels"): PSI by hand on small
histograms, KS against scipy.stats.ks_2samp, Gini by its double-sum formula, coverage, novelty and
intra-list diversity by hand."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet
import pytest
from click.testing import CliRunner
from scipy import stats

from ranklens.cli import cli
from ranklens.errors import InputError, InvalidParameterError
from ranklens.monitor import Store, load_config

TRAIN, PROD = "2026-09-30", "2026-10-01"


def rows(lists, *, day, env, version="v1", by="score"):
    """Event rows: lists = {group_id: [(item_id, score), ...]} (served by decreasing score) or, with
    by="rank", {group_id: [item_id, ...]} served in that order."""
    out = []
    for h, (gid, items) in enumerate(lists.items()):
        for r, it in enumerate(items, start=1):
            row = {"timestamp": f"{day}T{h % 20:02d}:00:00", "model": "m", "model_version": version,
                   "environment": env, "group_id": gid}
            if by == "score":
                row.update(item_id=it[0], score=float(it[1]), rank=None)
            else:
                row.update(item_id=it, rank=r, score=None)
            row["labels"] = []
            out.append(row)
    return out


def store(tmp_path, train, prod, by="score", config=None):
    st = Store(tmp_path / "s.duckdb", config=config or {})
    t = pa.Table.from_pylist(rows(train, day=TRAIN, env="training", by=by) + rows(prod, day=PROD, env="production",
                                                                                   by=by))
    if by == "score":
        t = t.drop_columns(["rank"])
    else:
        t = t.drop_columns(["score"])
    st.ingest(t)
    return st


def one(table, signal):
    """The production row of a signal (one window, one series)."""
    r = [x for x in table.to_pylist() if x["signal"] == signal and x["environment"] == "production"]
    assert len(r) == 1, r
    return r[0]


def psi_by_hand(w_counts, b_counts, eps=1e-4):
    w = [c / sum(w_counts) for c in w_counts]
    b = [c / sum(b_counts) for c in b_counts]
    w = [x if x > 0 else eps for x in w]
    b = [x if x > 0 else eps for x in b]
    return sum((x - y) * math.log(x / y) for x, y in zip(w, b))


# ---------------------------------------------------------------------------------------------- score drift
def test_psi_score_on_baseline_deciles_by_hand(tmp_path):
    # baseline scores 0..9 (one list each of one item): numpy's linear deciles are 0.9, 1.8, ..., 8.1,
    # so each baseline score sits alone in one of the 10 bins
    train = {f"t{j}": [(f"a{j}", j)] for j in range(10)}
    # window: 0.5 (bin 0) x3, 1.0 (bin 1: 0.9 <= 1.0 < 1.8), 8.1 (an edge: the bin above, 9) x4, 100 (bin 9) x2
    scores = [0.5, 0.5, 0.5, 1.0, 8.1, 8.1, 8.1, 8.1, 100, 100]
    prod = {f"p{j}": [(f"a{j}", s)] for j, s in enumerate(scores)}
    st = store(tmp_path, train, prod)
    got = one(st.signals(["psi(score)"]), "psi(score)")
    expected = psi_by_hand([3, 1, 0, 0, 0, 0, 0, 0, 0, 6], [1] * 10)
    assert got["value"] == pytest.approx(expected, rel=1e-12)
    assert (got["n"], got["n_baseline"], got["n_excluded"], got["n_groups"]) == (10, 10, 0, 10)
    assert got["baseline"] is None


def test_ks_score_is_scipys_two_sample_test(tmp_path):
    rng = np.random.default_rng(5)
    b = np.round(rng.normal(0, 1, 300), 6)
    w = np.round(rng.normal(0.3, 1.2, 250), 6)
    train = {f"t{j}": [(f"x{j}-{i}", s) for i, s in enumerate(b[j * 3:(j + 1) * 3])] for j in range(100)}
    prod = {f"p{j}": [(f"y{j}-{i}", s) for i, s in enumerate(w[j * 5:(j + 1) * 5])] for j in range(50)}
    st = store(tmp_path, train, prod)
    got = one(st.signals(["ks(score)"]), "ks(score)")
    ref = stats.ks_2samp(w, b, method="asymp")
    assert got["value"] == pytest.approx(ref.statistic, abs=1e-15)
    assert got["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)
    assert (got["n"], got["n_baseline"]) == (250, 300)


def test_rank_only_lists_have_no_score_signal(tmp_path):
    st = store(tmp_path, {"t1": ["a", "b"]}, {"p1": ["a", "b"]}, by="rank")
    got = one(st.signals(["psi(score)"]), "psi(score)")
    assert got["value"] is None and got["n"] == 0 and got["n_excluded"] == 2


# ---------------------------------------------------------------------------------------------- positions
def test_psi_position_by_hand(tmp_path):
    # baseline: 4 lists of 2 items -> positions 1, 2 (4 rows each); window: 2 lists of 3 items and one of 22
    train = {f"t{j}": [f"a{j}", f"b{j}"] for j in range(4)}
    prod = {"p0": ["a0", "b0", "c0"], "p1": ["a1", "b1", "c1"], "p2": [f"z{i}" for i in range(22)]}
    st = store(tmp_path, train, prod, by="rank")
    got = one(st.signals(["psi(position)"]), "psi(position)")
    w = [3, 3, 3] + [1] * 17 + [2]  # positions 1..20 (1-3 in every list, 4-20 in p2 only), then 21 and 22
    b = [4, 4] + [0] * 19
    assert got["value"] == pytest.approx(psi_by_hand(w, b), rel=1e-12)
    assert got["n"] == 3 + 3 + 22


def test_psi_popularity_by_hand(tmp_path):
    # baseline: one-item lists; item a served by 5 lists, b 4, c 3, d 2, e..j 1 each (20 rows). A baseline
    # row's popularity leaves its own list out: a 4 (x5), b 3 (x4), c 2 (x3), d 1 (x2), e..j 0 (x6).
    # Sorted, rows 0-5 are 0, 6-7 are 1, 8-10 are 2, 11-14 are 3, 15-19 are 4; numpy's linear deciles at
    # 19 p: 0, 0, 0.7, 1.6, 2, 3, 3, 4, 4 -> edges 0, 0.7, 1.6, 2, 3, 4; a value goes above the edges <= it:
    # 0 -> bin 1, 1 -> bin 2, 2 -> bin 4, 3 -> bin 5, 4 or more -> bin 6
    counts = {"a": 5, "b": 4, "c": 3, "d": 2, "e": 1, "f": 1, "g": 1, "h": 1, "i": 1, "j": 1}
    train, n = {}, 0
    for it, c in counts.items():
        for _ in range(c):
            train[f"t{n}"] = [it]
            n += 1
    # window top-1 items: a (popularity 5 -> bin 6) twice, j (1 -> bin 2), new (0 -> bin 1)
    prod = {"p0": ["a", "b"], "p1": ["a", "c"], "p2": ["j", "a"], "p3": ["new", "a"]}
    st = store(tmp_path, train, prod, by="rank")
    got = one(st.signals(["psi(popularity@1)"]), "psi(popularity@1)")
    b_rows = [0, 6, 2, 0, 3, 4, 5]
    w_rows = [0, 1, 1, 0, 0, 0, 2]
    assert got["value"] == pytest.approx(psi_by_hand(w_rows, b_rows), rel=1e-12)
    assert got["n"] == 4 and got["n_baseline"] == 20


# ---------------------------------------------------------------------------------------------- catalogue
def test_coverage_gini_novelty_by_hand(tmp_path):
    # baseline: 4 lists over items a b c d (a in 4 lists, b in 2, c in 1, d in 1)
    train = {"t0": ["a", "b"], "t1": ["a", "b"], "t2": ["a", "c"], "t3": ["a", "d"]}
    # window: a x3, b x1, x x2 (x never served in the baseline)
    prod = {"p0": ["a", "b"], "p1": ["a", "x"], "p2": ["x", "a"]}
    st = store(tmp_path, train, prod, by="rank")
    t = st.signals(["coverage", "gini", "novelty", "coverage@1", "gini@1"])
    cov = one(t, "coverage")
    assert cov["value"] == pytest.approx(2 / 4) and cov["n"] == 2 and cov["n_excluded"] == 1
    assert cov["baseline"] == pytest.approx(1.0)

    def gini_pairs(c):  # mean absolute difference form: sum_ij |ci - cj| / (2 (n - 1) sum c)
        return sum(abs(x - y) for x, y in itertools.product(c, c)) / (2 * (len(c) - 1) * sum(c))

    g = one(t, "gini")
    assert g["value"] == pytest.approx(gini_pairs([3, 1, 2]), rel=1e-12)
    assert g["baseline"] == pytest.approx(gini_pairs([4, 2, 1, 1]), rel=1e-12)
    g1 = one(t, "gini@1")  # top-1 exposure: a 2, x 1
    assert g1["value"] == pytest.approx(gini_pairs([2, 1]), rel=1e-12)
    c1 = one(t, "coverage@1")  # top-1 items a, x: a is in the catalogue (the baseline's 4 items)
    assert c1["value"] == pytest.approx(1 / 4)
    nov = one(t, "novelty")
    # p(a) = 4/4, p(b) = 2/4; x unknown (left out): lists p0 -> (0 + 1) / 2, p1 -> 0, p2 -> 0
    assert nov["value"] == pytest.approx((0.5 + 0 + 0) / 3, rel=1e-12)
    assert nov["n"] == 3 and nov["n_excluded"] == 2
    # the baseline's own novelty counts a list's other baseline lists: p(a) = 3/3 and p(b) = 1/3 in t0 and t1
    # -> (0 + log2 3) / 2; in t2, t3 the items c and d are in no other list (left out) -> 0
    assert nov["baseline"] == pytest.approx((2 * math.log2(3) / 2 + 0 + 0) / 4, rel=1e-12)


def test_catalogue_size_given(tmp_path):
    st = store(tmp_path, {"t0": ["a", "b"]}, {"p0": ["a", "x", "y"]}, by="rank")
    cov = one(st.signals(["coverage"], catalogue_size=10), "coverage")
    assert cov["value"] == pytest.approx(3 / 10) and cov["baseline"] == pytest.approx(2 / 10)
    with pytest.raises(InvalidParameterError, match="catalogue_size"):
        st.signals(["coverage"], catalogue_size=0)


def test_ild_by_hand_with_item_attributes(tmp_path):
    train = {"t0": ["a", "b", "c"]}
    prod = {"p0": ["a", "b", "c"], "p1": ["a", "d"], "p2": ["b", "z"], "p3": ["c", "d", "e"]}
    cats = pa.table({"item_id": ["a", "b", "c", "d", "e"], "category": ["x", "x", "y", "y", "y"]})
    st = store(tmp_path, train, prod, by="rank")
    got = one(st.signals(["ild", "ild@2"], items=cats, attribute="category"), "ild")
    # p0: x x y -> 2 of 3 pairs differ; p1: x y -> 1; p2: z has no attribute -> one item: left out;
    # p3: y y y -> 0
    assert got["value"] == pytest.approx((2 / 3 + 1 + 0) / 3, rel=1e-12)
    assert got["n"] == 3 and got["n_excluded"] == 1
    assert got["baseline"] == pytest.approx(2 / 3)
    top2 = one(st.signals(["ild@2"], items=cats, attribute="category"), "ild@2")
    assert top2["value"] == pytest.approx((0 + 1 + 0) / 3)  # p0 top-2: x x; p1: x y; p3: y y
    path = tmp_path / "items.csv"
    path.write_text("item_id,category\na,x\nb,x\nc,y\nd,y\ne,y\n")
    again = one(st.signals(["ild"], items=str(path), attribute="category"), "ild")
    assert again["value"] == pytest.approx(got["value"], rel=1e-12)
    with pytest.raises(InvalidParameterError, match="ild"):
        st.signals(["ild"])
    with pytest.raises(InputError, match="no column 'genre'"):
        st.signals(["ild"], items=cats, attribute="genre")
    dup = pa.table({"item_id": ["a", "a"], "category": ["x", "y"]})
    with pytest.raises(InputError, match="item_id 'a' has more than one category: 'x', 'y'"):
        st.signals(["ild"], items=dup, attribute="category")
    # event files carrying the attribute on their rows serve too: a pair repeated counts once, rows without
    # an attribute (label rows) are left out
    ev = tmp_path / "ev"
    ev.mkdir()
    pa.parquet.write_table(pa.table({"item_id": ["a", "b", "a", "c", "d", "e", "z"],
                                     "category": ["x", "x", "x", "y", "y", "y", None]}), ev / "part-1.parquet")
    pa.parquet.write_table(pa.table({"item_id": ["a", "d"], "category": ["x", " y "]}), ev / "part-2.parquet")
    from_events = one(st.signals(["ild"], items=str(ev / "*.parquet"), attribute="category"), "ild")
    assert from_events["value"] == pytest.approx(got["value"], rel=1e-12)
    with pytest.raises(InvalidParameterError, match="matches no file"):
        st.signals(["ild"], items=str(ev / "*.csv"), attribute="category")


def test_previous_window_baseline_and_names(tmp_path):
    st = Store(tmp_path / "s.duckdb", config={})
    t = pa.Table.from_pylist(rows({"a": [("i1", 1.0)], "b": [("i2", 2.0)]}, day="2026-10-01", env="production")
                             + rows({"c": [("i1", 1.0)], "d": [("i3", 5.0)]}, day="2026-10-02", env="production"))
    st.ingest(t)
    tab = st.signals(["COVERAGE", "psi(score)"], baseline="previous", by=["environment"]).to_pylist()
    day2 = [r for r in tab if r["window"].day == 2]
    cov = [r for r in day2 if r["signal"] == "coverage"][0]
    assert cov["value"] == pytest.approx(1 / 2)  # i1 of the previous day's i1, i2
    with pytest.raises(InvalidParameterError, match="unknown signal"):
        st.signals(["ndcg@10"])


# ---------------------------------------------------------------------------------------------- monitors
def test_monitor_config_limits():
    with pytest.raises(InvalidParameterError, match="relative_drop"):
        load_config({"monitors": [{"name": "x", "metric": "psi(score)", "relative_drop": 0.1}]})
    with pytest.raises(InvalidParameterError, match="significance"):
        load_config({"monitors": [{"name": "x", "metric": "gini", "threshold": 0.5, "significance": 0.05}]})
    with pytest.raises(InvalidParameterError, match="unknown key"):
        load_config({"signals": {"itemz": "x"}})
    cfg = load_config({"monitors": [{"name": "c", "metric": "coverage@10", "relative_drop": 0.2}],
                       "signals": {"catalogue_size": 100}})
    assert cfg.monitors[0].metric == "coverage@10" and cfg.signals == {"catalogue_size": 100}


def test_planted_case_signal_fires_a_day_before_ndcg(tmp_path):
    """The simulator's broken scores from 2026-10-04, labels a day late: ingesting up to 2026-10-04 fires the
    score monitors on that day and no NDCG monitor; the next day's file brings its labels, but NDCG waits until
    the window is mature (the learned label maturity, checked below): it fires with the file of 2026-10-06."""
    from ranklens.monitor.simulate import simulate

    paths = simulate(tmp_path / "ev", days=5, groups_per_day=300, decay="broken_scores", decay_slice=None,
                     decay_start="2026-10-04", late_fraction=1.0, max_delay_hours=24, seed=3)
    cfg = {"monitors": [
        {"name": "ndcg", "metric": "ndcg@10", "relative_drop": 0.05, "min_groups": 30, "significance": 0.05,
         "where": {"environment": "production"}},
        {"name": "score psi", "metric": "psi(score)", "threshold": 0.2, "min_groups": 30,
         "where": {"environment": "production"}},
        {"name": "score ks", "metric": "ks(score)", "threshold": 0.1, "significance": 0.01, "min_groups": 30,
         "where": {"environment": "production"}}]}
    st = Store(tmp_path / "s.duckdb", config=cfg)
    first: dict[str, str] = {}
    for p in paths:
        st.ingest(p)
        if p.name.startswith("events-"):
            for a in st.check(all_windows=True, record=False, notify=False):
                first.setdefault(a.monitor, p.name[7:17])
    assert first == {"score psi": "2026-10-04", "score ks": "2026-10-04", "ndcg": "2026-10-06"}
    m = st.maturity()  # labels up to 24 h late: 95% of them within 24 h, so 2026-10-04 (ends 10-05 00:00) is
    assert m.source == "learned" and m.delay.total_seconds() == 24 * 3600  # mature once the clock passes 10-06
    assert set(st.report(["ndcg@10"], where={"environment": "production"}, start="2026-10-04", end="2026-10-05",
                     ci=None).column("provisional").to_pylist()) == {False}
    alerts = st.check(at="2026-10-04T12:00", record=False, notify=False)
    sig = [a.to_dict() for a in alerts if a.monitor == "score psi"]
    assert sig and sig[0]["window_start"] == "2026-10-04T00:00:00" and sig[0]["signal"]["label_free"]
    assert "above the threshold 0.2" in sig[0]["reason"]


# ---------------------------------------------------------------------------------------------- CLI
def test_cli_signals_formats_and_errors(tmp_path):
    st = store(tmp_path, {"t0": [("a", 1.0), ("b", 2.0)]}, {"p0": [("a", 1.5), ("c", 0.5)]})
    args = ["monitor", "signals", "--store", str(st.path), "--where", "environment=production"]
    r = CliRunner().invoke(cli, [*args, "-s", "psi(score)", "-s", "coverage", "-f", "json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert {d["signal"] for d in data} == {"psi(score)", "coverage"}
    r = CliRunner().invoke(cli, [*args, "-s", "gini", "-f", "csv"])
    assert r.output.splitlines()[0] == ("window,model,model_version,environment,signal,value,baseline,p_value,"
                                        "n_groups,n,n_baseline,n_excluded")
    for bad, text in ((["-s", "psi(foo)"], "unknown signal"), (["-s", "ild"], "--items and --attribute"),
                      (["--catalogue-size", "0"], "catalogue-size")):
        r = CliRunner().invoke(cli, [*args, *bad])
        assert r.exit_code == 2 and text in r.output and "Traceback" not in r.output, r.output


def test_signal_alert_names_the_slice_that_moved(tmp_path):
    """Broken scores on mobile only: the score alert of the series names device=mobile, whose own PSI (against
    the mobile lists of the baseline) is the largest of every slice value."""
    from ranklens.monitor.simulate import simulate

    ev = simulate(None, days=3, groups_per_day=500, decay="broken_scores", decay_slice={"device": "mobile"},
                  decay_start="2026-10-03", seed=2)
    cfg = {"monitors": [{"name": "psi", "metric": "psi(score)", "threshold": 0.2, "min_groups": 30,
                         "where": {"environment": "production"}}]}
    st = Store(tmp_path / "s.duckdb", config=cfg)
    st.ingest(ev)
    alerts = [a.to_dict() for a in st.check(record=False, notify=False)]
    assert alerts and all(a["window_start"] == "2026-10-03T00:00:00" for a in alerts)
    for a in alerts:
        top = a["top_slices"]
        assert (top[0]["column"], top[0]["value"], top[0]["column2"]) == ("device", "mobile", None)
        assert "most in device=mobile" in a["reason"]
        # the same number as the signal of that slice value of the series, computed directly
        where = {"environment": "production", **{k: v for k, v in a["series"].items() if v is not None}}
        rows = st.signals(["psi(score)"], by=["device"], where=where, start="2026-10-03",
                          end="2026-10-04").to_pylist()
        mobile = [r for r in rows if r["device"] == "mobile"][0]
        assert top[0]["window_value"] == pytest.approx(mobile["value"], rel=1e-12)
        assert top[0]["signal"] == "psi(score)" and top[0]["slice"] == "device=mobile"
        assert mobile["value"] == max(r["value"] for r in rows)


def test_judgements_of_signal_monitors(tmp_path):
    """Every window gets a verdict: 'ok' when the signal stays within its limit (what resolves an open alert),
    'too few groups' under min_groups, 'fired' with its alert."""
    import datetime as dt

    from ranklens.monitor.config import Baseline, MonitorSpec
    from ranklens.monitor.signal_monitors import judge_signal_monitors

    train = {f"t{j}": [(f"a{j}", j)] for j in range(10)}
    prod = {f"p{j}": [(f"a{j}", j + 0.5)] for j in range(10)}  # half a step up: a moderate PSI
    st = store(tmp_path, train, prod)
    specs = [MonitorSpec(name="psi", metric="psi(score)", threshold=1.0, where={"environment": "production"}),
             MonitorSpec(name="psi strict", metric="psi(score)", threshold=0.001, where={"environment": "production"}),
             MonitorSpec(name="psi big", metric="psi(score)", threshold=0.5, min_groups=11,
                         where={"environment": "production"})]
    got = judge_signal_monitors(st.signals, specs, Baseline(), dt.datetime(2026, 10, 1, 12))
    by_name = {j.monitor: j for j in got}
    value = one(st.signals(["psi(score)"]), "psi(score)")["value"]
    assert 0.001 < value < 1.0
    assert by_name["psi"].status == "ok" and by_name["psi"].alert is None and by_name["psi"].judged
    assert by_name["psi strict"].status == "fired" and by_name["psi strict"].alert.value == value
    assert by_name["psi big"].status == "too few groups" and not by_name["psi big"].judged
