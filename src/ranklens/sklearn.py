"""Drop-in replacements for scikit-learn's ``ndcg_score`` and ``dcg_score``.

Same signature, validation, error messages, tie rule and return type (a
Python float) as scikit-learn 1.9, computed by ranklens's kernels.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np

from ._kernels.measures import DCG, NDCG, TIES_AVERAGE, TIES_NONE, compute_measures
from .errors import InvalidParameterError

__all__ = ["dcg_score", "ndcg_score"]

_SUPPORTED = ("multilabel-indicator", "continuous-multioutput", "multiclass-multioutput")


def _check_params(func: str, k: Any, sample_weight: Any, ignore_ties: Any, log_base: Any = 2) -> None:
    if k is not None and (not isinstance(k, Integral) or isinstance(k, bool) or k < 1):
        raise InvalidParameterError(
            f"The 'k' parameter of {func} must be an int in the range [1, inf) or None. Got {k!r} instead."
        )
    if not isinstance(ignore_ties, (bool, np.bool_)):
        raise InvalidParameterError(
            f"The 'ignore_ties' parameter of {func} must be an instance of 'bool' or an instance of "
            f"'numpy.bool'. Got {ignore_ties!r} instead."
        )
    if not isinstance(log_base, Real) or isinstance(log_base, bool) or not log_base > 0:
        raise InvalidParameterError(
            f"The 'log_base' parameter of {func} must be a float in the range (0.0, inf). Got {log_base!r} instead."
        )
    if sample_weight is not None and not _array_like(sample_weight):
        raise InvalidParameterError(
            f"The 'sample_weight' parameter of {func} must be an array-like or None. Got {sample_weight!r} instead."
        )


def _array_like(x: Any) -> bool:
    return hasattr(x, "__len__") or hasattr(x, "shape") or hasattr(x, "__array__")


def _check_array(x: Any, name: str, func: str) -> np.ndarray:
    if not _array_like(x) or isinstance(x, (str, bytes)):
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must be an array-like. Got {x!r} instead."
        )
    try:
        a = np.asarray(x)
    except ValueError as exc:  # ragged nested lists
        raise ValueError(f"setting an array element with a sequence. {exc}") from None
    if a.dtype.kind in "OUS":
        try:
            a = a.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"could not convert string to float: {x!r}") from None
    if a.dtype.kind not in "biuf":
        raise ValueError(f"Unsupported dtype {a.dtype} for {name}.")
    a = a.astype(np.float64, copy=False)
    if a.ndim > 2:
        raise ValueError(f"Found array with dim {a.ndim}. None expected <= 2.")
    if a.size and np.isnan(a).any():
        raise ValueError("Input contains NaN.")
    if a.size and np.isinf(a).any():
        raise ValueError("Input contains infinity or a value too large for dtype('float64').")
    return a


def _type_of_target(y: np.ndarray) -> str:
    if y.ndim == 2 and y.shape[1] > 1:
        suffix = "-multioutput"
    else:
        suffix = ""
    if y.size and (y != np.round(y)).any():
        return "continuous" + suffix
    if y.ndim == 2 and y.shape[1] > 1:
        if np.isin(y, (0, 1)).all() and len(np.unique(y)) <= 2:
            return "multilabel-indicator"
        return "multiclass-multioutput"
    return "multiclass" if len(np.unique(y)) > 2 else "binary"


def _prepare(func: str, y_true: Any, y_score: Any, sample_weight: Any) -> tuple[np.ndarray, np.ndarray, Any]:
    yt = _check_array(y_true, "y_true", func)
    ys = _check_array(y_score, "y_score", func)
    n_t = yt.shape[0] if yt.ndim else 1
    n_s = ys.shape[0] if ys.ndim else 1
    lengths = [n_t, n_s]
    if sample_weight is not None:
        sw = np.asarray(sample_weight, dtype=np.float64).reshape(-1)
        lengths.append(sw.shape[0])
    else:
        sw = None
    if len(set(lengths)) > 1:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: {lengths}")
    return yt, ys, sw


def _check_target(yt: np.ndarray) -> None:
    kind = _type_of_target(yt)
    if kind not in _SUPPORTED:
        raise ValueError(f"Only {_SUPPORTED} formats are supported. Got {kind} instead")


def _per_row(yt: np.ndarray, ys: np.ndarray, k: int | None, ignore_ties: bool, code: int, log_base: float) -> np.ndarray:
    if yt.shape != ys.shape:
        raise ValueError(f"y_true and y_score have different shapes: {yt.shape} and {ys.shape}.")
    n_q, n = yt.shape
    offsets = np.arange(n_q + 1, dtype=np.int64) * n
    if ignore_ties:
        # scikit-learn: ranking = np.argsort(y_score)[:, ::-1] (numpy's default sort)
        order = np.argsort(ys)[:, ::-1]
        ties = TIES_NONE
    else:
        order = np.argsort(-ys, axis=1, kind="stable")
        ties = TIES_AVERAGE
    gain = np.take_along_axis(yt, order, axis=1).reshape(-1)
    score = np.take_along_axis(ys, order, axis=1).reshape(-1)
    if ignore_ties:
        score = -np.tile(np.arange(n, dtype=np.float64), n_q)
    ideal = -np.sort(-yt, axis=1).reshape(-1)
    zeros = np.zeros(n_q * n)
    out = compute_measures(
        offsets, score, gain, zeros, zeros, offsets, ideal, np.zeros(n_q, np.int64),
        np.array([code], np.int64), np.array([0 if k is None else k], np.int64), ties, float(log_base),
    )
    return out[:, 0]


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
    _check_params("dcg_score", k, sample_weight, ignore_ties, log_base)
    yt, ys, sw = _prepare("dcg_score", y_true, y_score, sample_weight)
    _check_target(yt)
    per_row = _per_row(yt, ys, k, bool(ignore_ties), DCG, log_base)
    return float(np.average(per_row, weights=sw))


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
    _check_params("ndcg_score", k, sample_weight, ignore_ties)
    yt, ys, sw = _prepare("ndcg_score", y_true, y_score, sample_weight)
    if yt.size and yt.min() < 0:
        raise ValueError("ndcg_score should not be used on negative y_true values.")
    if yt.ndim > 1 and yt.shape[1] <= 1:
        raise ValueError(
            "Computing NDCG is only meaningful when there is more than 1 document. "
            f"Got {yt.shape[1]} instead."
        )
    _check_target(yt)
    per_row = _per_row(yt, ys, k, bool(ignore_ties), NDCG, 2.0)
    return float(np.average(per_row, weights=sw))
