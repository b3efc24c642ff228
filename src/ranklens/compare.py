"""``compare``: several runs on the same judgments -> means, intervals, paired tests against a baseline.

Every run is evaluated with :func:`ranklens.evaluate` under one convention. A run's mean and its
intervals are over the queries that run counts (those ``evaluate`` does not skip); a comparison with
the baseline is over the queries both count, and the queries left out of a pair are reported. With
``pairs="all"``, every pair of runs is compared over the queries every run counts (a
:class:`PairwiseComparison`), and the queries left out are reported.
"""

from ._integrations.compare import compare
from ._integrations.comparison import Comparison
from ._integrations.pairs import PairwiseComparison
from ._integrations.runs import run_names

__all__ = [
    "Comparison",
    "PairwiseComparison",
    "compare",
    "run_names",
]
