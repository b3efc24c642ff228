"""Arrays of other libraries, the documented ``evaluate_arrays`` path, keyword errors (issue #29, point 2).

torch tensors, and stand-ins offering only numpy's ``__array__`` or only DLPack (as JAX and CuPy arrays do), are
read as the numpy arrays they hold, without ranklens importing torch or JAX. The numbers are computed by hand.
"""

from __future__ import annotations

import functools
import importlib
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ranklens
from ranklens import InvalidParameterError
from ranklens.conventions import Convention
from ranklens.options import COLUMN_KEYS, FORMAT_KEYS

torch = pytest.importorskip("torch")

Y_TRUE = [[2.0, 0.0, 1.0], [0.0, 1.0, 2.0]]
Y_SCORE = [[0.9, 0.5, 0.1], [0.7, 0.3, 0.2]]
# by hand: row 0 ranks labels 2, 0, 1 (ideal 2, 1, 0); row 1 ranks 0, 1, 2 (ideal 2, 1, 0)
IDEAL = 2 + 1 / math.log2(3)
NDCG = ((2 + 1 / math.log2(4)) / IDEAL + (1 / math.log2(3) + 2 / math.log2(4)) / IDEAL) / 2


class OnlyArray:
    def __init__(self, a):
        self.a = np.asarray(a)

    def __array__(self, dtype=None, copy=None):
        return self.a if dtype is None else self.a.astype(dtype)


class OnlyDLPack:
    def __init__(self, a):
        self.a = np.asarray(a)

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


class OnGPU(OnlyDLPack):
    """DLPack on a device numpy cannot read (as a CUDA tensor or a CuPy array)."""

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA

    def __dlpack__(self, **kwargs):
        raise BufferError("the array is on a CUDA device")


@pytest.mark.parametrize("wrap", [torch.tensor, OnlyArray, OnlyDLPack,
                                  lambda a: torch.tensor(a, dtype=torch.float32)], ids=["torch", "__array__",
                                                                                        "dlpack", "torch float32"])
def test_array_likes_are_read_as_their_arrays(wrap):
    res = ranklens.evaluate(wrap(Y_TRUE), wrap(Y_SCORE), ["ndcg"])
    assert res["ndcg"] == pytest.approx(NDCG, rel=1e-6)


def test_a_tensor_score_vector_aligns_with_the_judgment_rows():
    judgments = {"q": {"a": 2, "b": 0, "c": 1}}
    res = ranklens.evaluate(judgments, torch.tensor([0.9, 0.5, 0.1]), ["ndcg"])
    assert res["ndcg"] == pytest.approx((2 + 1 / math.log2(4)) / IDEAL, rel=1e-12)


def test_evaluate_arrays_takes_tensors_and_dlpack():
    q = torch.tensor([7, 3, 7, 3])
    res = ranklens.evaluate.evaluate_arrays(q, OnlyDLPack(np.array([0.9, 0.8, 0.1, 0.3])),
                                            OnlyArray([0.0, 1.0, 1.0, 0.0]), ["mrr"])
    assert res.queries.tolist() == [3, 7] and res.per_query_dict("mrr") == {3: 1.0, 7: 0.5}


@pytest.mark.parametrize(("obj", "why"), [
    (torch.tensor(Y_SCORE, requires_grad=True), "x.detach().cpu()"),
    (OnGPU(Y_SCORE), "on the CPU"),
    (torch.tensor(Y_SCORE, dtype=torch.bfloat16), "on the CPU"),
])
def test_an_array_numpy_cannot_read_is_refused_with_the_way_out(obj, why):
    with pytest.raises(InvalidParameterError, match=r"rankings: cannot read the .* as a numpy array") as info:
        ranklens.evaluate(Y_TRUE, obj, ["ndcg"])
    assert why in str(info.value)


def test_import_ranklens_imports_neither_torch_nor_jax():
    code = ("import sys, ranklens, numpy as np; ranklens.evaluate([[1, 0]], np.array([[0.2, 0.1]]), ['ndcg']); "
            "print(sorted(m for m in ('torch', 'jax', 'cupy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr


def test_the_documented_dotted_path_of_evaluate_arrays_resolves():
    """docs/api/evaluation.md documents ranklens.evaluate.evaluate_arrays; ranklens.evaluate stays the function."""
    doc = (Path(__file__).parents[1] / "docs" / "api" / "evaluation.md").read_text()
    assert "ranklens.evaluate.evaluate_arrays" in doc
    f = functools.reduce(getattr, ["evaluate", "evaluate_arrays"], ranklens)
    assert f is importlib.import_module("ranklens.evaluate").evaluate_arrays
    from ranklens.evaluate import evaluate_arrays

    assert f is evaluate_arrays and callable(ranklens.evaluate)
    assert ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["mrr"])["mrr"] == 1.0
    assert f([1, 1], [0.2, 0.1], [0, 1], ["mrr"])["mrr"] == 0.5


def test_a_mistyped_keyword_lists_every_accepted_keyword():
    with pytest.raises(InvalidParameterError) as info:
        ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["ndcg"], score_column="s")
    msg = str(info.value)
    assert msg.startswith("unknown keyword 'score_column' (did you mean 'score_col'?)"), msg
    for key in (*COLUMN_KEYS, *FORMAT_KEYS, *(f.name for f in Convention.__dataclass_fields__.values()),
                "convention", "per_query", "weights"):
        assert re.search(rf"\b{key}\b", msg), key


def test_explain_and_the_cli_name_the_keyword_too(tmp_path, run_cli):
    with pytest.raises(InvalidParameterError, match=r"unknown keyword 'qeury_col' \(did you mean 'query_col'\?\)"):
        ranklens.explain({"q": {"a": 1}}, {"q": {"a": 1.0}}, "q", qeury_col="x")
    (tmp_path / "q").write_text("q1 0 a 1\n")
    (tmp_path / "r").write_text("q1 Q0 a 1 0.5 x\n")
    code, _, err = run_cli(["eval", tmp_path / "q", tmp_path / "r", "--set", "tie=input"])
    assert code == 2 and "--set tie=input: unknown convention field 'tie' (did you mean 'ties'?)" in err, err

