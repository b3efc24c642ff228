"""Shared helpers for the monitoring tests: hand-written NDCG from the definition, event tables."""

from __future__ import annotations

import math


def dcg(gains, k=None):
    """DCG from the definition: sum of gain / log2(position + 1) over the first k positions."""
    g = list(gains)[: (k if k is not None else len(gains))]
    return sum(x / math.log2(i + 2) for i, x in enumerate(g))


def ndcg(gains_in_served_order, k=None):
    """NDCG@k = DCG@k / IDCG@k with the ideal order of the same items; None when IDCG is 0."""
    ideal = sorted(gains_in_served_order, reverse=True)
    i = dcg(ideal, k)
    return None if i == 0 else dcg(gains_in_served_order, k) / i


def events(groups, *, day="2026-10-01", model="m", version="v1", env="production", extra=None):
    """Long event rows: groups = {group_id: [labels of the items in served order]}; ranks 1..n."""
    rows = []
    for h, (gid, items) in enumerate(groups.items()):
        for r, labels in enumerate(items, start=1):
            row = {"timestamp": f"{day}T{10 + h % 10:02d}:00:00", "model": model, "model_version": version,
                   "environment": env, "group_id": gid, "item_id": f"{gid}-{r}", "rank": r, "labels": labels}
            if extra:
                row.update(extra(gid))
            rows.append(row)
    return rows
