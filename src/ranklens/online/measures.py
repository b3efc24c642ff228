"""Online measures of a served list, from its clicks and purchases.

Each is a per-list value, written ``name`` or ``name@k`` (only the top ``k`` positions count; without ``@k``
the whole list):

* ``clicks@k``: the number of clicked items among the top k;
* ``ctr@k``: ``clicks@k`` over the number of items shown in the top k (``min(k, list length)``);
* ``abandonment@k``: 1 when no item of the top k is clicked, else 0;
* ``first_click_rr@k``: 1 / the rank of the first click, 0 when the top k has no click (as MRR scores a list
  without a relevant item);
* ``purchases@k``: the number of purchased items among the top k.

Every list has a value for every online measure (none is left out). The same definitions give a list's value
from its events (:func:`list_values`), from a click pattern (:func:`pattern_values`) and in expectation under
a click model (:func:`expected_values`, exact).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidParameterError

__all__ = ["NAMES", "OnlineMeasure", "expected_values", "is_online", "list_values", "parse_online",
           "pattern_values"]

NAMES = ("clicks", "ctr", "abandonment", "first_click_rr", "purchases")
_SPELLING = re.compile(r"^\s*([a-z_]+)(?:@(\d+))?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class OnlineMeasure:
    """One online measure: its name and cutoff (None: the whole list).

    >>> parse_online("CTR@10")
    OnlineMeasure(name='ctr', k=10)
    >>> parse_online("abandonment").key
    'abandonment'
    """

    name: str
    k: int | None = None

    @property
    def key(self) -> str:
        """The measure as written in outputs: ``clicks@10``, ``abandonment``."""
        return self.name if self.k is None else f"{self.name}@{self.k}"


def is_online(measure: str) -> bool:
    """Whether ``measure`` names an online measure (``clicks@10``...) rather than a ranking measure.

    >>> is_online("clicks@10"), is_online("ndcg@10")
    (True, False)
    """
    m = _SPELLING.match(str(measure))
    return bool(m) and m.group(1).lower() in NAMES  # type: ignore[union-attr]


def parse_online(measure: str) -> OnlineMeasure:
    """The :class:`OnlineMeasure` of a spelling such as ``clicks@10`` (an error names the valid ones)."""
    m = _SPELLING.match(str(measure))
    if not m or m.group(1).lower() not in NAMES:
        raise InvalidParameterError(f"unknown online measure {measure!r}; online measures are "
                                    f"{', '.join(NAMES)} (with @k for the top k, e.g. clicks@10).")
    k = None if m.group(2) is None else int(m.group(2))
    if k is not None and k < 1:
        raise InvalidParameterError(f"online measure {measure!r}: the cutoff must be >= 1.")
    return OnlineMeasure(m.group(1).lower(), k)


def _top(position: np.ndarray, k: int | None) -> np.ndarray:
    return np.ones(position.shape, dtype=bool) if k is None else position <= k


def list_values(m: OnlineMeasure, list_code: np.ndarray, position: np.ndarray, click: np.ndarray,
                buy: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The measure of each list from its rows (``list_code`` 0..n-1, 1-based ``position``, click and buy flags);
    ``lengths`` is each list's number of items."""
    n = len(lengths)
    top = _top(position, m.k)
    if m.name in ("clicks", "ctr"):
        c = np.bincount(list_code, weights=(click & top).astype(np.float64), minlength=n)
        if m.name == "clicks":
            return c
        shown = lengths.astype(np.float64) if m.k is None else np.minimum(lengths, m.k).astype(np.float64)
        return c / shown
    if m.name == "purchases":
        return np.bincount(list_code, weights=(buy & top).astype(np.float64), minlength=n)
    hit = click & top
    first = np.full(n, np.inf)
    lc, pos = list_code[hit], position[hit]
    if len(lc):
        order = np.lexsort((pos, lc))
        heads = np.flatnonzero(np.r_[True, lc[order][1:] != lc[order][:-1]])
        first[lc[order][heads]] = pos[order][heads]
    if m.name == "abandonment":
        return np.isinf(first).astype(np.float64)
    return np.where(np.isinf(first), 0.0, 1.0 / first)


def pattern_values(m: OnlineMeasure, clicks: np.ndarray, buys: np.ndarray, length: int) -> np.ndarray:
    """The measure of lists of ``length`` items whose clicks (and buys) are the rows of 0/1 matrices."""
    c = np.asarray(clicks, dtype=bool)
    b = np.asarray(buys, dtype=bool) & c
    n, width = c.shape
    pos = np.broadcast_to(np.arange(1, width + 1), c.shape)
    code = np.broadcast_to(np.arange(n)[:, None], c.shape)
    return list_values(m, code.ravel(), pos.ravel(), c.ravel(), b.ravel(), np.full(n, length))


def expected_values(m: OnlineMeasure, model: Any, grades: np.ndarray, multiplier: Any = None) -> np.ndarray:
    """The exact expectation of the measure for each list (rows of ``grades``; -1: no item) under ``model``."""
    g = np.atleast_2d(grades)
    width = g.shape[1]
    top = _top(np.arange(1, width + 1), m.k)
    if m.name in ("clicks", "ctr", "purchases"):
        pc = model.click_probability(g, multiplier)
        if m.name == "purchases":
            pc = pc * model.purchase_probability(g)
        total = (pc * top).sum(axis=1)
        if m.name != "ctr":
            return total
        lengths = (g >= 0).sum(axis=1)
        return total / (lengths if m.k is None else np.minimum(lengths, m.k))
    first = model.first_click_probability(g, multiplier) * top
    if m.name == "abandonment":
        return 1.0 - first.sum(axis=1)
    return (first / np.arange(1, width + 1)).sum(axis=1)
