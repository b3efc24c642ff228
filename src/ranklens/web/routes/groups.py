"""The Groups page: served lists ordered by their value, and one list explained position by position."""

from __future__ import annotations

from typing import Any

from ..endpoint import END, MEASURE, START, Endpoint, Param, label_of, table_rows

__all__ = ["ENDPOINTS", "PAGE"]

#: The page (its HTML shell is the same for every page: its script draws it from the endpoints below).
PAGE = "/groups"


def _call_groups(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    t = st.groups(p["measure"], start=p["start"], end=p["end"], where=where or None, order=p["order"],
                  limit=p["limit"])
    return {"measure": p["measure"], "rows": table_rows(t), "label": label_of(st, p["measure"])}


def _call_explain(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    e = st.explain(p["group_id"], model=p["model"], model_version=p["model_version"],
                   environment=p["environment"], k=p["k"], measure=p["measure"])
    return e.to_dict() if hasattr(e, "to_dict") else e


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("/api/groups", "Prediction groups ordered by their value (Store.groups).",
             (MEASURE, START, END, Param("order", "enum", "worst", "Worst or best first.", choices=("worst", "best")),
              Param("limit", "integer", 20, "Groups returned.", minimum=1, maximum=1000)), True, _call_groups),
    Endpoint("/api/explain", "One served list, position by position (Store.explain): gains, discounts, "
                             "contributions, ideal order.",
             (Param("group_id", "string", None, "The prediction group.", required=True),
              Param("model", "string", None, "Model (when the group id is served by several)."),
              Param("model_version", "string", None, "Model version."),
              Param("environment", "string", None, "Environment."),
              Param("k", "integer", 10, "Cutoff.", minimum=1, maximum=1000),
              Param("measure", "enum", "ndcg", "NDCG (DCG over the ideal DCG) or DCG alone, at cutoff k, from the "
                    "list's stored gains.", choices=("ndcg", "dcg"))), False, _call_explain),
)
