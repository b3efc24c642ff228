"""``evaluate``: judgments + rankings + measures + convention -> :class:`Result`."""

from ._core.evaluate import (
    GroupedResult,
    evaluate,
    evaluate_arrays,
)

__all__ = [
    "GroupedResult",
    "evaluate",
    "evaluate_arrays",
]
