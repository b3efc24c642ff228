"""Command line: ``ranklens eval``, ``explain``, ``compare``, ``conventions``, ``warmup``.

A user's mistake (a missing file, a malformed line, an unknown measure...)
prints one line on stderr and exits with status 2; never a traceback.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
from typing import Any

import click

from .errors import fail, report, set_debug
from .options import COLUMN_KEYS, FORMAT_KEYS, parse_sets, split_options

__all__ = ["main"]

class _Number:
    """A number option in ASCII digits (Python reads ``int("１０")`` as 10: refused, as in measure names)
    and finite (``nan``, ``inf`` refused); a range when bounds are given."""

    # a mixin over click.IntRange / click.FloatRange (below): the attributes and methods it reaches through self and
    # super() are theirs, which mypy cannot see from this class alone, hence the ignores

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.isascii():
            self.fail(f"{value!r} is not a number written in ASCII digits.", param, ctx)  # type: ignore[attr-defined]
        number = super().convert(value, param, ctx)  # type: ignore[misc]
        if isinstance(number, float) and not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)  # type: ignore[attr-defined]
        return number

    def _describe_range(self) -> str:
        unbounded = self.min is None and self.max is None  # type: ignore[attr-defined]
        return "" if unbounded else super()._describe_range()  # type: ignore[misc]


class _Int(_Number, click.IntRange):
    pass


class _Float(_Number, click.FloatRange):
    pass


def integer(min: int | None = None, max: int | None = None) -> Any:
    """The type of an integer option (ASCII digits, within ``[min, max]`` when given).

    >>> integer(min=1).convert("10", None, None)
    10
    """
    kind = _Int(min, max)
    kind.name = "integer" if min is None and max is None else kind.name
    return kind


def number(min: float | None = None, max: float | None = None) -> Any:
    """The type of a number option (finite, ASCII digits, within ``[min, max]`` when given).

    >>> number(min=0).convert("1e-3", None, None)
    0.001
    """
    kind = _Float(min, max)
    kind.name = "float" if min is None and max is None else kind.name
    return kind


_COLUMN_OPTS = [
    click.option("--query-col", default=None, help="Query id column of a table (default: query, qid, group_id...)."),
    click.option("--item-col", default=None, help="Item id column of a table (default: item, doc_id, docno...)."),
    click.option("--score-col", default=None, help="Score column of a table (default: score, prediction...)."),
    click.option("--rank-col", default=None, help="Rank column of a table (rank 1 is best)."),
    click.option("--label-col", default=None, help="Relevance column of a table (default: relevance, label, gain...)."),
    click.option("--judgments-format", default=None,
                 help="Format of JUDGMENTS: trec, svmlight, csv, tsv, parquet, jsonl, json (default: detected)."),
    click.option("--run-format", default=None,
                 help="Format of RUN: trec, predictions, csv, tsv, parquet, jsonl, json (default: detected)."),
    click.option("--groups", default=None, type=click.Path(dir_okay=False),
                 help="Group sizes for a LETOR file without qid: (default: FILE.query beside it)."),
]

#: The input options of :data:`_COLUMN_OPTS`, as keyword names (those of :mod:`ranklens.options`).
INPUT_KEYS = (*COLUMN_KEYS, *FORMAT_KEYS)


def column_options(f: Any) -> Any:
    """The input options of a command: column names, input formats (``--judgments-format``,
    ``--run-format``) and ``--groups``; :func:`input_options` turns them into ``evaluate``'s options."""
    for opt in reversed(_COLUMN_OPTS):
        f = opt(f)
    return f


class OutputFormat(click.Choice):  # type: ignore[type-arg]  # generic from click 8.2
    """``-f/--format``: an output format; an input format given there gets a hint to the input options."""

    _INPUT_ONLY = ("svmlight", "letor", "tsv", "parquet", "jsonl", "predictions")

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.lower() in self._INPUT_ONLY:
            self.fail(f"{value!r} is not an output format ({', '.join(self.choices)}); the formats of the inputs "
                      "are --judgments-format and --run-format.", param, ctx)
        return super().convert(value, param, ctx)


