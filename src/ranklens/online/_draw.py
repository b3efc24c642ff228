"""The simulator's draws: users, their sessions, the lists served and the clicks, all in numpy bulk."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._served import Served
from ._truth import Population

__all__ = ["CHUNK", "draw", "plackett_luce"]

CHUNK = 250_000  # sessions per block of the Plackett-Luce draws (sessions x candidates floats)
_DAY_MS = 86_400_000


def plackett_luce(rng: np.random.Generator, scores: np.ndarray, k: int, temperature: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(order, prefix propensity): per row of ``scores`` (-inf: no candidate) the top ``k`` positions of a
    Plackett-Luce draw (Gumbel-max: argsort of score / temperature + Gumbel noise) and the probability of
    its first ``r`` items for r = 1..k (the product of each choice's softmax over what remained)."""
    s = scores / temperature
    valid = np.isfinite(s)
    top = np.where(valid, s, -np.inf).max(axis=1, keepdims=True)
    weight = np.where(valid, np.exp(s - top), 0.0)
    gumbel = -np.log(-np.log(rng.random(s.shape)))
    key = np.where(valid, s + gumbel, -np.inf)
    order = np.argsort(-key, axis=1, kind="stable")[:, :k]
    chosen = np.take_along_axis(weight, order, axis=1)
    remaining = weight.sum(axis=1, keepdims=True) - np.concatenate(
        [np.zeros((len(s), 1)), np.cumsum(chosen, axis=1)[:, :-1]], axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        step = np.where(chosen > 0, chosen / remaining, 1.0)
    return order, np.cumprod(step, axis=1)


def draw(rng: np.random.Generator, served: Served, model: Any, pop: Population, n_users: int,
         split: np.ndarray, days: int, policy: str, temperature: float
         ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Users (arm, segment, type, sessions, first visit) and sessions (user, query, time, list, clicks, buys)."""
    arm = rng.choice(len(split), size=n_users, p=split)
    segment = rng.choice(len(pop.segments), size=n_users, p=pop.segment_p)
    kind = rng.choice(len(pop.type_p), size=n_users, p=pop.type_p)
    n_sessions = 1 + rng.poisson(pop.extra_sessions[kind])
    span = days * _DAY_MS
    first = np.floor(rng.random(n_users) * span).astype(np.int64)
    users = {"arm": arm, "segment": segment, "type": kind, "sessions": n_sessions, "first": first}
    user = np.repeat(np.arange(n_users), n_sessions)
    n = len(user)
    query = rng.choice(len(pop.query_p), size=n, p=pop.query_p)
    time = first[user] + np.floor(rng.random(n) * (span - first[user])).astype(np.int64)
    heads = np.r_[True, user[1:] != user[:-1]]
    time[heads] = first[user[heads]]  # a user's first session is their first visit
    a = arm[user]
    sessions: dict[str, np.ndarray] = {"user": user, "query": query, "time": time}
    k = served.k
    if policy == "deterministic":
        sessions["items"] = served.items[a, query]
        sessions["grades"] = served.grades[a, query]
    else:
        items = np.full((n, k), -1, dtype=np.int64)
        grades = np.full((n, k), -1, dtype=np.int64)
        prop = np.ones((n, k))
        for lo in range(0, n, CHUNK):
            sl = slice(lo, lo + CHUNK)
            order, p = plackett_luce(rng, served.cand_scores[a[sl], query[sl]], k, temperature)
            items[sl] = np.take_along_axis(served.cand_items[a[sl], query[sl]], order, axis=1)
            grades[sl] = np.take_along_axis(served.cand_grades[a[sl], query[sl]], order, axis=1)
            prop[sl] = p
        prop[grades < 0] = np.nan
        sessions.update(items=items, grades=grades, propensity=prop)
    clicks = np.zeros(sessions["grades"].shape, dtype=bool)
    buys = np.zeros_like(clicks)
    seg = segment[user]
    mult = pop.multiplier[kind[user]]
    for s in range(len(pop.segments)):
        rows = np.flatnonzero(seg == s)
        c, b = model.with_patience(float(pop.patience[s])).sample(sessions["grades"][rows], rng, mult[rows])
        clicks[rows], buys[rows] = c, b
    sessions.update(clicks=clicks, buys=buys)
    return users, sessions
