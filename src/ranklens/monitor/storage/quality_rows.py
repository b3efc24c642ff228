"""What an ingest records for the data-quality monitors: lists that lost rows to the quarantine, and each
batch's rows per hour (for the quarantine rate of a window).

Both run in the shared store step (:func:`ranklens.monitor.storage.ingest.store_chunk`), so either engine
records them, on the chunk tables (:mod:`ranklens.monitor.storage.chunk`: ``_q``, the quarantined rows with
the list they name; ``_nh``, rows per batch and hour) and the store step's ``_gn`` (the new lists) and
``_bt`` (the batches), after the lists are stored:

* :func:`mark_partial`: a new list whose ranking rows were quarantined (a score that is not a number, a
  missing item id...; an item given twice is not a loss, its first row is kept) gets ``n_lost``, the number
  of those rows: a *partial* list, left out of the measures by default (``[evaluation] partial``). A
  quarantined ranking row belongs to a list when it names the list's ``group_id`` in the same batch and
  agrees with its model, version and environment where it gives them.
* :func:`store_row_counts`: each batch's rows and quarantined rows per hour of their time (``row_counts``).
  A row without a usable time (a timestamp that is missing or not a time, a CSV line that does not split)
  counts at the hour of the batch's latest valid row (else of its latest parsed time, else of the store's
  latest list).
"""

from __future__ import annotations

from typing import Any

__all__ = ["mark_partial", "store_row_counts"]


def mark_partial(con: Any) -> int:
    """Give the chunk's new lists that lost ranking rows to the quarantine their ``n_lost``; their number."""
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _lost AS
        SELECT n.gid, count(*) AS n FROM _q q
        JOIN _gn n ON n._b = q._b AND n.group_id = q.group_id
         AND (q.model IS NULL OR q.model = n.model) AND (q.model_version IS NULL OR q.model_version = n.model_version)
         AND (q.environment IS NULL OR q.environment = n.environment)
        WHERE q.is_ranking AND q.reason <> 'duplicate item in group'
        GROUP BY n.gid""")
    n = int(con.execute("SELECT count(*) FROM _lost").fetchall()[0][0])
    if n:
        con.execute("UPDATE groups SET n_lost = _lost.n FROM _lost WHERE groups.gid = _lost.gid")
    con.execute("DROP TABLE _lost")
    return n


def store_row_counts(con: Any, keep: list[int], unsplit_lines: dict[int, int]) -> None:
    """Rows and quarantined rows of the kept batches (indices ``keep`` of ``_bt``) per hour (from ``_nh``);
    ``unsplit_lines`` counts, per batch, the CSV lines that could not be read as rows (quarantined, at the
    batch's hour)."""
    if not keep:
        return
    kept = ", ".join(str(int(j)) for j in keep)
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE _hours AS
        SELECT bt.b, bt.batch_id, coalesce(max(h.hour) FILTER (WHERE h.rows > h.quarantined), max(h.hour),
                                           date_trunc('hour', (SELECT max(ts) FROM groups))) AS fallback
        FROM _bt bt LEFT JOIN _nh h ON h._b = bt.b WHERE bt.b IN ({kept}) GROUP BY ALL""")
    con.execute("""
        INSERT INTO row_counts
        SELECT x.batch_id, coalesce(h.hour, x.fallback), sum(h.rows), sum(h.quarantined)
        FROM _nh h JOIN _hours x ON x.b = h._b GROUP BY ALL""")
    for j, n in unsplit_lines.items():
        if n and j in keep:
            con.execute("INSERT INTO row_counts SELECT batch_id, fallback, ?, ? FROM _hours WHERE b = ?", [n, n, j])
    con.execute("DROP TABLE _hours")