def format_option(choices: tuple[str, ...], default: str = "table") -> Any:
    """``-f/--format``: the OUTPUT format, the same option in every command."""
    return click.option("-f", "--format", "fmt", type=OutputFormat(list(choices)), default=default,
                        show_default=True, help="Output format.")


_COMPARISON_OPTS = [
    click.option("-b", "--baseline", default=None,
                 help="The run the others are compared with (path or name; default: the first)."),
    click.option("-t", "--test", "test", type=click.Choice(["randomization", "t", "wilcoxon", "bootstrap"]),
                 default="randomization", show_default=True, help="Paired test against the baseline (two-sided)."),
    click.option("--correction", type=click.Choice(["holm", "bonferroni", "bh", "none"]), default="holm",
                 show_default=True, help="Multiple-testing correction over runs x measures."),
    click.option("--alpha", type=number(), default=0.05, show_default=True,
                 help="Significance level after correction."),
    click.option("--confidence", type=number(), default=0.95, show_default=True, help="Level of the intervals."),
    click.option("--ci", "ci", type=click.Choice(["bca", "percentile", "t"]), default="bca", show_default=True,
                 help="Interval: bootstrap BCa or percentile, or t (no bootstrap; the t interval is in json/csv too)."),
    click.option("--resamples", type=integer(min=1), default=10000, show_default=True,
                 help="Resamples of the randomization test and the bootstrap."),
    click.option("--seed", type=integer(min=0), default=0, show_default=True,
                 help="Seed: the same numbers on any number of threads."),
    click.option("-c", "--convention", default="ranklens", show_default=True,
                 help="Convention (see `ranklens conventions`)."),
    click.option("--set", "sets", multiple=True, metavar="FIELD=VALUE", help="Change one convention field."),
]


def comparison_options(f: Any) -> Any:
    """The options of a comparison (baseline, test, correction, intervals, resampling, convention)."""
    for opt in reversed(_COMPARISON_OPTS):
        f = opt(f)
    return f


def input_options(kw: dict[str, Any]) -> dict[str, Any]:
    """Pop the input options (:data:`INPUT_KEYS`) from a command's keywords: ``evaluate``'s options.

    >>> kw = {"query_col": "qid", "item_col": None, "judgments_format": "trec", "digits": 4}
    >>> input_options(kw), kw
    ({'query_col': 'qid', 'format': 'trec'}, {'digits': 4})
    """
    given = {k: kw.pop(k) for k in INPUT_KEYS if k in kw}
    out = {k: v for k, v in given.items() if v is not None and v != ""}
    if "judgments_format" in out:
        out["format"] = out.pop("judgments_format")
    return out


def _set_quiet(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        from ._progress import set_quiet

        set_quiet(True)


def quiet_option(f: Any) -> Any:
    """``--quiet``: no progress line on stderr (it is shown only on a terminal, for work over ~2 s)."""
    return click.option("--quiet", is_flag=True, expose_value=False, is_eager=True, callback=_set_quiet,
                        help="No progress line on stderr (shown only on a terminal, for work over ~2 s).")(f)


def _parse_gates(items: tuple[str, ...]) -> list[tuple[str, float]]:
    """``--fail-under MEASURE=VALUE`` values (the measure may hold '=' itself: recall@100(rel=2)=0.5)."""
    gates = []
    for item in items:
        key, sep, value = item.rpartition("=")
        try:
            threshold = float(value)
        except ValueError:
            threshold = math.nan
        if not sep or not key.strip() or math.isnan(threshold):
            raise click.BadParameter(f"expected MEASURE=VALUE such as ndcg@10=0.70; got {item!r}",
                                     param_hint="--fail-under")
        gates.append((key.strip(), threshold))
    return gates


def _gate_failed(lines: list[str]) -> None:
    """A CI gate that fails: one line per failure on stderr, exit status 1 (2 stays for usage errors)."""
    for line in lines:
        click.echo(f"ranklens: fail: {line}", err=True)
    sys.exit(1)


# Commands that live in their own modules (and may need optional extras), imported only when invoked,
# so `ranklens --help` and `ranklens eval` never import duckdb, the web stack or pyspark.
_LAZY: dict[str, tuple[str, str, str]] = {
    # name: (module, attribute, one-line help)
    "monitor": ("ranklens.monitor.cli", "monitor", "Production monitoring: ingest events, report, check, slices."),
    "serve": ("ranklens.web.cli", "serve", "Local web dashboard over a monitoring store."),
    "report": ("ranklens.web.cli", "report", "Self-contained HTML report of an evaluation or comparison."),
}


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(_LAZY))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        cmd = super().get_command(ctx, name)
        if cmd is not None or name not in _LAZY:
            return cmd
        module, attr, help_ = _LAZY[name]
        if ctx.resilient_parsing:
            return click.Command(name, help=help_)
        try:
            import importlib

            return getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("ranklens"):
                return None  # not built yet in this checkout
            raise

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = super().get_command(ctx, name)
            if cmd is not None:
                rows.append((name, cmd.get_short_help_str(limit=formatter.width - 6 - len(name))))
            elif name in _LAZY:
                rows.append((name, _LAZY[name][2]))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise  # usage errors: main() (or click itself) prints them
        except (Exception, KeyboardInterrupt) as exc:
            report(exc)  # one line; exit 2 for a user's error, 1 for a bug


