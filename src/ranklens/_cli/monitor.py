"""``ranklens monitor``: ingest | ingest-results | report | check | signals | slices | groups | explain | info |
simulate."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from .main import format_option, integer, number
from .monitor_alerts import ALERT_COMMANDS
from .monitor_options import (
    CONFIG,
    FORMAT,
    RANGE,
    STORE,
    WAIT,
    WHERE,
    one_of,
    open_store,
    opts,
    parse_where,
    print_table,
    renamed_option,
)
from .monitor_simulate import simulate_command

__all__ = ["monitor"]

@click.group("monitor")
def monitor() -> None:
    """Production monitoring: events to gains, NDCG over time, baselines, alerts, root cause.

    \b
    ranklens monitor simulate events/          a realistic event stream with a planted decay
    ranklens monitor ingest events/            load events into ranklens.duckdb
    ranklens monitor report -m ndcg -k 1 -k 5 -k 10
    ranklens monitor check                     alerts as JSON; exit status 1 when one fires
    ranklens monitor alerts                    alerts recorded: open, resolved
    ranklens monitor report --html page.html   the monitoring of a time range, one file to share
    ranklens monitor slices                    which slices (one column or two) explain a drop
    ranklens monitor signals                   label-free signals: score drift, coverage, Gini...
    ranklens monitor explain GROUP_ID          one served list, position by position
    """


@monitor.command("ingest")
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=False))
@opts(STORE, CONFIG, WAIT)
@click.option("--max-quarantine", "max_quarantine", default=None, type=number(min=0, max=1), metavar="FRACTION",
              help="Keep out whole (nothing stored) a file with more than this fraction of its rows quarantined, "
                   "and exit with status 3 (default: [ingest] max_quarantine, else no limit).")
@format_option("document", help="Output format of the summary.")
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local", show_default=True,
              help="spark: reduce the events to served lists in Spark's executors (needs pip install "
                   "'ranklens[spark]'); the store's contents are the same as with local.")
@click.option("--master", default=None, help="Spark master URL (with --engine spark; default: local[*]).")
@click.option("--spark-conf", "spark_conf", multiple=True, metavar="KEY=VALUE",
              help="A Spark setting for the session the ingest starts (with --engine spark; repeatable), e.g. "
                   "--spark-conf spark.driver.memory=6g: the driver takes each chunk's rows whole, and Spark's "
                   "default 1 GB runs out at about 10 million events.")
def ingest_cmd(sources: tuple[str, ...], store_path: str, config_path: str | None, wait: float,
               max_quarantine: float | None, fmt: str, engine: str, master: str | None,
               spark_conf: tuple[str, ...]) -> None:
    """Load event files (Parquet, CSV, TSV, JSON Lines; or directories of them) into the store.

    Each file is one atomic batch; a file ingested before adds nothing. Invalid rows are quarantined
    with their reason and counted. Exit status 3 when a file was kept out by --max-quarantine (the
    other files are ingested), 2 for an error.
    """
    st = open_store(store_path, config_path, wait)
    if master is not None and engine != "spark":
        raise click.UsageError("--master needs --engine spark.")
    if spark_conf and engine != "spark":
        raise click.UsageError("--spark-conf needs --engine spark.")
    conf: dict[str, str] = {}
    for item in spark_conf:
        key, eq, value = item.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise click.UsageError(f"--spark-conf takes KEY=VALUE (e.g. spark.driver.memory=6g); got {item!r}.")
        conf[key.strip()] = value.strip()
    summary = st.ingest(list(sources), max_quarantine=max_quarantine, engine=engine, master=master,
                        spark_conf=conf or None)
    refused = f", {len(summary.refused)} files refused (nothing stored)" if summary.refused else ""
    text = (f"{summary}\ntotal: {summary.rows} rows, {summary.groups} new groups, {summary.quarantined} quarantined, "
            f"{summary.skipped} skipped (groups already in the store){refused} -> {store_path}")
    from .._output.render import Document, render_document

    click.echo(render_document(Document(lambda: text, summary.to_dict, indent=1), fmt))
    if summary.refused:
        sys.exit(3)


@monitor.command("ingest-results")
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=False))
@opts(STORE, CONFIG, WAIT)
def ingest_results_cmd(sources: tuple[str, ...], store_path: str, config_path: str | None, wait: float) -> None:
    """Load per-group values computed elsewhere (e.g. ranklens.spark.evaluate(..., per_query=True)).

    Columns: timestamp, model, model_version, environment, group_id, slice columns, and one column per
    measure named by its key (ndcg@10, ...).
    """
    st = open_store(store_path, config_path, wait)
    summary = st.ingest_results(list(sources))
    for b in summary.batches:
        click.echo(f"{b['source']}: {b['status']}, {b['groups']} groups added, {b['skipped']} skipped")


@monitor.command("report")
@click.option("-m", "--measure", "measures", multiple=True, help="Measure, repeatable (default: ndcg).")
@renamed_option("--metric", "-m/--measure", "old_metrics", multiple=True)
@click.option("-k", "ks", multiple=True, type=integer(min=1, max=1000),
              help="Cutoff for measures given without one, repeatable (default: 1, 5, 10).")
@click.option("--window", type=click.Choice(["hour", "day", "week"]), default="day", show_default=True)
@click.option("--by", "by", multiple=True,
              help="Series column, repeatable (default: model, model_version, environment).")
@opts(WHERE, *RANGE)
@click.option("--ci", type=click.Choice(["bootstrap", "t", "none"]), default="bootstrap", show_default=True,
              help="Confidence interval of each mean (bootstrap over groups).")
@click.option("--resamples", default=1000, show_default=True, type=integer(min=10, max=10**7))
@click.option("--html", "html_path", default=None, type=click.Path(dir_okay=False), metavar="FILE",
              help="Instead: write the monitoring of the time range (overview, slices, alerts) as one self-contained "
                   "HTML page to share (one measure; default ndcg@10).")
@opts(STORE, CONFIG, WAIT, FORMAT)
def report_cmd(measures: tuple[str, ...], old_metrics: tuple[str, ...], ks: tuple[int, ...], window: str,
               by: tuple[str, ...], where: tuple[str, ...], start: str | None, end: str | None, ci: str, resamples: int,
               html_path: str | None, store_path: str, config_path: str | None, wait: float, fmt: str) -> None:
    """Metric per time window and series, with confidence intervals.

    With --html FILE: the monitoring of [--start, --end) as one HTML file (no server, no network needed): the
    measure per window and series against each series' baseline, the slices of the range (the last day when no
    range is given) and the alerts recorded.
    """
    measures = tuple(measures) + tuple(old_metrics)
    st = open_store(store_path, config_path, wait, read_only=True)
    if html_path:
        from ..monitor.storage.params import measure_keys
        from ..web.monitor_report import write_monitor_report

        keys = measure_keys(list(measures) or ["ndcg@10"], list(ks) or None)
        if len(keys) != 1:
            raise click.UsageError(f"--html draws one measure; got {', '.join(keys)}")
        out = write_monitor_report(html_path, st, measure=keys[0], window=window,
                                   by=list(by) if by else ("model", "model_version", "environment"),
                                   where=parse_where(where), start=start, end=end, ci=ci)
        click.echo(f"ranklens: wrote {out}", err=True)
        return
    measures = measures or ("ndcg",)
    if not ks and any("@" not in m and "." not in m for m in measures):
        ks = (1, 5, 10)
    table = st.report(list(measures), window=window, by=list(by) if by else ("model", "model_version", "environment"),
                      where=parse_where(where), start=start, end=end, k=list(ks), ci=None if ci == "none" else ci,
                      n_resamples=resamples)
    if ci == "none":
        table = table.drop_columns(["ci_low", "ci_high"])
    print_table(table, fmt)


@monitor.command("signals")
@renamed_option("--metric", "-s/--signal", "old_names", multiple=True, short="-m")
@click.option("-s", "--signal", "names", multiple=True,
              help="Signal, repeatable (default: all): psi(score), ks(score), psi(position), psi(popularity@K), "
                   "coverage[@K], gini[@K], novelty[@K], ild[@K].")
@click.option("--window", type=click.Choice(["hour", "day", "week"]), default="day", show_default=True)
@click.option("--by", "by", multiple=True,
              help="Series column, repeatable (default: model, model_version, environment).")
@opts(WHERE, *RANGE)
@click.option("--baseline", default=None,
              help="training | validation | production | previous | START..END (default: the configuration's).")
@click.option("--items", "items_path", default=None, type=click.Path(dir_okay=False),
              help="Item attributes for ild: Parquet/CSV/JSON Lines file(s) (a glob pattern too, e.g. event files) "
                   "with item_id and --attribute.")
@click.option("--attribute", default=None, help="The item attribute column of --items (e.g. category).")
@click.option("--catalogue-size", type=integer(min=1), default=None,
              help="Catalogue size for coverage (default: the items the baseline served).")
@opts(STORE, CONFIG, WAIT, FORMAT)
def signals_cmd(old_names: tuple[str, ...], names: tuple[str, ...], window: str, by: tuple[str, ...],
                where: tuple[str, ...], start: str | None,
                end: str | None, baseline: str | None, items_path: str | None, attribute: str | None,
                catalogue_size: int | None, store_path: str, config_path: str | None, wait: float, fmt: str) -> None:
    """Label-free signals per window and series against the baseline: score drift (PSI, KS), positions,
    catalogue coverage, popularity concentration (Gini), novelty, intra-list diversity.

    They need no outcome, so they move as soon as a broken ranker serves (docs/monitoring.md).
    """
    st = open_store(store_path, config_path, wait, read_only=True)
    names = tuple(names) + tuple(old_names)
    table = st.signals(list(names) or None, window=window, by=list(by) if by else ("model", "model_version",
                       "environment"), where=parse_where(where), start=start, end=end, baseline=baseline,
                       items=items_path, attribute=attribute, catalogue_size=catalogue_size)
    print_table(table, fmt)


@monitor.command("slices")
@click.option("-m", "--measure", "measure", default=None, help="Measure (as in report and eval; default ndcg@10).")
@renamed_option("--metric", "-m/--measure", "old_metric")
@opts(*RANGE)
@click.option("--baseline", default=None,
              help="training | validation | production | previous | START..END (default: the configuration's).")
@click.option("--column", "columns", multiple=True, help="Slice column, repeatable (default: all).")
@click.option("--by", "by", multiple=True,
              help="Series column, repeatable (default: model, model_version, environment); each series is "
                   "compared with its own baseline, as the monitors do.")
@click.option("--depth", type=click.Choice(["1", "2", "3"]), default="2", show_default=True,
              help="1: one column at a time; 2: also every pair of columns (country x device); 3: also triples.")
@click.option("--min-support", default=30, show_default=True, type=integer(min=1),
              help="Counted groups a slice needs in the window and in the baseline to be listed alone "
                   "(smaller ones are pooled into one '(other)' row).")
@click.option("--correction", type=click.Choice(["holm", "bh", "none"]), default="holm", show_default=True,
              help="Correction of the p-values for the number of slices listed (Holm, Benjamini-Hochberg).")
@opts(WHERE)
@click.option("--drill", default=None, metavar="COL=VALUE",
              help="Instead: the worst groups of one slice value in the window (repeatable with --where).")
@click.option("--limit", default=20, show_default=True, type=integer(min=1, max=10**9))
@click.option("--auto", "auto", is_flag=True,
              help="Instead: the automatic slice search of `slices = \"auto\"` monitors: the slices (values and "
                   "combinations of up to --depth columns) that cross the rule against their own baseline, "
                   "significant once the p-values are adjusted over every slice tested.")
@click.option("--relative-drop", default=None, type=number(min=0, max=1), help="--auto: fire more than this "
              "fraction below the slice's baseline (default 0.1 when no rule is given).")
@click.option("--absolute-drop", default=None, type=number(min=0), help="--auto: more than this below it.")
@click.option("--threshold", default=None, type=float, help="--auto: below this value.")
@click.option("--significance", default=0.05, show_default=True, type=number(min=0, max=1),
              help="--auto: adjusted one-sided p-value of the drop below this.")
@opts(STORE, CONFIG, WAIT, FORMAT)
def slices_cmd(measure: str | None, old_metric: str | None, start: str | None, end: str | None, baseline: str | None,
               columns: tuple[str, ...], by: tuple[str, ...], depth: str, min_support: int, correction: str,
               where: tuple[str, ...], drill: str | None, limit: int, auto: bool, relative_drop: float | None,
               absolute_drop: float | None, threshold: float | None, significance: float, store_path: str,
               config_path: str | None, wait: float, fmt: str) -> None:
    """Rank slices (one column's values, and pairs of two columns' values) by their contribution to the change
    between each series' baseline and a window.

    The window is [--start, --end) (default: the last day in the store), for the slices and for --drill.
    Below the table, the command that lists each row's groups.
    """
    from ..monitor.reports.links import groups_command

    measure = one_of(measure, old_metric, "ndcg@10", "-m/--measure")
    st = open_store(store_path, config_path, wait, read_only=True)
    w = parse_where(where)
    s, e = st.window(start, end)
    if auto:
        rule = {"threshold": threshold, "relative_drop": relative_drop, "absolute_drop": absolute_drop}
        if all(v is None for v in rule.values()):
            rule["relative_drop"] = 0.1
        _auto_slices(st, measure, s, e, baseline, columns, by, int(depth), min_support, correction, w, rule,
                     significance, limit, fmt)
        return
    if drill:
        w.update(parse_where((drill,)))
        table = st.groups(measure, start=s, end=e, where=w, order="worst", limit=limit)
        print_table(table, fmt)
        return
    series = list(by) if by else ["model", "model_version", "environment"]
    table = st.slices(measure, start=s, end=e, baseline=baseline, columns=list(columns) or None, where=w, by=series,
                      depth=int(depth), min_support=min_support, correction=correction)
    meta = json.loads(table.schema.metadata[b"ranklens"])
    rows = table.to_pylist()[:limit]
    commands = [groups_command(meta["measure"], meta["window_start"], meta["window_end"], w, r, series) for r in rows]
    if fmt != "table":
        import pyarrow as pa

        table = table.slice(0, limit).append_column("groups_command", pa.array(commands, pa.string()))
        print_table(table, fmt)
        return
    click.echo(f"{meta['measure']}, window {meta['window_start'][:19]}..{meta['window_end'][:19]}"
               f"{_provisional_note(meta)}, p-values "
               f"{ {'holm': 'Holm', 'bh': 'Benjamini-Hochberg', 'none': 'not'}[correction]}-adjusted over "
               f"{meta['n_tested']} slices:")
    for sm in meta["series"]:
        name = " ".join(f"{k}={v}" for k, v in sm["series"].items()) or "all groups"
        click.echo(f"  {name}: baseline ({sm['baseline']}) {sm['baseline_value']:.4f} over {sm['n_baseline']} "
                   f"groups -> {sm['window_value']:.4f} over {sm['n_window']} groups (change {sm['change']:+.4f})")
    for sk in meta["skipped"]:
        click.echo(f"  {' '.join(f'{k}={v}' for k, v in sk['series'].items())}: left out, {sk['reason']}")
    keep = [*series, "slice", "n_baseline", "n_window", "baseline_value", "window_value", "change",
            "share_window", "rate_effect", "mix_effect", "contribution", "p_value", "p_adjusted"]
    shown = [{**{k: r[k] for k in keep if k in r},
              "slice": f"{r['column']}={r['value']}" + (f" {r['column2']}={r['value2']}" if r["column2"] else "")
              + (f" ({r['n_cells']} below support)" if r["pooled"] else ""),
              **{p: _pvalue(r[p]) for p in ("p_value", "p_adjusted")}} for r in rows]
    import pyarrow as pa

    print_table(pa.Table.from_pylist([{k: d.get(k) for k in keep} for d in shown]) if shown else table, fmt)
    if any(commands):
        click.echo("\nthe groups of each row (worst first):")
        for i, c in enumerate(commands, start=1):
            if c:
                click.echo(f"  {i:>3}  {c}")


def _auto_slices(st: Any, measure: str, s: Any, e: Any, baseline: str | None, columns: tuple[str, ...],
                 by: tuple[str, ...], depth: int, min_support: int, correction: str, w: dict[str, Any],
                 rule: dict[str, Any], significance: float, limit: int, fmt: str) -> None:
    """``monitor slices --auto``: the slices that cross the rule, most harmful first."""
    import pyarrow as pa

    series = list(by) if by else ["model", "model_version", "environment"]
    table = st.auto_slices(measure, s, e, baseline, list(columns) or None, w, by=series, max_columns=depth,
                           min_support=min_support, correction=correction, significance=significance, **rule)
    meta = json.loads(table.schema.metadata[b"ranklens"])
    rows = table.to_pylist()[:limit]
    if fmt != "table":
        print_table(table.slice(0, limit) if table.num_rows else pa.table({}), fmt)
        return
    how = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "not"}[correction]
    click.echo(f"{meta['measure']}, window {meta['window_start'][:19]}..{meta['window_end'][:19]}"
               f"{_provisional_note(meta)}: {len(table)} of "
               f"{meta['n_tested']} slices tested cross the rule (p-values of the drop {how}-adjusted, < "
               f"{significance:g}):")
    keep = [*series, "slice", "n_baseline", "n_window", "baseline_value", "window_value", "relative_change",
            "contribution", "p_drop_adjusted"]
    from ..monitor.reports.search import cell_name

    shown = [{**{k: r.get(k) for k in keep}, "slice": cell_name(r), "p_drop_adjusted": _pvalue(r["p_drop_adjusted"])}
             for r in rows]
    if shown:
        print_table(pa.Table.from_pylist(shown), fmt)


def _provisional_note(meta: dict[str, Any]) -> str:
    """`` (provisional: ...)`` when the window ends after the labels' maturity (its values may still rise)."""
    return " (provisional: its labels are not mature, values may still rise)" if meta.get("provisional") else ""


