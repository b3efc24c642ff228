"""What the ingest stores gives the numbers computed from the raw events by their definition (issue 19,
point 7: the faster ingest keeps the results): a simulated stream with late labels in later files, the
store's daily NDCG@10 and MRR@10 per series against a computation in plain Python from the Parquet files."""

from __future__ import annotations

import math
from collections import defaultdict

import pyarrow.parquet as pq
import pytest

from ranklens.monitor import Store
from ranklens.monitor.simulate import simulate

from .handcalc import ndcg


def _from_raw_events(paths):
    """Per (day, model, version, environment): the NDCG@10 and RR@10 of every list, from the definitions.

    A list is the rows with a rank (or score) of one (model, version, environment, group_id), served on the
    day of its earliest row; the gain of an item is 1 when one of its labels, on its row or on any label row
    of its (group_id, item_id) in any file, is "click" (binary attribution, the store's default), its largest
    explicit relevance when one is given; a list without gain is left out (counted apart).
    """
    lists = defaultdict(list)
    clicked, relevance = set(), {}
    for p in paths:
        for r in pq.read_table(p).to_pylist():
            key = (r["group_id"], r["item_id"])
            if r.get("labels") and "click" in r["labels"]:
                clicked.add(key)
            if r.get("relevance") is not None:
                relevance[key] = max(relevance.get(key, -math.inf), r["relevance"])
            if r.get("rank") is not None or r.get("score") is not None:
                lists[(r["model"], r["model_version"], r["environment"], r["group_id"])].append(r)
    out = defaultdict(lambda: {"ndcg": [], "rr": [], "excluded": 0})
    for (model, version, env, gid), rows in lists.items():
        day = min(r["timestamp"] for r in rows).date()
        if all(r.get("rank") is not None for r in rows):
            rows = sorted(rows, key=lambda r: r["rank"])
        else:
            scores = [r["score"] for r in rows]
            assert len(set(scores)) == len(scores)  # no ties: the order needs no convention
            rows = sorted(rows, key=lambda r: -r["score"])
        gains = [relevance.get((gid, r["item_id"]), 1.0 if (gid, r["item_id"]) in clicked else 0.0) for r in rows]
        cell = out[(day, model, version, env)]
        value = ndcg(gains, 10)
        if value is None:
            cell["excluded"] += 1
            continue
        cell["ndcg"].append(value)
        first = next((i for i, g in enumerate(gains[:10]) if g > 0), None)
        cell["rr"].append(0.0 if first is None else 1.0 / (first + 1))
    return out


@pytest.mark.parametrize("files_per_call", [1, 100])
def test_store_reports_equal_the_raw_events_computation(tmp_path, files_per_call):
    paths = simulate(tmp_path / "events", days=6, groups_per_day=150, seed=11, decay_start="2026-10-04",
                     v2_start="2026-10-03", late_fraction=0.6, max_delay_hours=40)
    expected = _from_raw_events(paths)
    st = Store(tmp_path / "s.duckdb", config={})
    for i in range(0, len(paths), files_per_call):  # one call per file, or all files in one call
        st.ingest(paths[i:i + files_per_call])
    rep = st.report(["ndcg@10", "mrr@10"], window="day", ci=None).to_pylist()
    got = {(r["window"].date(), r["model"], r["model_version"], r["environment"], r["measure"]): r for r in rep}
    assert {k[:4] for k in got} == set(expected)
    for key, cell in expected.items():
        for metric, values in (("ndcg@10", cell["ndcg"]), ("mrr@10", cell["rr"])):
            r = got[(*key, metric)]
            assert (r["n_groups"], r["n_excluded"]) == (len(values), cell["excluded"]), key
            assert r["value"] == pytest.approx(sum(values) / len(values), abs=1e-12), (key, metric)
