"""The dashboard: an ASGI app (Starlette) over a monitoring store opened read-only.

Pages (``/``, ``/slices``, ``/groups``, ``/compare``) are one static HTML shell whose script draws
from the JSON API (``/api/...``, described by ``/api/openapi.json`` and ``/api/docs``). Every
parameter is declared once in :data:`ENDPOINTS`: that table drives the validation (unknown or
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
import datetime as _dt
import hmac
import json
import math
import os
import re
import sys
import threading
import traceback
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any
from urllib.parse import parse_qsl, urlencode

from ..errors import InputError, InvalidParameterError, RanklensError

__all__ = ["ENDPOINTS", "create_app"]

COOKIE = "ranklens_token"
PAGES = ("/", "/slices", "/groups", "/compare")
WINDOWS = ("hour", "day", "week")
_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
_TYPES = {"image/svg+xml": (".svg",), "text/css; charset=utf-8": (".css",), "text/html; charset=utf-8": (".html",),
          "text/javascript; charset=utf-8": (".js",), "text/plain; charset=utf-8": (".txt", "LICENSE")}


# -- parameters ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Param:
    """One query parameter: its name, type, default and description (also its OpenAPI entry)."""

    name: str
    kind: str = "string"  # string, integer, number, date, enum, measure, list
    default: Any = None
    description: str = ""
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    required: bool = False

    def parse(self, raw: list[str]) -> Any:
        if not raw:
            if self.required:
                raise _BadParam(self.name, "is required")
            return self.default
        if self.kind != "list" and len(raw) > 1:
            raise _BadParam(self.name, "is given more than once")
        v = raw[0] if self.kind != "list" else None
        if v is not None and len(v) > 200:
            raise _BadParam(self.name, "is longer than 200 characters")
        if self.kind == "list":
            items = [x for r in raw for x in r.split(",") if x]
            if any(len(x) > 200 for x in items) or len(items) > 50:
                raise _BadParam(self.name, "has too many or too long values")
            return items or self.default
        if self.kind == "integer":
            if not re.fullmatch(r"[+-]?\d{1,9}", v.strip()):
                raise _BadParam(self.name, f"must be an integer; got {v!r}")
            n = int(v)
            if (self.minimum is not None and n < self.minimum) or (self.maximum is not None and n > self.maximum):
                raise _BadParam(self.name, f"must be in [{self.minimum:g}, {self.maximum:g}]; got {n}")
            return n
        if self.kind == "number":
            try:
                x = float(v)
            except ValueError:
                raise _BadParam(self.name, f"must be a number; got {v!r}") from None
            if not math.isfinite(x) or (self.minimum is not None and x <= self.minimum) or (
                    self.maximum is not None and x >= self.maximum):
                raise _BadParam(self.name, f"must be a number in ({self.minimum:g}, {self.maximum:g}); got {v!r}")
            return x
        if self.kind == "enum":
            if v not in self.choices:
                raise _BadParam(self.name, f"must be one of {', '.join(self.choices)}; got {v!r}")
            return v
        if self.kind == "date":
            return _iso(self.name, v)
        if self.kind == "measure":
            from ..measures import parse_measure

            try:
                parsed = parse_measure(v)
            except (InvalidParameterError, ValueError):
                parsed = []
            if len(parsed) != 1:
                raise _BadParam(self.name, f"is not one measure: {v!r} (e.g. ndcg@10, map@10, mrr@10)")
            return parsed[0].key
        return v


class _BadParam(Exception):
    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"`{name}` {message}")
        self.name = name


def _iso(name: str, v: str) -> str:
    """An ISO-8601 date or date-time, returned in a canonical form (UTC when no zone is given)."""
    s = v.strip()
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?(Z|[+-]\d{2}:?\d{2})?", s):
        raise _BadParam(name, f"must be an ISO-8601 date or date-time (2024-03-01 or 2024-03-01T12:00); got {v!r}")
    try:
        t = _dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        raise _BadParam(name, f"is not a valid date: {v!r}") from None
    if t.tzinfo is not None:
        t = t.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    return t.isoformat()


_METRIC = Param("metric", "measure", "ndcg@10", "Measure: ndcg@10, ndcg@5, map, mrr@10 ... (see Store.info()['tracked'])")
_START = Param("start", "date", None, "Start of the time range (inclusive), ISO-8601; UTC when no zone is given.")
_END = Param("end", "date", None, "End of the time range (exclusive), ISO-8601.")
_WINDOW = Param("window", "enum", "day", "Width of a time window.", choices=WINDOWS)
_CONF = Param("confidence", "number", 0.95, "Level of the intervals.", minimum=0.5, maximum=1.0)
_RESAMPLES = Param("n_resamples", "integer", 1000, "Bootstrap resamples.", minimum=1, maximum=10000)
_SEED = Param("seed", "integer", 0, "Seed of the resampling.", minimum=0, maximum=2**31 - 1)
_BASELINE = Param("baseline", "string", None, "Baseline name from the store's configuration (default: its default).")


@dataclass(frozen=True)
class Endpoint:
    """A GET endpoint of the JSON API."""

    path: str
    summary: str
    params: tuple[Param, ...]
    filters: bool
    call: Callable[[Any, dict[str, Any], dict[str, Any]], Any]
    description: str = ""
    prefixed_filters: tuple[str, ...] = field(default=())  # compare: a_<column>, b_<column>


def _rows(table: Any) -> list[dict[str, Any]]:
    return [{k: _jsonable(v) for k, v in row.items()} for row in table.to_pylist()]


def _jsonable(v: Any) -> Any:
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, _dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        return v.isoformat() + "Z"
    if isinstance(v, _dt.date):
        return v.isoformat()
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        try:
            return _jsonable(v.item())
        except (ValueError, TypeError):
            return str(v)
    if v is None or isinstance(v, (str, int, bool)):
        return v
    return str(v)


def _call_info(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    info = dict(st.info())
    info["windows"] = list(WINDOWS)
    info["read_only"] = True
    return info


def _call_report(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    by = tuple(p["by"] or ("model", "model_version", "environment"))
    t = st.report(metrics=(p["metric"],), window=p["window"], by=by, where=where or None, start=p["start"],
                  end=p["end"], ci=p["ci"], confidence=p["confidence"], n_resamples=p["n_resamples"], seed=p["seed"])
    return {"metric": p["metric"], "window": p["window"], "by": list(by), "rows": _rows(t)}


def _call_baseline(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    return st.baseline(metric=p["metric"], baseline=p["baseline"], where=where or None)


def _call_alerts(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    rows = _rows(st.alerts(start=p["start"], end=p["end"]))
    if p["metric"]:
        rows = [r for r in rows if r.get("metric") == p["metric"]]
    return {"rows": rows}


def _call_slices(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    t = st.slices(metric=p["metric"], start=p["start"], end=p["end"], baseline=p["baseline"],
                  columns=p["columns"] or None, where=where or None)
    meta = (t.schema.metadata or {}).get(b"ranklens")
    return {"metric": p["metric"], "rows": _rows(t), "summary": json.loads(meta) if meta else None}


def _call_heatmap(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    """Slice x time: the `limit` slice values that explain most of the change, their metric per window."""
    sl = _rows(st.slices(metric=p["metric"], start=p["start"], end=p["end"], baseline=p["baseline"],
                         columns=p["columns"] or None, where=where or None))
    sl.sort(key=lambda r: (r.get("contribution") is None, r.get("contribution") or 0.0))
    chosen = sl[: p["limit"]]
    base = st.baseline(metric=p["metric"], baseline=p["baseline"], where=where or None)
    cols: list[str] = []
    series: dict[tuple[str, str], dict[str, tuple[Any, Any]]] = {}
    for column in dict.fromkeys(r["column"] for r in chosen):
        t = _rows(st.report(metrics=(p["metric"],), window=p["window"], by=(column,), where=where or None,
                            start=p["start"], end=p["end"], ci="none"))
        for r in t:
            w = r["window"]
            if w not in cols:
                cols.append(w)
            series.setdefault((column, str(r[column])), {})[w] = (r["value"], r["n_groups"])
    cols.sort()
    rows = [f"{r['column']}={r['value']}" for r in chosen]
    values = [[series.get((r["column"], str(r["value"])), {}).get(w, (None, None))[0] for w in cols] for r in chosen]
    counts = [[series.get((r["column"], str(r["value"])), {}).get(w, (None, None))[1] for w in cols] for r in chosen]
    return {"metric": p["metric"], "window": p["window"], "rows": rows, "cols": cols, "values": values,
            "counts": counts, "baseline": _jsonable(base.get("value") if isinstance(base, dict) else None)}


def _call_groups(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    t = st.groups(metric=p["metric"], start=p["start"], end=p["end"], where=where or None, order=p["order"],
                  limit=p["limit"])
    return {"metric": p["metric"], "rows": _rows(t)}


def _call_explain(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    e = st.explain(p["group_id"], model=p["model"], model_version=p["model_version"],
                   environment=p["environment"], k=p["k"])
    return e.to_dict() if hasattr(e, "to_dict") else e


def _call_compare(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    sides = {}
    for side in ("a", "b"):
        w = {k[2:]: v for k, v in where.items() if k.startswith(side + "_")}
        sides[side] = {"where": w or None, "start": p[f"{side}_start"], "end": p[f"{side}_end"]}
    return st.compare(metric=p["metric"], a=sides["a"], b=sides["b"], confidence=p["confidence"],
                      n_resamples=p["n_resamples"], seed=p["seed"])


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("/api/info", "The store: size, time span, models, slices, tracked measures.", (), False, _call_info),
    Endpoint("/api/report", "A measure per time window and series (Store.report): the Overview chart.",
             (_METRIC, _WINDOW, _START, _END,
              Param("by", "list", None, "Series columns, comma-separated (default model,model_version,environment)."),
              Param("ci", "enum", "bootstrap", "Interval of each window's mean.", choices=("bootstrap", "t", "none")),
              _CONF, _RESAMPLES, _SEED), True, _call_report),
    Endpoint("/api/baseline", "The baseline of a measure (Store.baseline): the band of the Overview chart.",
             (_METRIC, _BASELINE), True, _call_baseline),
    Endpoint("/api/alerts", "Alerts recorded by `ranklens monitor check` (Store.alerts).",
             (_START, _END, Param("metric", "measure", None, "Keep the alerts of this measure only.")), False,
             _call_alerts),
    Endpoint("/api/slices", "Slice values of a window against the baseline, worst first (Store.slices).",
             (_METRIC, _START, _END, _BASELINE, Param("columns", "list", None, "Slice columns (default: all).")), True,
             _call_slices),
    Endpoint("/api/heatmap", "Slice x time: the measure per window for the slice values that explain most of the "
                             "change.",
             (_METRIC, _WINDOW, _START, _END, _BASELINE, Param("columns", "list", None, "Slice columns (default: all)."),
              Param("limit", "integer", 12, "Slice values shown.", minimum=1, maximum=50)), True, _call_heatmap),
    Endpoint("/api/groups", "Prediction groups ordered by their value (Store.groups).",
             (_METRIC, _START, _END, Param("order", "enum", "worst", "Worst or best first.", choices=("worst", "best")),
              Param("limit", "integer", 20, "Groups returned.", minimum=1, maximum=1000)), True, _call_groups),
    Endpoint("/api/explain", "One served list, position by position (Store.explain): gains, discounts, "
                             "contributions, ideal order.",
             (Param("group_id", "string", None, "The prediction group.", required=True),
              Param("model", "string", None, "Model (when the group id is served by several)."),
              Param("model_version", "string", None, "Model version."),
              Param("environment", "string", None, "Environment."),
              Param("k", "integer", 10, "Cutoff.", minimum=1, maximum=1000)), False, _call_explain),
    Endpoint("/api/compare", "Two model versions or two windows side by side: means, intervals, difference, "
                             "p-value (Store.compare).",
             (_METRIC, Param("a_start", "date", None, "Start of side A."), Param("a_end", "date", None, "End of side A."),
              Param("b_start", "date", None, "Start of side B."), Param("b_end", "date", None, "End of side B."),
              _CONF, _RESAMPLES, _SEED), False, _call_compare,
             description="Filters of each side are given as a_<column> and b_<column> (e.g. a_model_version=v1, "
                         "b_model_version=v2).", prefixed_filters=("a_", "b_")),
)


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
    >>> check_token("short")
    Traceback (most recent call last):
    ...
    ranklens.errors.InvalidParameterError: the token must be at least 8 printable ASCII characters, without spaces, quotes, ',' or ';'.
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
    from .._deps import require

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
                    raise _BadParam(k, "is not a parameter of " + ep.path + (
                        f" (filters: {', '.join(sorted(cols))})" if cols else ""))
                vals = [x for r in raw[k] for x in r.split(",")] if len(raw[k]) == 1 else raw[k]
                vals = [x for x in vals if x != ""]
                if not vals:  # `?model=`: no filter, as for the other parameters
                    continue
                if any(len(x) > 200 for x in vals) or len(vals) > 100:
                    raise _BadParam(k, "has too many or too long values")
                where[k] = vals[0] if len(vals) == 1 else vals
        return params, where

    def make_handler(ep: Endpoint) -> Callable[[Request], Any]:
        async def handler(request: Request) -> Response:
            try:
                params, where = parse(ep, request)
            except _BadParam as exc:
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
        except Exception:  # noqa: BLE001 - a bug: log it, do not leak it
            traceback.print_exc(file=sys.stderr)
            out, status = {"error": "internal error (see the server's log)"}, 500
        body = json.dumps(_jsonable(out), allow_nan=False, separators=(",", ":")).encode()
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


def openapi_spec(filter_columns: set[str] | None = None) -> dict[str, Any]:
    """The OpenAPI 3.1 description of the JSON API, built from :data:`ENDPOINTS`.

    >>> spec = openapi_spec({"model", "country"})
    >>> sorted(spec["paths"])[:3], spec["openapi"]
    (['/api/alerts', '/api/baseline', '/api/compare'], '3.1.0')
    """
    from .._version import __version__

    types = {"integer": {"type": "integer"}, "number": {"type": "number"}, "date": {"type": "string", "format": "date-time"},
             "list": {"type": "string", "description": "comma-separated"}, "measure": {"type": "string"},
             "string": {"type": "string"}, "enum": {"type": "string"}}
    paths: dict[str, Any] = {}
    cols = sorted(filter_columns or ())
    for ep in ENDPOINTS:
        params = []
        for p in ep.params:
            schema = dict(types[p.kind])
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
                               "description": f"Filter of side {prefix[0].upper()}: {c}.", "schema": {"type": "string"}})
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
