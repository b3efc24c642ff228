"""``ranklens eval --candidates RUN``: a two-stage system, each stage measured by what it can lose (the printing
of :func:`ranklens.two_stage`'s tables; the option lives on ``eval``)."""

from __future__ import annotations

import json
import os
from typing import Any

import click

__all__ = ["eval_two_stage"]


def _cutoff(measures: tuple[str, ...]) -> int:
    """``k`` of the one ``ndcg@k`` that ``-m`` may name with ``--candidates`` (default 10)."""
    if not measures:
        return 10
    from .._defs.measures import parse_measures

    parsed = parse_measures(list(measures))
    if len(parsed) != 1 or parsed[0].family != "ndcg" or not parsed[0].k:
        raise click.UsageError("with --candidates, -m names the final ranking's measure: one ndcg@k (default "
                               f"ndcg@10); got {', '.join(measures)}.")
    return int(parsed[0].k)


def eval_two_stage(judgments: str, runs: tuple[str, ...], candidates: str, depth: int | None,
                   measures: tuple[str, ...], convention: str, overrides: dict[str, Any], columns: dict[str, Any],
                   fmt: str, digits: int, per_query: bool) -> None:
    """Print, for each RUN (a final ranking), the two-stage table of ``candidates`` then RUN."""
    from .._integrations.stages import two_stage

    if not runs:
        raise click.UsageError("--candidates needs the final ranking(s) as RUN.")
    if fmt == "trec":
        raise click.UsageError("-f trec prints trec_eval's measures; a two-stage table prints as table, json, csv, "
                               "markdown, latex or html.")
    k = _cutoff(measures)
    tables = {}
    for run in runs:
        name = os.path.basename(run)
        while name in tables:
            name += "'"
        tables[name] = two_stage(judgments, candidates, run, depth=depth, k=k, convention=convention,
                                 **columns, **overrides)
    if fmt == "json":
        data = {n: t.to_dict(per_query) for n, t in tables.items()}
        click.echo(json.dumps(data if len(data) > 1 else next(iter(data.values())), indent=2))
        return
    parts = []
    for name, t in tables.items():
        text = t.render(fmt, digits=digits, per_query=per_query)
        parts.append(text if len(tables) == 1 or fmt == "csv" else f"== {name} ==\n{text}")
    click.echo("\n".join(parts), nl=False)
