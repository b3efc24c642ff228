"""The outcome of an interleaving (or multileaving) experiment from its click log.

Per impression, each method's own credit rule (:mod:`ranklens.online.interleaving_credit`) says which
ranker won, or a tie; over the impressions (Chapelle, Joachims, Radlinski & Yue 2012):

* ``wins``, ``losses``, ``ties``: impressions where ranker a had more credit than b, less, the same
  (an impression without a click is a tie);
* ``delta = (wins + ties / 2) / impressions - 1/2``: > 0 when a is preferred;
* ``p_value``: two-sided sign test over the impressions with a preference;
* ``ci_low``, ``ci_high``: Tango's score interval for ``delta``
  (:mod:`ranklens.online.interleaving_stats`).

The unit is the impression: every impression is taken as an independent draw. When one user
contributes many impressions, aggregate per user first (one row per user's impression is the
design's assumption, not checked here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidParameterError
from ..stats import check_confidence
from .interleaving import check_method
from .interleaving_credit import Credits, credits
from .interleaving_log import read_log
from .interleaving_sequential import sequential_fields
from .interleaving_stats import sign_test, tango_interval
from .sequential import design_of

__all__ = ["INTERVAL", "InterleavingOutcome", "MultileavingOutcome", "interleaving_outcome", "multileaving_outcome"]

#: The name of the interval given for delta.
INTERVAL = "tango"


@dataclass(frozen=True)
class InterleavingOutcome:
    """Ranker ``teams[0]`` (a) against ``teams[1]`` (b) over the impressions of a log.

    Attributes
    ----------
    method : str
        The credit rule: ``"team_draft"``, ``"balanced"`` or ``"probabilistic"``.
    teams : tuple
        ``(a, b)``: wins are impressions a won.
    impressions, wins, losses, ties : int
        ``wins + losses + ties == impressions``.
    delta : float
        ``(wins + ties / 2) / impressions - 0.5``.
    p_value : float
        Two-sided sign test over the ``wins + losses`` impressions with a preference.
    ci_low, ci_high : float
        Tango's score interval for ``delta`` at ``confidence``.
    confidence : float
    interval : str
        ``"tango"``.
    unit : str
        ``"impression"``.
    sequential : str
        ``"none"``, ``"always_valid"`` or ``"group_sequential (<spending>)"``: then ``p_value``, ``ci_low`` and
        ``ci_high`` are the sequential design's at the last look (:mod:`ranklens.online.interleaving_sequential`)
        and ``interval`` says which (``"always_valid"``: the confidence sequence; ``"repeated"``).
    looks : tuple of dict
        With a sequential design, per look: ``look``, ``impressions``, ``wins``, ``losses``, ``delta``,
        ``p_value``, ``ci_low``, ``ci_high`` so far.
    per_impression : dict of numpy.ndarray
        ``impression`` (ids as given), ``clicks``, ``credit_<team>`` (clicks credited to each team;
        probabilistic: expected over the assignments) and ``outcome`` (1 a won, -1 b won, 0 tie);
        for probabilistic interleaving also ``p_<team>_wins`` (marginalised probability that the team
        got more clicks).
    """

    method: str
    teams: tuple[Any, Any]
    impressions: int
    wins: int
    losses: int
    ties: int
    delta: float
    p_value: float
    ci_low: float
    ci_high: float
    confidence: float
    interval: str = INTERVAL
    unit: str = "impression"
    per_impression: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)
    sequential: str = "none"
    looks: tuple[dict[str, Any], ...] = field(default=(), repr=False, compare=False)

    @property
    def pvalue(self) -> float:
        """``p_value`` under scipy's name."""
        return self.p_value

    def to_dict(self) -> dict[str, Any]:
        """The scalar fields as a dict (JSON-ready)."""
        return {"method": self.method, "team_a": self.teams[0], "team_b": self.teams[1], "unit": self.unit,
                "impressions": self.impressions, "wins": self.wins, "losses": self.losses, "ties": self.ties,
                "delta": self.delta, "p_value": self.p_value, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "confidence": self.confidence, "interval": self.interval, "sequential": self.sequential}


