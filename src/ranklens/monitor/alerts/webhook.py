"""Webhook notifications of alert state changes (opened, resolved): the payloads and their delivery.

Two payloads (``[alerts] webhook_format``):

* ``"json"``: ``{"source": "ranklens", "text": SUMMARY, "alerts": [ALERT, ...]}``, each alert with its
  ``status`` (``"opened"`` or ``"resolved"``), ``alert_id``, monitor, metric, series, the window it names,
  values, reason and root cause (``top_slices``);
* ``"slack"``: ``{"text": SUMMARY, "blocks": [...]}``, what a Slack-style incoming webhook accepts as is
  (a header block, one ``mrkdwn`` section per alert, at most 40, then a context block counting the rest).

Delivery: one POST per check with every change not delivered yet, tried ``retries`` times, waiting
``backoff``, ``2 * backoff``, ``4 * backoff``... seconds between tries; a client error other than 408 and
429 is not tried again. A delivery that fails raises :class:`WebhookError` with one line naming the URL
and the cause; the changes stay pending and the next check delivers them.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from ...errors import InputError
from ..reports.search import describe_top

__all__ = ["MAX_BLOCKS", "WebhookError", "deliver", "payload", "summary_text"]

MAX_BLOCKS = 40  # Slack accepts 50 blocks per message: a header, 40 alerts, a context line


class WebhookError(InputError):
    """The webhook could not be reached or refused the notification (after the retries)."""


def _series(series: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in series.items())


def summary_text(changes: list[dict[str, Any]]) -> str:
    """One line: how many alerts opened and resolved.

    >>> summary_text([{"status": "opened"}, {"status": "opened"}, {"status": "resolved"}])
    'ranklens: 2 alerts opened, 1 resolved'
    """
    n_open = sum(1 for c in changes if c["status"] == "opened")
    n_res = len(changes) - n_open
    parts = []
    if n_open:
        parts.append(f"{n_open} alert{'s' if n_open != 1 else ''} opened")
    if n_res:
        parts.append(f"{n_res} resolved" if n_open else f"{n_res} alert{'s' if n_res != 1 else ''} resolved")
    return "ranklens: " + ", ".join(parts)


def _line(c: dict[str, Any]) -> str:
    """An alert in Slack's mrkdwn: what, which series, which window, why, root cause."""
    head = ":red_circle: *OPENED*" if c["status"] == "opened" else ":large_green_circle: *RESOLVED*"
    sev = f", severity {c['severity']}" if c.get("severity") else ""
    text = (f"{head} `{c['monitor']}` {_series(c['series'])}, window "
            f"{c['window_start'][:16].replace('T', ' ')} to {c['window_end'][:16].replace('T', ' ')} UTC{sev}\n"
            f"{c.get('reason') or ''}")
    top = c.get("top_slices") or []
    if c["status"] == "opened" and top:
        text += f"\nroot cause: {describe_top(top[0])}"
    if c["status"] == "resolved" and c.get("opened_window"):
        text += f"\nopen since the window of {c['opened_window'][:16].replace('T', ' ')}"
    return text[:2900]


def payload(changes: list[dict[str, Any]], fmt: str = "json") -> dict[str, Any]:
    """The body of one notification of ``changes`` (alert dicts with a ``status``) in ``fmt``.

    Examples
    --------
    >>> c = {"status": "opened", "alert_id": 1, "monitor": "m", "series": {"model_version": "v1"},
    ...      "window_start": "2026-10-21T00:00:00", "window_end": "2026-10-22T00:00:00", "reason": "ndcg@10 low"}
    >>> body = payload([c], "slack")
    >>> body["text"], [b["type"] for b in body["blocks"]]
    ('ranklens: 1 alert opened', ['header', 'section'])
    >>> payload([c], "json")["alerts"][0]["status"]
    'opened'
    """
    text = summary_text(changes)
    if fmt == "json":
        return {"source": "ranklens", "text": text, "alerts": changes}
    blocks: list[dict[str, Any]] = [{"type": "header", "text": {"type": "plain_text", "text": text[:150]}}]
    for c in changes[:MAX_BLOCKS]:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": _line(c)}})
    if len(changes) > MAX_BLOCKS:
        blocks.append({"type": "context", "elements": [
            {"type": "mrkdwn", "text": f"and {len(changes) - MAX_BLOCKS} more: `ranklens monitor alerts`"}]})
    return {"text": text, "blocks": blocks}


def _post(url: str, body: bytes, timeout: float) -> tuple[bool, str]:
    """(retry?, message) of a failed POST; ``(False, "")`` when it succeeded."""
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            if resp.status >= 300:
                return resp.status >= 500, f"answered HTTP {resp.status}"
    except urllib.error.HTTPError as exc:
        return exc.code >= 500 or exc.code in (408, 429), f"answered HTTP {exc.code}"
    except (urllib.error.URLError, OSError) as exc:
        return True, f"could not be reached: {getattr(exc, 'reason', exc)}"
    return False, ""


def deliver(url: str, body: dict[str, Any], *, retries: int = 3, backoff: float = 1.0, timeout: float = 10.0,
            sleep: Callable[[float], None] = time.sleep) -> int:
    """POST ``body`` as JSON to ``url``, trying up to ``retries`` times; returns the number of tries used.

    Raises
    ------
    WebhookError
        One line naming the URL, the tries and the last cause.
    """
    if not url.startswith(("http://", "https://")):
        raise InputError(f"webhook URL must start with http:// or https://; got {url!r}.")
    data = json.dumps(body, default=str).encode()
    why = ""
    for attempt in range(1, retries + 1):
        again, why = _post(url, data, timeout)
        if not why:
            return attempt
        if not again:
            break
        if attempt < retries:
            sleep(backoff * 2 ** (attempt - 1))
    tries = f"after {attempt} tr{'ies' if attempt > 1 else 'y'}"
    raise WebhookError(f"webhook {url} {why} ({tries}); the alert changes stay pending for the next check.")
