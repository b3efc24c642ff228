"""Slicing an evaluation: ``evaluate(..., group_by=...)`` -> one result per group, each the evaluation of that group's
rows alone, exactly what ``evaluate`` gives on them.

The rule (the Spark engine's too, ``ranklens.spark.evaluate``): a group column of the run's table puts each ranked
row in a group, so a query whose rows fall in two groups is evaluated in each group on its rows there. The
judgments a group's query sees: the judgment rows of that group when the judgments' table carries the group
columns (one table holding both is cut the same way), else every judgment of the query (judgments are per query).
The groups are those of the ranked rows; judgment rows of a group no ranked row has are left out, counted. Without
the column in the run, a column of the judgments' table or a mapping ``{query: group}`` gives each query one group.
A row without a group value is refused, naming the row."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from .._input.groups import RowGroups, group_columns, query_groups_of, row_groups
from .._input.ids import IdColumn
from .._input.options import Columns
from .._input.records import Judgments, Rankings
from .._input.tables import table_records
from ..errors import InvalidParameterError
from .result import Result

__all__ = ["GroupedResult", "sort_groups", "split_by_group"]


class GroupedResult(Mapping[Any, Result]):
    """One :class:`~ranklens.Result` per group (``res[group]``), groups in sorted order. Grouped by
    several columns, a group is the tuple of their values (``res["mobile", "en"]``), one per combination present.

    Attributes
    ----------
    by : str
        Where the groups came from (a column of a table, or the mapping).
    columns : list of str
        The group columns (empty for a mapping).
    notes : list of str
        What the grouping left out (queries without a group, rows without a label or score), counted.

    Examples
    --------
    >>> import ranklens
    >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    >>> run = {"q1": {"a": 1.0, "x": 2.0}, "q2": {"b": 1.0}, "q3": {"c": 0.5, "y": 0.9}}
    >>> res = ranklens.evaluate(qrels, run, ["mrr"], group_by={"q1": "mobile", "q2": "desktop", "q3": "mobile"})
    >>> list(res), res["mobile"]["mrr"], res["desktop"]["mrr"]
    (['desktop', 'mobile'], 0.5, 1.0)
    """

    def __init__(self, results: dict[Any, Result], by: str, notes: list[str], columns: list[str] | None = None):
        self._results = results
        self.by = by
        self.notes = notes
        self.columns = list(columns or [])

    def __getitem__(self, group: Any) -> Result:
        try:
            return self._results[group]
        except KeyError:
            raise KeyError(f"no group {group!r}; groups: {', '.join(map(str, self._results))}") from None

    def __iter__(self) -> Iterator[Any]:
        return iter(self._results)

    def __len__(self) -> int:
        return len(self._results)

    def to_pandas(self) -> Any:
        """Long form: one row per group and measure (``group``, or one column per group column when grouped by
        several, then ``measure``, ``value``, ``queries``)."""
        from .._base.deps import require

        many = len(self.columns) > 1
        rows = [((*g,) if many else (g,)) + (k, r.aggregate[k], r.counted[k])
                for g, r in self._results.items() for k in r.keys]
        head = self.columns if many else ["group"]
        return require("pandas").DataFrame(rows, columns=[*head, "measure", "value", "queries"])

    def __repr__(self) -> str:
        return f"<GroupedResult: {len(self)} groups by {self.by} ({', '.join(map(str, self._results))})>"


def sort_groups(groups: Any) -> list[Any]:
    """Groups in order: numbers by value first, then the others by their text.

    >>> sort_groups({"b", 10, "a", 2})
    [2, 10, 'a', 'b']
    >>> sort_groups({("tv", 10), ("mobile", 9), ("tv", 2)})
    [('mobile', 9), ('tv', 2), ('tv', 10)]
    """
    def key(g: Any) -> tuple[int, Any, str]:
        number = isinstance(g, (int, float, np.integer, np.floating)) and not isinstance(g, bool)
        return (0, g, "") if number else (1, 0, str(g))

    # a combination of several columns (a tuple): by its first value, then its second...
    return sorted(groups, key=lambda g: tuple(map(key, g)) if isinstance(g, tuple) else (key(g),))


def _strings(qid: Any) -> np.ndarray:
    """Query ids as numpy strings (integers printed in decimal), for matching with the groups' queries."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return np.asarray(pc.cast(IdColumn.of(qid).to_arrow(), pa.large_string()).to_numpy(zero_copy_only=False),
                      dtype=object)


def _cut(j: Judgments, r: Rankings, jm: np.ndarray, rm: np.ndarray, empty: Any) -> tuple[Judgments, Rankings]:
    """The rows ``jm`` of the judgments and ``rm`` of the run."""
    jcol, rcol = IdColumn.of(j.qid), IdColumn.of(r.qid)
    jg = replace(j, qid=jcol.filter(jm), item=IdColumn.of(j.item).filter(jm), label=j.label[jm], left_out=())
    rg = replace(r, qid=rcol.filter(rm), item=IdColumn.of(r.item).filter(rm),
                 score=None if r.score is None else r.score[rm], rank=None if r.rank is None else r.rank[rm],
                 label=None if r.label is None else r.label[rm], empty_qids=empty, left_out=())
    return jg, rg


