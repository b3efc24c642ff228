"""Integer item keys (schema version 6): each item id text stored once, in ``item_keys``, numbered ``iid``
from 1 (chunk by chunk as they are first stored); ``items``, ``item_labels`` and ``feedback`` hold the number.

:func:`chunk_keys` numbers the item ids of a chunk (new ones get the next numbers, in the order of their
text, so that the numbers do not depend on how the rows were partitioned: either engine gives the same);
it runs in the shared store step (:func:`ranklens.monitor.storage.ingest.store_chunk`). A reader that shows
an item id, or orders items by it, joins ``item_keys`` (:data:`ITEM_TEXT`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["ITEM_TEXT", "chunk_keys"]

#: The join giving the items ``i`` their id text ``k.item_id`` (a reader that shows or orders by it).
ITEM_TEXT = "JOIN item_keys k ON k.iid = i.iid"


def chunk_keys(con: Any) -> int:
    """``_ik`` (``item_id``, ``iid``): the numbers of the item ids of the chunk tables' new items (``_items``)
    and label rows (``_fb_rows``), those not yet in ``item_keys`` added to it; returns how many were new."""
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _ik AS
        SELECT n.item_id, k.iid FROM (SELECT DISTINCT item_id FROM (
            SELECT item_id FROM _items UNION ALL SELECT item_id FROM _fb_rows)) n
        LEFT JOIN item_keys k ON k.item_id = n.item_id""")
    new = int(con.execute("SELECT count(*) FROM _ik WHERE iid IS NULL").fetchall()[0][0])
    if new:
        con.execute("""
            CREATE OR REPLACE TEMP TABLE _ikn AS
            SELECT item_id, CAST((SELECT coalesce(max(iid), 0) FROM item_keys) + row_number() OVER (ORDER BY item_id)
                                 AS INTEGER) AS iid
            FROM _ik WHERE iid IS NULL""")
        con.execute("INSERT INTO item_keys SELECT iid, item_id FROM _ikn")
        con.execute("""CREATE OR REPLACE TEMP TABLE _ik AS
                       SELECT item_id, iid FROM _ik WHERE iid IS NOT NULL UNION ALL SELECT item_id, iid FROM _ikn""")
        con.execute("DROP TABLE _ikn")
    return new
