"""The store's DuckDB file: opening it (file lock with a wait, migrations), transactions, the catalogue
of slice and measure columns, and the SQL of a selection of groups.

Every call opens the file for its own duration, so another process can ingest between two calls. A
writer holds DuckDB's file lock: a second writer (or a reader) waits up to ``wait`` seconds for it, then
gets :class:`~ranklens.errors.StoreBusyError`.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..._base.deps import require
from ...errors import InputError, InvalidParameterError, RanklensError, ResourceError, StoreBusyError
from .params import parse_time
from .schema import SCHEMA_VERSION, mark, migrate, recognise, schema_version

__all__ = [
    "BASE_COLUMNS", "Database", "column_sql", "duckdb_connect", "fetch_arrow", "filters_sql", "metric_columns",
    "not_duckdb", "quote", "slice_columns", "store_failure", "transaction",
]

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


#: DuckDB's message when another process holds the file's lock ("Could not set lock on file ...: Conflicting
#: lock is held in ... (PID 123)"); only this one is waited for ("block" in "Corrupt ... in block" is no lock).
_LOCK_HELD = re.compile(r"could not set lock|conflicting lock", re.IGNORECASE)

BASE_COLUMNS = ("model", "model_version", "environment", "group_id")


def fetch_arrow(rel: Any) -> Any:
    """A DuckDB relation as a pyarrow Table (whichever method this duckdb has)."""
    f = getattr(rel, "to_arrow_table", None)
    return f() if f is not None else rel.arrow()


def quote(name: str) -> str:
    """A SQL identifier in double quotes.

    Examples
    --------
    >>> quote('s_"x')
    '"s_""x"'
    """
    return '"' + name.replace('"', '""') + '"'


@contextlib.contextmanager
def transaction(con: Any) -> Iterator[None]:
    """One transaction: committed when the block ends, rolled back when it raises.

    The error that stopped the block is the one raised: when DuckDB has already ended the transaction
    (a failed write, a full disk), the rollback's own complaint ("no transaction is active") is dropped.
    """
    con.execute("BEGIN TRANSACTION")
    try:
        yield
        con.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(Exception):
            con.execute("ROLLBACK")
        raise


_CAUSES = (
    ("no space left on device", "the disk holding it is full (No space left on device)"),
    ("file too large", "a file size limit was reached (File too large)"),
    ("disk quota exceeded", "the disk quota is exceeded"),
    ("read-only file system", "its file system is read-only"),
    ("permission denied", "permission denied"),
)


def _from_the_store(exc: BaseException) -> bool:
    """Whether a DuckDB error comes from the file or the machine (disk, damage, memory, permissions), not from
    a statement of ranklens (a binder or parser error is a bug: it stays an internal error)."""
    duckdb = require("duckdb")
    kinds = tuple(getattr(duckdb, n) for n in ("IOException", "FatalException", "SerializationException",
                                               "OutOfMemoryException", "PermissionException") if hasattr(duckdb, n))
    low = str(exc).lower()
    return isinstance(exc, kinds) or any(w in low for w, _ in _CAUSES) or any(w in low for w in _DAMAGE)


_OUT_OF = ("no space left on device", "file too large", "disk quota exceeded")

_DAMAGE = ("corrupt", "checksum", "invalid block", "not a valid duckdb", "unexpected end", "failed to read",
           "could not read")


def store_failure(path: Path, exc: BaseException, doing: str = "") -> RanklensError:
    """The one-line error of a DuckDB failure on the store, naming its cause (a full disk, a damaged file...).

    Examples
    --------
    >>> e = store_failure(Path("s.duckdb"), OSError("IO Error: Could not write file: No space left on device"))
    >>> print(str(e).split(";")[0])
    store 's.duckdb': cannot write: the disk holding it is full (No space left on device)
    """
    text = " ".join(str(exc).split())
    low = text.lower()
    for needle, cause in _CAUSES:
        if needle in low:
            # out of disk space, quota or file size: the machine's resource (exit 71); else the path's (exit 2)
            kind = ResourceError if needle in _OUT_OF else RanklensError
            return kind(f"store {str(path)!r}: cannot write: {cause}; the batch or update under way was not stored")
    if any(w in low for w in _DAMAGE):
        return RanklensError(f"store {str(path)!r} is damaged: {text[:300]}")
    return RanklensError(f"store {str(path)!r}{' ' + doing if doing else ''}: {text[:300]}")


class Database:
    """Where the store lives and how it is opened.

    Parameters
    ----------
    path : Path
        The DuckDB file.
    read_only : bool
        Refuse to open it for writing.
    wait : float
        Seconds to wait for another process holding the file.
    create : bool
        A writer may create the file (an ingest); any other use of a missing file is an error that creates
        nothing.
    """

    def __init__(self, path: Path, read_only: bool, wait: float, create: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self.wait = wait
        self.create = create

    def connect(self, write: bool) -> Any:
        """A connection to the file, migrated to the current schema when ``write`` (the caller closes it)."""
        duckdb = require("duckdb")
        if write and self.read_only:
            raise InvalidParameterError(f"store {str(self.path)!r} is open read-only; it cannot be written.")
        if not (write and self.create) and not self.path.is_file():
            what = "is not a file" if self.path.exists() else "does not exist"
            raise InputError(f"store {str(self.path)!r} {what}; ingest events first (ranklens monitor ingest).")
        other = not_duckdb(self.path)
        if other is not None:
            raise InputError(f"store {str(self.path)!r} is not a DuckDB database ({other}); give --store a ranklens "
                             "store, or a new file.")
        deadline = time.monotonic() + self.wait
        delay = 0.02
        while True:
            try:
                con = duckdb_connect(str(self.path), read_only=not write)
                break
            except duckdb.Error as exc:
                text = str(exc)
                if not _LOCK_HELD.search(text):
                    raise store_failure(self.path, exc, "cannot be opened") from None
                if time.monotonic() >= deadline:
                    holder = re.search(r"PID (\d+)", text)
                    who = f" (process {holder.group(1)})" if holder else ""
                    raise StoreBusyError(
                        f"store {str(self.path)!r} is busy: another process{who} is writing to it; "
                        f"waited {self.wait:g} s (raise --wait, or try again when it is done)"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.25)
        try:
            return self._prepare(con, write)
        except BaseException as exc:
            with contextlib.suppress(Exception):
                con.close()
            if isinstance(exc, duckdb.Error):
                raise store_failure(self.path, exc) from None
            raise

    def _prepare(self, con: Any, write: bool) -> Any:
        """Check an open file is a store of ours (of this schema version), migrate it when ``write``."""
        try:
            con.execute("SET TimeZone = 'UTC'")
        except Exception:  # pragma: no cover - ICU not loaded: timestamps are naive UTC anyway
            pass
        kind, tables = recognise(con)
        if kind == "foreign":
            shown = ", ".join(tables[:6]) + (", ..." if len(tables) > 6 else "")
            raise InputError(
                f"store {str(self.path)!r} is not a ranklens store: it is a DuckDB database of another application "
                f"(tables {shown}); ranklens does not write into it. Give --store a new file."
            )
        version = schema_version(con)
        if write:
            if version > SCHEMA_VERSION:
                con.close()
                raise InputError(
                    f"store {str(self.path)!r} has schema version {version}, newer than this ranklens "
                    f"({SCHEMA_VERSION}); upgrade ranklens."
                )
            migrate(con)
            if kind != "ours":  # a new store, or one of a ranklens before the marker
                mark(con)
        elif version != SCHEMA_VERSION:
            con.close()
            raise InputError(
                f"store {str(self.path)!r} has schema version {version}; this ranklens reads version "
                f"{SCHEMA_VERSION}. Open it once for writing (e.g. ranklens monitor ingest) to migrate it."
            )
        return con

    @contextlib.contextmanager
    def reading(self) -> Iterator[Any]:
        """A read-only connection for the duration of a block; DuckDB's errors become one line
        (:func:`store_failure`)."""
        with self._open(write=False) as con:
            yield con

    @contextlib.contextmanager
    def writing(self) -> Iterator[Any]:
        """A writing connection for the duration of a block; DuckDB's errors become one line
        (:func:`store_failure`)."""
        with self._open(write=True) as con:
            yield con

    @contextlib.contextmanager
    def notifying(self) -> Iterator[None]:
        """Held while the alert changes not yet delivered are read, sent and marked: one process delivers
        at a time, so two ``monitor check`` runs do not send the same change twice (the second waits up to
        ``wait`` seconds, then finds it delivered). A lock file beside the store (``<store>.notify.lock``),
        not the store's own lock: ingests and readers go on while a webhook is slow."""
        lock = Path(str(self.path) + ".notify.lock")
        if not self.path.is_file():
            raise InputError(f"store {str(self.path)!r} does not exist; ingest events first (ranklens monitor ingest).")
        try:
            f = open(lock, "a+b")
        except OSError as exc:
            raise RanklensError(f"store {str(self.path)!r}: cannot open its lock file {str(lock)!r}: "
                                f"{exc.strerror or exc}") from None
        with f:
            deadline = time.monotonic() + self.wait
            delay = 0.02
            while not _try_lock(f):
                if time.monotonic() >= deadline:
                    raise StoreBusyError(
                        f"store {str(self.path)!r} is busy: another `monitor check` is delivering alerts to the "
                        f"webhook; waited {self.wait:g} s (raise --wait, or try again when it is done)")
                time.sleep(delay)
                delay = min(delay * 2, 0.25)
            try:
                yield
            finally:
                _unlock(f)

    @contextlib.contextmanager
    def _open(self, write: bool) -> Iterator[Any]:
        duckdb = require("duckdb")
        con = self.connect(write=write)
        try:
            yield con
        except duckdb.Error as exc:
            with contextlib.suppress(Exception):
                con.close()
            if _from_the_store(exc):
                raise store_failure(self.path, exc) from None
            raise
        except BaseException:
            with contextlib.suppress(Exception):
                con.close()
            raise
        try:
            con.close()  # a writer's close writes the file (checkpoint): it may fail too
        except duckdb.Error as exc:
            raise store_failure(self.path, exc) from None


