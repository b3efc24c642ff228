"""torchmetrics' other retrieval measures and ranx's ``make_comparable=True`` order (issue #29, point 6).

Under ``convention="torchmetrics"``, MAP, MRR, precision, recall, R-precision and hit rate are torchmetrics 1.9's
``RetrievalMAP`` ... ``RetrievalHitRate`` (binary targets; a relevant item scored 0 or less is no hit for MAP,
MRR, precision and recall; MAP averages the precisions over the hits in the top k; a list whose targets sum to
0 scores 0): checked against torchmetrics run here and against its docstring examples. Their tied scores are
ordered by ``torch.topk`` / ``argsort`` in an order torchmetrics does not define: a list whose ties mix relevant
and non-relevant items is refused in one line. Under ``ties="ranx_comparable"`` the order is the one
``ranx.evaluate(qrels, run, make_comparable=True)`` evaluates, checked against ranx on tie-heavy random runs.
"""

from __future__ import annotations

import numpy as np
import pytest

import ranklens
from ranklens import InputError

torch = pytest.importorskip("torch")
tmr = pytest.importorskip("torchmetrics.retrieval")
tmf = pytest.importorskip("torchmetrics.functional.retrieval")

evaluate_arrays = ranklens.evaluate.evaluate_arrays

#: ours -> (torchmetrics' module class, its functional, the keyword of the cutoff)
PEERS = {
    "map": ("RetrievalMAP", "retrieval_average_precision"),
    "mrr": ("RetrievalMRR", "retrieval_reciprocal_rank"),
    "precision": ("RetrievalPrecision", "retrieval_precision"),
    "recall": ("RetrievalRecall", "retrieval_recall"),
    "r_precision": ("RetrievalRPrecision", "retrieval_r_precision"),
    "hit_rate": ("RetrievalHitRate", "retrieval_hit_rate"),
}


def _key(family, k):
    return family if k is None else f"{family}@{k}"


def _module(family, k, preds, target, indexes):
    cls = getattr(tmr, PEERS[family][0])
    m = cls() if k is None or family == "r_precision" else cls(top_k=k)
    return float(m(torch.tensor(preds, dtype=torch.float32), torch.tensor(target), indexes=torch.tensor(indexes)))


# --- torchmetrics' docstring examples --------------------------------------------------------------------------

MODULE_EXAMPLES = [  # torchmetrics 1.9's docstrings: indexes [0, 0, 0, 1, 1, 1, 1], preds as below
    ("map", [False, False, True, False, True, False, True], 0.7917),
    ("mrr", [False, False, True, False, True, False, True], 0.7500),
    ("P@2", [False, False, True, False, True, False, True], 0.5000),
    ("recall@2", [False, False, True, False, True, False, True], 0.7500),
    ("r_precision", [False, False, True, False, True, False, True], 0.7500),
    ("hit_rate@2", [True, False, False, False, True, False, True], 0.5000),
    ("ndcg", [False, False, True, False, True, False, True], 0.8467),
]


@pytest.mark.parametrize(("measure", "target", "value"), MODULE_EXAMPLES)
def test_torchmetrics_module_docstring_examples(measure, target, value):
    res = evaluate_arrays([0, 0, 0, 1, 1, 1, 1], [0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2], np.array(target, float),
                          [measure], convention="torchmetrics")
    assert round(res[measure], 4) == value


FUNCTIONAL_EXAMPLES = [  # their functional docstrings: preds [0.2, 0.3, 0.5]
    ("map", [True, False, True], 0.8333), ("mrr", [False, True, False], 0.5), ("P@2", [True, False, True], 0.5),
    ("recall@2", [True, False, True], 0.5), ("r_precision", [True, False, True], 0.5),
    ("hit_rate@2", [True, False, True], 1.0),
]


@pytest.mark.parametrize(("measure", "target", "value"), FUNCTIONAL_EXAMPLES)
def test_torchmetrics_functional_docstring_examples(measure, target, value):
    res = evaluate_arrays([0, 0, 0], [0.2, 0.3, 0.5], np.array(target, float), [measure], convention="torchmetrics")
    assert round(res[measure], 4) == value


