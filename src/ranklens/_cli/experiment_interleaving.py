"""``ranklens experiment interleaving``: the outcome of an interleaving or multileaving click log; and the
pieces ``ranklens experiment simulate`` uses to write an interleaving log (``--interleaving METHOD``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from .main import format_option, integer, number

__all__ = [
    "INTERLEAVING_METHODS",
    "interleaving",
    "interleaving_log_options",
    "read_log_file",
    "write_interleaving_log",
]

INTERLEAVING_METHODS = ("team_draft", "balanced", "probabilistic")
_LOG_FORMATS = ("csv", "tsv", "parquet", "jsonl")


def read_log_file(path: str, fmt: str | None = None) -> Any:
    """A click log file (CSV, TSV, Parquet, JSON Lines) as a pyarrow Table, by the one log reader
    (:func:`ranklens._input.logs.read_table_file`)."""
    from .._input.logs import read_table_file

    return read_table_file(path, fmt)


def _teams(value: str | None, method: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    teams = tuple(t.strip() for t in value.split(","))
    if len(teams) < 2 or any(not t for t in teams):
        raise click.BadParameter(f"expected two or more comma-separated labels, such as a,b; got {value!r}",
                                 param_hint="--teams")
    return teams


@click.command("interleaving")
@click.argument("log", type=click.Path(dir_okay=False))
@click.option("-m", "--method", type=click.Choice(INTERLEAVING_METHODS), default="team_draft", show_default=True,
              help="The method that built the lists (its credit rule).")
@click.option("--teams", default=None, metavar="A,B[,C...]",
              help="Team labels in the log, a first (default: a,b). More than two: multileaving (every pair).")
@click.option("--impression-col", default="impression", show_default=True, help="Impression id column.")
@click.option("--team-col", default="team", show_default=True, help="Team column (team draft).")
@click.option("--click-col", default="click", show_default=True, help="Click column (0/1 or true/false).")
@click.option("--position-col", default=None,
              help="Position column, 1 = top (default: position when the log has it; balanced needs it).")
@click.option("--item-col", default=None, help="Item column: an impression showing an item twice is refused.")
@click.option("--confidence", type=number(min=0, max=1), default=0.95, show_default=True, help="Level of the interval.")
@click.option("--sequential", type=click.Choice(["none", "always_valid", "group_sequential"]), default="none",
              show_default=True, help="Inference valid when the experiment is looked at at every value of --look-col.")
@click.option("--look-col", default=None, help="The looks of --sequential: a day, hour or batch column.")
@click.option("--planned-impressions", type=integer(min=1), default=None,
              help="--sequential: the impressions planned (group-sequential fractions; the mixture's tuning).")
@click.option("--log-format", type=click.Choice(_LOG_FORMATS), default=None,
              help="Format of LOG (default: from its name).")
@format_option(("table", "json", "csv"))
def interleaving(log: str, method: str, teams: str | None, impression_col: str, team_col: str, click_col: str,
                 position_col: str | None, item_col: str | None, confidence: float, sequential: str,
                 look_col: str | None, planned_impressions: int | None, log_format: str | None, fmt: str) -> None:
    """Which ranker users preferred, from an interleaving click log LOG (one row per shown item).

    Prints wins, losses, ties, delta = (wins + ties/2) / impressions - 1/2, the two-sided sign test's p-value
    and Tango's interval for delta. With more than two --teams, one row per ordered pair of rankers.
    The unit is the impression.
    """
    from .._output.render import format_p, render_rows
    from ..online import AlwaysValid, GroupSequential, interleaving_outcome, multileaving_outcome

    table = read_log_file(log, log_format)
    labels = _teams(teams, method) or ("a", "b")
    cols: dict[str, Any] = {"impression_col": impression_col, "team_col": team_col, "click_col": click_col,
                            "position_col": position_col, "item_col": item_col}
    if len(labels) == 2:
        design: Any = None
        if sequential == "always_valid":
            design = AlwaysValid(planned_units=planned_impressions)
        elif sequential == "group_sequential":
            design = GroupSequential(planned_units=planned_impressions)
        rows = [interleaving_outcome(table, method=method, teams=labels, confidence=confidence, sequential=design,
                                     look_col=look_col, **cols).to_dict()]
    else:
        if sequential != "none":
            raise click.UsageError("--sequential compares two rankers; --teams gives more.")
        if method == "balanced":
            raise click.UsageError("balanced interleaving compares two rankers; --teams gives "
                                   f"{len(labels)}.")
        res = multileaving_outcome(table, method=method, teams=list(labels), confidence=confidence, **cols)
        rows = [res.pair(a, b).to_dict() for a in labels for b in labels if a != b]
    if fmt == "json" and len(rows) == 1:
        click.echo(json.dumps(rows[0], indent=1))
        return
    if fmt == "table":  # p-values as the other tables print them (1.9e-28, not 0.0000)
        rows = [dict(r, p_value=format_p(r["p_value"])) for r in rows]
    click.echo(render_rows((list(rows[0]), rows), fmt))


def interleaving_log_options(f: Any) -> Any:
    """``--interleaving METHOD`` and ``--interleave A,B`` of ``experiment simulate``: write an interleaving log
    of the simulation (:func:`ranklens.online.simulate_interleaving`) instead of its A/B events."""
    f = click.option("--interleave", "interleave_arms", default=None, metavar="A,B",
                     help="With --interleaving: the arms compared, a first (default: the treatment, the control).")(f)
    return click.option("--interleaving", "interleaving_method", type=click.Choice(INTERLEAVING_METHODS),
                        default=None, help="Write an interleaving log of the simulated sessions instead of "
                                           "the A/B events: every session shown both arms' lists mixed.")(f)


def write_interleaving_log(sim: Any, path: str, fmt: str, method: str, arms: str | None, seed: Any) -> int:
    """Write ``sim``'s interleaving log to ``path`` (csv, parquet or jsonl); the number of rows."""
    import pyarrow as pa

    from ..online import simulate_interleaving

    a = b = None
    if arms is not None:
        parts = [x.strip() for x in arms.split(",")]
        if len(parts) != 2 or not all(parts):
            raise click.BadParameter(f"expected two arms, such as treatment,control; got {arms!r}",
                                     param_hint="--interleave")
        a, b = parts
    import numpy as np

    # a stream of its own: the simulation drew its users from the same seed
    rng = np.random.default_rng(None if seed is None else [int(seed), 1])
    table = simulate_interleaving(sim, a=a, b=b, method=method, seed=rng)
    out = Path(path)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, out)
    elif fmt == "csv":
        import pyarrow.csv as pcsv

        pcsv.write_csv(table, out)
    else:  # JSON Lines (pyarrow writes no JSON)
        with out.open("w", encoding="utf-8") as fh:
            for row in table.to_pylist():
                fh.write(json.dumps(row) + "\n")
    assert isinstance(table, pa.Table)
    return int(table.num_rows)
