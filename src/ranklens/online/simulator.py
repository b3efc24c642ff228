"""A simulated online experiment with known truth: users, arms, served lists, clicks and purchases.

:func:`simulate` draws, with numpy in bulk (no Python loop over users or sessions):

1. **Judgments and rankers** (:mod:`ranklens.online._served`): graded candidates per query (simulated or
   given) and the list each arm's ranker serves (simulated rankers with a noise level, or given runs).
2. **Users**, the randomisation units: an arm by the ``split`` (``actual_split`` to plant a sample-ratio
   mismatch), a visible ``segment`` (its patience scales examination), a latent type (five Gauss-Hermite
   nodes of a log-normal with spread ``heterogeneity``) that multiplies the attractiveness of everything they
   see and the number of their sessions (``1 + Poisson``, mean ``sessions_per_user`` over users): their lists
   are correlated, and the number of lists goes with their clicks (so the delta method matters), and a
   first visit uniform over ``days``.
3. **Sessions**: a query by popularity (Zipf with exponent ``query_skew``), a time between the user's first
   visit and the end, the arm's list for that query (or, with ``policy="plackett_luce"``, a list drawn from
   the arm's scores with known propensities), and clicks and purchases from the click model.
4. A **pre-period covariate** per user whose correlation with the user's linearised outcome of
   ``covariate_measure`` in the control arm is exactly ``rho``: ``mu + d * noise``, ``mu`` the user's expected
   outcome under the control ranker given their segment, type and number of sessions (unaffected by the
   treatment), ``d`` solved from the model's exact variances (:func:`ranklens.online._truth.linearised`).

:meth:`Simulation.truth` gives every measure's true value per arm, its difference and relative lift against
the control arm, exactly (:mod:`ranklens.online._truth`); :attr:`Simulation.events` is the log in the
monitoring store's event layout plus ``arm``, ``user_id``, ``segment`` and ``pre_period``.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .._base.renamed import renamed_keywords
from ..errors import InvalidParameterError
from ._served import GRADE_P, Served, serve
from ._truth import Gains, Population, linearised, session_moments, unit_moments
from .click_models import ClickModel
from .click_models import click_model as make_click_model
from .measures import is_online

__all__ = ["DEFAULT_SEGMENTS", "LABELS", "Simulation", "Truth", "simulate"]

#: Outcome labels of the simulated events.
LABELS = ("click", "buy")
#: Segments: share of users and patience (examination scaled by it: mobile users look less far down).
DEFAULT_SEGMENTS: dict[str, tuple[float, float]] = {"mobile": (0.6, 0.7), "desktop": (0.4, 1.4)}
_TYPES = 5
_DAY_MS = 86_400_000


def _shares(value: Mapping[str, float], arms: Sequence[str], name: str) -> np.ndarray:
    if set(value) != set(arms):
        raise InvalidParameterError(f"`{name}` must give a share to each arm ({', '.join(arms)}); got "
                                    f"{sorted(value)}.")
    p = np.array([float(value[a]) for a in arms])
    if (p <= 0).any() or not math.isclose(p.sum(), 1.0, abs_tol=1e-9):
        raise InvalidParameterError(f"`{name}` shares must be > 0 and sum to 1; got {dict(value)!r}.")
    return p


@dataclass(frozen=True)
class Truth:
    """Exact values of measures per arm under the simulation's model.

    ``rows``: one dict per measure and arm with ``measure``, ``arm``, ``value``, ``control`` (the control
    arm's value), ``difference`` (value - control) and ``relative`` (value / control - 1).
    """

    rows: tuple[dict[str, Any], ...]

    def _row(self, measure: str, arm: str) -> dict[str, Any]:
        for r in self.rows:
            if r["measure"] == measure and r["arm"] == arm:
                return r
        raise KeyError(f"no truth for measure {measure!r} and arm {arm!r}")

    def value(self, measure: str, arm: str) -> float:
        """The arm's true value of the measure."""
        return float(self._row(measure, arm)["value"])

    def difference(self, measure: str, arm: str) -> float:
        """The arm's true difference with the control arm."""
        return float(self._row(measure, arm)["difference"])

    def relative(self, measure: str, arm: str) -> float:
        """The arm's true relative lift against the control arm."""
        return float(self._row(measure, arm)["relative"])

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame."""
        from .._base.deps import require

        return require("pandas").DataFrame(list(self.rows))


@dataclass(frozen=True, eq=False)
class Simulation:
    """A simulated experiment: its design, its draws (numpy arrays) and its exact truth.

    Attributes
    ----------
    served : Served
        Candidates and each arm's lists.
    model : ClickModel
    population : Population
    arms, split : the arms (the first is the control) and the planned split.
    users : dict of ndarray
        Per user: ``arm``, ``segment``, ``type``, ``sessions``, ``first`` (ms after ``start``), ``pre_period``.
    sessions : dict of ndarray
        Per session: ``user``, ``query``, ``time`` (ms after ``start``), ``grades`` / ``items``
        (sessions x k, -1: no item), ``clicks`` / ``buys`` (sessions x k), and with a stochastic policy
        ``propensity`` (sessions x k: the probability of the served list's first r items).
    """

    served: Served
    model: ClickModel
    population: Population
    arms: tuple[str, ...]
    split: tuple[float, ...]
    users: dict[str, np.ndarray]
    sessions: dict[str, np.ndarray]
    start: _dt.datetime
    days: int
    policy: str
    judged: bool
    rho: float
    covariate_measure: str

    @property
    def control(self) -> str:
        """The control arm (the first)."""
        return self.arms[0]

    def _gains(self, attribution: Any) -> Gains:
        if self.judged:
            return Gains(True)
        from ..monitor.config import Attribution

        a = attribution if attribution is not None else Attribution()
        return Gains(False, a.gain_of(["click"]), a.gain_of(["click", "buy"]))

    @renamed_keywords(rankings="runs")
    def truth(self, measures: str | Sequence[str] = ("clicks@10",), *, attribution: Any = None,
              convention: Any = "ranklens", segment: str | None = None,
              runs: Mapping[str, Any] | None = None) -> Truth:
        """The exact value of each measure per arm, and its difference and relative lift against the control.

        Parameters
        ----------
        measures : str or list of str
            Online measures (``clicks@10``, ``ctr@5``, ``abandonment``...) and any measure of ranklens
            (``ndcg@10``...), the latter on the items' grades when the simulation is ``judged``, else on the
            gains the ``attribution`` gives their labels (as :func:`ranklens.online.ab_test` computes them).
        attribution : ranklens.monitor.Attribution, optional
            Default: binary, positive class ``click``.
        convention : str or Convention
            The convention of the ranking measures.
        segment : str, optional
            The truth within one segment of users.
        runs : mapping, optional
            More deterministic rankers to evaluate (name -> run over the simulation's queries and items), e.g.
            the target ranking of an off-policy estimate; reported beside the arms, against the control
            (``rankings=`` is its deprecated name).
        """
        if self.policy != "deterministic" and runs is None:
            raise InvalidParameterError(f"the arms serve lists drawn by the {self.policy!r} policy: their exact "
                                        "expectation is not computed; give deterministic `runs` instead.")
        keys = [measures] if isinstance(measures, str) else list(measures)
        seg = None
        if segment is not None:
            if segment not in self.population.segments:
                raise InvalidParameterError(f"unknown segment {segment!r}; segments are "
                                            f"{', '.join(self.population.segments)}.")
            seg = self.population.segments.index(segment)
        lists: dict[str, np.ndarray] = {}
        if self.policy == "deterministic":
            lists.update({a: self.served.grades[i] for i, a in enumerate(self.arms)})
        if runs:
            from ._served import run_grades

            for name, run in runs.items():
                lists[str(name)] = run_grades(run, str(name), self.served, self.served.k)
        from ..monitor.reports.aggregates import StoreAggregate

        gains = self._gains(attribution)
        values = {}
        for name, grades in lists.items():
            mom = unit_moments(self.population, session_moments(self.population, self.model, grades, keys,
                                                                 gains=gains, convention=convention), seg)
            values[name] = mom[:, 1] / mom[:, 0]
            for j, key in enumerate(keys):
                if not is_online(key) and StoreAggregate.of(key).kind == "geometric":
                    values[name][j] = math.exp(values[name][j])
        base = values.get(self.control)
        rows = []
        for j, key in enumerate(keys):
            for name, v in values.items():
                c = float(base[j]) if base is not None else math.nan
                rows.append({"measure": key, "arm": name, "value": float(v[j]), "control": c,
                             "difference": float(v[j]) - c, "relative": float(v[j]) / c - 1 if c else math.nan})
        return Truth(tuple(rows))

    def rho_max(self, measure: str | None = None) -> float:
        """The largest correlation a pre-period covariate can have with the linearised outcome of ``measure``
        in the control arm: the share of its variance the user's segment, type and sessions explain."""
        _, var_mu, var_l = self._linearised(measure or self.covariate_measure)
        return math.sqrt(var_mu / var_l) if var_l > 0 else 0.0

    def _linearised(self, measure: str) -> tuple[np.ndarray, float, float]:
        grades = self.served.grades[0]
        gains = self._gains(None)
        mom = session_moments(self.population, self.model, grades, [measure], gains=gains, convention="ranklens",
                              second=True)[:, :, :, 0]
        tot = unit_moments(self.population, mom[:, :, :, None, :])[0]
        return linearised(self.population, mom, tot[1] / tot[0])

    def unit_sums(self, measure: str, *, replications: int = 1, by_day: bool = False, covariate: bool = False,
                  attribution: Any = None, convention: Any = "ranklens") -> Any:
        """The sufficient statistics :func:`ranklens.online.ab_test` computes its tests from (arms in the order of
        ``arms``), for the users split into ``replications`` independent experiments (user ``i`` in replication
        ``i % replications``): shape ``(replications, arms)``, or ``(replications, days, arms)`` cumulated day by
        day. ``covariate``: with ``pre_period`` for CUPED. For simulation studies: thousands of experiments from
        one draw, without building their logs."""
        from ._delta import unit_sums
        from ._looks import daily_sums

        if isinstance(replications, bool) or not isinstance(replications, int) or replications < 1:
            raise InvalidParameterError(f"`replications` must be an integer >= 1; got {replications!r}.")
        v = self.session_values(measure, attribution=attribution, convention=convention)
        ok = ~np.isnan(v)
        user = self.sessions["user"]
        n_users = len(self.users["arm"])
        rep = np.arange(n_users) % replications
        z = self.users["pre_period"][:, None] if covariate else None
        if by_day:
            day = self.sessions["time"] // 86_400_000
            return daily_sums(self.users["arm"], user, day, np.where(ok, v, 0.0), ok.astype(np.float64), self.days,
                              len(self.arms), z, rep, replications)
        y = np.bincount(user, np.where(ok, v, 0.0), minlength=n_users)
        x = np.bincount(user, ok.astype(np.float64), minlength=n_users)
        return unit_sums(self.users["arm"], y, x, len(self.arms), z, rep, replications)

    @cached_property
    def events(self) -> Any:
        """The log (a pyarrow Table): one row per served item (see :func:`simulate`)."""
        from ._events_out import events_table

        return events_table(self)

    def session_values(self, measure: str, *, attribution: Any = None, convention: Any = "ranklens"
                       ) -> np.ndarray:
        """Each session's value of ``measure`` (NaN: the list has none), by the definitions ab_test uses."""
        from ._events_out import session_values

        return session_values(self, measure, self._gains(attribution), convention)


def _population(rng: np.random.Generator, n_queries: int, segments: Mapping[str, Any], heterogeneity: float,
                sessions_per_user: float, query_skew: float) -> Population:
    names = tuple(str(s) for s in segments)
    spec = [segments[s] if isinstance(segments[s], (tuple, list)) else (segments[s], 1.0) for s in segments]
    seg_p = np.array([float(a) for a, _ in spec])
    patience = np.array([float(b) for _, b in spec])
    if (seg_p <= 0).any() or not math.isclose(seg_p.sum(), 1.0, abs_tol=1e-9) or (patience <= 0).any():
        raise InvalidParameterError(f"`segments` must map names to (share > 0, patience > 0) with shares summing "
                                    f"to 1; got {dict(segments)!r}.")
    if not (heterogeneity >= 0 and math.isfinite(heterogeneity)):
        raise InvalidParameterError(f"`heterogeneity` must be a number >= 0; got {heterogeneity!r}.")
    if not (sessions_per_user >= 1 and math.isfinite(sessions_per_user)):
        raise InvalidParameterError(f"`sessions_per_user` must be >= 1; got {sessions_per_user!r}.")
    z, w = np.polynomial.hermite_e.hermegauss(_TYPES)
    w = w / w.sum()
    raw = np.exp(heterogeneity * z)
    mult = raw / float((w * raw).sum())
    popularity = np.arange(1, n_queries + 1, dtype=np.float64) ** -float(query_skew)
    query_p = popularity[rng.permutation(n_queries)]
    return Population(names, seg_p, patience, w, mult, (sessions_per_user - 1.0) * mult, query_p / query_p.sum())


def simulate(
    rankers: Mapping[str, Any] | None = None,
    *,
    judgments: Any = None,
    n_queries: int = 200,
    n_candidates: int = 30,
    k: int = 10,
    grade_p: Sequence[float] = GRADE_P,
    click_model: str | ClickModel = "pbm",
    n_users: int = 10_000,
    split: Mapping[str, float] | None = None,
    actual_split: Mapping[str, float] | None = None,
    sessions_per_user: float = 3.0,
    heterogeneity: float = 0.5,
    segments: Mapping[str, Any] | None = None,
    query_skew: float = 0.8,
    days: int = 14,
    start: str | _dt.date = "2026-10-01",
    rho: float = 0.0,
    covariate_measure: str = "clicks@10",
    judged: bool = False,
    policy: str = "deterministic",
    temperature: float = 1.0,
    seed: int | None = None,
) -> Simulation:
    """Simulate an online experiment with known truth (see the module for the model).

    Parameters
    ----------
    rankers : mapping, default {"control": 1.0, "treatment": 0.7}
        Arm -> ranker, the first arm the control: a noise level (scores = grade + noise x N(0, 1): smaller is
        better), another arm's name (the same ranker: A/A), or a run (any rankings input; needs ``judgments``).
    judgments : optional
        Graded judgments (any judgments input of ranklens; grades 0..4 by default). Default: simulated,
        ``n_queries`` queries of ``n_candidates`` items with grades drawn from ``grade_p``.
    k : int
        Items served per list.
    click_model : {"pbm", "cascade", "dbn"} or ClickModel
    n_users : int
        Randomisation units.
    split, actual_split : mapping arm -> share
        The planned split (default: equal) and the one users are actually assigned by (default: the planned).
    sessions_per_user, heterogeneity, segments, query_skew, days, start
        See the module; ``segments`` maps a name to ``(share, patience)``.
    rho : float
        Correlation of the ``pre_period`` covariate with the linearised outcome of ``covariate_measure`` in the
        control arm (at most :meth:`Simulation.rho_max`).
    judged : bool
        Write each item's grade as its ``relevance`` (ranking measures then use judgments, not clicks).
    policy : {"deterministic", "plackett_luce"}
        How an arm chooses a session's list: its ranking, or one drawn from Plackett-Luce over its scores
        divided by ``temperature`` (a logging policy with known propensities).
    seed : int, optional

    Returns
    -------
    Simulation

    Examples
    --------
    >>> sim = simulate({"control": 1.0, "treatment": 0.5}, n_users=2000, n_queries=50, seed=1)
    >>> sim.events.column_names[:7]
    ['timestamp', 'model', 'model_version', 'environment', 'group_id', 'item_id', 'rank']
    >>> t = sim.truth(["clicks@10"])
    >>> t.difference("clicks@10", "treatment") > 0  # the better ranker gets more clicks
    True
    """
    rng = np.random.default_rng(seed)
    rankers = dict(rankers) if rankers is not None else {"control": 1.0, "treatment": 0.7}
    arms = tuple(str(a) for a in rankers)
    model = click_model if isinstance(click_model, ClickModel) else make_click_model(click_model)
    for name, value, lo in (("n_users", n_users, 1), ("n_queries", n_queries, 1), ("n_candidates", n_candidates, 1),
                            ("k", k, 1), ("days", days, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
            raise InvalidParameterError(f"`{name}` must be an integer >= {lo}; got {value!r}.")
    if policy not in ("deterministic", "plackett_luce"):
        raise InvalidParameterError(f"`policy` must be 'deterministic' or 'plackett_luce'; got {policy!r}.")
    if not (temperature > 0 and math.isfinite(temperature)):
        raise InvalidParameterError(f"`temperature` must be a number > 0; got {temperature!r}.")
    if not (0 <= rho < 1):
        raise InvalidParameterError(f"`rho` must be in [0, 1); got {rho!r}.")
    if not is_online(covariate_measure):
        raise InvalidParameterError(f"`covariate_measure` must be an online measure (clicks@10...); got "
                                    f"{covariate_measure!r}.")
    served = serve(rankers, judgments=judgments, n_queries=n_queries, n_candidates=n_candidates, k=k,
                   grade_p=grade_p, max_grade=model.grades - 1, rng=rng)
    pop = _population(rng, len(served.query_ids), segments if segments is not None else DEFAULT_SEGMENTS,
                      heterogeneity, sessions_per_user, query_skew)
    planned = _shares(split, arms, "split") if split is not None else np.full(len(arms), 1.0 / len(arms))
    actual = _shares(actual_split, arms, "actual_split") if actual_split is not None else planned
    t0 = start if isinstance(start, _dt.datetime) else _dt.datetime.fromisoformat(str(start))
    from ._draw import draw

    users, sessions = draw(rng, served, model, pop, n_users, actual, days, policy, temperature)
    sim = Simulation(served, model, pop, arms, tuple(float(x) for x in planned), users, sessions, t0, days, policy,
                     judged, float(rho), covariate_measure)
    users["pre_period"] = _covariate(sim, rng, float(rho))
    return sim


def _covariate(sim: Simulation, rng: np.random.Generator, rho: float) -> np.ndarray:
    noise = rng.standard_normal(len(sim.users["arm"]))
    if rho == 0:
        return noise
    if sim.policy != "deterministic":
        raise InvalidParameterError("`rho` > 0 needs the deterministic policy (the covariate is calibrated on the "
                                    "control ranker's exact moments).")
    m1, var_mu, var_l = sim._linearised(sim.covariate_measure)
    top = math.sqrt(var_mu / var_l) if var_l > 0 else 0.0
    if rho > top:
        raise InvalidParameterError(
            f"`rho` = {rho} is more than the users' segment, type and sessions explain of "
            f"{sim.covariate_measure} ({top:.3f}): raise `heterogeneity` or `sessions_per_user`, or lower `rho`.")
    u = sim.users
    mu = u["sessions"] * m1[u["segment"], u["type"]]
    # (mu + d noise) / sqrt(var_mu + d^2) with d^2 = var_mu (top^2 / rho^2 - 1), written with c = rho / top so that
    # no term overflows for a tiny rho (the noise alone as rho -> 0)
    c = rho / top
    return c * mu / math.sqrt(var_mu) + math.sqrt(max(1.0 - c * c, 0.0)) * noise