# --- random untied lists against torchmetrics run here ----------------------------------------------------------

def _random_lists(seed, n_q=60):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 12, n_q)
    idx = np.repeat(np.arange(n_q), sizes)
    preds = rng.normal(0.0, 1.0, idx.size).astype(np.float32)  # negatives and positives: torchmetrics' preds > 0
    preds[rng.random(idx.size) < 0.05] = 0.0
    # no two equal scores in a list (a 0.0 and its neighbours apart): unique values per query
    preds += (np.arange(idx.size) * 1e-3).astype(np.float32)
    target = (rng.random(idx.size) < 0.3).astype(np.int64)
    target[idx == 0] = 0  # a list without a relevant item: torchmetrics' empty_target_action="neg" scores 0
    return idx, preds, target


@pytest.mark.parametrize("family", list(PEERS))
@pytest.mark.parametrize("k", [None, 1, 3, 10, 50])
@pytest.mark.parametrize("seed", [0, 1])
def test_torchmetrics_measures_on_untied_lists(family, k, seed):
    if family == "r_precision" and k is not None:
        return  # R-precision takes no cutoff
    idx, preds, target = _random_lists(seed)
    key = _key(family, k)
    res = evaluate_arrays(idx, preds, target.astype(float), [key], convention="torchmetrics")
    assert res[key] == pytest.approx(_module(family, k, preds, target, idx), abs=2e-7)
    func = getattr(tmf, PEERS[family][1])
    kw = {} if family == "r_precision" or k is None else {"top_k": k}
    per = res.per_query_dict(key)
    for q in np.unique(idx):
        sel = idx == q
        want = 0.0 if target[sel].sum() == 0 else float(func(torch.tensor(preds[sel]), torch.tensor(target[sel]), **kw))
        assert per[int(q)] == pytest.approx(want, abs=2e-7), (q, key)


def test_ties_within_one_kind_of_item_are_computed():
    """Tied scores among non-relevant items (or among relevant ones) give one value whatever their order."""
    preds = [0.9, 0.5, 0.5, 0.5, 0.2, 0.2]
    target = [1, 0, 0, 0, 1, 1]
    res = evaluate_arrays([0] * 6, preds, np.array(target, float), ["map", "mrr", "P@3", "recall@5"],
                          convention="torchmetrics")
    for key, family, k in (("map", "map", None), ("mrr", "mrr", None), ("P@3", "precision", 3),
                           ("recall@5", "recall", 5)):
        assert res[key] == pytest.approx(_module(family, k, preds, target, [0] * 6), abs=2e-7), key


@pytest.mark.parametrize("measure", ["map", "mrr", "P@2", "recall@2", "r_precision", "hit_rate@1"])
def test_a_tie_between_a_relevant_and_a_non_relevant_item_is_refused(measure):
    with pytest.raises(InputError, match=r"convention 'torchmetrics': .* without ties between relevant and "
                                         r"non-relevant items.*1 queries hold such ties \(7\)"):
        evaluate_arrays([3, 3, 3, 7, 7, 7], [0.9, 0.5, 0.1, 0.9, 0.5, 0.5], [1.0, 0, 0, 0, 1, 0], [measure],
                        convention="torchmetrics")


def test_ndcg_keeps_averaging_ties_as_torchmetrics():
    """NDCG is the tie-averaged definition (torchmetrics translates scikit-learn's): ties are computed there."""
    preds, target = [0.9, 0.5, 0.5], [0, 1, 0]
    res = evaluate_arrays([0, 0, 0], preds, np.array(target, float), ["ndcg"], convention="torchmetrics")
    want = float(tmr.RetrievalNormalizedDCG()(torch.tensor(preds), torch.tensor(target), indexes=torch.tensor([0] * 3)))
    assert res["ndcg"] == pytest.approx(want, abs=1e-6)