def _pvalue(p: float | None) -> str:
    """A p-value as text: 4 decimals, or 2 significant digits below 1e-4 (so 3e-31 does not print as 0.0000)."""
    if p is None or p != p:
        return ""
    return f"{p:.2g}" if p < 1e-4 else f"{p:.4f}"


@monitor.command("groups")
@click.option("-m", "--measure", "measure", default=None, help="Measure (as in report and eval; default ndcg@10).")
@renamed_option("--metric", "-m/--measure", "old_metric")
@opts(*RANGE, WHERE)
@click.option("--best", is_flag=True, help="Best first (default: worst first).")
@click.option("--limit", default=20, show_default=True, type=integer(min=1, max=10**9))
@opts(STORE, CONFIG, WAIT, FORMAT)
def groups_cmd(measure: str | None, old_metric: str | None, start: str | None, end: str | None,
               where: tuple[str, ...], best: bool, limit: int, store_path: str, config_path: str | None, wait: float,
               fmt: str) -> None:
    """Served lists with their value, worst first."""
    measure = one_of(measure, old_metric, "ndcg@10", "-m/--measure")
    st = open_store(store_path, config_path, wait, read_only=True)
    table = st.groups(measure, start=start, end=end, where=parse_where(where), order="best" if best else "worst",
                      limit=limit)
    print_table(table, fmt)


