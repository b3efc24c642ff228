"""The Overview page: a measure per window and series against its baselines, and the alerts recorded."""

from __future__ import annotations

from typing import Any

from ..endpoint import (
    BASELINE,
    BY,
    CONFIDENCE,
    END,
    MEASURE,
    RESAMPLES,
    SEED,
    SERIES,
    START,
    WINDOW,
    WINDOWS,
    Endpoint,
    Param,
    label_of,
    table_rows,
)

__all__ = ["ENDPOINTS", "PAGE"]

#: The page (its HTML shell is the same for every page: its script draws it from the endpoints below).
PAGE = "/"


def _call_info(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    info = dict(st.info())
    info["windows"] = list(WINDOWS)
    info["read_only"] = True  # the data: nothing the dashboard does changes a number
    return info


def _call_report(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    by = tuple(p["by"] or ("model", "model_version", "environment"))
    t = st.report((p["measure"],), window=p["window"], by=by, where=where or None, start=p["start"],
                  end=p["end"], ci=p["ci"], confidence=p["confidence"], n_resamples=p["n_resamples"], seed=p["seed"])
    return {"measure": p["measure"], "window": p["window"], "by": list(by), "rows": table_rows(t),
            "label": label_of(st, p["measure"])}


def _call_baseline(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    b = st.baseline(p["measure"], baseline=p["baseline"], where=where or None)
    return {**b, "label": label_of(st, p["measure"])}


def _call_alerts(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    rows = table_rows(st.alerts(start=p["start"], end=p["end"]))
    if p["measure"]:  # the alerts of monitors on this measure
        rows = [r for r in rows if r.get("metric") == p["measure"]]
    return {"rows": rows}



def _call_baselines(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    by = tuple(p["by"] or SERIES)
    t = st.baselines(p["measure"], by=by, where=where or None, start=p["start"], end=p["end"],
                     baseline=p["baseline"])
    return {"measure": p["measure"], "by": list(by), "rows": table_rows(t), "label": label_of(st, p["measure"])}


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("/api/info", "The store: size, time span, models, slices, tracked measures.", (), False, _call_info),
    Endpoint("/api/report", "A measure per time window and series (Store.report): the Overview chart.",
             (MEASURE, WINDOW, START, END, BY,
              Param("ci", "enum", "bootstrap", "Interval of each window's mean.", choices=("bootstrap", "t", "none")),
              CONFIDENCE, RESAMPLES, SEED), True, _call_report),
    Endpoint("/api/baseline", "The baseline of a measure (Store.baseline): the band of the Overview chart.",
             (MEASURE, BASELINE), True, _call_baseline),
    Endpoint("/api/alerts", "Alerts recorded by `ranklens monitor check` (Store.alerts).",
             (START, END, Param("measure", "measure", None, "Keep the alerts of this measure only (`metric`: its "
                                                            "old name).", aliases=("metric",))), False,
             _call_alerts),
    Endpoint("/api/baselines", "The baseline of each series, by the monitors' rule (Store.baselines): the "
                               "Overview's baseline lines.",
             (MEASURE, START, END, BASELINE, BY), True, _call_baselines),
)
