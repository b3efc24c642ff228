"""Credit rules of interleaving, per impression, vectorised over a log's rows (no loop over impressions).

* team draft (and team-draft multileaving): a team's credit is the number of clicks on its items;
  a ranker beats another on an impression when its credit is larger.
* balanced: let ``d`` be the lowest clicked item and ``k = min(rank_a(d), rank_b(d))`` (an item
  absent from a list has no rank there); ranker ``a``'s credit is the number of clicked items in its own
  top ``k``, ``b``'s likewise (Joachims 2003; Chapelle et al. 2012).
* probabilistic (Hofmann et al. 2011): given the shown list, the assignment of each position to a
  ranker is independent of the others, with ``P(position i came from ranker j) = p_ji / sum_m p_mi``
  (``p_ji`` ranker ``j``'s probability of drawing the item there; the uniform draw of a ranker cancels).
  Two rankers: ``a`` beats ``b`` when, marginalised over every assignment, ``P(a gets more clicks) >
  P(b gets more clicks)`` (Hofmann's expected outcome is their difference), computed exactly by a
  convolution over the clicked positions. More than two: ranker ``i`` beats ``j`` when its expected
  number of clicks is larger (Schuth et al. 2015), which is exact here too (no sampled assignments).
  A difference under :data:`TIE_TOLERANCE` is a tie (rounding).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .interleaving_log import Log

__all__ = ["TIE_TOLERANCE", "Credits", "credits"]

#: Probabilistic interleaving: outcomes closer than this are ties (the exact values are equal).
TIE_TOLERANCE = 1e-12


@dataclass(frozen=True)
class Credits:
    """Per impression: each team's credit, its clicks, and (two probabilistic teams) P(each beats the other)."""

    credit: np.ndarray  # (impressions, teams) float: clicks credited (probabilistic: expected)
    clicks: np.ndarray  # (impressions,) int64
    beats: np.ndarray | None = None  # (impressions, 2): P(team 0 beats 1), P(team 1 beats 0)

    def outcome(self, i: int, j: int) -> np.ndarray:
        """Per impression: 1 when team ``i`` beats team ``j``, -1 when it loses, 0 for a tie (int8)."""
        if self.beats is not None:
            assert {i, j} == {0, 1}
            diff = self.beats[:, i] - self.beats[:, j]
            tol = TIE_TOLERANCE
        else:
            diff = self.credit[:, i] - self.credit[:, j]
            tol = TIE_TOLERANCE * np.maximum(self.clicks, 1)
        return (np.sign(diff) * (np.abs(diff) > tol)).astype(np.int8)


def credits(log: Log, method: str, n_teams: int) -> Credits:
    """Each impression's credits under ``method``'s rule (the log validated for it)."""
    n = log.impressions
    clicked = log.click
    imp = log.impression[clicked].astype(np.int64)
    clicks = np.bincount(imp, minlength=n).astype(np.int64)
    if method == "team_draft":
        assert log.team is not None
        flat = np.bincount(imp * n_teams + log.team[clicked], minlength=n * n_teams)
        return Credits(flat.reshape(n, n_teams).astype(np.float64), clicks)
    if method == "balanced":
        assert log.position is not None and log.ranks is not None
        return Credits(_balanced(imp, log.position[clicked], log.ranks[:, clicked], n), clicks)
    assert log.probabilities is not None
    p = log.probabilities[:, clicked]
    q = p / p.sum(axis=0)  # P(the clicked position came from each ranker | the shown list)
    expected = np.vstack([np.bincount(imp, weights=q[j], minlength=n) for j in range(n_teams)]).T
    if n_teams != 2:
        return Credits(expected, clicks)
    return Credits(expected, clicks, _hofmann(imp, q[0], clicks))


def _balanced(imp: np.ndarray, position: np.ndarray, ranks: np.ndarray, n: int) -> np.ndarray:
    """Balanced interleaving's credits (clicked rows only: their impression, position, ranks in a and b)."""
    out = np.zeros((n, 2))
    if imp.shape[0] == 0:
        return out
    lowest = np.zeros(n, np.int64)
    np.maximum.at(lowest, imp, position)
    last = position == lowest[imp]  # one row per clicked impression (positions are distinct)
    depth = np.full(n, np.inf)
    depth[imp[last]] = np.fmin(ranks[0, last], ranks[1, last])  # NaN (absent) never the minimum
    for j in range(2):
        inside = ranks[j] <= depth[imp]  # NaN: not in this list, never inside
        out[:, j] = np.bincount(imp, weights=inside, minlength=n)
    return out


def _hofmann(imp: np.ndarray, q: np.ndarray, clicks: np.ndarray) -> np.ndarray:
    """P(team 0 gets more clicks), P(team 1 gets more clicks) per impression, over every assignment of the
    clicked positions (independent, team 0 with probability ``q``): the distribution of team 0's clicks
    by convolution, impressions with the same number of clicks at once (a loop over click counts only)."""
    n = clicks.shape[0]
    out = np.zeros((n, 2))
    if imp.shape[0] == 0:
        return out
    order = np.argsort(imp, kind="stable")
    q = q[order]
    start = np.concatenate(([0], np.cumsum(clicks)[:-1]))
    for c in np.unique(clicks[clicks > 0]).tolist():
        rows = np.flatnonzero(clicks == c)
        qs = q[start[rows][:, None] + np.arange(c)]  # (impressions, c)
        dist = np.zeros((rows.shape[0], c + 1))
        dist[:, 0] = 1.0
        for t in range(c):
            step = qs[:, t:t + 1]
            moved = dist[:, :t + 1] * step
            dist[:, :t + 1] *= 1.0 - step
            dist[:, 1:t + 2] += moved
        m = np.arange(c + 1)
        out[rows, 0] = dist[:, 2 * m > c].sum(axis=1)
        out[rows, 1] = dist[:, 2 * m < c].sum(axis=1)
    return out
