"""What every page of the dashboard is made of: the HTML shell (one for all pages, its script draws each),
the API's docs page and OpenAPI description, the packaged static files and the icon.

Static files are served from a fixed list read at start-up, so no path can leave the package.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from typing import Any

from ..api import openapi_spec

__all__ = ["shell_routes", "static_files", "static_routes"]

_TYPES = {"image/svg+xml": (".svg",), "text/css; charset=utf-8": (".css",), "text/html; charset=utf-8": (".html",),
          "text/javascript; charset=utf-8": (".js",), "text/plain; charset=utf-8": (".txt", "LICENSE")}


def static_files() -> dict[str, tuple[bytes, str]]:
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


def shell_routes(pages: tuple[str, ...], static: dict[str, tuple[bytes, str]]) -> list[Any]:
    """The routes of the pages: each serves the one HTML shell."""
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    shell = static["index.html"][0]

    async def page(request: Request) -> Response:
        return Response(shell, media_type="text/html; charset=utf-8")

    return [Route(p, page, methods=["GET"]) for p in pages]


def static_routes(static: dict[str, tuple[bytes, str]], filter_columns: Callable[[], set[str]],
                  not_found: Callable[[], Any]) -> list[Any]:
    """The routes of the OpenAPI description, the API's docs page, the static files and the icon."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    docs_page = static["apidocs.html"][0]

    async def docs(request: Request) -> Response:
        return Response(docs_page, media_type="text/html; charset=utf-8")

    async def static_file(request: Request) -> Response:
        name = request.path_params["name"]
        hit = static.get(name)
        if hit is None:
            return not_found()
        return Response(hit[0], media_type=hit[1], headers={"Cache-Control": "no-cache"})

    async def favicon(request: Request) -> Response:
        return Response(static["favicon.svg"][0], media_type="image/svg+xml")

    async def openapi(request: Request) -> Response:
        return JSONResponse(openapi_spec(filter_columns()))

    return [
        Route("/api/openapi.json", openapi, methods=["GET"]),
        Route("/api/docs", docs, methods=["GET"]),
        Route("/static/{name:path}", static_file, methods=["GET"]),
        Route("/favicon.ico", favicon, methods=["GET"]),
    ]
