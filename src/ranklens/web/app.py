"""The dashboard: an ASGI app (Starlette) over a monitoring store opened read-only.

Pages (``/``, ``/slices``, ``/groups``, ``/compare``, ``/signals``, ``/alerts``) are one static HTML shell whose
script draws from the JSON API (``/api/...``, described by ``/api/openapi.json`` and ``/api/docs``). Every
parameter is declared once in :data:`ENDPOINTS` (:mod:`ranklens.web.api`): that table drives the validation (unknown or
malformed parameters get a 400 naming them), the OpenAPI description and the store call. Filter
values reach the store as bound SQL parameters; the store's filter columns are the known columns
(model, model_version, environment, group_id and the slices listed by ``Store.info()``).

Security: the app is read-only (GET and HEAD only, store opened with ``read_only=True``); with a
token every request must carry it (``Authorization: Bearer``, the ``ranklens_token`` cookie, or
``?token=``); without one the ``Host`` header must name the loopback (no DNS rebinding); static
files are served from a fixed list read at start-up, so no path can leave the package.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import os
import re
import sys
import threading
import traceback
from collections import OrderedDict
from collections.abc import Callable
from importlib import resources
from typing import Any
from urllib.parse import parse_qsl, urlencode

from ..errors import InputError, InvalidParameterError, RanklensError
from ..render import plain
from .api import ENDPOINTS, BadParameter, Endpoint, openapi_spec

__all__ = ["ENDPOINTS", "check_token", "create_app", "openapi_spec"]

COOKIE = "ranklens_token"
PAGES = ("/", "/slices", "/groups", "/compare", "/signals", "/alerts")
_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
_TYPES = {"image/svg+xml": (".svg",), "text/css; charset=utf-8": (".css",), "text/html; charset=utf-8": (".html",),
          "text/javascript; charset=utf-8": (".js",), "text/plain; charset=utf-8": (".txt", "LICENSE")}


# -- the app ------------------------------------------------------------------------------------------------
class _Cache:
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


def _static_files() -> dict[str, tuple[bytes, str]]:
    """Every packaged static file, read once: name -> (content, media type). Nothing else is served."""
    root = resources.files("ranklens.web").joinpath("static")
    out: dict[str, tuple[bytes, str]] = {}

    def walk(node: Any, prefix: str) -> None:
        for child in node.iterdir():
            name = prefix + child.name
            if child.is_dir():
                walk(child, name + "/")
                continue
            media = next((t for t, ends in _TYPES.items() if child.name.endswith(ends)), None)
            if media is not None:
                out[name] = (child.read_bytes(), media)

    walk(root, "")
    return out


def check_token(token: str | None, name: str = "the token") -> None:
    """A token is at least 8 printable ASCII characters, none of them a space, a quote, ',' or ';'.

    >>> check_token("0123abcd-efgh")
    >>> check_token("short")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ranklens.errors.InvalidParameterError: the token must be at least 8 printable ASCII characters, ...
    """
    if token is not None and not re.fullmatch(r"[!#-&(-+\--:<-~]{8,}", token):
        raise InvalidParameterError(f"{name} must be at least 8 printable ASCII characters, without spaces, "
                                    "quotes, ',' or ';'.")


def _store_version(path: str) -> tuple[int, ...]:
    out: list[int] = []
    for p in (path, path + ".wal"):
        try:
            s = os.stat(p)
            out += [s.st_mtime_ns, s.st_size]
        except OSError:
            out += [0, 0]
    return tuple(out)


def create_app(
    store: str | os.PathLike[str],
    *,
    config: Any = None,
    token: str | None = None,
    cache: bool = True,
    cache_size: int = 512,
    host: str = "127.0.0.1",
    allowed_hosts: tuple[str, ...] | None = None,
) -> Any:
    """The dashboard's ASGI app over the monitoring store at ``store`` (opened read-only).

    Parameters
    ----------
    store : path
        A store written by ``ranklens monitor ingest``.
    config : path, dict or MonitorConfig, optional
        The monitoring configuration (baseline, attribution...), as for :class:`ranklens.monitor.Store`;
        default: ``ranklens.toml`` in the current directory when present.
    token : str, optional
        When given, every request must carry it: ``Authorization: Bearer TOKEN``, the
        ``ranklens_token`` cookie, or ``?token=TOKEN`` (a page opened so sets the cookie).
    cache : bool
        Cache API responses, keyed by the request and the store file's version (its modification time
        and size): a store updated by an ingest gives fresh answers.
    cache_size : int
        Responses kept.
    host : str
        The address the server binds (informational; shown in /api/info).
    allowed_hosts : tuple of str, optional
        ``Host`` header values accepted without a token (default: localhost, 127.0.0.1, [::1], any
        port). Ignored when a token is set.

    Returns
    -------
    starlette.applications.Starlette

    Examples
    --------
    >>> from ranklens.web import create_app
    >>> create_app("no-such-store.duckdb")
    Traceback (most recent call last):
    ...
    ranklens.errors.InputError: no-such-store.duckdb: no such store
    """
    path = os.fspath(store)
    check_token(token)
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such store")
    from .._base.deps import require

    require("starlette")
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from ..monitor import Store

    st = Store(path, config=config, read_only=True)
    static = _static_files()
    shell = static["index.html"][0]
    docs_page = static["apidocs.html"][0]
    responses = _Cache(cache_size) if cache else None
    pending: dict[Any, asyncio.Future[tuple[int, bytes]]] = {}  # requests being computed, by key
    slots = threading.BoundedSemaphore(max(1, os.cpu_count() or 1))
    hosts = tuple(h.lower() for h in (allowed_hosts or ("localhost", "127.0.0.1", "[::1]", "::1")))
    info_cache: dict[str, Any] = {}

    def filter_columns() -> set[str]:
        version = _store_version(path)
        if info_cache.get("version") != version:
            info = st.info()
            info_cache["columns"] = {"model", "model_version", "environment", "group_id", *info.get("slices", [])}
            info_cache["version"] = version
        return info_cache["columns"]

    def error(status: int, message: str, parameter: str | None = None) -> Response:
        body: dict[str, Any] = {"error": message}
        if parameter is not None:
            body["parameter"] = parameter
        return JSONResponse(body, status_code=status)

    def parse(ep: Endpoint, request: Request) -> tuple[dict[str, Any], dict[str, Any]]:
        raw: dict[str, list[str]] = {}
        for k, v in parse_qsl(request.url.query, keep_blank_values=True):
            if k == "token":
                continue
            raw.setdefault(k, []).append(v)
        known = {p.name: p for p in ep.params}
        params = {name: p.parse([x for x in raw.get(name, []) if x != ""]) for name, p in known.items()}
        where: dict[str, Any] = {}
        extra = [k for k in raw if k not in known]
        if extra:
            cols = filter_columns() if (ep.filters or ep.prefixed_filters) else set()
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

    def make_handler(ep: Endpoint) -> Callable[[Request], Any]:
        async def handler(request: Request) -> Response:
            try:
                params, where = parse(ep, request)
            except BadParameter as exc:
                return error(400, str(exc), exc.name)
            except RanklensError as exc:
                return error(400, str(exc))
            key = (ep.path, tuple(sorted((k, repr(v)) for k, v in {**params, **where}.items())), _store_version(path))
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
                status, body = await run_in_threadpool(compute, ep, params, where)
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

        return handler

    def compute(ep: Endpoint, params: dict[str, Any], where: dict[str, Any]) -> tuple[int, bytes]:
        try:
            with slots:  # as many store computations at once as cores: more only thrash
                out = ep.call(st, params, where)
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

    async def page(request: Request) -> Response:
        return Response(shell, media_type="text/html; charset=utf-8")

    async def docs(request: Request) -> Response:
        return Response(docs_page, media_type="text/html; charset=utf-8")

    async def static_file(request: Request) -> Response:
        name = request.path_params["name"]
        hit = static.get(name)
        if hit is None:
            return error(404, "not found")
        return Response(hit[0], media_type=hit[1], headers={"Cache-Control": "no-cache"})

    async def favicon(request: Request) -> Response:
        return Response(static["favicon.svg"][0], media_type="image/svg+xml")

    async def openapi(request: Request) -> Response:
        return JSONResponse(openapi_spec(filter_columns()))

    routes = [Route(p, page, methods=["GET"]) for p in PAGES]
    routes += [Route(ep.path, make_handler(ep), methods=["GET"]) for ep in ENDPOINTS]
    routes += [
        Route("/api/openapi.json", openapi, methods=["GET"]),
        Route("/api/docs", docs, methods=["GET"]),
        Route("/static/{name:path}", static_file, methods=["GET"]),
        Route("/favicon.ico", favicon, methods=["GET"]),
    ]

    async def not_found(request: Request, exc: Exception) -> Response:
        return error(404, "not found")

    async def not_allowed(request: Request, exc: Exception) -> Response:
        return error(405, "method not allowed: the dashboard is read-only")

    inner = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_allowed})
    inner.state.store = st
    inner.state.store_path = path
    inner.state.token = bool(token)
    app = _Guard(inner, token=token, hosts=hosts)
    return app


class _Guard:
    """ASGI middleware: method, host and token checks, and the security headers of every response."""

    def __init__(self, app: Any, *, token: str | None, hosts: tuple[str, ...]) -> None:
        self.app = app
        self.token = token.encode() if token else None
        self.hosts = hosts
        self.state = app.state  # tests reach the store through app.state.store

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        path = scope.get("path", "")

        async def send_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                h = list(message.get("headers", []))
                h += [(b"content-security-policy", _CSP.encode()), (b"x-content-type-options", b"nosniff"),
                      (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY")]
                if path.startswith("/api/"):
                    h.append((b"cache-control", b"no-store"))
                message = {**message, "headers": h}
            await send(message)

        if scope.get("method") not in ("GET", "HEAD"):
            await _json(send_headers, 405, {"error": "method not allowed: the dashboard is read-only"},
                        [(b"allow", b"GET, HEAD")])
            return
        if self.token is None:
            host = headers.get("host", "").lower()
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if name not in self.hosts and host not in self.hosts:
                await _json(send_headers, 400, {"error": f"unexpected Host header {host!r}: the dashboard answers "
                                                         "only for localhost (bind another address with --token)"})
                return
            await self.app(scope, receive, send_headers)
            return
        query = scope.get("query_string", b"").decode("latin-1")
        given = _token_of(headers, query)
        if given is None or not hmac.compare_digest(given.encode("utf-8", "surrogateescape"), self.token):
            await _json(send_headers, 401, {"error": "a valid token is required (Authorization: Bearer TOKEN)"},
                        [(b"www-authenticate", b'Bearer realm="ranklens"')])
            return
        qs = parse_qsl(query, keep_blank_values=True)
        if any(k == "token" for k, _ in qs) and not path.startswith("/api/"):
            # a browser opened ?token=...: keep it in a cookie and drop it from the address bar
            rest = urlencode([(k, v) for k, v in qs if k != "token"])
            location = path + ("?" + rest if rest else "")
            cookie = f"{COOKIE}={self.token.decode()}; Path=/; HttpOnly; SameSite=Strict"
            await send_headers({"type": "http.response.start", "status": 303,
                                "headers": [(b"location", location.encode("latin-1", "replace")),
                                            (b"set-cookie", cookie.encode("latin-1", "replace")),
                                            (b"content-length", b"0")]})
            await send_headers({"type": "http.response.body", "body": b""})
            return
        await self.app(scope, receive, send_headers)


def _token_of(headers: dict[str, str], query: str) -> str | None:
    auth = headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    if "x-ranklens-token" in headers:
        return headers["x-ranklens-token"].strip()
    for part in headers.get("cookie", "").split(";"):
        k, _, v = part.strip().partition("=")
        if k == COOKIE:
            return v
    for k, v in parse_qsl(query, keep_blank_values=True):
        if k == "token":
            return v
    return None


async def _json(send: Any, status: int, body: dict[str, Any], extra: list[tuple[bytes, bytes]] | None = None) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
                + (extra or [])})
    await send({"type": "http.response.body", "body": data})
