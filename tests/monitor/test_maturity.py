"""Label maturity: windows whose labels have not all arrived are provisional, reported as such and never
alerted on. A hand-made stream with delayed labels, ingested up to "yesterday"; every expected number is
computed here from the definitions (NDCG of a list, the 95% delay quantile, the store's clock)."""

from __future__ import annotations

import datetime as dt
import json
import math

import pyarrow as pa
import pytest
from click.testing import CliRunner

from ranklens.cli import cli
from ranklens.errors import InvalidParameterError
from ranklens.monitor import Store, load_config

D1 = dt.datetime(2026, 10, 1)
DAYS = 6  # production days D1..D6; "today" is D7, the store is ingested up to D7 00:00
TODAY = D1 + dt.timedelta(days=DAYS)
LISTS_PER_DAY = 20
EARLY, LATE = dt.timedelta(hours=1), dt.timedelta(hours=40)  # the two label delays
DECAY_DAY = 2  # D3: the ranker really got worse (0-based day index)


def ndcg(ranks_clicked: list[int], n_relevant: int | None = None) -> float:
    """NDCG@10 with binary gains: DCG of the clicked ranks over the ideal DCG (clicked items first)."""
    dcg = sum(1 / math.log2(r + 1) for r in ranks_clicked)
    n = len(ranks_clicked) if n_relevant is None else n_relevant
    return dcg / sum(1 / math.log2(r + 1) for r in range(1, n + 1))


# each list: 6 items; two are clicked, one click arrives EARLY after the list, the other LATE
GOOD = {"early": 3, "late": 1}  # clicked at ranks 3 (early) and 1 (late)
DECAYED = {"early": 3, "late": 5}  # the real decay: the late click is on rank 5


def events(cutoff: dt.datetime | None) -> pa.Table:
    """Training (in-line labels, ranks 1 and 3 clicked) + production lists with label rows; rows stamped at
    or after ``cutoff`` (not arrived yet) left out."""
    rows: list[dict] = []

    def lst(gid: str, t: dt.datetime, env: str, labels: dict[int, list[str]] | None = None) -> None:
        for r in range(1, 7):
            rows.append({"timestamp": t.isoformat(), "model": "m", "model_version": "v1", "environment": env,
                         "group_id": gid, "item_id": f"{gid}-i{r}", "rank": r,
                         "labels": (labels or {}).get(r, [])})

    for i in range(30):
        lst(f"t{i}", D1 - dt.timedelta(days=3) + dt.timedelta(hours=i), "training", {1: ["click"], 3: ["click"]})
    for d in range(DAYS):
        plan = DECAYED if d == DECAY_DAY else GOOD
        for h in range(LISTS_PER_DAY):
            t = D1 + dt.timedelta(days=d, hours=h, minutes=30)
            gid = f"p{d}-{h}"
            lst(gid, t, "production")
            for which, delay in (("early", EARLY), ("late", LATE)):
                rows.append({"timestamp": (t + delay).isoformat(), "group_id": gid,
                             "item_id": f"{gid}-i{plan[which]}", "labels": ["click"]})
    tab = pa.Table.from_pylist(rows, schema=pa.schema([
        ("timestamp", pa.string()), ("model", pa.string()), ("model_version", pa.string()),
        ("environment", pa.string()), ("group_id", pa.string()), ("item_id", pa.string()), ("rank", pa.int32()),
        ("labels", pa.list_(pa.string()))]))
    if cutoff is None:
        return tab
    keep = [dt.datetime.fromisoformat(t) < cutoff for t in tab.column("timestamp").to_pylist()]
    return tab.filter(pa.array(keep))


MONITOR = {"monitors": [{"name": "drop", "metric": "ndcg@10", "relative_drop": 0.05, "min_groups": 5,
                         "where": {"environment": "production"}, "by": ["model_version"]}]}


def _store(tmp_path, name, cutoff, maturity=None):
    cfg = dict(MONITOR)
    if maturity is not None:
        cfg["labels"] = {"maturity": maturity}
    st = Store(tmp_path / f"{name}.duckdb", config=cfg)
    st.ingest(events(cutoff))
    return st


