"""Reading an interleaving click log: one row per shown item, in any table form ranklens accepts.

Forms: those of :class:`ranklens._input.logs.LogTable` (a pandas, polars or pyarrow table, a dict of columns, a
file), which reads every column by the same rules whatever the form and names the first bad row with its column
(rows numbered from 0). The rules of an interleaving log:

* impression ids and team labels: no missing value; a team label outside the given ``teams``;
* clicks: 0/1 or booleans, nothing missing;
* positions (1-based integers): nothing missing, and no impression with two rows at one position;
* items (when read): no impression showing one item twice;
* balanced interleaving's ranks (1-based integers; missing or NaN: the item is not in that ranker's
  list): no row absent from every list;
* probabilistic interleaving's probabilities: numbers in [0, 1], nothing missing, and not 0 for every
  ranker on one row.

Impression ids are numbered once (only the first id of each run hashed when rows come grouped);
nothing here loops over impressions in Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._input.logs import LogTable, shown
from ..errors import InputError, InvalidParameterError

__all__ = ["Log", "read_log"]


@dataclass(frozen=True)
class Log:
    """The columns of a validated log, impressions numbered 0..n-1 in order of first appearance."""

    impression: np.ndarray  # per row: the impression's number
    impression_ids: np.ndarray  # per number: its id as given (int64 or object)
    click: np.ndarray  # per row: bool
    team: np.ndarray | None  # per row: index into the teams
    position: np.ndarray | None  # per row: int64, 1-based
    ranks: np.ndarray | None  # (teams, rows) float: 1-based rank in each ranker's list, NaN when absent
    probabilities: np.ndarray | None  # (teams, rows) float
    look: np.ndarray | None = None  # per impression: its look, 0, 1, ... in the sorted order of the look column

    @property
    def impressions(self) -> int:
        return int(self.impression_ids.shape[0])


def _duplicate_keys(key: np.ndarray) -> int | None:
    """The first row whose key an earlier row has (None: all distinct): O(n) when the keys come
    increasing (a log in impression, position order), a sort otherwise."""
    if key.shape[0] < 2:
        return None
    if (key[1:] > key[:-1]).all():
        return None
    order = np.argsort(key, kind="stable")
    s = key[order]
    same = np.flatnonzero(s[1:] == s[:-1])
    if same.size == 0:
        return None
    return int(order[same + 1].min())


def read_log(log: Any, *, method: str, teams: tuple[Any, ...], impression_col: str, team_col: str,
             click_col: str, position_col: str | None, item_col: str | None,
             rank_cols: Mapping[Any, str] | None, prob_cols: Mapping[Any, str] | None,
             look_col: str | None = None) -> Log:
    """The columns of ``log`` that ``method``'s credit rule reads, validated (see the module's rules)."""
    t = LogTable(log, "interleaving log")
    imp, imp_ids = t.ids(impression_col, "impression")
    if imp.shape[0] == 0:
        raise InputError(f"{t.where} has no rows.")
    click = _clicks(t, click_col)
    team = t.labels(team_col, teams, "team", " (pass `teams=`, or --teams)") if method == "team_draft" else None
    pos_col = position_col if position_col is not None else ("position" if t.has("position") else None)
    position = None
    if pos_col is not None:
        position = _positions(t, pos_col)
        dup = _duplicate_keys(imp.astype(np.int64) * (int(position.max()) + 1) + position)
        if dup is not None:
            who = shown(imp_ids[imp[dup]])
            raise t.fail(pos_col, dup, f"impression {who} has two rows at position {position[dup]}.")
    elif method == "balanced":
        raise InvalidParameterError(
            f"balanced interleaving's credit needs the shown positions (its lowest click): {t.where} has no "
            f"'position' column; pass `position_col=`.")
    if item_col is not None:
        items, uniq = t.ids(item_col, "item")
        dup = _duplicate_keys(imp.astype(np.int64) * max(len(uniq), 1) + items)
        if dup is not None:
            who, what = shown(imp_ids[imp[dup]]), shown(uniq[items[dup]])
            raise t.fail(item_col, dup, f"impression {who} shows item {what} twice.")
    ranks = probs = None
    if method == "balanced":
        cols = _per_team(rank_cols, teams, "rank")
        ranks = np.vstack([_ranks(t, cols[tm]) for tm in teams])
        absent = np.isnan(ranks).all(axis=0)
        if absent.any():
            row = int(np.flatnonzero(absent)[0])
            raise t.fail(cols[teams[0]], row, f"the item is in no ranker's list (every rank column is missing: "
                                              f"{', '.join(map(repr, cols.values()))}).")
    if method == "probabilistic":
        cols = _per_team(prob_cols, teams, "prob")
        probs = np.vstack([_probabilities(t, cols[tm]) for tm in teams])
        none = (probs == 0).all(axis=0)
        if none.any():
            row = int(np.flatnonzero(none)[0])
            raise t.fail(cols[teams[0]], row, f"no ranker could have drawn this item (every probability column is 0: "
                                              f"{', '.join(map(repr, cols.values()))}).")
    look = _looks(t, look_col, imp, imp_ids) if look_col is not None else None
    return Log(imp, imp_ids, click, team, position, ranks, probs, look)


def _looks(t: LogTable, col: str, imp: np.ndarray, imp_ids: np.ndarray) -> np.ndarray:
    """Each impression's look: the rank of its value in the sorted distinct values of the look column (one
    value per impression)."""
    codes, uniques = t.ids(col, "look")
    order = np.argsort(uniques, kind="stable")
    rank = np.empty(len(uniques), np.int64)
    rank[order] = np.arange(len(uniques))
    per_row = rank[codes]
    n = imp_ids.shape[0]
    lo = np.full(n, np.iinfo(np.int64).max)
    hi = np.full(n, -1)
    np.minimum.at(lo, imp, per_row)
    np.maximum.at(hi, imp, per_row)
    if (lo != hi).any():
        row = int(np.flatnonzero(lo[imp] != hi[imp])[0])
        raise t.fail(col, row, f"impression {shown(imp_ids[imp[row]])} has rows in two looks; a look holds "
                               f"whole impressions.")
    return lo


def _per_team(given: Mapping[Any, str] | None, teams: tuple[Any, ...], prefix: str) -> dict[Any, str]:
    if given is None:
        return {tm: f"{prefix}_{tm}" for tm in teams}
    if not isinstance(given, Mapping) or set(given) != set(teams):
        raise InvalidParameterError(
            f"`{prefix}_cols` must map every team ({', '.join(map(repr, teams))}) to its column; got {given!r}.")
    return dict(given)


def _clicks(t: LogTable, col: str) -> np.ndarray:
    vals = t.numbers(col, "click")
    if vals.dtype == np.bool_:
        return vals
    bad = (vals != 0) & (vals != 1)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise t.fail(col, row, f"a click is 0 or 1 (or a boolean); found {float(vals[row]):g}.")
    return vals == 1


def _positions(t: LogTable, col: str) -> np.ndarray:
    vals = t.numbers(col, "position")
    bad = vals < 1 if vals.dtype.kind in "iub" else (vals < 1) | (vals != np.floor(vals))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise t.fail(col, row, f"a position is an integer from 1 (the top); found {float(vals[row]):g}.")
    return vals.astype(np.int64)


def _ranks(t: LogTable, col: str) -> np.ndarray:
    vals = t.numbers(col, "rank", missing_ok=True)
    bad = ~np.isnan(vals) & ((vals < 1) | (vals != np.floor(vals)))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise t.fail(col, row, f"a rank is an integer from 1 (missing: not in that list); found {vals[row]:g}.")
    return vals.astype(np.float64, copy=False)


def _probabilities(t: LogTable, col: str) -> np.ndarray:
    vals = t.numbers(col, "probability")
    bad = (vals < 0) | (vals > 1)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise t.fail(col, row, f"a probability is a number from 0 to 1; found {vals[row]:g}.")
    return vals.astype(np.float64, copy=False)
