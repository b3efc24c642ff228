"""Drop-in replacements for scikit-learn's ``ndcg_score`` and ``dcg_score``; a scorer for grouped data.

The public face of this module is :mod:`ranklens.sklearn`.
"""

from __future__ import annotations

import math
import sys
from functools import lru_cache
from numbers import Integral, Real
from typing import Any

import numpy as np

from .._base.renamed import renamed_keywords
from .._core.plan import Plan, make_plan, run_plan
from .._core.problem import matrix_problem
from .._defs.measures import MAX_CUTOFF
from .._defs.presets import get_convention
from ..errors import InvalidParameterError

__all__ = ["dcg_score", "make_ranking_scorer", "ndcg_score"]

_SUPPORTED = ("multilabel-indicator", "continuous-multioutput", "multiclass-multioutput")


def _param_error(func: str, name: str, constraint: str, value: Any) -> InvalidParameterError:
    return InvalidParameterError(f"The {name!r} parameter of {func} must be {constraint}. Got {value!r} instead.")


def _is_sparse(x: Any) -> bool:
    """A SciPy sparse matrix or array (scipy is imported already if ``x`` is one)."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and bool(sparse.issparse(x))


def _array_like(x: Any) -> bool:
    # scikit-learn's "array-like": has __len__, shape or __array__, and is neither a scalar (str is a
    # scalar) nor a SciPy sparse matrix (its InvalidParameterError, a ValueError and a TypeError)
    return ((hasattr(x, "__len__") or hasattr(x, "shape") or hasattr(x, "__array__")) and not np.isscalar(x)
            and not _is_sparse(x))


def _check_params(func: str, params: dict[str, Any]) -> None:
    """Validate parameters in signature order, with scikit-learn's messages."""
    for name, value in params.items():
        if name in ("y_true", "y_score"):
            if not _array_like(value):
                raise _param_error(func, name, "an array-like", value)
        elif name == "k":
            if value is not None and not (isinstance(value, Integral) and int(value) >= 1):
                raise _param_error(func, name, "an int in the range [1, inf) or None", value)
        elif name == "log_base":
            if not (isinstance(value, Real) and not math.isnan(value) and 0 < float(value) < math.inf):
                raise _param_error(func, name, "a float in the range (0.0, inf)", value)
        elif name == "sample_weight":
            if value is not None and not _array_like(value):
                raise _param_error(func, name, "an array-like or None", value)
        elif name == "ignore_ties":
            if not isinstance(value, (bool, np.bool_)):
                raise _param_error(func, name, "an instance of 'bool' or an instance of 'numpy.bool'", value)


def _check_array(x: Any) -> np.ndarray:
    """``sklearn.utils.check_array(x, ensure_2d=False)``: same checks, same order, same messages."""
    if isinstance(x, np.matrix):
        raise TypeError(
            "np.matrix is not supported. Please convert to a numpy array with np.asarray. For more information "
            "see: https://numpy.org/doc/stable/reference/generated/numpy.matrix.html"
        )
    dtype_orig = getattr(x, "dtype", None)
    if not hasattr(dtype_orig, "kind"):
        dtype_orig = None
    dtypes = getattr(x, "dtypes", None)  # a DataFrame
    if dtype_orig is None and dtypes is not None:
        try:
            if any(getattr(d, "kind", "O") == "O" for d in dtypes):
                dtype_orig = np.dtype(object)
        except TypeError:
            pass
    if dtype_orig is not None and getattr(dtype_orig, "kind", None) == "O":
        a = np.asarray(x, dtype=np.float64)  # numpy's own error for text that is not a number
    else:
        a = np.asarray(x)  # numpy's own error for ragged nested lists
    if a.dtype.kind == "c":
        raise ValueError(f"Complex data not supported\n{a}\n")
    if a.dtype.kind in "USV":
        raise ValueError(
            "dtype='numeric' is not compatible with arrays of bytes/strings."
            "Convert your data to numeric values explicitly instead."
        )
    if a.ndim >= 3:
        raise ValueError(f"Found array with dim {a.ndim}, while dim <= 2 is required.")
    if a.dtype.kind == "O" and a.size and _object_nan(a):
        raise ValueError("Input contains NaN")
    if a.dtype.kind == "f" and a.size:
        if np.isnan(a).any():
            raise ValueError("Input contains NaN.")
        if np.isinf(a).any():
            raise ValueError(f"Input contains infinity or a value too large for {a.dtype!r}.")
    n = _num_samples(a)
    if n < 1:
        raise ValueError(f"Found array with {n} sample(s) (shape={a.shape}) while a minimum of 1 is required.")
    if a.ndim == 2 and a.shape[1] < 1:
        raise ValueError(
            f"Found array with {a.shape[1]} feature(s) (shape={a.shape}) while a minimum of 1 is required."
        )
    return a


