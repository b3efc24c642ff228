"""Delivering the alert changes (opened, resolved) not delivered yet to the webhook, once.

One process delivers at a time (the store's notify lock): a concurrent ``monitor check`` waits, then finds
the changes delivered. A change is marked delivered only once the webhook took it; with nowhere to deliver
to, nothing stays pending.
"""

from __future__ import annotations

import json
from typing import Any

from .lifecycle import mark_notified, pending_notifications
from .webhook import WebhookError, deliver, payload

__all__ = ["deliver_pending", "webhook_change"]


def webhook_change(row: dict[str, Any]) -> dict[str, Any]:
    """A pending alert state as the webhook's alert dict: status, the window it names, values, root cause."""
    series = json.loads(row["series"])
    top = json.loads(row["top_slices"]) if row.get("top_slices") else []
    common = {"alert_id": row["alert_id"], "monitor": row["monitor"], "metric": row["metric"], "series": series,
              "opened_window": row["opened_window"].isoformat(), "baseline": row["baseline"],
              "threshold": row["threshold"]}
    if row["state"] == "resolved":
        return {"status": "resolved", **common, "window_start": row["resolved_window"].isoformat(),
                "window_end": row["resolved_window_end"].isoformat(), "value": row["resolved_value"],
                "reason": row["resolved_reason"]}
    return {"status": "opened", **common, "window_start": row["last_window"].isoformat(),
            "window_end": row["last_window_end"].isoformat(), "value": row["value"], "n_groups": row["n_groups"],
            "p_value": row["p_value"], "reason": row["reason"], "top_slices": top}


def deliver_pending(db: Any, url: str | None, fmt: str, *, retries: int, backoff: float,
                    sleep: Any = None) -> tuple[int, str | None]:
    """Send the store's pending changes to ``url`` (``None``: nowhere, they are marked delivered); the number
    delivered and, when the webhook could not be reached, its error in one line (the changes stay pending)."""
    # one process delivers at a time: a concurrent check waits, then finds these changes delivered
    with db.notifying():
        with db.reading() as con:
            rows = pending_notifications(con)
        if not rows:
            return 0, None
        if not url:  # nowhere to deliver to: nothing stays pending
            with db.writing("alerts") as con:
                mark_notified(con, [(r["alert_id"], r["state"]) for r in rows])
            return 0, None
        changes = [webhook_change(r) for r in sorted(rows, key=lambda r: r["alert_id"])]
        try:
            kw = {"sleep": sleep} if sleep is not None else {}
            deliver(url, payload(changes, fmt), retries=retries, backoff=backoff, **kw)
        except WebhookError as exc:
            return 0, str(exc)
        with db.writing("alerts") as con:
            mark_notified(con, [(r["alert_id"], r["state"]) for r in rows])
    return len(rows), None
