"""A simulation's log as an Arrow table in the monitoring store's event layout, and each session's measure."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..monitor.simulate.checks import epoch_ms
from ..monitor.simulate.columns import arrow_codes, arrow_ids, arrow_labels, arrow_numbers
from ._truth import Gains
from .measures import is_online, list_values, parse_online

if TYPE_CHECKING:
    from .simulator import Simulation

__all__ = ["EXTRA_COLUMNS", "events_table", "session_values"]

#: Columns of a simulated log beyond the store's event layout.
EXTRA_COLUMNS = ("arm", "user_id", "query", "segment", "pre_period", "grade", "examination", "attractiveness")


def _per_segment(sim: Simulation, fn: str) -> np.ndarray:
    """``model.<fn>(grades, multiplier)`` of every session, with its user's segment and type."""
    s = sim.sessions
    user = s["user"]
    seg = sim.users["segment"][user]
    mult = sim.population.multiplier[sim.users["type"][user]]
    out = np.zeros(s["grades"].shape)
    for i, patience in enumerate(sim.population.patience):
        rows = np.flatnonzero(seg == i)
        out[rows] = getattr(sim.model.with_patience(float(patience)), fn)(s["grades"][rows], mult[rows])
    return out


def events_table(sim: Simulation) -> Any:
    """One row per served item: ``timestamp`` (naive UTC), ``model`` ("ranker"), ``model_version`` (the arm),
    ``environment`` ("production"), ``group_id`` (one per session), ``item_id``, ``rank``, ``relevance`` (the
    grade, only when judged), ``labels`` (``click``, ``buy``), then ``arm``, ``user_id``, ``query`` (the
    session's query id, so that :mod:`ranklens.counterfactual` reads the log as it is), ``segment``,
    ``pre_period`` and the model's truth per row: ``grade``, ``examination`` (P(E_r = 1), exact for that list
    and user), ``attractiveness`` (the item's alpha for that user); with a stochastic policy ``propensity``
    (the probability of the list's first ``rank`` items) and ``list_propensity`` (of the whole list)."""
    import pyarrow as pa

    s, u = sim.sessions, sim.users
    valid = s["items"] >= 0
    sess, pos = np.nonzero(valid)
    user = s["user"][sess]
    t0 = epoch_ms(sim.start.replace(tzinfo=None))
    ts = (t0 + s["time"][sess]).astype(np.int64)
    n = len(sess)
    zeros = np.zeros(n, dtype=np.int64)
    bits = (s["clicks"][valid].astype(np.int8) | (s["buys"][valid].astype(np.int8) << 1)).astype(np.int8)
    cols: dict[str, Any] = {
        "timestamp": pa.Array.from_buffers(pa.timestamp("ms"), n, [None, pa.py_buffer(np.ascontiguousarray(ts))]),
        "model": arrow_codes(zeros, ["ranker"]),
        "model_version": arrow_codes(u["arm"][user], sim.arms),
        "environment": arrow_codes(zeros, ["production"]),
        "group_id": arrow_ids("s", sess.astype(np.int64)),
        "item_id": pa.array(sim.served.item_ids, pa.string()).take(arrow_numbers(s["items"][valid])),
        "rank": arrow_numbers((pos + 1).astype(np.int64)),
    }
    if sim.judged:
        cols["relevance"] = arrow_numbers(s["grades"][valid].astype(np.float64))
    cols["labels"] = arrow_labels(bits, np.ones(n, dtype=bool), ("click", "buy"))
    cols.update({
        "arm": arrow_codes(u["arm"][user], sim.arms),
        "user_id": arrow_ids("u", user.astype(np.int64)),
        "query": pa.array(sim.served.query_ids, pa.string()).take(arrow_numbers(s["query"][sess])),
        "segment": arrow_codes(u["segment"][user], sim.population.segments),
        "pre_period": arrow_numbers(u["pre_period"][user].astype(np.float64)),
        "grade": arrow_numbers(s["grades"][valid].astype(np.int64)),
        "examination": arrow_numbers(_per_segment(sim, "examination_probability")[valid]),
        "attractiveness": arrow_numbers(_per_segment(sim, "alpha")[valid]),
    })
    if "propensity" in s:
        prop = s["propensity"]
        last = np.take_along_axis(prop, (valid.sum(axis=1) - 1)[:, None], axis=1)[:, 0]
        cols["propensity"] = arrow_numbers(prop[valid])
        cols["list_propensity"] = arrow_numbers(last[sess])
    return pa.table(cols)


def session_values(sim: Simulation, measure: str, gains: Gains, convention: Any) -> np.ndarray:
    """The value of ``measure`` for each session (NaN: no value), from the arrays, by ab_test's definitions."""
    s = sim.sessions
    valid = s["items"] >= 0
    sess, pos = np.nonzero(valid)
    if is_online(measure):
        return list_values(parse_online(measure), sess, pos + 1, s["clicks"][valid], s["buys"][valid] &
                           s["clicks"][valid], valid.sum(axis=1))
    from ..evaluate import evaluate_arrays

    if gains.judged:
        gain = s["grades"][valid].astype(np.float64)
    else:
        c, b = s["clicks"][valid], s["buys"][valid] & s["clicks"][valid]
        gain = np.where(b, gains.buy, np.where(c, gains.click, 0.0))
    res = evaluate_arrays(sess, -pos.astype(np.float64), gain, [measure], convention=convention, per_query=True)
    out = np.full(valid.shape[0], np.nan)
    out[np.asarray(res.queries, dtype=np.int64)] = res.values[:, 0]
    return out