def _object_nan(a: np.ndarray) -> bool:
    """scikit-learn's NaN test of an object array (``X != X``)."""
    try:
        return bool(np.asarray(a != a, dtype=bool).any())
    except (TypeError, ValueError):
        return False


def _num_samples(x: Any) -> int:
    shape = getattr(x, "shape", None)
    if shape is not None:
        if len(shape) == 0:
            raise TypeError(
                f"Input should have at least 1 dimension i.e. satisfy `len(x.shape) > 0`, got scalar `{x!r}` instead."
            )
        if isinstance(shape[0], Integral):
            return int(shape[0])
    try:
        return len(x)
    except TypeError:
        raise TypeError(f"Expected sequence or array-like, got {type(x)}") from None


def _type_of_target(y: np.ndarray) -> str:
    suffix = "-multioutput" if y.ndim == 2 and y.shape[1] > 1 else ""
    if y.ndim == 2 and y.shape[1] > 1:
        labels = np.unique(y)
        with np.errstate(invalid="ignore"):
            if len(labels) < 3 and (y.dtype.kind in "biu" or (labels == labels.astype(int)).all()):
                return "multilabel-indicator"
    if y.dtype.kind == "O" or y.ndim not in (1, 2):
        return "unknown"
    if y.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            if (y != y.astype(int)).any():
                return "continuous" + suffix
    if len(np.unique(y)) > 2 or (y.ndim == 2 and y.shape[1] > 1):
        return "multiclass" + suffix
    return "binary"


def _prepare(y_true: Any, y_score: Any, sample_weight: Any) -> tuple[np.ndarray, np.ndarray]:
    yt = _check_array(y_true)
    ys = _check_array(y_score)
    lengths = [_num_samples(yt), _num_samples(ys)]
    if sample_weight is not None:
        lengths.append(_num_samples(sample_weight))
    if len(set(lengths)) > 1:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: {lengths}")
    return yt, ys


def _check_target(yt: np.ndarray) -> None:
    kind = _type_of_target(yt)
    if kind not in _SUPPORTED:
        raise ValueError(f"Only {_SUPPORTED} formats are supported. Got {kind} instead")


@lru_cache(maxsize=64)
def _sklearn_plan(family: str, k: int | None, ignore_ties: bool, log_base: float) -> Plan:
    """scikit-learn's DCG / NDCG as a plan: the "sklearn" preset with the call's discount and tie rule
    (negative labels kept: ``dcg_score`` takes them, ``ndcg_score`` refuses them first). Cached: a
    training loop calls the drop-ins with the same parameters again and again."""
    conv = get_convention("sklearn").replace(log_base=float(log_base), ties="input" if ignore_ties else "average",
                                             negative_labels="keep")
    return make_plan(conv, f"{family}@{int(k)}" if k is not None else family)


