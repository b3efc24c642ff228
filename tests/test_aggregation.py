"""One aggregation function: the partial results of any split of the queries combine into exactly the
result of all queries at once (weighted means, XGBoost/LightGBM's gbdt weighting, counts, exclusions).

The tiny case is computed by hand; its values and weights are dyadic fractions, so every grouping of
the sums is exact and the means must match to the bit."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import ranklens
from ranklens._core.plan import make_plan, run_plan
from ranklens._core.problem import ExclusionReason, array_problem, build_problem
from ranklens.conventions import get_convention
from ranklens.data import as_judgments, as_rankings
from ranklens.errors import InvalidParameterError
from ranklens.evaluate import evaluate_arrays
from ranklens.render import render
from ranklens.result import Partial, Result, combine

# query code -> (scores, labels), in rank order of the scores
CASE = {
    0: ([3.0, 2.0, 1.0], [0, 1, 1]),  # P@2 1/2, RR 1/2, relevant retrieved 2
    1: ([2.0, 1.0], [1, 0]),  # P@2 1/2, RR 1, 1
    2: ([1.0, 2.0], [0, 0]),  # no relevant item
    3: ([5.0, 4.0, 3.0, 2.0], [0, 0, 0, 2]),  # P@2 0, RR 1/4, 1
}
WEIGHTS = {0: 0.5, 1: 2.0, 2: 0.25, 3: 1.0}
METRICS = ["P.2", "mrr", "num_rel_ret"]
SKIP = get_convention("ranklens")
GBDT = get_convention("ranklens").replace(name="gbdt", weighting="gbdt", empty=1.0)

# by hand. skip: query 2 left out; weights 0.5 + 2 + 1 = 3.5
HAND_SKIP = {"P.2": (0.5 * 0.5 + 2 * 0.5 + 1 * 0) / 3.5, "mrr": (0.5 * 0.5 + 2 * 1 + 1 * 0.25) / 3.5,
             "num_rel_ret": 4.0}
# gbdt, empty=1: query 2 scores 1, added unweighted; its weight stays in the denominator (3.75)
HAND_GBDT = {"P.2": (0.5 * 0.5 + 2 * 0.5 + 1 * 0 + 1) / 3.75, "mrr": (0.5 * 0.5 + 2 * 1 + 1 * 0.25 + 1) / 3.75,
             "num_rel_ret": 4.0}


def _arrays(queries):
    q, s, lab = [], [], []
    for code in queries:
        scores, labels = CASE[code]
        q += [code] * len(scores)
        s += scores
        lab += labels
    return np.array(q), np.array(s), np.array(lab, dtype=float)


def _partial(plan, queries):
    problem = array_problem(*_arrays(queries), plan.convention)
    values, empties = run_plan(plan, problem)
    w = np.array([WEIGHTS[int(c)] for c in problem.qids])
    return Partial.from_values(plan, problem.qids, values, empties, w, problem.notes)


def _splits(items):
    """Every partition of ``items`` into blocks (each block in increasing order)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in _splits(rest):
        for i in range(len(part)):
            yield part[:i] + [[first] + part[i]] + part[i + 1:]
        yield [[first]] + part


