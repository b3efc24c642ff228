"""Names of the label-free signals: one spelling scheme for reports, monitors, the CLI and the dashboard.

A signal is ``name``, ``name@k`` or ``name(argument)``:

* distances between the window and the baseline (0 when they are alike; larger is worse):
  ``psi(score)``, ``ks(score)``, ``psi(position)``, ``psi(popularity)`` / ``psi(popularity@k)``;
* levels, computed alike on the window and on the baseline: ``coverage``, ``gini``, ``novelty``, ``ild``
  (each also ``@k``: only the items served at positions 1..k count);
* feature drift, for the feature columns of the events (``[signals] features``): ``psi(feature:NAME)``,
  ``js(feature:NAME)``, and ``ks(feature:NAME)`` for a numeric feature.

This module imports nothing of the store, so the configuration can check a monitor's name with it.

Examples
--------
>>> parse_signal("psi(score)")
SignalName(key='psi(score)', kind='psi', argument='score', k=None)
>>> parse_signal("GINI@10").key
'gini@10'
>>> is_signal("ndcg@10"), is_signal("psi(popularity@5)")
(False, True)
>>> parse_signal("JS(feature: Brand)")
SignalName(key='js(feature:brand)', kind='js', argument='feature:brand', k=None)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import InvalidParameterError

__all__ = ["DISTANCES", "FEATURE_DISTANCES", "FEATURE_KINDS", "LEVELS", "SIGNALS", "SignalName", "check_signal_monitor",
           "feature_signals", "is_signal", "parse_features", "parse_signal", "signal_keys"]

#: Distances between a window and its baseline: the argument names the distribution compared.
DISTANCES: dict[str, tuple[str, ...]] = {"psi": ("score", "position", "popularity"), "ks": ("score",), "js": ()}
#: The kinds of a feature column, and the distances each kind has (ks compares numbers only).
FEATURE_KINDS: dict[str, tuple[str, ...]] = {"numeric": ("psi", "ks", "js"), "categorical": ("psi", "js")}
#: Every distance a feature may be compared by.
FEATURE_DISTANCES = ("psi", "ks", "js")
#: Levels, with the direction in which they get worse.
LEVELS: dict[str, str] = {"coverage": "down", "gini": "up", "novelty": "down", "ild": "down"}
#: Every signal family, in the order reports list them.
SIGNALS: tuple[str, ...] = ("psi(score)", "ks(score)", "psi(position)", "psi(popularity)", "coverage", "gini",
                            "novelty", "ild")

_RE = re.compile(r"^\s*([a-z]+)\s*(?:\(\s*([a-z]+)\s*(?:@\s*(\d+))?\s*\)|@\s*(\d+))?\s*$")
_FEATURE_RE = re.compile(r"^\s*([a-z]+)\s*\(\s*feature\s*:\s*([a-z_][a-z0-9_]*)\s*\)\s*$")
_FEATURE_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,63}$")
#: Event columns that cannot be features (they have their own meaning).
_EVENT_COLUMNS = ("timestamp", "model", "model_version", "environment", "group_id", "item_id", "rank", "score",
                  "relevance", "labels")


@dataclass(frozen=True)
class SignalName:
    """A parsed signal name: ``key`` is its canonical spelling."""

    key: str
    kind: str
    argument: str | None
    k: int | None

    @property
    def feature(self) -> str | None:
        """The feature a drift signal compares (``price`` for ``psi(feature:price)``), else None."""
        if self.argument is not None and self.argument.startswith("feature:"):
            return self.argument.split(":", 1)[1]
        return None

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
    err = InvalidParameterError(
        f"unknown signal {name!r}; signals: psi(score), ks(score), psi(position), psi(popularity@K), "
        "coverage[@K], gini[@K], novelty[@K], ild[@K], psi|ks|js(feature:NAME)."
    )
    f = _FEATURE_RE.match(str(name).lower())
    if f:
        if f.group(1) not in FEATURE_DISTANCES:
            raise err
        return SignalName(f"{f.group(1)}(feature:{f.group(2)})", f.group(1), f"feature:{f.group(2)}", None)
    m = _RE.match(str(name).lower())
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


def parse_features(table: Any, where: str) -> dict[str, str]:
    """``[signals] features``: feature name -> kind (``numeric`` or ``categorical``), names in lower case.

    Examples
    --------
    >>> parse_features({"Price": "numeric", "brand": "categorical"}, "[signals]")
    {'price': 'numeric', 'brand': 'categorical'}
    """
    if not isinstance(table, Mapping):
        raise InvalidParameterError(f"{where}: `features` must be a table of name = \"numeric\" | \"categorical\"; "
                                    f"got {table!r}.")
    out: dict[str, str] = {}
    for name, kind in table.items():
        low = str(name).strip().lower()
        if not _FEATURE_NAME.match(low) or low in _EVENT_COLUMNS:
            raise InvalidParameterError(
                f"{where}: feature {name!r} must be the name of an event column of letters, digits and _ (not "
                f"starting with a digit, at most 64), other than {', '.join(_EVENT_COLUMNS)}.")
        if kind not in FEATURE_KINDS:
            raise InvalidParameterError(f"{where}: feature {name!r} is {kind!r}; a feature is \"numeric\" or "
                                        "\"categorical\".")
        if low in out:
            raise InvalidParameterError(f"{where}: feature {name!r} is given twice (names are case-insensitive).")
        out[low] = str(kind)
    return out


def feature_signals(features: Mapping[str, str]) -> list[str]:
    """The drift signals of features (name -> kind): every distance their kind has, feature by feature.

    Examples
    --------
    >>> feature_signals({"price": "numeric", "brand": "categorical"})
    ['psi(feature:brand)', 'js(feature:brand)', 'psi(feature:price)', 'ks(feature:price)', 'js(feature:price)']
    """
    return [f"{d}(feature:{name})" for name in sorted(features) for d in FEATURE_KINDS[features[name]]]


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
        raise InvalidParameterError(f"monitor {name!r}: `significance` goes with ks(score) and ks(feature:NAME) "
                                    "only (their p-value); "
                                    f"{sig.key} has no test.")
