"""Opening DuckDB: every connection ranklens opens (extension auto-install and auto-load off), and telling a file
that is not a DuckDB database by its first bytes. Re-exported by :mod:`ranklens.monitor.storage.db`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..._base.deps import require

__all__ = ["CONNECT_CONFIG", "duckdb_connect", "not_duckdb"]

#: Every connection ranklens opens: DuckDB installs and loads no extension by itself (given a file of another
#: database, or a query naming a format, it would otherwise download one over the network and run it).
CONNECT_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}


def duckdb_connect(path: str | None = None, read_only: bool = False) -> Any:
    """A DuckDB connection (to ``path``, or in memory) with extension auto-install and auto-load off.

    Examples
    --------
    >>> con = duckdb_connect()
    >>> con.execute("SELECT current_setting('autoinstall_known_extensions')").fetchone()
    (False,)
    >>> con.close()
    """
    duckdb = require("duckdb")
    if path is None:
        return duckdb.connect(config=dict(CONNECT_CONFIG))
    return duckdb.connect(path, read_only=read_only, config=dict(CONNECT_CONFIG))


#: What the first bytes of other files say they are (DuckDB's own file has ``DUCK`` at byte 8).
_FOREIGN = ((b"SQLite format 3\x00", "an SQLite database"), (b"PAR1", "a Parquet file"),
            (b"\x1f\x8b", "a gzip file"), (b"PK\x03\x04", "a zip archive"))


def not_duckdb(path: Path) -> str | None:
    """Why a file is not a DuckDB database, by its first bytes ("it is an SQLite database"), else None (a DuckDB
    file, an empty or missing one: DuckDB makes a new store there).

    Examples
    --------
    >>> import sqlite3, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "s.db")
    >>> sqlite3.connect(p).execute("CREATE TABLE t (a)").connection.commit()
    >>> not_duckdb(Path(p))
    'it is an SQLite database'
    """
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError:
        return None  # missing, a directory, unreadable: DuckDB's own error names it
    if not head or head[8:12] == b"DUCK":
        return None
    return next((f"it is {what}" for magic, what in _FOREIGN if head.startswith(magic)),
                "its first bytes are not DuckDB's header")
