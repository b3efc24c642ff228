"""Drop-in replacements for scikit-learn's ``ndcg_score`` and ``dcg_score``; a scorer for grouped data.

``ndcg_score`` / ``dcg_score``: same signature, validation, error messages, tie rule and return type
(a Python float) as scikit-learn 1.9, computed by ranklens's kernels.

:func:`make_ranking_scorer`: a scikit-learn scorer over flat rows grouped by query (``groups``
routed to it by scikit-learn's metadata routing), for ``GridSearchCV`` / ``cross_validate`` with
``GroupKFold``; it evaluates through :func:`ranklens.evaluate` (imported when called).
"""

from ._integrations.sklearn import (
    dcg_score,
    make_ranking_scorer,
    ndcg_score,
)

__all__ = [
    "dcg_score",
    "make_ranking_scorer",
    "ndcg_score",
]
