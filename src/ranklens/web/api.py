"""The dashboard's JSON API: every endpoint and its parameters, declared once.

:data:`ENDPOINTS` drives the validation of a request (unknown or malformed parameters raise
:class:`BadParameter` naming them), the OpenAPI description (:func:`openapi_spec`) and the store call.
Answers are plain data (:func:`ranklens.render.plain` makes them JSON).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidParameterError
from ..render import plain
from .alerts import call_alert_list
from .signals import call_signals

__all__ = ["ENDPOINTS", "WINDOWS", "BadParameter", "Endpoint", "Param", "heatmap", "openapi_spec"]

WINDOWS = ("hour", "day", "week")


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
                raise BadParameter(self.name, "is required")
            return self.default
        if self.kind != "list" and len(raw) > 1:
            raise BadParameter(self.name, "is given more than once")
        if self.kind == "list":
            items = [x for r in raw for x in r.split(",") if x]
            if any(len(x) > 200 for x in items) or len(items) > 50:
                raise BadParameter(self.name, "has too many or too long values")
            return items or self.default
        v = raw[0]
        if len(v) > 200:
            raise BadParameter(self.name, "is longer than 200 characters")
        if self.kind == "integer":
            if not re.fullmatch(r"[+-]?\d{1,9}", v.strip()):
                raise BadParameter(self.name, f"must be an integer; got {v!r}")
            n = int(v)
            if (self.minimum is not None and n < self.minimum) or (self.maximum is not None and n > self.maximum):
                raise BadParameter(self.name, f"must be in [{self.minimum:g}, {self.maximum:g}]; got {n}")
            return n
        if self.kind == "number":
            try:
                x = float(v)
            except ValueError:
                raise BadParameter(self.name, f"must be a number; got {v!r}") from None
            if not math.isfinite(x) or (self.minimum is not None and x <= self.minimum) or (
                    self.maximum is not None and x >= self.maximum):
                raise BadParameter(self.name, f"must be a number in ({self.minimum:g}, {self.maximum:g}); got {v!r}")
            return x
        if self.kind == "enum":
            if v not in self.choices:
                raise BadParameter(self.name, f"must be one of {', '.join(self.choices)}; got {v!r}")
            return v
        if self.kind == "date":
            return _iso(self.name, v)
        if self.kind == "measure":
            from ..measures import parse_measure
            from ..monitor._params import MAX_CUTOFF

            try:
                parsed = parse_measure(v)
            except (InvalidParameterError, ValueError):
                parsed = []
            if len(parsed) != 1:
                raise BadParameter(self.name, f"is not one measure: {v!r} (e.g. ndcg@10, map@10, mrr@10)")
            if parsed[0].k is not None and parsed[0].k > MAX_CUTOFF:
                raise BadParameter(self.name, f"asks a cutoff of {parsed[0].k}: at most {MAX_CUTOFF} ({v!r})")
            return parsed[0].key
        return v


class BadParameter(Exception):
    """A request parameter that is missing, repeated, malformed or unknown; ``name`` is the parameter."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"`{name}` {message}")
        self.name = name


def _iso(name: str, v: str) -> str:
    """An ISO-8601 date or date-time, returned in a canonical form (UTC when no zone is given)."""
    s = v.strip()
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?(Z|[+-]\d{2}:?\d{2})?", s):
        raise BadParameter(name, f"must be an ISO-8601 date or date-time (2024-03-01 or 2024-03-01T12:00); got {v!r}")
    try:
        t = _dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        raise BadParameter(name, f"is not a valid date: {v!r}") from None
    if t.tzinfo is not None:
        t = t.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    return t.isoformat()


_METRIC = Param("metric", "measure", "ndcg@10",
                "Measure: ndcg@10, ndcg@5, map, mrr@10 ... (see Store.info()['tracked'])")
