"""ranklens: exact, fast ranking evaluation (NDCG and companions) under named conventions.

>>> import ranklens
>>> ranklens.ndcg_score([[10, 0, 0, 1, 5]], [[.1, .2, .3, 4, 70]])  # doctest: +ELLIPSIS
0.69...
"""

import importlib
import sys
import types
import typing

from ._version import __version__
from .errors import (
    EmptyQueryError,
    FormatError,
    InputError,
    InvalidParameterError,
    MissingDependencyError,
    RanklensError,
)

if typing.TYPE_CHECKING:  # the names as type checkers and editors see them; at run time each is imported on first use
    from . import stats
    from ._integrations.querytable import QueryTable
    from ._integrations.stages import two_stage
    from .compare import Comparison, PairwiseComparison, compare
    from .conventions import CONVENTIONS, Convention, get_convention
    from .data import Judgments, Rankings, as_judgments, as_rankings
    from .evaluate import evaluate
    from .explain import Explanation, explain
    from .fusion import fuse
    from .io import read_judgments, read_rankings
    from .measures import Measure, parse_measure, parse_measures
    from .result import Result
    from .sklearn import dcg_score, ndcg_score

#: Each public name and the module defining it, imported when the name is first read, so that ``import ranklens``
#: and ``ranklens eval`` (whose entry point is in this package) load only the modules they use (issue #29).
_WHERE = {
    "stats": ".stats",
    "QueryTable": "._integrations.querytable",
    "two_stage": "._integrations.stages",
    **dict.fromkeys(("Comparison", "PairwiseComparison", "compare"), ".compare"),
    **dict.fromkeys(("CONVENTIONS", "Convention", "get_convention"), ".conventions"),
    **dict.fromkeys(("Judgments", "Rankings", "as_judgments", "as_rankings"), ".data"),
    "evaluate": ".evaluate",
    **dict.fromkeys(("Explanation", "explain"), ".explain"),
    "fuse": ".fusion",
    **dict.fromkeys(("read_judgments", "read_rankings"), ".io"),
    **dict.fromkeys(("Measure", "parse_measure", "parse_measures"), ".measures"),
    "Result": ".result",
    **dict.fromkeys(("dcg_score", "ndcg_score"), ".sklearn"),
}


def __getattr__(name: str) -> typing.Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(where, __name__)
    value: typing.Any = module if name == "stats" else getattr(module, name)
    if name == "evaluate":
        # `ranklens.evaluate` is the function, which hides the module of the same name: the module's other public
        # function is reached as the documentation spells it, ranklens.evaluate.evaluate_arrays (an attribute of
        # the function; `from ranklens.evaluate import evaluate_arrays` works too)
        value.evaluate_arrays = module.evaluate_arrays
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})


class _Package(types.ModuleType):
    """This package's module: a submodule named as the public function it defines (``evaluate``, ``compare``,
    ``explain``), once imported, does not replace that function as the package's attribute (the import system
    binds every submodule to its parent)."""

    def __setattr__(self, name: str, value: typing.Any) -> None:
        if isinstance(value, types.ModuleType) and name in _WHERE and name != "stats":
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

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