def _day_value(d: int, cutoff: dt.datetime | None) -> float:
    """Mean NDCG@10 of day d's lists with the labels arrived before the cutoff (by the definition)."""
    plan = DECAYED if d == DECAY_DAY else GOOD
    vals = []
    for h in range(LISTS_PER_DAY):
        t = D1 + dt.timedelta(days=d, hours=h, minutes=30)
        clicked = [plan[w] for w, delay in (("early", EARLY), ("late", LATE)) if cutoff is None or t + delay < cutoff]
        vals.append(ndcg(sorted(clicked)))
    return sum(vals) / len(vals)


def _fired_days(st, **kw):
    res = st.check(all_windows=True, record=False, **kw)
    return sorted({a.window_start[:10] for a in res.fired}), res


def test_yesterday_fires_nothing_that_mature_data_would_not(tmp_path):
    base = ndcg([1, 3])  # every training list
    limit = 0.95 * base
    # the definitions: which days are below the limit, with all labels, and with the labels arrived by today
    full_low = [d for d in range(DAYS) if _day_value(d, None) < limit]
    seen_low = [d for d in range(DAYS) if _day_value(d, TODAY) < limit]
    assert full_low == [DECAY_DAY]  # only the real decay
    assert seen_low == [DECAY_DAY, DAYS - 2, DAYS - 1]  # D5 and D6 look low: their late clicks are missing
    day = [(D1 + dt.timedelta(days=d)).date().isoformat() for d in range(DAYS)]

    full = _store(tmp_path, "full", None)
    yesterday = _store(tmp_path, "yesterday", TODAY)
    fired_full, _ = _fired_days(full)
    fired_yday, res = _fired_days(yesterday)
    assert fired_full == [day[DECAY_DAY]]
    assert set(fired_yday) <= set(fired_full) and fired_yday == [day[DECAY_DAY]]
    assert res.not_judged == {"provisional": 2}  # D5 and D6, one series
    # without maturity (0): D5 and D6 are judged on partial labels and fire false alerts, with the values of the
    # definition
    zero = Store(yesterday.path, config={**MONITOR, "labels": {"maturity": "0s"}})
    fired_zero, res0 = _fired_days(zero)
    assert fired_zero == [day[DECAY_DAY], day[DAYS - 2], day[DAYS - 1]] and res0.not_judged == {}
    d6 = [a for a in res0.fired if a.window_start.startswith(day[DAYS - 1])][0]
    assert d6.value == pytest.approx(_day_value(DAYS - 1, TODAY), abs=1e-12) == pytest.approx(ndcg([3]))
    d5 = [a for a in res0.fired if a.window_start.startswith(day[DAYS - 2])][0]
    assert d5.value == pytest.approx(_day_value(DAYS - 2, TODAY), abs=1e-12)
    assert d5.baseline == pytest.approx(base, abs=1e-12)
    # the CLI: exit 0 on the yesterday store... once its decay day is out of the range
    r = CliRunner().invoke(cli, ["monitor", "check", "--all", "--start", day[DECAY_DAY + 1], "--store",
                                 str(yesterday.path), "--no-record"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == []
    assert "windows not judged: 2 provisional" in r.stderr and "labels mature 40h (learned)" in r.stderr


def test_learned_maturity_and_provisional_flags(tmp_path):
    st = _store(tmp_path, "y", TODAY)
    ev = events(TODAY).to_pylist()
    # the learned delay by its definition: label rows' delays after their list, the smallest whole number of
    # hours h such that at least 95% of them are <= h
    t_list = {r["group_id"]: dt.datetime.fromisoformat(r["timestamp"]) for r in ev if r["rank"] is not None}
    delays = sorted(dt.datetime.fromisoformat(r["timestamp"]) - t_list[r["group_id"]] for r in ev if r["rank"] is None)
    k = -(-95 * len(delays) // 100)  # ceil(0.95 n), integers
    q = delays[k - 1]
    hours = math.ceil(q.total_seconds() / 3600)
    assert hours == 40
    clock = max(dt.datetime.fromisoformat(r["timestamp"]) for r in ev)
    m = st.maturity()
    assert (m.delay, m.source, m.clock, m.n_label_rows) == (dt.timedelta(hours=hours), "learned", clock, len(delays))
    info = json.loads(CliRunner().invoke(cli, ["monitor", "info", "--store", str(st.path)]).stdout)
    assert info["maturity"]["hours"] == hours and info["maturity"]["source"] == "learned"
    assert info["maturity"]["learned_from"] == {"label_rows": len(delays), "quantile": 0.95}
    # provisional = the window's end + maturity after the clock, in every report format
    rep = st.report(["ndcg@10"], where={"environment": "production"}, by=["model_version"], ci=None).to_pylist()
    assert len(rep) == DAYS
    for r in rep:
        end = r["window"] + dt.timedelta(days=1)
        assert r["provisional"] is (end + dt.timedelta(hours=hours) > clock), r
    assert [r["provisional"] for r in rep] == [False] * (DAYS - 2) + [True, True]
    # a served list: provisional when served later than the clock minus the maturity (its labels may still come)
    lists = st.groups("ndcg@10", where={"environment": "production"}, limit=10_000).to_pylist()
    assert len(lists) == DAYS * LISTS_PER_DAY
    for r in lists:
        assert r["provisional"] is (r["timestamp"] + dt.timedelta(hours=hours) > clock), r
    assert 0 < sum(r["provisional"] for r in lists) < len(lists)
    # hour windows: the same rule per hour
    hrep = st.report(["ndcg@10"], window="hour", where={"environment": "production"}, ci=None).to_pylist()
    for r in hrep:
        assert r["provisional"] is (r["window"] + dt.timedelta(hours=1 + hours) > clock)
    # configured maturity wins over the learned one; CSV and JSON carry the flag
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    for fmt in ("csv", "json"):
        out = CliRunner().invoke(cli, ["monitor", "report", "--store", str(st.path), "-m", "ndcg@10", "--ci", "none",
                                       "--where", "environment=production", "-f", fmt, "--config", str(empty)],
                                 catch_exceptions=False).stdout
        if fmt == "csv":
            lines = out.strip().splitlines()
            assert lines[0].endswith(",provisional")
            assert [ln.rsplit(",", 1)[1] for ln in lines[1:]] == ["False"] * (DAYS - 2) + ["True", "True"]
        else:
            assert [r["provisional"] for r in json.loads(out)] == [False] * (DAYS - 2) + [True, True]
    cfg = tmp_path / "ranklens.toml"
    cfg.write_text('[labels]\nmaturity = "3d"\n')
    st3 = Store(st.path, config=cfg)
    assert st3.maturity().source == "config" and st3.maturity().delay == dt.timedelta(days=3)
    flags = [r["provisional"] for r in st3.report(["ndcg@10"], where={"environment": "production"},
                                                       by=["model_version"], ci=None).to_pylist()]
    assert flags == [(D1 + dt.timedelta(days=d + 1 + 3)) > clock for d in range(DAYS)]


def test_default_check_judges_the_latest_mature_window(tmp_path):
    st = _store(tmp_path, "y", TODAY)
    # mature until clock - 40h = D5 07:30: the latest mature day window is D4
    res = st.check(record=False)
    assert res.not_judged == {} and list(res) == []
    r = st.report(["ndcg@10"], where={"environment": "production"}, ci=None, start="2026-10-04", end="2026-10-05")
    assert r.num_rows == 1 and not r.column("provisional")[0].as_py()
    # --at a provisional window: not judged, said so
    res = st.check(at="2026-10-06T12:00", record=False)
    assert list(res) == [] and res.not_judged == {"provisional": 1}


def test_store_without_label_rows_has_no_provisional_window(tmp_path):
    st = Store(tmp_path / "s.duckdb", config=MONITOR)
    st.ingest(events(None).filter(pa.array([r is not None for r in events(None).column("rank").to_pylist()])))
    m = st.maturity()
    assert m.source == "none" and m.delay == dt.timedelta(0) and m.n_label_rows == 0 and m.mature_until is None
    assert not any(st.report(["ndcg@10"], where={"environment": "production"}, ci=None).column("provisional")
                   .to_pylist())


@pytest.mark.parametrize("text, message", [
    ('[labels]\nmaturity = "two days"\n', r"ranklens\.toml: \[labels\] maturity must be a duration like '2d'"),
    ('[labels]\nmaturity = -3\n', r"ranklens\.toml: \[labels\] maturity must be a duration"),
    ('[labels]\nmaturty = "2d"\n', r"ranklens\.toml: \[labels\]: unknown key\(s\) maturty"),
    ('labels = 3\n', r"ranklens\.toml: \[labels\]: expected a table"),
    ('[alerts]\nwebhook_format = "teams"\n', r"ranklens\.toml: \[alerts\] webhook_format must be 'json' or 'slack'"),
    ('[alerts]\nretries = 0\n', r"ranklens\.toml: \[alerts\] retries must be an integer in \[1, 10\]"),
    ('[alerts]\nwebhook = "ftp://x"\n', r"ranklens\.toml: \[alerts\] webhook must be a URL"),
])
def test_config_errors_name_the_file_and_key(tmp_path, text, message):
    p = tmp_path / "ranklens.toml"
    p.write_text(text)
    with pytest.raises(InvalidParameterError, match=message):
        load_config(p)
    r = CliRunner().invoke(cli, ["monitor", "info", "--config", str(p), "--store", str(tmp_path / "x.duckdb")])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1 and "Traceback" not in r.output


def test_durations():
    cfg = load_config({"labels": {"maturity": "1d12h"}})
    assert cfg.maturity == dt.timedelta(hours=36)
    assert load_config({"labels": {"maturity": "90m"}}).maturity == dt.timedelta(minutes=90)
    assert load_config({"labels": {"maturity": 0}}).maturity == dt.timedelta(0)
    assert load_config({}).maturity is None


def test_learned_maturity_is_kept_until_the_next_batch(tmp_path):
    import duckdb

    st = _store(tmp_path, "y", TODAY)
    con = duckdb.connect(str(st.path), read_only=True)
    kept = json.loads(con.execute("SELECT value FROM meta WHERE key = 'label_maturity'").fetchall()[0][0])
    batches = con.execute("SELECT count(*) FROM batches").fetchall()[0][0]
    con.close()
    assert kept == {"seconds": 40 * 3600.0, "label_rows": st.maturity().n_label_rows, "batches": batches}
    # the rows that arrived since (today's): a new batch; the maturity is learned again from every label row
    rest = events(None).filter(pa.array([dt.datetime.fromisoformat(t) >= TODAY
                                         for t in events(None).column("timestamp").to_pylist()]))
    st.ingest(rest)
    m = st.maturity()
    assert m.n_label_rows == 2 * DAYS * LISTS_PER_DAY and m.delay == dt.timedelta(hours=40)
    assert m.clock == D1 + dt.timedelta(days=DAYS - 1, hours=LISTS_PER_DAY - 1, minutes=30) + LATE


@pytest.mark.slow
def test_simulated_stream_ingested_up_to_yesterday(tmp_path):
    """The simulator's stream of a healthy ranker (no decay; half the label rows a day or two late): the store
    ingested up to the last day's file fires no window that the store with every label file does not fire (here:
    none), and leaves the last windows provisional, said so; without a maturity it would cry wolf."""
    from ranklens.monitor.simulate import simulate

    paths = simulate(tmp_path / "ev", days=9, groups_per_day=400, decay=None, seed=11)
    files = sorted(p for p in paths if p.name.startswith("events-"))
    training = [p for p in paths if p.name.startswith("training")]
    full = Store(tmp_path / "full.duckdb")
    full.ingest(training + files)
    yday = Store(tmp_path / "yday.duckdb")
    yday.ingest(training + [p for p in files if p.name <= "events-2026-10-09.parquet"])  # the last day served

    def fired(st):
        res = st.check(all_windows=True, record=False)
        return {(a.window_start, tuple(sorted(a.series.items()))) for a in res.fired}, res

    got_full, _ = fired(full)
    got_yday, res = fired(yday)
    assert got_yday <= got_full
    assert res.not_judged.get("provisional", 0) > 0
    # without a maturity the same store cries wolf: windows whose labels are partial fire, mature data does not
    got_zero, _ = fired(Store(yday.path, config={"labels": {"maturity": "0s"}}))
    assert got_zero - got_full
    m = yday.maturity()
    rep = yday.report(["ndcg@10"], where={"environment": "production"}, ci=None).to_pylist()
    assert [r for r in rep if r["provisional"]] == [
        r for r in rep if r["window"] + dt.timedelta(days=1) > m.clock - m.delay]
