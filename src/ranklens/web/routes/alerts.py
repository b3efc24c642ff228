"""The dashboard's Alerts page: every alert with its state (open, resolved), a page at a time (``/api/alert-list``).

The alerts and their states come from :meth:`ranklens.monitor.Store.alert_list` (SQL stays in ``monitor/``);
this module pages them and shapes each row for the table: the series, the windows that opened, last fired
and resolved the alert, the values of its last firing window and its root cause (the slice contributing
most to the drop, with what the page needs to link to it).
"""

from __future__ import annotations

import json
from typing import Any

from ..._output.render import plain
from ..endpoint import END, START, Endpoint, Param

__all__ = ["ENDPOINTS", "PAGE", "call_alert_list"]

#: The page (its HTML shell is the same for every page: its script draws it from the endpoints below).
PAGE = "/alerts"


def _row(r: dict[str, Any]) -> dict[str, Any]:
    out = {k: plain(v) for k, v in r.items() if k not in ("series", "top_slices", "notified")}
    out["series"] = json.loads(r["series"]) if r.get("series") else {}
    top = [{k: plain(v) for k, v in t.items() if v is not None} for t in r.get("top_slices") or []]
    out["top_slices"] = top
    out["top_slice"] = top[0] if top else None
    return out


def call_alert_list(st: Any, p: dict[str, Any], where: dict[str, Any]) -> dict[str, Any]:
    """The answer of ``/api/alert-list``: one page of alerts (newest first), their total and the count per state."""
    every = st.alert_list(start=p["start"], end=p["end"])
    states = every.column("state").to_pylist()
    counts = {s: states.count(s) for s in ("open", "resolved")}
    chosen = every if p["state"] == "all" else every.filter(every.column("state").to_numpy(zero_copy_only=False)
                                                            == p["state"])
    total = chosen.num_rows
    page = chosen.slice(p["offset"], p["limit"]).to_pylist()
    return {"rows": [_row(r) for r in page], "total": total, "offset": p["offset"], "limit": p["limit"],
            "state": p["state"], "counts": counts}


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("/api/alert-list", "Alerts, one row each, newest first: state (open, resolved), the windows that opened, "
                                "last fired and resolved them, values and root cause (Store.alert_list); paged.",
             (START, END, Param("state", "enum", "all", "Open, resolved or all alerts.",
                                  choices=("all", "open", "resolved")),
              Param("limit", "integer", 25, "Alerts per page.", minimum=1, maximum=200),
              Param("offset", "integer", 0, "Alerts skipped (the page's start).", minimum=0, maximum=10**9)), False,
             call_alert_list),
)
