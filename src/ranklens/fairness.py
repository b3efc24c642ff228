"""Fairness of exposure: expected exposure of stochastic rankings and attention-weighted rank fairness.

* :func:`expected_exposure`: EE-D, EE-R, EE-L (Diaz et al. 2020), per query, as the reference implementation
  expeval computes them, over documents or over groups of documents; :func:`plackett_luce` samples the
  stochastic rankings from a run's scores (:class:`SampledRun`).
* :func:`awrf`: attention-weighted rank fairness and the TREC Fair Ranking 2021-2022 Task 1 score (nDCG x AWRF),
  with group labels of items from a file and a target distribution over the groups.

Each returns a :class:`ranklens.QueryTable`: per-query values, means and confidence intervals, in every output
format.
"""

from ._integrations.awrf import EDITIONS, awrf
from ._integrations.exposure import MEASURES, USER_MODELS, SampledRun, expected_exposure, plackett_luce

__all__ = [
    "EDITIONS",
    "MEASURES",
    "USER_MODELS",
    "SampledRun",
    "awrf",
    "expected_exposure",
    "plackett_luce",
]
