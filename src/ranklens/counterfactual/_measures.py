"""The measures a counterfactual estimate is of, and their weight per target position.

* ``clicks@k`` and ``ctr@k``: the online measures of :mod:`ranklens.online.measures` (the expected clicks in the
  top k of the target when it is shown; over ``min(k, target length)`` for ctr). Additive over positions: under a
  PBM, ``sum_j w_j alpha(d_j)`` with ``w_j = theta_j`` (relative examination; ctr: divided by the length).
* ``click_<measure>@k`` (``click_dcg@10``, ``click_ndcg@10``, ``click_rr``...): a measure of the core
  (:func:`ranklens.evaluate_arrays`) of the target ranking with each session's **relevance estimates** as gains
  (attractiveness on the scale of rank 1: a click over its item's exposure, ``c / rho``). ``click_dcg@k`` is
  additive (``w_j`` = the core's DCG discount of position j, computed by the core); the others are computed per
  session by the core and averaged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidParameterError

__all__ = ["CounterfactualMeasure", "parse_measure", "position_weights"]

_CLICK = re.compile(r"^\s*click_(.+?)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class CounterfactualMeasure:
    """A parsed measure: ``online`` (clicks / ctr) or ``core`` (the core measure's spelling), its cutoff and
    whether it is additive over positions."""

    key: str
    kind: str  # "clicks" | "ctr" | "core"
    core: str | None
    k: int | None
    additive: bool


def parse_measure(measure: str) -> CounterfactualMeasure:
    """The :class:`CounterfactualMeasure` of ``clicks@10``, ``ctr@5``, ``click_ndcg@10``...

    >>> parse_measure("click_dcg@10")
    CounterfactualMeasure(key='click_dcg@10', kind='core', core='dcg@10', k=10, additive=True)
    """
    from ..online.measures import is_online, parse_online

    text = str(measure).strip()
    if is_online(text):
        m = parse_online(text)
        if m.name not in ("clicks", "ctr"):
            raise InvalidParameterError(
                f"measure {text!r}: counterfactual estimates are of measures additive over positions (clicks@k, "
                "ctr@k) or of a core measure on debiased click gains (click_dcg@k, click_ndcg@k...); "
                f"{m.name} depends on the whole click pattern.")
        return CounterfactualMeasure(m.key, m.name, None, m.k, True)
    c = _CLICK.match(text)
    if not c:
        raise InvalidParameterError(f"unknown measure {text!r} for a counterfactual estimate: use clicks@k, ctr@k "
                                    "or click_<measure> (a measure of ranklens on debiased click gains, e.g. "
                                    "click_ndcg@10).")
    core = c.group(1)
    from .._defs.parse import parse_measure as parse_core

    parsed = parse_core(core)  # refuses an unknown measure with the core's own message
    if len(parsed) != 1:
        raise InvalidParameterError(f"measure {text!r}: one measure per estimate; {core!r} names {len(parsed)}.")
    one = parsed[0]
    k = int(one.k) if one.k is not None else None
    additive = one.family == "dcg" and one.gain is None
    return CounterfactualMeasure(f"click_{one.key}", "core", one.key, k, additive)


def position_weights(m: CounterfactualMeasure, k: int, exam: np.ndarray, convention: Any) -> np.ndarray:
    """``w_j`` for positions 1..k of an additive measure (ctr's division by the length is done per query)."""
    if m.kind in ("clicks", "ctr"):
        return exam[:k].astype(np.float64)
    from .._core.evaluate import evaluate_arrays

    # the core's discount of position j: its DCG of a list whose only gain (1) is at position j
    q = np.repeat(np.arange(k), k)
    score = -np.tile(np.arange(k, dtype=np.float64), k)
    gain = (np.repeat(np.arange(k), k) == np.tile(np.arange(k), k)).astype(np.float64)
    res = evaluate_arrays(q, score, gain, [m.core or "dcg"], convention=convention, per_query=True)
    out = np.zeros(k)
    out[np.asarray(res.queries, dtype=np.int64)] = np.asarray(res.values)[:, 0]
    return out
