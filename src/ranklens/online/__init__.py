"""Online experiments on rankings: a simulator with known truth, click models, A/B tests on ranking measures,
interleaving and multileaving.

See ``docs/experiments.md`` and ``docs/interleaving.md``. Every function draws or computes with numpy in bulk;
scipy and pandas are imported only where a function needs them.

>>> from ranklens import online
>>> sim = online.simulate({"control": 1.0, "treatment": 0.5}, n_users=500, n_queries=20, seed=0)
>>> sorted(set(sim.events.column("arm").to_pylist()))
['control', 'treatment']
>>> il = online.interleave(["d1", "d2", "d3"], ["d2", "d4", "d1"], k=3, seed=0)
>>> len(il.items), set(il.teams) <= {"a", "b"}
(3, True)
"""

from __future__ import annotations

from .ab import ABResult, ab_test, srm_test
from .calibration import Calibration, calibrate
from .click_models import ClickModel, click_model
from .interleaving import Interleaving, interleave, multileave
from .interleaving_results import InterleavingOutcome, MultileavingOutcome, interleaving_outcome, multileaving_outcome
from .interleaving_sim import simulate_interleaving
from .measures import OnlineMeasure, is_online, parse_online
from .sequential import AlwaysValid, GroupSequential
from .simulator import Simulation, Truth, simulate

__all__ = [
    "ABResult",
    "AlwaysValid",
    "Calibration",
    "ClickModel",
    "GroupSequential",
    "Interleaving",
    "InterleavingOutcome",
    "MultileavingOutcome",
    "OnlineMeasure",
    "Simulation",
    "Truth",
    "ab_test",
    "calibrate",
    "click_model",
    "interleave",
    "interleaving_outcome",
    "is_online",
    "multileave",
    "multileaving_outcome",
    "parse_online",
    "simulate",
    "simulate_interleaving",
    "srm_test",
]