def _set_debug(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    set_debug(value)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ranklens", prog_name="ranklens")
@click.option("--debug", is_flag=True, expose_value=False, is_eager=True, callback=_set_debug,
              help="Print the traceback of an error (also with the environment variable RANKLENS_DEBUG=1).")
@click.option("--threads", type=integer(min=1), default=None, envvar="RANKLENS_THREADS",
              help="Threads for the kernels (default: all cores; env RANKLENS_THREADS). Results do not depend on it.")
@quiet_option
def cli(threads: int | None) -> None:
    """Exact ranking evaluation (NDCG, MAP, MRR, ERR...) under named conventions."""
    if threads is not None:
        from ._threads import set_threads

        set_threads(threads)


@cli.command("eval")
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
@format_option(("table", "json", "csv", "trec", "markdown", "latex", "html"))
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
              help="With --engine spark: evaluate each group of these columns (date, model version, slice); "
                   "repeatable.")
@click.option("--output", "output", default=None,
              help="With --engine spark: write the per-group aggregates (or, with --per-query, the per-query values) "
                   "as Parquet to this path instead of printing them.")
@click.option("--fail-under", "fail_under", multiple=True, metavar="MEASURE=VALUE",
              help="CI gate, repeatable: exit with status 1 when a run's mean of MEASURE is below VALUE "
                   "(e.g. --fail-under ndcg@10=0.70); the measure is evaluated if -m does not name it.")
@quiet_option
@column_options
def eval_cmd(judgments: str, runs: tuple[str, ...], measures: tuple[str, ...], convention: str,
             sets: tuple[str, ...], per_query: bool, fmt: str, digits: int, engine: str, master: str | None,
             partitions: int | None, group_by: tuple[str, ...], output: str | None, fail_under: tuple[str, ...],
             **kw: Any) -> None:
    """Evaluate RUN(s) against JUDGMENTS.

    JUDGMENTS is a TREC qrels, LETOR/svmlight, CSV/TSV, Parquet or JSON Lines
    file; RUN a TREC run, a predictions file or a table. A table holding both
    relevance and scores can be given alone. With --engine spark, both are
    tables (Parquet, CSV or JSON Lines; files or directories, any path Spark
    can read: hdfs://, s3a://...).
    """
    from .evaluate import evaluate

    columns = input_options(kw)
    overrides = parse_sets(sets)
    ms = list(measures) or ["ndcg@10"]
    gates = _parse_gates(fail_under)
    if gates:
        from .measures import parse_measures

        keys = {m.key for m in parse_measures(ms)}
        ms += [g for g, _ in gates if g not in keys and g not in ms]
    if gates and (engine == "spark" and (group_by or output)):
        raise click.UsageError("--fail-under needs one aggregate per run: not with --group-by or --output.")
    if engine == "spark" and group_by and not output and fmt not in ("table", "csv", "json"):
        raise click.UsageError(f"-f {fmt}: the per-group rows of --group-by print as table (tab-separated), csv "
                               "or json.")
    if engine == "spark":
        _eval_spark(judgments, runs, ms, convention, overrides, columns, per_query, fmt, digits, master,
                    partitions, list(group_by), output, gates)
        return
    if group_by or output is not None or master is not None or partitions is not None:
        raise click.UsageError("--group-by, --output, --master and --partitions need --engine spark.")
    from ._progress import Progress

    results = []
    with Progress(max(len(runs), 1), "evaluating") as progress:
        if not runs:
            results.append((judgments, evaluate(judgments, None, ms, convention=convention, **columns, **overrides)))
            progress.advance()
        for run in runs:
            progress.advance(0, f"evaluating {os.path.basename(run)}")
            results.append((run, evaluate(judgments, run, ms, convention=convention, **columns, **overrides)))
            progress.advance()
    _print_results(results, per_query, fmt, digits)
    _check_gates(results, gates)


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
        _gate_failed(failed)


