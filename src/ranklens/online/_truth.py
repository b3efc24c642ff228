"""Exact expectations of per-list measures under a simulated experiment's model (no sampling).

A session of a user of segment ``s`` and type ``t`` asks query ``q`` (probability ``query_p[q]``) and sees
the arm's list of that query; its clicks follow the click model of segment ``s`` with the attractiveness
multiplier of type ``t``. For a measure ``v`` (a list may have no value: ``valued``), the moments of one
session are::

    P(valued),  E[v * valued],  E[v**2 * valued]        per (segment, type, query)

computed in closed form for the online measures' first moments and otherwise by enumerating the click
patterns of a list (2**L patterns, or 3**L when purchases change the value: none, click, click and
purchase) with their exact probabilities (:meth:`ClickModel.pattern_probability`) and the value of each
pattern computed by the core (:func:`ranklens.evaluate_arrays`) or by :mod:`ranklens.online.measures`.

An arm's value is the ratio of expected sums over units (the estimand of :func:`ranklens.online.ab_test`)::

    sum_{s,t} w_s w_t E[N | t] sum_q query_p[q] E[v * valued]  /  (the same with P(valued))

with ``E[N | t]`` the mean number of sessions of a type-``t`` user.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidParameterError
from .measures import OnlineMeasure, expected_values, is_online, parse_online, pattern_values

__all__ = ["MAX_PATTERNS", "Gains", "Population", "linearised", "list_weight", "session_moments", "unit_moments"]

#: The most click patterns of one list enumerated for an exact expectation.
MAX_PATTERNS = 1 << 16
_CHUNK = 1 << 22  # lists x patterns per block of the enumeration


@dataclass(frozen=True, eq=False)
class Population:
    """Who the users are: segments (share, patience), latent types (share, attractiveness multiplier, mean
    number of sessions beyond the first) and the queries they ask (probabilities)."""

    segments: tuple[str, ...]
    segment_p: np.ndarray
    patience: np.ndarray
    type_p: np.ndarray
    multiplier: np.ndarray
    extra_sessions: np.ndarray
    query_p: np.ndarray

    def sessions_mean(self) -> np.ndarray:
        """E[N | type]: 1 + Poisson(extra_sessions)."""
        return 1.0 + self.extra_sessions

    def sessions_square(self) -> np.ndarray:
        """E[N**2 | type]."""
        lam = self.extra_sessions
        return lam + (1.0 + lam) ** 2


@dataclass(frozen=True)
class Gains:
    """How a served item's outcome becomes its gain for the core measures: ``judged`` (its grade), or the
    attribution of its labels: ``click`` (clicked, not bought) and ``buy`` (clicked and bought)."""

    judged: bool
    click: float = 1.0
    buy: float = 1.0


def _patterns(states: int, length: int) -> np.ndarray:
    """Every pattern of ``length`` positions with values 0..states-1 (rows)."""
    n = states ** length
    if n > MAX_PATTERNS:
        raise InvalidParameterError(
            f"an exact expectation over lists of {length} items needs {states}**{length} = {n} outcome patterns per "
            f"list, more than {MAX_PATTERNS}: simulate shorter lists (k) for this measure.")
    return (np.arange(n)[:, None] // states ** np.arange(length)) % states


def _core_pattern_values(keys: Sequence[str], states: np.ndarray, gains: Gains, convention: Any
                         ) -> np.ndarray:
    """Values (patterns x keys, NaN: no value) of core measures of lists whose gains follow the patterns."""
    from ..evaluate import evaluate_arrays

    n, length = states.shape
    gain = np.where(states == 2, gains.buy, np.where(states == 1, gains.click, 0.0))
    res = evaluate_arrays(np.repeat(np.arange(n), length), np.tile(-np.arange(length, dtype=np.float64), n),
                          gain.ravel(), list(keys), convention=convention, per_query=True)
    out = np.full((n, len(keys)), np.nan)
    out[np.asarray(res.queries, dtype=np.int64)] = res.values
    return _transformed(keys, out)


def _transformed(keys: Sequence[str], values: np.ndarray) -> np.ndarray:
    """Values on the scale of their aggregate's mean (logarithms for a geometric mean), NaN kept."""
    from ..monitor.reports.aggregates import StoreAggregate

    out = values.copy()
    for j, k in enumerate(keys):
        agg = StoreAggregate.of(k)
        if agg.kind == "geometric":
            ok = ~np.isnan(out[:, j])
            out[ok, j] = agg.transform(out[ok, j])
    return out


