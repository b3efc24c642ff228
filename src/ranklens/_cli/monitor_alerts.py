"""``ranklens monitor check | alerts | ack | snooze``: judging the monitors, and the alerts' operations."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from .main import format_option, integer
from .monitor_options import CONFIG, FORMAT, RANGE, STORE, WAIT, open_store, opts, print_table

__all__ = ["ALERT_COMMANDS", "EXIT_FIRED", "EXIT_NONE", "EXIT_WEBHOOK"]

#: Exit status of ``monitor check``: nothing opened or fired; an alert opened or fired (whatever the webhooks
#: did); nothing fired and a webhook could not be reached.
EXIT_NONE, EXIT_FIRED, EXIT_WEBHOOK = 0, 1, 3


def _alert_line(d: dict[str, Any]) -> str:
    from ..monitor.reports.search import describe_top

    series = " ".join(f"{k}={v}" for k, v in d["series"].items())
    top = d.get("top_slices") or []
    cause = f"  top slice {describe_top(top[0])}" if top and d.get("kind", "measure") == "measure" else ""
    status = str(d.get("status") or "fired").upper()
    since = f" (open since {d['opened_window'][:10]})" if status in ("FIRING", "RESOLVED") and d.get("opened_window") \
        else ""
    sev = f" [{d['severity']}]" if d.get("severity") and d["severity"] != "warning" else ""
    return f"{status}{sev} {d['monitor']!r} {d['window_start'][:10]} {series}: {d['reason']}{cause}{since}"


@click.command("check")
@click.option("--at", default=None,
              help="Judge the window holding this time (default: each monitor's latest mature window).")
@click.option("--all", "all_windows", is_flag=True, help="Judge every window (in --start/--end when given).")
@opts(*RANGE)
@click.option("--webhook", default=None, help="POST alert changes to this URL (default: [alerts] webhook).")
@click.option("--no-record", is_flag=True, help="A dry run: store no alert state and send nothing.")
@opts(STORE, CONFIG, WAIT)
@format_option("document", default="json", help="Alerts as JSON, or one line each.")
def check_cmd(at: str | None, all_windows: bool, start: str | None, end: str | None, webhook: str | None,
              no_record: bool, store_path: str, config_path: str | None, wait: float, fmt: str) -> None:
    """Judge the monitors' windows; print the alerts (opened, firing, resolved) as JSON.

    Exit status 1 when an alert opened or a judged window fired (whatever the webhooks did), else 3 when a
    webhook could not be reached (its changes are sent again by the next check; each failure is said on
    stderr and recorded), else 0. Provisional windows (labels not mature yet) are never judged: their number
    is printed on stderr.
    """
    st = open_store(store_path, config_path, wait)
    if (start or end) and not all_windows:
        raise click.UsageError("--start/--end go with --all")
    res = st.check(at=at, all_windows=all_windows, start=start, end=end, record=not no_record, webhook=webhook)
    if fmt == "table":
        if not res:
            click.echo("no alert")
        for a in res:
            click.echo(_alert_line(a.to_dict()))
    else:
        click.echo(json.dumps([a.to_dict() for a in res], indent=1, default=str))
    if res.not_judged:
        m = res.maturity
        parts = []
        for why, n in sorted(res.not_judged.items()):
            if why == "provisional" and m is not None:
                why = (f"provisional: labels mature {m.to_dict()['delay']} ({m.source}) after a window ends, "
                       f"store clock {m.clock.isoformat(sep=' ')[:19] if m.clock else '-'}")
            parts.append(f"{n} {why}")
        click.echo(f"ranklens: windows not judged: {'; '.join(parts)}", err=True)
    for error in res.delivery_errors:
        click.echo(f"ranklens: error: {error}", err=True)
    if res.fired:
        sys.exit(EXIT_FIRED)
    if res.delivery_errors:
        sys.exit(EXIT_WEBHOOK)


@click.command("alerts")
@click.option("--state", type=click.Choice(["open", "resolved"]), default=None, help="Only open or resolved alerts.")
@opts(*RANGE)
@click.option("--limit", default=50, show_default=True, type=integer(min=1, max=10**6))
@click.option("--offset", default=0, show_default=True, type=integer(min=0, max=10**9))
@opts(STORE, CONFIG, WAIT, FORMAT)
def alerts_cmd(state: str | None, start: str | None, end: str | None, limit: int, offset: int, store_path: str,
               config_path: str | None, wait: float, fmt: str) -> None:
    """Alerts recorded by check, one row per alert: state, severity, windows, last values, root cause,
    acknowledgement and snooze; newest first."""
    st = open_store(store_path, config_path, wait, read_only=True)
    table = st.alert_list(start=start, end=end, state=state, limit=limit, offset=offset)
    if fmt == "table":
        rows = table.to_pylist()
        for r in rows:
            r["ack"] = (r["acknowledged_by"] or "yes") if r["acknowledged_at"] is not None else ""
            r["snoozed_until"] = str(r["snoozed_until"])[:16] if r["snoozed_until"] is not None else ""
        keep = ["alert_id", "state", "severity", "monitor", "model", "model_version", "environment", "opened_window",
                "last_window", "resolved_window", "value", "baseline", "root_cause"]
        keep += [c for c in ("ack", "snoozed_until") if any(r[c] for r in rows)]  # shown when someone did
        print_table((keep, rows), fmt)
        return
    rows = table.to_pylist()
    for r in rows:  # nested values as JSON, not as text (JSON in CSV cells)
        r["series"] = json.loads(r["series"]) if r.get("series") else {}
        if fmt == "csv":
            r["series"] = json.dumps(r["series"])
            r["top_slices"] = json.dumps([{k: v for k, v in t.items() if v is not None} for t in r["top_slices"]])
    print_table((table.column_names, rows), fmt)


@click.command("ack")
@click.argument("alert_id", type=integer(min=1))
@click.option("--by", default=None, help="Who is on it (default: nobody named).")
@click.option("--note", default=None, help="A note kept with the acknowledgement.")
@opts(STORE, CONFIG, WAIT)
def ack_cmd(alert_id: int, by: str | None, note: str | None, store_path: str, config_path: str | None,
            wait: float) -> None:
    """Acknowledge an open alert: who is on it is recorded and shown; it stays open and resolves as any other."""
    st = open_store(store_path, config_path, wait)
    done = st.acknowledge(alert_id, by=by, note=note)
    click.echo(f"alert {done['alert_id']} ({done['monitor']}) acknowledged"
               + (f" by {done['acknowledged_by']}" if done["acknowledged_by"] else "")
               + f" at {done['acknowledged_at'][:19]} UTC")


@click.command("snooze")
@click.argument("alert_id", type=integer(min=1))
@click.option("--for", "duration", default=None, metavar="DURATION",
              help="How long: 30m, 12h, 2d ... (at most 90 days).")
@click.option("--until", default=None, metavar="TIME", help="Or until this time (ISO, UTC).")
@click.option("--off", is_flag=True, help="Lift the snooze in force.")
@click.option("--by", default=None, help="Who snoozed it.")
@click.option("--note", default=None, help="A note kept with the snooze.")
@opts(STORE, CONFIG, WAIT)
def snooze_cmd(alert_id: int, duration: str | None, until: str | None, off: bool, by: str | None, note: str | None,
               store_path: str, config_path: str | None, wait: float) -> None:
    """Hold the webhook changes of an alert's monitor and series for a while (checks still judge, record and
    print them, and exit 1 when they fire)."""
    if sum(1 for x in (duration, until) if x is not None) + int(off) != 1:
        raise click.UsageError("give one of --for DURATION, --until TIME or --off")
    st = open_store(store_path, config_path, wait)
    if off:
        done = st.snooze(alert_id, "0s", by=by, note=note)
    else:
        done = st.snooze(alert_id, duration, until=until, by=by, note=note)
    if done["until"] is None:
        click.echo(f"alert {done['alert_id']} ({done['monitor']}): snooze lifted")
    else:
        click.echo(f"alert {done['alert_id']} ({done['monitor']}) snoozed until {done['until'][:19]} UTC: its "
                   "changes are held from the webhooks")


#: The alert commands of ``ranklens monitor``, by name.
ALERT_COMMANDS = {"check": check_cmd, "alerts": alerts_cmd, "ack": ack_cmd, "snooze": snooze_cmd}
