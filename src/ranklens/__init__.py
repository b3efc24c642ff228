"""ranklens: exact, fast ranking evaluation (NDCG and companions) under named conventions.

>>> import ranklens
>>> ranklens.ndcg_score([[10, 0, 0, 1, 5]], [[.1, .2, .3, 4, 70]])  # doctest: +ELLIPSIS
0.69...
"""

from . import stats
from ._integrations.querytable import QueryTable
from ._integrations.stages import two_stage
from ._version import __version__
from .compare import Comparison, PairwiseComparison, compare
from .conventions import CONVENTIONS, Convention, get_convention
from .data import Judgments, Rankings, as_judgments, as_rankings
from .errors import (
    EmptyQueryError,
    FormatError,
    InputError,
    InvalidParameterError,
    MissingDependencyError,
    RanklensError,
)
from .evaluate import evaluate
from .evaluate import evaluate_arrays as _evaluate_arrays
from .explain import Explanation, explain
from .fusion import fuse
from .io import read_judgments, read_rankings
from .measures import Measure, parse_measure, parse_measures
from .result import Result
from .sklearn import dcg_score, ndcg_score

# `ranklens.evaluate` is the function, which hides the module of the same name: the module's other public
# function is reached as the documentation spells it, ranklens.evaluate.evaluate_arrays (an attribute of the
# function; `from ranklens.evaluate import evaluate_arrays` works too)
evaluate.evaluate_arrays = _evaluate_arrays  # type: ignore[attr-defined]

__all__ = [
    "CONVENTIONS",
    "Comparison",
    "Convention",
    "EmptyQueryError",
    "Explanation",
    "FormatError",
    "InputError",
    "InvalidParameterError",
    "Judgments",
    "Measure",
    "MissingDependencyError",
    "PairwiseComparison",
    "QueryTable",
    "Rankings",
    "RanklensError",
    "Result",
    "__version__",
    "as_judgments",
    "as_rankings",
    "compare",
    "dcg_score",
    "evaluate",
    "explain",
    "fuse",
    "get_convention",
    "ndcg_score",
    "parse_measure",
    "parse_measures",
    "read_judgments",
    "read_rankings",
    "stats",
    "two_stage",
]