def _eval_spark(judgments: str, runs: tuple[str, ...], ms: list[str], convention: str, overrides: dict[str, Any],
                columns: dict[str, Any], per_query: bool, fmt: str, digits: int, master: str | None,
                partitions: int | None, group_by: list[str], output: str | None,
                gates: list[tuple[str, float]] | None = None) -> None:
    """``--engine spark``: :func:`ranklens.spark.evaluate_files` computes, this prints."""
    from .errors import InvalidParameterError

    _, formats, _ = split_options(columns)
    for given, flag in ((formats.judgments, "--judgments-format"), (formats.run, "--run-format"),
                        (formats.groups, "--groups")):
        if given is not None:
            raise InvalidParameterError(f"{flag} is for the local engine; --engine spark reads tables.")
    from .spark import evaluate_files

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
    from .render import render

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


@cli.command("explain")
@click.argument("judgments", type=click.Path(dir_okay=False))
@click.argument("run", required=False, type=click.Path(dir_okay=False))
@click.option("--query", "-Q", "query", required=True, help="The query id to explain.")
@click.option("-k", "k", type=integer(), default=None, help="Cutoff (default: the whole list).")
@click.option("-m", "--measure", default="ndcg", show_default=True,
              help="ndcg or dcg, or one NDCG/DCG measure in any spelling: ndcg_exp@10, nDCG(dcg='exp-log2')@10 ...")
@click.option("-c", "--convention", default="ranklens", show_default=True)
@click.option("--compare", default=None, help="A second convention: which choices make the values differ.")
@click.option("--set", "sets", multiple=True, metavar="FIELD=VALUE", help="Change one convention field.")
@format_option(("table", "json"))
@column_options
def explain_cmd(judgments: str, run: str | None, query: str, k: int | None, measure: str, convention: str,
                compare: str | None, sets: tuple[str, ...], fmt: str, **kw: Any) -> None:
    """Show how one query's DCG/NDCG is built: position, gain, discount, contribution, ideal."""
    from .explain import explain

    if k is not None and k < 1:
        raise click.BadParameter("must be >= 1", param_hint="-k")
    columns = input_options(kw)
    e = explain(judgments, run, query, k=k, measure=measure, convention=convention, compare=compare,
                **columns, **parse_sets(sets))
    if fmt == "json":
        from .render import plain

        click.echo(json.dumps(plain(e.to_dict()), indent=2, allow_nan=False))
    else:
        click.echo(e.table())


@cli.command("conventions")
@click.argument("names", nargs=-1)
@format_option(("table", "json"))
def conventions_cmd(names: tuple[str, ...], fmt: str) -> None:
    """List the named conventions, or show the fields of some."""
    from .conventions import CONVENTIONS, get_convention

    if fmt == "json":
        from .render import plain

        chosen = [get_convention(n) for n in names] if names else list(CONVENTIONS.values())
        click.echo(json.dumps({c.name: plain(c.as_dict()) for c in chosen}, indent=2, allow_nan=False))
        return
    if not names:
        w = max(len(n) for n in CONVENTIONS)
        for name, c in CONVENTIONS.items():
            click.echo(f"{name:<{w}}  {c.description}")
        return
    for name in names:
        c = get_convention(name)
        click.echo(f"[{c.name}]  {c.mirrors}")
        for key, value in c.as_dict().items():
            if key not in ("name", "description", "mirrors"):
                click.echo(f"  {key} = {value!r}")