def _left_out_notes(j: Judgments, r: Rankings) -> list[str]:
    return [f"{e.count} rows of {e.side} left out before grouping ({', '.join(e.examples[:3])})"
            for side in (j, r) for e in side.left_out]


def _aligned(groups: RowGroups, side: Judgments | Rankings, what: str, columns: Columns) -> np.ndarray:
    """The group code of each row of ``side``, read from ``groups.table``: the table's rows, less those the
    input left out (``missing="exclude"``: found by reading the table again with the same rule)."""
    if len(side) == groups.table.num_rows:
        return groups.codes
    rec = table_records(groups.table, need=what, missing="exclude", **columns.kwargs())
    kept = rec.judged if what == "judgments" else rec.ranked
    assert kept is not None and int(kept.sum()) == len(side)
    return groups.codes[kept]


def _where(obj: Any, side: str) -> str:
    return os.fspath(obj) if isinstance(obj, (str, os.PathLike)) else side


def split_by_group(group_by: Any, j: Judgments, r: Rankings, judgments: Any, run: Any,
                   columns: Columns) -> tuple[dict[Any, tuple[Judgments, Rankings]], str, list[str]]:
    """The judgments and the run cut to each group (the module's rule): ``({group: (j, r)}, by, notes)``; a group
    of several columns is the tuple of their values."""
    if r.qid is None:
        raise InvalidParameterError("`group_by`: the run is a bare vector of scores; give the judgments and "
                                    "the scores as one table, or the run with query ids.")
    cols = group_columns(group_by)
    if cols is None:
        return _by_query(group_by, j, r, judgments, run, columns.query)
    if run is None:  # one table holding both sides
        rg = row_groups(judgments, cols, columns.query, _where(judgments, "the judgments"))
        jg = rg
    else:
        rg = row_groups(run, cols, columns.query, _where(run, "the run"))
        if rg is None:  # the run has no such column: one group per query, from the judgments' table
            return _by_query(group_by, j, r, judgments, run, columns.query)
        jg = row_groups(judgments, cols, columns.query, _where(judgments, "the judgments"))
    if rg is None:
        query_groups_of(group_by, judgments, None, columns.query)  # raises: not a column of the table
        raise AssertionError("unreachable")
    r_codes = _aligned(rg, r, "rankings", columns)
    notes = _left_out_notes(j, r)
    present = np.bincount(r_codes, minlength=len(rg.keys)) > 0
    order = sort_groups([k for k, p in zip(rg.keys, present) if p])
    index = {k: i for i, k in enumerate(rg.keys)}
    j_codes, j_index = None, {}
    if jg is not None:
        j_codes = _aligned(jg, j, "judgments", columns)
        j_index = {k: i for i, k in enumerate(jg.keys)}
        alone = sorted(set(jg.keys) - set(order), key=str)
        if alone:
            n = int(np.isin(j_codes, [j_index[k] for k in alone]).sum())
            notes.append(f"{n} judgment rows are in groups no ranked row is in ({', '.join(map(str, alone[:5]))}"
                         f"{', ...' if len(alone) > 5 else ''}): left out of every group")
    else:
        jq, rq = _strings(j.qid), _strings(r.qid)
    out: dict[Any, tuple[Judgments, Rankings]] = {}
    for g in order:  # a loop over groups
        rm = r_codes == index[g]
        if j_codes is not None:
            jm = j_codes == j_index[g] if g in j_index else np.zeros(len(j), np.bool_)
        else:
            jm = np.isin(jq, np.unique(rq[rm]))  # every judgment of the queries the group ranks
        out[g] = _cut(j, r, jm, rm, None)
    return out, rg.by, notes


def _by_query(group_by: Any, j: Judgments, r: Rankings, judgments: Any, run: Any,
              query_col: str | None) -> tuple[dict[Any, tuple[Judgments, Rankings]], str, list[str]]:
    """One group per query (a mapping, or a column of the judgments' table when the run has none): the judgments
    and the run cut to each group's queries."""
    queries, groups, by = query_groups_of(group_by, judgments, run, query_col)
    jq, rq = _strings(j.qid), _strings(r.qid)
    known = set(queries.tolist())
    present = set(jq.tolist()) | set(rq.tolist())
    lost = sorted(present - known)
    notes = []
    if lost:
        notes.append(f"{len(lost)} queries have no group in {by}: left out of every group "
                     f"({', '.join(lost[:5])}{', ...' if len(lost) > 5 else ''})")
    notes += _left_out_notes(j, r)
    order = sort_groups(set(groups.tolist()))
    out: dict[Any, tuple[Judgments, Rankings]] = {}
    for g in order:  # a loop over groups
        members = queries[np.fromiter((x == g for x in groups), bool, groups.shape[0])]  # tuples compared whole
        jm, rm = np.isin(jq, members), np.isin(rq, members)
        if not jm.any() and not rm.any():
            notes.append(f"group {g!r}: none of its {len(members)} queries is in the inputs")
            continue
        empty = None
        if r.empty_qids is not None:
            ids = r.empty_qids if not isinstance(r.empty_qids, (list, tuple)) else np.asarray(r.empty_qids)
            empty = IdColumn.of(ids).filter(np.isin(_strings(ids), members))
        out[g] = _cut(j, r, jm, rm, empty)
    if not out:
        raise InvalidParameterError(f"`group_by`: no query of the inputs has a group in {by}.")
    return out, by, notes