@dataclass(frozen=True)
class MultileavingOutcome:
    """Every pair of rankers of a multileaving log: ``n x n`` matrices indexed like ``teams``.

    ``wins[i, j]`` is the number of impressions where ranker ``i`` beat ranker ``j`` (so ``wins.T`` are
    the losses); ``ties[i, j]`` the impressions where they tied; ``delta``, ``p_value``, ``ci_low``,
    ``ci_high`` as in :class:`InterleavingOutcome` for ``i`` against ``j`` (NaN on the diagonal).
    The p-values are not corrected for the number of pairs: see :func:`ranklens.stats.correct`.
    """

    method: str
    teams: tuple[Any, ...]
    impressions: int
    wins: np.ndarray
    ties: np.ndarray
    delta: np.ndarray
    p_value: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    confidence: float
    interval: str = INTERVAL
    unit: str = "impression"
    per_impression: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    @property
    def pvalue(self) -> np.ndarray:
        """``p_value`` under scipy's name."""
        return self.p_value

    def _index(self, team: Any) -> int:
        for j, t in enumerate(self.teams):
            if t == team:
                return j
        raise InvalidParameterError(f"no team {team!r}; the teams are {', '.join(map(repr, self.teams))}.")

    def pair(self, a: Any, b: Any) -> InterleavingOutcome:
        """Ranker ``a`` against ranker ``b`` (team labels), as an :class:`InterleavingOutcome`."""
        i, j = self._index(a), self._index(b)
        if i == j:
            raise InvalidParameterError(f"`a` and `b` are the same team ({a!r}).")
        return InterleavingOutcome(
            self.method, (self.teams[i], self.teams[j]), self.impressions, int(self.wins[i, j]),
            int(self.wins[j, i]), int(self.ties[i, j]), float(self.delta[i, j]), float(self.p_value[i, j]),
            float(self.ci_low[i, j]), float(self.ci_high[i, j]), self.confidence, self.interval, self.unit)

    def to_pandas(self) -> Any:
        """One row per ordered pair of teams (a, b): the fields of :meth:`InterleavingOutcome.to_dict`."""
        from .._base.deps import require

        pd = require("pandas")
        rows = [self.pair(a, b).to_dict() for a in self.teams for b in self.teams if a != b]
        return pd.DataFrame(rows)


def _check_teams(teams: Any, *, two: bool) -> tuple[Any, ...]:
    if isinstance(teams, (str, bytes)) or not isinstance(teams, (Sequence, np.ndarray)):
        raise InvalidParameterError(f"`teams` must be a list of the team labels; got {teams!r}.")
    out = tuple(teams.tolist() if isinstance(teams, np.ndarray) else teams)
    if len(set(out)) != len(out):
        raise InvalidParameterError(f"`teams` holds a label twice: {out!r}.")
    if two and len(out) != 2:
        raise InvalidParameterError(
            f"`teams` must be two labels (a, b); got {len(out)}. For more rankers use multileaving_outcome.")
    if len(out) < 2:
        raise InvalidParameterError(f"`teams` must hold at least two labels; got {out!r}.")
    return out


def _pairs(cr: Credits, confidence: float) -> tuple[np.ndarray, ...]:
    """wins, ties, delta, p_value, ci_low, ci_high matrices over every pair of teams."""
    n_imp, n = cr.credit.shape
    wins = np.zeros((n, n), np.int64)
    ties = np.zeros((n, n), np.int64)
    for i in range(n):
        for j in range(i + 1, n):
            o = cr.outcome(i, j)
            wins[i, j] = int(np.count_nonzero(o > 0))
            wins[j, i] = int(np.count_nonzero(o < 0))
            ties[i, j] = ties[j, i] = n_imp - wins[i, j] - wins[j, i]
    off = ~np.eye(n, dtype=bool)
    delta = np.full((n, n), np.nan)
    p = np.full((n, n), np.nan)
    lo = np.full((n, n), np.nan)
    hi = np.full((n, n), np.nan)
    delta[off] = (wins[off] + ties[off] / 2.0) / n_imp - 0.5
    p[off] = sign_test(wins[off], wins.T[off])
    t_lo, t_hi = tango_interval(wins[off], wins.T[off], n_imp, confidence)
    lo[off], hi[off] = t_lo / 2.0, t_hi / 2.0
    return wins, ties, delta, p, lo, hi


