"""The store's DuckDB file: opening it (readers on the current version, writers on a copy swapped in at
commit, migrations), transactions, the catalogue of slice and measure columns, and the SQL of a selection
of groups.

Every call opens the file for its own duration. A reader opens the version of the file the store's path
names, read-only, and never waits for a writer: a writer writes a copy and swaps it in when it commits
(:mod:`ranklens.monitor.storage.swap`). A second writer of the same side waits up to ``wait`` seconds for
the first, then gets :class:`~ranklens.errors.StoreBusyError`; so does a reader when another program
holds the file open for writing.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..._base.deps import require
from ...errors import InputError, InvalidParameterError, RanklensError, ResourceError, StoreBusyError
from .connect import duckdb_connect, not_duckdb
from .params import parse_time
from .schema import EVENT_TABLES, SCHEMA_VERSION, mark, migrate, recognise, schema_version
from .swap import SIDES, copy_file, held, identity, lock_path, publish, remove, staging_path

__all__ = [
    "BASE_COLUMNS", "Database", "column_sql", "duckdb_connect", "feature_columns", "fetch_arrow", "filters_sql",
    "merge", "metric_columns", "not_duckdb", "quote", "slice_columns", "store_failure", "transaction",
]

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

    Readers open the file at the store's path read-only and never wait for a writer: writers write a copy
    and swap it in when they commit (:mod:`ranklens.monitor.storage.swap`). A reader's connection shares
    one DuckDB instance per version of the file in a process (the dashboard's requests share its cache).

    Parameters
    ----------
    path : Path
        The DuckDB file.
    read_only : bool
        Refuse to open it for writing.
    wait : float
        Seconds to wait for another writer (of the same side), or another process holding the file.
    """

    def __init__(self, path: Path, read_only: bool, wait: float) -> None:
        self.path = path
        self.read_only = read_only
        self.wait = wait

    def _retrying(self, open_it: Any) -> Any:
        """``open_it()`` again while DuckDB says another process holds the file, up to ``wait`` seconds."""
        duckdb = require("duckdb")
        other = not_duckdb(self.path)
        if other is not None:
            raise InputError(f"store {str(self.path)!r} is not a DuckDB database ({other}); give --store a ranklens "
                             "store, or a new file.")
        deadline = time.monotonic() + self.wait
        delay = 0.02
        while True:
            try:
                return open_it()
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

    def connect(self, write: bool = False) -> Any:
        """A connection to the store (the caller closes it): read-only on the file at the store's path, or,
        with ``write``, open for writing in place (only :meth:`prepare` does, to replay a write-ahead log a
        crashed writer of another program left; ranklens' writers use :meth:`writing`)."""
        if write and self.read_only:
            raise InvalidParameterError(f"store {str(self.path)!r} is open read-only; it cannot be written.")
        if not write and not self.path.exists():
            raise InputError(f"store {str(self.path)!r} does not exist; ingest events first (ranklens monitor ingest).")
        if write:
            return self._checked(self._retrying(lambda: _connect_file(self.path)), True)
        return self._checked(self._retrying(lambda: _reader(self.path)), False)

    def _checked(self, con: Any, write: bool) -> Any:
        duckdb = require("duckdb")
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

    def _current(self) -> bool:
        """Whether the store exists, is ours and of this schema version, with no write-ahead log left by a
        crash (else :meth:`prepare` has work to do); another application's file or a newer schema raise."""
        if not self.path.exists() or Path(str(self.path) + ".wal").exists():
            return False
        con = self._retrying(lambda: _reader(self.path))
        try:
            kind, _ = recognise(con)
            version = schema_version(con)
        finally:
            con.close()
        if kind == "foreign" or version > SCHEMA_VERSION:
            self._checked(self._retrying(lambda: _reader(self.path)), True)  # raises the error that says why
        return kind == "ours" and version == SCHEMA_VERSION

    def prepare(self) -> None:
        """Before anything is written: the store created (empty, marked as ours) when it does not exist, migrated
        to this schema version when older, a write-ahead log left by a crashed writer of another program
        replayed. The rare case waits for every writer; a current store is only looked at."""
        duckdb = require("duckdb")
        if self.read_only:
            raise InvalidParameterError(f"store {str(self.path)!r} is open read-only; it cannot be written.")
        try:
            if self._current():
                return
        except duckdb.Error as exc:
            raise store_failure(self.path, exc) from None
        with held(lock_path(self.path, "events"), self.wait, self.path, "writing to it"), \
                held(lock_path(self.path, "alerts"), self.wait, self.path, "recording alerts in it"):
            if Path(str(self.path) + ".wal").exists():
                with contextlib.suppress(InputError):  # replayed in place; another application's file: refused below
                    self.connect(write=True).close()
            if self._current():
                return
            staging = staging_path(self.path, "migrate")
            try:
                if self.path.exists():
                    copy_file(self.path, staging)
                self._checked(self._retrying(lambda: _connect_file(staging)), True).close()
                with held(lock_path(self.path, "publish"), self.wait, self.path, "writing to it"):
                    publish(staging, self.path)
            except (OSError, duckdb.Error) as exc:
                raise store_failure(self.path, exc) from None
            finally:
                remove(staging)

    @contextlib.contextmanager
    def reading(self) -> Iterator[Any]:
        """A read-only connection for the duration of a block; DuckDB's errors become one line
        (:func:`store_failure`)."""
        with self._open(self.connect(write=False)) as con:
            yield con

    @contextlib.contextmanager
    def writing(self, side: str = "events") -> Iterator[Any]:
        """A connection open for writing for the duration of a block, on a copy of the store swapped in when
        the block ends (nothing of it when it raises); DuckDB's errors become one line (:func:`store_failure`).

        ``side`` says which tables the block writes: ``"events"`` (ingest, refresh: the tables of
        :data:`~ranklens.monitor.storage.schema.EVENT_TABLES`) or ``"alerts"`` (the others). One writer of
        each side at a time; what the other side published meanwhile is kept (:func:`merge`).
        """
        duckdb = require("duckdb")
        if side not in SIDES:
            raise InvalidParameterError(f"`side` must be one of {', '.join(SIDES)}; got {side!r}.")
        self.prepare()
        doing = "writing to it" if side == "events" else "recording alerts in it"
        with held(lock_path(self.path, side), self.wait, self.path, doing):
            staging = staging_path(self.path, side)
            try:
                before = identity(self.path)
                copy_file(self.path, staging)
                con = self._checked(self._retrying(lambda: _connect_file(staging)), True)
            except (OSError, duckdb.Error) as exc:
                remove(staging)
                raise store_failure(self.path, exc) from None
            try:
                with self._open(con) as c:
                    yield c
                    c.execute("CHECKPOINT")  # the copy written whole (a failure raises here, not at close)
                with held(lock_path(self.path, "publish"), self.wait, self.path, doing):
                    if identity(self.path) != before:  # the other side published meanwhile
                        staging = self._merged(staging, side)
                    publish(staging, self.path)
            except (OSError, duckdb.Error) as exc:
                raise store_failure(self.path, exc) from None
            finally:
                remove(staging)

    def _merged(self, staging: Path, side: str) -> Path:
        """The written copy with the other side's tables as published since it was copied: the events side
        takes the alerts' tables from the store into its copy; the alerts side takes a new copy of the store
        and brings its own tables into it (the smaller move either way)."""
        if side == "events":
            target, source = staging, self.path
        else:
            target, source = staging_path(self.path, "merge"), staging
            copy_file(self.path, target)
        con = self._retrying(lambda: _connect_file(target))
        try:
            merge(con, source, "alerts")
        finally:
            con.close()
        if target != staging:
            remove(staging)
        return target

    @contextlib.contextmanager
    def notifying(self) -> Iterator[None]:
        """Held while the alert changes not yet delivered are read, sent and marked: one process delivers
        at a time, so two ``monitor check`` runs do not send the same change twice (the second waits up to
        ``wait`` seconds, then finds it delivered). A lock file beside the store (``<store>.notify.lock``),
        not a writer's: ingests and readers go on while a webhook is slow."""
        with held(lock_path(self.path, "notify"), self.wait, self.path,
                  "delivering alerts to the webhook (`monitor check`)"):
            yield

    @contextlib.contextmanager
    def _open(self, con: Any) -> Iterator[Any]:
        duckdb = require("duckdb")
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


