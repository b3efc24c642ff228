"""One plan: a convention and measures become the kernel's arguments in ranklens._core.plan only, and the
kernel is called from there only."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import ranklens
from ranklens._core.plan import make_plan
from ranklens._kernels import codes as K
from ranklens.conventions import Convention, get_convention
from ranklens.errors import EmptyQueryError, InvalidParameterError
from ranklens.evaluate import evaluate_arrays

SRC = Path(ranklens.__file__).parent


def _callers(name: str) -> set[str]:
    """Modules of src/ranklens (the kernels' package aside) that use ``name`` (a call or an import)."""
    out = set()
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("_kernels/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == name:
                out.add(rel)
            elif isinstance(node, ast.Name) and node.id == name:
                out.add(rel)
            elif isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
                out.add(rel)
    return out


def test_only_the_plan_calls_the_kernel():
    assert _callers("evaluate_queries") == {"_core/plan.py"}


def test_kernel_arguments_follow_the_measure_then_the_convention():
    conv = get_convention("ranklens").replace(relevance_level=2.0, empty=1.0)
    plan = make_plan(conv, ["ndcg_burges@5", "ndcg@5-", "P.10", "recall@100(rel=3)", "map", "num_rel"])
    assert plan.keys == ["ndcg_burges@5", "ndcg@5-", "P.10", "recall@100(rel=3)", "map", "num_rel"]
    assert plan.codes.tolist() == [K.NDCG, K.NDCG, K.P, K.RECALL, K.AP, K.NUM_REL]
    assert plan.cutoffs.tolist() == [5, 5, 10, 100, 0, 0]
    assert plan.gain_kinds.tolist() == [K.GAIN_EXP] + [K.GAIN_LINEAR] * 5
    assert plan.levels.tolist() == [2.0, 2.0, 2.0, 3.0, 2.0, 2.0]
    assert plan.rules == (1.0, 0.0, 1.0, 1.0, 1.0, 1.0)  # the '-' suffix scores empty queries 0


def test_convention_fields_reach_the_kernel():
    gains = {0: 0.0, 1: 1.0, 2: 3.0}
    conv = Convention(name="c", gain=gains, log_base=10.0, negative_labels="keep", gain_threshold=1.0,
                      empty_test="ideal_nonpositive", ideal="ranking", default_cutoff=7, round_per_query=4,
                      k_beyond_longest="error")
    plan = make_plan(conv, ["ndcg", "ndcg@3", "map"])
    assert plan.cutoffs.tolist() == [7, 3, 0]  # the default cutoff is NDCG's only
    assert plan.gain_kinds.tolist() == [K.GAIN_MAP] * 3
    assert plan.map_keys.tolist() == [0.0, 1.0, 2.0] and plan.map_vals.tolist() == [0.0, 1.0, 3.0]
    assert plan.log_base == 10.0 and plan.gain_threshold == 1.0 and not plan.negative_zero
    assert plan.empty_mode == 3 and not plan.ideal_judgments
    assert plan.round_per_query == 4 and plan.check_depth and plan.depth_needs_positive


def test_empty_error_rule_names_the_queries():
    res = {"a": {"x": 1}, "b": {"y": 0}}
    with pytest.raises(EmptyQueryError, match=r"1 queries have no relevant item for 'ndcg' \(b\)"):
        ranklens.evaluate(res, {"a": {"x": 1.0}, "b": {"y": 1.0}}, "ndcg", empty="error")


def test_cutoff_beyond_the_deepest_list_is_refused():
    # Evidently builds NDCG@1..n up to its longest list (two items here) and fails past it
    qrels = {"a": {"x": 1, "y": 0}}
    run = {"a": {"x": 0.5, "y": 0.2}}
    assert ranklens.evaluate(qrels, run, "ndcg@2", convention="evidently")["ndcg@2"] == 1.0
    with pytest.raises(InvalidParameterError, match=r"cutoff 3 of 'ndcg@3' is beyond the deepest rank \(2\)"):
        ranklens.evaluate(qrels, run, "ndcg@3", convention="evidently")


def test_rounding_as_printf():
    # per-query values rounded as C's printf rounds them (gdeval prints "%.5f"): from the exact binary value
    conv = get_convention("ranklens").replace(round_per_query=2)
    # one relevant item at rank 8 of 8: precision@8 = 1/8 = 0.125 exactly; printf("%.2f", 0.125) gives 0.12
    out = evaluate_arrays(np.zeros(8, np.int64), -np.arange(8.0), [0] * 7 + [1], "P.8", convention=conv)
    assert out["P.8"] == 0.12
