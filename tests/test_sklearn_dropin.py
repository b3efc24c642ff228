"""ranklens.ndcg_score / dcg_score against scikit-learn, run here on the same inputs.

Checklist: tests/data/EXPECTED.md section 4 (numbers in the comments refer to its items).
Every expected value is scikit-learn's own output or a hand computation written below.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import sklearn.metrics as skm

import ranklens

TOL = 1e-12


def close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=TOL, abs_tol=TOL)


def both(name: str, *args, **kwargs) -> tuple[float, float]:
    """(scikit-learn, ranklens) values of `name` on the same arguments; ranklens must return a float."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = getattr(skm, name)(*args, **kwargs)
        got = getattr(ranklens, name)(*args, **kwargs)
    assert type(got) is float, type(got)
    return expected, got


def assert_same(name: str, *args, **kwargs) -> float:
    expected, got = both(name, *args, **kwargs)
    assert close(got, expected), (name, kwargs, got, expected)
    return got


# ---------------------------------------------------------------------------------------------
# random inputs
# ---------------------------------------------------------------------------------------------


def random_case(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    n_rows = int(rng.integers(1, 7))
    n_cols = int(rng.integers(2, 12))
    kind = seed % 4
    if kind == 0:  # graded integer labels
        y_true = rng.integers(0, 5, size=(n_rows, n_cols))
    elif kind == 1:  # binary labels
        y_true = rng.integers(0, 2, size=(n_rows, n_cols))
    elif kind == 2:  # continuous non-negative labels
        y_true = rng.random((n_rows, n_cols)) * 3
    else:  # sparse labels with all-zero rows
        y_true = rng.integers(0, 4, size=(n_rows, n_cols)) * (rng.random((n_rows, n_cols)) < 0.25)
        y_true[0] = 0
    if seed % 3 == 0:  # heavy ties
        y_score = rng.integers(0, 3, size=(n_rows, n_cols)).astype(float)
    elif seed % 3 == 1:  # some ties
        y_score = np.round(rng.normal(size=(n_rows, n_cols)), 1)
    else:  # no ties
        y_score = rng.normal(size=(n_rows, n_cols))
    weights = rng.random(n_rows) * 3 if seed % 2 else None
    return {"y_true": y_true, "y_score": y_score, "sample_weight": weights, "n_cols": n_cols}


SEEDS = range(160)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_inputs_match_sklearn(seed):
    case = random_case(seed)
    yt, ys, sw, n = case["y_true"], case["y_score"], case["sample_weight"], case["n_cols"]
    for k in (None, 1, 2, n - 1, n, n + 3, 100):
        if k is not None and k < 1:
            continue
        assert_same("ndcg_score", yt, ys, k=k, sample_weight=sw)
        assert_same("dcg_score", yt, ys, k=k, sample_weight=sw)
        # ignore_ties=True: scikit-learn breaks ties by reversing numpy's default argsort; ranklens
        # promises the same order, so the values agree with or without ties in the scores
        assert_same("ndcg_score", yt, ys, k=k, sample_weight=sw, ignore_ties=True)
        assert_same("dcg_score", yt, ys, k=k, sample_weight=sw, ignore_ties=True)
    for log_base in (10, 0.5, math.e, 1.5, 1):
        assert_same("dcg_score", yt, ys, log_base=log_base, sample_weight=sw)
        assert_same("dcg_score", yt, ys, k=2, log_base=log_base, sample_weight=sw)


@pytest.mark.parametrize("seed", range(40))
def test_ignore_ties_without_ties_equals_default(seed):
    rng = np.random.default_rng(1000 + seed)
    yt = rng.integers(0, 4, size=(3, 9))
    ys = rng.permutation(27).reshape(3, 9).astype(float)  # all distinct
    for k in (None, 1, 4, 9, 20):
        a = assert_same("ndcg_score", yt, ys, k=k, ignore_ties=True)
        b = assert_same("ndcg_score", yt, ys, k=k)
        assert close(a, b)  # item 6: no ties -> ignore_ties changes nothing
        assert close(assert_same("dcg_score", yt, ys, k=k, ignore_ties=True), assert_same("dcg_score", yt, ys, k=k))


@pytest.mark.parametrize("seed", range(30))
def test_negative_labels_in_dcg_match_sklearn(seed):
    rng = np.random.default_rng(2000 + seed)
    yt = rng.integers(-3, 4, size=(4, 6))
    ys = rng.integers(0, 3, size=(4, 6)).astype(float)
    for k in (None, 1, 3, 10):
        assert_same("dcg_score", yt, ys, k=k)


def test_all_zero_rows_score_zero():
    yt = np.array([[0, 0, 0, 0], [1, 0, 2, 0], [0, 0, 0, 0]])
    ys = np.array([[0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1], [1, 1, 1, 1]])
    got = assert_same("ndcg_score", yt, ys)
    # row 1: gains 1, 0, 2, 0 in that order -> (1 + 2/log2(4)) / (2 + 1/log2(3)); rows 0 and 2 count as 0
    row1 = (1 + 2 / math.log2(4)) / (2 + 1 / math.log2(3))
    assert close(got, row1 / 3)
    assert assert_same("ndcg_score", np.zeros((2, 5)), np.ones((2, 5))) == 0.0  # item 3


# ---------------------------------------------------------------------------------------------
# EXPECTED.md section 4, values and definitions
# ---------------------------------------------------------------------------------------------


def test_linear_gain_and_log_base():  # item 1
    yt = [[3, 0, 1, 2]]
    ys = [[4, 3, 2, 1]]
    dcg2 = 3 / math.log2(2) + 1 / math.log2(4) + 2 / math.log2(5)
    dcg10 = 3 / math.log10(2) + 1 / math.log10(4) + 2 / math.log10(5)
    assert close(assert_same("dcg_score", yt, ys), dcg2)
    assert close(assert_same("dcg_score", yt, ys, log_base=10), dcg10)


def test_dcg_never_exceeds_ideal():  # item 2
    rng = np.random.default_rng(7)
    yt = rng.integers(0, 5, size=(20, 8))
    ys = rng.normal(size=(20, 8))
    for row_t, row_s in zip(yt, ys):
        d = ranklens.dcg_score([row_t], [row_s])
        ideal = ranklens.dcg_score([row_t], [row_t])
        assert d <= ideal + 1e-12
        assert ranklens.dcg_score([row_t], [row_t], k=5) <= ideal + 1e-12


def test_perfect_ranking_is_one_at_any_k():  # items 3 and 8
    yt = np.array([[10, 0, 0, 1, 5], [0, 1, 0, 1, 0]])
    for k in (None, 1, 2, 4, 5, 50):
        assert assert_same("ndcg_score", yt, yt, k=k) == 1.0


@pytest.mark.parametrize("log_base", [2, 10])
def test_single_relevant_document_at_each_position(log_base):  # item 4
    for pos in range(5):
        yt = np.zeros((1, 5))
        yt[0, pos] = 3
        ys = np.array([[5.0, 4.0, 3.0, 2.0, 1.0]])
        disc = 1 / (math.log(pos + 2) / math.log(log_base))
        assert close(assert_same("dcg_score", yt, ys, log_base=log_base), 3 * disc)
        if log_base == 2:
            assert close(assert_same("ndcg_score", yt, ys), 1 / math.log2(pos + 2))
            noisy = ys + np.array([[1e-3, -2e-3, 3e-3, 0, 1e-3]])  # order kept
            assert close(assert_same("ndcg_score", yt, noisy), 1 / math.log2(pos + 2))


def test_equal_gains_give_one_whatever_the_order():  # item 5
    yt = np.full((2, 6), 2.0)
    ys = np.random.default_rng(3).normal(size=(2, 6))
    assert close(assert_same("ndcg_score", yt, ys), 1.0)
    assert close(assert_same("dcg_score", yt, ys), sum(2 / math.log2(i + 1) for i in range(1, 7)))


def test_monotone_invariance():  # item 6
    yt = np.array([[3, 2, 1, 0, 0]])
    ys = np.array([[0.9, 0.7, 0.5, 0.2, 0.1]])
    assert assert_same("ndcg_score", yt, ys) == 1.0
    assert assert_same("ndcg_score", yt, ys + 1000) == 1.0
    assert assert_same("ndcg_score", yt, ys, ignore_ties=True) == assert_same("ndcg_score", yt, ys)


def test_doctest_numbers():  # item 7 (and seed 002)
    yt = np.asarray([[10, 0, 0, 1, 5]])
    s1 = np.asarray([[0.1, 0.2, 0.3, 4, 70]])
    s2 = np.asarray([[0.05, 1.1, 1.0, 0.5, 0.0]])
    s3 = np.asarray([[1, 0, 0, 0, 1]])
    assert round(assert_same("dcg_score", yt, s1), 4) == 9.4995
    assert round(assert_same("dcg_score", yt, s1, k=2), 4) == 5.6309
    assert round(assert_same("ndcg_score", yt, s1), 4) == 0.6957
    assert round(assert_same("ndcg_score", yt, s2), 4) == 0.4937
    assert round(assert_same("ndcg_score", yt, s2, k=4), 4) == 0.3520
    assert assert_same("ndcg_score", yt, yt, k=4) == 1.0
    assert assert_same("dcg_score", yt, s3, k=1) == 7.5
    assert assert_same("ndcg_score", yt, s3, k=1) == 0.75
    assert assert_same("dcg_score", yt, s3, k=1, ignore_ties=True) == 5.0
    assert assert_same("ndcg_score", yt, s3, k=1, ignore_ties=True) == 0.5


def test_k_larger_than_the_list():  # item 8
    yt = [[1, 0, 2]]
    ys = [[0.3, 0.2, 0.1]]
    full = assert_same("ndcg_score", yt, ys)
    assert assert_same("ndcg_score", yt, ys, k=3) == full
    assert assert_same("ndcg_score", yt, ys, k=1000) == full
    assert assert_same("dcg_score", yt, ys, k=1000) == assert_same("dcg_score", yt, ys)


def test_ignore_ties_with_k_is_repeatable():  # item 9
    a = np.arange(12).reshape(2, 6)
    first = assert_same("ndcg_score", a, a, k=3, ignore_ties=True)
    assert assert_same("ndcg_score", a, a, k=3, ignore_ties=True) == first


def test_tie_averaging_by_hand():  # item 10
    yt = np.array([[5.0, 0.0, 2.0, 1.0]])
    disc = [1 / math.log2(i + 1) for i in range(1, 5)]
    # all scores equal: mean gain x sum of all discounts
    assert close(assert_same("dcg_score", yt, np.ones((1, 4))), 2.0 * sum(disc))
    # two tie groups: {5, 0} on top, {2, 1} below
    ys = np.array([[1.0, 1.0, 0.0, 0.0]])
    assert close(assert_same("dcg_score", yt, ys), 2.5 * (disc[0] + disc[1]) + 1.5 * (disc[2] + disc[3]))
    # a tie group cut by k=3: only the discounts inside the cutoff count
    assert close(assert_same("dcg_score", yt, ys, k=3), 2.5 * (disc[0] + disc[1]) + 1.5 * disc[2])


def test_sample_weight():  # item 11
    rng = np.random.default_rng(11)
    yt = rng.integers(0, 4, size=(4, 6))
    ys = rng.normal(size=(4, 6))
    plain = assert_same("ndcg_score", yt, ys)
    assert assert_same("ndcg_score", yt, ys, sample_weight=np.ones(4)) == plain
    weighted = assert_same("ndcg_score", yt, ys, sample_weight=[1, 2, 3, 4])
    assert weighted == assert_same("ndcg_score", yt, ys, sample_weight=np.array([1, 2, 3, 4]))
    repeated = np.repeat(np.arange(4), [1, 2, 3, 4])
    assert close(weighted, assert_same("ndcg_score", yt[repeated], ys[repeated]))
    dropped = assert_same("ndcg_score", yt, ys, sample_weight=[1, 0, 1, 0])
    assert close(dropped, assert_same("ndcg_score", yt[[0, 2]], ys[[0, 2]]))
    for f in ("ndcg_score", "dcg_score"):
        assert_same(f, yt, ys, sample_weight=(0.5, 1.5, 0.0, 2.0))
        assert_same(f, yt, ys, sample_weight=np.array([1.0, -1.0, 2.0, 3.0]))


def test_inputs_that_sklearn_accepts():  # item 18
    yt = [[1, 0, 2], [0, 1, 1]]
    ys = [[0.3, 0.2, 0.1], [1, 2, 3]]
    for conv in (lambda x: x, np.array, lambda x: np.array(x, dtype=np.float32), tuple,
                 lambda x: [np.asarray(r) for r in x]):
        assert_same("ndcg_score", conv(yt), conv(ys))
        assert_same("dcg_score", conv(yt), conv(ys))
    bools = np.array([[True, False, True], [False, False, True]])
    assert_same("ndcg_score", bools, ys)
    assert_same("ndcg_score", np.array([[1, 0, 2]], dtype=object), ys[:1])
    pd = pytest.importorskip("pandas")
    assert_same("ndcg_score", pd.DataFrame(yt), pd.DataFrame(ys))
    assert_same("dcg_score", pd.DataFrame(yt), pd.DataFrame(ys), k=2)


def test_column_permutation_invariance():  # item 19
    rng = np.random.default_rng(19)
    yt = rng.integers(0, 4, size=(5, 7))
    ys = rng.integers(0, 3, size=(5, 7)).astype(float)
    base = assert_same("ndcg_score", yt, ys)
    perm = rng.permutation(7)
    assert close(assert_same("ndcg_score", yt[:, perm], ys[:, perm]), base)


# ---------------------------------------------------------------------------------------------
# errors: same type and same message as scikit-learn
# ---------------------------------------------------------------------------------------------


def errors(name: str, *args, **kwargs) -> tuple[BaseException, BaseException]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as sk_err:
            getattr(skm, name)(*args, **kwargs)
        with pytest.raises(Exception) as rl_err:
            getattr(ranklens, name)(*args, **kwargs)
    return sk_err.value, rl_err.value


def assert_same_error(name: str, *args, **kwargs) -> BaseException:
    sk, rl = errors(name, *args, **kwargs)
    assert str(rl) == str(sk), (name, kwargs, str(rl), str(sk))
    # same class, or (InvalidParameterError) a class with the same ValueError/TypeError bases
    for base in (ValueError, TypeError, IndexError):
        assert isinstance(rl, base) == isinstance(sk, base), (type(rl), type(sk))
    if type(sk).__name__ == "InvalidParameterError":
        assert isinstance(rl, ranklens.InvalidParameterError)
    return rl


YT = [[1, 0, 2], [0, 1, 1]]
YS = [[0.3, 0.2, 0.1], [1, 2, 3]]

with warnings.catch_warnings():  # a numpy matrix on purpose (scikit-learn's refusal of it is compared): its warning
    warnings.filterwarnings("ignore", message="the matrix subclass is not the recommended way",
                            category=PendingDeprecationWarning)
    YT_MATRIX = np.matrix(YT)
ERROR_CASES = {
    # item 12
    "negative y_true": ("ndcg_score", ([[-1, 2, 0]], [[3, 2, 1]]), {}),
    # item 13
    "single column": ("ndcg_score", ([[1], [2]], [[1], [2]]), {}),
    "single column dcg": ("dcg_score", ([[1], [2]], [[1], [2]]), {}),
    # item 14
    "1-d binary": ("ndcg_score", ([1, 0, 1], [0.3, 0.2, 0.1]), {}),
    "1-d multiclass": ("ndcg_score", ([1, 0, 2], [0.3, 0.2, 0.1]), {}),
    "1-d continuous": ("dcg_score", ([1.5, 0, 2], [0.3, 0.2, 0.1]), {}),
    "1-d binary dcg": ("dcg_score", ([1, 0, 1], [0.3, 0.2, 0.1]), {}),
    # item 15
    "nan score 1-d": ("ndcg_score", ([1, 0, 1], [np.nan, 0.2, 0.1]), {}),
    "inf score 1-d": ("ndcg_score", ([1, 0, 1], [np.inf, 0.2, 0.1]), {}),
    "nan score": ("ndcg_score", (YT, [[np.nan, 0.2, 0.1], [1, 2, 3]]), {}),
    "inf score": ("dcg_score", (YT, [[0.3, np.inf, 0.1], [1, 2, 3]]), {}),
    "-inf score": ("ndcg_score", (YT, [[0.3, -np.inf, 0.1], [1, 2, 3]]), {}),
    "inf float32 score": ("ndcg_score", (YT, np.array([[0.3, np.inf, 0.1], [1, 2, 3]], dtype=np.float32)), {}),
    "nan label": ("ndcg_score", ([[np.nan, 0, 1], [0, 1, 1]], YS), {}),
    "nan and inf": ("dcg_score", ([[np.inf, 0, np.nan], [0, 1, 1]], YS), {}),
    # item 8 / 20: k
    "k=0": ("ndcg_score", (YT, YS), {"k": 0}),
    "k=0 dcg": ("dcg_score", (YT, YS), {"k": 0}),
    "k=-1": ("ndcg_score", (YT, YS), {"k": -1}),
    "k=1.5": ("ndcg_score", (YT, YS), {"k": 1.5}),
    "k=2.0": ("dcg_score", (YT, YS), {"k": 2.0}),
    "k=False": ("dcg_score", (YT, YS), {"k": False}),
    "k='3'": ("ndcg_score", (YT, YS), {"k": "3"}),
    # item 16: strings
    "string labels": ("ndcg_score", ([["a", "b", "c"]], [[1, 0.2, 0.1]]), {}),
    "numeric strings": ("ndcg_score", ([["1", "0", "2"]], [[1, 0.2, 0.1]]), {}),
    "string scores": ("dcg_score", ([[1, 0, 2]], [["a", "b", "c"]]), {}),
    "object strings": ("ndcg_score", (np.array([["a", 1, 2]], dtype=object), [[1, 0.2, 0.1]]), {}),
    # item 17: sample_weight and shapes
    "weight length": ("ndcg_score", (YT, YS), {"sample_weight": [1, 2, 3]}),
    "weight length dcg": ("dcg_score", (YT, YS), {"sample_weight": [1]}),
    "weight 2-d": ("ndcg_score", (YT, YS), {"sample_weight": [[1, 2]]}),
    "weight column": ("ndcg_score", (YT, YS), {"sample_weight": np.array([[1], [2]])}),
    "all-zero weights": ("ndcg_score", (YT, YS), {"sample_weight": [0, 0]}),
    "all-zero weights dcg": ("dcg_score", (YT, YS), {"sample_weight": np.zeros(2)}),
    "weights sum to zero": ("dcg_score", (YT, YS), {"sample_weight": [-1, 1]}),
    "weight string": ("ndcg_score", (YT, YS), {"sample_weight": "ab"}),
    "weight scalar": ("dcg_score", (YT, YS), {"sample_weight": 3}),
    "rows differ": ("ndcg_score", ([[1, 0, 1]], YS), {}),
    "ragged": ("ndcg_score", ([[1, 0, 1], [1, 0]], [[1, 0.2, 0.1], [1, 2]]), {}),
    # item 20: other parameters and array checks
    "ignore_ties=1": ("ndcg_score", (YT, YS), {"ignore_ties": 1}),
    "ignore_ties='yes'": ("dcg_score", (YT, YS), {"ignore_ties": "yes"}),
    "log_base=0": ("dcg_score", (YT, YS), {"log_base": 0}),
    "log_base=-2": ("dcg_score", (YT, YS), {"log_base": -2}),
    "log_base=inf": ("dcg_score", (YT, YS), {"log_base": np.inf}),
    "log_base=nan": ("dcg_score", (YT, YS), {"log_base": np.nan}),
    "log_base='2'": ("dcg_score", (YT, YS), {"log_base": "2"}),
    "scalar y_true": ("ndcg_score", (1, YS), {}),
    "None y_score": ("dcg_score", (YT, None), {}),
    "string y_true": ("dcg_score", ("abc", YS), {}),
    "0-d array": ("ndcg_score", (np.array(1.0), np.array(2.0)), {}),
    "3-d": ("ndcg_score", (np.ones((2, 2, 2)), np.ones((2, 2, 2))), {}),
    "no rows": ("ndcg_score", (np.zeros((0, 3)), np.zeros((0, 3))), {}),
    "no rows 1-d": ("dcg_score", (np.zeros(0), np.zeros(0)), {}),
    "no columns": ("dcg_score", (np.zeros((2, 0)), np.zeros((2, 0))), {}),
    "complex": ("ndcg_score", (np.array([[1 + 1j, 0, 1]]), [[1, 0.2, 0.1]]), {}),
    "matrix": ("dcg_score", (YT_MATRIX, YS), {}),
    "boolean scores": ("ndcg_score", (YT, np.array([[True, False, True], [False, True, True]])), {}),
}


@pytest.mark.parametrize("case", list(ERROR_CASES), ids=list(ERROR_CASES))
def test_same_errors_as_sklearn(case):
    name, args, kwargs = ERROR_CASES[case]
    assert_same_error(name, *args, **kwargs)


def test_documented_error_messages():  # items 12-16, wording pinned
    neg = assert_same_error("ndcg_score", [[-1, 2, 0]], [[3, 2, 1]])
    assert str(neg) == "ndcg_score should not be used on negative y_true values."
    one = assert_same_error("ndcg_score", [[1], [2]], [[1], [2]])
    assert str(one) == "Computing NDCG is only meaningful when there is more than 1 document. Got 1 instead."
    flat = assert_same_error("ndcg_score", [1, 0, 1], [0.3, 0.2, 0.1])
    assert str(flat) == (
        "Only ('multilabel-indicator', 'continuous-multioutput', 'multiclass-multioutput') formats are "
        "supported. Got binary instead"
    )
    k0 = assert_same_error("dcg_score", YT, YS, k=0)
    assert isinstance(k0, ranklens.InvalidParameterError) and isinstance(k0, ValueError)
    assert "'k' parameter" in str(k0)
    bad = assert_same_error("ndcg_score", YT, [[np.nan, 0.2, 0.1], [1, 2, 3]])
    assert str(bad) == "Input contains NaN."


def test_dcg_accepts_negative_labels():  # item 12
    assert_same("dcg_score", [[-1, 2, 0]], [[3, 2, 1]])


def test_accepted_oddities_match():
    """Values scikit-learn accepts at the edge of its parameter constraints."""
    assert_same("ndcg_score", YT, YS, k=True)  # bool is an Integral: k=1
    assert_same("ndcg_score", YT, YS, k=np.int64(2))
    assert_same("dcg_score", YT, YS, log_base=True)  # log base 1: every discount is 0
    assert_same("dcg_score", YT, YS, log_base=np.int64(3))
    assert_same("ndcg_score", YT, YS, ignore_ties=np.bool_(True))
    assert_same("dcg_score", YT, np.array([[True, False, True], [False, True, True]]), ignore_ties=True)