def list_weight(key: str, length: int) -> float:
    """A list's weight in the aggregate of ``key`` (its items up to the cutoff for ``gauc``, else 1)."""
    from ..monitor.reports.aggregates import StoreAggregate

    if is_online(key):
        return 1.0
    w = StoreAggregate.of(key).weights(np.array([float(length)]))
    return 1.0 if w is None else float(w[0])


def _judged_values(keys: Sequence[str], grades: np.ndarray, convention: Any) -> np.ndarray:
    """Values (lists x keys) of core measures of lists judged by their grades (-1: no item)."""
    from ..evaluate import evaluate_arrays

    n, width = grades.shape
    ok = grades >= 0
    q = np.broadcast_to(np.arange(n)[:, None], grades.shape)[ok]
    pos = np.broadcast_to(np.arange(width, dtype=np.float64), grades.shape)[ok]
    res = evaluate_arrays(q, -pos, grades[ok].astype(np.float64), list(keys), convention=convention,
                          per_query=True)
    out = np.full((n, len(keys)), np.nan)
    out[np.asarray(res.queries, dtype=np.int64)] = res.values
    return _transformed(keys, out)


def _enumerated(model: Any, grades: np.ndarray, mult: float, values: np.ndarray, states: np.ndarray
                ) -> np.ndarray:
    """(lists x keys x 3) moments of lists of one length from the values of each pattern (patterns x keys)."""
    length = states.shape[1]
    clicks2 = _patterns(2, length).astype(bool)
    click_index = ((states >= 1) * (1 << np.arange(length))).sum(axis=1)
    valued = ~np.isnan(values)
    v = np.where(valued, values, 0.0)
    stacked = np.stack([valued.astype(np.float64), v, v * v], axis=2)  # patterns x keys x 3
    out = np.zeros((grades.shape[0], values.shape[1], 3))
    step = max(1, _CHUNK // len(states))
    for lo in range(0, grades.shape[0], step):
        g = grades[lo: lo + step]
        p = model.pattern_probability(g, clicks2, np.full(len(g), mult))[:, click_index]
        if states.max() == 2:  # purchases matter: the buy factors of clicked positions
            b = model.purchase_probability(g)[:, None, :]
            f = np.where(states[None] == 2, b, np.where(states[None] == 1, 1.0 - b, 1.0))
            p = p * np.prod(f, axis=2)
        out[lo: lo + step] = np.einsum("lp,pkm->lkm", p, stacked)
    return out


def session_moments(pop: Population, model: Any, grades: np.ndarray, keys: Sequence[str], *, gains: Gains,
                    convention: Any, second: bool = False) -> np.ndarray:
    """Moments (segments x types x queries x keys x 3) of one session on lists ``grades`` (queries x L)."""
    online = [is_online(k) for k in keys]
    n_s, n_t, n_q = len(pop.segments), len(pop.type_p), grades.shape[0]
    out = np.zeros((n_s, n_t, n_q, len(keys), 3))
    lengths = (grades >= 0).sum(axis=1)
    core = [k for k, o in zip(keys, online) if not o]
    core_i = [i for i, o in enumerate(online) if not o]
    if core and gains.judged:  # deterministic per list
        v = _judged_values(core, grades, convention)
        ok = ~np.isnan(v)
        w = np.where(ok, v, 0.0)
        out[:, :, :, core_i] = np.stack([ok.astype(np.float64), w, w * w], axis=2)[None, None]
    enum = [i for i, o in enumerate(online) if (o and second) or (not o and not gains.judged)]
    closed = [i for i, o in enumerate(online) if o and not second]
    tables = {int(n): _pattern_table(keys, enum, int(n), gains, convention, online) for n in np.unique(lengths)
              } if enum else {}
    for s in range(n_s):
        m = model.with_patience(float(pop.patience[s]))
        for t in range(n_t):
            mult = float(pop.multiplier[t])
            for i in closed:
                ev = expected_values(parse_online(keys[i]), m, grades, np.full(n_q, mult))
                out[s, t, :, i] = np.stack([np.ones(n_q), ev, np.full(n_q, np.nan)], axis=1)
            for length, (states, values) in tables.items():
                rows = np.flatnonzero(lengths == length)
                out[s, t, rows[:, None], np.asarray(enum)[None, :]] = _enumerated(
                    m, grades[rows, :length], mult, values, states)
    for i, k in enumerate(keys):  # a weighted mean (gauc): each list weighs its items up to the cutoff
        w = np.array([list_weight(k, int(n)) for n in lengths])
        if (w != 1).any():
            out[:, :, :, i, :2] *= w[None, None, :, None]
    return out


def _pattern_table(keys: Sequence[str], enum: Sequence[int], length: int, gains: Gains, convention: Any,
                   online: Sequence[bool]) -> tuple[np.ndarray, np.ndarray]:
    """The patterns of one list length and the value of each enumerated measure on each."""
    buys_matter = any(online[i] and parse_online(keys[i]).name == "purchases" for i in enum) or any(
        not online[i] and not gains.judged and gains.buy != gains.click for i in enum)
    states = _patterns(3 if buys_matter else 2, length)
    values = np.full((len(states), len(enum)), np.nan)
    core = [j for j, i in enumerate(enum) if not online[i]]
    if core:
        if gains.judged:
            raise InvalidParameterError("second moments of judged measures are computed without patterns.")
        values[:, core] = _core_pattern_values([keys[enum[j]] for j in core], states, gains, convention)
    for j, i in enumerate(enum):
        if online[i]:
            m: OnlineMeasure = parse_online(keys[i])
            values[:, j] = pattern_values(m, states >= 1, states == 2, length)
    return states, values


def unit_moments(pop: Population, moments: np.ndarray, segment: int | None = None) -> np.ndarray:
    """Expected per-unit sums (keys x 3) over users: weights ``w_s w_t E[N|t]`` and query probabilities."""
    w = pop.segment_p[:, None] * (pop.type_p * pop.sessions_mean())[None, :]
    if segment is not None:
        keep = np.zeros(len(pop.segments))
        keep[segment] = 1.0
        w = w * keep[:, None] / pop.segment_p[segment]
    return np.einsum("st,q,stqkm->km", w, pop.query_p, moments)


def linearised(pop: Population, moments: np.ndarray, value: float) -> tuple[np.ndarray, float, float]:
    """For one measure's session moments (segments x types x queries x 3) and an arm's value ``M``: the mean
    per session of ``w = (v - M) * valued`` per (segment, type), and over units ``Var(mu)`` and ``Var(l)`` of
    the linearised unit outcome ``l = sum over sessions of w`` and of its part ``mu = N * E[w | s, t]``
    explained by the unit's segment, type and number of sessions."""
    p1, ev, ev2 = (np.einsum("q,stq->st", pop.query_p, moments[..., j]) for j in range(3))
    m1 = ev - value * p1
    ew2 = ev2 - 2 * value * ev + value * value * p1
    w = pop.segment_p[:, None] * pop.type_p[None, :]
    en, en2 = pop.sessions_mean()[None, :], pop.sessions_square()[None, :]
    var_mu = float((w * en2 * m1 ** 2).sum() - ((w * en * m1).sum()) ** 2)
    var_l = float((w * (en * (ew2 - m1 ** 2) + en2 * m1 ** 2)).sum() - ((w * en * m1).sum()) ** 2)
    return m1, var_mu, var_l
