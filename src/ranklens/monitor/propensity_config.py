"""The ``[propensity]`` table of the monitoring configuration: where the store's debiased measures take their
propensities from (:mod:`ranklens.monitor.propensity` for the measures).

From the configuration (the examination of each rank from 1, relative to rank 1)::

    [propensity]
    source = "config"
    examination = [1.0, 0.62, 0.45, 0.35, 0.28, 0.23, 0.2, 0.17, 0.15, 0.13]

or fitted on the store's own logs by the position-based click model
(:func:`ranklens.counterfactual.fit_click_model`, EM; :mod:`ranklens.monitor.storage.propensity_fit`)::

    [propensity]
    source = "fitted"
    window = "28d"      # the mature lists served in the last 28 days; default: every mature list
    query = "query"     # a slice column naming each list's query: pairs are (query, item); default: the item alone
    label = "click"     # the label that is a click (default "click")
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InvalidParameterError
from .storage.params import parse_duration

__all__ = ["SOURCES", "parse_propensity"]

#: Where propensities come from.
SOURCES = ("config", "fitted")
_KEYS = {"config": ("source", "examination"), "fitted": ("source", "window", "query", "label")}


def parse_propensity(table: Any, where: str) -> dict[str, Any]:
    """The ``[propensity]`` table checked: ``{"source": "config", "examination": (1.0, ...)}``,
    ``{"source": "fitted", "window": timedelta or None, "query": str or None, "label": str}`` or ``{}``.

    >>> parse_propensity({"source": "fitted", "window": "28d"}, "[propensity]")["window"]
    datetime.timedelta(days=28)
    >>> parse_propensity({"source": "fitted", "examination": [1.0]}, "[propensity]")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ranklens.errors.InvalidParameterError: [propensity]: `examination` goes with source = "config", not "fitted" ...
    """
    from ..counterfactual.propensity import check_examination

    if not table:
        return {}
    if not isinstance(table, Mapping):
        raise InvalidParameterError(f"{where}: expected a table of keys; got {table!r}.")
    source = table.get("source", "config")
    if source not in SOURCES:
        raise InvalidParameterError(f"{where}: `source` must be one of {', '.join(SOURCES)}; got {source!r}.")
    other = "fitted" if source == "config" else "config"
    for key in sorted(set(table) - set(_KEYS[source])):
        if key in _KEYS[other]:
            raise InvalidParameterError(f'{where}: `{key}` goes with source = "{other}", not "{source}" (keys of '
                                        f'source = "{source}": {", ".join(_KEYS[source][1:])}).')
        raise InvalidParameterError(f"{where}: unknown key {key!r} (known: {', '.join(_KEYS[source])}).")
    if source == "fitted":
        out: dict[str, Any] = {"source": "fitted", "window": None, "query": None, "label": "click"}
        if table.get("window") is not None:
            out["window"] = parse_duration(table["window"], f"{where}: `window`")
            if not out["window"]:
                raise InvalidParameterError(f"{where}: `window` must be longer than 0; got {table['window']!r}.")
        for key in ("query", "label"):
            if key in table:
                if not isinstance(table[key], str) or not table[key].strip():
                    raise InvalidParameterError(f"{where}: `{key}` must be a non-empty string; got {table[key]!r}.")
                out[key] = table[key].strip()
        return out
    exam = table.get("examination")
    if not isinstance(exam, (list, tuple)) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in exam):
        raise InvalidParameterError(f"{where}: `examination` must be a list of numbers in (0, 1], one per rank "
                                    f"from 1; got {exam!r}.")
    try:
        check_examination(exam, f"{where}: `examination`")
    except Exception as exc:
        raise InvalidParameterError(str(exc)) from None
    return {"source": source, "examination": tuple(float(v) for v in exam)}
