"""``ranklens monitor report --html FILE``: the monitoring of a time range as one self-contained page to share.

The page holds the overview (a measure per window and series, each series' own baseline, the alerts as
markers; the latest figure is each series' latest *mature* window, provisional windows are marked), the
slices of the window against each series' baseline (with the command that lists each slice's groups) and its
slice x time heatmap, the label-free signals per window and series, and every alert recorded in the range
(measures, signals, data quality) with its root cause. The tables are HTML, the charts'
numbers JSON inside the page, drawn by the dashboard's own chart code inlined (:mod:`ranklens.web.page`): no
server, no network (its Content-Security-Policy forbids every fetch).

The store is any object with the methods of :class:`ranklens.monitor.Store` (``info``, ``report``,
``baselines``, ``window``, ``slices``, ``signals``, ``alerts``, ``alert_list``, ``maturity``): this module
reads, it holds no SQL.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from .._base.renamed import renamed_keywords
from .._output.render import plain
from ..errors import InputError
from .page import document, esc, num, table

__all__ = ["build_monitor_report", "write_monitor_report"]

SERIES = ("model", "model_version", "environment")


def _ms(t: Any) -> float:
    if isinstance(t, str):
        t = _dt.datetime.fromisoformat(t)
    return (t.replace(tzinfo=_dt.timezone.utc) if t.tzinfo is None else t).timestamp() * 1000.0


def _name(r: Mapping[str, Any], by: Iterable[str]) -> str:
    return " \u00b7 ".join(str(r[b]) for b in by if r.get(b) is not None) or "all groups"


@renamed_keywords(metric="measure")
def build_monitor_report(store: Any, measure: str = "ndcg@10", window: str = "day", by: Iterable[str] = SERIES,
                         where: Mapping[str, Any] | None = None, start: Any = None, end: Any = None, *,
                         ci: str | None = "bootstrap", baseline: Any = None, depth: int = 2, min_support: int = 30,
                         correction: str = "holm", slices: int = 30, title: str | None = None) -> str:
    """The HTML text of the monitoring page of ``[start, end)`` (default: the whole store).

    Parameters
    ----------
    store : ranklens.monitor.Store
    measure : str
        The measure (one key, e.g. ``ndcg@10``; ``metric=``: the deprecated name).
    window, by, where, start, end, ci
        As for :meth:`ranklens.monitor.Store.report` (the overview).
    baseline, depth, min_support, correction
        As for :meth:`ranklens.monitor.Store.slices`; the slices' window is ``[start, end)`` when both are
        given, else the latest mature day (the last day in the store when none is mature).
    slices : int
        Slices listed (most harmful first).
    title : str, optional

    Returns
    -------
    str
        A complete HTML document.
    """
    info = store.info()
    if not info.get("groups"):
        raise InputError(f"store {info.get('path')!r} is empty: nothing to report.")
    by = [by] if isinstance(by, str) else list(by)
    w = dict(where or {})
    rep = store.report([measure], window=window, by=by, where=w or None, start=start, end=end,
                       ci=None if ci == "none" else ci)
    key = rep.column("measure")[0].as_py() if rep.num_rows else measure
    rows = [{k: plain(v) for k, v in r.items()} for r in rep.to_pylist()]
    bases = [{k: plain(v) for k, v in r.items()} for r in store.baselines(key, by=by, where=w or None, start=start,
                                                                          end=end, baseline=baseline).to_pylist()]
    fired = [{k: plain(v) for k, v in r.items()} for r in store.alerts(start, end).to_pylist()]
    markers = [a for a in fired if a.get("metric") == key]  # the windows that fired on this measure
    every = [{k: plain(v) for k, v in r.items()} for r in store.alert_list(start, end).to_pylist()]
    mature_until = store.maturity().mature_until
    s0, e0 = _slices_window(store, start, end, mature_until)
    from .routes.slices import heatmap

    try:
        sl = store.slices(key, start=s0, end=e0, baseline=baseline, where=w or None, by=by, depth=depth,
                          min_support=min_support, correction=correction)
        hm = heatmap(store, {"measure": key, "start": s0.isoformat(), "end": e0.isoformat(), "baseline": baseline,
                             "columns": None, "by": by, "depth": depth, "min_support": min_support,
                             "correction": correction, "window": window, "limit": 12,
                             "history_start": (e0 - _dt.timedelta(days=28)).isoformat()}, w)
        no_slices = None
    except InputError as exc:  # nothing to compare the window with (a store without training lists...)
        sl, hm, no_slices = None, {"rows": [], "cols": [], "values": [], "counts": [], "centers": []}, str(exc)
    meta = json.loads((sl.schema.metadata or {})[b"ranklens"]) if sl is not None else {}
    sl_rows = [{k: plain(v) for k, v in r.items()} for r in sl.to_pylist()][:slices] if sl is not None else []
    data, names = _overview_data(key, window, by, rows, bases, markers, hm)
    sig = store.signals(None, window=window, by=by, where=w or None, start=start, end=end)
    filters = ", ".join(f"{k}={v}" for k, v in w.items()) or "none"
    span = f"{str(start or info['first'])[:10]} to {str(end)[:10] if end else str(info['last'])[:10] + ' (last)'}"
    sections = [
        "<section class='card'><h2>What this page shows</h2><ul class='notes'>"
        f"<li><b>store</b>: <code>{esc(info.get('path'))}</code>, {esc(info.get('groups'))} served lists</li>"
        f"<li><b>time range</b>: {esc(span)}; <b>filters</b>: {esc(filters)}; <b>series</b>: {esc(', '.join(by))}</li>"
        f"<li><b>measure</b>: {esc(key)} per {esc(window)}; each series against its own baseline, by the rule the "
        f"monitors use</li>{_kind(key, info)}</ul></section>",
        _overview_section(key, window, by, rows, bases, names, _kind(key, info, "p")),
        _slices_section(sl_rows, meta, by, w, bool(meta.get("provisional"))) if no_slices is None else
        "<section class='card'><h2>Slices</h2><p class='notes'><b>No baseline to compare with</b>, so no slices"
        f" and no heatmap: {esc(no_slices)}. The alerts below were judged against their monitors' own baselines."
        "</p></section>",
        _signals_section(sig, by, window, every),
        _alerts_section(every),
    ]
    page_title = title or f"ranklens monitoring: {key}, {span}"
    subtitle = f"{esc(key)} per {esc(window)}, {len(names)} series, {len(every)} alerts"
    return document(page_title, subtitle, sections, data, ["charts.js", "monitor_report.js"], label="monitoring")


def _slices_window(store: Any, start: Any, end: Any, mature_until: Any) -> tuple[Any, Any]:
    """``[start, end)`` when both are given, else the latest mature day (the store's last day when none is)."""
    if start is not None and end is not None:
        return store.window(start, end)
    s, e = store.window()  # the last day in the store
    if mature_until is not None:
        d = _dt.datetime(mature_until.year, mature_until.month, mature_until.day) - _dt.timedelta(days=1)
        if d < s:
            return d, d + _dt.timedelta(days=1)
    return s, e


def _overview_data(key: str, window: str, by: list[str], rows: list[dict[str, Any]], bases: list[dict[str, Any]],
                   alert_rows: list[dict[str, Any]], hm: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The charts' data (the series with their baselines and alert markers, the heatmap) and the series' names."""
    series: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        series.setdefault(_name(r, by), []).append({"x": _ms(r["window"]), "y": r["value"], "lo": r.get("ci_low"),
                                                    "hi": r.get("ci_high"), "n": r["n_groups"],
                                                    "provisional": bool(r.get("provisional"))})
    names = sorted(series)
    data: dict[str, Any] = {
        "measure": key, "window": window,
        "series": [{"name": n, "points": series[n], "dash": "training" in n.split(" \u00b7 ")} for n in names],
        "refs": [{"value": b["value"], "name": _name(b, by), "label": f"baseline of {_name(b, by)}"}
                 for b in bases if not b.get("own") and b.get("value") is not None and _name(b, by) in series],
        "markers": [{"x": _ms(a.get("window") or a.get("window_start")),
                     "label": f"alert {a.get('monitor', '')}: {a.get('reason', '')}"} for a in alert_rows
                    if a.get("window") or a.get("window_start")],
        "heatmap": {"rows": hm["rows"], "cols": [_ms(c) for c in hm["cols"]], "values": hm["values"],
                    "counts": hm["counts"], "centers": hm["centers"]},
    }
    return data, names


def _kind(key: str, info: Mapping[str, Any], tag: str = "li") -> str:
    """Whether the measure is naive or debiased (and the source of its propensities), as a list item or a note."""
    from ..monitor.propensity import measure_label

    lab = measure_label(key, info.get("propensity"))
    source = f"; <b>propensities</b>: {esc(lab['source'])}" if lab.get("source") else ""
    return (f"<{tag} class='notes measure-kind'><b>{esc(key)} is {esc(lab['kind'])}</b>: "
            f"{esc(lab['label'].split(': ', 1)[1])}{source}</{tag}>")


def _overview_section(key: str, window: str, by: list[str], rows: list[dict[str, Any]], bases: list[dict[str, Any]],
                      names: list[str], kind: str = "") -> str:
    """The measure per window: the chart, each series' latest mature window against its baseline (the latest
    provisional one, marked, when none is mature yet), every window with the provisional ones marked."""
    latest: dict[str, dict[str, Any]] = {}
    for r in rows:  # in window order: the last mature one wins, a provisional one only when none is mature
        n = _name(r, by)
        if not r.get("provisional") or n not in latest or latest[n].get("provisional"):
            latest[n] = r
    base_of = {_name(b, by): b for b in bases}
    kpi_rows = []
    for n in names:
        r, b = latest[n], base_of.get(n, {})
        own = b.get("own") or b.get("value") is None
        ch = None if own else r["value"] - b["value"]
        kpi_rows.append([esc(n), esc(str(r["window"])[:16].replace("T", " ")) + _prov(r), num(r["value"], 4),
                         esc(r["n_groups"]),
                         "itself" if b.get("own") else num(b.get("value"), 4),
                         "" if ch is None else f"<span class='{'neg' if ch < 0 else 'pos'}'>{ch:+.4f}</span>",
                         esc(b.get("baseline", ""))])
    detail = [[esc(_name(r, by)), esc(str(r["window"])[:16].replace("T", " ")) + _prov(r), num(r["value"], 4),
               num(r.get("ci_low"), 4), num(r.get("ci_high"), 4), esc(r["n_groups"]), esc(r["n_excluded"])]
              for r in rows]
    return (
        f"<section class='card'><h2>{esc(key)} per {esc(window)}</h2>{kind}<div class='chart' id='mr-overview'></div>"
        "<p class='notes'>Shaded: the interval of each window's mean. Dotted: each series' own baseline. Dashed: the "
        "training environment. Grey: provisional windows (labels not mature: never judged). Red markers: alerts "
        f"recorded in the range on {esc(key)}. The latest window is each series' latest mature one.</p>"
        + table(["series", "latest mature window", key, "groups", "its baseline", "change", "baseline (selection)"],
                 kpi_rows, numeric=(2, 3, 4, 5))
        + f"<details><summary>every window ({len(detail)} rows)</summary>"
        + table(["series", "window", key, "ci low", "ci high", "groups", "left out"], detail, numeric=(2, 3, 4, 5, 6))
        + "</details></section>"
    )


def _prov(r: dict[str, Any]) -> str:
    """The mark of a provisional window in a table cell."""
    return " <span class='badge' title='labels not mature: not judged'>provisional</span>" if r.get("provisional") \
        else ""


def _slices_section(sl_rows: list[dict[str, Any]], meta: dict[str, Any], by: list[str], w: dict[str, Any],
                    provisional: bool = False) -> str:
    """The slices of the window, most harmful first, with the command listing each one's groups, and the heatmap."""
    from ..monitor.reports.links import groups_command

    sl_head = (["series"] if len({_name(r, by) for r in sl_rows}) > 1 else []) + [
        "slice", "baseline", "window", "change", "groups (baseline)", "groups (window)", "rate effect", "mix effect",
        "contribution", "p-value", "adjusted p"]
    sl_body, commands = [], []
    for i, r in enumerate(sl_rows, start=1):
        name = f"{r['column']}={r['value']}" + (f" {r['column2']}={r['value2']}" if r.get("column2") else "") + (
            f" ({r['n_cells']} below the minimum support)" if r.get("pooled") else "")
        cells = ([esc(_name(r, by))] if sl_head[0] == "series" else []) + [
            f"{i}. {esc(name)}", num(r["baseline_value"], 4), num(r["window_value"], 4),
            f"<span class='{'neg' if (r['change'] or 0) < 0 else 'pos'}'>{num(r['change'], 4)}</span>",
            esc(r["n_baseline"]), esc(r["n_window"]), num(r["rate_effect"], 4), num(r["mix_effect"], 4),
            f"<b>{num(r['contribution'], 4)}</b>", _p(r["p_value"]), _p(r["p_adjusted"])]
        sl_body.append(cells)
        c = groups_command(meta["measure"], meta["window_start"], meta["window_end"], w, r, by)
        if c:
            commands.append(f"<li>{i}. <code>{esc(c)}</code></li>")
    series_lines = "".join(
        f"<li><b>{esc(_name(x['series'], by))}</b>: {num(x['window_value'], 4)} over {x['n_window']} groups against "
        f"{num(x['baseline_value'], 4)} over {x['n_baseline']} ({esc(x['baseline'])}); change {x['change']:+.4f}</li>"
        for x in meta["series"])
    offset = 1 if sl_head[0] == "series" else 0
    return (
        f"<section class='card'><h2>Slices <span class='hint'>window {esc(meta['window_start'][:16])} to "
        f"{esc(meta['window_end'][:16])}{_prov({'provisional': provisional})}, most harmful first</span></h2>"
        + ("<p class='notes'>This window is provisional: its labels are not all in, its values may still rise.</p>"
           if provisional else "") + f"<ul class='notes'>{series_lines}</ul>"
        f"<p class='notes'>contribution = rate effect + mix effect (they add up to each series' change over one column "
        f"or pair); slices under {meta['min_support']} groups on a side pooled into (other); p-values: Welch, "
        f"{esc({'holm': 'Holm', 'bh': 'Benjamini-Hochberg', 'none': 'not'}[meta['correction']])}-adjusted over "
        f"{meta['n_tested']} slices.</p>"
        + table(sl_head, sl_body, numeric=range(offset + 1, len(sl_head)))
        + (f"<details><summary>the groups of each slice: <code>ranklens monitor groups</code> commands</summary>"
           f"<ul class='notes'>{''.join(commands)}</ul></details>" if commands else "")
        + "<h3>Slice &times; time <span class='muted'>(each row against its own baseline: blue above, red below)"
          "</span></h3><div class='chart' id='mr-heatmap'></div></section>")


def _signals_section(sig: Any, by: list[str], window: str, every: list[dict[str, Any]]) -> str:
    """The label-free signals per window and series (one column per signal; signals need no label, so no
    window is provisional), with the signal alerts of the range counted."""
    rows = [{k: plain(v) for k, v in r.items()} for r in sig.to_pylist()]
    names = list(dict.fromkeys(r["signal"] for r in rows))
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        cells.setdefault((_name(r, by), str(r["window"])[:16].replace("T", " ")), {})[r["signal"]] = r["value"]
    body = [[esc(n), esc(wn)] + [num(v.get(x), 4) for x in names] for (n, wn), v in sorted(cells.items())]
    n_alerts = sum(1 for a in every if a.get("metric") in names)
    return (f"<section class='card'><h2>Signals <span class='hint'>label-free, per {esc(window)}; "
            f"{n_alerts} signal alerts in the range</span></h2><p class='notes'>Each window against the series' "
            "baseline: psi and ks are distances (0: alike; psi above 0.1 noticeable, above 0.25 major), coverage, "
            "gini and novelty levels. Signals need no outcome: they move as soon as the lists are served, before "
            "the measure's windows are mature.</p>"
            + (table(["series", "window", *names], body, numeric=range(2, 2 + len(names))) if body
               else "<p class='notes'>No served list in the range.</p>") + "</section>")


def _alerts_section(alert_rows: list[dict[str, Any]]) -> str:
    """Every alert recorded in the range (measures, signals, data quality), newest first, with its root cause."""
    cols = ["#", "state", "severity", "monitor", "metric", "series", "opened", "last fired", "resolved", "value",
            "baseline", "root cause", "reason"]
    body = []
    for a in alert_rows:
        series = a.get("series")
        if isinstance(series, str):
            series = json.loads(series) if series else {}
        why = a.get("resolved_reason") if a.get("state") == "resolved" and a.get("resolved_reason") else a.get("reason")
        body.append([esc(a.get("alert_id")), esc(a.get("state")), esc(a.get("severity")), esc(a.get("monitor")),
                     esc(a.get("metric")), esc(" ".join(f"{k}={v}" for k, v in (series or {}).items())),
                     _cell(a.get("opened_window"), "window"), _cell(a.get("last_window"), "window"),
                     _cell(a.get("resolved_window"), "window"), _cell(a.get("value"), "value"),
                     _cell(a.get("baseline"), "baseline"), esc(a.get("root_cause") or ""), esc(why or "")])
    return (f"<section class='card'><h2>Alerts <span class='hint'>{len(alert_rows)} recorded by "
            "<code>ranklens monitor check</code> in the range: measures, signals, data quality</span></h2>"
            + (table(cols, body, numeric=(0, 9, 10)) if alert_rows else "<p class='notes'>No alert in the range.</p>")
            + "</section>")


def _cell(v: Any, column: str) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return num(v, 4)
    if column == "window":
        return esc(str(v)[:16].replace("T", " "))
    return esc(v)


def _p(v: Any) -> str:
    if v is None:
        return ""
    return f"{v:.1e}" if v < 1e-4 else f"{v:.4f}"


def write_monitor_report(path: str | os.PathLike[str], store: Any, **kwargs: Any) -> str:
    """Write :func:`build_monitor_report`'s page to ``path`` (UTF-8); returns the path."""
    page = build_monitor_report(store, **kwargs)
    out = os.fspath(path)
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(page)
    return out
