"""Online experiments on rankings: interleaving and multileaving (issue #30).

>>> from ranklens import online
>>> il = online.interleave(["d1", "d2", "d3"], ["d2", "d4", "d1"], k=3, seed=0)
>>> len(il.items), set(il.teams) <= {"a", "b"}
(3, True)
"""

from .interleaving import Interleaving, interleave, multileave
from .interleaving_results import InterleavingOutcome, MultileavingOutcome, interleaving_outcome, multileaving_outcome

__all__ = [
    "Interleaving",
    "InterleavingOutcome",
    "MultileavingOutcome",
    "interleave",
    "interleaving_outcome",
    "multileave",
    "multileaving_outcome",
]
