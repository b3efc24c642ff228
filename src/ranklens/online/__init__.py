"""Online experiments on rankings: a simulator with known truth, click models, A/B tests on ranking measures.

See ``docs/experiments.md``. Every function draws or computes with numpy in bulk; scipy and pandas are
imported only where a function needs them.

>>> from ranklens import online
>>> sim = online.simulate({"control": 1.0, "treatment": 0.5}, n_users=500, n_queries=20, seed=0)
>>> sorted(set(sim.events.column("arm").to_pylist()))
['control', 'treatment']
"""

from __future__ import annotations

from .ab import ABResult, ab_test, srm_test
from .calibration import Calibration, calibrate
from .click_models import ClickModel, click_model
from .measures import OnlineMeasure, is_online, parse_online
from .sequential import AlwaysValid, GroupSequential
from .simulator import Simulation, Truth, simulate

__all__ = [
    "ABResult",
    "AlwaysValid",
    "Calibration",
    "ClickModel",
    "GroupSequential",
    "OnlineMeasure",
    "Simulation",
    "Truth",
    "ab_test",
    "calibrate",
    "click_model",
    "is_online",
    "parse_online",
    "simulate",
    "srm_test",
]