def _per_row(yt: np.ndarray, ys: np.ndarray, k: int | None, ignore_ties: bool, family: str,
             log_base: float) -> np.ndarray:
    if yt.shape != ys.shape or ys.dtype.kind in "bO" or yt.dtype.kind == "O":
        _sklearn_failure(yt, ys, k, ignore_ties, log_base)  # scikit-learn's own exception, if it raises one
        if yt.shape != ys.shape:  # a shape scikit-learn would compute with: refused
            raise ValueError(f"y_true and y_score have different shapes: {yt.shape} and {ys.shape}.")
    # numpy sorts small integers and booleans with a stable radix sort, floats with introsort: the
    # order of ignore_ties is taken on the scores as given, as scikit-learn takes it
    order = np.argsort(ys)[:, ::-1] if ignore_ties else np.empty((0, 0), dtype=np.intp)
    yt = yt.astype(np.float64, copy=False)
    ys = ys.astype(np.float64, copy=False)
    n_q, n = yt.shape
    if math.log(log_base) == 0.0:
        # log_base 1: every discount is 1 / (log(i + 1) / 0) = 0, as in scikit-learn
        return np.zeros(n_q)
    if ignore_ties:
        # scikit-learn: ranking = np.argsort(y_score)[:, ::-1] (numpy's default sort); rows are given in
        # that order with strictly decreasing scores, so the kernel keeps it
        label = np.take_along_axis(yt, order, axis=1)
        score = -np.tile(np.arange(n, dtype=np.float64), (n_q, 1))
    else:
        label, score = yt, ys
    if k is not None and k > MAX_CUTOFF:
        k = n  # any cutoff past the list is the whole list, as in scikit-learn
    plan = _sklearn_plan(family, None if k is None else int(k), ignore_ties, float(log_base))
    problem = matrix_problem(np.ascontiguousarray(label), np.ascontiguousarray(score), plan.convention)
    values, _ = run_plan(plan, problem)
    return values[:, 0]


def _sklearn_failure(yt: np.ndarray, ys: np.ndarray, k: int | None, ignore_ties: bool, log_base: float) -> None:
    """scikit-learn's arithmetic (``_dcg_sample_scores``) on inputs its validation lets through but ours
    does not compute as they are (scores of other shapes, booleans, Python objects), so that the exception
    raised is scikit-learn's own (type and message); returns where scikit-learn computes a number."""
    discount = 1 / (np.log(np.arange(yt.shape[1]) + 2) / np.log(log_base))
    if k is not None:
        discount[k:] = 0
    if ignore_ties:
        ranking = np.argsort(ys)[:, ::-1]
        discount.dot(yt[np.arange(ranking.shape[0])[:, np.newaxis], ranking].T)
        return
    discount_cumsum = np.cumsum(discount)
    for y_t, y_s in zip(yt, ys):  # pragma: no branch - only on the error path, row by row as scikit-learn
        _, inv, counts = np.unique(-y_s, return_inverse=True, return_counts=True)
        ranked = np.zeros(len(counts))
        np.add.at(ranked, inv, y_t)
        groups = np.cumsum(counts) - 1
        sums = np.empty(len(counts))
        sums[0] = discount_cumsum[groups[0]]
        sums[1:] = np.diff(discount_cumsum[groups])
        float((ranked / counts * sums).sum())


