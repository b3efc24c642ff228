"""Online experiments on rankings: interleaving and multileaving (issue #30).

>>> from ranklens import online
>>> online.interleave(["d1", "d2", "d3"], ["d2", "d4", "d1"], k=3, seed=0).items  # doctest: +SKIP
"""

from .interleaving import Interleaving, interleave, multileave
from .interleaving_outcome import InterleavingOutcome, MultileavingOutcome, interleaving_outcome, multileaving_outcome

__all__ = [
    "Interleaving",
    "InterleavingOutcome",
    "MultileavingOutcome",
    "interleave",
    "interleaving_outcome",
    "multileave",
    "multileaving_outcome",
]
