"""Two monitoring stores compared table by table: every row of every table equal (as a multiset), the ingest's
clock (``batches.ingested_at``) aside. Used to show that a change to the ingest stores what it stored before:

    python benchmarks/compare_stores.py BEFORE.duckdb AFTER.duckdb

Prints one line per table (rows, rows only in the first, rows only in the second) and exits 1 when any differ.
"""

from __future__ import annotations

import sys

import duckdb

#: Columns that hold the time of the run, not the content.
CLOCK = {("batches", "ingested_at")}


def compare(a: str, b: str) -> list[tuple[str, int, int, int]]:
    """(table, rows in ``a``, rows only in ``a``, rows only in ``b``) for every table of either store."""
    con = duckdb.connect()
    con.execute(f"ATTACH '{a}' AS a (READ_ONLY)")
    con.execute(f"ATTACH '{b}' AS b (READ_ONLY)")

    def columns(db: str, t: str) -> list[str]:
        return [r[0] for r in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE database_name = ? AND table_name = ? ORDER BY column_index",
            [db, t]).fetchall()]

    tables = sorted({r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name IN ('a', 'b')").fetchall()})
    out = []
    for t in tables:
        ca, cb = columns("a", t), columns("b", t)
        if ca != cb:
            out.append((t, -1, len(ca), len(cb)))
            continue
        cols = ", ".join('"' + c.replace('"', '""') + '"' for c in ca if (t, c) not in CLOCK)
        n = con.execute(f'SELECT count(*) FROM a."{t}"').fetchall()[0][0]
        only_a = con.execute(f'SELECT count(*) FROM (SELECT {cols} FROM a."{t}" EXCEPT ALL '
                             f'SELECT {cols} FROM b."{t}")').fetchall()[0][0]
        only_b = con.execute(f'SELECT count(*) FROM (SELECT {cols} FROM b."{t}" EXCEPT ALL '
                             f'SELECT {cols} FROM a."{t}")').fetchall()[0][0]
        out.append((t, n, only_a, only_b))
    return out


def main() -> int:
    rows = compare(sys.argv[1], sys.argv[2])
    for t, n, x, y in rows:
        print(f"{t:16s} rows {n:>10,}  only in first {x:>8,}  only in second {y:>8,}"
              + ("  (columns differ)" if n == -1 else ""))
    same = all(n >= 0 and x == 0 and y == 0 for _t, n, x, y in rows)
    print("SAME" if same else "DIFFERENT")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
