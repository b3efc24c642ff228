"""The Slices page: which slices (one column or two) explain a change, and their measure over time (heatmap)."""

from __future__ import annotations

import json
from typing import Any

from ..endpoint import SERIES, SLICE_PARAMS, WINDOW, Endpoint, Param, label_of, table_rows

__all__ = ["ENDPOINTS", "PAGE", "heatmap"]

#: The page (its HTML shell is the same for every page: its script draws it from the endpoints below).
PAGE = "/slices"


def _slice_args(p: dict[str, Any], where: dict[str, Any]) -> dict[str, Any]:
    return {"measure": p["measure"], "start": p["start"], "end": p["end"], "baseline": p["baseline"],
            "columns": p["columns"] or None, "where": where or None, "by": tuple(p["by"] or SERIES),
            "depth": p["depth"], "min_support": p["min_support"], "correction": p["correction"]}


def _call_slices(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    t = st.slices(**_slice_args(p, where))
    meta = (t.schema.metadata or {}).get(b"ranklens")
    return {"measure": p["measure"], "rows": table_rows(t), "summary": json.loads(meta) if meta else None,
            "label": label_of(st, p["measure"])}



def _cell(r: dict[str, Any], names: list[str]) -> tuple[str, ...]:
    return tuple("(missing)" if r.get(n) is None else str(r[n]) for n in names)


def heatmap(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    """Slice x time: the `limit` slices that explain most of the change, their measure per window, each row
    centred on its own baseline (so a slice that is always weaker is not always red). ``p`` holds the
    parameters of ``/api/heatmap`` (every one of them: defaults included)."""
    args = _slice_args(p, where)
    t = st.slices(**args)
    chosen = [r for r in table_rows(t) if not r["pooled"]][: p["limit"]]
    by = list(args["by"])
    start = p["history_start"] or p["start"]
    window_end = json.loads((t.schema.metadata or {})[b"ranklens"])["window_end"]
    cols: set[str] = set()
    cells: dict[tuple[str, ...], dict[str, tuple[Any, Any]]] = {}
    for d in dict.fromkeys((r["column"], r["column2"]) for r in chosen):
        slice_cols = [c for c in d if c]
        rep = table_rows(st.report((p["measure"],), window=p["window"], by=tuple(by + slice_cols),
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
    return {"measure": p["measure"], "window": p["window"], "rows": rows, "cols": windows, "values": values,
            "counts": counts, "centers": [r["baseline_value"] for r in chosen],
            "slices": [{k: r[k] for k in (*by, "column", "value", "column2", "value2")} for r in chosen],
            "label": label_of(st, p["measure"])}


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("/api/slices", "Slices (one column or two) of a window against each series' baseline, most harmful "
                            "first (Store.slices).", SLICE_PARAMS, True, _call_slices),
    Endpoint("/api/heatmap", "Slice x time: the measure per window for the slices that explain most of the "
                             "change, each centred on its own baseline.",
             (*SLICE_PARAMS, WINDOW,
              Param("history_start", "date", None, "First window of the heatmap (default: start)."),
              Param("limit", "integer", 12, "Slices shown.", minimum=1, maximum=50)), True, heatmap),
)
