"""Label maturity: how long after a window its labels are complete, and which windows are still provisional.

Outcomes arrive after the list they belong to (a click minutes later, a purchase days later). A window
whose labels have not all arrived looks worse than it is, so it is *provisional*: reported with
``provisional = true`` and never alerted on. The delay is ``[labels] maturity`` of the configuration, or,
when it is not set, learned from the store's own label rows (:func:`learn_maturity`).

The clock is the store's, not the wall clock: the latest time the store holds (a served list or a label
row). A window ``[start, end)`` is provisional when ``end + maturity > clock``. So a store replayed months
later gives the same answer as on the day it was filled, and a store ingested up to yesterday has its
last windows provisional whatever the time of the run.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from dataclasses import dataclass
from typing import Any

from ..config import MonitorConfig

__all__ = ["LEARN_QUANTILE", "Maturity", "learn_maturity", "maturity_of", "remember_maturity", "store_clock"]

#: Share of the label rows that arrived within the learned maturity.
LEARN_QUANTILE = 0.95
_HOUR = 3600.0
_META_KEY = "label_maturity"


@dataclass(frozen=True)
class Maturity:
    """The maturity delay in force and the store clock it is measured against.

    Attributes
    ----------
    delay : datetime.timedelta
        How long after a window ends its labels are taken as complete.
    source : str
        ``"config"`` (``[labels] maturity``), ``"learned"`` (from the store's label rows) or ``"none"``
        (no label rows to learn from: labels come in-line with the lists, complete at once).
    clock : datetime.datetime or None
        The store's latest time (a served list or a label row); None for an empty store.
    n_label_rows : int
        Label rows (with a served list in the store) the delay was learned from (0 when configured).
    """

    delay: _dt.timedelta
    source: str
    clock: _dt.datetime | None
    n_label_rows: int = 0

    @property
    def mature_until(self) -> _dt.datetime | None:
        """Windows ending at or before this time are mature; later ones are provisional. None when every
        window is mature: an empty store, or a maturity of 0 (labels complete at once: no wait, the window
        holding the clock included)."""
        return None if self.clock is None or not self.delay else self.clock - self.delay

    def provisional(self, window_end: _dt.datetime) -> bool:
        """Whether the window ending at ``window_end`` is still provisional.

        Examples
        --------
        >>> m = Maturity(_dt.timedelta(days=2), "config", _dt.datetime(2026, 10, 30, 23, 0))
        >>> m.provisional(_dt.datetime(2026, 10, 28)), m.provisional(_dt.datetime(2026, 10, 29))
        (False, True)
        """
        until = self.mature_until
        return until is not None and window_end > until

    def to_dict(self) -> dict[str, Any]:
        """For ``monitor info``: the delay (in hours and as text), where it comes from, the clock."""
        until = self.mature_until
        out: dict[str, Any] = {"delay": _text(self.delay), "hours": self.delay.total_seconds() / _HOUR,
                               "source": self.source,
                               "clock": self.clock.isoformat() if self.clock else None,
                               "mature_until": until.isoformat() if until else None}
        if self.source != "config":
            out["learned_from"] = {"label_rows": self.n_label_rows, "quantile": LEARN_QUANTILE}
        return out


def _text(d: _dt.timedelta) -> str:
    s = int(d.total_seconds())
    if s % 86400 == 0:
        return f"{s // 86400}d"
    if s % 3600 == 0:
        return f"{s // 3600}h"
    return f"{s}s"


def store_clock(con: Any) -> _dt.datetime | None:
    """The latest time in the store: a served list's time or a label row's time, whichever is later."""
    row = con.execute("SELECT greatest((SELECT max(ts) FROM groups), (SELECT max(ts) FROM feedback))").fetchall()
    return row[0][0] if row else None


def learn_maturity(con: Any) -> tuple[_dt.timedelta, int]:
    """The delay within which :data:`LEARN_QUANTILE` (95%) of the label rows arrived, rounded up to the hour.

    A label row's delay is its time minus the time of its list (the earliest served list with its
    ``group_id``; negative delays count 0). The delay is the smallest whole number of hours ``h`` such
    that at least 95% of the label rows have a delay ``<= h``: the discrete 95th percentile of the
    delays (one of them, not an interpolation), rounded up to a whole hour. Returns ``(delay, n)``,
    ``n`` the number of label rows used; ``(0, 0)`` when the store has no label row.
    """
    row = con.execute(
        """SELECT count(*), quantile_disc(greatest(epoch(f.ts) - epoch(g.t0), 0), ?)
           FROM feedback f JOIN (SELECT group_id, min(ts) AS t0 FROM groups WHERE source = 'events'
                                 GROUP BY group_id) g USING (group_id)""",
        [LEARN_QUANTILE],
    ).fetchall()[0]
    n, q = int(row[0]), row[1]
    if not n or q is None:
        return _dt.timedelta(0), 0
    return _dt.timedelta(hours=math.ceil(float(q) / _HOUR - 1e-9)), n


def _batches(con: Any) -> int:
    return int(con.execute("SELECT count(*) FROM batches").fetchall()[0][0])


def remember_maturity(con: Any) -> tuple[_dt.timedelta, int]:
    """Learn the maturity and keep it in ``meta`` (key ``label_maturity``) with the number of batches it saw: a
    writer calls it after an ingest, so that reports (each a fresh read) need not learn it again."""
    delay, n = learn_maturity(con)
    doc = json.dumps({"seconds": delay.total_seconds(), "label_rows": n, "batches": _batches(con)})
    con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [_META_KEY, doc])
    return delay, n


def _remembered(con: Any) -> tuple[_dt.timedelta, int] | None:
    """The maturity kept in ``meta`` when no batch arrived since it was learned, else None."""
    rows = con.execute("SELECT value FROM meta WHERE key = ?", [_META_KEY]).fetchall()
    if not rows:
        return None
    try:
        doc = json.loads(rows[0][0])
        if int(doc["batches"]) != _batches(con):
            return None
        return _dt.timedelta(seconds=float(doc["seconds"])), int(doc["label_rows"])
    except (ValueError, KeyError, TypeError):
        return None


def maturity_of(con: Any, config: MonitorConfig) -> Maturity:
    """The maturity in force for ``config`` over the store open on ``con`` (the learned one is read from
    ``meta`` when it is current: see :func:`remember_maturity`)."""
    clock = store_clock(con)
    if config.maturity is not None:
        return Maturity(config.maturity, "config", clock)
    delay, n = _remembered(con) or learn_maturity(con)
    return Maturity(delay, "learned" if n else "none", clock, n)
