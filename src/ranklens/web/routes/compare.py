"""The Compare page: two model versions or two windows side by side."""

from __future__ import annotations

from typing import Any

from ..endpoint import CONFIDENCE, MEASURE, RESAMPLES, SEED, Endpoint, Param, label_of

__all__ = ["ENDPOINTS", "PAGE"]

#: The page (its HTML shell is the same for every page: its script draws it from the endpoints below).
PAGE = "/compare"


def _call_compare(st: Any, p: dict[str, Any], where: dict[str, Any]) -> Any:
    sides = {}
    for side in ("a", "b"):
        w = {k[2:]: v for k, v in where.items() if k.startswith(side + "_")}
        sides[side] = {"where": w or None, "start": p[f"{side}_start"], "end": p[f"{side}_end"]}
    out = st.compare(p["measure"], a=sides["a"], b=sides["b"], confidence=p["confidence"],
                     n_resamples=p["n_resamples"], seed=p["seed"])
    return {**out, "label": label_of(st, p["measure"])}


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("/api/compare", "Two model versions or two windows side by side: means, intervals, difference, "
                             "p-value (Store.compare).",
             (MEASURE, Param("a_start", "date", None, "Start of side A."),
              Param("a_end", "date", None, "End of side A."),
              Param("b_start", "date", None, "Start of side B."), Param("b_end", "date", None, "End of side B."),
              CONFIDENCE, RESAMPLES, SEED), False, _call_compare,
             description="Filters of each side are given as a_<column> and b_<column> (e.g. a_model_version=v1, "
                         "b_model_version=v2).", prefixed_filters=("a_", "b_")),
)
