"""Counterfactual evaluation from click logs: click models, position bias, off-policy estimators.

See ``docs/counterfactual.md``. A log is one row per served item (session, query, item, rank, click); numpy
arrays throughout, no loop over sessions.

>>> from ranklens import counterfactual
>>> log = {"group_id": [1, 1, 2, 2], "query": ["q"] * 4, "item_id": ["a", "b", "b", "a"],
...        "rank": [1, 2, 1, 2], "click": [1, 0, 1, 1]}
>>> counterfactual.estimate_examination(log, "shuffle").examination[2]
0.5
>>> e = counterfactual.estimate(log, {"q": {"a": 2, "b": 1}}, measure="clicks@1", examination=[1.0, 0.5])
>>> round(e.value, 4)  # a is clicked in both sessions; its exposure is (1 + 0.5) / 2, so 1 / 0.75 each
1.3333
"""

from __future__ import annotations

from ._log import ClickLog, read_log
from .click_models import MODELS, ByRank, FittedClickModel, fit_click_model
from .compare import compare
from .estimate import ESTIMATORS, Estimate, estimate
from .propensity import METHODS, Propensities, estimate_examination
from .slate import SLATE_ESTIMATORS

__all__ = ["ESTIMATORS", "METHODS", "MODELS", "SLATE_ESTIMATORS", "ByRank", "ClickLog", "Estimate",
           "FittedClickModel", "Propensities", "compare", "estimate", "estimate_examination", "fit_click_model",
           "read_log"]
