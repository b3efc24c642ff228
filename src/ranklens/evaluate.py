"""``evaluate``: judgments + rankings + measures + convention -> :class:`Result`."""

from ._core.evaluate import (
    evaluate,
    evaluate_arrays,
)

__all__ = [
    "evaluate",
    "evaluate_arrays",
]
