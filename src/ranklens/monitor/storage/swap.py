"""Writers never hold the store's file: each writes a copy and swaps it in when it commits.

DuckDB lets one process write a database file, and no other process open it meanwhile, not even to read.
So no ranklens writer opens the store's file for writing: a writer copies it (``<store>.staging-<side>``),
writes the copy, lets DuckDB write it whole (checkpoint, flushed to disk) and renames it over the store,
an atomic step. A reader opens the file at the store's path read-only, whichever version is there: the
one before the writer's commit or the one after, never a state in between, and never waits for a writer.
A crash leaves the store as it was before the writer began (the copy is removed by the next writer).

Writers come in two *sides* that write different tables (:data:`~ranklens.monitor.storage.schema.EVENT_TABLES`
and the others): ``"events"`` (ingests, the values' refresh) and ``"alerts"`` (``check`` recording alert
states, the webhook's delivery marks). One writer of each side at a time (a lock file per side, waited for
up to ``wait`` seconds), so ``check`` records its alerts while an ingest runs. Publishing takes a third lock
for a moment: when the store was published by the other side since this writer copied it, the other side's
tables are taken from the published store (``storage.db.merge``), so neither side's writes are lost.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...errors import RanklensError, StoreBusyError

__all__ = ["SIDES", "copy_file", "held", "identity", "lock_path", "publish", "remove", "staging_path"]

#: The writers' sides: who writes which tables of the store.
SIDES = ("events", "alerts")


def lock_path(store: Path, name: str) -> Path:
    """The lock file of a side (``events``: ``<store>.lock``; else ``<store>.<name>.lock``).

    Examples
    --------
    >>> lock_path(Path("s.duckdb"), "events").name, lock_path(Path("s.duckdb"), "publish").name
    ('s.duckdb.lock', 's.duckdb.publish.lock')
    """
    return Path(str(store) + ".lock") if name == "events" else Path(f"{store}.{name}.lock")


def staging_path(store: Path, side: str) -> Path:
    """The copy a writer of ``side`` writes before it is swapped in."""
    return Path(f"{store}.staging-{side}")


def identity(path: Path) -> tuple[int, int, int] | None:
    """What tells two versions of the store apart (inode, modification time, size); None: no file."""
    try:
        s = os.stat(path)
    except FileNotFoundError:
        return None
    return s.st_ino, s.st_mtime_ns, s.st_size


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


@contextlib.contextmanager
def held(lock: Path, wait: float, store: Path, doing: str) -> Iterator[None]:
    """An exclusive lock on the file ``lock`` for the block, waited for up to ``wait`` seconds; then
    :class:`StoreBusyError` naming the process that holds it (written into the file by its holder) and
    what it is ``doing``."""
    try:
        f = open(lock, "a+b")
    except OSError as exc:
        raise RanklensError(f"store {str(store)!r}: cannot open its lock file {str(lock)!r}: "
                            f"{exc.strerror or exc}") from None
    with f:
        deadline = time.monotonic() + wait
        delay = 0.02
        while not _try_lock(f):
            if time.monotonic() >= deadline:
                f.seek(0)
                pid = f.read(20).decode("ascii", "replace").strip()
                who = f" (process {pid})" if pid.isdigit() else ""
                raise StoreBusyError(f"store {str(store)!r} is busy: another process{who} is {doing}; waited "
                                     f"{wait:g} s (raise --wait, or try again when it is done)")
            time.sleep(delay)
            delay = min(delay * 2, 0.25)
        try:
            with contextlib.suppress(OSError):
                f.seek(0)
                f.truncate()
                f.write(str(os.getpid()).encode())
                f.flush()
            yield
        finally:
            _unlock(f)


def remove(path: Path) -> None:
    """Remove a DuckDB file and its write-ahead log, if they exist."""
    for p in (path, Path(str(path) + ".wal")):
        with contextlib.suppress(FileNotFoundError):
            p.unlink()


def copy_file(src: Path, dst: Path) -> None:
    """Copy ``src`` to a new file ``dst`` (in the kernel where it can: ``copy_file_range``, a reflink on file
    systems that share blocks)."""
    remove(dst)
    with open(src, "rb") as fi, open(dst, "wb") as fo:
        size = os.fstat(fi.fileno()).st_size
        done = 0
        kernel = getattr(os, "copy_file_range", None)
        try:
            while kernel is not None and done < size:
                n = kernel(fi.fileno(), fo.fileno(), size - done)
                if n == 0:
                    break
                done += n
        except OSError as exc:
            if done or exc.errno not in (18, 22, 38, 95):  # EXDEV, EINVAL, ENOSYS, EOPNOTSUPP: not in the kernel
                raise
        if done < size:
            fi.seek(done)
            fo.seek(done)
            shutil.copyfileobj(fi, fo, 1 << 22)


def _fsync_dir(path: Path) -> None:
    if os.name != "posix":  # pragma: no cover
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(staging: Path, store: Path) -> None:
    """Swap the written copy in: flushed to disk, then renamed over the store (atomic), the rename flushed."""
    if Path(str(staging) + ".wal").exists():  # pragma: no cover - DuckDB wrote the copy whole at close
        raise RanklensError(f"store {str(store)!r}: the new version was not written whole; nothing was changed")
    with open(staging, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(staging, store)
    _fsync_dir(store.parent)
