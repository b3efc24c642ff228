"""The dashboard: an ASGI app (Starlette) over a monitoring store opened read-only.

:func:`create_app` only assembles it: the pages (``/``, ``/slices``, ``/groups``, ``/compare``, ``/signals``,
``/alerts``, one module each in :mod:`ranklens.web.routes`) are one static HTML shell whose script draws from the
JSON API (``/api/...``, described by ``/api/openapi.json`` and ``/api/docs``: :mod:`ranklens.web.routes.static`).
Every parameter is declared once in :data:`ENDPOINTS` (:mod:`ranklens.web.api`): that table drives the validation
(unknown or malformed parameters get a 400 naming them), the OpenAPI description and the store call
(:mod:`ranklens.web.handler`: parsing, the cache, the computations).

Security: the app is read-only (GET and HEAD only, store opened with ``read_only=True``), except, when it runs
with a token, the two actions on alerts (``POST /api/ack`` and ``/api/snooze``, JSON only:
:mod:`ranklens.web.routes.actions`), which open the store for writing while no read runs; the guard
(:mod:`ranklens.web.guard`) checks the token or the ``Host`` header and adds the security headers; static
files are served from a fixed list read at start-up, so no path can leave the package.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import InputError
from .api import ENDPOINTS, PAGES, openapi_spec
from .guard import Guard, check_token

__all__ = ["ENDPOINTS", "check_token", "create_app", "openapi_spec"]


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
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from ..monitor import Store
    from .handler import JsonApi, error
    from .routes.actions import ACTION_PATHS, action_routes
    from .routes.static import shell_routes, static_files, static_routes

    st = Store(path, config=config, read_only=True)
    static = static_files()
    api = JsonApi(st, path, cache_size if cache else None)
    hosts = tuple(h.lower() for h in (allowed_hosts or ("localhost", "127.0.0.1", "[::1]", "::1")))
    routes = shell_routes(PAGES, static)
    routes += [Route(ep.path, api.handler(ep), methods=["GET"]) for ep in ENDPOINTS]
    if token:  # the writes (acknowledge, snooze) only behind a token
        routes += action_routes(lambda: Store(path, config=config, read_only=False), api.exclusive)
        api.actions = tuple(ACTION_PATHS)
    routes += static_routes(static, api.filter_columns, lambda: error(404, "not found"))

    async def not_found(request: Request, exc: Exception) -> Response:
        return error(404, "not found")

    async def not_allowed(request: Request, exc: Exception) -> Response:
        return error(405, "method not allowed: the dashboard is read-only")

    inner = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_allowed})
    inner.state.store = st
    inner.state.store_path = path
    inner.state.token = bool(token)
    return Guard(inner, token=token, hosts=hosts, actions=tuple(ACTION_PATHS))
