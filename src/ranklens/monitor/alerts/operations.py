"""What the on-call engineer does with an alert: acknowledge it, snooze it.

* **Acknowledge** (an open alert): who and when (and a note) are recorded and shown with the alert (``monitor
  alerts``, the dashboard, the next webhook change of it); the alert stays open and resolves as any other.
* **Snooze** (an alert, for a duration or until a time, wall clock): the changes of its monitor and series
  (this alert's, and those of a new alert of the same series while the snooze lasts) are held from the
  webhooks until it ends; the checks go on judging, recording and printing them, and exit with status 1
  when they fire. A snooze can be lifted (``until`` now).

Neither changes a number or a verdict: they are the engineer's record, and the webhooks' silence.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from ...errors import InputError, InvalidParameterError
from ..storage.db import transaction

__all__ = ["MAX_SNOOZE", "acknowledge", "snooze"]

#: The longest snooze.
MAX_SNOOZE = _dt.timedelta(days=90)


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)


def _alert(con: Any, alert_id: Any) -> tuple[Any, ...]:
    if isinstance(alert_id, bool) or not isinstance(alert_id, int) or alert_id < 1:
        raise InvalidParameterError(f"`alert_id` must be an alert's number (an integer >= 1); got {alert_id!r}.")
    rows = con.execute("SELECT alert_id, monitor, series, state FROM alert_states WHERE alert_id = ?",
                       [alert_id]).fetchall()
    if not rows:
        raise InputError(f"no alert {alert_id} in the store (ranklens monitor alerts lists them).")
    return rows[0]


def _text(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > 500:
        raise InvalidParameterError(f"`{name}` must be a text of at most 500 characters.")
    return value


def acknowledge(con: Any, alert_id: int, by: str | None = None, note: str | None = None,
                now: _dt.datetime | None = None) -> dict[str, Any]:
    """Record that someone is on alert ``alert_id`` (open); returns what was recorded."""
    by, note = _text(by, "by"), _text(note, "note")
    aid, monitor, _series, state = _alert(con, alert_id)
    if state != "open":
        raise InputError(f"alert {aid} is {state}: only an open alert is acknowledged.")
    now = now or _now()
    with transaction(con):
        con.execute("UPDATE alert_states SET acknowledged_at = ?, acknowledged_by = ?, ack_note = ? "
                    "WHERE alert_id = ?", [now, by, note, aid])
    return {"alert_id": aid, "monitor": monitor, "acknowledged_at": now.isoformat(), "acknowledged_by": by,
            "note": note}


def snooze(con: Any, alert_id: int, *, duration: _dt.timedelta | None = None, until: _dt.datetime | None = None,
           by: str | None = None, note: str | None = None, now: _dt.datetime | None = None) -> dict[str, Any]:
    """Hold the webhook changes of alert ``alert_id``'s monitor and series for ``duration`` or until ``until``
    (wall clock, UTC; a time not after now lifts the snooze); returns what was recorded."""
    by, note = _text(by, "by"), _text(note, "note")
    if (duration is None) == (until is None):
        raise InvalidParameterError("give the snooze's `duration` or its `until`, one of them.")
    now = now or _now()
    end = now + duration if duration is not None else until
    assert end is not None
    if end - now > MAX_SNOOZE:
        raise InvalidParameterError(f"a snooze lasts at most {MAX_SNOOZE.days} days; got until {end.isoformat()}.")
    aid, monitor, series, _state = _alert(con, alert_id)
    with transaction(con):
        # one snooze per monitor and series: a new one replaces (or, ending now, lifts) the one in force
        con.execute("UPDATE snoozes SET until = ? WHERE monitor = ? AND series = ? AND until > ?",
                    [min(end, now), monitor, series, now])
        if end > now:
            con.execute("INSERT INTO snoozes VALUES (?, ?, ?, ?, ?, ?, ?)", [monitor, series, aid, end, by, note, now])
    return {"alert_id": aid, "monitor": monitor, "series": series, "until": end.isoformat() if end > now else None,
            "snoozed_by": by, "note": note}
