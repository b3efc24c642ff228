"""torchmetrics' retrieval test cases, run through ranklens under the ``torchmetrics`` convention.

Ported from torchmetrics (github.com/Lightning-AI/torchmetrics) ``tests/unittests/retrieval``: the inputs of
``inputs.py`` (_input_retrieval_scores: 10 query indexes, uniform scores, binary targets;
_input_retrieval_scores_int_target: graded targets -1..3 for NDCG; _input_retrieval_scores_for_adaptive_k:
many small queries), drawn the same way under seed 42 (``seed_all(42)``), and the parameter grids of
test_ndcg.py, test_map.py, test_mrr.py, test_precision.py, test_recall.py and test_hit_rate.py
(``empty_target_action`` skip/neg/pos, ``top_k`` None/1/4/10; precision and recall also on the many short
queries of the adaptive-k input, ``adaptive_k=False``: ranklens has no adaptive cutoff). Every measure of the
suite is computed (#29: MAP, MRR, precision, recall and hit rate on lists without ties, as these are). Each expected
value is what the torchmetrics module itself computes in the test; torchmetrics computes in float32 (tolerance 1e-6).
"""

from __future__ import annotations

import numpy as np
import pytest

import ranklens

torch = pytest.importorskip("torch")
retrieval = pytest.importorskip("torchmetrics.retrieval")

NUM_BATCHES, BATCH_SIZE = 2, 32  # torchmetrics' unittests/__init__.py: NUM_BATCHES 2 (CI), BATCH_SIZE 32
TOL = 1e-6


def _inputs(kind: str):
    torch.manual_seed(42)
    if kind == "scores":
        idx = torch.randint(high=10, size=(NUM_BATCHES, BATCH_SIZE))
        preds = torch.rand(NUM_BATCHES, BATCH_SIZE)
        target = torch.randint(high=2, size=(NUM_BATCHES, BATCH_SIZE))
    elif kind == "int_target":
        idx = torch.randint(high=10, size=(NUM_BATCHES, 2 * BATCH_SIZE))
        preds = torch.rand(NUM_BATCHES, 2 * BATCH_SIZE)
        target = torch.randint(low=-1, high=4, size=(NUM_BATCHES, 2 * BATCH_SIZE))
    else:  # adaptive_k
        idx = torch.randint(high=NUM_BATCHES * BATCH_SIZE // 2, size=(NUM_BATCHES, BATCH_SIZE))
        preds = torch.rand(NUM_BATCHES, BATCH_SIZE)
        target = torch.randint(high=2, size=(NUM_BATCHES, BATCH_SIZE))
    return idx.flatten(), preds.flatten(), target.flatten()


EMPTY = {"neg": 0.0, "pos": 1.0, "skip": "skip"}

# (torchmetrics class, its extra arguments, ranklens measure name for top_k (None: no cutoff), input kind)
METRICS = [
    ("RetrievalNormalizedDCG", {}, "ndcg", "int_target"),
    ("RetrievalNormalizedDCG", {}, "ndcg", "scores"),
    ("RetrievalMAP", {}, "map", "scores"),
    ("RetrievalMRR", {}, "mrr", "scores"),
    ("RetrievalPrecision", {}, "P", "scores"),
    ("RetrievalRecall", {}, "recall", "scores"),
    ("RetrievalHitRate", {}, "hit_rate", "scores"),
    ("RetrievalPrecision", {"adaptive_k": False}, "P", "adaptive_k"),
    ("RetrievalRecall", {}, "recall", "adaptive_k"),
    ("RetrievalHitRate", {}, "hit_rate", "adaptive_k"),
]


def _name(base: str, k: int | None) -> str:
    return base if k is None else f"{base}@{k}"


def _peer(cls: str, kind: str, top_k: int | None, action: str, **extra) -> float:
    idx, preds, target = _inputs(kind)
    metric = getattr(retrieval, cls)(top_k=top_k, empty_target_action=action, **extra)
    return float(metric(preds, target, indexes=idx))


def _table(idx, preds, target):
    """The flat tensors as a long table: one row per (query index, item), the items numbered by row."""
    pa = pytest.importorskip("pyarrow")
    return pa.table({"query": idx.numpy(), "item": np.arange(len(idx)), "score": preds.numpy().astype(np.float64),
                     "label": target.numpy()})


def _ours(measure: str, kind: str, action: str) -> float:
    res = ranklens.evaluate(_table(*_inputs(kind)), None, [measure], convention="torchmetrics", empty=EMPTY[action])
    return float(res[measure])


CASES = [(cls, extra, base, kind, k, action) for cls, extra, base, kind in METRICS for k in (None, 1, 4, 10)
         for action in ("skip", "neg", "pos") if not (cls == "RetrievalHitRate" and k is None)]


@pytest.mark.parametrize("cls, extra, base, kind, top_k, action", CASES,
                         ids=[f"{c[0]}-{c[3]}-k{c[4]}-{c[5]}" for c in CASES])
def test_torchmetrics_case(cls, extra, base, kind, top_k, action):
    # every retrieval measure of the suite, MAP with top_k too (#29): the lists hold no tied scores (uniform draws)
    expected = _peer(cls, kind, top_k, action, **extra)
    assert _ours(_name(base, top_k), kind, action) == pytest.approx(expected, abs=TOL)


def test_map_all_zero_predictions():
    # test_map.py::TestMAP::test_map_all_zero_predictions_returns_zero: torchmetrics gives 0.0 (the test's literal)
    # for all-tied predictions: scores of 0 are no hits (its preds > 0), so the order of the tie does not matter
    preds, target, idx = torch.tensor([0.0, 0.0, 0.0]), torch.tensor([1, 0, 1]), torch.tensor([0, 0, 0])
    assert float(retrieval.RetrievalMAP()(preds, target, indexes=idx)) == 0.0
    assert ranklens.evaluate(_table(idx, preds, target), None, ["map"], convention="torchmetrics")["map"] == 0.0
    # positive tied scores that mix relevant and non-relevant items: torch's order decides, so ranklens refuses
    with pytest.raises(ranklens.InputError, match=r"torch\.topk / argsort"):
        ranklens.evaluate(_table(idx, preds + 0.5, target), None, ["map"], convention="torchmetrics")
