"""``ranklens compare``: runs compared on the same judgments (means, intervals, paired tests), plots,
``--fail-if-worse``.
"""

from __future__ import annotations

from typing import Any

import click

from .._input.options import parse_sets
from .main import (
    column_options,
    comparison_options,
    format_option,
    gate_failed,
    input_options,
    integer,
    quiet_option,
)

__all__ = ["compare_cmd"]



@click.command("compare")
@click.argument("judgments", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-m", "--measure", "measures", multiple=True, help="Measure, repeatable (default: ndcg@10).")
@comparison_options
@format_option("comparison")
@click.option("--digits", type=integer(0, 17), default=4, show_default=True,
              help="Decimals in table, markdown, latex and html output (json and csv: full precision).")
@click.option("--plot", "plot_dir", default=None, type=click.Path(file_okay=False),
              help="Write plots (PNG and SVG) into this folder: sorted per-query differences, forest plot, "
                   "metric@k curves (needs matplotlib: pip install 'ranklens[plot]').")
@click.option("--fail-if-worse", is_flag=True,
              help="CI gate: exit with status 1 when a run is significantly worse than the baseline on a measure "
                   "(the chosen --test, after --correction, at --alpha).")
@quiet_option
@column_options
def compare_cmd(judgments: str, runs: tuple[str, ...], measures: tuple[str, ...], baseline: str | None, test: str,
                correction: str, alpha: float, confidence: float, ci: str, resamples: int, seed: int,
                convention: str, sets: tuple[str, ...], fmt: str, digits: int, plot_dir: str | None,
                fail_if_worse: bool, **kw: Any) -> None:
    """Compare RUN1 RUN2 [RUN...] on JUDGMENTS: means, intervals, paired tests against a baseline.

    Every run is evaluated under one convention; each run other than the baseline gets the mean
    difference with its interval, wins/ties/losses over queries, Cohen's d_z and a p-value corrected
    over runs x measures. Significant differences are marked with *.
    """
    from .._integrations.compare import compare
    from ..errors import InvalidParameterError

    if len(runs) < 2:
        raise InvalidParameterError(f"compare needs at least two runs; got {len(runs)}.")
    columns = input_options(kw)
    overrides = parse_sets(sets)
    if plot_dir is not None:
        from .._base.deps import require

        require("matplotlib")  # fail before the work, not after
    c = compare(judgments, list(runs), list(measures) or ["ndcg@10"], baseline=baseline, convention=convention,
                test=test, correction=correction, alpha=alpha, confidence=confidence, ci=ci, n_resamples=resamples,
                seed=seed, **columns, **overrides)
    if plot_dir is not None:
        from .._integrations.plot import cutoff_curves, plot_comparison

        curves = cutoff_curves(judgments, dict(zip(c.runs, runs)), c.measures, convention=convention,
                               **columns, **overrides)
        written = plot_comparison(c, plot_dir, curves)
        click.echo(f"ranklens: wrote {len(written)} plots to {plot_dir}", err=True)
    from .._output.render import render

    text = render(c, fmt, digits=digits)
    click.echo(text, nl=not text.endswith("\n"))
    if fail_if_worse and c.regressions():
        s = c.settings
        gate_failed([
            f"{r['run']}: {r['measure']} is significantly worse than {c.baseline} by {-r['diff']:.4f} "
            f"({r['mean']:.4f} vs {c.row(c.baseline, r['measure'])['mean']:.4f} over {r['n_pairs']} queries; "
            f"p = {r['p_adjusted']:.4g} after {s['correction']}, {s['test']} test, alpha {s['alpha']:g})"
            for r in c.regressions()
        ])
