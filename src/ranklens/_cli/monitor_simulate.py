"""``ranklens monitor simulate``: a realistic event stream written to a directory.

The events are :func:`ranklens.monitor.simulate`'s; this module turns the options into its arguments.
"""

from __future__ import annotations

import pathlib
from collections.abc import Sequence

import click

from ..errors import InvalidParameterError
from ..monitor.simulate import FORMATS, simulate_counted
from .main import integer, number

__all__ = ["simulate_command"]

_OPTION_OF = {
    "start": "--start", "days": "--days", "groups_per_day": "--groups-per-day", "items": "--items",
    "seed": "--seed", "decay_start": "--decay-start", "decay_slice": "--decay-slice", "decay": "--decay",
    "late_fraction": "--late-fraction", "max_delay_hours": "--max-delay-hours",
    "training_groups": "--training-groups", "validation_groups": "--validation-groups", "malformed": "--malformed",
    "format": "--format",
}


def _parse_items(text: str) -> tuple[int, int]:
    a, sep, b = text.partition("-")
    try:
        return (int(a), int(b)) if sep else (int(a), int(a))
    except ValueError:
        raise InvalidParameterError(f"--items must be MIN-MAX, e.g. 5-20; got {text!r}.") from None


def _parse_slice(values: Sequence[str]) -> dict[str, str] | None:
    spec = {}
    for v in values:
        if v.strip().lower() in ("all", "none", "*"):
            return None
        col, sep, val = v.partition("=")
        if not sep or not col.strip() or not val.strip():
            raise InvalidParameterError(f"--decay-slice must be COL=VALUE, e.g. country=BR; got {v!r}.")
        spec[col.strip()] = val.strip()
    return spec


@click.command("simulate")
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=pathlib.Path))
@click.option("--start", default="2026-10-01", show_default=True, help="First production day (UTC), YYYY-MM-DD.")
@click.option("--days", type=integer(), default=30, show_default=True, help="Production days.")
@click.option("--groups-per-day", type=integer(), default=2000, show_default=True, help="Lists served per day.")
@click.option("--items", "items_", default="5-20", show_default=True, metavar="MIN-MAX", help="List lengths.")
@click.option("--seed", type=integer(), default=0, show_default=True, help="Random seed (same seed, same events).")
@click.option("--decay-start", default=None, help="First day of the decay (default: two thirds into the period).")
@click.option("--decay-slice", multiple=True, metavar="COL=VALUE", default=("country=BR",), show_default=True,
              help="Slice where lists decay; repeat for several columns; 'all' for every list.")
@click.option("--decay", type=click.Choice(["swap_first_last", "broken_scores", "none"]), default="swap_first_last",
              show_default=True, help="The planted decay (broken_scores: seen by label-free signals), or none.")
@click.option("--late-fraction", type=number(), default=0.5, show_default=True,
              help="Share of label rows stamped on a later day than their list.")
@click.option("--max-delay-hours", type=number(), default=48.0, show_default=True, help="Latest label after its list.")
@click.option("--training-groups", type=integer(), default=None,
              help="Training lists per model version (default: --groups-per-day).")
@click.option("--validation-groups", type=integer(), default=0, show_default=True,
              help="Lists per model version in the validation environment (explicit relevance).")
@click.option("--second-model", is_flag=True, help="Also simulate a model 'related'.")
@click.option("--malformed", type=number(), default=0.0, show_default=True,
              help="Share of bad rows added, for the quarantine demo.")
@click.option("--format", "format_", type=click.Choice(list(FORMATS)), default="parquet", show_default=True,
              help="File format.")
def simulate_command(out_dir: pathlib.Path, start: str, days: int, groups_per_day: int, items_: str, seed: int,
                     decay_start: str | None, decay_slice: tuple[str, ...], decay: str, late_fraction: float,
                     max_delay_hours: float, training_groups: int | None, validation_groups: int, second_model: bool,
                     malformed: float, format_: str) -> None:
    """Write a realistic event stream to OUT_DIR: one file per day, late labels, a planted decay.

    Model "ranker" v1, then v2 on half the traffic from day 10; from day 20 the lists of the
    country=BR slice serve their last item first and their first item last.
    """
    try:
        paths, n_groups, n_events = simulate_counted(
            out_dir, start=start, days=days, groups_per_day=groups_per_day, items=_parse_items(items_), seed=seed,
            decay_start=decay_start, decay_slice=_parse_slice(decay_slice), decay=None if decay == "none" else decay,
            late_fraction=late_fraction, max_delay_hours=max_delay_hours, training_groups=training_groups,
            validation_groups=validation_groups, v2_start=None, v2_share=0.5, second_model=second_model,
            malformed=malformed, format=format_)
    except InvalidParameterError as exc:
        msg = str(exc)
        for name, opt in _OPTION_OF.items():
            msg = msg.replace(f"`{name}`", opt)
        raise InvalidParameterError(msg) from None
    click.echo(f"wrote {len(paths)} files to {out_dir}: {n_events:,} events, {n_groups:,} groups "
               f"({days} days from {start}, seed {seed})")