def dcg_score(
    y_true: Any,
    y_score: Any,
    *,
    k: int | None = None,
    log_base: float = 2,
    sample_weight: Any = None,
    ignore_ties: bool = False,
) -> float:
    """Compute Discounted Cumulative Gain, exactly as ``sklearn.metrics.dcg_score``.

    Sum the true scores ranked in the order induced by the predicted scores,
    after applying a logarithmic discount.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_labels)
        True scores of entities to be ranked (negative values allowed).
    y_score : array-like of shape (n_samples, n_labels)
        Target scores.
    k : int, default=None
        Only consider the highest k scores in the ranking. If None, use all outputs.
    log_base : float, default=2
        Base of the logarithm used for the discount.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights. If None, all samples are given the same weight.
    ignore_ties : bool, default=False
        Assume that there are no ties in y_score (which is likely to be the
        case if y_score is continuous) for efficiency gains.

    Returns
    -------
    discounted_cumulative_gain : float
        The averaged sample DCG scores.

    See Also
    --------
    ndcg_score : DCG divided by the ideal DCG.

    Examples
    --------
    >>> import numpy as np
    >>> from ranklens import dcg_score
    >>> true_relevance = np.asarray([[10, 0, 0, 1, 5]])
    >>> scores = np.asarray([[.1, .2, .3, 4, 70]])
    >>> round(dcg_score(true_relevance, scores), 4)
    9.4995
    >>> round(dcg_score(true_relevance, scores, k=2), 4)
    5.6309
    >>> scores = np.asarray([[1, 0, 0, 0, 1]])
    >>> dcg_score(true_relevance, scores, k=1)
    7.5
    >>> dcg_score(true_relevance, scores, k=1, ignore_ties=True)
    5.0
    """
    _check_params("dcg_score", {"y_true": y_true, "y_score": y_score, "k": k, "log_base": log_base,
                                "sample_weight": sample_weight, "ignore_ties": ignore_ties})
    yt, ys = _prepare(y_true, y_score, sample_weight)
    _check_target(yt)
    per_row = _per_row(yt, ys, k, bool(ignore_ties), "dcg", log_base)
    return float(np.average(per_row, weights=sample_weight))


def ndcg_score(
    y_true: Any,
    y_score: Any,
    *,
    k: int | None = None,
    sample_weight: Any = None,
    ignore_ties: bool = False,
) -> float:
    """Compute Normalized Discounted Cumulative Gain, exactly as ``sklearn.metrics.ndcg_score``.

    Sum the true scores ranked in the order induced by the predicted scores,
    after applying a logarithmic discount. Then divide by the best possible
    score (Ideal DCG, obtained for a perfect ranking) to obtain a score
    between 0 and 1. Rows whose labels are all zero score 0. Ties in
    ``y_score`` are averaged (McSherry & Najork, 2008).

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_labels)
        True scores of entities to be ranked. Must be non-negative.
    y_score : array-like of shape (n_samples, n_labels)
        Target scores.
    k : int, default=None
        Only consider the highest k scores in the ranking. If None, use all outputs.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights. If None, all samples are given the same weight.
    ignore_ties : bool, default=False
        Assume that there are no ties in y_score for efficiency gains.

    Returns
    -------
    normalized_discounted_cumulative_gain : float in [0., 1.]
        The averaged NDCG scores for all samples.

    See Also
    --------
    dcg_score : Discounted Cumulative Gain (not normalized).
    ranklens.evaluate : every measure and convention, on any input.

    References
    ----------
    Järvelin, K., & Kekäläinen, J. (2002). Cumulated gain-based evaluation of IR techniques.
    ACM TOIS 20(4), 422-446.

    McSherry, F., & Najork, M. (2008). Computing information retrieval performance measures
    efficiently in the presence of tied scores. ECIR 2008, 414-421.

    Examples
    --------
    >>> import numpy as np
    >>> from ranklens import ndcg_score
    >>> true_relevance = np.asarray([[10, 0, 0, 1, 5]])
    >>> scores = np.asarray([[.1, .2, .3, 4, 70]])
    >>> round(ndcg_score(true_relevance, scores), 4)
    0.6957
    >>> scores = np.asarray([[.05, 1.1, 1., .5, .0]])
    >>> round(ndcg_score(true_relevance, scores), 4)
    0.4937
    >>> round(ndcg_score(true_relevance, scores, k=4), 4)
    0.352
    >>> ndcg_score(true_relevance, true_relevance, k=4)
    1.0
    >>> scores = np.asarray([[1, 0, 0, 0, 1]])
    >>> ndcg_score(true_relevance, scores, k=1)
    0.75
    >>> ndcg_score(true_relevance, scores, k=1, ignore_ties=True)
    0.5
    """
    _check_params("ndcg_score", {"y_true": y_true, "y_score": y_score, "k": k, "sample_weight": sample_weight,
                                 "ignore_ties": ignore_ties})
    yt, ys = _prepare(y_true, y_score, sample_weight)
    if yt.size and yt.min() < 0:
        raise ValueError("ndcg_score should not be used on negative y_true values.")
    if yt.ndim > 1 and yt.shape[1] <= 1:
        raise ValueError(
            "Computing NDCG is only meaningful when there is more than 1 document. "
            f"Got {yt.shape[1]} instead."
        )
    _check_target(yt)
    per_row = _per_row(yt, ys, k, bool(ignore_ties), "ndcg", 2.0)
    return float(np.average(per_row, weights=sample_weight))


