"""A check: every configured monitor judged by its kind's judge, the alerts' states moved forward, the changes
delivered to their webhooks.

:data:`JUDGES` has one entry per kind of monitor (:mod:`ranklens.monitor.kinds`): measures (``judge``, on
reports), label-free signals (``signals.monitors``) and data quality (``quality``). A monitor whose kind has
no entry is refused by name before anything is judged.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...errors import InputError, InvalidParameterError
from ..config import MonitorSpec
from ..signals.monitors import judge_signal_monitors
from ..storage.db import slice_columns
from ..storage.maturity import Maturity
from .judge import Alert, Verdict, judge
from .lifecycle import advance
from .notify import deliver_pending
from .quality import judge_quality_monitors

__all__ = ["JUDGES", "CheckResult", "Window", "run_check"]


class CheckResult(list[Alert]):
    """The alerts of one :meth:`ranklens.monitor.Store.check` run, in window order, each with its ``status`` (in
    ``extra``): ``"opened"``, ``"firing"`` (still open), ``"fired"`` (a window checked again whose alert was
    since resolved) or ``"resolved"``.

    Attributes
    ----------
    not_judged : dict
        Windows left out, counted by reason: ``provisional`` (labels not mature), ``too few groups``,
        ``no baseline``, ``nothing to search`` (an automatic-slice monitor whose slice columns are all fixed in
        the series), ``incomplete`` (a volume whose window the store has not seen to its end).
    maturity : Maturity
        The label maturity in force and the store's clock.
    notified : int
        Alert changes delivered by this run (to every webhook route that takes them).
    delivery_errors : list of str
        One line per webhook route that could not be reached (its changes stay pending for the next check;
        each failure is recorded in the store); ``webhook_error`` joins them.

    Examples
    --------
    >>> r = CheckResult([], not_judged={"provisional": 2})
    >>> len(r), r.not_judged, r.fired, r.webhook_error
    (0, {'provisional': 2}, [], None)
    """

    def __init__(self, alerts: Iterable[Alert] = (), *, not_judged: Mapping[str, int] | None = None,
                 maturity: Maturity | None = None, notified: int = 0, delivery_errors: Sequence[str] = ()) -> None:
        super().__init__(alerts)
        self.not_judged: dict[str, int] = dict(not_judged or {})
        self.maturity = maturity
        self.notified = notified
        self.delivery_errors = list(delivery_errors)

    @property
    def webhook_error(self) -> str | None:
        """The delivery errors in one line, or None when every delivery succeeded."""
        return "; ".join(self.delivery_errors) or None

    @property
    def fired(self) -> list[Alert]:
        """The alerts of windows that fired (every status but ``"resolved"``)."""
        return [a for a in self if a.extra.get("status") != "resolved"]


@dataclass
class Window:
    """What a check judges and what it reads from: the windows asked, the store's reads, its clock."""

    reports: Any  # ranklens.monitor.reports.reports.Reports
    signals: Callable[..., Any]  # Store.signals
    db: Any
    baseline: Any
    at: Any = None
    all_windows: bool = False
    start: Any = None
    end: Any = None
    maturity: Maturity | None = None
    slices: list[str] = field(default_factory=list)


def _measures(w: Window, specs: list[MonitorSpec]) -> list[Verdict]:
    return judge(w.reports, at=w.at, all_windows=w.all_windows, start=w.start, end=w.end, monitors=specs,
                 mature_until=w.maturity.mature_until if w.maturity else None)


def _signals(w: Window, specs: list[MonitorSpec]) -> list[Verdict]:
    last = w.reports.last_time()
    if last is None:
        raise InputError("the store is empty: ingest events first.")
    # every verdict, "ok" ones too: a judged window that does not fire resolves an open alert
    return judge_signal_monitors(w.signals, specs, w.baseline, last, w.at, all_windows=w.all_windows,
                                 start=w.start, end=w.end, slices=w.slices)


def _quality(w: Window, specs: list[MonitorSpec]) -> list[Verdict]:
    return judge_quality_monitors(w.db, specs, w.at, all_windows=w.all_windows, start=w.start, end=w.end,
                                  mature_until=w.maturity.mature_until if w.maturity else None)


#: The judge of each kind of monitor.
JUDGES: dict[str, Callable[[Window, list[MonitorSpec]], list[Verdict]]] = {
    "measure": _measures, "signal": _signals, "quality": _quality}


def run_check(w: Window, monitors: Sequence[MonitorSpec], *, record: bool, routes: Sequence[Any], retries: int,
              backoff: float, sleep: Any = None, now: _dt.datetime | None = None) -> CheckResult:
    """Judge ``monitors`` (each by its kind's judge), move the alerts' states forward (stored when ``record``)
    and deliver the changes not delivered yet to ``routes``."""
    if not monitors:
        raise InputError("no monitors are configured: add [[monitors]] to ranklens.toml (see docs/monitoring.md).")
    by_kind: dict[str, list[MonitorSpec]] = {}
    for spec in monitors:
        if spec.kind not in JUDGES:
            raise InvalidParameterError(f"monitor {spec.name!r}: no judge for monitors of kind {spec.kind!r}; kinds: "
                                        f"{', '.join(JUDGES)}.")
        by_kind.setdefault(spec.kind, []).append(spec)
    if w.reports.last_time() is None:
        raise InputError("the store is empty: ingest events first.")
    with w.db.reading() as con:
        w.slices = list(slice_columns(con))
    verdicts = [v for kind, specs in by_kind.items() for v in JUDGES[kind](w, specs)]
    with (w.db.writing("alerts") if record else w.db.reading()) as con:
        events = advance(con, verdicts, record=record)
    out = CheckResult(events, maturity=w.maturity)
    for v in verdicts:
        if not v.judged:
            out.not_judged[v.status] = out.not_judged.get(v.status, 0) + 1
    if record:
        out.notified, out.delivery_errors = deliver_pending(w.db, routes, retries=retries, backoff=backoff,
                                                            sleep=sleep, now=now)
    return out
