"""``ranklens explain``: how one query's DCG/NDCG is built, and why two conventions disagree on it."""

from __future__ import annotations

from typing import Any

import click

from .._input.options import parse_sets
from .main import column_options, format_option, input_options, integer

__all__ = ["explain_cmd"]



@click.command("explain")
@click.argument("judgments", type=click.Path(dir_okay=False))
@click.argument("run", required=False, type=click.Path(dir_okay=False))
@click.option("--query", "-Q", "query", required=True, help="The query id to explain.")
@click.option("-k", "k", type=integer(), default=None, help="Cutoff (default: the whole list).")
@click.option("-m", "--measure", default="ndcg", show_default=True,
              help="ndcg or dcg, or one NDCG/DCG measure in any spelling: ndcg_exp@10, nDCG(dcg='exp-log2')@10 ...")
@click.option("-c", "--convention", default="ranklens", show_default=True)
@click.option("--compare", default=None, help="A second convention: which choices make the values differ.")
@click.option("--set", "sets", multiple=True, metavar="FIELD=VALUE", help="Change one convention field.")
@format_option("document")
@column_options
def explain_cmd(judgments: str, run: str | None, query: str, k: int | None, measure: str, convention: str,
                compare: str | None, sets: tuple[str, ...], fmt: str, **kw: Any) -> None:
    """Show how one query's DCG/NDCG is built: position, gain, discount, contribution, ideal."""
    from .._core.explain import explain

    if k is not None and k < 1:
        raise click.BadParameter("must be >= 1", param_hint="-k")
    columns = input_options(kw)
    e = explain(judgments, run, query, k=k, measure=measure, convention=convention, compare=compare,
                **columns, **parse_sets(sets))
    from .._output.render import Document, render_document

    click.echo(render_document(Document(e.table, e.to_dict), fmt))
