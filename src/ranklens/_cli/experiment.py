"""``ranklens experiment``: online experiments (issue #30). The interleaving subcommand lives in
:mod:`ranklens._cli.experiment_interleaving`."""

from __future__ import annotations

import click

from .experiment_interleaving import interleaving

__all__ = ["experiment"]


@click.group("experiment")
def experiment() -> None:
    """Online experiments: interleaving outcomes (A/B tests, calibration and simulation: see their subcommands)."""


experiment.add_command(interleaving)
