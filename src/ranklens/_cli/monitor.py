"""``ranklens monitor``: ingest | ingest-results | report | check | signals | slices | groups | explain | info |
simulate."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from .main import format_option, integer, number
from .monitor_simulate import simulate_command

__all__ = ["monitor"]

_STORE = click.option("--store", "store_path", default="ranklens.duckdb", envvar="RANKLENS_STORE", show_default=True,
                      type=click.Path(dir_okay=False), help="The DuckDB store (env RANKLENS_STORE).")
_CONFIG = click.option("--config", "config_path", default=None, envvar="RANKLENS_CONFIG",
                       type=click.Path(dir_okay=False),
                       help="TOML configuration (default: ./ranklens.toml when present; env RANKLENS_CONFIG).")
_WAIT = click.option("--wait", default=30.0, show_default=True, type=number(min=0),
                     help="Seconds to wait for another process writing the store.")
_FORMAT = format_option("rows")
_WHERE = click.option("--where", "where", multiple=True, metavar="COL=VALUE",
                      help="Filter, repeatable: environment=production, country=BR, model_version=v2 ...")
_RANGE = [click.option("--start", default=None, help="Start of the time range (ISO date/time, UTC, inclusive)."),
          click.option("--end", default=None, help="End of the time range (ISO date/time, UTC, exclusive).")]


def _opts(*decorators: Any) -> Any:
    def apply(f: Any) -> Any:
        for d in reversed(decorators):
            f = d(f)
        return f

    return apply


def _store(store_path: str, config_path: str | None, wait: float = 30.0, read_only: bool = False) -> Any:
    from ..monitor.store import Store

    return Store(store_path, config=config_path, wait=wait, read_only=read_only)


def _where(items: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for it in items:
        col, sep, val = it.partition("=")
        if not sep or not col.strip():
            raise click.UsageError(f"--where expects COLUMN=VALUE, got {it!r}")
        out.setdefault(col.strip(), []).append(val.strip())
    return {k: (v[0] if len(v) == 1 else v) for k, v in out.items()}


def _print_table(table: Any, fmt: str, digits: int = 4) -> None:
    from .._output.render import render_rows

    click.echo(render_rows(table, fmt, digits=digits))


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
@_opts(_STORE, _CONFIG, _WAIT)
@click.option("--max-quarantine", "max_quarantine", default=None, type=number(min=0, max=1), metavar="FRACTION",
              help="Keep out whole (nothing stored) a file with more than this fraction of its rows quarantined, "
                   "and exit with status 3 (default: [ingest] max_quarantine, else no limit).")
@format_option("document", help="Output format of the summary.")
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local", show_default=True,
              help="spark: reduce the events to served lists in Spark's executors (needs pip install "
                   "'ranklens[spark]'); the store's contents are the same as with local.")
@click.option("--master", default=None, help="Spark master URL (with --engine spark; default: local[*]).")
def ingest_cmd(sources: tuple[str, ...], store_path: str, config_path: str | None, wait: float,
               max_quarantine: float | None, fmt: str, engine: str, master: str | None) -> None:
    """Load event files (Parquet, CSV, TSV, JSON Lines; or directories of them) into the store.

    Each file is one atomic batch; a file ingested before adds nothing. Invalid rows are quarantined
    with their reason and counted. Exit status 3 when a file was kept out by --max-quarantine (the
    other files are ingested), 2 for an error.
    """
    st = _store(store_path, config_path, wait)
    if master is not None and engine != "spark":
        raise click.UsageError("--master needs --engine spark.")
    summary = st.ingest(list(sources), max_quarantine=max_quarantine, engine=engine, master=master)
    refused = f", {len(summary.refused)} files refused (nothing stored)" if summary.refused else ""
    text = (f"{summary}\ntotal: {summary.rows} rows, {summary.groups} new groups, {summary.quarantined} quarantined, "
            f"{summary.skipped} skipped (groups already in the store){refused} -> {store_path}")
    from .._output.render import Document, render_document

    click.echo(render_document(Document(lambda: text, summary.to_dict, indent=1), fmt))
    if summary.refused:
        sys.exit(3)


@monitor.command("ingest-results")
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=False))
@_opts(_STORE, _CONFIG, _WAIT)
def ingest_results_cmd(sources: tuple[str, ...], store_path: str, config_path: str | None, wait: float) -> None:
    """Load per-group values computed elsewhere (e.g. ranklens.spark.evaluate(..., per_query=True)).

    Columns: timestamp, model, model_version, environment, group_id, slice columns, and one column per
    measure named by its key (ndcg@10, ...).
    """
    st = _store(store_path, config_path, wait)
    summary = st.ingest_results(list(sources))
    for b in summary.batches:
        click.echo(f"{b['source']}: {b['status']}, {b['groups']} groups added, {b['skipped']} skipped")


@monitor.command("report")
@click.option("-m", "--metric", "metrics", multiple=True, help="Measure, repeatable (default: ndcg).")
@click.option("-k", "ks", multiple=True, type=integer(min=1, max=1000),
              help="Cutoff for measures given without one, repeatable (default: 1, 5, 10).")
@click.option("--window", type=click.Choice(["hour", "day", "week"]), default="day", show_default=True)
@click.option("--by", "by", multiple=True,
              help="Series column, repeatable (default: model, model_version, environment).")
@_opts(_WHERE, *_RANGE)
@click.option("--ci", type=click.Choice(["bootstrap", "t", "none"]), default="bootstrap", show_default=True,
              help="Confidence interval of each mean (bootstrap over groups).")
@click.option("--resamples", default=1000, show_default=True, type=integer(min=10, max=10**7))
@click.option("--html", "html_path", default=None, type=click.Path(dir_okay=False), metavar="FILE",
              help="Instead: write the monitoring of the time range (overview, slices, alerts) as one self-contained "
                   "HTML page to share (one measure; default ndcg@10).")
@_opts(_STORE, _CONFIG, _WAIT, _FORMAT)
def report_cmd(metrics: tuple[str, ...], ks: tuple[int, ...], window: str, by: tuple[str, ...], where: tuple[str, ...],
               start: str | None, end: str | None, ci: str, resamples: int, html_path: str | None, store_path: str,
               config_path: str | None, wait: float, fmt: str) -> None:
    """Metric per time window and series, with confidence intervals.

    With --html FILE: the monitoring of [--start, --end) as one HTML file (no server, no network needed): the
    measure per window and series against each series' baseline, the slices of the range (the last day when no
    range is given) and the alerts recorded.
    """
    st = _store(store_path, config_path, wait, read_only=True)
    if html_path:
        from ..monitor.storage.params import metric_keys
        from ..web.monitor_report import write_monitor_report

        keys = metric_keys(list(metrics) or ["ndcg@10"], list(ks) or None)
        if len(keys) != 1:
            raise click.UsageError(f"--html draws one measure; got {', '.join(keys)}")
        out = write_monitor_report(html_path, st, metric=keys[0], window=window,
                                   by=list(by) if by else ("model", "model_version", "environment"),
                                   where=_where(where), start=start, end=end, ci=ci)
        click.echo(f"ranklens: wrote {out}", err=True)
        return
    metrics = metrics or ("ndcg",)
    if not ks and any("@" not in m and "." not in m for m in metrics):
        ks = (1, 5, 10)
    table = st.report(list(metrics), window=window, by=list(by) if by else ("model", "model_version", "environment"),
                      where=_where(where), start=start, end=end, k=list(ks), ci=None if ci == "none" else ci,
                      n_resamples=resamples)
    if ci == "none":
        table = table.drop_columns(["ci_low", "ci_high"])
    _print_table(table, fmt)


#: Exit status of ``monitor check``: no window fired, a window fired, the webhook could not be reached.
EXIT_NONE, EXIT_FIRED, EXIT_WEBHOOK = 0, 1, 3


def _alert_line(d: dict[str, Any]) -> str:
    series = " ".join(f"{k}={v}" for k, v in d["series"].items())
    top = d.get("top_slices") or []
    pair = f" {top[0]['column2']}={top[0]['value2']}" if top and top[0].get("column2") else ""
    cause = f"  top slice {top[0]['column']}={top[0]['value']}{pair} ({top[0]['baseline_value']:.4f} -> " \
            f"{top[0]['window_value']:.4f})" if top else ""
    status = str(d.get("status") or "fired").upper()
    since = f" (open since {d['opened_window'][:10]})" if status in ("FIRING", "RESOLVED") and d.get("opened_window") \
        else ""
    return f"{status} {d['monitor']!r} {d['window_start'][:10]} {series}: {d['reason']}{cause}{since}"


@monitor.command("check")
@click.option("--at", default=None,
              help="Judge the window holding this time (default: each monitor's latest mature window).")
@click.option("--all", "all_windows", is_flag=True, help="Judge every window (in --start/--end when given).")
@_opts(*_RANGE)
@click.option("--webhook", default=None, help="POST alert changes to this URL (default: [alerts] webhook).")
@click.option("--no-record", is_flag=True, help="A dry run: store no alert state and send nothing.")
@_opts(_STORE, _CONFIG, _WAIT)
@format_option("document", default="json", help="Alerts as JSON, or one line each.")
def check_cmd(at: str | None, all_windows: bool, start: str | None, end: str | None, webhook: str | None,
              no_record: bool, store_path: str, config_path: str | None, wait: float, fmt: str) -> None:
    """Judge the monitors' windows; print the alerts (opened, firing, resolved) as JSON.

    Exit status 0 when no judged window fired, 1 when one did, 3 when the webhook could not be
    reached (the alerts are printed all the same; the changes are sent again by the next check).
    Provisional windows (labels not mature yet) are never judged: their number is printed on stderr.
    """
    st = _store(store_path, config_path, wait)
    if (start or end) and not all_windows:
        raise click.UsageError("--start/--end go with --all")
    res = st.check(at=at, all_windows=all_windows, start=start, end=end, record=not no_record, webhook=webhook)
    text = "\n".join([_alert_line(a.to_dict()) for a in res] or ["no alert"])
    from .._output.render import Document, render_document

    click.echo(render_document(Document(lambda: text, lambda: [a.to_dict() for a in res], indent=1), fmt))
    if res.not_judged:
        m = res.maturity
        parts = []
        for why, n in sorted(res.not_judged.items()):
            if why == "provisional" and m is not None:
                why = (f"provisional: labels mature {m.to_dict()['delay']} ({m.source}) after a window ends, "
                       f"store clock {m.clock.isoformat(sep=' ')[:19] if m.clock else '-'}")
            parts.append(f"{n} {why}")
        click.echo(f"ranklens: windows not judged: {'; '.join(parts)}", err=True)
    if res.webhook_error:
        click.echo(f"ranklens: error: {res.webhook_error}", err=True)
        sys.exit(EXIT_WEBHOOK)
    if res.fired:
        sys.exit(EXIT_FIRED)


@monitor.command("alerts")
@click.option("--state", type=click.Choice(["open", "resolved"]), default=None, help="Only open or resolved alerts.")
@_opts(*_RANGE)
@click.option("--limit", default=50, show_default=True, type=integer(min=1, max=10**6))
@click.option("--offset", default=0, show_default=True, type=integer(min=0, max=10**9))
@_opts(_STORE, _CONFIG, _WAIT, _FORMAT)
def alerts_cmd(state: str | None, start: str | None, end: str | None, limit: int, offset: int, store_path: str,
               config_path: str | None, wait: float, fmt: str) -> None:
    """Alerts recorded by check, one row per alert: state, windows, last values, root cause; newest first."""
    st = _store(store_path, config_path, wait, read_only=True)
    table = st.alert_list(start=start, end=end, state=state, limit=limit, offset=offset)
    if fmt == "table":
        table = table.select(["alert_id", "state", "monitor", "model", "model_version", "environment",
                              "opened_window", "last_window", "resolved_window", "value", "baseline", "root_cause"])
    _print_table(table, fmt)


@monitor.command("signals")
@click.option("-m", "--metric", "names", multiple=True,
              help="Signal, repeatable (default: all): psi(score), ks(score), psi(position), psi(popularity@K), "
                   "coverage[@K], gini[@K], novelty[@K], ild[@K].")
@click.option("--window", type=click.Choice(["hour", "day", "week"]), default="day", show_default=True)
@click.option("--by", "by", multiple=True,
              help="Series column, repeatable (default: model, model_version, environment).")
@_opts(_WHERE, *_RANGE)
@click.option("--baseline", default=None,
              help="training | validation | production | previous | START..END (default: the configuration's).")
@click.option("--items", "items_path", default=None, type=click.Path(dir_okay=False),
              help="Item attributes for ild: Parquet/CSV/JSON Lines file(s) (a glob pattern too, e.g. event files) "
                   "with item_id and --attribute.")
@click.option("--attribute", default=None, help="The item attribute column of --items (e.g. category).")
@click.option("--catalogue-size", type=integer(min=1), default=None,
              help="Catalogue size for coverage (default: the items the baseline served).")
@_opts(_STORE, _CONFIG, _WAIT, _FORMAT)
def signals_cmd(names: tuple[str, ...], window: str, by: tuple[str, ...], where: tuple[str, ...], start: str | None,
                end: str | None, baseline: str | None, items_path: str | None, attribute: str | None,
                catalogue_size: int | None, store_path: str, config_path: str | None, wait: float, fmt: str) -> None:
    """Label-free signals per window and series against the baseline: score drift (PSI, KS), positions,
    catalogue coverage, popularity concentration (Gini), novelty, intra-list diversity.

    They need no outcome, so they move as soon as a broken ranker serves (docs/monitoring.md).
    """
    st = _store(store_path, config_path, wait, read_only=True)
    table = st.signals(list(names) or None, window=window, by=list(by) if by else ("model", "model_version",
                       "environment"), where=_where(where), start=start, end=end, baseline=baseline,
                       items=items_path, attribute=attribute, catalogue_size=catalogue_size)
    _print_table(table, fmt)


@monitor.command("slices")
@click.option("-m", "--metric", default="ndcg@10", show_default=True, help="Measure (as in report and eval).")
@_opts(*_RANGE)
@click.option("--baseline", default=None,
              help="training | validation | production | previous | START..END (default: the configuration's).")
@click.option("--column", "columns", multiple=True, help="Slice column, repeatable (default: all).")
@click.option("--by", "by", multiple=True,
              help="Series column, repeatable (default: model, model_version, environment); each series is "
                   "compared with its own baseline, as the monitors do.")
@click.option("--depth", type=click.Choice(["1", "2"]), default="2", show_default=True,
              help="1: one column at a time; 2: also every pair of columns (country x device).")
@click.option("--min-support", default=30, show_default=True, type=integer(min=1),
              help="Counted groups a slice needs in the window and in the baseline to be listed alone "
                   "(smaller ones are pooled into one '(other)' row).")
@click.option("--correction", type=click.Choice(["holm", "bh", "none"]), default="holm", show_default=True,
              help="Correction of the p-values for the number of slices listed (Holm, Benjamini-Hochberg).")
@_opts(_WHERE)
@click.option("--drill", default=None, metavar="COL=VALUE",
              help="Instead: the worst groups of one slice value in the window (repeatable with --where).")
@click.option("--limit", default=20, show_default=True, type=integer(min=1, max=10**9))
@_opts(_STORE, _CONFIG, _WAIT, _FORMAT)
def slices_cmd(metric: str, start: str | None, end: str | None, baseline: str | None, columns: tuple[str, ...],
               by: tuple[str, ...], depth: str, min_support: int, correction: str, where: tuple[str, ...],
               drill: str | None, limit: int, store_path: str, config_path: str | None, wait: float,
               fmt: str) -> None:
    """Rank slices (one column's values, and pairs of two columns' values) by their contribution to the change
    between each series' baseline and a window.

    The window is [--start, --end) (default: the last day in the store), for the slices and for --drill.
    Below the table, the command that lists each row's groups.
    """
    from ..monitor.reports.links import groups_command

    st = _store(store_path, config_path, wait, read_only=True)
    w = _where(where)
    s, e = st.window(start, end)
    if drill:
        w.update(_where((drill,)))
        table = st.groups(metric, start=s, end=e, where=w, order="worst", limit=limit)
        _print_table(table, fmt)
        return
    series = list(by) if by else ["model", "model_version", "environment"]
    table = st.slices(metric, start=s, end=e, baseline=baseline, columns=list(columns) or None, where=w, by=series,
                      depth=int(depth), min_support=min_support, correction=correction)
    meta = json.loads(table.schema.metadata[b"ranklens"])
    rows = table.to_pylist()[:limit]
    commands = [groups_command(meta["metric"], meta["window_start"], meta["window_end"], w, r, series) for r in rows]
    if fmt != "table":
        import pyarrow as pa

        table = table.slice(0, limit).append_column("groups_command", pa.array(commands, pa.string()))
        _print_table(table, fmt)
        return
    click.echo(f"{meta['metric']}, window {meta['window_start'][:19]}..{meta['window_end'][:19]}, p-values "
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

    _print_table(pa.Table.from_pylist([{k: d.get(k) for k in keep} for d in shown]) if shown else table, fmt)
    if any(commands):
        click.echo("\nthe groups of each row (worst first):")
        for i, c in enumerate(commands, start=1):
            if c:
                click.echo(f"  {i:>3}  {c}")


def _pvalue(p: float | None) -> str:
    """A p-value as text: 4 decimals, or 2 significant digits below 1e-4 (so 3e-31 does not print as 0.0000)."""
    if p is None or p != p:
        return ""
    return f"{p:.2g}" if p < 1e-4 else f"{p:.4f}"


@monitor.command("groups")
@click.option("-m", "--metric", default="ndcg@10", show_default=True, help="Measure (as in report and eval).")
@_opts(*_RANGE, _WHERE)
@click.option("--best", is_flag=True, help="Best first (default: worst first).")
@click.option("--limit", default=20, show_default=True, type=integer(min=1, max=10**9))
@_opts(_STORE, _CONFIG, _WAIT, _FORMAT)
def groups_cmd(metric: str, start: str | None, end: str | None, where: tuple[str, ...], best: bool, limit: int,
               store_path: str, config_path: str | None, wait: float, fmt: str) -> None:
    """Served lists with their value, worst first."""
    st = _store(store_path, config_path, wait, read_only=True)
    table = st.groups(metric, start=start, end=end, where=_where(where), order="best" if best else "worst", limit=limit)
    _print_table(table, fmt)


@monitor.command("explain")
@click.argument("group_id")
@click.option("--model", default=None)
@click.option("--model-version", default=None)
@click.option("--environment", default=None)
@click.option("-k", "k", default=10, show_default=True, type=integer(min=1, max=1000),
              help="Cutoff of the measure (rows below it are shown too, marked).")
@_opts(_STORE, _CONFIG, _WAIT)
@format_option("document")
def explain_cmd(group_id: str, model: str | None, model_version: str | None, environment: str | None, k: int,
                store_path: str, config_path: str | None, wait: float, fmt: str) -> None:
    """One served list position by position: labels, gains, discounts, contributions, ideal order."""
    st = _store(store_path, config_path, wait, read_only=True)
    e = st.explain(group_id, model=model, model_version=model_version, environment=environment, k=k)
    from .._output.render import Document, render_document

    click.echo(render_document(Document(e.table, e.to_dict, indent=1), fmt))


@monitor.command("info")
@_opts(_STORE, _CONFIG, _WAIT)
def info_cmd(store_path: str, config_path: str | None, wait: float) -> None:
    """What the store holds."""
    st = _store(store_path, config_path, wait, read_only=True)
    click.echo(json.dumps(st.info(), indent=1, default=str))


monitor.add_command(simulate_command, "simulate")
