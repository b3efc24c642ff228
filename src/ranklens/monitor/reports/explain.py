"""One served list of the store explained position by position: the core's :func:`ranklens.explain` table of
the whole list (the rows below the cutoff marked), with what the store knows of each item: its served rank,
its real score, its labels and its explicit relevance."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..._base.deps import require
from ..config import MonitorConfig
from ..storage.values import events, gains

__all__ = ["GroupExplanation", "explain_group"]


@dataclass
class GroupExplanation:
    """The explanation of one served list: ``rows`` follow the served order over the whole list (``beyond_cutoff``
    marks the positions after ``k``, which do not count in the value); ``ideal_rows`` the ideal order; ``dcg``,
    ``idcg`` and ``value`` are at the cutoff."""

    group_id: str
    model: str
    model_version: str
    environment: str
    order_by: str
    measure: str
    convention: str
    k: int | None
    rows: list[dict[str, Any]]
    ideal_rows: list[dict[str, Any]]
    dcg: float
    idcg: float
    value: float
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (the dashboard's ``/api/explain``)."""
        d = {"query": self.group_id, "model": self.model, "model_version": self.model_version,
             "environment": self.environment, "order_by": self.order_by, "measure": self.measure,
             "convention": self.convention, "k": self.k, "n_items": len(self.rows), "rows": self.rows,
             "ideal_rows": self.ideal_rows, "dcg": self.dcg, "idcg": self.idcg, "value": self.value}
        if self.note:
            d["note"] = self.note
        return d

    def table(self) -> str:
        """The text table ``ranklens monitor explain`` prints."""
        cut = f"@{self.k}" if self.k else ""
        head = ["pos", "rank", "score", "item", "labels", "gain", "discount", "contrib", "DCG", "| ideal item",
                "ideal gain", "IDCG"]
        body: list[list[str]] = []
        n = max(len(self.rows), len(self.ideal_rows))
        for i in range(n):
            r = self.rows[i] if i < len(self.rows) else None
            g = self.ideal_rows[i] if i < len(self.ideal_rows) else None
            body.append([
                str(i + 1),
                "" if r is None or r["rank"] is None else str(r["rank"]),
                "" if r is None or r["score"] is None else f"{r['score']:.4g}",
                "" if r is None else str(r["item"]),
                "" if r is None else ",".join(r["labels"]) or "-",
                "" if r is None else _num(r["gain_used"]),
                "" if r is None else f"{r['discount']:.5f}",
                "" if r is None else f"{r['contribution']:.5f}",
                "" if r is None else f"{r['running_dcg']:.5f}",
                "" if g is None else "| " + str(g["item"]),
                "" if g is None else _num(g["gain"]),
                "" if g is None else f"{g['running_idcg']:.5f}",
            ])
        widths = [max([len(h)] + [len(row[c]) for row in body]) for c, h in enumerate(head)]
        left = {3, 4, 9}

        def line(cells: list[str]) -> str:
            return "  ".join(c.ljust(w) if j in left else c.rjust(w) for j, (c, w) in enumerate(zip(cells, widths)))

        out = [f"group {self.group_id} ({self.model} {self.model_version} {self.environment}, served by "
               f"{self.order_by}) - {self.measure} under convention {self.convention!r}", line(head).rstrip()]
        for i, row in enumerate(body):
            if self.k is not None and i == self.k and i < len(self.rows):
                out.append(f"--- cutoff k={self.k}: the positions below do not count in {self.measure} ---")
            out.append(line(row).rstrip())
        out.append(f"DCG{cut} = {self.dcg:.6f}   IDCG{cut} = {self.idcg:.6f}   {self.measure} = {_num(self.value, 6)}")
        if self.note:
            out.append(self.note)
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table()


def _num(x: Any, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.{digits}g}" if isinstance(x, float) and x != int(x) else str(int(x)) if isinstance(x, float) \
        else str(x)


def explain_group(con: Any, config: MonitorConfig, gid: int, meta: tuple[Any, ...], k: int | None,
                  measure: str) -> GroupExplanation:
    """The explanation of the stored group ``gid`` (``meta``: group_id, model, model_version, environment,
    order_by) over its whole list, with the values at cutoff ``k``."""
    pa = require("pyarrow")
    from ..._core.explain import explain as _explain

    group_id, model, version, env, order_by = meta
    # served order (then item id): the ideal list gives its tied items in that order, whatever order the store read
    ev = events(con, config.attribution, "SELECT ?", [gid]).sort_by([("key", "descending"), ("item_id", "ascending")])
    gain = gains(ev, config.attribution)
    key = ev.column("key").to_numpy(zero_copy_only=False).astype(np.float64)
    tbl = pa.table({"query": [str(group_id)] * ev.num_rows, "item": ev.column("item_id"), "score": key,
                    "label": gain})
    conv = config.convention_obj()
    opts = {"measure": measure, "convention": conv, "query_col": "query", "item_col": "item", "score_col": "score",
            "label_col": "label"}
    at_k = _explain(tbl, None, str(group_id), k=k, **opts)
    whole = _explain(tbl, None, str(group_id), k=None, **opts)
    labels = dict(con.execute("SELECT k.item_id, list(DISTINCT label ORDER BY label) FROM item_labels l "
                              "JOIN item_keys k ON k.iid = l.iid WHERE l.gid = ? AND l.label IS NOT NULL "
                              "GROUP BY k.item_id", [gid]).fetchall())
    items = ev.column("item_id").to_pylist()
    ranks = ev.column("rank").to_pylist()
    scores = ev.column("score").to_pylist()
    rel = ev.column("relevance").to_pylist()
    where = {it: i for i, it in enumerate(items)}
    cut = at_k.k if at_k.k is not None else len(whole.rows)
    rows = []
    for r in whole.rows:
        i = where[str(r["item"])]
        rows.append({"position": r["position"], "item": r["item"], "rank": ranks[i], "score": scores[i],
                     "labels": list(labels.get(items[i], [])), "relevance": rel[i], "gain": r["gain"],
                     "gain_used": r["gain_used"], "discount": r["discount"], "contribution": r["contribution"],
                     "running_dcg": r["running_dcg"], "beyond_cutoff": r["position"] > cut})
    ideal = [{**g, "beyond_cutoff": g["position"] > cut} for g in whole.ideal_rows]
    return GroupExplanation(str(group_id), model, version, env, order_by, at_k.measure, conv.name, at_k.k, rows,
                            ideal, at_k.dcg, at_k.idcg, at_k.value, at_k.note)
