"""``explain``: the DCG table of one query, and why two conventions disagree on it."""

from ._core.explain import (
    Difference,
    Explanation,
    explain,
)

__all__ = [
    "Difference",
    "Explanation",
    "explain",
]
