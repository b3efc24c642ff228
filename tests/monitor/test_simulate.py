"""The event simulator of ``ranklens monitor`` (src/ranklens/monitor/simulate.py).

The expected numbers come from the definitions, computed inside the tests: NDCG with linear gains and
log2 discounts written out (DCG = sum gain_i / log2(i + 1)), and the seed's example (seed 001, Arize,
"Demystifying NDCG": swapping the first and last recommendation drops NDCG from 0.993 to 0.646). The
seed shows its list only as an image, so a list with the same behaviour is built by hand below.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.json as pjson
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import ranklens
from ranklens._cli.monitor_simulate import simulate_command
from ranklens.errors import InvalidParameterError
from ranklens.monitor.simulate import COLUMNS, LABELS, SLICES, simulate

DOCS = Path(__file__).resolve().parents[2] / "docs" / "monitoring.md"
SMALL = {"days": 6, "groups_per_day": 120, "items": (5, 12), "seed": 3}
START = dt.datetime(2026, 10, 1)


# ------------------------------------------------------------------------------------------ hand NDCG


def dcg(gains: list[float], k: int) -> float:
    return sum(g / math.log2(i + 1) for i, g in enumerate(gains[:k], start=1))


def ndcg(gains: list[float], k: int) -> float | None:
    """NDCG@k of gains in served order; None when the list has no gain (no ideal)."""
    ideal = dcg(sorted(gains, reverse=True), k)
    return None if ideal == 0 else dcg(gains, k) / ideal


def swap_first_last(gains: list[float]) -> list[float]:
    return [gains[-1], *gains[1:-1], gains[0]]


# ------------------------------------------------------------------------------------------ helpers


def rows(table: pa.Table) -> list[dict]:
    return table.to_pylist()


def ranking_lists(table: pa.Table, environment: str) -> dict[str, list[dict]]:
    """group_id -> its ranking rows in rank order."""
    out: dict[str, list[dict]] = defaultdict(list)
    for r in rows(table.filter(pc.equal(table["environment"], environment))):
        out[r["group_id"]].append(r)
    for g in out.values():
        g.sort(key=lambda r: r["rank"])
    return dict(out)


def label_rows(table: pa.Table) -> list[dict]:
    return rows(table.filter(pc.and_(pc.is_null(table["rank"]), pc.is_null(table["score"]))))


def day(ts: dt.datetime) -> dt.date:
    return ts.date()


@pytest.fixture(scope="module")
def small() -> pa.Table:
    return simulate(**SMALL)


@pytest.fixture(scope="module")
def undecayed() -> pa.Table:
    return simulate(**SMALL, decay=None)


# ------------------------------------------------------------------------------------------ determinism, schema


def test_same_seed_same_events_other_seed_other_events(small: pa.Table) -> None:
    assert simulate(**SMALL).equals(small)
    other = simulate(**{**SMALL, "seed": 4})
    assert not other.equals(small)


def documented_columns() -> list[tuple[str, str]]:
    """(column, type text) rows of the event-schema table of docs/monitoring.md."""
    out = []
    for line in DOCS.read_text().splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)]  # cells between unescaped pipes
        if len(cells) > 3 and re.fullmatch(r"`\w+`", cells[1]):
            out.append((cells[1].strip("`"), cells[2]))
    return out


def test_columns_and_types_follow_the_documented_schema(small: pa.Table) -> None:
    documented = documented_columns()
    names = [c for c, _ in documented]
    assert names == ["timestamp", "model", "model_version", "environment", "group_id", "item_id", "rank",
                     "score", "relevance", "labels"]
    assert small.column_names == names + list(SLICES) == list(COLUMNS)
    doc_type = dict(documented)
    schema = small.schema
    assert doc_type["timestamp"].startswith("timestamp") and schema.field("timestamp").type == pa.timestamp("ms")
    for c in ("model", "model_version", "group_id", "item_id", *SLICES):
        assert schema.field(c).type == pa.string(), c
    assert "integer" in doc_type["rank"] and pa.types.is_integer(schema.field("rank").type)
    assert doc_type["score"] == "float" and schema.field("score").type == pa.float64()
    assert "float" in doc_type["relevance"] and schema.field("relevance").type == pa.float64()
    assert "list of strings" in doc_type["labels"] and schema.field("labels").type == pa.list_(pa.string())
    envs = set(small["environment"].drop_null().to_pylist())
    assert envs == {"training", "production"}  # both allowed by the docs: training, validation, production
    assert set(pc.unique(pc.list_flatten(small["labels"])).to_pylist()) == set(LABELS)


def test_relevance_is_mostly_null_and_given_only_by_validation_editors() -> None:
    t = simulate(**SMALL, validation_groups=30)
    rel = t.filter(pc.invert(pc.is_null(t["relevance"])))
    assert set(rel["environment"].to_pylist()) == {"validation"}
    assert set(rel["relevance"].to_pylist()) <= {0.0, 1.0, 2.0, 3.0}
    assert rel.num_rows < t.num_rows / 10
    assert rel["labels"].null_count == rel.num_rows
    # validation lists are served the day before the first production day
    assert {day(x) for x in rel["timestamp"].to_pylist()} == {dt.date(2026, 9, 30)}


# ------------------------------------------------------------------------------------------ counts


def test_lists_lengths_ranks_items_and_label_rows(small: pa.Table) -> None:
    prod = ranking_lists(small, "production")
    train = ranking_lists(small, "training")
    assert len(prod) == SMALL["days"] * SMALL["groups_per_day"]
    assert len(train) == 2 * SMALL["groups_per_day"]  # training_groups per model version: ranker v1 and v2
    lo, hi = SMALL["items"]
    for g in [*prod.values(), *train.values()]:
        assert lo <= len(g) <= hi
        assert [r["rank"] for r in g] == list(range(1, len(g) + 1))
        assert len({r["item_id"] for r in g}) == len(g)
        assert len({(r["timestamp"], r["model"], r["model_version"], r["country"], r["device"]) for r in g}) == 1
    for g in prod.values():  # production ranking rows carry no outcome; training rows carry them in-line
        assert all(r["labels"] is None and r["relevance"] is None for r in g)
    for g in train.values():
        assert all(r["labels"] is not None for r in g)
        assert all(g[i]["score"] >= g[i + 1]["score"] for i in range(len(g) - 1))  # no decay in training
    served = {(gid, r["item_id"]) for gid, g in prod.items() for r in g}
    labels = label_rows(small)
    assert labels and all(len(r["labels"]) == 1 and r["model"] is None and r["environment"] is None for r in labels)
    assert all((r["group_id"], r["item_id"]) in served for r in labels)
    assert len(labels) + sum(len(g) for g in prod.values()) + sum(len(g) for g in train.values()) == small.num_rows
    # one label row per outcome: an item has each label at most once, a favorite or a buy only with a click
    per_item: dict[tuple[str, str], list[str]] = defaultdict(list)
    for r in labels:
        per_item[(r["group_id"], r["item_id"])] += r["labels"]
    for labs in per_item.values():
        assert len(labs) == len(set(labs)) and "click" in labs
    assert {r["model_version"] for g in prod.values() for r in g} == {"v1", "v2"}


def test_v2_ships_a_third_into_the_period_on_half_the_traffic() -> None:
    t = simulate(days=9, groups_per_day=400, seed=5, decay=None)
    prod = ranking_lists(t, "production")
    v2_days = {day(g[0]["timestamp"]) for g in prod.values() if g[0]["model_version"] == "v2"}
    assert min(v2_days) == dt.date(2026, 10, 4)  # day 9 // 3 = 3 after the start
    after = [g[0]["model_version"] for g in prod.values() if day(g[0]["timestamp"]) >= dt.date(2026, 10, 4)]
    share = after.count("v2") / len(after)
    assert abs(share - 0.5) < 4 * math.sqrt(0.25 / len(after))
    two = simulate(days=3, groups_per_day=300, seed=5, second_model=True)
    models = [g[0]["model"] for g in ranking_lists(two, "production").values()]
    assert abs(models.count("related") / len(models) - 0.3) < 4 * math.sqrt(0.21 / len(models))


# ------------------------------------------------------------------------------------------ late labels


def test_label_rows_come_after_their_list_and_a_share_on_a_later_day(small: pa.Table) -> None:
    served = {gid: g[0]["timestamp"] for gid, g in ranking_lists(small, "production").items()}
    labels = label_rows(small)
    delays = [r["timestamp"] - served[r["group_id"]] for r in labels]
    assert all(dt.timedelta(0) < d <= dt.timedelta(hours=48) for d in delays)
    late = [day(r["timestamp"]) > day(served[r["group_id"]]) for r in labels]
    n = len(late)
    assert abs(sum(late) / n - 0.5) < 4 * math.sqrt(0.25 / n)
    assert max(day(r["timestamp"]) for r in labels) > START.date() + dt.timedelta(days=SMALL["days"] - 1)


@pytest.mark.parametrize("fraction", [0.0, 1.0])
def test_late_fraction_extremes(fraction: float) -> None:
    t = simulate(days=2, groups_per_day=60, seed=1, late_fraction=fraction, max_delay_hours=30)
    served = {gid: g[0]["timestamp"] for gid, g in ranking_lists(t, "production").items()}
    labels = label_rows(t)
    late = {day(r["timestamp"]) > day(served[r["group_id"]]) for r in labels}
    assert late == {bool(fraction)}
    assert all(r["timestamp"] - served[r["group_id"]] <= dt.timedelta(hours=30) for r in labels)


# ------------------------------------------------------------------------------------------ the decay


def test_decay_swaps_first_and_last_only_in_the_slice_and_from_its_day(small: pa.Table, undecayed: pa.Table) -> None:
    assert small.num_rows == undecayed.num_rows
    # everything but item_id is the same, row by row
    for c in small.column_names:
        if c != "item_id":
            assert small[c].equals(undecayed[c]), c
    decay_day = dt.date(2026, 10, 5)  # two thirds of 6 days
    changed = 0
    before, after = ranking_lists(undecayed, "production"), ranking_lists(small, "production")
    for gid, g in after.items():
        b = before[gid]
        planted = g[0]["country"] == "BR" and day(g[0]["timestamp"]) >= decay_day
        items_now = [r["item_id"] for r in g]
        items_then = [r["item_id"] for r in b]
        if planted:
            assert items_now == swap_first_last(items_then)
            changed += 1
        else:
            assert items_now == items_then
    assert changed > 10
    assert label_rows(small) == label_rows(undecayed)


def test_decay_start_and_slice_are_parameters() -> None:
    t = simulate(days=4, groups_per_day=80, seed=2, decay_start="2026-10-02", decay_slice={"device": "tablet"})
    u = simulate(days=4, groups_per_day=80, seed=2, decay=None)
    diff = pc.not_equal(t["item_id"], u["item_id"])
    moved = t.filter(diff)
    assert moved.num_rows > 0
    assert set(moved["device"].to_pylist()) == {"tablet"}
    assert min(moved["timestamp"].to_pylist()).date() == dt.date(2026, 10, 2)
    everywhere = simulate(days=2, groups_per_day=50, seed=2, decay_start="2026-10-01", decay_slice=None)
    lists = ranking_lists(everywhere, "production")
    plain = ranking_lists(simulate(days=2, groups_per_day=50, seed=2, decay=None), "production")
    assert all([r["item_id"] for r in g] == swap_first_last([r["item_id"] for r in plain[k]]) for k, g in lists.items())


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def daily_ndcg10(table: pa.Table) -> dict[tuple[dt.date, bool], list[float]]:
    """Hand NDCG@10 of production lists, gain 1 when the item got a click (the seed's attribution with
    positive class 'click'), by (day, country is BR); lists without a click are left out."""
    clicked = {(r["group_id"], r["item_id"]) for r in label_rows(table) if "click" in r["labels"]}
    out: dict[tuple[dt.date, bool], list[float]] = defaultdict(list)
    for gid, g in ranking_lists(table, "production").items():
        v = ndcg([1.0 if (gid, r["item_id"]) in clicked else 0.0 for r in g], 10)
        if v is not None:
            out[(day(g[0]["timestamp"]), g[0]["country"] == "BR")].append(v)
    return out


def test_the_planted_decay_drops_ndcg_sharply_in_brazil_only() -> None:
    t = simulate(days=9, groups_per_day=600, seed=11, v2_share=0.0)  # decay from day 6 (2026-10-07)
    by = daily_ndcg10(t)
    decay_day = dt.date(2026, 10, 7)
    br_before = mean([v for (d, br), xs in by.items() if br and d < decay_day for v in xs])
    br_after = mean([v for (d, br), xs in by.items() if br and d >= decay_day for v in xs])
    other_before = mean([v for (d, br), xs in by.items() if not br and d < decay_day for v in xs])
    other_after = mean([v for (d, br), xs in by.items() if not br and d >= decay_day for v in xs])
    assert br_before - br_after > 0.2
    assert abs(other_before - other_after) < 0.02
    assert abs(br_before - other_before) < 0.03
    for d in (decay_day + dt.timedelta(days=i) for i in range(3)):  # every day after, not just on average
        assert mean(by[(d, True)]) < mean(by[(d, False)]) - 0.15


# ------------------------------------------------------------------------------------------ the seed's example


def test_the_seed_example_by_hand() -> None:
    # Seed 001: "the training and production datasets are nearly identical, with only the first and last
    # recommendations switched in the production dataset ... dropping NDCG from 0.993 to 0.646". The list
    # is only in an image; these gains (a count of the labels click, favorite, buy of each item, in served
    # order) reproduce it to two decimals: 0.9925 -> 0.6490.
    gains = [3, 3, 1, 0, 1, 0, 0]
    dcg_train = 3 / math.log2(2) + 3 / math.log2(3) + 1 / math.log2(4) + 0 + 1 / math.log2(6) + 0 + 0
    idcg = 3 / math.log2(2) + 3 / math.log2(3) + 1 / math.log2(4) + 1 / math.log2(5)
    dcg_prod = 0 + 3 / math.log2(3) + 1 / math.log2(4) + 0 + 1 / math.log2(6) + 0 + 3 / math.log2(8)
    assert ndcg(gains, 10) == pytest.approx(dcg_train / idcg, abs=1e-15)
    assert ndcg(swap_first_last(gains), 10) == pytest.approx(dcg_prod / idcg, abs=1e-15)
    assert round(dcg_train / idcg, 2) == round(0.993, 2)
    assert round(dcg_prod / idcg, 2) == round(0.646, 2)
    # ranklens.evaluate agrees with the hand computation
    for served, expected in ((gains, dcg_train / idcg), (swap_first_last(gains), dcg_prod / idcg)):
        judgments = {"q": {f"d{i}": g for i, g in enumerate(served)}}
        run = {"q": {f"d{i}": float(len(served) - i) for i in range(len(served))}}
        res = ranklens.evaluate(judgments, run, ["ndcg@10"])
        assert res["ndcg@10"] == pytest.approx(expected, abs=1e-12)


def test_the_seed_example_on_simulated_training_lists(small: pa.Table) -> None:
    # gain of an item = number of its labels (click, favorite, buy), linear; a training list served as the
    # model ranked it, then with its first and last recommendations swapped (what production serves once
    # the decay starts)
    lists = ranking_lists(small, "training")
    before, after = [], []
    for g in lists.values():
        gains = [float(len(r["labels"])) for r in g]
        v = ndcg(gains, 10)
        if v is not None:
            before.append(v)
            after.append(ndcg(swap_first_last(gains), 10))
    assert len(before) > 100
    assert np.mean(before) - np.mean(after) > 0.25
    # a list like the seed's: near perfect as trained, far from it once swapped
    best = next(g for g in lists.values() if len(g) >= 7 and ndcg([len(r["labels"]) for r in g], 10) > 0.99
                and len(g[0]["labels"]) > len(g[-1]["labels"]))
    gains = [float(len(r["labels"])) for r in best]
    hand_before, hand_after = ndcg(gains, 10), ndcg(swap_first_last(gains), 10)
    assert hand_before > 0.99 and hand_before - hand_after > 0.2
    judgments = {"q": {r["item_id"]: g for r, g in zip(best, gains)}}
    for order, expected in ((best, hand_before), (swap_first_last(best), hand_after)):
        run = {"q": {r["item_id"]: float(len(order) - i) for i, r in enumerate(order)}}
        assert ranklens.evaluate(judgments, run, ["ndcg@10"])["ndcg@10"] == pytest.approx(expected, abs=1e-12)


# ------------------------------------------------------------------------------------------ malformed rows


def bad_rows(table: pa.Table) -> int:
    """Rows the docs' schema rejects, counted independently of how the simulator made them."""
    n = 0
    seen = set()
    for r in rows(table):
        is_ranking = r["rank"] is not None or r["score"] is not None
        bad = r["item_id"] is None
        try:
            dt.datetime.fromisoformat(r["timestamp"].replace("Z", "+00:00"))
        except ValueError:
            bad = True
        if is_ranking and (r["rank"] is not None and r["rank"] < 1):
            bad = True
        if is_ranking and r["environment"] not in ("training", "validation", "production"):
            bad = True
        if r["relevance"] is not None and r["relevance"] < 0:
            bad = True
        if is_ranking and not bad:
            key = (r["model"], r["model_version"], r["environment"], r["group_id"], r["item_id"])
            bad = key in seen
            seen.add(key)
        n += bad
    return n


