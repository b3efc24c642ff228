"""``ranklens report``: one self-contained HTML file of an evaluation or a comparison.

The page is :func:`ranklens.web.write_report`'s. Registered lazily by :mod:`ranklens.cli`, so the web stack is
imported only when it runs.
"""

from __future__ import annotations

from typing import Any

import click

from .._input.options import parse_sets
from .main import column_options, comparison_options, input_options, integer

__all__ = ["report"]


@click.command("report")
@click.argument("judgments", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--output", default="ranklens-report.html", show_default=True, type=click.Path(dir_okay=False),
              help="The HTML file to write.")
@click.option("-m", "--measure", "measures", multiple=True, help="Measure, repeatable (default: ndcg@10).")
@click.option("--title", default=None, help="Title of the report.")
@comparison_options
@click.option("--no-curves", is_flag=True, help="Leave out the measure@k curves (k = 1..100).")
@click.option("--top", type=integer(min=0), default=10, show_default=True,
              help="Queries listed with the largest gains and losses.")
@click.option("--digits", type=integer(0, 12), default=4, show_default=True, help="Decimals in the tables.")
@column_options
def report(judgments: str, runs: tuple[str, ...], output: str, measures: tuple[str, ...], title: str | None,
           baseline: str | None, test: str, correction: str, alpha: float, confidence: float, ci: str,
           resamples: int, seed: int, no_curves: bool, top: int, convention: str, sets: tuple[str, ...],
           digits: int, **kw: Any) -> None:
    """Write one self-contained HTML report of RUN (evaluation) or RUN1 RUN2 [RUN...] (comparison).

    The page holds the tables of `ranklens eval` and `ranklens compare`, measure@k curves, per-query
    differences and interval plots, with its charts embedded: it opens from disk, with no server.
    """
    from ..web.report import write_report

    columns = input_options(kw)
    overrides = parse_sets(sets)
    out = write_report(output, judgments, list(runs), list(measures) or ["ndcg@10"], baseline=baseline,
                       convention=convention, test=test, correction=correction, alpha=alpha, confidence=confidence,
                       ci=ci, n_resamples=resamples, seed=seed, title=title, digits=digits, curves=not no_curves,
                       top=top, **columns, **overrides)
    click.echo(f"ranklens: wrote {out}", err=True)
