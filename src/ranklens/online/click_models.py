"""Click models with known parameters: position-based (PBM), cascade and the dynamic Bayesian network (DBN).

Notation of Chuklin, Markov and de Rijke, *Click Models for Web Search* (2015): a user looks at position ``r``
(examination ``E_r``), is attracted by the item there (``A_r``, probability ``alpha``, the item's
attractiveness) and clicks when both hold, ``C_r = E_r A_r``.

* **PBM**: ``P(E_r) = examination[r]`` whatever happens elsewhere; clicks at different positions are
  independent: ``P(C_r) = examination[r] * alpha_r``.
* **DBN**: the user examines position 1, then after position ``r`` goes on to ``r + 1`` with probability
  ``continuation`` (gamma) unless they clicked and were satisfied (``satisfaction`` sigma, per grade):
  ``P(E_{r+1} = 1 | E_r = 1) = gamma * (1 - alpha_r * sigma_r)``.
* **Cascade** (Craswell et al. 2008): the DBN with ``gamma = 1`` and ``sigma = 1``: the user reads down the
  list and clicks the first attractive item, then stops (at most one click).

Purchases follow a click with probability ``purchase`` per grade. Every probability here is exact (the
model's own expectation, no sampling); :meth:`ClickModel.sample` draws clicks for many lists at once
(positions are a short axis; no Python loop over lists).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..errors import InvalidParameterError

__all__ = ["KINDS", "ClickModel", "cascade_examination", "click_model", "forward_click_probability"]

KINDS = ("pbm", "cascade", "dbn")

#: Default attractiveness per grade 0..4 (grade 0 is rarely clicked, grade 4 nearly always when seen).
ATTRACTIVENESS = (0.05, 0.25, 0.45, 0.70, 0.90)
#: Default DBN satisfaction per grade (a click on a better item ends the search more often).
SATISFACTION = (0.05, 0.20, 0.40, 0.65, 0.85)
#: Default purchase probability after a click, per grade.
PURCHASE = (0.0, 0.02, 0.08, 0.20, 0.40)


def _probabilities(values: Any, name: str) -> tuple[float, ...]:
    out = tuple(float(v) for v in values)
    if not out or any(not (0.0 <= v <= 1.0) or math.isnan(v) for v in out):
        raise InvalidParameterError(f"click model `{name}` must be probabilities in [0, 1]; got {values!r}.")
    return out


@dataclass(frozen=True)
class ClickModel:
    """A click model over graded items, with every parameter known.

    Parameters
    ----------
    kind : {"pbm", "cascade", "dbn"}
    attractiveness : sequence of float
        ``alpha`` per grade 0, 1, 2...: the probability that an examined item of that grade is clicked.
    examination : sequence of float, optional
        PBM only: ``P(E_r)`` for ranks 1, 2, ... (positions past the end examined as the last one).
        Default ``1 / r``.
    satisfaction : sequence of float
        DBN only: ``sigma`` per grade (cascade: 1).
    continuation : float
        DBN only: ``gamma`` (cascade: 1).
    purchase : sequence of float
        ``P(buy | click)`` per grade.
    patience : float
        Scales examination: PBM examines rank ``r`` with ``examination[r] ** (1 / patience)``, DBN goes on with
        ``continuation ** (1 / patience)`` (see :meth:`with_patience`).

    Grade -1 stands for no item (a list shorter than others): attractiveness 0.

    Examples
    --------
    >>> m = click_model("pbm", examination=[1.0, 0.5], attractiveness=[0.1, 0.8])
    >>> m.click_probability(np.array([[1, 0]])).round(3).tolist()  # 1.0 * 0.8, 0.5 * 0.1
    [[0.8, 0.05]]
    >>> c = click_model("cascade", attractiveness=[0.1, 0.8])
    >>> c.click_probability(np.array([[1, 0]])).round(3).tolist()  # the second is seen only without a first click
    [[0.8, 0.02]]
    """

    kind: str = "pbm"
    attractiveness: tuple[float, ...] = ATTRACTIVENESS
    examination: tuple[float, ...] | None = None
    satisfaction: tuple[float, ...] = SATISFACTION
    continuation: float = 0.9
    purchase: tuple[float, ...] = PURCHASE
    patience: float = 1.0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InvalidParameterError(f"click model must be one of {', '.join(KINDS)}; got {self.kind!r}.")
        att = _probabilities(self.attractiveness, "attractiveness")
        object.__setattr__(self, "attractiveness", att)
        object.__setattr__(self, "purchase", _probabilities(self.purchase, "purchase"))
        if self.kind == "cascade":
            object.__setattr__(self, "satisfaction", (1.0,))
            object.__setattr__(self, "continuation", 1.0)
        else:
            object.__setattr__(self, "satisfaction", _probabilities(self.satisfaction, "satisfaction"))
            _probabilities([self.continuation], "continuation")
            object.__setattr__(self, "continuation", float(self.continuation))
        if self.examination is not None:
            if self.kind != "pbm":
                raise InvalidParameterError(f"`examination` is a parameter of the pbm click model, not of "
                                            f"{self.kind!r} (its examination follows from the clicks).")
            object.__setattr__(self, "examination", _probabilities(self.examination, "examination"))
        for name in ("satisfaction", "purchase"):
            if len(getattr(self, name)) not in (1, len(att)):
                raise InvalidParameterError(f"click model `{name}` needs one value per grade ({len(att)}, as "
                                            f"`attractiveness`) or a single value; got {getattr(self, name)!r}.")
        if not (isinstance(self.patience, (int, float)) and math.isfinite(self.patience) and self.patience > 0):
            raise InvalidParameterError(f"click model `patience` must be a number > 0; got {self.patience!r}.")

    @property
    def grades(self) -> int:
        """The number of grades (0 .. grades - 1) the model has parameters for."""
        return len(self.attractiveness)

    @property
    def gamma(self) -> float:
        """The continuation probability in use: ``continuation ** (1 / patience)`` (1 for cascade)."""
        return self.continuation ** (1.0 / self.patience)

    # -- parameters per list -------------------------------------------------------------------------------
    def _per_grade(self, values: tuple[float, ...], grades: np.ndarray) -> np.ndarray:
        """``values`` (one per grade, or one for all) at each grade; grade -1 (no item) gives 0."""
        g = np.asarray(grades, dtype=np.int64)
        if g.size and (g.min() < -1 or g.max() >= self.grades):
            raise InvalidParameterError(f"grades must be integers in [0, {self.grades - 1}] (the click model has "
                                        f"{self.grades} attractiveness values); got {int(g.min())}..{int(g.max())}.")
        table = np.append(np.asarray(values, dtype=np.float64), 0.0)
        return table[np.where(g < 0, len(values), np.minimum(g, len(values) - 1))]

    def alpha(self, grades: np.ndarray, multiplier: Any = None) -> np.ndarray:
        """Attractiveness of each item (lists x positions), times a per-list ``multiplier`` (capped at 1)."""
        a = self._per_grade(self.attractiveness, grades)
        if multiplier is not None:
            a = np.minimum(1.0, a * np.asarray(multiplier, dtype=np.float64).reshape(-1, *([1] * (a.ndim - 1))))
        return a

    def sigma(self, grades: np.ndarray) -> np.ndarray:
        """DBN satisfaction of each item (1 under cascade, unused under PBM)."""
        if self.kind == "cascade":
            return np.ones(np.shape(grades))
        return self._per_grade(self.satisfaction, grades)

    def purchase_probability(self, grades: np.ndarray) -> np.ndarray:
        """``P(buy | click)`` of each item."""
        return self._per_grade(self.purchase, grades)

    def exam_curve(self, n: int) -> np.ndarray:
        """PBM's examination of ranks 1..n: ``examination`` (default ``1 / r``; past the given ranks, the last
        value), to the power ``1 / patience``."""
        if self.examination is None:
            e = 1.0 / np.arange(1, n + 1)
        else:
            given = np.asarray(self.examination, dtype=np.float64)
            e = given[np.minimum(np.arange(n), len(given) - 1)]
        return e if self.patience == 1 else e ** (1.0 / self.patience)

    # -- exact probabilities ---------------------------------------------------------------------------------
    def examination_probability(self, grades: np.ndarray, multiplier: Any = None) -> np.ndarray:
        """``P(E_r = 1)`` of each position of each list (marginal, exact)."""
        g = np.atleast_2d(grades)
        if self.kind == "pbm":
            return np.broadcast_to(self.exam_curve(g.shape[1]), g.shape).copy()
        return cascade_examination(self.alpha(g, multiplier), self.sigma(g), self.gamma)

    def click_probability(self, grades: np.ndarray, multiplier: Any = None) -> np.ndarray:
        """``P(C_r = 1)`` of each position of each list (exact)."""
        g = np.atleast_2d(grades)
        return self.examination_probability(g, multiplier) * self.alpha(g, multiplier)

    def first_click_probability(self, grades: np.ndarray, multiplier: Any = None) -> np.ndarray:
        """P(the first click of the list is at position r) (exact); 1 minus the row's sum: no click."""
        g = np.atleast_2d(grades)
        a = self.alpha(g, multiplier)
        if self.kind == "pbm":
            c = self.exam_curve(g.shape[1]) * a
            before = np.ones_like(c)
            before[:, 1:] = np.cumprod(1.0 - c[:, :-1], axis=1)
            return before * c
        # no click before r: every earlier position examined, not attractive, and the user went on
        reach = np.ones_like(a)
        reach[:, 1:] = np.cumprod((1.0 - a[:, :-1]) * self.gamma, axis=1)
        return reach * a

    def pattern_probability(self, grades: np.ndarray, patterns: np.ndarray, multiplier: Any = None) -> np.ndarray:
        """P(exactly this click pattern) for each list (rows) and 0/1 pattern (``patterns``: n_patterns x L).

        PBM: a product over positions. DBN and cascade: the product of ``P(C_r = c_r | the clicks above r)``
        from the forward recursion (:func:`forward_click_probability`), exact.
        """
        g = np.atleast_2d(grades)
        a = self.alpha(g, multiplier)[:, None, :]  # lists x 1 x L
        c = np.asarray(patterns, dtype=bool)[None, :, :]  # 1 x P x L
        if self.kind == "pbm":
            p1 = self.exam_curve(g.shape[1]) * a
            return np.prod(np.where(c, p1, 1.0 - p1), axis=2)
        pc = forward_click_probability(a, self.sigma(g)[:, None, :], self.gamma, c)
        return np.prod(np.where(c, pc, 1.0 - pc), axis=2)

    # -- sampling ----------------------------------------------------------------------------------------------
    def sample(self, grades: np.ndarray, rng: np.random.Generator, multiplier: Any = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """(clicks, purchases): boolean arrays lists x positions drawn from the model."""
        g = np.atleast_2d(grades)
        a = self.alpha(g, multiplier)
        attracted = rng.random(a.shape) < a
        if self.kind == "pbm":
            clicks = attracted & (rng.random(a.shape) < self.exam_curve(g.shape[1]))
        else:
            satisfied = rng.random(a.shape) < self.sigma(g)
            go_on = (rng.random(a.shape) < self.gamma) & ~(attracted & satisfied)
            exam = np.ones(a.shape, dtype=bool)
            exam[:, 1:] = np.logical_and.accumulate(go_on[:, :-1], axis=1)
            clicks = exam & attracted
        buys = clicks & (rng.random(a.shape) < self.purchase_probability(g))
        return clicks, buys

    def with_patience(self, patience: float) -> ClickModel:
        """The same model for a more (``patience > 1``) or less patient user: PBM examination
        ``e ** (1 / patience)``, DBN continuation ``gamma ** (1 / patience)``; cascade reads until the first
        attractive item whatever the patience."""
        return replace(self, patience=float(patience))


def cascade_examination(a: np.ndarray, s: np.ndarray, gamma: float | np.ndarray) -> np.ndarray:
    """Marginal ``P(E_r = 1)`` at each position (the last axis) of a cascade-family model, attractiveness ``a`` and
    satisfaction ``s`` per position: ``E_1 = 1``, ``P(E_{r+1} | E_r) = gamma (1 - a_r s_r)`` (``gamma`` may be per
    rank: DCM's ``lambda`` enters as ``s = 1 - lambda``, gamma 1; the cascade model is ``gamma = s = 1``).

    >>> cascade_examination(np.array([[0.5, 0.5, 0.5]]), np.ones((1, 3)), 1.0).tolist()
    [[1.0, 0.5, 0.25]]
    """
    go = np.asarray(gamma) * (1.0 - a * s)
    out = np.ones_like(go)
    out[..., 1:] = np.cumprod(go[..., :-1], axis=-1)
    return out


def forward_click_probability(a: np.ndarray, s: np.ndarray, gamma: float, clicks: np.ndarray,
                              eps: float = 1e-12) -> np.ndarray:
    """``P(C_r = 1 | the clicks above r)`` at each position (the last axis; shapes broadcast) of a cascade-family
    model: the forward recursion on ``e_r = P(E_r = 1 | the clicks above r)``, ``e_1 = 1``,
    ``P(C_r = 1 | ...) = e_r a_r``, then ``e_{r+1} = gamma (1 - s_r)`` after a click and
    ``gamma e_r (1 - a_r) / (1 - e_r a_r)`` (the denominator at least ``eps``) after none. The product over
    positions of ``p`` or ``1 - p`` is the probability of the whole click pattern; its logarithm the
    log-likelihood (:mod:`ranklens.counterfactual`).

    >>> a = np.array([[0.5, 0.5]])
    >>> forward_click_probability(a, np.ones((1, 2)), 1.0, np.array([[False, False]])).tolist()  # cascade
    [[0.5, 0.5]]
    >>> forward_click_probability(a, np.ones((1, 2)), 1.0, np.array([[True, False]])).tolist()  # stopped
    [[0.5, 0.0]]
    """
    shape = np.broadcast_shapes(np.shape(a), np.shape(s), np.shape(clicks))
    a, s, c = (np.broadcast_to(x, shape) for x in (a, s, clicks))
    out = np.empty(shape)
    e = np.ones(shape[:-1])
    for r in range(shape[-1]):  # positions: a short axis
        ar = a[..., r]
        out[..., r] = e * ar
        seen_no_click = e * (1 - ar) / np.maximum(1 - e * ar, eps)
        e = np.where(c[..., r], gamma * (1 - s[..., r]), gamma * seen_no_click)
    return out


def click_model(kind: str = "pbm", *, attractiveness: Sequence[float] | None = None,
                examination: Sequence[float] | None = None, satisfaction: Sequence[float] | None = None,
                continuation: float = 0.9, purchase: Sequence[float] | None = None, patience: float = 1.0
                ) -> ClickModel:
    """A :class:`ClickModel` by name, with the module's defaults for what is not given.

    The defaults of ``satisfaction`` and ``purchase`` are for grades 0..4; with another number of grades
    (the length of ``attractiveness``) satisfaction defaults to the attractiveness and purchase to 0.

    >>> click_model("dbn", continuation=0.8).continuation
    0.8
    >>> click_model("dbn", attractiveness=[0.2, 0.8]).satisfaction
    (0.2, 0.8)
    """
    att = tuple(attractiveness) if attractiveness is not None else ATTRACTIVENESS
    same = len(att) == len(ATTRACTIVENESS)
    sat = tuple(satisfaction) if satisfaction is not None else (SATISFACTION if same else att)
    buy = tuple(purchase) if purchase is not None else (PURCHASE if same else (0.0,))
    return ClickModel(kind, att, tuple(examination) if examination is not None else None, sat, continuation, buy,
                      patience)
