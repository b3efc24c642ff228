"""The simulated world: served lists, their items with latent grades, scores and outcomes, and late labels.

Every draw is in bulk with numpy from one generator, in the order :func:`ranklens.monitor.simulate.simulate`
calls these functions (lists, items, label rows): a seed gives the same world. ``docs/simulator.md`` explains
the distributions.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .broken import broken_scores, popular_items
from .checks import epoch_ms

__all__ = ["BADENV", "CATALOGUE", "DAY_MS", "ENVIRONMENTS", "LABELS", "PROD", "SLICES", "TRAIN", "VALID", "Items",
           "Labels", "Lists", "Settings", "draw_items", "draw_label_rows", "draw_lists"]

#: Outcome labels, from the weakest to the strongest.
LABELS: tuple[str, ...] = ("click", "favorite", "buy")

#: Slice columns and their values with their shares of the traffic.
SLICES: dict[str, dict[str, float]] = {
    "country": {"US": 0.35, "BR": 0.15, "DE": 0.15, "IN": 0.20, "JP": 0.15},
    "device": {"mobile": 0.60, "desktop": 0.32, "tablet": 0.08},
    "query_type": {"head": 0.50, "torso": 0.30, "tail": 0.20},
}

#: The environments, by code (``TRAIN``...); "staging" only in malformed rows (``BADENV``).
ENVIRONMENTS = ("training", "validation", "production", "staging")
TRAIN, VALID, PROD, BADENV = 0, 1, 2, 3
# (model, version, score noise): the second model is added by ``second_model=True``
_SERVING = (("ranker", "v1", 0.75), ("ranker", "v2", 0.60), ("related", "v1", 0.90))
_RANKER_V1, _RANKER_V2, _RELATED = 0, 1, 2
# latent grade 0..3 of an item per query type (head queries have more good items than tail ones)
_GRADE_P = np.array([[0.45, 0.27, 0.17, 0.11], [0.55, 0.25, 0.13, 0.07], [0.68, 0.19, 0.09, 0.04]])
_TAIL_NOISE = 1.35  # the score noise of tail queries is this much larger
# outcome probabilities by grade: click, favorite (needs a click), buy (needs a click)
_P_CLICK = np.array([0.03, 0.70, 0.85, 0.95])
_P_FAVORITE = np.array([0.0, 0.03, 0.60, 0.80])
_P_BUY = np.array([0.0, 0.0, 0.08, 0.60])
# traffic by hour of day (UTC), a smooth daily cycle peaking in the afternoon
_HOURLY = 1.0 + 0.6 * np.sin(2 * np.pi * (np.arange(24) - 9) / 24)
#: Items in the catalogue: a prime, so (start + j * step) mod it gives distinct items within a list.
CATALOGUE = 100_003
DAY_MS = 86_400_000


def _draw_slices(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    out = {}
    for col, shares in SLICES.items():
        p = np.array(list(shares.values()))
        out[col] = np.searchsorted(np.cumsum(p / p.sum())[:-1], rng.random(n), side="right").astype(np.int8)
    return out


def _served_times(rng: np.random.Generator, day_start_ms: np.ndarray) -> np.ndarray:
    """Serving time of each group within its day: the daily cycle, never in the day's last second."""
    p = _HOURLY / _HOURLY.sum()
    n = int(day_start_ms.shape[0])
    hour = np.searchsorted(np.cumsum(p)[:-1], rng.random(n), side="right")
    within = np.minimum(hour * 3_600_000 + (rng.random(n) * 3_600_000).astype(np.int64), DAY_MS - 1001)
    return day_start_ms + within


class Lists:
    """One record per served list (flat arrays)."""

    def __init__(self, env: np.ndarray, serving: np.ndarray, ts: np.ndarray, length: np.ndarray,
                 slices: dict[str, np.ndarray]):
        self.env = env.astype(np.int8)
        self.serving = serving.astype(np.int8)
        self.ts = ts.astype(np.int64)
        self.length = length.astype(np.int64)
        self.slices = slices

    @staticmethod
    def concat(parts: Sequence[Lists]) -> Lists:
        return Lists(
            np.concatenate([p.env for p in parts]), np.concatenate([p.serving for p in parts]),
            np.concatenate([p.ts for p in parts]), np.concatenate([p.length for p in parts]),
            {c: np.concatenate([p.slices[c] for p in parts]) for c in SLICES},
        )


@dataclass(frozen=True)
class Settings:
    """The arguments of :func:`simulate`, checked, with their defaults resolved."""

    start_day: _dt.datetime
    days: int
    groups_per_day: int
    lo: int
    hi: int
    seed: int
    decay: str | None
    decay_day: _dt.datetime
    spec: dict[str, str]
    late_fraction: float
    max_delay_hours: float
    n_train: int
    n_valid: int
    v2_day: _dt.datetime
    v2_share: float
    second_model: bool
    malformed: float
    format: str

    @property
    def start_ms(self) -> int:
        return epoch_ms(self.start_day)


