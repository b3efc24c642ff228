"""Debiased click measures of the store: ``ips_dcg@k`` and ``ips_ndcg@k`` beside the naive ``dcg@k``, ``ndcg@k``.

The naive measures take each item's gain from its labels (a click: 1 under the binary attribution). Users
look at the top, so a click at rank 1 and one at rank 9 do not mean the same: the naive click DCG rewards
whatever the served ranker put on top. ``ips_<measure>`` is the same core measure on **inverse-propensity
weighted** gains: each item's gain divided by the examination of the rank it was served at (``items.rank``),
relative to rank 1 (:func:`ranklens.counterfactual.propensity.inverse_propensity`, the weighting the
counterfactual estimators use). Under a position-based click model (examination ``theta_r``, attractiveness
``alpha``), ``E[click at r] = theta_r alpha(d_r)``, so ``ips_dcg@k`` of a list has expectation
``sum_r discount(r) alpha(d_r)``: the DCG of the served list with attractiveness (on the scale of rank 1) as
gains, whichever ranker served it.

``ips_ndcg@k`` of a list is its ``ips_dcg@k`` over the DCG@k of the same list with every item at the
attribution's largest gain (binary: 1; count: the number of positive classes; weighted: the sum of the positive
weights): a constant of the list's length, so its expectation is the attractiveness DCG of the served list over
that constant, and a ranker that only moves already-clicked items to the top cannot gain by it. (Normalising by
the ideal DCG of the list's own weighted gains, as the core's ndcg does with its labels, does not have that
property: a list with a single click then scores ``discount(rank)`` whatever the propensity, the naive measure's
bias; ``tests/monitor/test_ips_click_measures.py`` shows it by exact enumeration.) A list without any gain
follows the convention's ``empty`` rule, as ``ndcg@k`` does. Only the DCG family is offered: other measures are
not sums over positions of the gains.

Propensities come from the configuration or are fitted on the store's own logs (``[propensity]``:
:mod:`ranklens.monitor.propensity_config`; the fit: :mod:`ranklens.monitor.storage.propensity_fit`)::

    [propensity]
    source = "config"
    examination = [1.0, 0.62, 0.45, 0.35, 0.28, 0.23, 0.2, 0.17, 0.15, 0.13]   # ranks 1, 2, ...

A click beyond the ranks the examination covers is refused (its propensity is unknown). A report's interval of
an ``ips_`` measure (``ci="t"`` or ``"bootstrap"``, over lists) treats the propensities as known: with right
configured ones it covers as an interval of a mean does (shown over repeated logs in the tests); with fitted
ones it leaves out the fit's uncertainty.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._defs.measures import parse_measure
from ..errors import InvalidParameterError

__all__ = ["IPS_PREFIX", "ips_gains", "largest_gain", "measure_label", "parse_store_measure", "split_ips"]

IPS_PREFIX = "ips_"
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


def ips_gains(gain: np.ndarray, rank: np.ndarray, examination: Sequence[float], where: str) -> np.ndarray:
    """Each item's gain over the examination of the rank it was served at (relative to rank 1)."""
    from ..counterfactual.propensity import check_examination, inverse_propensity

    exam = check_examination(examination)
    return gain * inverse_propensity(rank, exam, gain > 0, where)


def largest_gain(attribution: Any) -> float:
    """The largest gain the attribution gives an item: the ideal of the ``ips_ndcg@k`` normaliser.

    >>> from ranklens.monitor.config import Attribution
    >>> largest_gain(Attribution()), largest_gain(Attribution("weighted", weights={"click": 1, "buy": 3}))
    (1.0, 4.0)
    """
    if attribution.rule == "binary":
        return 1.0
    if attribution.rule == "count":
        return float(len(attribution.positive))
    return float(sum(w for w in attribution.weights.values() if w > 0)) or 1.0


def measure_label(key: str, propensity: Mapping[str, Any] | None) -> dict[str, Any]:
    """What a store measure is, for a page or a table: ``kind`` ("naive" or "debiased"), a ``label`` and, for a
    debiased one, where its propensities come from (``propensity``: the ``propensity`` entry of the store's
    ``info()``).

    >>> measure_label("ndcg@10", None)["label"]
    'naive: gains as logged (clicks where users looked)'
    >>> d = measure_label("ips_dcg@10", {"source": "config", "examination": [1.0, 0.5]})
    >>> d["kind"], d["source"]
    ('debiased', 'propensities from the configuration ([propensity] examination, 2 ranks)')
    """
    ips, _ = split_ips(key)
    if not ips:
        return {"measure": key, "kind": "naive", "label": "naive: gains as logged (clicks where users looked)"}
    p = dict(propensity or {})
    exam = p.get("examination") or []
    if p.get("source") == "fitted" and p.get("error"):
        source = f"propensities fitted on the store's logs: not available ({p['error']})"
    elif p.get("source") == "fitted" and exam:
        on = p.get("fitted_on") or {}
        start, end = (str(on[k])[:16].replace("T", " ") if on.get(k) else None for k in ("start", "end"))
        span = (f"served {start} to {end}" if start and end else f"served before {end}" if end
                else f"served from {start}" if start else "(every list in the store)")
        source = (f"propensities fitted on the store's logs (position-based model, EM): {p.get('rows', 0):,} rows, "
                  f"{p.get('sessions', 0):,} lists {span}, log-likelihood {p.get('log_likelihood', float('nan')):.1f}, "
                  f"{len(exam)} ranks")
    elif p.get("source") == "config":
        source = f"propensities from the configuration ([propensity] examination, {len(exam)} ranks)"
    else:
        source = "no propensities: add a [propensity] table to the configuration"
    return {"measure": key, "kind": "debiased", "source": source,
            "label": "debiased: each gain over the examination of its served rank (inverse propensity)"}
