"""The dashboard's two writes: acknowledge an alert, snooze it (``POST /api/ack``, ``POST /api/snooze``).

Only a dashboard started with a token accepts them (the guard refuses any other method than GET and HEAD
without one), and only as JSON (``Content-Type: application/json``: a form of another site cannot send it
without the browser asking first). The body names the alert and, for a snooze, how long::

    {"alert_id": 3, "by": "ana", "note": "looking at the feature pipeline"}
    {"alert_id": 3, "duration": "24h"}          # or "until": "2026-10-09T08:00", or "off": true

The store is written by :meth:`ranklens.monitor.Store.acknowledge` / :meth:`~ranklens.monitor.Store.snooze`
while no read runs (the API's computations wait), then the answers cached before are stale (the store file
changed).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["ACTION_PATHS", "action_routes"]

#: The paths that write, and what each does.
ACTION_PATHS = {"/api/ack": "acknowledge an open alert", "/api/snooze": "hold an alert's webhook changes"}


def _act(writer: Any, path: str, body: dict[str, Any]) -> dict[str, Any]:
    from ...errors import InvalidParameterError

    known = {"/api/ack": {"alert_id", "by", "note"},
             "/api/snooze": {"alert_id", "by", "note", "duration", "until", "off"}}[path]
    unknown = set(body) - known
    if unknown:
        raise InvalidParameterError(f"unknown field(s) {', '.join(sorted(unknown))}; fields: "
                                    f"{', '.join(sorted(known))}.")
    if "alert_id" not in body:
        raise InvalidParameterError("`alert_id` is required.")
    kw = {"by": body.get("by"), "note": body.get("note")}
    if path == "/api/ack":
        return writer.acknowledge(body["alert_id"], **kw)
    if body.get("off"):
        return writer.snooze(body["alert_id"], "0s", **kw)
    return writer.snooze(body["alert_id"], body.get("duration"), until=body.get("until"), **kw)


def action_routes(make_writer: Callable[[], Any], exclusive: Callable[[], Any]) -> list[Any]:
    """The POST routes of :data:`ACTION_PATHS`: ``make_writer()`` gives a writable store, ``exclusive()`` a context
    in which no read of the API runs."""
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from ...errors import InputError, RanklensError, StoreBusyError

    def run(path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with exclusive():
            try:
                return 200, _act(make_writer(), path, body)
            except InputError as exc:
                return (404 if str(exc).startswith("no alert") else 409), {"error": str(exc)}
            except StoreBusyError as exc:
                return 503, {"error": str(exc)}
            except RanklensError as exc:
                return 400, {"error": str(exc)}

    def handler(path: str) -> Any:
        async def handle(request: Request) -> Response:
            if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
                return JSONResponse({"error": "send the action as JSON (Content-Type: application/json)"},
                                    status_code=415)
            try:
                body = json.loads(await request.body() or b"{}")
            except ValueError:
                return JSONResponse({"error": "the body is not JSON"}, status_code=400)
            if not isinstance(body, dict):
                return JSONResponse({"error": "the body must be a JSON object"}, status_code=400)
            status, out = await run_in_threadpool(run, path, body)
            return JSONResponse(out, status_code=status)

        return handle

    return [Route(p, handler(p), methods=["POST"]) for p in ACTION_PATHS]
