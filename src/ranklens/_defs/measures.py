"""Measure names: parsing ``"ndcg@10"``, ``"P.10"``, ``"ndcg@10-"`` ... into :class:`Measure` values.

Accepted spellings (case-insensitive unless noted):

========================  =========================================================
family                    spellings
========================  =========================================================
``ndcg``                  ``ndcg``, ``ndcg@k``, ``ndcg_cut.k`` / ``ndcg_cut_k`` (trec_eval),
                          ``ndcg_burges@k`` (ranx: gain 2^rel-1), ``ndcg@k-`` (XGBoost:
                          empty queries score 0), ``ndcg_exp@k`` / ``ndcg_lin@k``
``dcg`` / ``idcg``        ``dcg@k``, ``idcg@k``, ``dcg_burges@k``, ``dcg_exp@k``,
                          ``dcg_lin@k``, ``idcg_burges@k``, ``idcg_exp@k``
``map``                   ``map``, ``map@k``, ``ap@k``, ``map_cut.k``, ``map@k-`` (XGBoost)
``mrr``                   ``mrr``, ``mrr@k``, ``rr@k``, ``recip_rank``
``precision``             ``precision@k``, ``p@k``, ``P.k`` / ``P_k``, ``prec@k``,
                          ``set_P`` (trec_eval: the whole list, no cutoff)
``recall``                ``recall@k``, ``r@k``, ``recall.k`` / ``recall_k``, ``set_recall``
``f1``                    ``f1@k``, ``f@k``, ``set_F`` (no cutoff), ``set_F(beta=0.5)``
``hit_rate``              ``hit_rate@k``, ``hit@k``, ``hitrate@k``,
                          ``success@k``, ``success.k``
``hits``                  ``hits@k`` (ranx: the number of relevant items in the top k)
``err``                   ``err@k``
``r_precision``           ``r_precision``, ``rprec``, ``r-precision``
``rbp``                   ``rbp``, ``rbp@k``, ``rbp(p=0.9)`` (persistence p, 0.8 unless written)
``bpref`` ...             ``bpref``, ``infap`` (no cutoff; judged items only)
``gm_map``                ``gm_map``, ``gm_ap`` (geometric mean over queries)
``judged``                ``judged@k`` (share of the top k that is judged)
``iprec``                 ``iprec_at_recall@0.5``, ``iprec@0.5`` (without a level: trec_eval's 11)
``11pt_avg``              ``11pt_avg``, ``11-pt_avg``, ``11pt``
``auc`` / ``gauc``        ``auc@k``, ``gauc@k``, ``groupauc@k``, ``group_auc@k``
``num_ret`` ...           ``num_ret``, ``num_rel``, ``num_rel_ret`` (summed, not averaged)
``gm_bpref``              ``gm_bpref`` (bpref, geometric mean over queries)
``rprec_mult``            ``Rprec_mult``, ``Rprec_mult(mult=0.2)`` (precision at (long)(0.2 R + 0.9)
                          items; mult 1 unless written)
``relative_p``            ``relative_P@k``, ``relative_P.k`` (/ min(k, R)), ``set_relative_P``
                          (no cutoff: / min(items ranked, R))
``set_map`` ...           ``set_map``, ``utility`` (relevant minus non-relevant ranked),
                          ``num_nonrel_judged_ret`` (summed)
``bing`` ...              ``bing``, ``g``, ``ndcg_rel``, ``rndcg`` (trec_eval's binG, G, ndcg_rel,
                          Rndcg: in ranked order)
``unj``                   ``unj@k``, ``unj.k`` (share of the top k unjudged, / k)
``rbp_resid``             ``rbp_resid``, ``rbp_resid(p=0.95)`` (RBP's residual, p 0.9 unless written)
========================  =========================================================

A relevance level can be given to binary measures with ``(rel=2)``, e.g.
``recall@100(rel=2)``; trec_eval spelling has ``-l2`` on the command line instead. RBP's persistence is
``(p=...)``, the F measure's ``(beta=...)`` (trec_eval's set_F parameter), interpolated precision's level
``(recall=...)`` or in its name (``iprec_at_recall_0.50``, trec_eval's ``iprec_at_recall..10,.20``).

:data:`REGISTRY` holds one :class:`MeasureSpec` per family: its spellings, its kernel code, whether it
takes a cutoff, is graded or summed, the name trec_eval prints, and its rules per convention (a
refusal, or another definition). :func:`definition` gives the spec that applies under a convention.

The registry itself is in :mod:`ranklens._registry`, parsing in :mod:`ranklens._parse`; this module gives
both under their public names, and the two functions that apply the registry's rules.
"""

from __future__ import annotations

from collections.abc import Iterable

from . import _irmeasures
from ._parse import MAX_CUTOFF, Measure, flat_name, parse_measure, parse_measures
from ._registry import FAMILIES, REGISTRY, ConventionRule, MeasureSpec
from .conventions import Convention
from .errors import InvalidParameterError

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
    spec = measure.spec
    for rule in spec.rules:
        if rule.applies(convention, measure):
            if rule.refuse is not None:
                raise InvalidParameterError(f"convention {convention.name!r} {rule.refuse}; not {measure.key}.")
            if rule.use is not None:
                return rule.use
    return spec


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
    convention 'evidently' reproduces NDCG only;
    convention='ranklens' gives ranklens' own;
    not map, P.10.
    """
    refused: dict[str, list[str]] = {}
    for m in measures:
        why = _irmeasures.refusal(m, convention)
        if why is None:
            why = _other_convention(m, convention)
        if why is not None:
            refused.setdefault(why, []).append(m.key)
            continue
        for rule in m.spec.rules:
            if rule.applies(convention, m):
                if rule.refuse is not None:
                    refused.setdefault(rule.refuse, []).append(m.key)
                break
    for why, keys in refused.items():
        raise InvalidParameterError(f"convention {convention.name!r} {why}; not {', '.join(keys)}.")


def _other_convention(m: Measure, convention: Convention) -> str | None:
    """Why ``m`` cannot be computed under ``convention`` itself: it is computed under other fields (the
    provider ir_measures picks for it, or its own settings), or None."""
    other = _irmeasures.measure_convention(convention, m)
    diff = other.differences(convention)
    if not diff:
        return None
    fields = ", ".join(f"{f}={a!r}" for f, (a, _) in diff.items())
    return (f"computes these measures under other fields ({fields}): ranklens.evaluate, compare and the command "
            "line evaluate them apart and join the columns; one plan takes one convention")
