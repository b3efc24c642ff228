"""The inputs of the fairness measures: stochastic runs (several sampled rankings per query), group labels of
items, target distributions over groups.

* A **sampled run** (:class:`SampledRun`): rows ``(query, sample, item, rank)``; in a file, expeval's format, a
  TREC run whose second column names the sample (``q1 3 doc7 2 0.9 tag``: doc7 is second in sample 3 of q1).
  A run of one ranking per query is a sampled run of one sample.
* **Group labels**: which group(s) each item belongs to, with a weight (1 unless given): a file of lines
  ``item group [weight]`` (white space, tabs or commas), or a mapping ``{item: group}``, ``{item: [groups]}``,
  ``{item: {group: weight}}``. An item in several groups belongs to each with its weight.
* **Targets**: a distribution over groups, the same for every query (``{group: share}``, or lines
  ``group share``) or per query (``{query: {group: share}}``, or lines ``query group share``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._base.runs import run_positions
from ..errors import FormatError, InputError, InvalidParameterError
from .dispatch import as_rankings, is_pathlike
from .factorize import factorize_parts
from .text import read_trec_columns, text_lines

__all__ = ["GroupLabels", "SampledRun", "as_sampled_run", "read_group_labels", "read_targets"]


@dataclass(frozen=True, eq=False)
class SampledRun:
    """Stochastic rankings: per query, several sampled rankings of items.

    Attributes
    ----------
    qid, item : array-like
        Ids, one per row.
    sample : ndarray of int64
        The sample (ranking) each row belongs to, numbered from 0 within the run.
    rank : ndarray of float64
        The row's place in its sample (1 first; only the order counts).
    source : str or None
        Where the rows came from.
    """

    qid: Any
    item: Any
    sample: np.ndarray
    rank: np.ndarray
    source: str | None = None

    def __len__(self) -> int:
        return int(self.rank.shape[0])

    def __repr__(self) -> str:
        n = int(self.sample.max()) + 1 if len(self) else 0
        return f"SampledRun({len(self)} rows, {n} samples{', from ' + self.source if self.source else ''})"


def as_sampled_run(obj: Any, **columns: Any) -> SampledRun:
    """A :class:`SampledRun` of ``obj``: itself; a file in expeval's format (a TREC run whose second column
    names the sample: the rank column orders each sample, the score is ignored, as expeval does); or any run
    :func:`ranklens.as_rankings` reads, as one sample per query (ordered by descending score, tied items in
    the order given)."""
    if isinstance(obj, SampledRun):
        return obj
    if is_pathlike(obj) and _is_trec(obj, columns.get("format")):
        from .opening import file_bytes

        qid, sample, item, rank = read_trec_columns(file_bytes(obj), str(obj), {0: "str", 1: "str", 2: "str",
                                                                                3: "num"}, 6, "sampled rankings")
        (codes,), _, _ = factorize_parts([sample])
        return SampledRun(qid, item, codes.astype(np.int64), rank, source=str(obj))
    r = as_rankings(obj, **columns)
    if r.qid is None or r.item is None:
        raise InputError(f"{r.source or 'the run'} is a bare vector of scores: give query and item ids.")
    (codes,), _, _ = factorize_parts([r.qid])
    key = r.order_key()
    order = np.lexsort((-key, codes))  # stable: tied items in the order given
    rank = np.empty(len(r), np.float64)
    rank[order] = run_positions(codes[order])[2] + 1
    return SampledRun(r.qid, r.item, np.zeros(len(r), np.int64), rank, source=r.source)


def _is_trec(path: Any, fmt: str | None) -> bool:
    if fmt is not None:
        return str(fmt).lower() == "trec"
    from .files import detect_format

    return bool(detect_format(path) == "trec")


def _lines(path: Any, what: str) -> list[tuple[int, list[str]]]:
    """The data lines of a small text file as fields (white space, tabs or commas), with line numbers."""
    from .opening import file_bytes

    out = []
    for n, line in enumerate(text_lines(bytes(file_bytes(path)), str(path)), start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        out.append((n, text.replace(",", " ").split()))
    if not out:
        raise InputError(f"{path}: no {what} in the file.")
    return out


def _weight(text: str, path: Any, n: int, line: str) -> float:
    try:
        w = float(text)
    except ValueError:
        w = float("nan")
    if not np.isfinite(w) or w < 0:
        raise FormatError(f"expected a finite non-negative number, got {text!r}", path=str(path), line=n, text=line)
    return w


@dataclass(frozen=True, eq=False)
class GroupLabels:
    """Items' group labels: rows ``(item, group, weight)``; ``groups`` the group names in sorted order and
    ``group`` each row's index into them."""

    item: np.ndarray
    group: np.ndarray
    weight: np.ndarray
    groups: tuple[str, ...]
    source: str | None = None


