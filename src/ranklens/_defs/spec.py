"""What a measure family is: :class:`MeasureSpec` (its kernel code, spellings, flags) and :class:`ConventionRule` (what
it is under some conventions), with the ranges of family parameters; the families themselves are
:data:`ranklens._defs.registry.REGISTRY` (and :mod:`ranklens._defs.diversity`'s).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .conventions import Convention
from .presets import OWN

if TYPE_CHECKING:
    from .parse import Measure

__all__ = ["MAX_CUTOFF", "NDCG_ONLY", "PARAM_RANGES", "ConventionRule", "MeasureSpec", "param_refusal"]

#: The largest cutoff accepted (that of a 64-bit signed integer, as the kernels take it).
MAX_CUTOFF = 2**63 - 1

#: The range of each family parameter, by its option name (:attr:`MeasureSpec.param_name`): the test and the
#: words that say it. The one rule every spelling of a parameter goes through (ours ``rbp(p=0.9)``, trec_eval's
#: ``iprec_at_recall_0.50``, ir_measures' ``RBP(p=0.9)``, ``SetF(beta=2.0)``, ``IPrec@0.5``).
PARAM_RANGES: dict[str, tuple[tuple[float, float, bool], str]] = {
    # (low, high, whether the bounds themselves are allowed)
    "p": ((0.0, 1.0, False), "a persistence between 0 and 1 (exclusive)"),
    "beta": ((0.0, math.inf, True), "a finite number >= 0"),
    "recall": ((0.0, 1.0, True), "a recall level from 0 to 1"),
    "mult": ((0.0, math.inf, True), "a finite multiple of R >= 0"),
    "alpha": ((0.0, 1.0, True), "a redundancy penalty from 0 to 1"),
}


def param_refusal(key: str, value: Any) -> str | None:
    """Why ``value`` cannot be the parameter ``key`` (``"p must be a persistence between 0 and 1 (exclusive)"``),
    or None when it can: a finite number within :data:`PARAM_RANGES`.

    Examples
    --------
    >>> param_refusal("p", 0.9) is None, param_refusal("p", 1.5)
    (True, 'p must be a persistence between 0 and 1 (exclusive)')
    >>> param_refusal("beta", float("inf"))
    'beta must be a finite number >= 0'
    """
    (low, high, closed), words = PARAM_RANGES[key]
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and (
        low <= value <= high if closed else low < value < high)
    return None if ok else f"{key} must be {words}"

@dataclass(frozen=True)
class ConventionRule:
    """What a measure family is under the conventions whose field ``field`` equals ``value``.

    Either a refusal (``refuse``: why the convention cannot give this measure, as ``"reproduces NDCG
    only"``) or another definition (``use``: the :class:`MeasureSpec` that applies instead). The field
    may be ``"name"``, for a preset reproducing its peer's own definition of a measure. ``cutoff``
    narrows the rule to measures written with a cutoff (True) or without one (False); ``also`` to conventions
    whose other fields have the values given (pairs of field and value).
    """

    field: str
    value: Any
    refuse: str | None = None
    use: MeasureSpec | None = None
    cutoff: bool | None = None
    also: tuple[tuple[str, Any], ...] = ()

    def applies(self, convention: Convention, measure: Measure | None = None) -> bool:
        """Whether the rule concerns ``convention`` (and ``measure``, when the rule looks at its cutoff)."""
        if self.cutoff is not None and measure is not None and (measure.k is not None) != self.cutoff:
            return False
        fields = ((self.field, self.value), *self.also)
        return all(getattr(convention, f) == v for f, v in fields)


@dataclass(frozen=True)
class MeasureSpec:
    """One measure family: its kernel, its parameters, its names, and its rules per convention.

    Attributes
    ----------
    family : str
        Our name of the family (a key of :data:`REGISTRY`).
    description : str
        One line for listings.
    code : int
        The kernel's measure code (:mod:`ranklens._kernels.codes`).
    spellings : tuple of str
        Names (before ``@k`` / ``.k``) that mean this family: ours, trec_eval's, ir_measures' and ranx's.
    cutoff : bool
        Whether a cutoff may be written (``r_precision`` and ``num_rel`` take none).
    graded : bool
        Whether the value depends on the labels' grades (gain) rather than on a relevance level.
    summed : bool
        Summed over queries instead of averaged (trec_eval's counts).
    gain_suffix : bool
        Whether ``_burges`` / ``_exp`` / ``_lin`` after the name set the gain.
    trec_name : str
        The name trec_eval prints without a cutoff.
    trec_cut : str or None
        The prefix trec_eval prints before ``_k`` with a cutoff (None: the name never carries one).
    empty_when : {"no_gain", "no_relevant", "never"}
        When the kernel calls a query empty for this family (under the convention's ``empty_test``
        ``"no_gain"`` and the ``ideal_*`` tests): no positive gain in the ideal list, no item at the
        relevance level, or never (``empty_test="label_sum_zero"`` applies to every family).
    scored_note : bool
        Report queries whose value an empty rule set (False for DCG and IDCG, which are 0 there anyway).
    rules : tuple of ConventionRule
        Refusals and other definitions, per convention field value.
    empty : float, str or None
        The value of a query without a relevant item under this definition (None: the convention's).
    default_cutoff : bool
        A measure written without a cutoff takes the convention's ``default_cutoff`` (XGBoost's 32).
    binary_labels : bool
        Labels must be 0 or 1 (XGBoost's ``map`` and ``pre``: "can only be used with binary labels").
    weighting : str or None
        ``"unweighted"``: query weights are ignored (CatBoost's PrecisionAt, RecallAt, MAP); ``"weighted"``:
        a plain weighted mean even under the convention's ``"gbdt"`` weighting; ``"impressions"``: each
        query weighs the number of items its value is computed over (GroupAUC); None: the convention's.
    unranked_zero : bool
        A query with no ranked item scores 0 (ir_measures reports every measure of a judged query its run
        leaves out as 0, ``NumRel`` included; trec_eval ``-c`` counts that query's relevant items).
    aggregate : {"mean", "geometric"}
        How per-query values become the aggregate: their (weighted) mean, or trec_eval's geometric mean
        (``exp`` of the mean of ``log(max(value, 0.00001))``, gm_map).
    param_name : str or None
        The option that sets the family's parameter (``"p"``: RBP's persistence; ``"beta"``: the F
        measure's; ``"recall"``: interpolated precision's level), None for none.
    default_param : float or None
        The parameter when none is written (None: it must be written).
    judged_only : bool
        The value depends on which items are judged (bpref, infAP, Judged): a store where every shown item
        has a label cannot give it a meaning.
    untied_only : bool
        The peer orders tied scores in an order it does not define (torchmetrics' ``torch.topk`` and
        ``argsort``): a list whose tied scores mix relevant and non-relevant items is refused, naming it.
    positive_scores : bool
        A relevant item scored 0 or less is no hit (torchmetrics' ``preds > 0``): the rankings must carry
        scores (a rank column is refused).
    subtopics : bool
        A diversity measure: it reads judgments per subtopic and is computed by
        :mod:`ranklens._core.diversity` as ndeval computes it, not by the kernel (``code`` is -1).
    """

    family: str
    description: str
    code: int
    spellings: tuple[str, ...]
    cutoff: bool = True
    graded: bool = False
    summed: bool = False
    gain_suffix: bool = False
    trec_name: str = ""
    trec_cut: str | None = None
    empty_when: str = "no_relevant"
    scored_note: bool = True
    rules: tuple[ConventionRule, ...] = ()
    empty: float | str | None = None
    default_cutoff: bool = False
    binary_labels: bool = False
    weighting: str | None = None
    unranked_zero: bool = False
    aggregate: str = "mean"
    param_name: str | None = None
    default_param: float | None = None
    judged_only: bool = False
    untied_only: bool = False
    positive_scores: bool = False
    subtopics: bool = False


#: Shared ranks (Evidently's) are reproduced for the DCG family only, under any convention that sets them.
NDCG_ONLY = ConventionRule("ties", "shared_rank", refuse=f"reproduces NDCG only; {OWN}")
