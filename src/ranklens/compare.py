"""``compare``: several runs on the same judgments -> means, intervals, paired tests against a baseline.

Every run is evaluated with :func:`ranklens.evaluate` under one convention. A run's mean and its
intervals are over the queries that run counts (those ``evaluate`` does not skip); a comparison with
the baseline is over the queries both count, and the queries left out of a pair are reported.
"""

from ._integrations.compare import (
    compare,
    run_names,
)
from ._integrations.comparison import Comparison

__all__ = [
    "Comparison",
    "compare",
    "run_names",
]