def read_group_labels(obj: Any) -> GroupLabels:
    """Group labels from a file (lines ``item group [weight]``) or a mapping (see the module's docstring)."""
    rows: list[tuple[str, str, float]] = []
    if is_pathlike(obj):
        for n, f in _lines(obj, "group labels"):
            if len(f) not in (2, 3):
                raise FormatError(f"expected 'item group [weight]', got {len(f)} fields", path=str(obj), line=n,
                                  text=" ".join(f))
            rows.append((f[0], f[1], _weight(f[2], obj, n, " ".join(f)) if len(f) == 3 else 1.0))
        source = str(obj)
    elif isinstance(obj, Mapping):
        for item, g in obj.items():
            if isinstance(g, Mapping):
                rows += [(str(item), str(k), float(w)) for k, w in g.items()]
            elif isinstance(g, (list, tuple, set, frozenset)):
                rows += [(str(item), str(k), 1.0) for k in g]
            else:
                rows.append((str(item), str(g), 1.0))
        source = "the group labels mapping"
    else:
        raise InvalidParameterError("`groups` must be a file of 'item group [weight]' lines or a mapping "
                                    f"{{item: group}}; got {type(obj).__name__}.")
    if not rows:
        raise InputError("the group labels are empty.")
    w = np.array([r[2] for r in rows], np.float64)
    if not np.isfinite(w).all() or (w < 0).any():
        raise InvalidParameterError("group weights must be finite and non-negative.")
    names = sorted({r[1] for r in rows})
    index = {g: i for i, g in enumerate(names)}
    items = np.array([r[0] for r in rows], dtype=object)
    group = np.array([index[r[1]] for r in rows], np.int64)
    pair = items.astype(str) + "\0" + group.astype(str)
    if np.unique(pair).shape[0] != pair.shape[0]:
        dup = next(r for i, r in enumerate(rows) if np.count_nonzero(pair == pair[i]) > 1)
        raise InputError(f"{source}: item {dup[0]!r} is labelled with group {dup[1]!r} twice.")
    return GroupLabels(items, group, w, tuple(names), source)


def read_targets(obj: Any) -> dict[str | None, dict[str, float]]:
    """Target distributions: ``{None: {group: share}}`` for one target of every query, else
    ``{query: {group: share}}`` (query ids as text)."""
    out: dict[str | None, dict[str, float]] = {}
    if is_pathlike(obj):
        lines = _lines(obj, "targets")
        width = {len(f) for _, f in lines}
        if width not in ({2}, {3}):
            n, f = next((n, f) for n, f in lines if len(f) not in (2, 3)) if width - {2, 3} else lines[0]
            raise FormatError("expected lines 'group share' or 'query group share' throughout", path=str(obj),
                              line=n, text=" ".join(f))
        for n, f in lines:
            q, g, v = (None, f[0], f[1]) if len(f) == 2 else (f[0], f[1], f[2])
            out.setdefault(q, {})[g] = _weight(v, obj, n, " ".join(f))
        return out
    if isinstance(obj, Mapping) and obj:
        if all(isinstance(v, Mapping) for v in obj.values()):
            return {str(q): {str(g): float(s) for g, s in d.items()} for q, d in obj.items()}
        return {None: {str(g): float(s) for g, s in obj.items()}}
    raise InvalidParameterError("`target` must be a mapping {group: share} or {query: {group: share}}, a file, or "
                                f"'relevant'; got {obj!r}.")
