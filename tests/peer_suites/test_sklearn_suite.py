"""scikit-learn's own NDCG / DCG test cases, run through ranklens.

Ported from scikit-learn 1.9 ``sklearn/metrics/tests/test_ranking.py`` (test_dcg_score, test_dcg_ties,
test_ndcg_ignore_ties_with_k, test_ndcg_negative_ndarray_error, test_ndcg_invariant,
test_ndcg_toy_examples, test_ndcg_error_single_document, test_ndcg_score) and the checks of
``sklearn/metrics/tests/test_common.py`` that apply to ``ndcg_score``/``dcg_score``
(test_sample_order_invariance_multilabel_and_multioutput, test_multilabel_sample_weight_invariance via
check_sample_weight_invariance, test_continuous_multilabel_multioutput_permutations_invariance,
METRIC_UNDEFINED_BINARY). The inputs are scikit-learn's; each expected value is either the literal
formula of the scikit-learn test or computed by scikit-learn itself in the test. ranklens runs the same
input twice: through its drop-ins (``ranklens.sklearn``) and through ``ranklens.evaluate(...,
convention="sklearn")``, per row and on average.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pytest

import ranklens
from ranklens import sklearn as rs

sk_metrics = pytest.importorskip("sklearn.metrics")
from sklearn.datasets import make_multilabel_classification  # noqa: E402
from sklearn.utils import shuffle  # noqa: E402


def _per_row(y_true, y_score, measure: str, **opts) -> np.ndarray:
    res = ranklens.evaluate(np.asarray(y_true), np.asarray(y_score), [measure], convention="sklearn", **opts)
    per = res.per_query_dict(measure)
    return np.array([per[i] for i in range(len(y_true))])


def _sk_rows(fn, y_true, y_score, **kw) -> np.ndarray:
    """scikit-learn's value for each row alone (its public function on a one-row matrix)."""
    return np.array([fn([t], [s], **kw) for t, s in zip(np.asarray(y_true), np.asarray(y_score))])


def _cases():
    _, y_true = make_multilabel_classification(random_state=0, n_classes=10)
    yield "multilabel", y_true, -y_true + 1
    y_true, y_score = np.random.RandomState(0).random_sample((2, 100, 10))
    yield "uniform", y_true, y_score


@pytest.mark.parametrize("name", ["multilabel", "uniform"])
def test_dcg_score(name):
    # test_dcg_score / _test_dcg_score_for
    y_true, y_score = next((t, s) for n, t, s in _cases() if n == name)
    discount = np.log2(np.arange(y_true.shape[1]) + 2)
    ideal = _per_row(y_true, y_true, "dcg")
    score = _per_row(y_true, y_score, "dcg")
    assert (score <= ideal + 1e-12).all()
    assert (_per_row(y_true, y_true, "dcg@5") <= ideal + 1e-12).all()
    assert ideal == pytest.approx((np.sort(y_true)[:, ::-1] / discount).sum(axis=1))
    np.testing.assert_allclose(score, _sk_rows(sk_metrics.dcg_score, y_true, y_score), rtol=1e-12)
    assert rs.dcg_score(y_true, y_score) == pytest.approx(sk_metrics.dcg_score(y_true, y_score), rel=1e-12)
    assert rs.dcg_score(y_true, y_score, k=5) == pytest.approx(sk_metrics.dcg_score(y_true, y_score, k=5), rel=1e-12)


@pytest.mark.parametrize("name", ["multilabel", "uniform"])
def test_ndcg_score(name):
    # test_ndcg_score / _test_ndcg_score_for
    y_true, y_score = next((t, s) for n, t, s in _cases() if n == name)
    ideal = _per_row(y_true, y_true, "ndcg")
    score = _per_row(y_true, y_score, "ndcg")
    assert (score <= ideal + 1e-12).all()
    all_zero = (y_true == 0).all(axis=1)
    assert ideal[~all_zero] == pytest.approx(np.ones((~all_zero).sum()))
    assert ideal[all_zero] == pytest.approx(np.zeros(all_zero.sum()))
    dcg = _per_row(y_true, y_score, "dcg")
    idcg = _per_row(y_true, y_true, "dcg")
    assert score[~all_zero] == pytest.approx(dcg[~all_zero] / idcg[~all_zero])
    assert score[all_zero] == pytest.approx(np.zeros(all_zero.sum()))
    np.testing.assert_allclose(score, _sk_rows(sk_metrics.ndcg_score, y_true, y_score), rtol=1e-12)
    for k in (None, 1, 3, 5):
        assert rs.ndcg_score(y_true, y_score, k=k) == pytest.approx(
            sk_metrics.ndcg_score(y_true, y_score, k=k), rel=1e-12)


