"""Names of the label-free signals: one spelling scheme for reports, monitors, the CLI and the dashboard.

A signal is ``name``, ``name@k`` or ``name(argument)``:

* distances between the window and the baseline (0 when they are alike; larger is worse):
  ``psi(score)``, ``ks(score)``, ``psi(position)``, ``psi(popularity)`` / ``psi(popularity@k)``;
* levels, computed alike on the window and on the baseline: ``coverage``, ``gini``, ``novelty``, ``ild``
  (each also ``@k``: only the items served at positions 1..k count).

This module imports nothing of the store, so the configuration can check a monitor's name with it.

Examples
--------
>>> parse_signal("psi(score)")
SignalName(key='psi(score)', kind='psi', argument='score', k=None)
>>> parse_signal("GINI@10").key
'gini@10'
>>> is_signal("ndcg@10"), is_signal("psi(popularity@5)")
(False, True)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ...errors import InvalidParameterError

__all__ = ["DISTANCES", "LEVELS", "SIGNALS", "SignalName", "check_signal_monitor", "is_signal", "parse_signal",
           "signal_keys"]

#: Distances between a window and its baseline: the argument names the distribution compared.
DISTANCES: dict[str, tuple[str, ...]] = {"psi": ("score", "position", "popularity"), "ks": ("score",)}
#: Levels, with the direction in which they get worse.
LEVELS: dict[str, str] = {"coverage": "down", "gini": "up", "novelty": "down", "ild": "down"}
#: Every signal family, in the order reports list them.
SIGNALS: tuple[str, ...] = ("psi(score)", "ks(score)", "psi(position)", "psi(popularity)", "coverage", "gini",
                            "novelty", "ild")

_RE = re.compile(r"^\s*([a-z]+)\s*(?:\(\s*([a-z]+)\s*(?:@\s*(\d+))?\s*\)|@\s*(\d+))?\s*$")


@dataclass(frozen=True)
class SignalName:
    """A parsed signal name: ``key`` is its canonical spelling."""

    key: str
    kind: str
    argument: str | None
    k: int | None

    @property
    def family(self) -> str:
        """The key without its cutoff (``psi(popularity@10)`` -> ``psi(popularity)``, ``gini@10`` -> ``gini``):
        what the signal's definition is keyed by."""
        return f"{self.kind}({self.argument})" if self.argument is not None else self.kind

    @property
    def is_distance(self) -> bool:
        """True for psi and ks (compared with the baseline's distribution), False for levels."""
        return self.kind in DISTANCES

    @property
    def worse(self) -> str:
        """``"up"`` when a larger value is worse (distances, gini), ``"down"`` otherwise."""
        return "up" if self.is_distance else LEVELS[self.kind]


def parse_signal(name: str) -> SignalName:
    """The signal a name spells; an error naming it (and listing the signals) when it spells none."""
    m = _RE.match(str(name).lower())
    err = InvalidParameterError(
        f"unknown signal {name!r}; signals: psi(score), ks(score), psi(position), psi(popularity@K), "
        "coverage[@K], gini[@K], novelty[@K], ild[@K]."
    )
    if not m:
        raise err
    kind, arg, k_arg, k_level = m.groups()
    if kind in DISTANCES:
        if arg not in DISTANCES[kind] or (k_arg is not None and arg != "popularity") or k_level is not None:
            raise err
        k = int(k_arg) if k_arg is not None else None
        key = f"{kind}({arg}{'' if k is None else f'@{k}'})"
    elif kind in LEVELS:
        if arg is not None:
            raise err
        k = int(k_level) if k_level is not None else None
        key = kind if k is None else f"{kind}@{k}"
    else:
        raise err
    if k is not None and not 1 <= k <= 1000:
        raise InvalidParameterError(f"signal {name!r}: the cutoff must be in [1, 1000]; got {k}.")
    return SignalName(key, kind, arg, k)


def is_signal(name: str) -> bool:
    """True when ``name`` spells a label-free signal (not a measure of the core)."""
    try:
        parse_signal(name)
    except InvalidParameterError:
        return False
    return True


def signal_keys(names: str | Iterable[str] | None) -> list[str]:
    """Canonical keys of one name or a list of names (default: every signal family), without repeats."""
    if names is None:
        return list(SIGNALS)
    items = [names] if isinstance(names, str) else list(names)
    if not items:
        return list(SIGNALS)
    return list(dict.fromkeys(parse_signal(str(n)).key for n in items))


def check_signal_monitor(name: str, metric: str, threshold: float | None, relative_drop: float | None,
                         absolute_drop: float | None, significance: float | None) -> None:
    """Refuse limits a signal monitor cannot use, naming the monitor and the key.

    Distances (psi, ks) and gini fire when they rise above ``threshold``; coverage, novelty and ild when
    they fall below ``threshold`` or more than ``relative_drop`` / ``absolute_drop`` below the baseline's
    own value. ``significance`` (p < significance) goes with ``ks(score)`` only.

    Examples
    --------
    >>> check_signal_monitor("m", "psi(score)", None, 0.1, None, None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ranklens.errors.InvalidParameterError: monitor 'm': signal psi(score) fires above a `threshold` ...
    """
    sig = parse_signal(metric)
    if sig.worse == "up":
        for key, v in (("relative_drop", relative_drop), ("absolute_drop", absolute_drop)):
            if v is not None:
                raise InvalidParameterError(
                    f"monitor {name!r}: signal {sig.key} fires above a `threshold` (a larger value is worse); "
                    f"`{key}` does not apply to it.")
        if threshold is None:
            raise InvalidParameterError(f"monitor {name!r}: signal {sig.key} needs a `threshold`, e.g. 0.2.")
    if significance is not None and sig.kind != "ks":
        raise InvalidParameterError(f"monitor {name!r}: `significance` goes with ks(score) only (its p-value); "
                                    f"{sig.key} has no test.")
