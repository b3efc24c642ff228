"""The dashboard's Signals page: label-free signals per window and series (``/api/signals``).

The numbers come from :meth:`ranklens.monitor.Store.signals` (SQL and arithmetic stay in ``monitor/``);
this module only shapes the answer for the page's chart and table.
"""

from __future__ import annotations

from typing import Any

from ..._output.render import plain
from ..endpoint import BASELINE, BY, END, START, WINDOW, Endpoint, Param

__all__ = ["DEFINITIONS", "ENDPOINTS", "PAGE", "call_signals"]

#: The page (its HTML shell is the same for every page: its script draws it from the endpoints below).
PAGE = "/signals"

#: One sentence per signal family, shown under the page's chart (docs/monitoring.md has the details).
DEFINITIONS: dict[str, str] = {
    "psi": "population stability index of the window against the baseline: sum (w - r) ln(w / r) over bins "
           "(score: the baseline's deciles; position: 1..20 and deeper; popularity@k: deciles of the baseline "
           "popularity of the items served at positions 1..k, the number of baseline lists serving them); empty "
           "shares count 1e-4. Above 0.1 noticeable, above 0.25 major.",
    "ks": "two-sample Kolmogorov-Smirnov statistic D of the scores (or a numeric feature's values) against the "
          "baseline's, with its asymptotic p-value.",
    "js": "Jensen-Shannon distance (natural log) of a feature's histogram in the window against the baseline's "
          "(numeric: the baseline's deciles; categorical: one bin per value): 0 alike, 0.83 disjoint.",
    "coverage": "distinct items served (positions 1..k) that the catalogue holds, over the catalogue (the items the "
                "baseline served, or the configured size).",
    "gini": "Gini coefficient of item exposure (times served at positions 1..k) over the items served: 0 even, "
            "1 all on one item.",
    "novelty": "mean over lists of the mean -log2 of the share of baseline lists serving each item (items the "
               "baseline never served are left out; the baseline's own value counts its other lists).",
    "ild": "intra-list diversity: mean over lists of the share of item pairs whose attribute differs.",
}


def call_signals(st: Any, p: dict[str, Any], where: dict[str, Any]) -> dict[str, Any]:
    """The answer of ``/api/signals``: the rows of :meth:`Store.signals` and what the page needs to draw them."""
    by = tuple(p["by"] or ("model", "model_version", "environment"))
    table = st.signals(p["metric"] or None, window=p["window"], by=by, where=where or None, start=p["start"],
                       end=p["end"], baseline=p["baseline"])
    meta = table.schema.metadata or {}
    rows = [{k: plain(v) for k, v in r.items()} for r in table.to_pylist()]
    names = list(dict.fromkeys(r["signal"] for r in rows))
    families = {n.split("(")[0].split("@")[0] for n in names}
    return {"window": p["window"], "by": list(by), "baseline": meta.get(b"baseline", b"").decode(),
            "signals": names, "rows": rows, "definitions": {f: d for f, d in DEFINITIONS.items() if f in families}}


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("/api/signals", "Label-free signals per window and series against the baseline (Store.signals): "
                             "score drift, positions, coverage, Gini, novelty, ILD. The Signals page.",
             (Param("metric", "list", None, "Signals, comma-separated: psi(score), ks(score), psi(position), "
                                            "psi(popularity@K), coverage[@K], gini[@K], novelty[@K], ild[@K] "
                                            "(default: all)."),
              WINDOW, START, END, BASELINE, BY), True, call_signals),
)