_START = Param("start", "date", None, "Start of the time range (inclusive), ISO-8601; UTC when no zone is given.")
_END = Param("end", "date", None, "End of the time range (exclusive), ISO-8601.")
_WINDOW = Param("window", "enum", "day", "Width of a time window.", choices=WINDOWS)
_CONF = Param("confidence", "number", 0.95, "Level of the intervals.", minimum=0.5, maximum=1.0)
_RESAMPLES = Param("n_resamples", "integer", 1000, "Bootstrap resamples.", minimum=1, maximum=10000)
_SEED = Param("seed", "integer", 0, "Seed of the resampling.", minimum=0, maximum=2**31 - 1)
_BASELINE = Param("baseline", "string", None, "Baseline name from the store's configuration (default: its default).")
_BY = Param("by", "list", None, "Series columns, comma-separated (default model,model_version,environment).")
_SLICE_PARAMS = (
    _METRIC, _START, _END, _BASELINE, Param("columns", "list", None, "Slice columns (default: all)."), _BY,
    Param("depth", "integer", 2, "1: one column at a time; 2: also pairs of columns.", minimum=1, maximum=2),
    Param("min_support", "integer", 30, "Counted groups a slice needs in the window and in the baseline to be "
                                        "listed alone.", minimum=1, maximum=10**9),
    Param("correction", "enum", "holm", "Correction of the p-values for the number of slices listed.",
          choices=("holm", "bh", "none")),
)


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
    return [{k: plain(v) for k, v in row.items()} for row in table.to_pylist()]


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


_SERIES = ("model", "model_version", "environment")


def _slice_args(p: dict[str, Any], where: dict[str, Any]) -> dict[str, Any]:
    return {"metric": p["metric"], "start": p["start"], "end": p["end"], "baseline": p["baseline"],
            "columns": p["columns"] or None, "where": where or None, "by": tuple(p["by"] or _SERIES),
            "depth": p["depth"], "min_support": p["min_support"], "correction": p["correction"]}