def draw_lists(rng: np.random.Generator, a: Settings) -> Lists:
    """The served lists: training, validation, then production (the models' shares, v2 from its day)."""
    start_ms = a.start_ms
    n_prod = a.days * a.groups_per_day
    day_of = np.repeat(np.arange(a.days, dtype=np.int64), a.groups_per_day)
    prod_ts = _served_times(rng, start_ms + day_of * DAY_MS)
    u = rng.random(n_prod)
    serving = np.full(n_prod, _RANKER_V1, dtype=np.int8)
    serving[(prod_ts >= epoch_ms(a.v2_day)) & (rng.random(n_prod) < a.v2_share)] = _RANKER_V2
    if a.second_model:
        serving[u < 0.3] = _RELATED
    servings = [_RANKER_V1, _RANKER_V2] + ([_RELATED] if a.second_model else [])
    prod = Lists(np.full(n_prod, PROD), serving, prod_ts, rng.integers(a.lo, a.hi + 1, n_prod),
                   _draw_slices(rng, n_prod))
    parts = []
    for env, n, first, span in ((TRAIN, a.n_train, start_ms - 7 * DAY_MS, 6 * DAY_MS),
                                (VALID, a.n_valid, start_ms - DAY_MS, DAY_MS - 1000)):
        m = n * len(servings)
        parts.append(Lists(np.full(m, env), np.repeat(np.array(servings), n),
                             first + (rng.random(m) * span).astype(np.int64), rng.integers(a.lo, a.hi + 1, m),
                             _draw_slices(rng, m)))
    return Lists.concat([*parts, prod])  # training, validation, production


@dataclass
class Items:
    """The ranking rows, list by list in served order (flat arrays), and the lists the decay touches."""

    starts: np.ndarray  # first row of each list
    ends: np.ndarray  # one past its last row
    row_g: np.ndarray  # the list of each row
    item: np.ndarray
    grade: np.ndarray
    bits: np.ndarray  # outcomes: 1 click, 2 favorite, 4 buy
    score: np.ndarray
    rank: np.ndarray
    hit: np.ndarray  # per list: the decay touches it

    @property
    def n_rows(self) -> int:
        return int(self.row_g.shape[0])


def draw_items(rng: np.random.Generator, a: Settings, g: Lists) -> Items:
    """The items of each list with their grades, scores and outcomes, ordered by decreasing score."""
    n_groups = int(g.env.shape[0])
    ends = np.cumsum(g.length)
    starts = ends - g.length
    n_rows = int(ends[-1]) if n_groups else 0
    row_g = np.repeat(np.arange(n_groups), g.length)
    pos = np.arange(n_rows) - starts[row_g]
    qtype = g.slices["query_type"][row_g]
    grade = (rng.random(n_rows)[:, None] > np.cumsum(_GRADE_P, axis=1)[qtype, :3]).sum(axis=1).astype(np.int8)
    first_item = rng.integers(0, CATALOGUE, n_groups)
    step = rng.integers(1, CATALOGUE, n_groups)
    item = (first_item[row_g] + pos * step[row_g]) % CATALOGUE
    noise = np.array([s[2] for s in _SERVING])[g.serving[row_g]] * np.where(qtype == 2, _TAIL_NOISE, 1.0)
    score = np.round(grade + noise * rng.standard_normal(n_rows), 6)
    hit = (g.env == PROD) & (g.ts >= epoch_ms(a.decay_day))  # the lists the decay touches
    for col, val in a.spec.items():
        hit &= g.slices[col] == list(SLICES[col]).index(val)
    if a.decay == "broken_scores":  # the label-free case (broken.py): popular items; scores without signal
        item = popular_items(rng, grade, row_g)
        score = broken_scores(rng, score, hit[row_g])
    click = rng.random(n_rows) < _P_CLICK[grade]
    favorite = click & (rng.random(n_rows) < _P_FAVORITE[grade])
    buy = click & (rng.random(n_rows) < _P_BUY[grade])
    bits = (click.astype(np.int8) | (favorite.astype(np.int8) << 1) | (buy.astype(np.int8) << 2))
    # by group, then by decreasing score: one integer key (scores have 6 decimals and stay within +-64)
    desc = np.round((64.0 - np.clip(score, -63.0, 63.0)) * 1e6).astype(np.int64)
    order = np.argsort((row_g.astype(np.int64) << 28) | desc, kind="stable")
    return Items(starts, ends, row_g, item[order], grade[order], bits[order], score[order],
                  (pos + 1).astype(np.int32), hit)


@dataclass
class Labels:
    """The production label rows: one per outcome, stamped when it happened."""

    src: np.ndarray  # the ranking row each comes from
    kind: np.ndarray  # index in LABELS
    ts: np.ndarray
    item: np.ndarray


def draw_label_rows(rng: np.random.Generator, a: Settings, g: Lists, r: Items) -> Labels:
    """One label row per outcome of a production list (before any swap), a share of them on a later day."""
    prod_rows = np.flatnonzero((g.env[r.row_g] == PROD) & (r.bits != 0))
    kind_rows = [prod_rows[(r.bits[prod_rows] >> k) & 1 == 1] for k in range(len(LABELS))]
    lab_src = np.concatenate(kind_rows)
    lab_kind = np.concatenate([np.full(rows.shape[0], k, dtype=np.int8) for k, rows in enumerate(kind_rows)])
    o = np.argsort(lab_src, kind="stable")
    lab_src, lab_kind = lab_src[o], lab_kind[o]
    n_lab = lab_src.shape[0]
    served = g.ts[r.row_g[lab_src]]
    to_midnight = DAY_MS - (served - a.start_ms) % DAY_MS
    late = rng.random(n_lab) < a.late_fraction
    v = rng.random(n_lab)
    on_time = 1 + (v * v * (to_midnight - 1)).astype(np.int64)
    max_delay = round(a.max_delay_hours * 3_600_000)
    later = to_midnight + (v * np.maximum(max_delay - to_midnight, 0)).astype(np.int64)
    # the item the outcome is about, wherever the decay serves it
    return Labels(lab_src, lab_kind, served + np.where(late, later, on_time), r.item[lab_src])
