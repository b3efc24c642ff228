"""``ranklens serve``: the dashboard over a monitoring store (:func:`ranklens.web.create_app` under uvicorn).

Registered lazily by :mod:`ranklens.cli`, so the web stack is imported only when it runs.
"""

from __future__ import annotations

import os

import click

from ..errors import InputError, InvalidParameterError
from .main import integer

__all__ = ["is_loopback", "serve"]

TOKEN_ENV = "RANKLENS_TOKEN"


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (127.0.0.0/8, ::1, localhost).

    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("0.0.0.0"), is_loopback("::")
    (True, True, False, False)
    """
    import ipaddress

    h = host.strip().strip("[]")
    if h.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


@click.command("serve")
@click.option("--store", "store_path", default="ranklens.duckdb", show_default=True,
              type=click.Path(dir_okay=False), help="The monitoring store (opened read-only).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind. Any address other than loopback requires --token.")
@click.option("--port", default=8000, show_default=True, type=integer(0, 65535), help="Port (0: any free port).")
@click.option("--token", default=None, envvar=TOKEN_ENV, show_envvar=True,
              help="Secret every request must carry (header 'Authorization: Bearer TOKEN', or ?token= once in a "
                   "browser, which sets a cookie). Required when --host is not loopback.")
@click.option("--config", "config_path", default=None, envvar="RANKLENS_CONFIG", type=click.Path(dir_okay=False),
              help="TOML configuration (default: ./ranklens.toml when present; env RANKLENS_CONFIG).")
@click.option("--no-cache", is_flag=True, help="Do not cache API responses (they are keyed by the store's version).")
def serve(store_path: str, host: str, port: int, token: str | None, config_path: str | None, no_cache: bool) -> None:
    """Serve the dashboard over a monitoring store at http://HOST:PORT (127.0.0.1:8000 by default).

    Pages: Overview (a measure over time), Slices, Groups (explain one served list), Compare. The JSON
    API behind them is described at /api/openapi.json and /api/docs. Everything is served from the
    package: the dashboard works with no internet.
    """
    from ..web.app import check_token

    check_token(token, "--token")
    if not is_loopback(host) and not token:
        raise InvalidParameterError(
            f"binding {host} exposes the dashboard beyond this machine: give --token (or {TOKEN_ENV})."
        )
    if not os.path.exists(store_path):
        raise InputError(f"{store_path}: no such store (create one with 'ranklens monitor ingest').")
    from .._base.deps import require
    from ..web.app import create_app

    uvicorn = require("uvicorn")
    require("duckdb")
    app = create_app(store_path, config=config_path, token=token, cache=not no_cache, host=host)
    app.state.store.info()  # a file that is not a store (or of another schema) fails here, in one line
    if port == 0:  # any free port: choose it here so that the address printed is the one served
        import socket

        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
            sock.bind((host.strip("[]"), 0))
            port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"ranklens: serving {store_path} (read-only) at http://{shown}:{port}/"
               + ("  (token required)" if token else ""), err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False, server_header=False)
