"""``ranklens compare``: runs compared on the same judgments (means, intervals, paired tests), plots,
``--fail-if-worse``, ``--max-drop``.
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
    parse_gates,
    parse_group_by,
    quiet_option,
)

__all__ = ["compare_cmd"]



@click.command("compare")
@click.argument("judgments", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-m", "--measure", "measures", multiple=True, help="Measure, repeatable (default: ndcg@10).")
@click.option("--pairs", type=click.Choice(["baseline", "all"]), default="baseline", show_default=True,
              help="baseline: each run against the baseline; all: every pair of runs (significance matrix, "
                   "compact letters, ANOVA and Friedman, discriminative power).")
@comparison_options
@format_option("comparison")
@click.option("--digits", type=integer(0, 17), default=4, show_default=True,
              help="Decimals in table, markdown, latex and html output (json and csv: full precision).")
@click.option("--plot", "plot_dir", default=None, type=click.Path(file_okay=False),
              help="Write plots (PNG and SVG) into this folder: sorted per-query differences, forest plot, "
                   "measure@k curves (needs matplotlib: pip install 'ranklens[plot]').")
@click.option("--fail-if-worse", is_flag=True,
              help="CI gate: exit with status 1 when a run is significantly worse than the baseline on a measure "
                   "(the chosen --test, after --correction, at --alpha).")
@click.option("--max-drop", "max_drop", multiple=True, metavar="MEASURE=VALUE",
              help="CI gate on size, repeatable: exit with status 1 when the baseline's mean of MEASURE minus a run's "
                   "exceeds VALUE, whatever the p-value (e.g. --max-drop ndcg@10=0.01); the measure is compared if "
                   "-m does not name it.")
@click.option("--group-by", "group_by", default=None, metavar="COLUMN[,COLUMN...]",
              help="One comparison per group of rows by this column of the runs' (else the judgments') tables "
                   "(device, locale, query length), or per combination of several (a,b); the gates apply to every "
                   "group.")
@quiet_option
@column_options
def compare_cmd(judgments: str, runs: tuple[str, ...], measures: tuple[str, ...], pairs: str, baseline: str | None,
                test: str, correction: str | None, alpha: float, confidence: float, ci: str, resamples: int, seed: int,
                convention: str, sets: tuple[str, ...], fmt: str, digits: int, plot_dir: str | None,
                fail_if_worse: bool, max_drop: tuple[str, ...], group_by: str | None, **kw: Any) -> None:
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
    cols = parse_group_by(group_by)
    by: Any = None if not cols else cols[0] if len(cols) == 1 else cols
    ms, allowances = _gated_measures(list(measures) or ["ndcg@10"], parse_gates(max_drop, "--max-drop"))
    if pairs == "all":
        given = [flag for flag, on in (("--baseline", baseline is not None), ("--plot", plot_dir is not None),
                                       ("--fail-if-worse", fail_if_worse), ("--max-drop", bool(max_drop))) if on]
        if given:
            raise click.UsageError(f"{', '.join(given)}: against a baseline, not with --pairs all.")
        result = compare(judgments, list(runs), list(measures) or ["ndcg@10"], pairs="all", group_by=by,
                         convention=convention, test=test, correction=correction, alpha=alpha,
                         confidence=confidence, ci=ci, n_resamples=resamples, seed=seed, **columns, **overrides)
        _print_comparisons(dict(result) if isinstance(result, dict) else {None: result}, cols, fmt, digits)
        return
    if plot_dir is not None:
        if group_by:
            raise click.UsageError("--plot: one comparison at a time, not with --group-by.")
        from .._base.deps import require

        require("matplotlib")  # fail before the work, not after
    result = compare(judgments, list(runs), ms, baseline=baseline, convention=convention, group_by=by,
                     test=test, correction=correction, alpha=alpha, confidence=confidence, ci=ci,
                     n_resamples=resamples, seed=seed, **columns, **overrides)
    comparisons: dict[Any, Any] = dict(result) if isinstance(result, dict) else {None: result}
    if plot_dir is not None:
        from .._integrations.plot import cutoff_curves, plot_comparison

        c = comparisons[None]
        curves = cutoff_curves(judgments, dict(zip(c.runs, runs)), c.measures, convention=convention,
                               **columns, **overrides)
        written = plot_comparison(c, plot_dir, curves)
        click.echo(f"ranklens: wrote {len(written)} plots to {plot_dir}", err=True)
    _print_comparisons(comparisons, cols, fmt, digits)
    failed = []
    for group, c in comparisons.items():
        where = "" if group is None else f"group {_label(group)}: "
        s = c.settings
        if fail_if_worse:
            failed += [
                f"{where}{r['run']}: {r['measure']} is significantly worse than {c.baseline} by {-r['diff']:.4f} "
                f"({r['mean']:.4f} vs {c.row(c.baseline, r['measure'])['mean']:.4f} over {r['n_pairs']} queries; "
                f"p = {r['p_adjusted']:.4g} after {s['correction']}, {s['test']} test, alpha {s['alpha']:g})"
                for r in c.regressions()]
        if allowances:
            failed += [
                f"{where}{r['run']}: {r['measure']} dropped by {r['drop']:.4f} from {r['baseline']} "
                f"({r['baseline_mean']:.4f} over {r['baseline_n']} queries -> {r['mean']:.4f} over {r['n']}), more "
                f"than the allowed {r['max_drop']:g} (p = {r['p_adjusted']:.4g} after {s['correction']})"
                for r in c.drops(allowances)]
    if failed:
        gate_failed(failed)


def _print_comparisons(comparisons: dict[Any, Any], cols: list[str], fmt: str, digits: int) -> None:
    """One comparison, or one per group: json ``{"group_by": ..., "groups": {group: comparison}}`` (a group of
    several columns written ``a,b``), csv with a ``group`` column first (one per group column when several), the
    other formats one section per group."""
    import json

    from .._output.render import render

    if not cols:
        text = render(comparisons[None], fmt, digits=digits)
        click.echo(text, nl=not text.endswith("\n"))
        return
    if fmt == "json":
        click.echo(json.dumps({"group_by": ",".join(cols), "groups": {_label(g): c.to_dict()
                                                                      for g, c in comparisons.items()}},
                              indent=2, allow_nan=False))
        return
    for i, (g, c) in enumerate(comparisons.items()):
        text = render(c, fmt, digits=digits)
        if fmt == "csv":
            lines = text.splitlines()
            head = [] if i else [",".join(cols if len(cols) > 1 else ["group"]) + "," + lines[0]]
            cells = ",".join(_csv_cell(v) for v in (g if isinstance(g, tuple) else (g,)))
            click.echo("\n".join(head + [f"{cells},{line}" for line in lines[1:]]))
        else:
            click.echo(f"{','.join(cols)} = {_label(g)}\n")
            click.echo(text, nl=not text.endswith("\n"))
            click.echo("")


def _label(g: Any) -> str:
    """A group as text: its value, or the values of a combination of columns joined by commas."""
    return ",".join(map(str, g)) if isinstance(g, tuple) else str(g)


def _csv_cell(v: Any) -> str:
    import csv
    import io

    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow([v])
    return buf.getvalue()


def _gated_measures(ms: list[str], gates: list[tuple[str, float]]) -> tuple[list[str], dict[str, float]]:
    """The measures to compare (those of ``-m`` and of the gates) and the allowances by measure key; a gate
    naming several measures at once (``P.5,10``) or the same measure twice is refused."""
    from .._defs.measures import parse_measures

    keys = {m.key for m in parse_measures(ms)}
    allowances: dict[str, float] = {}
    for name, tol in gates:
        gated = parse_measures([name])
        if len(gated) != 1:
            raise click.BadParameter(f"{name!r} names {len(gated)} measures; gate one at a time",
                                     param_hint="--max-drop")
        key = gated[0].key
        if key in allowances:
            raise click.BadParameter(f"{name!r} is given twice", param_hint="--max-drop")
        if tol < 0:
            raise click.BadParameter(f"the allowance of {name!r} must be >= 0; got {tol:g}", param_hint="--max-drop")
        allowances[key] = tol
        if key not in keys:
            keys.add(key)
            ms.append(name)
    return ms, allowances
