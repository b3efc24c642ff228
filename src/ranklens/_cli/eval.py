"""``ranklens eval``: runs evaluated against judgments, printed in an output format; ``--fail-under`` gates;
``--engine spark``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from typing import Any

import click

from .._input.irds import is_irds, load_irds
from .._input.options import parse_sets, split_options
from .main import (
    column_options,
    format_option,
    gate_failed,
    input_options,
    integer,
    parse_gates,
    parse_group_by,
    quiet_option,
)

__all__ = ["eval_cmd"]



@click.command("eval")
@click.argument("judgments", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@click.option("-m", "--measure", "measures", multiple=True,
              help="Measure, repeatable: ndcg@10, map, mrr@10, P@10, recall@100, err@20, ndcg_cut.10 ...")
@click.option("-c", "--convention", default="ranklens", show_default=True,
              help="ranklens, sklearn, trec_eval, trec_eval10, ir_measures, gdeval, ranx, lightgbm, xgboost, "
                   "catboost, torchmetrics, evidently.")
@click.option("--set", "sets", multiple=True, metavar="FIELD=VALUE",
              help="Change one convention field, e.g. --set gain=exponential --set empty=0.")
@click.option("-q", "--per-query", is_flag=True, help="Also print per-query values.")
@format_option("result")
@click.option("--digits", type=integer(0, 17), default=4, show_default=True,
              help="Decimals in table, trec, markdown, latex and html output (json and csv: full precision).")
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local", show_default=True,
              help="spark: read Parquet/CSV/JSON Lines tables with Spark and compute in its executors "
                   "(needs pip install 'ranklens[spark]'); same numbers as local.")
@click.option("--master", default=None, help="Spark master URL (with --engine spark; default: local[*], or the "
              "one spark-submit sets).")
@click.option("--partitions", type=integer(min=1), default=None,
              help="Spark partitions of the shuffle by query (default: spark.sql.shuffle.partitions).")
@click.option("--group-by", "group_by", multiple=True,
              help="Evaluate each group of rows by this column of the run's (else the judgments') table: one "
                   "result per group (device, locale, query length); several columns as a,b (or the option "
                   "repeated): one result per combination.")
@click.option("--output", "output", default=None,
              help="With --engine spark: write the per-group aggregates (or, with --per-query, the per-query values) "
                   "as Parquet to this path instead of printing them.")
@click.option("--candidates", default=None, type=click.Path(dir_okay=False),
              help="A two-stage system: the first stage's run (candidate generation), each RUN being the final "
                   "ranking; prints recall of the candidates, NDCG@k of the ranking, the NDCG@k of the ideal "
                   "re-ranking of the candidates and each stage's loss, per query (-q) and on average.")
@click.option("--depth", type=integer(min=1), default=None,
              help="With --candidates: the candidates per query handed to the ranker (default: all).")
@click.option("--fail-under", "fail_under", multiple=True, metavar="MEASURE=VALUE",
              help="CI gate, repeatable: exit with status 1 when a run's mean of MEASURE is below VALUE "
                   "(e.g. --fail-under ndcg@10=0.70); the measure is evaluated if -m does not name it.")
@quiet_option
@column_options
def eval_cmd(judgments: str, runs: tuple[str, ...], measures: tuple[str, ...], convention: str,
             sets: tuple[str, ...], per_query: bool, fmt: str, digits: int, engine: str, master: str | None,
             partitions: int | None, group_by: tuple[str, ...], output: str | None, candidates: str | None,
             depth: int | None, fail_under: tuple[str, ...], **kw: Any) -> None:
    """Evaluate RUN(s) against JUDGMENTS.

    JUDGMENTS is a TREC qrels, LETOR/svmlight, CSV/TSV, Parquet or JSON Lines
    file, or irds:<dataset id> (its qrels, with ir_datasets installed and the
    files on this machine: nothing is downloaded); RUN a TREC run, a
    predictions file, a table or irds:<dataset id> (its scoreddocs). A table holding both
    relevance and scores can be given alone. With --engine spark, both are
    tables (Parquet, CSV or JSON Lines; files or directories, any path Spark
    can read: hdfs://, s3a://...).
    """
    from .._core.evaluate import evaluate

    columns = input_options(kw)
    overrides = parse_sets(sets)
    group_by = tuple(parse_group_by(group_by))
    if candidates is not None or depth is not None:
        if candidates is None or engine != "local" or fail_under or group_by or output:
            raise click.UsageError("--depth needs --candidates, which works with the local engine and without "
                                   "--fail-under, --group-by or --output.")
        from .stages import eval_two_stage

        eval_two_stage(judgments, runs, candidates, depth, measures, convention, overrides, columns, fmt, digits,
                       per_query)
        return
    ms = list(measures) or ["ndcg@10"]
    gates = parse_gates(fail_under, "--fail-under")
    if gates:
        from .._defs.measures import parse_measures

        keys = {m.key for m in parse_measures(ms)}
        ms += [g for g, _ in gates if g not in keys and g not in ms]
    if gates and (group_by or (engine == "spark" and output)):
        raise click.UsageError("--fail-under needs one aggregate per run: not with --group-by or --output.")
    if engine == "spark" and group_by and not output and fmt not in ("table", "csv", "json"):
        raise click.UsageError(f"-f {fmt}: the per-group rows of --group-by print as table (tab-separated), csv "
                               "or json.")
    if engine == "spark" and any(is_irds(a) for a in (judgments, *runs)):
        raise click.UsageError("irds: ids are read locally: not with --engine spark.")
    if group_by and any(is_irds(a) for a in (judgments, *runs)):
        raise click.UsageError("--group-by: the records of an irds: id have no group column.")
    if engine == "spark":
        _eval_spark(judgments, runs, ms, convention, overrides, columns, per_query, fmt, digits, master,
                    partitions, list(group_by), output, gates)
        return
    if output is not None or master is not None or partitions is not None:
        raise click.UsageError("--output, --master and --partitions need --engine spark.")
    judged: Any = load_irds(judgments, "judgments") if is_irds(judgments) else judgments
    if group_by:
        _eval_grouped(judgments, runs, ms, convention, {**columns, **overrides}, list(group_by), per_query, fmt,
                      digits)
        return
    from .._base.progress import Progress

    results = []
    with Progress(max(len(runs), 1), "evaluating") as progress:
        if not runs:
            results.append((judgments, evaluate(judged, None, ms, convention=convention, **columns, **overrides)))
            progress.advance()
        for run in runs:
            progress.advance(0, f"evaluating {os.path.basename(run)}")
            rankings = load_irds(run, "run") if is_irds(run) else run
            results.append((run, evaluate(judged, rankings, ms, convention=convention, **columns, **overrides)))
            progress.advance()
    _print_results(results, per_query, fmt, digits)
    _check_gates(results, gates)


def _eval_grouped(judgments: str, runs: tuple[str, ...], ms: list[str], convention: str, options: dict[str, Any],
                  group_by: list[str], per_query: bool, fmt: str, digits: int) -> None:
    """``--group-by`` on the local engine: per run, one result per group (a column per group in the table),
    what the grouping left out on stderr."""
    from .._core.evaluate import evaluate
    from .._output.render import render

    if fmt == "trec":
        raise click.UsageError("-f trec: trec_eval's layout has no groups; use table, json, csv, markdown, latex "
                               "or html.")
    for run in runs or (None,):
        res = evaluate(judgments, run, ms, convention=convention,
                       group_by=group_by[0] if len(group_by) == 1 else group_by, **options)
        if len(runs) > 1 and fmt in ("table", "markdown"):
            click.echo(f"{os.path.basename(run or judgments)}: groups by {res.by}")
        text = render(res, fmt, digits=digits, per_query=per_query)
        click.echo(text, nl=not text.endswith("\n"))
        for note in res.notes:
            click.echo(f"ranklens: note: {os.path.basename(run or judgments)}: {note}", err=True)


def _check_gates(results: list[tuple[str, Any]], gates: list[tuple[str, float]]) -> None:
    """``--fail-under``: every run's mean of each gated measure must reach its threshold."""
    failed = []
    for name, res in results:
        run = f" ({os.path.basename(name)})"
        for key, threshold in gates:
            value = res.aggregate.get(key, math.nan)
            if math.isnan(value):
                failed.append(f"{key} = n/a: no query counted, below {threshold:g}{run}")
            elif value < threshold:
                failed.append(f"{key} = {value:.4f} is below {threshold:g} by {threshold - value:.4f}{run}")
    if failed:
        gate_failed(failed)


def _eval_spark(judgments: str, runs: tuple[str, ...], ms: list[str], convention: str, overrides: dict[str, Any],
                columns: dict[str, Any], per_query: bool, fmt: str, digits: int, master: str | None,
                partitions: int | None, group_by: list[str], output: str | None,
                gates: list[tuple[str, float]] | None = None) -> None:
    """``--engine spark``: :func:`ranklens.spark.evaluate_files` computes, this prints."""
    from ..errors import InvalidParameterError

    _, formats, _ = split_options(columns)
    for given, flag in ((formats.judgments, "--judgments-format"), (formats.run, "--run-format"),
                        (formats.groups, "--groups")):
        if given is not None:
            raise InvalidParameterError(f"{flag} is for the local engine; --engine spark reads tables.")
    from ..spark import evaluate_files

    done = evaluate_files(judgments, runs, ms, convention=convention, per_query=per_query, group_by=group_by,
                          output=output, partitions=partitions, master=master, **columns, **overrides)
    results = []
    for run in done:
        if run.written is not None:
            click.echo(f"{run.name}: wrote {'per-query values' if per_query else 'per-group aggregates'} to "
                       f"{run.written}")
        elif run.table is not None:
            _print_arrow(run.table, fmt, run.name if len(runs) > 1 else None)
        else:
            results.append((run.name, run.result))
    if results:
        _print_results(results, per_query, fmt, digits)
        _check_gates(results, gates or [])


def _print_arrow(table: Any, fmt: str, name: str | None) -> None:
    """Spark's per-group rows: json, csv, else tab-separated."""
    rows = table.to_pylist()
    if fmt == "json":
        click.echo(json.dumps({"run": name, "rows": rows} if name else rows, indent=2, default=str))
        return
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n", delimiter="," if fmt == "csv" else "\t")
    w.writerow(([] if name is None else ["run"]) + table.column_names)
    for r in rows:
        w.writerow(([] if name is None else [name]) + [repr(v) if isinstance(v, float) else v for v in r.values()])
    click.echo(buf.getvalue(), nl=False)


def _print_results(results: list[tuple[str, Any]], per_query: bool, fmt: str, digits: int) -> None:
    """The results of (path, Result) pairs in the output format, each named by its file name (its path when
    two share one); json of one run is that result's schema (``Result.to_dict``), of several ``{"runs": ...}``."""
    from .._output.render import render

    names = [os.path.basename(path) for path, _ in results]
    if len(set(names)) < len(names):  # the same file name in two folders: the paths as given
        names = [path for path, _ in results]
    named: dict[str, Any] = {}
    for name, (_, res) in zip(names, results):
        label, n = name, 1
        while label in named:  # one file given twice
            n += 1
            label = f"{name} ({n})"
        named[label] = res
    obj: Any = results[0][1] if fmt == "json" and len(results) == 1 else named
    text = render(obj, fmt, digits=digits, per_query=per_query)
    click.echo(text, nl=not text.endswith("\n"))