def _per_impression(ids: np.ndarray, cr: Credits, teams: tuple[Any, ...]) -> dict[str, np.ndarray]:
    out = {"impression": ids, "clicks": cr.clicks}
    for j, t in enumerate(teams):
        out[f"credit_{t}"] = cr.credit[:, j]
    if len(teams) == 2:
        out["outcome"] = cr.outcome(0, 1)
    if cr.beats is not None:
        for j, t in enumerate(teams):
            out[f"p_{t}_wins"] = cr.beats[:, j]
    return out


def _compute(log: Any, method: str, teams: tuple[Any, ...], columns: dict[str, Any],
             confidence: Any) -> tuple[Any, ...]:
    confidence = check_confidence(confidence)
    if method == "balanced" and len(teams) != 2:
        raise InvalidParameterError(f"balanced interleaving has two rankers; `teams` has {len(teams)}.")
    for name in ("impression_col", "team_col", "click_col"):
        if not isinstance(columns[name], str):
            raise InvalidParameterError(f"`{name}` must be a column name; got {columns[name]!r}.")
    lg = read_log(log, method=method, teams=teams, **columns)
    cr = credits(lg, method, len(teams))
    return lg, cr, confidence, _pairs(cr, confidence)


def interleaving_outcome(log: Any, *, method: str = "team_draft", impression_col: str = "impression",
                         team_col: str = "team", click_col: str = "click", position_col: str | None = None,
                         item_col: str | None = None, teams: Sequence[Any] = ("a", "b"),
                         rank_cols: Mapping[Any, str] | None = None, prob_cols: Mapping[Any, str] | None = None,
                         confidence: float = 0.95, sequential: Any = None,
                         look_col: str | None = None) -> InterleavingOutcome:
    """Which of two rankers users preferred, from an interleaving click log.

    Parameters
    ----------
    log : table
        One row per shown item: a pandas, polars or pyarrow table or a dict of columns (what
        :meth:`Interleaving.log <ranklens.online.Interleaving.log>` gives, concatenated over impressions).
    method : {"team_draft", "balanced", "probabilistic"}, default="team_draft"
        The credit rule (the method that built the lists).
    impression_col, team_col, click_col : str
        The impression id, the team that placed the item (team draft only), the click (0/1 or boolean).
    position_col : str, optional
        The shown position (1-based); default ``"position"`` when the log has it. Needed by balanced
        interleaving; when present, an impression with two rows at one position is refused.
    item_col : str, optional
        The item id: when given, an impression showing one item twice is refused.
    teams : pair of labels, default=("a", "b")
        The team labels (a, b) of the log; any other label is refused.
    rank_cols : dict, optional
        Balanced interleaving: each team's column of the item's 1-based rank in its list (missing: not in
        it); default ``rank_<team>``.
    prob_cols : dict, optional
        Probabilistic interleaving: each team's column of its probability of drawing the item there;
        default ``prob_<team>``.
    confidence : float, default=0.95
        Of the interval.
    sequential : None, "always_valid", "group_sequential", or a design
        Inference valid when the experiment is looked at several times (``online.AlwaysValid(tau=...,
        planned_units=...)``, ``online.GroupSequential(planned_units=..., spending=...)``; units are
        impressions): then ``p_value`` and the interval are the design's, see
        :mod:`ranklens.online.interleaving_sequential`. Needs ``look_col``.
    look_col : str, optional
        The look of each impression (a day, an hour, a batch number): its distinct values, sorted, are the looks.

    Returns
    -------
    InterleavingOutcome

    Examples
    --------
    >>> from ranklens.online import interleaving_outcome
    >>> log = {"impression": [1, 1, 2, 2, 3, 3], "team": ["a", "b", "b", "a", "a", "b"],
    ...        "click": [1, 0, 0, 1, 0, 0]}
    >>> r = interleaving_outcome(log)
    >>> r.wins, r.losses, r.ties, round(r.delta, 4)
    (2, 0, 1, 0.3333)
    >>> round(r.p_value, 2)  # scipy.stats.binomtest(2, 2).pvalue
    0.5
    """
    method = check_method(method)
    tms = _check_teams(teams, two=True)
    design = design_of(sequential)
    if (design is None) != (look_col is None):
        raise InvalidParameterError("`sequential` and `look_col` go together: the looks of a sequential design are "
                                    "the values of a column (a day, a batch).")
    columns = {"impression_col": impression_col, "team_col": team_col, "click_col": click_col,
               "position_col": position_col, "item_col": item_col, "rank_cols": rank_cols, "prob_cols": prob_cols,
               "look_col": look_col}
    lg, cr, conf, (wins, ties, delta, p, lo, hi) = _compute(log, method, tms, columns, confidence)
    seq: dict[str, Any] = {"p_value": float(p[0, 1]), "ci_low": float(lo[0, 1]), "ci_high": float(hi[0, 1])}
    looks: tuple[dict[str, Any], ...] = ()
    if design is not None:
        assert lg.look is not None
        seq, looks = sequential_fields(cr.outcome(0, 1), lg.look, design, 1.0 - conf)
    return InterleavingOutcome(
        method, (tms[0], tms[1]), lg.impressions, int(wins[0, 1]), int(wins[1, 0]), int(ties[0, 1]),
        float(delta[0, 1]), seq["p_value"], seq["ci_low"], seq["ci_high"], conf,
        interval=seq.get("interval", INTERVAL), per_impression=_per_impression(lg.impression_ids, cr, tms),
        sequential=seq.get("sequential", "none"), looks=looks)


