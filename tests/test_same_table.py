"""One table given as both the judgments and the rankings, and the tie rule by item id read only where needed.

``evaluate(tab, tab, ...)`` (the same Arrow table twice, or two numpy arrays over the same memory) is one long
table: its rows need no join, so the problem is built the one-table way (the ranked rows' labels are the
judgments' own, row for row). Under a convention breaking ties by item id (trec_eval's), the item bytes are
gathered only when two rows of a query have equal scores. The numbers come from pytrec_eval (trec_eval 9),
run here on the same rows.
"""

from __future__ import annotations

import numpy as np
import pytest

import ranklens
from ranklens._core.problem import build_problem
from ranklens.conventions import get_convention
from ranklens.options import load_inputs


def _table(ties: bool, seed: int = 3):
    pa = pytest.importorskip("pyarrow")
    rng = np.random.default_rng(seed)
    n_q, n_i = 40, 25
    q = np.repeat([f"q{i}" for i in range(n_q)], n_i)
    item = np.array([f"d{i}" for i in range(n_q * n_i)])
    label = rng.integers(0, 4, n_q * n_i)
    score = rng.integers(0, 5, n_q * n_i).astype(float) if ties else rng.normal(size=n_q * n_i)
    cols = {"query": q, "item": item, "label": label, "score": score}
    # three record batches: chunked columns, as a Parquet file read in row groups gives them
    parts = [pa.table({k: v[a:b] for k, v in cols.items()}) for a, b in ((0, 300), (300, 700), (700, 1000))]
    return pa.concat_tables(parts), cols


def _pytrec_eval(cols, k: int) -> float:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels: dict = {}
    run: dict = {}
    for q, d, lab, s in zip(cols["query"], cols["item"], cols["label"], cols["score"]):
        qrels.setdefault(q, {})[d] = int(lab)
        run.setdefault(q, {})[d] = float(s)
    res = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut_{k}"}).evaluate(run)
    return float(np.mean([v[f"ndcg_cut_{k}"] for v in res.values()]))


@pytest.mark.parametrize("ties", [False, True])
def test_one_table_twice_is_one_table(ties: bool) -> None:
    tab, cols = _table(ties)
    assert tab.column("query").num_chunks == 3
    conv = get_convention("trec_eval")
    j, r = load_inputs(tab, tab)
    problem = build_problem(j, r, conv)
    # the one-table way: the judged rows are the ranked rows, not joined by item
    assert problem.j_start is problem.r_start and problem.j_label is problem.label
    # item bytes (trec_eval's tie rule) gathered only when some query has tied scores
    assert (problem.item_data.size > 1) == ties
    res = ranklens.evaluate(tab, tab, ["ndcg@5"], convention="trec_eval")
    assert res["ndcg@5"] == pytest.approx(_pytrec_eval(cols, 5), abs=1e-12)
    # two tables over other memory (a copy) are joined, with the same numbers
    assert ranklens.evaluate(tab, tab.select(tab.column_names).combine_chunks(), ["ndcg@5"],
                             convention="trec_eval")["ndcg@5"] == pytest.approx(res["ndcg@5"], abs=1e-15)


def test_numpy_views_of_the_same_memory_are_one_table() -> None:
    _, cols = _table(False)
    q, item = cols["query"].astype(object), cols["item"].astype(object)
    j = ranklens.Judgments(q, item, cols["label"].astype(float))
    r = ranklens.Rankings(q[:], item[:], score=cols["score"])  # views: other objects, the same memory
    conv = get_convention("trec_eval")
    problem = build_problem(j, r, conv)
    assert problem.j_start is problem.r_start
    joined = build_problem(j, ranklens.Rankings(q.copy(), item.copy(), score=cols["score"]), conv)
    assert joined.j_start is not joined.r_start  # copies: joined by item
