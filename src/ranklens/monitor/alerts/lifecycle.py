"""Alert lifecycle: an alert opens once per monitor and series, stays open while its condition holds, and
resolves when a later judged window no longer fires. The state is kept in the store (``alert_states``,
one row per alert; ``alerts``, one row per window that fired, tied to its alert).

:func:`advance` walks the verdicts of a check (:func:`ranklens.monitor.alerts.judge`) in window order and
returns the run's events, each an :class:`~ranklens.monitor.alerts.Alert` whose ``status`` is

* ``"opened"``: the window fired and the series had no open alert: a new alert (a state change);
* ``"firing"``: the window fired and the series' alert is already open (no state change);
* ``"resolved"``: the window was judged, did not fire, and the series had an open alert (a state change);
* ``"fired"``: a window checked again that fired, of an alert since resolved, or before the series'
  latest alert (no state change).

The state only moves forward: a window at or before the latest window the series' alert has seen (its
last firing window, or the window that resolved it) changes nothing: checking the same windows again
opens nothing new and sends nothing again. Windows not judged (provisional, too few lists, no baseline)
change nothing either.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from dataclasses import dataclass
from typing import Any

from ..._base.deps import require
from ..reports.search import TOP_FIELDS, describe_top
from ..storage.db import fetch_arrow, transaction
from ..storage.params import parse_time
from .judge import Alert, Verdict

__all__ = ["STATES", "advance", "alert_list", "mark_notified", "pending_notifications", "recorded_alerts"]

STATES = ("open", "resolved")
# the columns of alert_states an alert's first record fills (the acknowledgement comes later)
_INSERT_STATE = """INSERT INTO alert_states (alert_id, monitor, metric, series, model, model_version, environment,
    state, opened_window, last_window, last_window_end, n_windows, resolved_window, resolved_window_end, resolved_value,
    resolved_reason, opened_at, updated_at, notified, severity) VALUES """


@dataclass
class _State:
    alert_id: int
    state: str
    opened_window: _dt.datetime
    seen: _dt.datetime  # the latest window start this alert has seen (last firing, or the resolving window)


def _key(monitor: str, series: dict[str, Any]) -> tuple[str, str]:
    return monitor, json.dumps(series, sort_keys=True, default=str)


def _latest_states(con: Any) -> tuple[dict[tuple[str, str], _State], dict[tuple[str, str], _dt.datetime]]:
    """Per monitor and series: its latest alert (the last opened), and the latest window its earlier alerts saw."""
    rows = con.execute(
        """SELECT monitor, series, alert_id, state, opened_window, coalesce(resolved_window, last_window)
           FROM alert_states ORDER BY opened_window, alert_id"""
    ).fetchall()
    latest: dict[tuple[str, str], _State] = {}
    before: dict[tuple[str, str], _dt.datetime] = {}
    for m, s, a, st, o, seen in rows:
        prev = latest.get((m, s))
        if prev is not None:
            before[(m, s)] = max(before.get((m, s), prev.seen), prev.seen)
        latest[(m, s)] = _State(a, st, o, seen)
    return latest, before


def _with(alert: Alert, **extra: Any) -> Alert:
    return Alert(**{**{f: getattr(alert, f) for f in alert.__dataclass_fields__ if f != "extra"},
                    "extra": {**alert.extra, **extra}})


def _resolution(j: Verdict, state: _State) -> Alert:
    return Alert(monitor=j.monitor, metric=j.metric, window_start=j.window_start.isoformat(),
                 window_end=j.window_end.isoformat(), series=j.series, value=j.value, baseline=j.baseline,
                 baseline_spec=j.baseline_spec, threshold=j.threshold, n_groups=j.n_groups, n_baseline=j.n_baseline,
                 p_value=j.p_value, reason=j.reason,
                 relative_change=(j.value - j.baseline) / j.baseline if j.baseline else math.nan,
                 extra={"status": "resolved", "alert_id": state.alert_id,
                        "opened_window": state.opened_window.isoformat()}, kind=j.kind, severity=j.severity)


def advance(con: Any, judgements: list[Verdict], *, record: bool = True, now: _dt.datetime | None = None
            ) -> list[Alert]:
    """Move the alerts' states forward with a check's verdicts; returns the run's events (see the module).

    With ``record=False`` (a dry run, or a read-only store) the events are computed against the stored
    states but nothing is written. ``now`` is the run's wall-clock time (stored as ``opened_at`` /
    ``updated_at``; an alert names its windows, never the run's time).
    """
    now = now or _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)
    states, before = _latest_states(con)
    next_id = int(con.execute("SELECT coalesce(max(alert_id), 0) FROM alert_states").fetchall()[0][0]) + 1
    recorded = {(m, s, w): a for m, s, w, a in
                con.execute("SELECT monitor, series, window_start, alert_id FROM alerts").fetchall()}
    events: list[Alert] = []
    writes: list[tuple[str, list[Any]]] = []
    order = sorted(range(len(judgements)), key=lambda i: (judgements[i].window_start, i))
    past, next_id = _history(judgements, order, states, before, recorded, writes, now, next_id)
    for i in order:
        j = judgements[i]
        if not j.judged:
            continue
        key = _key(j.monitor, j.series)
        cur = states.get(key)
        if cur is not None and j.window_start <= cur.seen:  # replayed: the state has moved past this window
            if j.alert is not None and j.window_start >= cur.opened_window:  # a window of the latest alert
                events.append(_with(j.alert, status="firing" if cur.state == "open" else "fired",
                                    alert_id=cur.alert_id, opened_window=cur.opened_window.isoformat()))
            elif j.alert is not None:  # before it: a window of an earlier alert
                aid, opened = past.get(i, (recorded.get((*key, j.window_start)), None))
                events.append(_with(j.alert, status="fired", alert_id=aid,
                                    opened_window=opened.isoformat() if opened else None))
            continue
        if j.alert is None:  # judged, does not fire
            if cur is not None and cur.state == "open":
                ev = _resolution(j, cur)
                events.append(ev)
                writes.append(("""UPDATE alert_states SET state = 'resolved', resolved_window = ?,
                                  resolved_window_end = ?, resolved_value = ?, resolved_reason = ?, updated_at = ?
                                  WHERE alert_id = ?""",
                               [j.window_start, j.window_end, _num(j.value), j.reason, now, cur.alert_id]))
                states[key] = _State(cur.alert_id, "resolved", cur.opened_window, j.window_start)
            continue
        a = j.alert
        if cur is not None and cur.state == "open":
            events.append(_with(a, status="firing", alert_id=cur.alert_id,
                                opened_window=cur.opened_window.isoformat()))
            writes.append(("""UPDATE alert_states SET last_window = ?, last_window_end = ?,
                              n_windows = n_windows + 1, updated_at = ? WHERE alert_id = ?""",
                           [j.window_start, j.window_end, now, cur.alert_id]))
            aid = cur.alert_id
            states[key] = _State(aid, "open", cur.opened_window, j.window_start)
        else:
            aid = next_id
            next_id += 1
            events.append(_with(a, status="opened", alert_id=aid, opened_window=j.window_start.isoformat()))
            writes.append((_INSERT_STATE + "(?, ?, ?, ?, ?, ?, ?, 'open', ?, ?, ?, 1, NULL, NULL, NULL, NULL, ?, ?, "
                                           "NULL, ?)",
                           [aid, a.monitor, a.metric, key[1], a.series.get("model"), a.series.get("model_version"),
                            a.series.get("environment"), j.window_start, j.window_start, j.window_end, now, now,
                            a.severity]))
            states[key] = _State(aid, "open", j.window_start, j.window_start)
        writes.append(_insert_fired(j, key[1], aid, now))
    if record and writes:
        with transaction(con):
            for sql, params in writes:
                con.execute(sql, params)
    return events


def _history(judgements: list[Verdict], order: list[int], states: dict[tuple[str, str], _State],
             before: dict[tuple[str, str], _dt.datetime], recorded: dict[Any, Any],
             writes: list[tuple[str, list[Any]]], now: _dt.datetime, next_id: int
             ) -> tuple[dict[int, tuple[int, _dt.datetime]], int]:
    """Windows checked late, before a series' latest alert (e.g. ``check --all`` after daily checks): the
    episodes they show (fired windows up to the judged window that did not fire) are recorded as resolved
    alerts, not sent; an episode still open when the latest alert begins joins it, which then opened
    earlier. Returns judgement index -> (alert id, its opening window) and the next free id."""
    out: dict[int, tuple[int, _dt.datetime]] = {}
    by_key: dict[tuple[str, str], list[int]] = {}
    for i in order:
        j = judgements[i]
        if j.judged:
            by_key.setdefault(_key(j.monitor, j.series), []).append(i)
    for key, idx in by_key.items():
        cur = states.get(key)
        if cur is None:
            continue
        low = before.get(key)
        episodes: list[tuple[list[int], int | None]] = []
        fired: list[int] | None = None
        for i in idx:
            j = judgements[i]
            if j.window_start >= cur.opened_window or (low is not None and j.window_start <= low):
                continue
            if j.alert is not None and (*key, j.window_start) not in recorded:
                if fired is None:
                    fired = []
                    episodes.append((fired, None))
                fired.append(i)
            elif j.alert is None and fired is not None:
                episodes[-1] = (fired, i)
                fired = None
        if fired is not None:  # still open when the latest alert begins: it is the start of that alert
            episodes.pop()
            first = judgements[fired[0]].window_start
            for i in fired:
                out[i] = (cur.alert_id, first)
                writes.append(_insert_fired(judgements[i], key[1], cur.alert_id, now))
            writes.append(("UPDATE alert_states SET opened_window = ?, n_windows = n_windows + ?, updated_at = ? "
                           "WHERE alert_id = ?", [first, len(fired), now, cur.alert_id]))
            cur.opened_window = first
        for ep, res in episodes:
            aid, next_id = next_id, next_id + 1
            a0, a1 = judgements[ep[0]], judgements[ep[-1]]
            r = judgements[res] if res is not None else None
            writes.append((_INSERT_STATE + "(?, ?, ?, ?, ?, ?, ?, 'resolved', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                                           "'resolved', ?)",
                           [aid, a0.monitor, a0.metric, key[1], a0.series.get("model"), a0.series.get("model_version"),
                            a0.series.get("environment"), a0.window_start, a1.window_start, a1.window_end, len(ep),
                            r.window_start if r else a1.window_end, r.window_end if r else None,
                            _num(r.value) if r else None,
                            r.reason if r else "the next window was not judged", now, now, a0.severity]))
            for i in ep:
                out[i] = (aid, a0.window_start)
                writes.append(_insert_fired(judgements[i], key[1], aid, now))
    return out, next_id


def _insert_fired(j: Verdict, series: str, aid: int, now: _dt.datetime) -> tuple[str, list[Any]]:
    """The record of one window that fired, tied to its alert (once per monitor, window and series)."""
    a = j.alert
    assert a is not None
    d = a.to_dict()
    return ("""INSERT INTO alerts (fired_at, monitor, metric, window_start, window_end, model, model_version,
                                  environment, series, value, baseline, threshold, p_value, n_groups, n_baseline,
                                  reason, alert_id, top_slices, severity)
               SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
               WHERE NOT EXISTS (SELECT 1 FROM alerts WHERE monitor = ? AND window_start = ? AND series = ?)""",
            [now, a.monitor, a.metric, j.window_start, j.window_end, a.series.get("model"),
             a.series.get("model_version"), a.series.get("environment"), series, _num(a.value),
             _num(a.baseline), _num(a.threshold), a.p_value, a.n_groups, a.n_baseline, a.reason, aid,
             json.dumps(d.get("top_slices") or [], default=str), a.severity, a.monitor, j.window_start, series])


def _num(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def pending_notifications(con: Any) -> list[dict[str, Any]]:
    """Alerts whose current state has not been delivered to the webhook yet, oldest first, each with the
    values of its last firing window (and of the window that resolved it)."""
    tab = alert_list(con, pending_only=True)
    return list(tab.to_pylist())


def mark_notified(con: Any, states: list[tuple[int, str]]) -> None:
    """Record that these (alert_id, state) pairs were delivered."""
    with transaction(con):
        for aid, st in states:
            con.execute("UPDATE alert_states SET notified = ? WHERE alert_id = ? AND state = ?", [st, aid, st])


def alert_list(con: Any, start: Any = None, end: Any = None, state: str | None = None, *,
               pending_only: bool = False, limit: int | None = None, offset: int = 0) -> Any:
    """Alerts (one row each) as a pyarrow Table, newest window first: state, the windows that opened it, last
    fired and resolved it, and the values, reason and root cause of its last firing window.

    ``[start, end)`` keeps the alerts whose span (from the window that opened them to the end of the last
    window that fired, or to now while open) meets the range.
    """
    clauses: list[str] = []
    params: list[Any] = []
    s, e = parse_time(start, "start"), parse_time(end, "end")
    if s is not None:
        clauses.append("(st.state = 'open' OR st.last_window_end > ?)")
        params.append(s)
    if e is not None:
        clauses.append("st.opened_window < ?")
        params.append(e)
    if state is not None:
        clauses.append("st.state = ?")
        params.append(state)
    if pending_only:
        clauses.append("st.notified IS DISTINCT FROM st.state")
    cond = " AND ".join(clauses) or "TRUE"
    page = ""
    if limit is not None:
        page = " LIMIT ? OFFSET ?"
    now = _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)
    tab = fetch_arrow(con.sql(
        f"""SELECT st.alert_id, st.state, coalesce(st.severity, 'warning') AS severity, st.monitor, st.metric,
                   st.model, st.model_version, st.environment,
                   st.series, st.opened_window, st.last_window, st.last_window_end, st.n_windows,
                   st.resolved_window, st.resolved_window_end, st.resolved_value, st.resolved_reason,
                   a.value, a.baseline, a.threshold, a.p_value, a.n_groups, a.n_baseline, a.reason, a.top_slices,
                   st.opened_at, st.updated_at, st.notified, st.acknowledged_at, st.acknowledged_by, st.ack_note,
                   (SELECT max(z.until) FROM snoozes z WHERE z.monitor = st.monitor AND z.series = st.series
                      AND z.until > ?) AS snoozed_until,
                   (SELECT d.error FROM deliveries d WHERE d.alert_id = st.alert_id AND d.state = st.state
                      AND NOT d.ok AND st.notified IS DISTINCT FROM st.state ORDER BY d.attempted_at DESC LIMIT 1)
                      AS delivery_error
            FROM alert_states st LEFT JOIN alerts a
              ON a.alert_id = st.alert_id AND a.window_start = st.last_window
            WHERE {cond}
            ORDER BY coalesce(st.resolved_window, st.last_window) DESC, st.alert_id DESC{page}""",
        params=[now] + params + ([int(limit), int(offset)] if limit is not None else [])))
    return _with_top_slices(tab, root_cause=True)


def _top_type() -> Any:
    """The Arrow type of an alert's ``top_slices``: a list of slices (:data:`TOP_FIELDS`, and ``signal``)."""
    pa = require("pyarrow")
    floats = {"baseline_value", "window_value", "change", "share_window", "contribution", "p_value", "p_adjusted"}
    ints = {"n_window", "n_baseline"}
    fields = [pa.field(k, pa.float64() if k in floats else pa.int64() if k in ints else pa.string())
              for k in (*TOP_FIELDS, "column3", "value3", "signal")]
    return pa.list_(pa.struct(fields))


