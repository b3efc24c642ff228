"""Interleaving logs of a simulated experiment (:func:`ranklens.online.simulate`): the same users, sessions,
queries and click model as its A/B log, each session shown the interleaving of two arms' lists instead of
its own arm's list.

Team draft and balanced interleaving can show only a few lists for a pair of lists (every sequence of their
coin flips: :func:`ranklens.online.interleaving.every_interleaving`), so each query's lists are enumerated
with their probabilities once and each session draws one (a loop over queries, not sessions). Probabilistic
interleaving draws each session's list on its own (about 0.1 ms a session). The clicks are drawn in bulk by the
simulation's click model with each user's segment (patience) and type (attractiveness multiplier), as the A/B
log's are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidParameterError
from .interleaving import Interleaving, build, check_k, check_method, check_tau, every_interleaving, make_rng

if TYPE_CHECKING:
    from .simulator import Simulation

__all__ = ["simulate_interleaving"]


def _arms(sim: Simulation, a: str | None, b: str | None) -> tuple[str, str]:
    if len(sim.arms) < 2 and (a is None or b is None):
        raise InvalidParameterError("the simulation has one arm; interleaving compares two (give `a` and `b`).")
    a = sim.arms[1] if a is None else a
    b = sim.arms[0] if b is None else b
    for name, arm in (("a", a), ("b", b)):
        if arm not in sim.arms:
            raise InvalidParameterError(f"`{name}` = {arm!r} is not an arm of the simulation "
                                        f"({', '.join(sim.arms)}).")
    return a, b


def simulate_interleaving(sim: Simulation, *, a: str | None = None, b: str | None = None,
                          method: str = "team_draft", k: int | None = None, tau: float | None = None,
                          seed: Any = None) -> Any:
    """The interleaving log of ``sim``'s sessions: arm ``a``'s list against arm ``b``'s in every session.

    Parameters
    ----------
    sim : Simulation
        From :func:`ranklens.online.simulate` with the deterministic policy (each arm one list per query).
    a, b : str, optional
        The arms compared: ``a`` (default: the second arm, the treatment) against ``b`` (default: the control).
        Their names are the team labels of the log.
    method : {"team_draft", "balanced", "probabilistic"}, default="team_draft"
    k : int, optional
        Length of the shown lists (default: the simulation's ``k``).
    tau : float, optional
        Probabilistic interleaving's softmax exponent (default 3).
    seed : None, int or numpy.random.Generator
        The interleavings and the clicks.

    Returns
    -------
    pyarrow.Table
        One row per shown item, read by :func:`~ranklens.online.interleaving_outcome` with
        ``method=method, teams=(a, b)``: ``impression`` (the session), ``day`` (of the session, 0 the first
        day: the looks of a sequential design), ``user_id``, ``query_id``,
        ``position``, ``item_id``, ``team`` (the arm that placed it), ``click``, ``grade``, and
        ``rank_<arm>`` (balanced) or ``prob_<arm>`` (probabilistic).

    Examples
    --------
    >>> from ranklens import online
    >>> sim = online.simulate({"control": 1.5, "treatment": 0.5}, n_users=400, n_queries=20, seed=0)
    >>> log = online.simulate_interleaving(sim, seed=1)
    >>> r = online.interleaving_outcome(log, teams=("treatment", "control"))
    >>> r.impressions == len(sim.sessions["user"]), r.delta > 0
    (True, True)
    """
    method = check_method(method)
    tau = check_tau(tau, method)
    if sim.policy != "deterministic":
        raise InvalidParameterError(f"the simulation's arms draw their lists by the {sim.policy!r} policy; "
                                    "interleaving needs each arm's one list per query (policy='deterministic').")
    a, b = _arms(sim, a, b)
    if a == b:
        raise InvalidParameterError(f"`a` and `b` are the same arm ({a!r}).")
    served = sim.served
    k = served.k if k is None else check_k(k)
    rng = make_rng(seed)
    ia, ib = sim.arms.index(a), sim.arms.index(b)
    lists = [{a: [int(x) for x in served.items[ia, q] if x >= 0], b: [int(x) for x in served.items[ib, q] if x >= 0]}
             for q in range(served.items.shape[1])]
    query = sim.sessions["query"]
    n = query.shape[0]
    items = np.full((n, k), -1, dtype=np.int64)
    team_b = np.zeros((n, k), dtype=bool)
    extra = np.full((n, 2, k), np.nan)
    if method == "probabilistic":  # each session's own draws, one at a time
        for i, q in enumerate(query.tolist()):
            _put(build(lists[q], method, k, rng, tau), i, items, team_b, extra, b)
    else:  # the few lists each query can show, then one drawn per session: a loop over queries only
        order = np.argsort(query, kind="stable")
        bounds = np.searchsorted(query[order], np.arange(len(lists) + 1))
        for q in np.flatnonzero(np.diff(bounds)).tolist():
            every = every_interleaving(lists[q], method, k)
            rows = order[bounds[q]:bounds[q + 1]]
            pick = rng.choice(len(every), size=rows.shape[0], p=[p for _, p in every])
            for j, (il, _) in enumerate(every):
                _put(il, rows[pick == j], items, team_b, extra, b)
    grades = np.where(items >= 0, served.item_grade[np.maximum(items, 0)], -1)
    clicks = _clicks(sim, grades, rng)
    return _table(sim, method, (a, b), items, team_b, extra, grades, clicks)


def _put(il: Interleaving, rows: Any, items: np.ndarray, team_b: np.ndarray, extra: np.ndarray, b: str) -> None:
    """Write one interleaving into the sessions ``rows`` (an index or an index array)."""
    m = len(il.items)
    items[rows, :m] = il.items
    team_b[rows, :m] = [t == b for t in il.teams]
    side = il.ranks if il.ranks is not None else il.probabilities
    if side is not None:
        extra[rows, :, :m] = side


def _clicks(sim: Simulation, grades: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Clicks on the shown lists by the simulation's model, with each user's patience and multiplier."""
    user = sim.sessions["user"]
    seg = sim.users["segment"][user]
    mult = sim.population.multiplier[sim.users["type"][user]]
    clicks = np.zeros(grades.shape, dtype=bool)
    for s, patience in enumerate(sim.population.patience):
        rows = np.flatnonzero(seg == s)
        clicks[rows] = sim.model.with_patience(float(patience)).sample(grades[rows], rng, mult[rows])[0]
    return clicks


def _table(sim: Simulation, method: str, teams: tuple[str, str], items: np.ndarray, team_b: np.ndarray,
           extra: np.ndarray, grades: np.ndarray, clicks: np.ndarray) -> Any:
    import pyarrow as pa

    from ..monitor.simulate.columns import arrow_codes, arrow_ids, arrow_numbers

    valid = items >= 0
    sess, pos = np.nonzero(valid)
    cols: dict[str, Any] = {
        "impression": arrow_numbers(sess.astype(np.int64)),
        "day": arrow_numbers((sim.sessions["time"][sess] // 86_400_000).astype(np.int64)),
        "user_id": arrow_ids("u", sim.sessions["user"][sess].astype(np.int64)),
        "query_id": pa.array(sim.served.query_ids, pa.string()).take(arrow_numbers(sim.sessions["query"][sess])),
        "position": arrow_numbers((pos + 1).astype(np.int64)),
        "item_id": pa.array(sim.served.item_ids, pa.string()).take(arrow_numbers(items[valid])),
        "team": arrow_codes(team_b[valid].astype(np.int64), list(teams)),
        "click": pa.array(clicks[valid]),
        "grade": arrow_numbers(grades[valid].astype(np.int64)),
    }
    prefix = {"balanced": "rank", "probabilistic": "prob"}.get(method)
    if prefix is not None:
        for j, t in enumerate(teams):
            cols[f"{prefix}_{t}"] = pa.array(extra[:, j][valid], pa.float64(), from_pandas=True)  # NaN: null
    return pa.table(cols)
