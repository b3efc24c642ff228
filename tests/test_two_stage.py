"""Two-stage systems (issue #33, point 7): recall of the candidates, NDCG@k of the final ranking, the NDCG@k of the
ideal re-ranking of the candidates and the loss of each stage; every number by hand from the definitions."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import ranklens
from ranklens import stats
from ranklens.errors import InvalidParameterError

LOG3 = math.log2(3)


def _dcg(gains):
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


QRELS = {"q1": {"a": 2, "b": 1, "c": 1}, "q2": {"x": 1, "y": 3}, "q3": {"z": 0}}
CANDIDATES = {"q1": {"a": 0.9, "n": 0.8, "b": 0.7, "c": 0.1}, "q2": {"y": 0.5, "w": 0.4, "x": 0.3},
              "q3": {"z": 1.0}}
RANKING = {"q1": {"b": 2.0, "a": 1.0, "n": 0.5}, "q2": {"w": 3.0, "x": 2.0, "y": 1.0}, "q3": {"z": 1.0}}


def test_two_stage_by_hand():
    """Depth 3: q1's candidates a, n, b (c is the 4th: cut); q2's y, w, x; q3 has no relevant item (skipped and
    noted, as the ranklens convention does)."""
    t = ranklens.two_stage(QRELS, CANDIDATES, RANKING, depth=3, k=3, ci="t")
    pq = t.per_query_dict()
    assert sorted(pq) == ["q1", "q2"] and any("no relevant item" in n for n in t.notes)
    ideal1 = _dcg([2, 1, 1])
    ceiling1 = _dcg([2, 1, 0]) / ideal1  # a, b, then the unjudged n
    ndcg1 = _dcg([1, 2, 0]) / ideal1  # b, a, n
    ideal2 = _dcg([3, 1])
    ceiling2 = 1.0  # y and x are both among the candidates
    ndcg2 = _dcg([0, 1, 3]) / ideal2  # w, x, y
    row1, row2 = pq["q1"], pq["q2"]
    assert row1["recall@3 (candidates)"] == 2 / 3 and row2["recall@3 (candidates)"] == 1.0
    assert math.isclose(row1["ndcg@3 (ceiling)"], ceiling1, rel_tol=1e-12)
    assert math.isclose(row1["ndcg@3 (ranking)"], ndcg1, rel_tol=1e-12)
    assert math.isclose(row2["ndcg@3 (ceiling)"], ceiling2, rel_tol=1e-12)
    assert math.isclose(row2["ndcg@3 (ranking)"], ndcg2, rel_tol=1e-12)
    for row in (row1, row2):  # the two losses add up to the system's
        assert math.isclose(row["loss (candidates)"] + row["loss (ranking)"], 1 - row["ndcg@3 (ranking)"],
                            abs_tol=1e-15)
        assert math.isclose(row["loss (candidates)"], 1 - row["ndcg@3 (ceiling)"], abs_tol=1e-15)
    # the means and their intervals: ranklens.stats over the two queries
    x = np.array([ndcg1, ndcg2])
    iv = stats.t_interval(x)
    assert math.isclose(t["ndcg@3 (ranking)"], x.mean(), rel_tol=1e-12)
    assert math.isclose(t.intervals["ndcg@3 (ranking)"].low, iv.low, rel_tol=1e-12)


def test_every_candidate_and_a_ranking_beyond_them():
    """Without a depth every candidate counts (q1: c too, so recall 1); a final ranking holding a relevant item
    that is not a candidate scores above the ceiling: a negative ranking loss, noted."""
    ranking = {"q1": {"a": 2.0, "b": 1.0, "c": 0.5}, "q2": {"y": 1.0, "x": 0.5}, "q3": {"z": 1.0}}
    t = ranklens.two_stage(QRELS, CANDIDATES, ranking, k=2, ci="percentile", n_resamples=100)
    pq = t.per_query_dict()
    assert pq["q1"]["recall (candidates)"] == 1.0
    cut = ranklens.two_stage(QRELS, CANDIDATES, ranking, depth=1, k=2, ci="percentile", n_resamples=100)
    row = cut.per_query_dict()["q1"]  # one candidate (a): ceiling a only; the ranking a, b
    assert math.isclose(row["ndcg@2 (ceiling)"], 2 / _dcg([2, 1]), rel_tol=1e-12)
    assert math.isclose(row["loss (ranking)"], 2 / _dcg([2, 1]) - 1.0, rel_tol=1e-12)
    assert any("not among the candidates" in n for n in cut.notes)


def test_two_stage_refusals():
    with pytest.raises(InvalidParameterError, match="`k`"):
        ranklens.two_stage(QRELS, CANDIDATES, RANKING, k=0)
    with pytest.raises(InvalidParameterError, match="`depth`"):
        ranklens.two_stage(QRELS, CANDIDATES, RANKING, depth=0)


def _trec(path, run):
    path.write_text("".join(f"{q} Q0 {d} {i + 1} {s} r\n" for q, docs in run.items()
                            for i, (d, s) in enumerate(docs.items())))
    return str(path)


def test_cli_eval_candidates(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    cand, rank = _trec(tmp_path / "cand", CANDIDATES), _trec(tmp_path / "rank", RANKING)
    cmd = [sys.executable, "-m", "ranklens._cli.main", "eval", str(qrels), rank, "--candidates", cand,
           "--depth", "3", "-m", "ndcg@3", "-f", "json", "-q"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    expected = ranklens.two_stage(QRELS, CANDIDATES, RANKING, depth=3, k=3).per_query_dict()
    assert data["per_query"]["q1"] == pytest.approx(expected["q1"], rel=1e-12)
    table = subprocess.run(cmd[:-5], capture_output=True, text=True)  # ndcg@10, a table
    assert table.returncode == 0 and "loss (ranking)" in table.stdout and "ndcg@10 (ceiling)" in table.stdout
    bad = subprocess.run(cmd[:-5] + ["-m", "map"], capture_output=True, text=True)
    assert bad.returncode == 2 and "one ndcg@k" in bad.stderr
    alone = subprocess.run([sys.executable, "-m", "ranklens._cli.main", "eval", str(qrels), rank, "--depth", "3"],
                           capture_output=True, text=True)
    assert alone.returncode == 2 and "--depth needs --candidates" in alone.stderr