def _call_slices(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    t = st.slices(**_slice_args(p, where))
    meta = (t.schema.metadata or {}).get(b"ranklens")
    return {"metric": p["metric"], "rows": _rows(t), "summary": json.loads(meta) if meta else None}


def _call_baselines(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    by = tuple(p["by"] or _SERIES)
    t = st.baselines(metric=p["metric"], by=by, where=where or None, start=p["start"], end=p["end"],
                     baseline=p["baseline"])
    return {"metric": p["metric"], "by": list(by), "rows": _rows(t)}


def _cell(r: dict[str, Any], names: list[str]) -> tuple[str, ...]:
    return tuple("(missing)" if r.get(n) is None else str(r[n]) for n in names)


def heatmap(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    """Slice x time: the `limit` slices that explain most of the change, their measure per window, each row
    centred on its own baseline (so a slice that is always weaker is not always red). ``p`` holds the
    parameters of ``/api/heatmap`` (every one of them: defaults included)."""
    args = _slice_args(p, where)
    t = st.slices(**args)
    chosen = [r for r in _rows(t) if not r["pooled"]][: p["limit"]]
    by = list(args["by"])
    start = p["history_start"] or p["start"]
    window_end = json.loads((t.schema.metadata or {})[b"ranklens"])["window_end"]
    cols: set[str] = set()
    cells: dict[tuple[str, ...], dict[str, tuple[Any, Any]]] = {}
    for d in dict.fromkeys((r["column"], r["column2"]) for r in chosen):
        slice_cols = [c for c in d if c]
        rep = _rows(st.report(metrics=(p["metric"],), window=p["window"], by=tuple(by + slice_cols),
                              where=where or None, start=start, end=p["end"] or window_end, ci="none"))
        for r in rep:
            cols.add(r["window"])
            cells.setdefault((*d[:1], d[1] or "", *_cell(r, by + slice_cols)), {})[r["window"]] = (
                r["value"], r["n_groups"])
    windows = sorted(cols)
    multi = len({_cell(r, by) for r in chosen}) > 1
    rows, values, counts = [], [], []
    for r in chosen:
        sl = [f"{r['column']}={r['value']}"] + ([f"{r['column2']}={r['value2']}"] if r["column2"] else [])
        rows.append(" ".join(([" \u00b7 ".join(_cell(r, by))] if multi else []) + sl))
        vals = [r["value"]] + ([r["value2"]] if r["column2"] else [])
        got = cells.get((r["column"], r["column2"] or "", *_cell(r, by), *vals), {})
        values.append([got.get(w, (None, None))[0] for w in windows])
        counts.append([got.get(w, (None, None))[1] for w in windows])
    return {"metric": p["metric"], "window": p["window"], "rows": rows, "cols": windows, "values": values,
            "counts": counts, "centers": [r["baseline_value"] for r in chosen],
            "slices": [{k: r[k] for k in (*by, "column", "value", "column2", "value2")} for r in chosen]}


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
             (_METRIC, _WINDOW, _START, _END, _BY,
              Param("ci", "enum", "bootstrap", "Interval of each window's mean.", choices=("bootstrap", "t", "none")),
              _CONF, _RESAMPLES, _SEED), True, _call_report),
    Endpoint("/api/baseline", "The baseline of a measure (Store.baseline): the band of the Overview chart.",
             (_METRIC, _BASELINE), True, _call_baseline),
    Endpoint("/api/alerts", "Alerts recorded by `ranklens monitor check` (Store.alerts).",
             (_START, _END, Param("metric", "measure", None, "Keep the alerts of this measure only.")), False,
             _call_alerts),
    Endpoint("/api/baselines", "The baseline of each series, by the monitors' rule (Store.baselines): the "
                               "Overview's baseline lines.",
             (_METRIC, _START, _END, _BASELINE, _BY), True, _call_baselines),
    Endpoint("/api/alert-list", "Alerts, one row each, newest first: state (open, resolved), the windows that opened, "
                                "last fired and resolved them, values and root cause (Store.alert_list); paged.",
             (_START, _END, Param("state", "enum", "all", "Open, resolved or all alerts.",
                                  choices=("all", "open", "resolved")),
              Param("limit", "integer", 25, "Alerts per page.", minimum=1, maximum=200),
              Param("offset", "integer", 0, "Alerts skipped (the page's start).", minimum=0, maximum=10**9)), False,
             call_alert_list),
    Endpoint("/api/slices", "Slices (one column or two) of a window against each series' baseline, most harmful "
                            "first (Store.slices).", _SLICE_PARAMS, True, _call_slices),
    Endpoint("/api/heatmap", "Slice x time: the measure per window for the slices that explain most of the "
                             "change, each centred on its own baseline.",
             (*_SLICE_PARAMS, _WINDOW,
              Param("history_start", "date", None, "First window of the heatmap (default: start)."),
              Param("limit", "integer", 12, "Slices shown.", minimum=1, maximum=50)), True, heatmap),
    Endpoint("/api/signals", "Label-free signals per window and series against the baseline (Store.signals): "
                             "score drift, positions, coverage, Gini, novelty, ILD. The Signals page.",
             (Param("metric", "list", None, "Signals, comma-separated: psi(score), ks(score), psi(position), "
                                            "psi(popularity@K), coverage[@K], gini[@K], novelty[@K], ild[@K] "
                                            "(default: all)."),
              _WINDOW, _START, _END, _BASELINE, _BY), True, call_signals),
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
             (_METRIC, Param("a_start", "date", None, "Start of side A."),
              Param("a_end", "date", None, "End of side A."),
              Param("b_start", "date", None, "Start of side B."), Param("b_end", "date", None, "End of side B."),
              _CONF, _RESAMPLES, _SEED), False, _call_compare,
             description="Filters of each side are given as a_<column> and b_<column> (e.g. a_model_version=v1, "
                         "b_model_version=v2).", prefixed_filters=("a_", "b_")),
)


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
