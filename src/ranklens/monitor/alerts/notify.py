"""Delivering the alert changes (opened, resolved) not delivered yet to their webhooks, once.

Each change goes to every route of the configuration that takes it (``[alerts] webhook`` takes every change;
``[[alerts.routes]]`` by severity, model or monitor: :mod:`ranklens.monitor.routing`). One process delivers at
a time (the store's notify lock): a concurrent ``monitor check`` waits, then finds the changes delivered.

* Each attempt is recorded per route (``deliveries``: when, whether it succeeded, the error); a change is
  marked delivered once every route that takes it has it, and a route that failed gets it again at the next
  check, the others do not.
* A change that no route takes (or with no route at all) is marked delivered: nothing stays pending.
* The changes of a snoozed alert (its monitor and series, until the snooze ends) are held: neither sent
  nor marked; the first check after the snooze ends sends what is still pending.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Sequence
from typing import Any

from ..storage.db import transaction
from .lifecycle import mark_notified, pending_notifications
from .webhook import WebhookError, deliver, payload

__all__ = ["deliver_pending", "webhook_change"]


def webhook_change(row: dict[str, Any]) -> dict[str, Any]:
    """A pending alert state as the webhook's alert dict: status, the window it names, values, root cause."""
    series = json.loads(row["series"])
    top = row.get("top_slices") or []
    if isinstance(top, str):
        top = json.loads(top)
    common = {"alert_id": row["alert_id"], "monitor": row["monitor"], "metric": row["metric"],
              "severity": row.get("severity") or "warning", "series": series,
              "opened_window": row["opened_window"].isoformat(), "baseline": row["baseline"],
              "threshold": row["threshold"]}
    if row.get("acknowledged_at") is not None:
        common["acknowledged_by"] = row.get("acknowledged_by")
    if row["state"] == "resolved":
        return {"status": "resolved", **common, "window_start": row["resolved_window"].isoformat(),
                "window_end": row["resolved_window_end"].isoformat(), "value": row["resolved_value"],
                "reason": row["resolved_reason"]}
    return {"status": "opened", **common, "window_start": row["last_window"].isoformat(),
            "window_end": row["last_window_end"].isoformat(), "value": row["value"], "n_groups": row["n_groups"],
            "p_value": row["p_value"], "reason": row["reason"], "top_slices": top}


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)


def deliver_pending(db: Any, routes: Sequence[Any], *, retries: int, backoff: float, sleep: Any = None,
                    now: _dt.datetime | None = None) -> tuple[int, list[str]]:
    """Send the store's pending changes to their ``routes``; the number of changes delivered (to every route
    that takes them) and one error line per route that could not be reached (its changes stay pending)."""
    now = now or _now()
    # one process delivers at a time: a concurrent check waits, then finds these changes delivered
    with db.notifying():
        with db.reading() as con:
            rows = pending_notifications(con)
            held = {(m, s) for m, s in con.execute("SELECT monitor, series FROM snoozes WHERE until > ?",
                                                   [now]).fetchall()}
            rows = [r for r in rows if (r["monitor"], r["series"]) not in held]
            done: dict[tuple[int, str], set[str]] = {}
            for aid, st, route in con.execute("SELECT alert_id, state, route FROM deliveries WHERE ok").fetchall():
                done.setdefault((aid, st), set()).add(route)
        if not rows:
            return 0, []
        if not routes:  # nowhere to deliver to: nothing stays pending
            with db.writing("alerts") as con:
                mark_notified(con, [(r["alert_id"], r["state"]) for r in rows])
            return 0, []
        rows.sort(key=lambda r: r["alert_id"])
        changes = [webhook_change(r) for r in rows]
        wants = [[rt.name for rt in routes if rt.matches(c) and rt.name not in done.get((r["alert_id"], r["state"]),
                                                                                          set())]
                 for r, c in zip(rows, changes, strict=True)]
        records: list[list[Any]] = []
        errors: list[str] = []
        failed: set[str] = set()
        for rt in routes:
            idx = [i for i, w in enumerate(wants) if rt.name in w]
            if not idx:
                continue
            try:
                kw = {"sleep": sleep} if sleep is not None else {}
                deliver(rt.webhook, payload([changes[i] for i in idx], rt.format), retries=retries, backoff=backoff,
                        **kw)
                records += [[rows[i]["alert_id"], rows[i]["state"], rt.name, now, True, None] for i in idx]
            except WebhookError as exc:
                failed.add(rt.name)
                label = "" if rt.name == "webhook" else f"route {rt.name!r}: "
                errors.append(label + str(exc))
                records += [[rows[i]["alert_id"], rows[i]["state"], rt.name, now, False, str(exc)] for i in idx]
        complete = [(r["alert_id"], r["state"]) for r, w in zip(rows, wants, strict=True) if not set(w) & failed]
        with db.writing("alerts") as con:
            if records:
                with transaction(con):
                    con.executemany("INSERT INTO deliveries VALUES (?, ?, ?, ?, ?, ?)", records)
            mark_notified(con, complete)
    delivered = sum(1 for r, w in zip(rows, wants, strict=True) if w and not set(w) & failed)
    return delivered, errors