def multileaving_outcome(log: Any, *, teams: Sequence[Any], method: str = "team_draft",
                         impression_col: str = "impression", team_col: str = "team", click_col: str = "click",
                         position_col: str | None = None, item_col: str | None = None,
                         prob_cols: Mapping[Any, str] | None = None,
                         confidence: float = 0.95) -> MultileavingOutcome:
    """Every pair of rankers' preferences from a multileaving click log (the pairwise win matrix).

    Parameters
    ----------
    log : table
        As in :func:`interleaving_outcome`.
    teams : list of labels
        The rankers' labels (the ``.rankers`` of :func:`~ranklens.online.multileave`).
    method : {"team_draft", "probabilistic"}, default="team_draft"
        Team-draft multileaving: a ranker beats another when more clicks went to its team.
        Probabilistic: with two teams Hofmann's marginalised outcome, with more the expected clicks
        credited to each ranker (Schuth et al. 2015), both exact.
    impression_col, team_col, click_col, position_col, item_col, prob_cols, confidence
        As in :func:`interleaving_outcome`.

    Returns
    -------
    MultileavingOutcome

    Examples
    --------
    >>> from ranklens.online import multileaving_outcome
    >>> log = {"impression": [1, 1, 1, 2, 2, 2], "team": [0, 1, 2, 2, 0, 1], "click": [1, 0, 0, 1, 1, 0]}
    >>> r = multileaving_outcome(log, teams=[0, 1, 2])
    >>> r.wins.tolist()  # 0 beat 1 twice, 0 beat 2 once, 2 beat 1 once
    [[0, 2, 1], [0, 0, 0], [0, 1, 0]]
    """
    method = check_method(method, ("team_draft", "probabilistic"))
    tms = _check_teams(teams, two=False)
    columns = {"impression_col": impression_col, "team_col": team_col, "click_col": click_col,
               "position_col": position_col, "item_col": item_col, "rank_cols": None, "prob_cols": prob_cols}
    lg, cr, conf, (wins, ties, delta, p, lo, hi) = _compute(log, method, tms, columns, confidence)
    return MultileavingOutcome(method, tms, lg.impressions, wins, ties, delta, p, lo, hi, conf,
                               per_impression=_per_impression(lg.impression_ids, cr, tms))
