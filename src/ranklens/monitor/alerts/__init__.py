"""Alerts: monitors judging each window against its baseline, the alerts' states in the store, the webhook.

``judge`` (the monitors over any object with the report methods of :class:`ReportSource`: each window's
verdict), ``lifecycle`` (alert states in the store: opened, firing, resolved; the lists of alerts),
``webhook`` (the JSON and Slack payloads of alert changes, delivery with retries), ``notify`` (the
changes not delivered yet sent once, one process at a time).
"""

from __future__ import annotations

from ..._base.renamed import module_aliases
from .judge import Alert, ReportSource, Verdict, floor_time, judge, run_monitors

__all__ = ["Alert", "ReportSource", "Verdict", "floor_time", "judge", "run_monitors"]


__getattr__ = module_aliases(__name__, Judgement=("Verdict", Verdict))  # the old name, for one release