@monitor.command("explain")
@click.argument("group_id")
@click.option("--model", default=None)
@click.option("--model-version", default=None)
@click.option("--environment", default=None)
@click.option("-k", "k", default=10, show_default=True, type=integer(min=1, max=1000),
              help="Cutoff of the measure (rows below it are shown too, marked).")
@opts(STORE, CONFIG, WAIT)
@format_option("document")
def explain_cmd(group_id: str, model: str | None, model_version: str | None, environment: str | None, k: int,
                store_path: str, config_path: str | None, wait: float, fmt: str) -> None:
    """One served list position by position: labels, gains, discounts, contributions, ideal order."""
    st = open_store(store_path, config_path, wait, read_only=True)
    e = st.explain(group_id, model=model, model_version=model_version, environment=environment, k=k)
    from .._output.render import Document, render_document

    click.echo(render_document(Document(e.table, e.to_dict, indent=1), fmt))


@monitor.command("info")
@opts(STORE, CONFIG, WAIT)
def info_cmd(store_path: str, config_path: str | None, wait: float) -> None:
    """What the store holds."""
    st = open_store(store_path, config_path, wait, read_only=True)
    click.echo(json.dumps(st.info(), indent=1, default=str))


monitor.add_command(simulate_command, "simulate")
for _name, _command in ALERT_COMMANDS.items():
    monitor.add_command(_command, _name)