def merge(con: Any, other: Path, side: str) -> None:
    """Replace, in the database open for writing on ``con``, the tables of ``side`` (``"events"``: those of
    :data:`EVENT_TABLES`; ``"alerts"``: the others) by those of the database file ``other``, in one
    transaction: one side's writes brought into a copy that holds the other's."""
    con.execute(f"ATTACH {_literal(str(other))} AS _published (READ_ONLY)")
    try:
        with transaction(con):
            for (t,) in con.execute("SELECT table_name FROM information_schema.tables WHERE table_catalog = "
                                    "'_published' AND table_schema = 'main' ORDER BY 1").fetchall():
                if (t in EVENT_TABLES) != (side == "events"):
                    continue
                con.execute(f"DELETE FROM {quote(t)}")
                con.execute(f"INSERT INTO {quote(t)} SELECT * FROM _published.main.{quote(t)}")
    finally:
        con.execute("DETACH _published")


def _literal(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _connect_file(path: Path) -> Any:
    """A connection open for writing on one DuckDB file (a writer's copy, or a store recovered in place)."""
    return duckdb_connect(str(path))


#: Readers' DuckDB instances, one per store file version (path -> (identity, connection)), most recent last.
_READERS: OrderedDict[str, tuple[Any, Any]] = OrderedDict()
_READERS_LOCK = threading.Lock()
_READERS_KEPT = 4


def _reader(path: Path) -> Any:
    """A read-only connection to the store's current file. One in-memory DuckDB instance per version of the
    file attaches it read-only and hands out cursors (the dashboard's concurrent requests share its cache); a
    new version (a writer swapped its copy in) gets a new instance (DuckDB's own cache of instances is keyed
    by path, and would go on serving the file the path named before)."""
    key = str(path.resolve())
    version = identity(path)
    with _READERS_LOCK:
        hit = _READERS.get(key)
        if hit is None or hit[0] != version:
            base = duckdb_connect()
            base.execute(f"ATTACH {_literal(key)} AS ranklens_store (READ_ONLY)")
            _READERS[key] = hit = (version, base)
        _READERS.move_to_end(key)
        while len(_READERS) > _READERS_KEPT:
            _READERS.popitem(last=False)  # the instance closes once its cursors are
        con = hit[1].cursor()
    con.execute("USE ranklens_store")
    return con


# -- catalogue ---------------------------------------------------------------------------------------------
def feature_columns(con: Any) -> dict[str, str]:
    """Feature name -> its kind (``numeric``, ``categorical``): the columns ``feature:<name>`` of ``items``."""
    rows = con.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'items' "
                       "AND table_schema = 'main' AND table_catalog = current_database() "
                       "AND starts_with(column_name, 'feature:') ORDER BY column_name").fetchall()
    return {c.split(":", 1)[1]: "numeric" if t == "DOUBLE" else "categorical" for c, t in rows}


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