def _with_top_slices(tab: Any, root_cause: bool = False) -> Any:
    """``tab`` with its ``top_slices`` (stored as JSON text) as a list of slices, not a string (and a
    ``root_cause``: the first slice in words, with its values)."""
    pa = require("pyarrow")
    typ = _top_type()
    names = [f.name for f in typ.value_type]
    tops = [[{k: _cast(t.get(k), typ.value_type.field(k).type) for k in names} for t in (json.loads(x) if x else [])]
            for x in tab.column("top_slices").to_pylist()]
    i = tab.column_names.index("top_slices")
    tab = tab.set_column(i, "top_slices", pa.array(tops, typ))
    if root_cause:
        tab = tab.append_column("root_cause", pa.array([describe_top(t[0]) if t else None for t in tops], pa.string()))
    return tab


def _cast(v: Any, typ: Any) -> Any:
    pa = require("pyarrow")
    if v is None:
        return None
    if pa.types.is_floating(typ):
        return float(v)
    if pa.types.is_integer(typ):
        return int(v)
    return str(v)


def recorded_alerts(con: Any, start: Any = None, end: Any = None) -> Any:
    """The windows that fired, one row each, newest window first (``[start, end)`` on the window start), with
    the alert each belongs to and its state; ``recorded_at`` is when ``check`` recorded it (the alert names
    the window, not the run)."""
    clauses, params = [], []
    if parse_time(start, "start") is not None:
        clauses.append("a.window_start >= ?")
        params.append(parse_time(start, "start"))
    if parse_time(end, "end") is not None:
        clauses.append("a.window_start < ?")
        params.append(parse_time(end, "end"))
    cond = " AND ".join(clauses) or "TRUE"
    return _with_top_slices(fetch_arrow(con.sql(
        f"""SELECT a.window_start AS window, a.window_end, a.alert_id, st.state,
                   coalesce(a.severity, 'warning') AS severity, a.monitor, a.metric, a.model,
                   a.model_version, a.environment, a.series, a.value, a.baseline, a.threshold, a.p_value,
                   a.n_groups, a.n_baseline, a.reason, a.top_slices, a.fired_at AS recorded_at
            FROM alerts a LEFT JOIN alert_states st USING (alert_id)
            WHERE {cond} ORDER BY a.window_start DESC, a.monitor, a.series""", params=params)))
