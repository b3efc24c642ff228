"""Debiased click measures of the store: ``ips_dcg@k`` and ``ips_ndcg@k`` beside the naive ``dcg@k``, ``ndcg@k``.

The naive measures take each item's gain from its labels (a click: 1 under the binary attribution). Users
look at the top, so a click at rank 1 and one at rank 9 do not mean the same: the naive click DCG rewards
whatever the served ranker put on top. ``ips_<measure>`` is the same core measure on **inverse-propensity
weighted** gains: each item's gain divided by the examination of the rank it was served at (``items.rank``),
relative to rank 1 (:func:`ranklens.counterfactual.propensity.inverse_propensity`, the weighting the
counterfactual estimators use). Under a position-based click model (examination ``theta_r``, attractiveness
``alpha``), ``E[click at r] = theta_r alpha(d_r)``, so ``ips_dcg@k`` of a list has expectation
``sum_r discount(r) alpha(d_r)``: the DCG of the served list with attractiveness (on the scale of rank 1) as
gains, whichever ranker served it. ``ips_ndcg@k`` divides a list's ``ips_dcg@k`` by the ideal DCG of its own
weighted gains (a ratio: consistent, not unbiased per list). Only the DCG family is offered: other measures
are not sums over positions of the gains.

Propensities come from the configuration::

    [propensity]
    source = "config"
    examination = [1.0, 0.62, 0.45, 0.35, 0.28, 0.23, 0.2, 0.17, 0.15, 0.13]   # ranks 1, 2, ...

A click beyond the ranks the examination covers is refused (its propensity is unknown).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._defs.measures import parse_measure
from ..errors import InvalidParameterError

__all__ = ["IPS_PREFIX", "SOURCES", "ips_gains", "parse_propensity", "parse_store_measure", "split_ips"]

IPS_PREFIX = "ips_"
SOURCES = ("config",)
_FAMILIES = ("dcg", "ndcg")


def split_ips(key: str) -> tuple[bool, str]:
    """(is it an inverse-propensity measure, the core measure's key).

    >>> split_ips("ips_ndcg@10"), split_ips("ndcg@10")
    ((True, 'ndcg@10'), (False, 'ndcg@10'))
    """
    text = str(key).strip()
    if text.lower().startswith(IPS_PREFIX):
        return True, text[len(IPS_PREFIX):]
    return False, text


def parse_store_measure(text: str) -> list[Any]:
    """The core's parsed measures of ``text``; ``ips_<measure>`` parses as its core measure keyed ``ips_...``.

    >>> [m.key for m in parse_store_measure("ips_ndcg@10")], parse_store_measure("ips_ndcg@10")[0].family
    (['ips_ndcg@10'], 'ndcg')
    """
    ips, core = split_ips(text)
    parsed = parse_measure(core)
    if not ips:
        return parsed
    bad = [m.key for m in parsed if m.family not in _FAMILIES]
    if bad:
        raise InvalidParameterError(
            f"measure {text!r}: inverse-propensity weighting applies to the DCG family (ips_dcg@k, ips_ndcg@k), "
            f"sums over positions of the gains; {bad[0]!r} is not.")
    return [dataclasses.replace(m, key=IPS_PREFIX + m.key) for m in parsed]


def parse_propensity(table: Any, where: str) -> dict[str, Any]:
    """The ``[propensity]`` table checked: ``{"source": "config", "examination": (1.0, ...)}`` or ``{}``."""
    from ..counterfactual.propensity import check_examination

    if not table:
        return {}
    if not isinstance(table, Mapping):
        raise InvalidParameterError(f"{where}: expected a table of keys; got {table!r}.")
    extra = sorted(set(table) - {"source", "examination"})
    if extra:
        raise InvalidParameterError(f"{where}: unknown key {extra[0]!r} (known: source, examination).")
    source = table.get("source", "config")
    if source not in SOURCES:
        raise InvalidParameterError(f"{where}: `source` must be one of {', '.join(SOURCES)}; got {source!r}.")
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


def ips_gains(gain: np.ndarray, rank: np.ndarray, propensity: Mapping[str, Any], where: str) -> np.ndarray:
    """Each item's gain over the examination of the rank it was served at (relative to rank 1)."""
    from ..counterfactual.propensity import check_examination, inverse_propensity

    if not propensity:
        raise InvalidParameterError(
            "inverse-propensity measures (ips_dcg@k, ips_ndcg@k) need propensities: add a [propensity] table "
            "with `examination = [...]` (one value per rank from 1) to the configuration.")
    exam = check_examination(propensity["examination"])
    return gain * inverse_propensity(rank, exam, gain > 0, where)
