"""Counterfactual evaluation from click logs: click models, position bias, off-policy estimators.

See ``docs/counterfactual.md``.
"""

from __future__ import annotations

from ._log import ClickLog, read_log
from .click_models import MODELS, ByRank, FittedClickModel, fit_click_model
from .estimate import ESTIMATORS, Estimate, estimate

__all__ = ["ESTIMATORS", "MODELS", "ByRank", "ClickLog", "Estimate", "FittedClickModel", "estimate",
           "fit_click_model", "read_log"]
