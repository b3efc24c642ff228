"""The slice search: which slices (values of one slice column, or combinations of several) are behind a change.

One search serves the root cause of every alert (measures and label-free signals alike), the automatic-slice
monitors (``slices = "auto"``) and ``ranklens monitor slices --auto``:

1. **Candidates**: every value of every slice column, and every combination of values of up to ``max_columns``
   columns (:func:`slice_definitions`: a lattice walked level by level, singles first, as Slice Finder does;
   Chung, Kraska, Polyzotis, Tae, Whang, *Slice Finder: Automated Data Slicing for Model Validation*, ICDE
   2019). Unlike Slice Finder, which crosses only the slices it found uninteresting, every combination is
   kept: a collapse confined to ``device=mobile AND country=DE`` also moves ``country=DE``, and naming both
   is what points at the pair.
2. **Minimum support**: a candidate needs ``min_support`` counted lists in the window and in its baseline
   (smaller ones are pooled and never named).
3. **Each candidate against its own baseline**: the slice's lists in the window against the same slice's
   lists in the series' baseline (for a measure: Welch's test of the difference; for a signal: the signal
   of the slice's rows against the slice's baseline rows).
4. **Multiple testing**: the p-values of every candidate tested are adjusted together (Holm by default,
   Benjamini-Hochberg as an option), as Slice Finder controls false discoveries over the slices it tests.
5. **Ranking**: most harmful first (for a measure, its contribution to the series' change; for a signal,
   its value or its gap to the baseline in the direction that is worse).

The rows come from :func:`ranklens.monitor.reports.slices.slice_report` (measures) or from the signals of
each definition (:mod:`ranklens.monitor.signals.monitors`); this module holds what both share.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ...errors import InvalidParameterError

__all__ = ["MAX_COLUMNS", "TOP_FIELDS", "cell_name", "crosses", "describe_top", "fixed_columns", "one_sided",
           "rank_cells", "searched_columns", "slice_definitions", "top_entry"]

#: The most slice columns a candidate combines.
MAX_COLUMNS = 3
#: The keys of one entry of an alert's ``top_slices`` (measures and signals alike).
TOP_FIELDS = ("slice", "column", "value", "column2", "value2", "baseline_value", "window_value", "change",
              "share_window", "contribution", "n_window", "n_baseline", "p_value", "p_adjusted")


def fixed_columns(where: Mapping[str, Any] | None, by: Iterable[str] = ()) -> set[str]:
    """The columns a selection fixes to one value: its series columns ``by`` and the ``where`` filters to one
    value (a scalar, or a list of one); a filter to several values leaves its column free.

    >>> sorted(fixed_columns({"country": "BR", "device": ["mobile", "tablet"], "query_type": ["head"]}, ["model"]))
    ['country', 'model', 'query_type']
    """
    out = {str(b).lower() for b in by}
    for k, v in (where or {}).items():
        if not isinstance(v, (list, tuple, set, frozenset)) or len(v) == 1:
            out.add(str(k).lower())
    return out


def searched_columns(columns: Iterable[str], where: Mapping[str, Any] | None, by: Iterable[str] = ()) -> list[str]:
    """The slice columns a search looks in: ``columns`` without those the series fixes (:func:`fixed_columns`).

    A column fixed to one value has one cell, the series itself: named as its own root cause it says nothing.
    So the root cause of a series split by a slice column (``by = ["country"]``: the series ``country=BR``) is
    searched in the *other* columns and their pairs.

    >>> searched_columns(["country", "device", "query_type"], {"environment": "production", "country": "BR"})
    ['device', 'query_type']
    """
    fixed = fixed_columns(where, by)
    return [c for c in dict.fromkeys(columns) if c not in fixed]


def slice_definitions(columns: Sequence[str], max_columns: int) -> list[tuple[str, ...]]:
    """Every combination of 1..``max_columns`` of ``columns``, singles first (the levels of the lattice).

    Examples
    --------
    >>> slice_definitions(["country", "device", "query_type"], 2)  # doctest: +NORMALIZE_WHITESPACE
    [('country',), ('device',), ('query_type',), ('country', 'device'), ('country', 'query_type'),
     ('device', 'query_type')]
    """
    if isinstance(max_columns, bool) or not isinstance(max_columns, int) or not 1 <= max_columns <= MAX_COLUMNS:
        raise InvalidParameterError(f"`max_columns` must be an integer in [1, {MAX_COLUMNS}]; got {max_columns!r}.")
    cols = list(dict.fromkeys(columns))
    return [d for n in range(1, max_columns + 1) for d in itertools.combinations(cols, n)]


def cell_name(row: dict[str, Any]) -> str:
    """A slice in words: ``country=DE``, ``country=DE device=mobile``.

    >>> cell_name({"column": "country", "value": "DE", "column2": "device", "value2": "mobile"})
    'country=DE device=mobile'
    """
    parts = [f"{row['column']}={row['value']}"]
    for i in (2, 3):
        if row.get(f"column{i}"):
            parts.append(f"{row[f'column{i}']}={row[f'value{i}']}")
    return " ".join(parts)


def one_sided(p_two_sided: float | None, change: float | None, worse: str = "down") -> float:
    """The one-sided p-value of a change in the worse direction from the two-sided one of a symmetric test:
    ``p / 2`` when the change goes the worse way, ``1 - p / 2`` otherwise (NaN when untested).

    >>> one_sided(0.04, -0.1), one_sided(0.04, 0.1)
    (0.02, 0.98)
    """
    if p_two_sided is None or change is None or math.isnan(p_two_sided) or math.isnan(change):
        return math.nan
    bad = change < 0 if worse == "down" else change > 0
    return p_two_sided / 2 if bad else 1 - p_two_sided / 2


def rank_cells(rows: Iterable[dict[str, Any]], harm: Any, n: int | None = None) -> list[dict[str, Any]]:
    """The harmful candidates (``harm(row) < 0``; pooled rows never), most harmful first, at most ``n``."""
    keep = [(float(harm(r)), i, r) for i, r in enumerate(rows) if not r.get("pooled")]
    keep = [(h, i, r) for h, i, r in keep if not math.isnan(h) and h < 0]
    keep.sort(key=lambda x: (x[0], x[1]))
    return [r for _, _, r in (keep[:n] if n is not None else keep)]


def top_entry(row: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """One entry of ``top_slices``: :data:`TOP_FIELDS` (absent ones None) and ``extra`` (e.g. ``signal``)."""
    out = {k: _plain(row.get(k)) for k in TOP_FIELDS}
    out["slice"] = cell_name(row)
    for i in (3,):
        if row.get(f"column{i}"):
            out[f"column{i}"], out[f"value{i}"] = row[f"column{i}"], row[f"value{i}"]
    out.update(extra)
    return out


def _plain(v: Any) -> Any:
    if isinstance(v, (np.floating, float)):
        return None if math.isnan(float(v)) else float(v)
    if isinstance(v, np.integer):
        return int(v)
    return v


def crosses(value: float, base: float, *, threshold: float | None = None, relative_drop: float | None = None,
            absolute_drop: float | None = None) -> tuple[bool, float, str]:
    """(crosses, effective limit, why) of a value that is worse when lower: below ``threshold``, or more than
    ``relative_drop`` (a fraction) or ``absolute_drop`` below ``base``; the strictest limit given decides.

    >>> crosses(0.5, 0.86, relative_drop=0.2)[0], round(crosses(0.5, 0.86, relative_drop=0.2)[1], 3)
    (True, 0.688)
    """
    limits = []
    if threshold is not None:
        limits.append((float(threshold), f"below the threshold {threshold:g}"))
    if relative_drop is not None and not math.isnan(base):
        limits.append((base * (1 - relative_drop), f"more than {relative_drop:.0%} below the baseline {base:.4f}"))
    if absolute_drop is not None and not math.isnan(base):
        limits.append((base - absolute_drop, f"more than {absolute_drop:g} below the baseline {base:.4f}"))
    if not limits:
        return False, math.nan, ""
    thr, why = max(limits, key=lambda x: x[0])
    return bool(value < thr), thr, why


def describe_top(r: dict[str, Any]) -> str:
    """One ``top_slices`` entry in words: the slice and its values (baseline -> window), or the signal's value
    in it, or the share of a file's rows quarantined.

    >>> describe_top({"slice": "country=BR", "baseline_value": 0.88, "window_value": 0.6})
    'country=BR (0.8800 -> 0.6000)'
    >>> describe_top({"slice": "device=mobile", "signal": "psi(score)", "window_value": 3.84})
    'device=mobile (psi(score) = 3.8400)'
    """
    name = r.get("slice") or cell_name(r)
    if r.get("signal"):
        return f"{name} ({r['signal']} = {r['window_value']:.4f})"
    if r.get("baseline_value") is not None and r.get("window_value") is not None:
        return f"{name} ({r['baseline_value']:.4f} -> {r['window_value']:.4f})"
    if r.get("window_value") is not None:
        return f"{name} ({r['window_value']:.4f})"
    return str(name)
