"""Several runs evaluated on the same judgments into one table of per-query values (the input of ``compare``,
against a baseline or over all pairs)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._input.forms import is_record, unwrap
from ..errors import InvalidParameterError

__all__ = ["RunValues", "baseline_index", "evaluate_runs", "run_names"]


@dataclass
class RunValues:
    """``values[m, q, r]``: measure ``keys[m]`` of run ``r`` on query ``queries[q]`` (the union of the queries of
    every run, as strings), NaN where the run does not count the query; ``notes``: what each run's evaluation
    left out."""

    keys: list[str]
    convention: str
    queries: list[str]
    values: np.ndarray
    notes: list[str]


def evaluate_runs(judgments: Any, names: list[str], items: list[Any], measures: list[Any], convention: Any,
                  options: dict[str, Any], group_by: Any = None) -> dict[Any, RunValues]:
    """Evaluate every run with :func:`ranklens.evaluate` under one convention (refusing summed counts): one
    table of values, under the key None; with ``group_by``, one table per group of queries (every run's result
    of that group), and what the grouping left out in each table's notes."""
    from .._base.progress import Progress
    from .._core.evaluate import evaluate
    from .._core.slices import sort_groups

    judgments = unwrap(judgments, "judgments")  # read once for every run: an iterator of records is consumed once
    results = []
    with Progress(len(items), "compare: evaluating runs") as progress:
        for run in items:
            results.append(evaluate(judgments, run, measures, convention=convention, group_by=group_by, **options))
            progress.advance()
    if group_by is None:
        return {None: _values_table(names, results)}
    notes = [f"{name}: {n}" for name, res in zip(names, results) for n in res.notes]
    out = {}
    for g in sort_groups(set().union(*[set(res) for res in results])):
        lacking = [name for name, res in zip(names, results) if g not in res]
        if lacking:
            raise InvalidParameterError(f"`group_by`: group {g!r} has no query in {', '.join(lacking)}; compare "
                                        "needs every run on every group.")
        table = _values_table(names, [res[g] for res in results])
        table.notes = notes + table.notes
        out[g] = table
    return out


def _values_table(names: list[str], results: list[Any]) -> RunValues:
    """The per-query values of every run's result in one table (the union of their queries)."""
    first = results[0]
    for m in first.measures:
        if m.summed:
            raise InvalidParameterError(f"{m.key!r} is a count summed over queries; compare takes measures averaged "
                                        "over queries.")
    keys = first.keys
    # one table of values: the union of the queries of every run (string ids), NaN where not counted
    qkeys = [np.asarray([str(q) for q in r.queries], dtype=object) for r in results]
    universe = sorted(set().union(*[set(k.tolist()) for k in qkeys]))
    pos = {q: i for i, q in enumerate(universe)}
    V = np.full((len(keys), len(universe), len(results)), np.nan)  # a string may name several measures ("P.5,10")
    for ri, (res, ks) in enumerate(zip(results, qkeys)):
        rows = np.fromiter((pos[q] for q in ks.tolist()), dtype=np.int64, count=len(ks))
        V[:, rows, ri] = res.values.T
    notes: list[str] = []
    for name, res in zip(names, results):
        for e in res.excluded:
            text = f"{name}: {e}"
            if text not in notes:
                notes.append(text)
    return RunValues(list(keys), first.convention.name, universe, V, notes)


def run_names(runs: Any, *, shorten: bool = True) -> tuple[list[str], list[Any]]:
    """The names of runs and the runs: a mapping's keys, else the file names of paths (the paths as given
    when two share a file name) and ``run1``, ``run2``... for the others. With ``shorten``, the prefix and
    suffix every name shares are dropped (``run.bm25.dl19.txt``, ``run.splade.dl19.txt`` -> ``bm25``,
    ``splade``).

    >>> run_names(["runs/run.bm25.txt", "runs/run.splade.txt"])[0]
    ['bm25', 'splade']
    >>> run_names(["runs/run.bm25.txt", {"q": {"a": 1.0}}])[0]
    ['run.bm25.txt', 'run2']
    >>> run_names(["a/run.txt", "b/run.txt"], shorten=False)[0]
    ['a/run.txt', 'b/run.txt']
    """
    if isinstance(runs, Mapping):
        if not runs:
            raise InvalidParameterError("`runs` is empty; compare needs at least two runs.")
        return [str(k) for k in runs.keys()], list(runs.values())
    if isinstance(runs, (str, os.PathLike)) or not isinstance(runs, Iterable):
        raise InvalidParameterError("`runs` must be a list of runs (paths, dicts, tables) or a mapping {name: run}.")
    items = list(runs)
    if any(map(is_record, items)):  # named tuples (ScoredDoc...): the records of one run
        raise InvalidParameterError(
            "`runs` is a list of records, which is one run; compare needs several: pass [run1, run2] or {name: run}.")
    names = []
    for i, r in enumerate(items):
        if isinstance(r, (str, os.PathLike)):
            names.append(os.path.basename(os.fspath(r)))
        else:
            names.append(f"run{i + 1}")
    if len(set(names)) < len(names):  # same file name in two folders: use the paths as given
        names = [os.fspath(r) if isinstance(r, (str, os.PathLike)) else f"run{i + 1}" for i, r in enumerate(items)]
    if len(set(names)) < len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise InvalidParameterError(f"run {twice!r} is given twice; give each run once, or name them with a mapping "
                                    "{name: run}.")
    return (_shorten(names) if shorten else names), items


def _shorten(names: list[str]) -> list[str]:
    """Drop the prefix and suffix every name shares (``run.X.dl19.txt.gz`` -> ``X``), cut at . _ - or /."""
    if len(names) < 2:
        return names
    pre = os.path.commonprefix(names)
    suf = os.path.commonprefix([n[::-1] for n in names])[::-1]
    cut_pre = max((pre.rfind(c) + 1 for c in "._-/"), default=0)
    cut_suf = min((i for i in (suf.find(c) for c in "._-") if i >= 0), default=len(suf))
    suf_len = len(suf) - cut_suf
    short = [n[cut_pre: len(n) - suf_len if suf_len else None] for n in names]
    if any(not s for s in short) or len(set(short)) < len(short):
        return names
    return short


def baseline_index(baseline: Any, names: list[str], items: list[Any]) -> int:
    """The index of ``baseline`` (a run's name, path, index or the run itself) among the runs; 0 when None."""
    if baseline is None:
        return 0
    if isinstance(baseline, (int, np.integer)) and not isinstance(baseline, bool):
        if 0 <= baseline < len(names):
            return int(baseline)
        raise InvalidParameterError(f"`baseline` index {baseline} is out of range for {len(names)} runs.")
    if isinstance(baseline, (str, os.PathLike)):
        b = os.fspath(baseline)
        for i, (n, it) in enumerate(zip(names, items)):
            same_path = isinstance(it, (str, os.PathLike)) and os.path.normpath(os.fspath(it)) == os.path.normpath(b)
            if b == n or same_path:
                return i
        base = os.path.basename(b)
        hits = [i for i, it in enumerate(items)
                if isinstance(it, (str, os.PathLike)) and os.path.basename(os.fspath(it)) == base]
        if len(hits) == 1:
            return hits[0]
        raise InvalidParameterError(f"`baseline` {b!r} is not one of the runs ({', '.join(names)}).")
    for i, it in enumerate(items):
        if it is baseline:
            return i
    raise InvalidParameterError("`baseline` must be a run's name, path or index.")
