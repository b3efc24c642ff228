"""Conventions: every silent choice behind an "NDCG" number, made explicit.

The public face of this module is :mod:`ranklens.conventions`.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import InvalidParameterError

__all__ = ["AGGREGATE_FIELDS", "VALUE_FIELDS", "Convention", "GainSpec", "is_finite_number"]

GainSpec = Literal["linear", "exponential"] | Mapping[float, float]

_CHOICES: dict[str, tuple[Any, ...]] = {
    "ties": ("average", "input", "item_desc", "item_asc", "worst", "best", "ranx", "ranx_dict", "ranx_comparable",
             "shared_rank"),
    "score_precision": ("float64", "float32"),
    "label_precision": ("float64", "float32", "int"),
    "ideal": ("judgments", "ranking"),
    "negative_labels": ("zero", "keep", "error"),
    "fractional_labels": ("keep", "error"),
    "empty_test": ("no_gain", "label_sum_zero", "ideal_zero", "ideal_nonpositive"),
    "queries": ("judged", "ranked", "both", "intersection", "same"),
    "missing_ranking": ("zero", "error"),
    "weighting": ("weighted", "gbdt"),
    "summation": ("pairwise", "sequential"),
}


@dataclass(frozen=True)
class Convention:
    """How a ranking measure is computed, field by field.

    Parameters
    ----------
    name : str
        Short name of the convention.
    gain : {"linear", "exponential"} or mapping, default="linear"
        Gain of a label: the label itself, ``2**label - 1``, or a mapping
        from label to gain (labels absent from the mapping keep their value,
        as trec_eval's ``ndcg`` gain parameters do).
    log_base : float, default=2.0
        Base of the logarithm of the discount ``1 / log_base(rank + 1)``.
    ties : str, default="average"
        Order of items with equal scores. ``"average"``: the exact expectation
        over every order of the tied items (McSherry & Najork; scikit-learn).
        ``"input"``: the order given. ``"item_desc"`` / ``"item_asc"``: item id
        in descending / ascending byte order (trec_eval uses descending).
        ``"worst"`` / ``"best"``: the least / most relevant tied item first
        (the bounds of a query's value; CatBoost uses ``"worst"``).
        ``"ranx"``: numba's quicksort order, as ranx's ``Run`` sorts (a
        ``ranx.Run`` given itself keeps its order). ``"ranx_dict"``: the
        order ``ranx.evaluate`` gives plain dicts (an ascending quicksort,
        reversed). ``"ranx_comparable"``: the order of
        ``ranx.evaluate(qrels, run, make_comparable=True)`` with a ``Run``,
        which sorts the Run's rows once more (numba's quicksort again, which
        moves tied rows); with ``queries="judged"`` it reproduces that call
        (a ``ranx.Run`` given itself is sorted once more).
        ``"shared_rank"``: tied items share their truncated mean rank
        (Evidently).
    score_precision : {"float64", "float32"}, default="float64"
        Scores are rounded to this precision before ranking (trec_eval 9.x,
        XGBoost and torchmetrics compare float32 scores).
    label_precision : {"float64", "float32", "int"}, default="float64"
        ``"int"`` truncates labels toward zero (ranx does).
    ideal : {"judgments", "ranking"}, default="judgments"
        Ideal list (and the number of relevant items) from all judgments of
        the query, also those not retrieved, or from the ranked list only.
    relevance_level : float, default=1.0
        A label at or above it is relevant for binary measures (precision,
        recall, AP, RR, hit rate, R-precision).
    gain_threshold : float or None, default=None
        Labels below it get gain 0 (ranx ignores labels below its relevance
        level). ``None``: no threshold.
    negative_labels : {"zero", "keep", "error"}, default="zero"
        Negative labels mean "judged, not relevant" (gain 0), are used as
        they are, or are refused.
    fractional_labels : {"keep", "error"}, default="keep"
        Whether labels such as 1.5 are allowed. They are never truncated
        silently; ``label_precision="int"`` is the explicit way.
    max_label : float or None, default=None
        Labels above it are refused (LightGBM's label_gain table, XGBoost's
        31, gdeval's 4).
    empty : {0.0, 1.0, "skip", "error"}, default="skip"
        Value of a query with no relevant item (ideal DCG 0, or no relevant
        judgment for binary measures). ``"skip"`` leaves it out of the mean
        and reports it.
    empty_test : {"no_gain", "label_sum_zero", "ideal_zero", "ideal_nonpositive"}, default="no_gain"
        What makes a query empty: no positive gain in the ideal list; labels
        summing to zero (torchmetrics); or, for NDCG, an ideal DCG at the
        cutoff equal to zero (Evidently with ``no_feedback_users=True``) or
        not above zero (XGBoost, CatBoost, LightGBM: with negative labels the
        ideal DCG can be negative). Other measures use ``"no_gain"`` under
        the two ``ideal_*`` tests.
    queries : {"judged", "ranked", "both", "intersection", "same"}
        Which queries are evaluated: those with judgments, those ranked,
        either, both, or refuse when the two sets differ (ranx).
    missing_ranking : {"zero", "error"}, default="zero"
        A judged query without a ranked list scores 0, or is an error
        (trec_eval 10 without ``-c``).
    default_cutoff : int or None, default=None
        Cutoff used by ``ndcg`` written without ``@k`` (XGBoost uses 32).
    err_max_grade : float or None, default=None
        ERR stopping probability is ``(2**g - 1) / 2**max_grade``; ``None``
        takes the largest label of the judgments.
    weighting : {"weighted", "gbdt"}, default="weighted"
        ``"gbdt"`` reproduces LightGBM/XGBoost: an empty query adds its value
        to the weighted sum unweighted.
    clamp_mean : bool, default=False
        Clamp the mean of NDCG at 1, as XGBoost does; like XGBoost (its
        ``CHECK`` in ``Finalize``), a mean above ``1 + 1e-6`` (reachable only
        through the ``"gbdt"`` weighting of empty queries with weights below
        1) is an error instead.
    round_per_query : int or None, default=None
        Round per-query values to this many decimals before averaging
        (gdeval prints 5).
    min_items : int, default=0
        The shortest ranked list the peer takes. 0: a query declared with no
        ranked item (a dict's ``{query: {}}``) is an empty ranking, as ranx,
        pytrec_eval and ir_measures score it. 1 or more: such a query is not
        ranked, as for a peer that cannot be given an empty list (a LightGBM
        or XGBoost group, a row of a torchmetrics or Evidently table), and the
        query rules apply to it. Lists shorter than 2 are refused when it is 2
        (scikit-learn).
    max_items : int or None, default=None
        Lists longer than this are refused (LightGBM: 10000).
    k_beyond_longest : {"allow", "error"}, default="allow"
        Evidently refuses a cutoff larger than its longest list.
    summation : {"pairwise", "sequential"}, default="pairwise"
        How per-query values are added up for a mean: numpy's pairwise sum
        (the more accurate), or one query after the other in output order, as
        trec_eval adds them (its printed 4 decimals follow that sum when a
        mean falls on a half, e.g. 32 queries of ``P@20``).
    mirrors : str
        The tool and version the preset reproduces.
    description : str
        One line for listings.
    """

    name: str = "custom"
    gain: GainSpec = "linear"
    log_base: float = 2.0
    ties: str = "average"
    score_precision: str = "float64"
    label_precision: str = "float64"
    ideal: str = "judgments"
    relevance_level: float = 1.0
    gain_threshold: float | None = None
    negative_labels: str = "zero"
    fractional_labels: str = "keep"
    max_label: float | None = None
    empty: float | str = "skip"
    empty_test: str = "no_gain"
    queries: str = "both"
    missing_ranking: str = "zero"
    default_cutoff: int | None = None
    err_max_grade: float | None = None
    weighting: str = "weighted"
    clamp_mean: bool = False
    round_per_query: int | None = None
    min_items: int = 0
    max_items: int | None = None
    k_beyond_longest: str = "allow"
    summation: str = "pairwise"
    mirrors: str = ""
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        for name, choices in _CHOICES.items():
            value = getattr(self, name)
            if value not in choices:
                raise InvalidParameterError(
                    f"`{name}` must be one of {', '.join(map(repr, choices))}; got {value!r}."
                )
        if isinstance(self.gain, str):
            if self.gain not in ("linear", "exponential"):
                raise InvalidParameterError(
                    f"`gain` must be 'linear', 'exponential' or a mapping from label to gain; got {self.gain!r}."
                )
        elif isinstance(self.gain, Mapping):
            try:
                gains = dict(sorted((float(k), float(v)) for k, v in self.gain.items()))
            except (TypeError, ValueError):
                raise InvalidParameterError(
                    f"`gain`: a mapping from label to gain takes numbers; got {self.gain!r}."
                ) from None
            object.__setattr__(self, "gain", gains)
        else:
            raise InvalidParameterError(f"`gain` must be 'linear', 'exponential' or a mapping; got {self.gain!r}.")
        _check_numbers(self)
        if not (isinstance(self.log_base, (int, float)) and self.log_base > 0 and self.log_base != 1):
            raise InvalidParameterError(f"`log_base` must be a number > 0 and != 1; got {self.log_base!r}.")
        if not (self.empty in ("skip", "error") or (isinstance(self.empty, (int, float)) and self.empty in (0, 1))):
            raise InvalidParameterError(f"`empty` must be 0, 1, 'skip' or 'error'; got {self.empty!r}.")
        if self.default_cutoff is not None and self.default_cutoff < 1:
            raise InvalidParameterError(f"`default_cutoff` must be None or >= 1; got {self.default_cutoff!r}.")
        if self.k_beyond_longest not in ("allow", "error"):
            raise InvalidParameterError(
                f"`k_beyond_longest` must be 'allow' or 'error'; got {self.k_beyond_longest!r}."
            )

    def replace(self, **changes: Any) -> Convention:
        """Return a copy with some fields changed (validated like the original).

        Examples
        --------
        >>> from ranklens import get_convention
        >>> get_convention("trec_eval").replace(queries="judged").queries
        'judged'
        """
        names = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise InvalidParameterError(
                f"unknown convention field(s) {', '.join(unknown)}; valid fields: {', '.join(sorted(names))}."
            )
        return dataclasses.replace(self, **changes)

    def differences(self, other: Convention) -> dict[str, tuple[Any, Any]]:
        """Fields whose values differ between two conventions (name and texts excluded)."""
        skip = {"name", "mirrors", "description"}
        out = {}
        for f in dataclasses.fields(self):
            if f.name in skip:
                continue
            a, b = getattr(self, f.name), getattr(other, f.name)
            if a != b:
                out[f.name] = (a, b)
        return out

    def as_dict(self) -> dict[str, Any]:
        """All fields as a plain dict."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


#: The fields that change a query's value, in the order :func:`ranklens.explain` switches them one by one
#: from one convention to the other to attribute a difference (the inputs' precision, gains, order, ideal
#: list, cutoff, relevance level, the empty-query rule, rounding). A new field goes here or in
#: :data:`AGGREGATE_FIELDS` (``tests/test_explain.py`` checks that every field is in exactly one).
VALUE_FIELDS: tuple[str, ...] = (
    "score_precision", "label_precision", "negative_labels", "gain_threshold", "gain", "log_base", "ties",
    "ideal", "default_cutoff", "relevance_level", "empty_test", "empty", "round_per_query", "err_max_grade",
)
#: The fields that change which queries count or how they are averaged, not a query's value.
AGGREGATE_FIELDS: tuple[str, ...] = (
    "queries", "missing_ranking", "weighting", "clamp_mean", "min_items", "max_items", "fractional_labels",
    "max_label", "k_beyond_longest", "summation",
)


def is_finite_number(v: Any) -> bool:
    """A finite real number, not a bool (TOML's ``true`` and Python's ``True`` are no numbers)."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        return False
    return math.isfinite(v)


def _is_count(v: Any, low: int) -> bool:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        return False
    return low <= int(v) < 2**63


def _check_numbers(c: Convention) -> None:
    """Refuse a numeric field that is not a finite number (NaN, text, a boolean...), in one line naming it."""
    numbers = {"relevance_level": False, "gain_threshold": True, "max_label": True, "err_max_grade": True}
    for name, optional in numbers.items():
        value = getattr(c, name)
        if not (is_finite_number(value) or (optional and value is None)):
            raise InvalidParameterError(f"`{name}` must be a finite number{' or None' if optional else ''}; "
                                        f"got {value!r}.")
    if c.err_max_grade is not None and not c.err_max_grade > 0:
        raise InvalidParameterError(f"`err_max_grade` must be a number > 0 or None; got {c.err_max_grade!r}.")
    if not is_finite_number(c.log_base):
        raise InvalidParameterError(f"`log_base` must be a number > 0 and != 1; got {c.log_base!r}.")
    counts = {"default_cutoff": (1, True), "round_per_query": (0, True), "min_items": (0, False),
              "max_items": (1, True)}
    for name, (low, optional) in counts.items():
        value = getattr(c, name)
        if not (_is_count(value, low) or (optional and value is None)):
            raise InvalidParameterError(f"`{name}` must be an integer >= {low}{' or None' if optional else ''}; "
                                        f"got {value!r}.")
    if c.round_per_query is not None and c.round_per_query > 17:
        raise InvalidParameterError(f"`round_per_query` must be at most 17 decimals; got {c.round_per_query!r}.")
    if not isinstance(c.clamp_mean, bool):
        raise InvalidParameterError(f"`clamp_mean` must be True or False; got {c.clamp_mean!r}.")
    if isinstance(c.gain, dict) and not all(math.isfinite(k) and math.isfinite(v) for k, v in c.gain.items()):
        raise InvalidParameterError(f"`gain`: a mapping from label to gain takes finite numbers; got {c.gain!r}.")
    if isinstance(c.gain, dict) and c.name not in _NEGATIVE_GAINS and any(v < 0 for v in c.gain.values()):
        label, gain = next((k, v) for k, v in c.gain.items() if v < 0)
        raise InvalidParameterError(
            f"`gain` maps label {label:g} to {gain:g}: convention {c.name!r} takes gains >= 0 (with a negative gain "
            f"an ideal list is no longer the best one, and NDCG leaves [0, 1]); trec_eval's ndcg gain parameters take "
            f"any number: convention='trec_eval' computes them as it does.")


#: The presets whose peer takes negative gains in a gain mapping (trec_eval's ``ndcg`` parameters ``level=gain``,
#: and ir_measures' ``nDCG(gains=...)`` through pytrec_eval).
_NEGATIVE_GAINS = ("trec_eval", "trec_eval10", "ir_measures")