def test_non_binary_labels_and_ranks_are_refused():
    with pytest.raises(InputError, match="binary labels"):
        evaluate_arrays([0, 0], [0.9, 0.1], [2.0, 0.0], ["map"], convention="torchmetrics")
    with pytest.raises(InputError, match="read the scores themselves"):
        ranklens.evaluate({"q": {"a": 1, "b": 0}}, _ranked_by_rank(), ["map"], convention="torchmetrics")


def _ranked_by_rank():
    pa = pytest.importorskip("pyarrow")
    return pa.table({"query": ["q", "q"], "item": ["a", "b"], "rank": [1, 2]})


def test_labels_summing_to_zero_module_and_functional():
    """[2, -2]: torchmetrics' RetrievalNormalizedDCG calls the list empty (its targets sum to 0) and scores it 0 with
    empty_target_action="neg"; its functional retrieval_normalized_dcg has no such test and gives 1.0 (and -1.0
    reversed): the preset is the first, empty_test="ideal_zero" the second."""
    for preds in ([0.9, 0.1], [0.1, 0.9]):
        p, t = torch.tensor(preds), torch.tensor([2, -2])
        module = float(tmr.RetrievalNormalizedDCG()(p, t, indexes=torch.tensor([0, 0])))
        functional = float(tmf.retrieval_normalized_dcg(p, t))
        ours = evaluate_arrays([0, 0], preds, [2.0, -2.0], ["ndcg"], convention="torchmetrics")["ndcg"]
        assert ours == module == 0.0
        fn = evaluate_arrays([0, 0], preds, [2.0, -2.0], ["ndcg"],
                             convention=ranklens.get_convention("torchmetrics", empty_test="ideal_zero"))["ndcg"]
        assert fn == pytest.approx(functional, abs=1e-6) and abs(fn) == pytest.approx(1.0)


# --- ranx's make_comparable order ------------------------------------------------------------------------------

ranx = pytest.importorskip("ranx")
RANX_METRICS = ["ndcg@5", "ndcg", "map@10", "mrr", "precision@3", "recall@5", "hit_rate@3", "r-precision",
                "ndcg_burges@10"]


def _tie_heavy(seed, n_q=120):
    """Qrels and a run with scores drawn from 4 values (long runs of ties), queries missing from the run and
    queries the qrels lack (make_comparable adds empty lists and drops them)."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_q):
        docs = [f"d{q}_{i}" for i in range(int(rng.integers(3, 25)))]
        if q % 10 != 9:  # every tenth query has no judgment
            qrels[f"q{q}"] = {d: int(rng.integers(0, 3)) for d in docs if rng.random() < 0.5} or {docs[0]: 1}
        if q % 7 != 6:  # every seventh query has no ranking
            run[f"q{q}"] = {d: float(rng.choice([0.1, 0.2, 0.3, 0.4])) for d in docs}
    return qrels, run


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ranx_make_comparable_order(seed):
    qrels, run = _tie_heavy(seed)
    conv = ranklens.get_convention("ranx", ties="ranx_comparable", queries="judged")
    peer = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), RANX_METRICS, return_mean=False, make_comparable=True)
    ours = ranklens.evaluate(qrels, run, RANX_METRICS, convention=conv)
    given_a_run = ranklens.evaluate(qrels, ranx.Run(run), RANX_METRICS, convention=conv)  # a Run: sorted once more
    queries = sorted(qrels)  # make_comparable: the qrels' queries, in ranx's order (sorted ids)
    moved = 0
    plain = ranklens.evaluate(qrels, run, RANX_METRICS, convention=conv.replace(ties="ranx"))
    for m in RANX_METRICS:
        want = dict(zip(queries, np.asarray(peer[m], dtype=float)))
        for res in (ours, given_a_run):
            got = res.per_query_dict(m)
            for q in queries:
                assert got.get(q, 0.0) == pytest.approx(want[q], abs=1e-12), (m, q)
        assert ours[m] == pytest.approx(float(np.mean(peer[m])), abs=1e-12), m
        base = plain.per_query_dict(m)
        moved += sum(abs(base.get(q, 0.0) - want[q]) > 1e-12 for q in queries)
    assert moved > 0  # the second sort moves tied rows: ranx's order without it gives other numbers
