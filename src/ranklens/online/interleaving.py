"""Interleaving and multileaving: one result list shown in place of two (or more) rankers' lists.

Three ways of building it, each with the credit rule that reads its clicks
(:mod:`ranklens.online.interleaving_results`):

* **team draft** (Radlinski, Kurup & Joachims 2008; with more than two rankers, team-draft
  multileaving, Schuth et al. 2014): the ranker whose team is smallest (ties broken at random) adds its
  highest item not yet shown, to its team; a click credits the team of the clicked item.
* **balanced** (Joachims 2003; two rankers): a coin decides which ranker leads; the rankers then take
  turns by how far each has advanced in its own list (``k_a < k_b``, or equal and the leader's turn),
  an item already shown being skipped, until ``k`` items are shown or a list ends. Credit: the lowest
  click decides a depth (its best rank in either list); each ranker is credited with the clicks on its
  own items down to that depth.
* **probabilistic** (Hofmann, Whiteson & de Rijke 2011): each ranker is a softmax over its list,
  ``P(item at rank r) ∝ 1 / r**tau``; each position draws a ranker uniformly among those with items left
  (with replacement), that ranker draws an item from its softmax, and the item is removed from every
  softmax. The outcome is marginalised over every assignment of positions to rankers, which needs each
  ranker's probability of each shown item (:attr:`Interleaving.probabilities`).

When a ranker has no item left (team draft, probabilistic), the others go on filling the list up to
``k``, as the ``interleaving`` package does (its ``max_length`` defaults to the shortest list instead:
here the list has ``min(k, number of distinct items)`` items, fewer only for balanced interleaving,
which stops when either list ends). Give lists at least ``k`` long for every ranker to contribute
equally in expectation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidParameterError

__all__ = ["METHODS", "Interleaving", "build", "check_k", "check_method", "check_tau", "every_interleaving",
           "interleave", "make_rng", "multileave"]

#: The interleaving methods, and which of them multileave (more than two rankers).
METHODS = ("team_draft", "balanced", "probabilistic")
MULTILEAVE_METHODS = ("team_draft", "probabilistic")
#: The default softmax exponent of probabilistic interleaving (Hofmann et al. 2011; the interleaving package).
DEFAULT_TAU = 3.0


@dataclass(frozen=True)
class Interleaving:
    """One interleaved (or multileaved) list, with what its outcome needs.

    Attributes
    ----------
    items : list
        The shown items, top first.
    teams : list
        Per position, the ranker that placed the item: ``"a"`` / ``"b"`` for :func:`interleave`, the
        rankers' names (or indices) for :func:`multileave`. Balanced interleaving: the ranker whose turn
        placed it; probabilistic: the ranker drawn for the position (the outcome does not use it).
    rankers : tuple
        The rankers' labels, in the order given.
    method : str
        ``"team_draft"``, ``"balanced"`` or ``"probabilistic"``.
    ranks : numpy.ndarray or None
        Balanced interleaving: ``ranks[j, i]`` is the 1-based rank of ``items[i]`` in ranker ``j``'s list,
        NaN where the item is not in it (the credit rule's input).
    probabilities : numpy.ndarray or None
        Probabilistic interleaving: ``probabilities[j, i]`` is the probability that ranker ``j``'s softmax
        drew ``items[i]`` at position ``i`` (the items above it removed), 0 when it is not in the list.
    tau : float or None
        Probabilistic interleaving's softmax exponent.
    """

    items: list[Any]
    teams: list[Any]
    rankers: tuple[Any, ...]
    method: str
    ranks: np.ndarray | None = field(default=None, repr=False)
    probabilities: np.ndarray | None = field(default=None, repr=False)
    tau: float | None = None

    def __len__(self) -> int:
        return len(self.items)

    def log(self, clicks: Any, *, impression: Any = 0) -> dict[str, np.ndarray]:
        """The rows of a click log for this list shown once: a dict of columns that
        :func:`~ranklens.online.interleaving_outcome` reads with its default column names.

        Parameters
        ----------
        clicks : array-like of bool or 0/1
            One value per shown item (position order).
        impression : int or str, default=0
            The impression's id, repeated on every row.

        Returns
        -------
        dict of numpy.ndarray
            ``impression``, ``position`` (1-based), ``item``, ``team``, ``click``; for balanced
            interleaving also ``rank_<ranker>`` (NaN: not in that list), for probabilistic
            ``prob_<ranker>``.

        Examples
        --------
        >>> from ranklens.online import interleave
        >>> il = interleave(["x", "y", "w"], ["y", "z", "x"], method="balanced", k=3, seed=1)
        >>> log = il.log([0, 1, 0], impression=7)
        >>> sorted(log)
        ['click', 'impression', 'item', 'position', 'rank_a', 'rank_b', 'team']
        >>> log["position"].tolist(), log["click"].tolist()
        ([1, 2, 3], [0, 1, 0])
        """
        n = len(self.items)
        c = np.asarray(clicks)
        if c.ndim != 1 or c.shape[0] != n:
            raise InvalidParameterError(
                f"`clicks` must hold one value per shown item ({n}); got shape {c.shape}.")
        if c.dtype.kind not in "biuf" or not np.isin(c, (0, 1)).all():
            raise InvalidParameterError("`clicks` must be booleans or 0/1, one per shown item.")
        out: dict[str, np.ndarray] = {
            "impression": np.full(n, impression, dtype=object if isinstance(impression, str) else np.int64),
            "position": np.arange(1, n + 1, dtype=np.int64),
            "item": _column(self.items),
            "team": _column(self.teams),
            "click": c.astype(np.int8),
        }
        if self.ranks is not None:
            for j, r in enumerate(self.rankers):
                out[f"rank_{r}"] = self.ranks[j].copy()
        if self.probabilities is not None:
            for j, r in enumerate(self.rankers):
                out[f"prob_{r}"] = self.probabilities[j].copy()
        return out


def _column(values: list[Any]) -> np.ndarray:
    """A list of ids as one numpy column: int64 when they all are integers, else objects."""
    if values and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        return np.asarray(values, dtype=np.int64)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def check_method(method: Any, allowed: tuple[str, ...] = METHODS) -> str:
    """``method`` when it is one of ``allowed``, else :class:`InvalidParameterError` naming `method`."""
    if not isinstance(method, str) or method not in allowed:
        raise InvalidParameterError(f"`method` must be one of {', '.join(map(repr, allowed))}; got {method!r}.")
    return method


def check_k(k: Any) -> int:
    """``k`` as a positive integer, else :class:`InvalidParameterError` naming `k`."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InvalidParameterError(f"`k` (the length of the interleaved list) must be a positive integer; got {k!r}.")
    return int(k)


def make_rng(seed: Any) -> np.random.Generator:
    """A numpy Generator from ``seed``: None (fresh entropy), a non-negative integer, or a Generator."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0):
        return np.random.default_rng(seed)
    raise InvalidParameterError(f"`seed` must be None, a non-negative integer or a numpy Generator; got {seed!r}.")


def check_tau(tau: Any, method: str) -> float | None:
    """Probabilistic interleaving's ``tau`` (default 3); refused for the other methods."""
    if tau is None:
        return DEFAULT_TAU if method == "probabilistic" else None
    if method != "probabilistic":
        raise InvalidParameterError(
            f"`tau` is the softmax exponent of probabilistic interleaving; method is {method!r}.")
    if isinstance(tau, bool) or not isinstance(tau, (int, float, np.integer, np.floating)) or not (
            np.isfinite(tau) and tau > 0):
        raise InvalidParameterError(f"`tau` must be a positive finite number; got {tau!r}.")
    return float(tau)


def _ranking(x: Any, name: str) -> list[Any]:
    """One ranker's list of items (best first): a sequence of hashable ids without repeats."""
    if isinstance(x, (str, bytes)) or isinstance(x, Mapping) or not isinstance(x, (Sequence, np.ndarray)):
        raise InvalidParameterError(
            f"ranking {name} must be a list, tuple or 1-D array of item ids (best first); got {type(x).__name__}.")
    if isinstance(x, np.ndarray):
        if x.ndim != 1:
            raise InvalidParameterError(f"ranking {name} must be 1-D; got an array of shape {x.shape}.")
        x = x.tolist()
    items = list(x)
    try:
        distinct = set(items)
    except TypeError:
        bad = next(v for v in items if not _hashable(v))
        raise InvalidParameterError(
            f"ranking {name} holds {bad!r}, which cannot be an item id (not hashable).") from None
    if len(distinct) != len(items):
        seen: set[Any] = set()
        dup = next(v for v in items if v in seen or seen.add(v))  # type: ignore[func-returns-value]
        raise InvalidParameterError(f"ranking {name} holds item {dup!r} twice; a ranking lists each item once.")
    return items


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def interleave(a: Any, b: Any, *, method: str = "team_draft", k: int = 10, seed: Any = None,
               tau: float | None = None) -> Interleaving:
    """Interleave two rankers' lists into the one list a user is shown.

    Parameters
    ----------
    a, b : sequence of item ids
        The two rankers' lists, best first (no item twice in one list).
    method : {"team_draft", "balanced", "probabilistic"}, default="team_draft"
        See the module's description.
    k : int, default=10
        The length of the shown list (shorter when the lists hold fewer distinct items, or, for balanced
        interleaving, when either list ends).
    seed : None, int or numpy.random.Generator
        The random draws (team order, coin, softmax samples).
    tau : float, optional
        Probabilistic interleaving's softmax exponent (default 3, as Hofmann et al. and the
        ``interleaving`` package); refused for the other methods.

    Returns
    -------
    Interleaving
        ``.items`` and ``.teams`` (``"a"`` / ``"b"`` per position), and what the outcome needs.

    Examples
    --------
    >>> from ranklens.online import interleave
    >>> il = interleave(["d1", "d2", "d3"], ["d2", "d4", "d1"], k=4, seed=3)
    >>> len(il.items), sorted(set(il.teams))
    (4, ['a', 'b'])
    >>> il.teams.count("a")  # team draft: the teams' sizes differ by at most one
    2
    >>> p = interleave([1, 2], [2, 1], method="probabilistic", k=2, seed=0)
    >>> p.probabilities.shape  # each ranker's probability of each shown item
    (2, 2)
    """
    method = check_method(method)
    lists = {"a": _ranking(a, "a"), "b": _ranking(b, "b")}
    return build(lists, method, check_k(k), make_rng(seed), check_tau(tau, method))


def multileave(rankings: Any, *, method: str = "team_draft", k: int = 10, seed: Any = None,
               tau: float | None = None) -> Interleaving:
    """Multileave two or more rankers' lists into one shown list.

    Parameters
    ----------
    rankings : mapping of name to list, or sequence of lists
        The rankers' lists, best first; with a sequence the rankers are named 0, 1, ...
    method : {"team_draft", "probabilistic"}, default="team_draft"
        Team-draft multileaving (Schuth et al. 2014), or probabilistic interleaving with a ranker drawn
        uniformly (with replacement) for each position (its outcome is marginalised exactly: the
        assignments of positions to rankers are independent given the list).
    k, seed, tau
        As in :func:`interleave`.

    Returns
    -------
    Interleaving
        ``.teams`` holds the rankers' names.

    Examples
    --------
    >>> from ranklens.online import multileave
    >>> m = multileave({"bm25": [1, 2, 3], "dense": [3, 4, 5], "mix": [5, 1, 6]}, k=6, seed=0)
    >>> sorted(m.teams.count(r) for r in m.rankers)  # each team places two items
    [2, 2, 2]
    """
    method = check_method(method, MULTILEAVE_METHODS)
    if isinstance(rankings, Mapping):
        lists = {name: _ranking(v, repr(name)) for name, v in rankings.items()}
    elif isinstance(rankings, (Sequence, np.ndarray)) and not isinstance(rankings, (str, bytes)):
        lists = {j: _ranking(v, str(j)) for j, v in enumerate(rankings)}
    else:
        raise InvalidParameterError(
            f"`rankings` must be a dict {{name: list}} or a list of lists; got {type(rankings).__name__}.")
    if len(lists) < 2:
        raise InvalidParameterError(f"`rankings` must hold at least two rankers; got {len(lists)}.")
    return build(lists, method, check_k(k), make_rng(seed), check_tau(tau, method))


#: ``choose(n)``: one of ``n`` equally likely choices (a ranker among the smallest teams, the leading list).
Choose = Callable[[int], int]


def build(lists: dict[Any, list[Any]], method: str, k: int, rng: np.random.Generator,
          tau: float | None, choose: Choose | None = None) -> Interleaving:
    """The interleaving of ``lists`` (name -> items, already checked) by ``method``; team draft's and balanced
    interleaving's random choices are ``choose(n)`` (default: uniform draws from ``rng``)."""
    if choose is None:
        def choose(n: int) -> int:
            return int(rng.integers(n))
    names = tuple(lists)
    seqs = list(lists.values())
    if not any(seqs):
        raise InvalidParameterError("every ranking is empty; there is nothing to interleave.")
    if method == "team_draft":
        items, picks = _team_draft(seqs, k, choose)
        return Interleaving(items, [names[j] for j in picks], names, method)
    if method == "balanced":
        items, picks = _balanced(seqs[0], seqs[1], k, choose)
        ranks = np.full((2, len(items)), np.nan)
        for j, seq in enumerate(seqs):
            where = {d: r + 1 for r, d in enumerate(seq)}
            ranks[j] = [where.get(d, np.nan) for d in items]
        return Interleaving(items, [names[j] for j in picks], names, method, ranks=ranks)
    assert tau is not None
    items, picks, probs = _probabilistic(seqs, k, tau, rng)
    return Interleaving(items, [names[j] for j in picks], names, method, probabilities=probs, tau=tau)


def every_interleaving(lists: dict[Any, list[Any]], method: str, k: int) -> list[tuple[Interleaving, float]]:
    """Every list team draft or balanced interleaving can show for ``lists``, with its probability: the tree of
    the method's choices walked depth first (each run follows a prefix of choices, then the first option).

    Examples
    --------
    >>> from ranklens.online.interleaving import every_interleaving
    >>> [(il.items, p) for il, p in every_interleaving({"a": [1, 2], "b": [3, 4]}, "team_draft", 3)]
    [([1, 3, 2], 0.25), ([1, 3, 4], 0.25), ([3, 1, 2], 0.25), ([3, 1, 4], 0.25)]
    """
    if method not in ("team_draft", "balanced"):
        raise InvalidParameterError(
            f"only team draft and balanced interleaving have few possible lists; got {method!r}.")
    out = []
    unused = np.random.default_rng(0)  # the choices are scripted: no draw
    todo: list[tuple[int, ...]] = [()]
    while todo:
        prefix = todo.pop()
        made: list[int] = []

        def choose(n: int, prefix: tuple[int, ...] = prefix, made: list[int] = made) -> int:
            made.append(n)
            return prefix[len(made) - 1] if len(made) <= len(prefix) else 0

        il = build(lists, method, k, unused, None, choose)
        for j in range(len(prefix), len(made)):
            todo.extend(prefix + (0,) * (j - len(prefix)) + (c,) for c in range(1, made[j]))
        out.append((il, 1.0 / math.prod(made)))
    return out


def _team_draft(lists: list[list[Any]], k: int, choose: Choose) -> tuple[list[Any], list[int]]:
    """Team draft: the smallest team (ties at random) adds its best item not yet shown."""
    pointer = [0] * len(lists)
    size = [0] * len(lists)
    alive = [j for j, seq in enumerate(lists) if seq]
    shown: set[Any] = set()
    items: list[Any] = []
    picks: list[int] = []
    while len(items) < k and alive:
        smallest = min(size[j] for j in alive)
        ready = [j for j in alive if size[j] == smallest]
        j = ready[choose(len(ready))] if len(ready) > 1 else ready[0]
        seq, p = lists[j], pointer[j]
        while p < len(seq) and seq[p] in shown:
            p += 1
        if p == len(seq):
            alive.remove(j)
            continue
        pointer[j] = p + 1
        shown.add(seq[p])
        items.append(seq[p])
        picks.append(j)
        size[j] += 1
    return items, picks


def _balanced(a: list[Any], b: list[Any], k: int, choose: Choose) -> tuple[list[Any], list[int]]:
    """Balanced interleaving (Joachims 2003), two lists."""
    a_first = choose(2) == 0
    ka = kb = 0
    shown: set[Any] = set()
    items: list[Any] = []
    picks: list[int] = []
    while ka < len(a) and kb < len(b) and len(items) < k:
        if ka < kb or (ka == kb and a_first):
            d, j = a[ka], 0
            ka += 1
        else:
            d, j = b[kb], 1
            kb += 1
        if d not in shown:
            shown.add(d)
            items.append(d)
            picks.append(j)
    return items, picks


def _probabilistic(lists: list[list[Any]], k: int, tau: float,
                   rng: np.random.Generator) -> tuple[list[Any], list[int], np.ndarray]:
    """Probabilistic interleaving: a ranker drawn per position, an item drawn from its softmax."""
    weights = [[1.0 / (r + 1) ** tau for r in range(len(seq))] for seq in lists]
    where = [{d: r for r, d in enumerate(seq)} for seq in lists]
    left = [[True] * len(seq) for seq in lists]
    count = [len(seq) for seq in lists]
    mass = [math.fsum(w) for w in weights]
    exact = list(mass)  # the last exactly summed mass: re-summed when the running one has lost 3 digits
    alive = [j for j, seq in enumerate(lists) if seq]
    items: list[Any] = []
    picks: list[int] = []
    probs: list[list[float]] = []
    while len(items) < k and alive:
        j = alive[int(rng.integers(len(alive)))]
        u = float(rng.random()) * mass[j]
        cum, last = 0.0, -1
        for r, (w, ok) in enumerate(zip(weights[j], left[j])):
            if ok:
                cum += w
                last = r
                if cum > u:
                    break
        d = lists[j][last]
        row = [0.0] * len(lists)
        for m in range(len(lists)):
            r = where[m].get(d, -1)
            if r < 0:
                continue
            row[m] = 1.0 if count[m] == 1 else min(1.0, weights[m][r] / mass[m])  # rounding of the running mass
            left[m][r] = False
            count[m] -= 1
            mass[m] -= weights[m][r]
            if count[m] == 0:
                mass[m] = 0.0
            elif mass[m] < 1e-3 * exact[m]:
                mass[m] = exact[m] = math.fsum(w for w, ok in zip(weights[m], left[m]) if ok)
        items.append(d)
        picks.append(j)
        probs.append(row)
        alive = [m for m in alive if count[m]]
    return items, picks, np.asarray(probs, dtype=np.float64).T.reshape(len(lists), len(items))