def test_dcg_ties():
    y_true = np.asarray([np.arange(5)])
    y_score = np.zeros(y_true.shape)
    discounts = 1 / np.log2(np.arange(2, 7))
    assert _per_row(y_true, y_score, "dcg") == pytest.approx([discounts.sum() * y_true.mean()])
    assert rs.dcg_score(y_true, y_score, ignore_ties=True) == pytest.approx((discounts * y_true[:, ::-1]).sum())
    y_score[0, 3:] = 1
    assert rs.dcg_score(y_true, y_score, ignore_ties=True) == pytest.approx((discounts * y_true[:, ::-1]).sum())
    expected = discounts[:2].sum() * y_true[0, 3:].mean() + discounts[2:].sum() * y_true[0, :3].mean()
    assert _per_row(y_true, y_score, "dcg") == pytest.approx([expected])
    assert rs.dcg_score(y_true, y_score) == pytest.approx(expected)


def test_ndcg_ignore_ties_with_k():
    a = np.arange(12).reshape((2, 6))
    assert rs.ndcg_score(a, a, k=3, ignore_ties=True) == pytest.approx(
        sk_metrics.ndcg_score(a, a, k=3, ignore_ties=True), rel=1e-12)


def test_ndcg_negative_ndarray_error():
    y_true = np.array([[-0.89, -0.53, -0.47, 0.39, 0.56]])
    y_score = np.array([[0.07, 0.31, 0.75, 0.33, 0.27]])
    with pytest.raises(ValueError, match="ndcg_score should not be used on negative y_true values"):
        sk_metrics.ndcg_score(y_true, y_score)
    with pytest.raises(ValueError, match="ndcg_score should not be used on negative y_true values"):
        rs.ndcg_score(y_true, y_score)


def test_ndcg_invariant():
    y_true = np.arange(70).reshape(7, 10)
    y_score = y_true + np.random.RandomState(0).uniform(-0.2, 0.2, size=y_true.shape)
    assert rs.ndcg_score(y_true, y_score) == pytest.approx(rs.ndcg_score(y_true, y_score, ignore_ties=True))
    assert rs.ndcg_score(y_true, y_score) == pytest.approx(1.0)
    assert _per_row(y_true, y_score, "ndcg") == pytest.approx(np.ones(7))
    y_score += 1000
    assert rs.ndcg_score(y_true, y_score) == pytest.approx(1.0)


@pytest.mark.parametrize("ignore_ties", [True, False])
def test_ndcg_toy_examples(ignore_ties):
    y_true = 3 * np.eye(7)[:5]
    y_score = np.tile(np.arange(6, -1, -1), (5, 1))
    y_score_noisy = y_score + np.random.RandomState(0).uniform(-0.2, 0.2, size=y_score.shape)
    ties = {"ties": "input"} if ignore_ties else {}
    assert _per_row(y_true, y_score, "dcg", **ties) == pytest.approx(3 / np.log2(np.arange(2, 7)))
    assert _per_row(y_true, y_score_noisy, "dcg", **ties) == pytest.approx(3 / np.log2(np.arange(2, 7)))
    assert _per_row(y_true, y_score, "ndcg", **ties) == pytest.approx(1 / np.log2(np.arange(2, 7)))
    assert rs.dcg_score(y_true, y_score, log_base=10, ignore_ties=ignore_ties) == pytest.approx(
        (3 / np.log10(np.arange(2, 7))).mean())
    assert rs.ndcg_score(y_true, y_score, ignore_ties=ignore_ties) == pytest.approx(
        (1 / np.log2(np.arange(2, 7))).mean())
    assert rs.dcg_score(y_true, y_score, ignore_ties=ignore_ties) == pytest.approx(
        (3 / np.log2(np.arange(2, 7))).mean())
    y_true = 3 * np.ones((5, 7))
    expected_dcg_score = (3 / np.log2(np.arange(2, 9))).sum()
    assert _per_row(y_true, y_score, "dcg", **ties) == pytest.approx(expected_dcg_score * np.ones(5))
    assert _per_row(y_true, y_score, "ndcg", **ties) == pytest.approx(np.ones(5))
    assert rs.dcg_score(y_true, y_score, ignore_ties=ignore_ties) == pytest.approx(expected_dcg_score)
    assert rs.ndcg_score(y_true, y_score, ignore_ties=ignore_ties) == pytest.approx(1.0)


def test_ndcg_error_single_document():
    msg = "Computing NDCG is only meaningful when there is more than 1 document. Got 1 instead."
    with pytest.raises(ValueError, match=msg):
        sk_metrics.ndcg_score([[1]], [[1]])
    with pytest.raises(ValueError, match=msg):
        rs.ndcg_score([[1]], [[1]])


