"""Click logs for the counterfactual tests, drawn with the shared simulator's click models (ranklens.online).

Every expected number of these tests comes from the simulation's known parameters (its examination curve, its
attractiveness per grade, :meth:`ranklens.online.Simulation.truth`) or from a hand calculation in the test.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ranklens import online
from ranklens.counterfactual._log import ClickLog, build_log

ONE_SEGMENT = {"all": (1.0, 1.0)}


def session_log(items: np.ndarray, clicks: np.ndarray, query: np.ndarray, n_queries: int,
                n_items: int) -> ClickLog:
    """A :class:`ClickLog` straight from session arrays (sessions x k item codes, -1 none; clicks; query codes)."""
    valid = items >= 0
    sess, pos = np.nonzero(valid)
    qids = np.asarray([f"q{i}" for i in range(n_queries)], dtype=object)
    iids = np.asarray([f"d{i}" for i in range(n_items)], dtype=object)
    return build_log(sess.astype(np.int64), query[sess].astype(np.int64), items[valid].astype(np.int64),
                     (pos + 1).astype(np.int64), clicks[valid], qids, iids, "the simulated log", True)


def sim_log(sim: Any) -> ClickLog:
    """The simulation's sessions as a :class:`ClickLog` (query ids q0..., item ids d0... as the simulator's)."""
    s = sim.sessions
    return session_log(s["items"], s["clicks"], s["query"], len(sim.served.query_ids), len(sim.served.item_ids))


def target_run(sim: Any, noise: float, seed: int, *, within_logged: bool = False) -> dict[str, dict[str, float]]:
    """A ranking of each query's candidates by grade + noise (``within_logged``: only the control arm's served
    top k, re-ordered: every target item was logged by a deterministic logger)."""
    rng = np.random.default_rng(seed)
    sv = sim.served
    items = sv.items[0] if within_logged else sv.cand_items[0]
    grades = sv.grades[0] if within_logged else sv.cand_grades[0]
    score = grades + noise * rng.standard_normal(grades.shape)
    return {str(q): {str(sv.item_ids[i]): float(x) for i, x in zip(items[qi], score[qi]) if i >= 0}
            for qi, q in enumerate(sv.query_ids)}


def randomised_log(exam: list[float], *, sessions: int, queries: int, candidates: int, k: int, design: str,
                   seed: int, kind: str = "pbm") -> dict[str, np.ndarray]:
    """A log of randomised traffic drawn from ``online.click_model(kind, examination=exam)``.

    ``design``: "shuffle" (k random candidates in random order), "swap" (the query's fixed top k, ranks 1 and a
    random partner 2..k swapped on a coin flip; the partner in column ``partner``), "rankers" (each session one
    of three noisy rankers of the query: the same pairs at several ranks, for intervention harvesting).
    """
    rng = np.random.default_rng(seed)
    cm = online.click_model(kind, examination=exam) if kind == "pbm" else online.click_model(kind)
    grades = rng.choice(5, size=(queries, candidates), p=[0.5, 0.25, 0.13, 0.08, 0.04])
    q = rng.integers(0, queries, sessions)
    out: dict[str, np.ndarray] = {}
    if design == "shuffle":
        lists = np.argsort(rng.random((sessions, candidates)), axis=1)[:, :k]
    elif design == "rankers":
        scores = grades[None, :, :] + 1.5 * rng.standard_normal((3, queries, candidates))
        orders = np.argsort(-scores, axis=2)[:, :, :k]
        lists = orders[rng.integers(0, 3, sessions), q]
    else:
        base = np.argsort(-(grades + 0.5 * rng.standard_normal(grades.shape)), axis=1)[:, :k][q]
        partner = rng.integers(2, k + 1, sessions)
        flip = np.flatnonzero(rng.random(sessions) < 0.5)
        lists = base.copy()
        lists[flip, 0], lists[flip, partner[flip] - 1] = base[flip, partner[flip] - 1], base[flip, 0]
        out["partner"] = np.repeat(partner, k)
    g = np.take_along_axis(grades[q], lists, axis=1)
    clicks, _ = cm.sample(g, rng)
    out.update({"group_id": np.repeat(np.arange(sessions), k), "query": np.repeat(q, k),
                "item_id": (lists + q[:, None] * candidates).ravel(), "rank": np.tile(np.arange(1, k + 1), sessions),
                "click": clicks.ravel()})
    return out
