"""Plots of a :class:`~ranklens.compare.Comparison` (matplotlib, an optional dependency: ``ranklens[plot]``).

* ``diff_<measure>``: per-query difference of each run against the baseline, sorted;
* ``forest_<measure>``: each run's mean difference with its interval (a forest plot), significant ones filled;
* ``curve_<family>``: the mean of a measure at several cutoffs, per run (measure@k curves).

:func:`plot_comparison` writes each as PNG and SVG. In a notebook, :func:`plot_differences`,
:func:`plot_forest` and :func:`plot_curves` draw one plot on the matplotlib axes given (``ax=``), or on
a new figure, and return the figure. matplotlib is imported here only, through ``ranklens._base.deps.require``.
"""

from ._integrations.plot import (
    CURVE_CUTOFFS,
    cutoff_curves,
    plot_comparison,
    plot_curves,
    plot_differences,
    plot_forest,
)

__all__ = [
    "CURVE_CUTOFFS",
    "cutoff_curves",
    "plot_comparison",
    "plot_curves",
    "plot_differences",
    "plot_forest",
]
