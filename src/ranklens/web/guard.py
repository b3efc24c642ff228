"""The dashboard's guard (ASGI middleware): read-only methods (and, with a token, POST on the action paths:
acknowledge, snooze), the ``Host`` header or the token, and the security headers of every response.

With a token every request must carry it (``Authorization: Bearer``, the ``ranklens_token`` cookie, or
``?token=``, which a browser trades for the cookie); without one the ``Host`` header must name the loopback
(no DNS rebinding).
"""

from __future__ import annotations

import hmac
import json
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode

from ..errors import InvalidParameterError

__all__ = ["COOKIE", "CSP", "Guard", "check_token"]

COOKIE = "ranklens_token"
#: The Content-Security-Policy of every response: nothing but the dashboard's own files.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


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


class Guard:
    """ASGI middleware: method, host and token checks, and the security headers of every response."""

    def __init__(self, app: Any, *, token: str | None, hosts: tuple[str, ...], actions: tuple[str, ...] = ()) -> None:
        self.app = app
        self.actions = actions  # paths that write (POST), with a token only
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
                h += [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
                      (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY")]
                if path.startswith("/api/"):
                    h.append((b"cache-control", b"no-store"))
                message = {**message, "headers": h}
            await send(message)

        method = scope.get("method")
        writes = method == "POST" and path in self.actions
        if method not in ("GET", "HEAD") and not (writes and self.token is not None):
            why = ("the dashboard is read-only without a token: start it with --token to acknowledge or snooze "
                   "alerts" if writes else "the dashboard is read-only")
            await _json(send_headers, 405, {"error": f"method not allowed: {why}"},
                        [(b"allow", b"GET, HEAD" + (b", POST" if writes and self.token is not None else b""))])
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