@cli.command("warmup")
@click.option("--jit", "force", is_flag=True,
              help="Compile the JIT kernels even when the ahead-of-time ones are installed (for RANKLENS_KERNELS=jit).")
def warmup_cmd(force: bool) -> None:
    """Compile the kernels now, if this installation needs it (it did not get the ahead-of-time ones)."""
    from ._warmup import warmup

    click.echo(warmup(force=force))


@cli.command("trec_eval", add_help_option=False,
             context_settings={"ignore_unknown_options": True, "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def trec_eval_cmd(args: tuple[str, ...]) -> None:
    """trec_eval's own command line (-q, -c, -m P.5,10, -M, -l, -J ... qrels run): its output, byte for byte.
    Here -c is trec_eval's (every judged query), not --convention. 'ranklens trec_eval -h' for more."""
    from .trec_eval_cli import run

    run(args)


@cli.command("compare")
@click.argument("judgments", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-m", "--measure", "measures", multiple=True, help="Measure, repeatable (default: ndcg@10).")
@comparison_options
@format_option(("table", "json", "csv", "markdown", "latex", "html"))
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
    from .compare import compare
    from .errors import InvalidParameterError

    if len(runs) < 2:
        raise InvalidParameterError(f"compare needs at least two runs; got {len(runs)}.")
    columns = input_options(kw)
    overrides = parse_sets(sets)
    if plot_dir is not None:
        from ._deps import require

        require("matplotlib")  # fail before the work, not after
    c = compare(judgments, list(runs), list(measures) or ["ndcg@10"], baseline=baseline, convention=convention,
                test=test, correction=correction, alpha=alpha, confidence=confidence, ci=ci, n_resamples=resamples,
                seed=seed, **columns, **overrides)
    if plot_dir is not None:
        from .plot import cutoff_curves, plot_comparison

        curves = cutoff_curves(judgments, dict(zip(c.runs, runs)), c.metrics, convention=convention,
                               **columns, **overrides)
        written = plot_comparison(c, plot_dir, curves)
        click.echo(f"ranklens: wrote {len(written)} plots to {plot_dir}", err=True)
    from .render import render

    text = render(c, fmt, digits=digits)
    click.echo(text, nl=not text.endswith("\n"))
    if fail_if_worse and c.regressions():
        s = c.settings
        _gate_failed([
            f"{r['run']}: {r['metric']} is significantly worse than {c.baseline} by {-r['diff']:.4f} "
            f"({r['mean']:.4f} vs {c.row(c.baseline, r['metric'])['mean']:.4f} over {r['n_pairs']} queries; "
            f"p = {r['p_adjusted']:.4g} after {s['correction']}, {s['test']} test, alpha {s['alpha']:g})"
            for r in c.regressions()
        ])


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``ranklens`` command: one line on stderr and status 2 for a user's mistake,
    status 1 and one line for anything else (``--debug`` or ``RANKLENS_DEBUG=1``: the traceback too)."""
    args = sys.argv[1:] if argv is None else argv
    if not args:
        click.echo(cli.get_help(click.Context(cli, info_name="ranklens")))
        sys.exit(0)
    try:
        rv = cli.main(args=args, prog_name="ranklens", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        sys.exit(0)
    except click.UsageError as exc:
        path = exc.ctx.command_path if exc.ctx is not None else "ranklens"
        fail(f"{exc.format_message()} (see '{path} --help')")
    except click.ClickException as exc:
        fail(exc.format_message(), exc.exit_code if exc.exit_code else 2)
    except click.exceptions.Abort:
        fail("aborted", 1)
    except (Exception, KeyboardInterrupt) as exc:  # raised outside a command (an option's callback...)
        report(exc)
    sys.exit(rv if isinstance(rv, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
