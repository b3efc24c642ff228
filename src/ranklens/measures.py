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
``alpha_ndcg``            ``alpha_ndcg@k``, ``alpha-ndcg@k``, ``alpha_ndcg@k(alpha=0.3)`` (ndeval's
                          diversity measures: judgments per subtopic, convention='ndeval')
``alpha_dcg``             ``alpha_dcg@k``, ``alpha-dcg@k``
``err_ia`` / ``nerr_ia``  ``err_ia@k``, ``err-ia@k``, ``nerr_ia@k``, ``nerr-ia@k``
``nrbp`` / ``nnrbp``      ``nrbp``, ``nnrbp``, ``nrbp(alpha=0.3)`` (the whole list)
``map_ia``                ``map_ia``, ``map-ia``, ``ap_ia``, ``ap-ia`` (intent-aware MAP, whole list)
``p_ia``                  ``p_ia@k``, ``p-ia@k`` (intent-aware precision)
``strec``                 ``strec@k``, ``st_recall@k``, ``strecall@k`` (subtopic recall)
========================  =========================================================

A relevance level can be given to binary measures with ``(rel=2)``, e.g.
``recall@100(rel=2)``; trec_eval spelling has ``-l2`` on the command line instead. RBP's persistence is
``(p=...)``, the F measure's ``(beta=...)`` (trec_eval's set_F parameter), interpolated precision's level
``(recall=...)`` or in its name (``iprec_at_recall_0.50``, trec_eval's ``iprec_at_recall..10,.20``). The
diversity measures' redundancy penalty is ``(alpha=...)`` (0.5 unless written; alpha-nDCG, alpha-DCG, NRBP and
nNRBP), their cutoffs run from 1 to 20 (ndeval's depth).

:data:`REGISTRY` holds one :class:`MeasureSpec` per family: its spellings, its kernel code, whether it
takes a cutoff, is graded or summed, the name trec_eval prints, and its rules per convention (a
refusal, or another definition). :func:`definition` gives the spec that applies under a convention.

The registry itself is in :mod:`ranklens._defs.registry`, parsing in :mod:`ranklens._defs.parse`; this module gives
both under their public names, and the two functions that apply the registry's rules.
"""

from ._defs.measures import (
    FAMILIES,
    MAX_CUTOFF,
    REGISTRY,
    ConventionRule,
    Measure,
    MeasureSpec,
    check_measures,
    definition,
    flat_name,
    parse_measure,
    parse_measures,
)

__all__ = [
    "ConventionRule",
    "FAMILIES",
    "MAX_CUTOFF",
    "Measure",
    "MeasureSpec",
    "REGISTRY",
    "check_measures",
    "definition",
    "flat_name",
    "parse_measure",
    "parse_measures",
]