def _try_lock(f: Any) -> bool:
    """An exclusive lock on an open file, without waiting (flock on POSIX, msvcrt on Windows)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        import msvcrt

        try:
            f.seek(0)
            msvcrt.locking(f.fileno(), msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
            return True
        except OSError:
            return False
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False


def _unlock(f: Any) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        import msvcrt

        f.seek(0)
        msvcrt.locking(f.fileno(), msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
        return
    fcntl.flock(f.fileno(), fcntl.LOCK_UN)


# -- catalogue ---------------------------------------------------------------------------------------------
def slice_columns(con: Any) -> dict[str, str]:
    """Slice name -> its column in ``groups``."""
    return dict(con.execute("SELECT name, col FROM slice_columns ORDER BY name").fetchall())


def metric_columns(con: Any) -> dict[str, tuple[str, str]]:
    """Tracked measure key -> (its column in ``groups``, the configuration fingerprint of its values)."""
    return {k: (c, f) for k, c, f in con.execute("SELECT key, col, fingerprint FROM metric_columns").fetchall()}


def column_sql(con: Any, name: str, slices: dict[str, str] | None = None) -> str:
    """The SQL column of a series or filter name (model, ..., group_id or a slice); else an error naming it."""
    slices = slice_columns(con) if slices is None else slices
    n = str(name).lower()
    if n in BASE_COLUMNS:
        return n
    if n in slices:
        return quote(slices[n])
    known = ", ".join(list(BASE_COLUMNS) + sorted(slices))
    raise InvalidParameterError(f"unknown column {name!r}; known: {known}.")


def filters_sql(
    con: Any, where: Mapping[str, Any] | None, start: Any, end: Any, alias: str = ""
) -> tuple[str, list[Any]]:
    """(SQL condition, parameters) selecting the groups of ``where`` served in ``[start, end)``."""
    p = f"{alias}." if alias else ""
    clauses: list[str] = []
    params: list[Any] = []
    slices = slice_columns(con)
    if where is not None and not isinstance(where, Mapping):
        raise InvalidParameterError(f"`where` must be a mapping {{column: value or [values]}}; got {where!r}.")
    for col, val in (where or {}).items():
        c = column_sql(con, col, slices)
        vals = list(val) if isinstance(val, (list, tuple, set)) else [val]
        if not vals:
            raise InvalidParameterError(f"`where` gives no value for {col!r}.")
        if any(v is None for v in vals):
            rest = f" OR {p}{c} IN ({', '.join('?' * (len(vals) - 1))}))" if len(vals) > 1 else ")"
            clauses.append(f"({p}{c} IS NULL" + rest)
        else:
            clauses.append(f"{p}{c} IN ({', '.join('?' * len(vals))})")
        params.extend(str(v) for v in vals if v is not None)
    ts, te = parse_time(start, "start"), parse_time(end, "end")
    if ts is not None:
        clauses.append(f"{p}ts >= ?")
        params.append(ts)
    if te is not None:
        clauses.append(f"{p}ts < ?")
        params.append(te)
    return (" AND ".join(clauses) if clauses else "TRUE"), params
