"""Measure names: parsing ``"ndcg@10"``, ``"P.10"``, ``"ndcg@10-"`` ... into :class:`Measure` values.

The public face of this module is :mod:`ranklens.measures`.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import InvalidParameterError
from . import irmeasures
from .conventions import Convention
from .parse import MAX_CUTOFF, Measure, flat_name, parse_measure, parse_measures
from .registry import FAMILIES, REGISTRY, ConventionRule, MeasureSpec, rule_for

__all__ = [
    "FAMILIES", "MAX_CUTOFF", "REGISTRY", "ConventionRule", "Measure", "MeasureSpec", "check_measures", "definition",
    "flat_name", "parse_measure", "parse_measures",
]


def definition(measure: Measure, convention: Convention) -> MeasureSpec:
    """The definition of ``measure`` under ``convention``, or an error saying why there is none.

    Parameters
    ----------
    measure : Measure
        A parsed measure.
    convention : Convention
        The convention it is computed under.

    Returns
    -------
    MeasureSpec
        The family's spec, or the one a rule of the registry puts in its place for this convention.

    Raises
    ------
    InvalidParameterError
        A one-line refusal naming the convention and the measure.

    Examples
    --------
    >>> from ranklens import get_convention
    >>> definition(parse_measure("P.10")[0], get_convention("trec_eval")).family
    'precision'
    >>> try:
    ...     definition(parse_measure("mrr")[0], get_convention("sklearn"))
    ... except InvalidParameterError as err:
    ...     print(str(err).replace("; ", ";\\n"))
    convention 'sklearn' reproduces scikit-learn, which has no such measure (it has ndcg_score and dcg_score);
    convention='ranklens' gives ranklens' own;
    not mrr.
    """
    rule = rule_for(measure, convention)
    if rule is not None and rule.refuse is not None:
        raise InvalidParameterError(f"convention {convention.name!r} {rule.refuse}; not {measure.key}.")
    if rule is not None and rule.use is not None:
        return rule.use
    return measure.spec


def check_measures(measures: Iterable[Measure], convention: Convention) -> None:
    """Check that every measure has a definition under ``convention`` (see :func:`definition`).

    Measures refused for the same reason are named together in one message.

    Examples
    --------
    >>> from ranklens import get_convention
    >>> try:
    ...     check_measures(parse_measures(["ndcg@5", "map", "P.10"]), get_convention("evidently"))
    ... except InvalidParameterError as err:
    ...     print(str(err).replace("; ", ";\\n"))
    convention 'evidently' reproduces Evidently, which has no such measure (it has NDCGKMetric);
    convention='ranklens' gives ranklens' own;
    not map, P.10.
    """
    refused: dict[str, list[str]] = {}
    for m in measures:
        why = irmeasures.refusal(m, convention)
        if why is None:
            why = _other_convention(m, convention)
        if why is not None:
            refused.setdefault(why, []).append(m.key)
            continue
        rule = rule_for(m, convention)
        if rule is not None and rule.refuse is not None:
            refused.setdefault(rule.refuse, []).append(m.key)
    for why, keys in refused.items():
        raise InvalidParameterError(f"convention {convention.name!r} {why}; not {', '.join(keys)}.")


def _other_convention(m: Measure, convention: Convention) -> str | None:
    """Why ``m`` cannot be computed under ``convention`` itself: it is computed under other fields (the
    provider ir_measures picks for it, or its own settings), or None."""
    other = irmeasures.measure_convention(convention, m)
    diff = other.differences(convention)
    if not diff:
        return None
    fields = ", ".join(f"{f}={a!r}" for f, (a, _) in diff.items())
    return (f"computes these measures under other fields ({fields}): ranklens.evaluate, compare and the command "
            "line evaluate them apart and join the columns; one plan takes one convention")