class _GroupedScore:
    """The score function of :func:`make_ranking_scorer` (a class, so that the scorer pickles)."""

    def __init__(self, measure: Any, convention: Any) -> None:
        self.measure = measure
        self.convention = convention
        self.__name__ = f"ranklens_{measure.key}"

    def __call__(self, y_true: Any, y_pred: Any, groups: Any = None) -> float:
        from .grouped import evaluate_grouped

        if groups is None:
            raise InvalidParameterError(
                "make_ranking_scorer: the scorer got no `groups` (one query id per row). Turn on scikit-learn's "
                "metadata routing (sklearn.set_config(enable_metadata_routing=True)) and pass `groups=` to fit "
                "(GridSearchCV(...).fit(X, y, groups=qid)), or call scorer(estimator, X, y, groups=qid)."
            )
        res = evaluate_grouped(y_true, y_pred, [self.measure], qid=groups, convention=self.convention,
                               where="the scored rows")
        return float(res.aggregate[self.measure.key])


@renamed_keywords(metric="measure")
def make_ranking_scorer(measure: Any = "ndcg@10", convention: Any = None, *, response_method: str = "predict",
                        **overrides: Any) -> Any:
    """A scikit-learn scorer that evaluates a ranking measure per query (rows grouped by ``groups``).

    The scorer requests ``groups`` through scikit-learn's metadata routing, the same ``groups`` that
    ``GroupKFold`` splits on, so a cross-validated search keeps queries whole and scores each fold
    by query. Turn routing on with ``sklearn.set_config(enable_metadata_routing=True)``.

    Parameters
    ----------
    measure : str, default="ndcg@10"
        One measure, as for :func:`ranklens.evaluate`.
    convention : str or Convention, optional
        As for :func:`ranklens.evaluate` (default ``"ranklens"``; ``"sklearn"`` is ``ndcg_score`` per query).
    response_method : str, default="predict"
        The estimator's method giving the scores (``"decision_function"``, ...).
    **overrides
        Convention field overrides.

    Returns
    -------
    scorer
        A scikit-learn scorer: ``scorer(estimator, X, y, groups=qid)``; higher is better.

    Examples
    --------
    >>> import numpy as np, sklearn
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.model_selection import GridSearchCV, GroupKFold
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3)); qid = np.repeat(np.arange(6), 10)
    >>> y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 1)
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     search = GridSearchCV(Ridge(), {"alpha": [0.1, 10.0]}, cv=GroupKFold(3),
    ...                           scoring=make_ranking_scorer("ndcg@5")).fit(X, y, groups=qid)
    >>> bool(0 < search.best_score_ <= 1)
    True
    """
    from .._base.deps import require
    from .._defs.measures import Measure
    from .._defs.presets import get_convention
    from .grouped import measure_list

    require("sklearn")
    from sklearn import config_context
    from sklearn.metrics import make_scorer

    if not isinstance(measure, (str, Measure)):
        raise InvalidParameterError(
            f"`measure` of make_ranking_scorer must be one measure such as 'ndcg@10'; got {measure!r}."
        )
    measures = measure_list(measure, where="make_ranking_scorer")
    score = _GroupedScore(measures[0], get_convention(convention, **overrides))
    scorer = make_scorer(score, response_method=response_method, greater_is_better=True)
    with config_context(enable_metadata_routing=True):  # the request is stored on the scorer; routing is the caller's
        scorer = scorer.set_score_request(groups=True)
    return scorer
