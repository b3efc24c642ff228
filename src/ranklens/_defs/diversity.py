"""The diversity measure families (#33): ndeval's alpha-nDCG, ERR-IA, NRBP, intent-aware MAP and precision, subtopic
recall, over judgments per subtopic (computed by :mod:`ranklens._core.diversity`), with their rules per convention.
:data:`ranklens._defs.registry.REGISTRY` holds them beside the other families.
"""

from __future__ import annotations

from .spec import NDCG_ONLY, ConventionRule, MeasureSpec

__all__ = ["diversity_families"]


def diversity_families() -> dict[str, MeasureSpec]:
    """The diversity measures (#33): ndeval's, over judgments per subtopic (:mod:`ranklens._core.diversity`).

    Under the ``ndeval`` preset and conventions ordering ties (``ties`` input, item_asc or item_desc) they are
    ndeval's; every other preset refuses them (its peer does not declare them: ``presets.PEERS``), and averaged
    ties are refused (the expectation over the orders of tied items is not computed). ir_measures computes them
    with pyndeval, which is ndeval: its preset points there."""
    to_ndeval = "convention='ndeval' gives ndeval's"
    rules = (
        ConventionRule("name", "ir_measures", refuse="reproduces ir_measures' pytrec_eval measures; ir_measures "
                       f"computes its diversity measures with pyndeval, that is ndeval: {to_ndeval}"),
        ConventionRule("ties", "average", refuse="averages tied items, and a diversity measure's expectation over "
                       "the orders of tied items is not computed: set a tie order (ties='item_asc' as pyndeval, "
                       "'item_desc' or 'input'), or use convention='ndeval'"),
    )
    fams = [
        ("alpha_ndcg", "alpha-nDCG@k: alpha-DCG of the list / alpha-DCG of ndeval's greedy ideal list",
         ("alpha_ndcg", "alpha-ndcg"), True, "alpha"),
        ("alpha_dcg", "alpha-DCG@k: sum of g(r) / log2(r + 1) / the same of N (1 - alpha)^(r-1) (ndeval's ideal "
         "ideal)", ("alpha_dcg", "alpha-dcg"), True, "alpha"),
        ("err_ia", "ERR-IA@k: sum of g(r) / r / the same of N (1 - alpha)^(r-1) (alpha 0.5)", ("err_ia", "err-ia"),
         True, None),
        ("nerr_ia", "nERR-IA@k: ERR-IA of the list / ERR-IA of the greedy ideal list", ("nerr_ia", "nerr-ia"), True,
         None),
        ("nrbp", "novelty- and rank-biased precision: (1 - (1 - alpha) beta) / N sum of g(r) beta^(r-1), beta 0.5",
         ("nrbp",), False, "alpha"),
        ("nnrbp", "NRBP of the list / NRBP of the greedy ideal list", ("nnrbp",), False, "alpha"),
        ("map_ia", "intent-aware MAP: the mean over subtopics of each subtopic's average precision",
         ("map_ia", "map-ia", "ap_ia", "ap-ia"), False, None),
        ("p_ia", "intent-aware precision: relevant (item, subtopic) pairs in the top k / (k N)", ("p_ia", "p-ia"),
         True, None),
        ("strec", "subtopic recall: the share of the subtopics with a relevant item in the top k",
         ("strec", "st_recall", "strecall"), True, None),
    ]
    def cut_rule(f: str, cut: bool) -> tuple[ConventionRule, ...]:
        return (ConventionRule("name", "ndeval", cutoff=False, refuse=f"reproduces ndeval, which computes {f} at a "
                               f"cutoff from 1 to 20: write {f}@20"),) if cut else ()

    return {f: MeasureSpec(f, what, -1, names, cutoff=cut, trec_name=f, trec_cut=f if cut else None,
                           param_name=param, default_param=0.5 if param else None, subtopics=True,
                           rules=rules + cut_rule(f, cut) + (NDCG_ONLY,))
            for f, what, names, cut, param in fams}
