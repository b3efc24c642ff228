"""The result of an evaluation: aggregates, per-query values, and what was left out."""

from ._core.result import (
    MIN_GEO_MEAN,
    N_EXAMPLES,
    XGB_MAX_MEAN,
    Exclusion,
    ExclusionReason,
    Note,
    Partial,
    Result,
    combine,
    impressions,
    join_results,
    list_weights,
)

__all__ = [
    "Exclusion",
    "ExclusionReason",
    "MIN_GEO_MEAN",
    "N_EXAMPLES",
    "Note",
    "Partial",
    "Result",
    "XGB_MAX_MEAN",
    "combine",
    "impressions",
    "join_results",
    "list_weights",
]