@pytest.mark.parametrize("conv,hand", [(SKIP, HAND_SKIP), (GBDT, HAND_GBDT)], ids=["skip", "gbdt"])
def test_any_split_combines_to_the_whole(conv, hand):
    plan = make_plan(conv, METRICS)
    whole = evaluate_arrays(*_arrays(CASE), METRICS, convention=conv, weights=[WEIGHTS[q] for q in sorted(CASE)])
    assert whole.aggregate == hand
    assert whole.counted == ({"P.2": 3, "mrr": 3, "num_rel_ret": 4} if conv is SKIP else
                             {"P.2": 4, "mrr": 4, "num_rel_ret": 4})
    note = ("1 query: no relevant item: skipped (not in the mean) [P.2, mrr] (2)" if conv is SKIP else
            "1 query: no relevant item: scored 1 by the convention [P.2, mrr] (2)")
    assert [str(e) for e in whole.excluded] == [note]
    splits = list(_splits(sorted(CASE)))
    assert len(splits) == 15  # Bell number B4
    for split in splits:
        for blocks in itertools.permutations(split):  # partials in any order
            res = Result.from_partial(plan, combine([_partial(plan, b) for b in blocks]))
            assert res.aggregate == hand, blocks
            assert res.counted == whole.counted
            assert [str(e) for e in res.excluded] == [note]
        # and in any grouping (associativity): the first block, then the others already combined
        if len(split) > 2:
            nested = combine([_partial(plan, split[0]), combine([_partial(plan, b) for b in split[1:]])])
            assert Result.from_partial(plan, nested).aggregate == hand


def test_examples_merge_in_query_order():
    # 25 judged queries without a ranking (scored as empty rankings) and 5 ranked: split odd / even
    qrels = {f"q{i:02d}": {"a": 1} for i in range(1, 31)}
    run = {f"q{i:02d}": {"a": 1.0} for i in range(1, 6)}
    conv = get_convention("ranklens")
    plan = make_plan(conv, ["ndcg"])
    whole = ranklens.evaluate(qrels, run, ["ndcg"])
    parts = []
    for parity in (1, 0):
        keep = [q for q in qrels if int(q[1:]) % 2 == parity]
        p = build_problem(as_judgments({q: qrels[q] for q in keep}), as_rankings({q: run[q] for q in keep if q in run}),
                          conv)
        values, empties = run_plan(plan, p)
        parts.append(Partial.from_values(plan, p.qids, values, empties, None, p.notes))
    res = Result.from_partial(plan, combine(parts))
    assert [str(e) for e in res.excluded] == [str(e) for e in whole.excluded]
    (e,) = res.excluded
    assert e.reason is ExclusionReason.JUDGED_NOT_RANKED_EMPTY and e.count == 25
    assert e.examples == tuple(f"q{i:02d}" for i in range(6, 26))  # the first 20 in query order
    assert res.aggregate == whole.aggregate == {"ndcg": 5 / 30}


def test_combine_needs_a_partial():
    with pytest.raises(InvalidParameterError, match="no partial"):
        combine([])


# 32 queries of P@20 whose mean falls on a half: 17.8 / 32 = 0.55625. trec_eval adds the per-query
# values one after the other (``sum += value`` in its accumulation) and prints 4 decimals: 0.5563;
# a pairwise sum gives 0.55624999... and prints 0.5562.
_HITS = [16, 20, 5, 4, 16, 17, 10, 3, 17, 10, 3, 2, 8, 14, 8, 17, 0, 8, 11, 20, 4, 17, 1, 7, 15, 12, 19, 15,
         19, 17, 2, 19]


def test_trec_eval_presets_add_queries_one_after_the_other() -> None:
    sequential = 0.0
    for h in _HITS:
        sequential += h / 20
    pairwise = float(np.sum(np.array(_HITS) / 20))
    assert f"{sequential / 32:.4f}" == "0.5563" and f"{pairwise / 32:.4f}" == "0.5562"  # the case is real
    qrels = {f"q{i:02d}": {**{f"d{j}": 1 for j in range(h)}, "x": 0} for i, h in enumerate(_HITS)}
    run = {f"q{i:02d}": {f"d{j}": 1.0 - j / 100 for j in range(20)} for i in range(32)}
    for conv in ("trec_eval", "trec_eval10", "ir_measures"):
        res = ranklens.evaluate(qrels, run, ["P@20"], convention=conv)
        assert res["P@20"] == sequential / 32, conv
        assert "\tall\t0.5563" in render(res, "trec"), conv
    assert ranklens.evaluate(qrels, run, ["P@20"], convention="ranx")["P@20"] == pairwise / 32  # ranx: np.mean