def test_malformed_rows_are_the_asked_share() -> None:
    clean = simulate(days=3, groups_per_day=100, seed=7)
    t = simulate(days=3, groups_per_day=100, seed=7, malformed=0.05)
    assert t.schema.field("timestamp").type == pa.string()
    n_bad = t.num_rows - clean.num_rows
    assert n_bad == round(0.05 / 0.95 * clean.num_rows)
    assert bad_rows(t) == n_bad
    assert n_bad / t.num_rows == pytest.approx(0.05, abs=1e-3)
    iso = clean.set_column(0, "timestamp", pc.strftime(clean["timestamp"], format="%Y-%m-%dT%H:%M:%SZ"))
    assert bad_rows(iso) == 0
    # each kind of bad row is there
    assert pc.sum(pc.is_null(t["item_id"])).as_py() > 0
    assert pc.sum(pc.less(t["rank"], 1)).as_py() > 0
    assert "staging" in t["environment"].to_pylist()
    assert pc.sum(pc.less(t["relevance"], 0)).as_py() > 0


# ------------------------------------------------------------------------------------------ files


def test_one_file_per_day_a_row_in_the_file_of_its_timestamp(tmp_path: Path, small: pa.Table) -> None:
    paths = simulate(tmp_path / "ev", **SMALL)
    names = [p.name for p in paths]
    assert names[0] == "training.parquet"
    days = [n[len("events-"):-len(".parquet")] for n in names[1:]]
    assert days == sorted(days) and days[0] == "2026-10-01"
    assert len(days) == SMALL["days"] + 2  # labels up to 48 hours after the last list
    assert sorted(p.name for p in (tmp_path / "ev").iterdir()) == sorted(names)
    parts = [pq.read_table(p) for p in paths]
    assert pa.concat_tables(parts).equals(small)
    assert set(parts[0]["environment"].to_pylist()) == {"training"}
    assert all(x < START for x in parts[0]["timestamp"].to_pylist())
    for d, part in zip(days, parts[1:]):
        assert {x.date().isoformat() for x in part["timestamp"].to_pylist()} == {d}
    # the last two files hold late labels only
    for part in parts[-2:]:
        assert part["rank"].null_count == part.num_rows


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_text_formats_hold_the_same_events(tmp_path: Path, fmt: str) -> None:
    kw = {"days": 2, "groups_per_day": 30, "seed": 9, "validation_groups": 3}
    ref = simulate(**kw)
    paths = simulate(tmp_path, format=fmt, **kw)
    assert [p.suffix for p in paths] == [f".{fmt}"] * len(paths)
    assert paths[:2] == [tmp_path / f"training.{fmt}", tmp_path / f"validation.{fmt}"]
    types = {f.name: f.type for f in ref.schema}
    types["timestamp"] = pa.string()
    if fmt == "csv":
        types["labels"] = pa.string()
        opts = pcsv.ConvertOptions(column_types=types, strings_can_be_null=True)
        back = pa.concat_tables([pcsv.read_csv(p, convert_options=opts) for p in paths])
    else:
        opts = pjson.ParseOptions(explicit_schema=pa.schema(types))
        back = pa.concat_tables([pjson.read_json(p, parse_options=opts) for p in paths])
    assert back.num_rows == ref.num_rows
    assert back.column_names == ref.column_names
    want = [x.strftime("%Y-%m-%dT%H:%M:%S.") + f"{x.microsecond // 1000:03d}Z" for x in ref["timestamp"].to_pylist()]
    assert back["timestamp"].to_pylist() == want
    for c in ("model", "environment", "group_id", "item_id", "country", "query_type"):
        assert back[c].to_pylist() == ref[c].to_pylist(), c
    assert back["rank"].to_pylist() == ref["rank"].to_pylist()
    assert back["score"].to_pylist() == ref["score"].to_pylist()
    assert back["relevance"].to_pylist() == ref["relevance"].to_pylist()
    labels = ref["labels"].to_pylist()
    if fmt == "csv":  # one string, labels separated by "|"; an empty list and null both read as empty
        assert [x or None for x in back["labels"].to_pylist()] == ["|".join(x) or None if x is not None else None
                                                                   for x in labels]
    else:
        assert back["labels"].to_pylist() == labels


