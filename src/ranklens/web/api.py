"""The dashboard's JSON API: every endpoint and its parameters, declared once.

:data:`ENDPOINTS` drives the validation of a request (unknown or malformed parameters raise
:class:`BadParameter` naming them), the OpenAPI description (:func:`openapi_spec`) and the store call.
Answers are plain data (:func:`ranklens.render.plain` makes them JSON).
"""


from __future__ import annotations

from typing import Any

from .endpoint import WINDOWS, BadParameter, Endpoint, Param
from .routes import alerts, compare, groups, overview, signals, slices
from .routes.slices import heatmap

__all__ = ["ENDPOINTS", "PAGES", "WINDOWS", "BadParameter", "Endpoint", "Param", "heatmap", "openapi_spec"]

_ROUTES = (overview, alerts, slices, signals, groups, compare)
#: Every endpoint of the JSON API, page by page (each page's are declared in its module of :mod:`ranklens.web.routes`).
ENDPOINTS: tuple[Endpoint, ...] = tuple(ep for page in _ROUTES for ep in page.ENDPOINTS)
#: The pages of the dashboard, one per module of :mod:`ranklens.web.routes`.
PAGES: tuple[str, ...] = tuple(page.PAGE for page in _ROUTES)


def openapi_spec(filter_columns: set[str] | None = None) -> dict[str, Any]:
    """The OpenAPI 3.1 description of the JSON API, built from :data:`ENDPOINTS`.

    >>> spec = openapi_spec({"model", "country"})
    >>> sorted(spec["paths"])[:3], spec["openapi"]
    (['/api/alert-list', '/api/alerts', '/api/baseline'], '3.1.0')
    """
    from .._version import __version__

    types = {"integer": {"type": "integer"}, "number": {"type": "number"},
             "date": {"type": "string", "format": "date-time"},
             "list": {"type": "string", "description": "comma-separated"}, "measure": {"type": "string"},
             "string": {"type": "string"}, "enum": {"type": "string"}}
    paths: dict[str, Any] = {}
    cols = sorted(filter_columns or ())
    for ep in ENDPOINTS:
        params = []
        for p in ep.params:
            schema: dict[str, Any] = dict(types[p.kind])
            if p.choices:
                schema["enum"] = list(p.choices)
            if p.default is not None:
                schema["default"] = p.default
            if p.minimum is not None:
                schema["minimum"] = p.minimum
            if p.maximum is not None:
                schema["maximum"] = p.maximum
            params.append({"name": p.name, "in": "query", "required": p.required, "description": p.description,
                           "schema": schema})
        if ep.filters:
            for c in cols:
                params.append({"name": c, "in": "query", "required": False,
                               "description": f"Filter: {c} equal to this value (comma-separated or repeated: any of "
                                              "them). A bound SQL parameter.",
                               "schema": {"type": "string"}})
        for prefix in ep.prefixed_filters:
            for c in cols:
                params.append({"name": prefix + c, "in": "query", "required": False,
                               "description": f"Filter of side {prefix[0].upper()}: {c}.",
                               "schema": {"type": "string"}})
        paths[ep.path] = {"get": {
            "summary": ep.summary, "description": ep.description, "parameters": params,
            "responses": {
                "200": {"description": "JSON", "content": {"application/json": {"schema": {"type": "object"}}}},
                "400": {"description": "A parameter is wrong: {\"error\": message, \"parameter\": name}"},
                "401": {"description": "Token missing or wrong (when the server has one)"},
                "503": {"description": "The store is locked by a writer; retry"},
            }}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "ranklens dashboard API", "version": __version__,
                 "description": "Read-only JSON over a ranklens monitoring store. With a token, send "
                                "'Authorization: Bearer TOKEN'. Times are UTC, ISO-8601."},
        "paths": paths,
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    }
