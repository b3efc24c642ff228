"""What a monitor watches: its kind, and the limits each kind accepts.

A ``[[monitors]]`` entry's ``metric`` is one of three kinds:

* ``"measure"``: a measure of the core (``ndcg@10``, ``map@10``...), judged on mature windows against the
  baseline (:mod:`ranklens.monitor.alerts.judge`); with ``slices = "auto"`` the slices of each series are
  searched and judged one by one (:mod:`ranklens.monitor.reports.search`);
* ``"signal"``: a label-free signal (``psi(score)``, ``coverage@10``...: :mod:`ranklens.monitor.signals.names`);
* ``"quality"``: a data-quality metric (:data:`QUALITY`): ``volume`` (lists per window), ``label_arrival``
  (share of a mature window's lists with an outcome), ``quarantine_rate`` (share of the rows of a window
  quarantined at ingest) and ``partial_lists`` (share of a window's lists that lost rows to the quarantine).

Each kind has one entry in :data:`LIMIT_CHECKS` (here) and one in the judges of a check
(:data:`ranklens.monitor.alerts.check.JUDGES`); a kind without an entry is refused by name, never judged by
another kind's rule. This module imports nothing of the store, so the configuration can use it.

Examples
--------
>>> monitor_kind("ndcg@10"), monitor_kind("psi(score)"), monitor_kind("volume")
('measure', 'signal', 'quality')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import InvalidParameterError
from .propensity import parse_store_measure
from .signals.names import check_signal_monitor, is_signal
from .storage.params import monitor_refusal

__all__ = ["KINDS", "LIMIT_CHECKS", "QUALITY", "SEVERITIES", "check_limits", "monitor_kind", "quality_worse"]

#: Data-quality metrics and the direction in which they get worse.
QUALITY: dict[str, str] = {"volume": "down", "label_arrival": "down", "quarantine_rate": "up",
                           "partial_lists": "up"}
#: Severities of an alert, most urgent first (PagerDuty's and Alertmanager's usual set).
SEVERITIES = ("critical", "error", "warning", "info")


def monitor_kind(metric: str) -> str:
    """``"quality"``, ``"signal"`` or ``"measure"``: the kind of what a monitor watches (a measure is checked by
    :func:`ranklens.monitor.propensity.parse_store_measure`: the core's measures and their ``ips_`` forms; it
    names what it does not know)."""
    name = str(metric).strip().lower()
    if name in QUALITY:
        return "quality"
    if is_signal(name):
        return "signal"
    parse_store_measure(metric)
    return "measure"


def quality_worse(metric: str) -> str:
    """``"up"`` or ``"down"``: the direction in which a data-quality metric gets worse."""
    return QUALITY[str(metric).strip().lower()]


def _measure_limits(spec: Any) -> None:
    why = monitor_refusal(spec.metric)
    if why:
        raise InvalidParameterError(f"monitor {spec.name!r}: `metric` {spec.metric!r} {why}")


def _signal_limits(spec: Any) -> None:
    check_signal_monitor(spec.name, spec.metric, spec.threshold, spec.relative_drop, spec.absolute_drop,
                         spec.significance)


def _quality_limits(spec: Any) -> None:
    name, metric = spec.name, str(spec.metric).lower()
    if spec.significance is not None:
        raise InvalidParameterError(f"monitor {name!r}: `significance` does not apply to {metric} (no test).")
    if quality_worse(metric) == "up":
        for key in ("relative_drop", "absolute_drop"):
            if getattr(spec, key) is not None:
                raise InvalidParameterError(f"monitor {name!r}: {metric} fires above a `threshold` (a larger share "
                                            f"is worse); `{key}` does not apply to it.")
        if spec.threshold is None or not 0 <= spec.threshold <= 1:
            raise InvalidParameterError(f"monitor {name!r}: {metric} needs a `threshold`, a share in [0, 1] "
                                        "(e.g. 0.05).")
    if spec.baseline is not None and spec.baseline.kind == "environment":
        raise InvalidParameterError(f"monitor {name!r}: {metric} is compared with the same series' earlier windows: "
                                    "`baseline` is 'trailing' (default: the same window of the 4 weeks before), "
                                    "'previous' or a date range 'START..END'.")
    if metric == "quarantine_rate" and (spec.by or spec.where):
        raise InvalidParameterError(f"monitor {name!r}: quarantine_rate is the store's (quarantined rows may have no "
                                    "model or slice): `by` and `where` do not apply to it.")


#: The limits each kind of monitor accepts, checked when the configuration is read.
LIMIT_CHECKS: dict[str, Callable[[Any], None]] = {"measure": _measure_limits, "signal": _signal_limits,
                                                  "quality": _quality_limits}


def check_limits(spec: Any) -> str:
    """Check a monitor's limits by its kind's rule; returns the kind. A kind without a rule is an error."""
    kind = monitor_kind(spec.metric)
    check = LIMIT_CHECKS.get(kind)
    if check is None:
        raise InvalidParameterError(f"monitor {spec.name!r}: monitors of kind {kind!r} have no rule; kinds: "
                                    f"{', '.join(LIMIT_CHECKS)}.")
    check(spec)
    if spec.slices is not None and kind != "measure":
        raise InvalidParameterError(f"monitor {spec.name!r}: `slices = \"auto\"` searches the slices of a measure; "
                                    f"{spec.metric} is a {'label-free signal' if kind == 'signal' else 'data-quality'}"
                                    " metric (its alerts name the slices where it moved most).")
    return kind


KINDS = tuple(LIMIT_CHECKS)
