"""Answering the JSON API: a request's parameters checked against its endpoint's declaration, one store
computation per distinct request at a time (as many at once as cores), answers cached by the store file's
version (its modification time and size: an ingest gives fresh answers).

Filter values reach the store as bound SQL parameters; the filter columns are the store's known columns
(model, model_version, environment, group_id and the slices listed by ``Store.info()``).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import traceback
from collections import OrderedDict
from typing import Any
from urllib.parse import parse_qsl

from .._output.render import plain
from ..errors import InputError, InvalidParameterError, RanklensError
from .endpoint import BadParameter, Endpoint

__all__ = ["JsonApi", "ResponseCache", "error", "store_version"]


class ResponseCache:
    """Responses keyed by (request, store version), least recently used dropped first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.data: OrderedDict[Any, tuple[int, bytes]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: Any) -> tuple[int, bytes] | None:
        with self.lock:
            hit = self.data.get(key)
            if hit is not None:
                self.data.move_to_end(key)
            return hit

    def put(self, key: Any, value: tuple[int, bytes]) -> None:
        with self.lock:
            self.data[key] = value
            self.data.move_to_end(key)
            while len(self.data) > self.size:
                self.data.popitem(last=False)


def store_version(path: str) -> tuple[int, ...]:
    """The version of the store file at ``path`` (and of its write-ahead log): inodes (a writer swaps a new
    file in when it commits), modification times and sizes."""
    out: list[int] = []
    for p in (path, path + ".wal"):
        try:
            s = os.stat(p)
            out += [s.st_ino, s.st_mtime_ns, s.st_size]
        except OSError:
            out += [0, 0, 0]
    return tuple(out)


def error(status: int, message: str, parameter: str | None = None) -> Any:
    """A JSON error response: ``{"error": message}``, with the parameter at fault when there is one."""
    from starlette.responses import JSONResponse

    body: dict[str, Any] = {"error": message}
    if parameter is not None:
        body["parameter"] = parameter
    return JSONResponse(body, status_code=status)


class JsonApi:
    """The JSON endpoints over one store: parsing, the cache, the computations in a thread pool."""

    def __init__(self, store: Any, path: str, cache_size: int | None) -> None:
        self.store = store
        self.path = path
        self.responses = ResponseCache(cache_size) if cache_size is not None else None
        self.pending: dict[Any, asyncio.Future[tuple[int, bytes]]] = {}  # requests being computed, by key
        self.slots = threading.BoundedSemaphore(max(1, os.cpu_count() or 1))
        self.info_cache: dict[str, Any] = {}

    def filter_columns(self) -> set[str]:
        """The columns a request may filter on (read again when the store changed)."""
        version = store_version(self.path)
        if self.info_cache.get("version") != version:
            info = self.store.info()
            self.info_cache["columns"] = {"model", "model_version", "environment", "group_id",
                                          *info.get("slices", [])}
            self.info_cache["version"] = version
        return self.info_cache["columns"]

    def parse(self, ep: Endpoint, query: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """The declared parameters of ``ep`` and the filters of a request's query string; :class:`BadParameter`
        names a parameter that is unknown, malformed or too long."""
        raw: dict[str, list[str]] = {}
        for k, v in parse_qsl(query, keep_blank_values=True):
            if k == "token":
                continue
            raw.setdefault(k, []).append(v)
        known = {p.name: p for p in ep.params}
        params = {name: p.parse([x for x in raw.get(name, []) if x != ""]) for name, p in known.items()}
        where: dict[str, Any] = {}
        extra = [k for k in raw if k not in known]
        if extra:
            cols = self.filter_columns() if (ep.filters or ep.prefixed_filters) else set()
            for k in extra:
                column = k
                if ep.prefixed_filters:
                    column = k[2:] if k[:2] in ep.prefixed_filters else ""
                if column not in cols:
                    raise BadParameter(k, "is not a parameter of " + ep.path + (
                        f" (filters: {', '.join(sorted(cols))})" if cols else ""))
                vals = [x for r in raw[k] for x in r.split(",")] if len(raw[k]) == 1 else raw[k]
                vals = [x for x in vals if x != ""]
                if not vals:  # `?model=`: no filter, as for the other parameters
                    continue
                if any(len(x) > 200 for x in vals) or len(vals) > 100:
                    raise BadParameter(k, "has too many or too long values")
                where[k] = vals[0] if len(vals) == 1 else vals
        return params, where

    def handler(self, ep: Endpoint) -> Any:
        """The request handler of endpoint ``ep``."""
        from starlette.concurrency import run_in_threadpool
        from starlette.requests import Request
        from starlette.responses import Response

        responses, pending = self.responses, self.pending

        async def handle(request: Request) -> Response:
            try:
                params, where = self.parse(ep, request.url.query)
            except BadParameter as exc:
                return error(400, str(exc), exc.name)
            except RanklensError as exc:
                return error(400, str(exc))
            key = (ep.path, tuple(sorted((k, repr(v)) for k, v in {**params, **where}.items())),
                   store_version(self.path))
            if responses is not None:
                hit = responses.get(key)
                if hit is not None:
                    return Response(hit[1], status_code=hit[0], media_type="application/json",
                                    headers={"X-Cache": "hit"})
            fut = pending.get(key)
            if fut is not None:  # the same request is being computed: wait for its answer
                status, body = await asyncio.shield(fut)
                return Response(body, status_code=status, media_type="application/json",
                                headers={"X-Cache": "hit"} if responses is not None else None)
            fut = asyncio.get_running_loop().create_future()
            pending[key] = fut
            try:
                status, body = await run_in_threadpool(self.compute, ep, params, where)
            except BaseException as exc:
                pending.pop(key, None)
                if not fut.done():
                    fut.set_exception(exc)
                    fut.exception()  # retrieved: no "never retrieved" warning
                raise
            pending.pop(key, None)
            fut.set_result((status, body))
            if responses is not None and status == 200:
                responses.put(key, (status, body))
            return Response(body, status_code=status, media_type="application/json",
                            headers={"X-Cache": "miss"} if responses is not None else None)

        return handle

    def compute(self, ep: Endpoint, params: dict[str, Any], where: dict[str, Any]) -> tuple[int, bytes]:
        """The status and JSON body of one request: the store's answer, or the error as JSON (a bug is logged,
        not leaked)."""
        try:
            with self.slots:  # as many store computations at once as cores: more only thrash
                out = ep.call(self.store, params, where)
            status = 200
        except (InvalidParameterError, InputError) as exc:
            out, status = {"error": str(exc)}, 400
            for p in list(params) + list(where):
                if f"`{p}`" in str(exc) or f"'{p}'" in str(exc):
                    out["parameter"] = p
                    break
            if ep.path == "/api/explain" and str(exc).startswith("no served list"):
                status = 404
        except RanklensError as exc:
            name = type(exc).__name__
            if name == "StoreBusyError":
                out, status = {"error": str(exc)}, 503
            else:
                out, status = {"error": str(exc)}, 400
        except Exception:  # a bug: log it, do not leak it
            traceback.print_exc(file=sys.stderr)
            out, status = {"error": "internal error (see the server's log)"}, 500
        body = json.dumps(plain(out), allow_nan=False, separators=(",", ":")).encode()
        return status, body
