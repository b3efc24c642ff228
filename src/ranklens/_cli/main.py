"""The ``ranklens`` command group: its options, the option helpers the commands share, the lazy command table.

Each command lives in its own module (``ranklens._cli.eval``, ``compare``, ``explain``, ``conventions``, ``warmup``,
``trec_eval``, and those of the monitoring and the web app), imported only when it runs: :data:`COMMANDS`
names them. A user's mistake (a missing file, a malformed line, an unknown measure...) prints one line on stderr
and exits with status 2; never a traceback. The public face of this module is :mod:`ranklens.cli`.
"""

from __future__ import annotations

import importlib
import math
import sys
from typing import Any

import click

from .._input.options import COLUMN_KEYS, FORMAT_KEYS
from ..errors import fail, report, set_debug

__all__ = [
    "COMMANDS",
    "INPUT_KEYS",
    "OutputFormat",
    "cli",
    "column_options",
    "comparison_options",
    "format_option",
    "gate_failed",
    "input_options",
    "integer",
    "main",
    "number",
    "parse_gates",
    "quiet_option",
]

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
    click.option("--missing", type=click.Choice(["error", "exclude"]), default=None,
                 help="A missing (or NaN) label or score in a table or JSON: refused (error, the default), or its "
                      "row left out of that side (exclude: no label, no judgment; no score, not ranked), counted "
                      "in the notes."),
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
    """``-f/--format``: an output format of the registry (:mod:`ranklens._output.formats`) that renders ``kind``;
    the choices are read from the registry when the option is used, so a registered format is offered at once.
    An input format that is no output format of ``kind`` gets a hint to the input options."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        from .._output.formats import formats_for

        return formats_for(self.kind)

    @choices.setter
    def choices(self, value: Any) -> None:  # click's __init__ sets them: the registry's are kept
        pass

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from .._input.files import FORMATS as INPUT_FORMATS

        name = value.lower() if isinstance(value, str) else value
        if name in (*INPUT_FORMATS, "letor") and name not in self.choices:
            self.fail(f"{value!r} is not an output format here ({', '.join(self.choices)}); the formats of the "
                      "inputs are --judgments-format and --run-format.", param, ctx)
        return super().convert(value, param, ctx)


def format_option(kind: str, default: str | None = "table", help: str = "Output format.") -> Any:
    """``-f/--format``: the OUTPUT format, the same option in every command; its choices are the registry's formats
    that render ``kind`` (result, comparison, pairs, rows, document or run)."""
    return click.option("-f", "--format", "fmt", type=OutputFormat(kind), default=default,
                        show_default=True, help=help)


_COMPARISON_OPTS = [
    click.option("-b", "--baseline", default=None,
                 help="The run the others are compared with (path or name; default: the first)."),
    click.option("-t", "--test", "test",
                 type=click.Choice(["randomization", "t", "wilcoxon", "bootstrap", "randomized_tukey", "tukey",
                                    "tukey_oneway"]),
                 default="randomization", show_default=True,
                 help="Paired test against the baseline, or of every pair (two-sided); the Tukey HSD "
                      "(randomized_tukey, tukey: queries as blocks, tukey_oneway) with --pairs all."),
    click.option("--correction", type=click.Choice(["holm", "bonferroni", "bh", "none"]), default=None,
                 help="Multiple-testing correction over runs (or pairs) x measures (default: holm; none needed "
                      "with a Tukey test)."),
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
        from .._base.progress import set_quiet

        set_quiet(True)


def quiet_option(f: Any) -> Any:
    """``--quiet``: no progress line on stderr (it is shown only on a terminal, for work over ~2 s)."""
    return click.option("--quiet", is_flag=True, expose_value=False, is_eager=True, callback=_set_quiet,
                        help="No progress line on stderr (shown only on a terminal, for work over ~2 s).")(f)


def gate_failed(lines: list[str]) -> None:
    """A CI gate that fails: one line per failure on stderr, exit status 1 (2 stays for usage errors)."""
    for line in lines:
        click.echo(f"ranklens: fail: {line}", err=True)
    sys.exit(1)


def parse_gates(items: tuple[str, ...], flag: str) -> list[tuple[str, float]]:
    """The ``MEASURE=VALUE`` values of a gate option (``--fail-under``, ``--max-drop``); the measure may hold
    '=' itself (``recall@100(rel=2)=0.5``).

    >>> parse_gates(("ndcg@10=0.01",), "--max-drop")
    [('ndcg@10', 0.01)]
    """
    gates = []
    for item in items:
        key, sep, value = item.rpartition("=")
        try:
            threshold = float(value)
        except ValueError:
            threshold = math.nan
        if not sep or not key.strip() or not math.isfinite(threshold):
            raise click.BadParameter(f"expected MEASURE=VALUE such as ndcg@10=0.70; got {item!r}", param_hint=flag)
        gates.append((key.strip(), threshold))
    return gates


def parse_group_by(items: tuple[str, ...] | str | None) -> list[str]:
    """The columns of ``--group-by`` (given once as ``a,b`` or repeated), in order; an empty name refused.

    >>> parse_group_by(("device,locale",)), parse_group_by(("device", "locale")), parse_group_by(None)
    (['device', 'locale'], ['device', 'locale'], [])
    """
    given = (items,) if isinstance(items, str) else items or ()
    cols = [c.strip() for item in given for c in item.split(",")]
    if any(not c for c in cols):
        raise click.BadParameter(f"expected column names separated by commas; got {', '.join(map(repr, given))}",
                                 param_hint="--group-by")
    if len(set(cols)) < len(cols):
        raise click.BadParameter(f"a column is named twice: {', '.join(cols)}", param_hint="--group-by")
    return cols


# Every command lives in its own module, imported only when it is invoked, so that `ranklens --help` and
# `ranklens eval` import neither duckdb, the web stack nor pyspark.
COMMANDS: dict[str, tuple[str, str, str]] = {
    # name: (module, attribute, one-line help)
    "compare": ("ranklens._cli.compare", "compare_cmd", "Compare runs on the same judgments: means, intervals, paired "
                "tests."),
    "conventions": ("ranklens._cli.conventions", "conventions_cmd", "List the named conventions, or show the fields "
                    "of some."),
    "eval": ("ranklens._cli.eval", "eval_cmd", "Evaluate RUN(s) against JUDGMENTS."),
    "experiment": ("ranklens._cli.experiment", "experiment",
                   "Online experiments: A/B tests, interleaving, calibration, simulator."),
    "counterfactual": ("ranklens._cli.counterfactual", "counterfactual", "Click models and off-policy estimates."),
    "explain": ("ranklens._cli.explain", "explain_cmd", "Show how one query's DCG/NDCG is built."),
    "fuse": ("ranklens._cli.fuse", "fuse_cmd", "Fuse runs into one run (ranx's methods: rrf, sum, mnz, ...)."),
    "monitor": ("ranklens._cli.monitor", "monitor", "Production monitoring: ingest events, report, check, slices."),
    "report": ("ranklens._cli.report", "report", "Self-contained HTML report of an evaluation or comparison."),
    "serve": ("ranklens._cli.serve", "serve", "Local web dashboard over a monitoring store."),
    "trec_eval": ("ranklens._cli.trec_eval", "trec_eval_cmd", "trec_eval's own command line and output, byte for "
                  "byte."),
    "warmup": ("ranklens._cli.warmup", "warmup_cmd", "Compile the kernels now, if this installation needs it."),
}


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        cmd = super().get_command(ctx, name)
        if cmd is not None or name not in COMMANDS:
            return cmd
        module, attr, help_ = COMMANDS[name]
        if ctx.resilient_parsing:
            return click.Command(name, help=help_)
        try:
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
            elif name in COMMANDS:
                rows.append((name, COMMANDS[name][2]))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise  # usage errors: main() (or click itself) prints them
        except (Exception, KeyboardInterrupt) as exc:
            report(exc)  # one line; exit 2 for a user's error, 70 for a bug (errors.EXIT_STATUSES)


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
        from .._base.threads import set_threads

        set_threads(threads)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``ranklens`` command: one line on stderr and status 2 for a user's mistake, 70 for a bug,
    71 for a resource the machine ran out of (:data:`ranklens.errors.EXIT_STATUSES`; 1 only for a failed gate or
    a fired alert; ``--debug`` or ``RANKLENS_DEBUG=1``: the traceback too)."""
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
        fail("interrupted", 130)
    except (Exception, KeyboardInterrupt) as exc:  # raised outside a command (an option's callback...)
        report(exc)
    sys.exit(rv if isinstance(rv, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
