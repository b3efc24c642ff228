"""A target ranking (any rankings input of ranklens) laid over a click log: its list per logged query.

The target's rows are matched to the log's queries and items by id (as strings). Within a query, the target
orders by its score (or rank), ties broken by item id (ascending) and counted. Every logged query must be
ranked by the target (an error names one that is not); items the target ranks that the log never showed are
kept (their pair is -1) and counted by the estimators.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from ._log import ClickLog

__all__ = ["Target", "lay_target"]


def _index_in(values: Any, ids: Any) -> np.ndarray:
    """The index of each value among ``ids`` (-1 where absent), by pyarrow's hash lookup (Arrow strings or
    numpy arrays of str)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def text(a: Any) -> Any:
        return a.cast(pa.string()) if isinstance(a, (pa.Array, pa.ChunkedArray)) else pa.array(a, pa.string())

    out = pc.index_in(text(values), value_set=text(ids))
    return np.asarray(out.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)


def _arrow_str(values: Any) -> Any:
    """Ids (any id column ranklens reads) as one Arrow string array (integers written in decimal)."""
    import pyarrow as pa

    from .._input.ids import IdColumn

    col = IdColumn.of(values)
    arrow = col.to_arrow() if col.is_str else col.as_strings()
    if isinstance(arrow, pa.ChunkedArray):
        arrow = arrow.combine_chunks()
    return arrow.cast(pa.string())


@dataclass(frozen=True, eq=False)
class Target:
    """The target's top ``k`` per logged query.

    Attributes
    ----------
    pairs : ndarray of int64, shape (n_queries, k)
        The log's pair at each target position (-1: an item the log never showed for that query, or no item).
    present : ndarray of bool, shape (n_queries, k)
        Whether the target has an item at that position.
    lengths : ndarray of int64
        The target's list length per query (at most ``k``).
    position_of_row : ndarray of int64
        For each log row, its item's 1-based position in the target's top ``k`` of that query (0: not there).
    ties : int
        Queries whose target scores tie within the top ``k`` (broken by item id).
    """

    pairs: np.ndarray
    present: np.ndarray
    lengths: np.ndarray
    position_of_row: np.ndarray
    ties: int
    items: np.ndarray


def lay_target(run: Any, log: ClickLog, k: int, name: str = "target") -> Target:
    """The :class:`Target` of ``run`` over the log's queries (see the module)."""
    from .._input.dispatch import as_rankings

    r = as_rankings(run)
    if not log.has_query:
        raise InputError("the click log has no query column: a target ranking is matched to the log's sessions by "
                         "query (pass `query_col=`).")
    rq, ri = _arrow_str(r.qid), _arrow_str(r.item)  # Arrow strings: Python strings only for the top k below
    key = np.asarray(r.order_key(), dtype=np.float64)
    qids = log.query_ids.astype(str)
    rq_code = _index_in(rq, qids)
    ranked = np.zeros(len(qids), dtype=bool)
    ranked[rq_code[rq_code >= 0]] = True
    if not ranked.all():
        miss = str(qids[np.argmin(ranked)])
        raise InputError(f"{name}: the ranking has no item for {int((~ranked).sum())} logged queries (e.g. "
                         f"{miss!r}); a target ranking must rank every query of the log.")
    keep = np.flatnonzero(rq_code >= 0)
    rq_code, key = rq_code[keep], key[keep]
    import pyarrow as pa
    import pyarrow.compute as pc

    item_rank = np.asarray(pc.rank(ri.take(pa.array(keep)), sort_keys="ascending", tiebreaker="dense"))
    order = np.lexsort((item_rank, -key, rq_code))
    rq_code, key, rows = rq_code[order], key[order], keep[order]
    counts = np.bincount(rq_code, minlength=len(qids))
    starts = np.cumsum(counts) - counts
    pos = np.arange(len(rq_code)) - starts[rq_code]
    top = pos < k
    same = np.r_[False, (rq_code[1:] == rq_code[:-1]) & (key[1:] == key[:-1]) & top[1:]]
    ties = len(np.unique(rq_code[same]))
    rq_code, pos = rq_code[top], pos[top]
    top_items = ri.take(pa.array(rows[top]))
    ri = np.asarray(top_items.to_numpy(zero_copy_only=False), dtype=object)
    # the log's pair of each target (query, item), -1 when never shown: items by id (a hash), pairs by code
    item_code = _index_in(top_items, log.item_ids.astype(str))
    n_items = len(log.item_ids)
    log_keys = log.pair_query * n_items + log.pair_item  # sorted (the pairs are numbered in key order)
    t_keys = rq_code.astype(np.int64) * n_items + item_code
    at = np.minimum(np.searchsorted(log_keys, t_keys), max(len(log_keys) - 1, 0))
    hit = (item_code >= 0) & (log_keys[at] == t_keys)
    t_pair = np.where(hit, at, -1)
    pairs = np.full((len(qids), k), -1, dtype=np.int64)
    present = np.zeros((len(qids), k), dtype=bool)
    items = np.full((len(qids), k), "", dtype=object)
    pairs[rq_code, pos] = t_pair
    present[rq_code, pos] = True
    items[rq_code, pos] = ri
    # the target position of each pair of the log (0: not in the top k)
    pair_pos = np.zeros(log.n_pairs, dtype=np.int64)
    pair_pos[t_pair[hit]] = pos[hit] + 1
    return Target(pairs, present, present.sum(axis=1), pair_pos[log.pair], ties, items)
