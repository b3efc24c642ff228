"""``ranklens experiment``: ab | calibrate | simulate | report | interleaving (online experiments,
``docs/experiments.md``, ``docs/interleaving.md``; the interleaving subcommand and simulate's interleaving log
live in :mod:`ranklens._cli.experiment_interleaving`).

Every error is one line on stderr and exit status 2 (the ``ranklens`` group reports it), never a traceback.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import click

from .experiment_interleaving import interleaving, interleaving_log_options, write_interleaving_log
from .main import format_option, integer, number

__all__ = ["experiment"]

_COLUMNS = ("measure", "arm", "n_units", "n_units_control", "control_mean", "treatment_mean", "estimate", "ci_low",
            "ci_high", "relative", "p_value", "p_adjusted", "significant", "method", "variance_reduction")


def _pairs(items: tuple[str, ...], option: str, kind: Any = float) -> dict[str, Any]:
    """NAME=VALUE items of a repeatable option."""
    out: dict[str, Any] = {}
    for it in items:
        name, sep, value = it.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"expected NAME=VALUE, got {it!r}", param_hint=option)
        try:
            out[name.strip()] = kind(value)
        except ValueError:
            raise click.BadParameter(f"{value!r} is not a number in {it!r}", param_hint=option) from None
    return out


def _attribution(config: str | None) -> Any:
    if config is None:
        return None
    from ..monitor.config import load_config

    return load_config(config).attribution


_AB_OPTIONS = [
    click.argument("events", nargs=-1, required=True, type=click.Path(exists=False)),
    click.option("-m", "--measure", "measures", multiple=True,
                 help="Measure, repeatable: any ranklens measure (ndcg@10, map...) or online measure (clicks@10, "
                      "ctr@10, abandonment, first_click_rr, purchases). Default: ndcg@10 and clicks@10."),
    click.option("--arm-col", default="arm", show_default=True, help="The arm column."),
    click.option("--control", default="control", show_default=True, help="The control arm."),
    click.option("--unit-col", default="user_id", show_default=True, help="The randomisation unit's column."),
    click.option("--group-col", default="group_id", show_default=True, help="The served list's column."),
    click.option("--covariate", "covariates", multiple=True,
                 help="Unit-level column for CUPED (a pre-period value or a model's prediction), repeatable."),
    click.option("--alpha", type=number(min=1e-9, max=0.5), default=0.05, show_default=True,
                 help="Level of the tests (intervals at 1 - alpha)."),
    click.option("--sequential", type=click.Choice(["none", "always_valid", "group_sequential"]), default="none",
                 show_default=True, help="Inference valid under daily looks (needs a timestamp column)."),
    click.option("--spending", type=click.Choice(["obrien_fleming", "pocock", "power"]), default="obrien_fleming",
                 show_default=True, help="Alpha spending of --sequential group_sequential."),
    click.option("--planned-units", type=integer(min=1), default=None,
                 help="Units planned (group-sequential information fractions; the always-valid mixture's tuning)."),
    click.option("--tau", type=number(min=1e-300), default=None,
                 help="Always-valid: the mixing standard deviation of the effect, fixed in advance."),
    click.option("--expected-split", "split", multiple=True, metavar="ARM=SHARE",
                 help="Planned share of an arm for the sample-ratio test, repeatable (default: equal)."),
    click.option("--correction", type=click.Choice(["none", "bonferroni", "holm"]), default="none",
                 show_default=True, help="Over measures x treatment arms."),
    click.option("--config", "config_path", default=None, type=click.Path(dir_okay=False),
                 help="ranklens.toml whose [attribution] turns labels into gains (default: binary on click)."),
    click.option("-c", "--convention", default="ranklens", show_default=True,
                 help="Convention of the ranking measures."),
]


def _ab_options(f: Any) -> Any:
    for opt in reversed(_AB_OPTIONS):
        f = opt(f)
    return f


def _run_ab(events: tuple[str, ...], measures: tuple[str, ...], arm_col: str, control: str, unit_col: str,
            group_col: str, covariates: tuple[str, ...], alpha: float, sequential: str, spending: str,
            planned_units: int | None, tau: float | None, split: tuple[str, ...], correction: str,
            config_path: str | None, convention: str, table: Any = None) -> Any:
    from ..online import AlwaysValid, GroupSequential, ab_test
    from ..online._events import read_events

    design: Any = None
    if sequential == "always_valid":
        design = AlwaysValid(tau=tau, planned_units=planned_units)
    elif sequential == "group_sequential":
        design = GroupSequential(planned_units=planned_units, spending=spending)
    source = table if table is not None else read_events(list(events) if len(events) > 1 else events[0])
    return ab_test(source, list(measures) or ["ndcg@10", "clicks@10"], arm_col=arm_col, control=control,
                   unit_col=unit_col, group_col=group_col, covariates=list(covariates) or None, alpha=alpha,
                   sequential=design, expected_split=_pairs(split, "--expected-split") or None,
                   correction=correction, attribution=_attribution(config_path), convention=convention)


@click.group("experiment")
def experiment() -> None:
    """Online experiments: A/B tests on ranking measures, calibration, a simulator with known truth.

    \b
    ranklens experiment simulate events.parquet       a simulated A/B log with its true effects
    ranklens experiment ab events.parquet -m ndcg@10 -m clicks@10 --covariate pre_period
    ranklens experiment ab events.parquet --sequential always_valid
    ranklens experiment report events.parquet --html page.html --segment-col segment
    ranklens experiment calibrate past.csv --predict 0.01
    ranklens experiment simulate log.parquet --interleaving team_draft
    ranklens experiment interleaving log.parquet --teams treatment,control
    """


experiment.add_command(interleaving)


@experiment.command("ab")
@_ab_options
@format_option("rows")
@click.option("--digits", type=integer(0, 17), default=4, show_default=True, help="Decimals in table output.")
def ab_cmd(fmt: str, digits: int, **kw: Any) -> None:
    """A/B test of EVENTS (Parquet, CSV, TSV, JSON Lines: the monitoring store's event layout with an arm and a
    unit column): each treatment arm against the control, by the delta method over units."""
    res = _run_ab(**kw)
    if fmt == "json":
        from ..render import plain

        click.echo(json.dumps(plain({"rows": list(res.rows), "srm": res.srm, "looks": list(res.looks),
                                     "unit": res.unit, "control": res.control, "alpha": res.alpha,
                                     "correction": res.correction, "sequential": res.sequential}), indent=1))
        return
    from ..render import render_rows
    from ..web.experiment_report import srm_verdict

    cols = list(_COLUMNS) + (["sequential"] if res.sequential else [])
    click.echo(render_rows((cols, [{c: r.get(c) for c in cols} for r in res.rows]), fmt, digits=digits))
    if fmt == "table":
        click.echo(f"unit: {res.unit}; intervals {100 * (1 - res.alpha):g}%; correction: {res.correction}; "
                   f"{srm_verdict(res.srm)}")


@experiment.command("report")
@_ab_options
@click.option("--html", "html_path", required=True, type=click.Path(dir_okay=False),
              help="Write the self-contained page here.")
@click.option("--segment-col", "segment_cols", multiple=True,
              help="A unit-level column (a segment: device, country...) whose values are analysed apart, repeatable.")
@click.option("--title", default=None, help="Title of the page.")
def report_cmd(html_path: str, segment_cols: tuple[str, ...], title: str | None, **kw: Any) -> None:
    """A/B test of EVENTS as one self-contained HTML page: effects, sample ratio, effect over time, segments."""
    import pyarrow.compute as pc

    from ..errors import InputError
    from ..online._events import read_events, source_of
    from ..web.experiment_report import build_experiment_report

    events = kw.pop("events")
    table = read_events(list(events) if len(events) > 1 else events[0])
    res = _run_ab(events=events, table=table, **kw)
    segments: dict[str, dict[str, Any]] = {}
    for col in segment_cols:
        names = {c.lower(): c for c in table.column_names}
        if col.lower() not in names:
            raise InputError(f"{source_of(table)}: no segment column {col!r}; columns are "
                             f"{', '.join(table.column_names)}.")
        values = table.column(names[col.lower()]).cast("string")
        segments[col] = {}
        for v in sorted(x for x in pc.unique(values).to_pylist() if x is not None):
            segments[col][v] = _run_ab(events=events, table=table.filter(pc.equal(values, v)), **kw)
    Path(html_path).write_text(build_experiment_report(res, segments=segments, source=", ".join(events),
                                                       title=title), encoding="utf-8")
    click.echo(f"wrote {html_path}: {len(res.rows)} comparisons, {len(res.looks)} looks")


@experiment.command("calibrate")
@click.argument("experiments", type=click.Path(exists=False))
@click.option("--offline", default="offline_delta", show_default=True, help="Column of the offline deltas.")
@click.option("--online", default="online_delta", show_default=True, help="Column of the online deltas.")
@click.option("--online-se", default="online_se", show_default=True,
              help="Column of the online standard errors (left out when absent).")
@click.option("--offline-se", default="offline_se", show_default=True,
              help="Column of the offline standard errors (left out when absent).")
@click.option("--alpha", type=number(min=1e-9, max=0.5), default=0.05, show_default=True)
@click.option("--predict", multiple=True, type=number(), help="A new offline delta to predict, repeatable.")
@format_option("rows")
@click.option("--digits", type=integer(0, 17), default=4, show_default=True)
def calibrate_cmd(experiments: str, offline: str, online: str, online_se: str, offline_se: str, alpha: float,
                  predict: tuple[float, ...], fmt: str, digits: int) -> None:
    """Offline against online deltas over a table of past EXPERIMENTS (CSV, Parquet, JSON Lines)."""
    from ..online import calibrate
    from ..render import render_rows

    c = calibrate(experiments, offline=offline, online=online, online_se=online_se, offline_se=offline_se,
                  alpha=alpha, predict=list(predict))
    rows = c.rows()
    click.echo(render_rows((["statistic", "value", "ci_low", "ci_high"], rows), fmt, digits=digits))


@experiment.command("simulate")
@click.argument("out", type=click.Path(dir_okay=False))
@click.option("--ranker", "rankers", multiple=True, metavar="ARM=NOISE",
              help="An arm and its ranker's noise (smaller is better), repeatable; the first is the control. "
                   "Default: control=1.0 treatment=0.7.")
@click.option("--split", "split", multiple=True, metavar="ARM=SHARE", help="Planned split, repeatable.")
@click.option("--actual-split", "actual", multiple=True, metavar="ARM=SHARE",
              help="The split users are actually assigned by (to plant a sample-ratio mismatch).")
@click.option("--users", type=integer(min=1, max=50_000_000), default=10_000, show_default=True)
@click.option("--queries", type=integer(min=1, max=1_000_000), default=200, show_default=True)
@click.option("-k", type=integer(min=1, max=100), default=10, show_default=True, help="Items per list.")
@click.option("--click-model", type=click.Choice(["pbm", "cascade", "dbn"]), default="pbm", show_default=True)
@click.option("--days", type=integer(min=1, max=3660), default=14, show_default=True)
@click.option("--sessions-per-user", type=number(min=1), default=3.0, show_default=True)
@click.option("--heterogeneity", type=number(min=0), default=0.5, show_default=True)
@click.option("--rho", type=number(min=0, max=0.999), default=0.0, show_default=True,
              help="Correlation of the pre_period covariate with the users' clicks@10 (control arm).")
@click.option("--judged", is_flag=True, help="Write each item's grade as its relevance.")
@click.option("--seed", type=integer(min=0), default=None)
@click.option("-m", "--measure", "measures", multiple=True,
              help="A measure whose true effect is printed, repeatable (default: ndcg@10, clicks@10).")
@interleaving_log_options
@format_option("rows")
def simulate_cmd(out: str, rankers: tuple[str, ...], split: tuple[str, ...], actual: tuple[str, ...], users: int,
                 queries: int, k: int, click_model: str, days: int, sessions_per_user: float, heterogeneity: float,
                 rho: float, judged: bool, seed: int | None, measures: tuple[str, ...], interleaving_method: str | None,
                 interleave_arms: str | None, fmt: str) -> None:
    """Simulate an A/B log with known truth into OUT (.parquet, .csv or .jsonl) and print the true effects.

    With --interleaving METHOD, OUT is instead an interleaving log of the same users and sessions: each session
    shown two arms' lists interleaved (team labels: the arms), for `ranklens experiment interleaving`."""
    from ..errors import InvalidParameterError
    from ..monitor.simulate.columns import write_table
    from ..online import simulate

    kinds = {".parquet": "parquet", ".csv": "csv", ".jsonl": "jsonl"}
    kind = kinds.get(Path(out).suffix.lower())
    if kind is None:
        raise InvalidParameterError(f"OUT {out!r} must end in .parquet, .csv or .jsonl.")
    sim = simulate(_pairs(rankers, "--ranker") or None, n_users=users, n_queries=queries, k=k,
                   click_model=click_model, days=days, sessions_per_user=sessions_per_user,
                   heterogeneity=heterogeneity, rho=rho, judged=judged, seed=seed,
                   split=_pairs(split, "--split") or None, actual_split=_pairs(actual, "--actual-split") or None)
    if interleaving_method is not None:
        n_rows = write_interleaving_log(sim, out, kind, interleaving_method, interleave_arms, seed)
        click.echo(f"wrote {out}: {n_rows} rows, an interleaving log ({interleaving_method}) of "
                   f"{len(sim.sessions['user'])} sessions, {users} users (teams: arms {', '.join(sim.arms)})",
                   err=fmt != "table")
        _print_truth(sim, measures, fmt)
        return
    table = sim.events
    if kind != "parquet":
        table = table.set_column(table.column_names.index("labels"), "labels", table.column("labels"))
    write_table(table, Path(out), kind)
    click.echo(f"wrote {out}: {table.num_rows} rows, {len(sim.sessions['user'])} lists, {users} users "
               f"(arms {', '.join(sim.arms)}, the first the control)", err=fmt != "table")
    _print_truth(sim, measures, fmt)


def _print_truth(sim: Any, measures: tuple[str, ...], fmt: str) -> None:
    """The true effect of each measure per treatment arm (exact, from the simulation's model)."""
    from ..render import render_rows

    truth = sim.truth(list(measures) or ["ndcg@10", "clicks@10"])
    rows = [r for r in truth.rows if r["arm"] != sim.control]
    if rows and not all(math.isnan(r["difference"]) for r in rows):
        click.echo(render_rows((["measure", "arm", "value", "control", "difference", "relative"],
                                [{k2: r[k2] for k2 in ("measure", "arm", "value", "control", "difference",
                                                       "relative")} for r in rows]), fmt, digits=6))