# -- test_common.py ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["ndcg_score", "dcg_score"])
def test_sample_order_invariance(name):
    rng = np.random.RandomState(0)
    y_true = rng.randint(0, 2, size=(20, 25))
    rng.randint(0, 2, size=(20, 25))  # y_pred, drawn as scikit-learn draws it: the same y_score follows
    y_score = rng.uniform(size=y_true.shape)
    y_score /= y_score.sum(axis=1, keepdims=True)
    t2, s2 = shuffle(y_true, y_score, random_state=0)
    ours, theirs = getattr(rs, name), getattr(sk_metrics, name)
    assert ours(y_true, y_score) == pytest.approx(theirs(y_true, y_score), rel=1e-12)
    np.testing.assert_allclose(ours(y_true, y_score), ours(t2, s2), rtol=1e-12)


def _weight_data():
    rng = np.random.RandomState(0)
    _, ya = make_multilabel_classification(n_features=1, n_classes=10, random_state=0, n_samples=50,
                                           allow_unlabeled=False)
    _, yb = make_multilabel_classification(n_features=1, n_classes=10, random_state=1, n_samples=50,
                                           allow_unlabeled=False)
    y_true = np.vstack([ya, yb])
    y_score = rng.uniform(size=y_true.shape)
    y_score /= y_score.sum(axis=1, keepdims=True)
    return y_true, y_score


@pytest.mark.parametrize("name", ["ndcg_score", "dcg_score"])
def test_sample_weight_invariance(name):
    # check_sample_weight_invariance(name, metric, y_true, y_score)
    ours, theirs = getattr(rs, name), getattr(sk_metrics, name)
    y1, y2 = _weight_data()
    w = np.random.RandomState(0).randint(1, 10, size=len(y1))
    unweighted = ours(y1, y2)
    assert unweighted == pytest.approx(theirs(y1, y2), rel=1e-12)
    assert ours(y1, y2, sample_weight=np.ones(len(y1))) == pytest.approx(unweighted, rel=1e-12)
    weighted = ours(y1, y2, sample_weight=w)
    assert weighted == pytest.approx(theirs(y1, y2, sample_weight=w), rel=1e-12)
    assert weighted != pytest.approx(unweighted, rel=1e-12)
    assert ours(y1, y2, sample_weight=w.tolist()) == pytest.approx(weighted, rel=1e-12)
    assert ours(np.repeat(y1, w, axis=0), np.repeat(y2, w, axis=0)) == pytest.approx(weighted, rel=1e-12)
    zeroed = w.copy()
    zeroed[::2] = 0
    assert ours(y1, y2, sample_weight=zeroed) == pytest.approx(ours(y1[1::2], y2[1::2], sample_weight=w[1::2]),
                                                               rel=1e-12)
    for scaling in (2, 0.3):
        assert ours(y1, y2, sample_weight=w * scaling) == pytest.approx(weighted, rel=1e-12)
    msg = r"Found input variables with inconsistent numbers of samples: \[100, 100, 200\]"
    with pytest.raises(ValueError, match=msg):
        theirs(y1, y2, sample_weight=np.hstack([w, w]))
    with pytest.raises(ValueError):
        ours(y1, y2, sample_weight=np.hstack([w, w]))


@pytest.mark.parametrize("name", ["ndcg_score", "dcg_score"])
def test_permutations_invariance(name):
    rng = np.random.RandomState(0)
    y_true = rng.randint(0, 2, size=(20, 4))
    y_score = rng.uniform(size=y_true.shape)
    y_score /= y_score.sum(axis=1, keepdims=True)
    y_true[y_true.sum(1) == 4, 0] = 0
    y_true[y_true.sum(1) == 0, 0] = 1
    ours, theirs = getattr(rs, name), getattr(sk_metrics, name)
    score = ours(y_true, y_score)
    assert score == pytest.approx(theirs(y_true, y_score), rel=1e-12)
    for perm in permutations(range(4), 4):
        assert ours(y_true[:, perm], y_score[:, perm]) == pytest.approx(score, abs=1e-7)


@pytest.mark.parametrize("name", ["ndcg_score", "dcg_score"])
@pytest.mark.parametrize("y_true, y_score", [
    ([0, 1, 1, 0], [0.1, 0.8, 0.7, 0.2]),  # METRIC_UNDEFINED_BINARY: a binary vector is refused
    ([[0, 1], [1, 0]], [[np.nan, 1.0], [0.2, 0.3]]),  # NaN in y_score
    ([[0, 1], [1, 0]], [[np.inf, 1.0], [0.2, 0.3]]),  # infinity in y_score
    ([[0, 1]], [[0.1, 0.2], [0.3, 0.4]]),  # shapes differ
])
def test_refused_like_sklearn(name, y_true, y_score):
    with pytest.raises(ValueError):
        getattr(sk_metrics, name)(y_true, y_score)
    with pytest.raises(ValueError):
        getattr(rs, name)(y_true, y_score)
