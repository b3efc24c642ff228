"""``ranklens fuse``: several runs fused into one (ranx's unsupervised methods), written as a run."""

from __future__ import annotations

import math
from typing import Any

import click

from .main import quiet_option

__all__ = ["fuse_cmd"]


def _params(items: tuple[str, ...]) -> dict[str, Any]:
    """``-p NAME=VALUE`` values: numbers, ``weights`` a comma-separated list of numbers."""
    out: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        try:
            numbers = [float(v) for v in value.split(",")] if sep and name else []
        except ValueError:
            numbers = []
        if not numbers or not all(math.isfinite(x) for x in numbers) or (len(numbers) > 1 and name != "weights"):
            raise click.BadParameter(f"expected NAME=NUMBER (k=60, phi=0.8) or weights=W1,W2,...; got {item!r}",
                                     param_hint="-p/--param")
        if name in out:
            raise click.BadParameter(f"{name} given twice", param_hint="-p/--param")
        out[name] = numbers if name == "weights" else numbers[0]
    return out


@click.command("fuse")
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--method", "method", required=True,
              help="Fusion method, by ranx's name: rrf, sum, mnz, max, min, med, anz, gmnz, wsum, wmnz, mixed, isr, "
                   "log_isr, logn_isr, rbc, bordafuse, w_bordafuse, condorcet, w_condorcet.")
@click.option("--norm", default="min-max", show_default=True,
              help="Normalisation of each run's scores per query: min-max, min-max-inverted, max, sum, zmuv, rank, "
                   "borda, none.")
@click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE",
              help="A parameter of the method, repeatable: k=60 (rrf), gamma=1.5 (gmnz), sigma=0.01 (logn_isr), "
                   "phi=0.8 (rbc), weights=0.3,0.7 (one per run, in order).")
@click.option("--ties", type=click.Choice(["ranx", "input"]), default="ranx", show_default=True,
              help="Position of tied documents in a run: ranx's (numba's quicksort, as ranx.Run sorts), or as given.")
@click.option("--queries", type=click.Choice(["same", "union"]), default="same", show_default=True,
              help="same: every run must hold the same queries (as ranx); union: a query a run lacks is empty there.")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False), default=None,
              help="File to write the fused run to (default: standard output; the format from its suffix).")
@click.option("-f", "--format", "fmt", type=click.Choice(["trec", "csv", "tsv", "jsonl", "json", "parquet"]),
              default=None, help="Format of the fused run (default: from the suffix of --output, else trec).")
@click.option("--tag", default=None, help="Run tag of a TREC run (default: the method's name).")
@click.option("--run-format", default=None,
              help="Format of the RUNs: trec, csv, tsv, parquet, jsonl, json (default: detected).")
@click.option("--query-col", default=None, help="Query id column of a table (default: query, qid...).")
@click.option("--item-col", default=None, help="Item id column of a table (default: item, doc_id, docno...).")
@click.option("--score-col", default=None, help="Score column of a table (default: score, prediction...).")
@click.option("--rank-col", default=None, help="Rank column of a table (rank 1 is best).")
@quiet_option
def fuse_cmd(runs: tuple[str, ...], method: str, norm: str, params: tuple[str, ...], ties: str, queries: str,
             output: str | None, fmt: str | None, tag: str | None, **read: Any) -> None:
    """Fuse RUNs (two or more) into one run, as ranx.fuse does.

    Every run is a TREC run or a table (CSV, TSV, Parquet, JSON Lines, JSON);
    the fused run lists each query's documents by descending fused score and
    is written as a TREC run (or --format) that every command reads.
    """
    from .._integrations.fusion import fuse
    from .._output.runs import run_format, write_run

    parsed = _params(params)
    out_fmt = run_format(output, fmt)
    if out_fmt == "parquet" and output is None:
        raise click.UsageError("-f parquet writes a file: give -o/--output.")
    fused = fuse(list(runs), method, None if norm.lower() == "none" else norm, ties=ties, queries=queries,
                 **{k: v for k, v in read.items() if v is not None}, **parsed)
    text = write_run(fused, output, out_fmt, tag=tag or method.strip().lower())
    if text is not None:
        click.echo(text, nl=False)
