"""Plots of a :class:`~ranklens.compare.Comparison` (matplotlib, an optional dependency: ``ranklens[plot]``).

The public face of this module is :mod:`ranklens.plot`.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .._base.deps import require
from .._base.renamed import renamed_keywords
from ..errors import InvalidParameterError

__all__ = ["CURVE_CUTOFFS", "cutoff_curves", "plot_comparison", "plot_curves", "plot_differences", "plot_forest"]

#: cutoffs of the measure@k curves: every k from 1 to 100
CURVE_CUTOFFS = tuple(range(1, 101))
_FORMATS = ("png", "svg")


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "metric"


@renamed_keywords(metrics="measures")
def cutoff_curves(
    judgments: Any, runs: Mapping[str, Any], measures: Iterable[str], ks: Iterable[int] = CURVE_CUTOFFS,
    convention: Any = None, **options: Any,
) -> dict[str, dict[str, list[tuple[int, float]]]]:
    """Means of each cutoff measure family (``ndcg@10`` -> ``ndcg@k``) at the cutoffs ``ks``, per run.

    Returns ``{family: {run: [(k, mean), ...]}}``; measures without a cutoff are left out.
    """
    from .._core.evaluate import evaluate
    from .._defs.measures import parse_measures

    families = []
    for m in parse_measures(list(measures)):
        if m.k is None or m.summed or not m.key.rsplit("@", 1)[-1].isdigit():
            continue
        fam = m.key.rsplit("@", 1)[0]
        if fam not in families:
            families.append(fam)
    ks = sorted(set(int(k) for k in ks))
    if not families:
        return {}
    names = [f"{fam}@{k}" for fam in families for k in ks]
    out: dict[str, dict[str, list[tuple[int, float]]]] = {fam: {} for fam in families}
    for run_name, run in runs.items():
        res = evaluate(judgments, run, names, convention=convention, **options)
        for fam in families:
            out[fam][run_name] = [(k, float(res[f"{fam}@{k}"])) for k in ks]
    return out


def _axes(ax: Any, size: tuple[float, float]) -> Any:
    """The axes given, or those of a new figure (matplotlib.figure.Figure: no pyplot state)."""
    require("matplotlib")
    if ax is not None:
        return ax
    from matplotlib.figure import Figure

    return Figure(figsize=size).subplots()


def _metric(comparison: Any, measure: str | None) -> str:
    if measure is None:
        return str(comparison.measures[0])
    if measure not in comparison.measures:
        raise InvalidParameterError(f"`measure` {measure!r} is not in the comparison "
                                    f"({', '.join(comparison.measures)}).")
    return measure


@renamed_keywords(metric="measure")
def plot_differences(comparison: Any, measure: str | None = None, run: str | None = None, *, ax: Any = None) -> Any:
    """Per-query differences of one run against the baseline, sorted (green: run above, red: below).

    Parameters
    ----------
    comparison : Comparison
    measure : str, optional
        Default: the first measure compared.
    run : str, optional
        Default: the first run that is not the baseline.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).

    Returns
    -------
    matplotlib.figure.Figure
        The figure of the axes drawn on.
    """
    measure = _metric(comparison, measure)
    runs = comparison.runs
    others = [r for r in runs if r != comparison.baseline]
    run = others[0] if run is None else run
    if run not in others:
        raise InvalidParameterError(f"`run` {run!r} is not a compared run other than the baseline "
                                    f"({', '.join(others)}).")
    ax = _axes(ax, (7, 3.2))
    values = comparison.per_query["values"][comparison.measures.index(measure)]
    d = values[:, runs.index(run)] - values[:, runs.index(comparison.baseline)]
    d = np.sort(d[~np.isnan(d)])[::-1]
    colors = np.where(d > 0, "tab:green", np.where(d < 0, "tab:red", "tab:gray"))
    ax.bar(np.arange(d.shape[0]), d, width=1.0, color=colors, linewidth=0)
    ax.axhline(0, color="black", linewidth=0.6)
    row = comparison.row(run, measure)
    ax.set_title(f"{run} - {comparison.baseline}: {row['wins']} wins, {row['ties']} ties, {row['losses']} losses",
                 fontsize=9)
    ax.set_ylabel(f"diff {measure}", fontsize=8)
    ax.set_xlim(-0.5, max(d.shape[0], 1) - 0.5)
    ax.set_xlabel("queries, sorted by difference")
    return ax.figure


@renamed_keywords(metric="measure")
def plot_forest(comparison: Any, measure: str | None = None, *, ax: Any = None) -> Any:
    """Each run's mean difference against the baseline with its interval; filled: significant after correction.

    Returns the figure of the axes drawn on (``ax``, or a new figure).
    """
    measure = _metric(comparison, measure)
    runs = comparison.runs
    others = [r for r in runs if r != comparison.baseline]
    s = comparison.settings
    ax = _axes(ax, (7, 1.2 + 0.5 * len(others)))
    for y, run in enumerate(others):
        row = comparison.row(run, measure)
        lo, hi, diff = row["diff_low"], row["diff_high"], row["diff"]
        if not math.isnan(lo):
            ax.plot([lo, hi], [y, y], color="tab:blue", linewidth=2)
        ax.plot([diff], [y], marker="o", color="tab:blue", markersize=7,
                markerfacecolor="tab:blue" if row.get("significant") else "white")
    ax.axvline(0, color="black", linewidth=0.6, linestyle="--")
    ax.set_yticks(range(len(others)), others, fontsize=8)
    ax.set_ylim(-0.7, len(others) - 0.3)
    ax.invert_yaxis()
    ax.set_xlabel(f"{measure}: mean difference against {comparison.baseline} ({s['confidence']:.0%} "
                  f"{s['ci_method']} interval; filled = significant after {s['correction']})", fontsize=8)
    return ax.figure


def plot_curves(curves: Mapping[str, Mapping[str, Any]], family: str | None = None, *, ax: Any = None) -> Any:
    """The mean of a measure at each cutoff, one line per run (``curves`` from :func:`cutoff_curves`).

    Returns the figure of the axes drawn on (``ax``, or a new figure).
    """
    if not curves:
        raise InvalidParameterError("`curves` is empty: cutoff_curves found no measure with a cutoff.")
    family = next(iter(curves)) if family is None else family
    if family not in curves:
        raise InvalidParameterError(f"`family` {family!r} is not in the curves ({', '.join(curves)}).")
    ax = _axes(ax, (6, 4))
    ks: list[int] = []
    for run_name, pts in curves[family].items():
        ks = [k for k, _ in pts]
        ax.plot(ks, [v for _, v in pts], marker="o", markersize=2.5, linewidth=1.2, label=run_name)
    ax.set_xscale("log")
    ticks = [k for k in ks if k in (1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000)] or ks
    ax.set_xticks(ticks, [str(k) for k in ticks])
    ax.set_xlabel("cutoff k")
    ax.set_ylabel(f"mean {family}@k")
    ax.legend(fontsize=8)
    return ax.figure


def plot_comparison(
    comparison: Any, directory: str | os.PathLike[str], curves: Mapping[str, Any] | None = None,
    formats: Iterable[str] = _FORMATS,
) -> list[str]:
    """Write the plots of ``comparison`` into ``directory`` (created if needed); returns the paths written.

    ``curves`` is the output of :func:`cutoff_curves` (no curve plots without it).
    """
    require("matplotlib")
    from matplotlib.figure import Figure

    formats = tuple(formats)
    for f in formats:
        if f not in _FORMATS:
            raise InvalidParameterError(f"plot format must be png or svg; got {f!r}.")
    os.makedirs(directory, exist_ok=True)
    written: list[str] = []

    def save(fig: Any, stem: str) -> None:
        fig.tight_layout()
        for f in formats:
            path = os.path.join(os.fspath(directory), f"{stem}.{f}")
            fig.savefig(path, format=f, dpi=120, bbox_inches="tight")
            written.append(path)

    others = [r for r in comparison.runs if r != comparison.baseline]
    for measure in comparison.measures:
        fig = Figure(figsize=(7, 1.8 + 1.6 * len(others)))
        axes = fig.subplots(len(others), 1, squeeze=False)[:, 0]
        for ax, run in zip(axes, others):
            plot_differences(comparison, measure, run, ax=ax)
            if ax is not axes[-1]:
                ax.set_xlabel("")
        save(fig, f"diff_{_safe(measure)}")
        save(plot_forest(comparison, measure), f"forest_{_safe(measure)}")
    if curves is not None:
        for fam in curves:
            save(plot_curves(curves, fam), f"curve_{_safe(fam)}")
    return written