# ------------------------------------------------------------------------------------------ errors, CLI


@pytest.mark.parametrize(("kw", "name"), [
    ({"days": 0}, "days"), ({"groups_per_day": -1}, "groups_per_day"), ({"items": (1, 5)}, "items"),
    ({"items": (9, 5)}, "items"), ({"items": 5}, "items"), ({"start": "10/01/2026"}, "start"),
    ({"decay_slice": {"country": "FR"}}, "decay_slice"), ({"decay_slice": {"planet": "x"}}, "decay_slice"),
    ({"decay": "shuffle"}, "decay"), ({"late_fraction": 1.5}, "late_fraction"),
    ({"max_delay_hours": 12}, "max_delay_hours"), ({"malformed": 1.0}, "malformed"),
    ({"malformed": 0.999999999}, "malformed"),  # a billion bad rows per good one: it ran out of memory
    ({"format": "xlsx"}, "format"), ({"seed": -1}, "seed"), ({"decay_start": "soon"}, "decay_start"),
])
def test_bad_arguments_name_the_argument(kw: dict, name: str) -> None:
    with pytest.raises(InvalidParameterError, match=f"`{name}`"):
        simulate(**{"days": 1, "groups_per_day": 5, **kw})


def test_command_writes_files_and_prints_one_line(tmp_path: Path) -> None:
    out = tmp_path / "events"
    res = CliRunner().invoke(simulate_command, [str(out), "--days", "3", "--groups-per-day", "40", "--items", "4-9",
                                                "--seed", "2", "--decay-slice", "device=mobile", "--format", "csv"])
    assert res.exit_code == 0, res.output
    files = sorted(out.iterdir())
    n_events = sum(len(pcsv.read_csv(p)) for p in files)
    assert res.output.strip() == (f"wrote {len(files)} files to {out}: {n_events:,} events, {3 * 40 + 2 * 40:,} groups "
                                  "(3 days from 2026-10-01, seed 2)")
    ref = simulate(days=3, groups_per_day=40, items=(4, 9), seed=2, decay_slice={"device": "mobile"})
    assert n_events == ref.num_rows


@pytest.mark.parametrize(("args", "option"), [
    (["--groups-per-day", "0"], "--groups-per-day"), (["--items", "1-3"], "--items"), (["--items", "a-b"], "--items"),
    (["--decay-slice", "BR"], "--decay-slice"), (["--decay-slice", "country=XX"], "--decay-slice"),
    (["--late-fraction", "2"], "--late-fraction"),
])
def test_command_errors_name_the_option(tmp_path: Path, args: list[str], option: str) -> None:
    res = CliRunner().invoke(simulate_command, [str(tmp_path / "x"), "--days", "1", *args])
    assert isinstance(res.exception, InvalidParameterError)
    assert option in str(res.exception)
