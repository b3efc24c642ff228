"""Opening a file for the readers: mapped into memory when it is large, gzip inflated within a bound, binary
data refused from its first bytes.

The public face of these names is :mod:`ranklens.io`.
"""

from __future__ import annotations

import mmap
import os
import zlib
from pathlib import Path
from typing import Any

from ..errors import FormatError, InputError

__all__ = ["BINARY_PROBE", "INFLATE_FLOOR", "INFLATE_RATIO", "MAP_MIN_BYTES", "file_bytes", "inflate", "open_bytes",
           "refuse_binary"]


#: Uncompressed files at least this large are mapped into memory instead of read: the pages come
#: from the page cache in one call (MAP_POPULATE) rather than being copied into fresh memory.
MAP_MIN_BYTES = 1 << 20


def _map_file(path: Path) -> mmap.mmap | None:
    """The file mapped read-only, or None (small, not a regular file, compressed, or mmap refused)."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if not (st.st_mode & 0o170000 == 0o100000 and st.st_size >= MAP_MIN_BYTES):
                return None
            if os.name == "posix":
                m = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0),
                              prot=mmap.PROT_READ)
            else:
                m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None  # read_bytes below gives the error, if any
    if m[:2] == b"\x1f\x8b":
        m.close()
        return None
    return m


def open_bytes(path: Path, mapped: bool = False) -> bytes | mmap.mmap:
    """The bytes of a file (gzip decompressed); with ``mapped``, large plain files as a read-only
    ``mmap`` (which supports ``len``, slicing and the buffer protocol, as bytes do)."""
    if mapped:
        m = _map_file(path)
        if m is not None:
            try:
                refuse_binary(m[:BINARY_PROBE], str(path))
            except FormatError:
                m.close()
                raise
            return m
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file.") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a file.") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied.") from None
    except OSError as exc:  # a symlink loop, a name too long, an I/O error...
        raise InputError(f"{path}: cannot read the file ({exc.strerror or exc}).") from None
    except ValueError:  # a NUL byte in the name
        raise InputError(f"{str(path)!r}: not a file name (it holds a NUL byte).") from None
    if data[:2] == b"\x1f\x8b":
        return inflate(data, str(path))
    refuse_binary(data[:BINARY_PROBE], str(path))
    return data


#: Decompression is bounded: a gzip file may inflate to at most this many times its own size, or to
#: :data:`INFLATE_FLOOR` bytes when that is more. Text such as TREC runs and qrels compresses 4 to 20 times;
#: deflate's largest ratio is about 1,030 (a "gzip bomb"). Past the bound the file is refused at once, before
#: the rest is inflated.
INFLATE_RATIO = 100
#: The bound of small files: any gzip file may inflate to 256 MiB.
INFLATE_FLOOR = 256 << 20


def inflate(data: bytes, path: str, limit: int | None = None) -> bytes:
    """The bytes of gzip ``data`` (every member), decompressed piece by piece within ``limit`` bytes (by default
    :data:`INFLATE_RATIO` times the compressed size, or :data:`INFLATE_FLOOR`); binary content
    (:func:`refuse_binary`) refused after the first piece.

    Examples
    --------
    >>> import gzip
    >>> inflate(gzip.compress(b"q1 0 d1 1\\n"), "qrels.gz")
    b'q1 0 d1 1\\n'
    >>> inflate(gzip.compress(b"0" * 5000), "bomb.gz", limit=4096)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ranklens.errors.FormatError: bomb.gz: the gzip data inflates to more than 4,096 bytes (...
    """
    if limit is None:
        limit = max(INFLATE_FLOOR, INFLATE_RATIO * len(data))
    out: list[bytes] = []
    total, pos, n, view, step = 0, 0, len(data), memoryview(data), 1 << 22
    d = zlib.decompressobj(wbits=31)  # one gzip member; members follow one another
    try:
        while pos < n:
            # the input in slices: the tails zlib copies stay small
            piece: bytes | memoryview = view[pos:pos + (1 << 20)]
            pos += len(piece)
            while True:
                chunk = d.decompress(piece, step)
                if not out and chunk:
                    refuse_binary(chunk[:BINARY_PROBE], path)
                total += len(chunk)
                if total > limit:
                    raise FormatError(
                        f"the gzip data inflates to more than {limit:,} bytes ({n:,} compressed bytes may inflate "
                        f"{INFLATE_RATIO} times, or to {INFLATE_FLOOR >> 20} MiB); not read (a gzip bomb? "
                        "decompress it yourself if it is real data)", path=path)
                out.append(chunk)
                if d.eof:  # the member ends: another follows, or trailing bytes gzip ignores too
                    pos -= len(d.unused_data)
                    if data[pos:pos + 2] != b"\x1f\x8b":
                        pos = n
                    else:
                        d = zlib.decompressobj(wbits=31)
                    break
                piece = d.unconsumed_tail
                if not piece:
                    break
        if not d.eof:
            raise EOFError("the compressed data ends before the end-of-stream marker")
    except (zlib.error, EOFError) as exc:
        raise FormatError(f"corrupt gzip data ({exc})", path=path) from None
    return b"".join(out)


#: Bytes of a file looked at to tell binary data from text.
BINARY_PROBE = 1 << 16

#: The first bytes of binary formats given where text is expected, and what they are.
_MAGIC = ((b"SQLite format 3\x00", "an SQLite database"), (b"PK\x03\x04", "a zip archive (or an Excel file)"),
          (b"BZh", "a bzip2 file"), (b"\xfd7zXZ\x00", "an xz file"), (b"\x28\xb5\x2f\xfd", "a zstd file"),
          (b"\x7fELF", "a program"), (b"\x89PNG", "an image"), (b"%PDF", "a PDF document"))


def refuse_binary(head: Any, path: str) -> None:
    """Refuse bytes that are not text, from the first :data:`BINARY_PROBE` bytes: a known binary format by its
    first bytes, anything else by a NUL byte (Parquet, whose first bytes are ``PAR1``, passes).

    Examples
    --------
    >>> refuse_binary(b"SQLite format 3\\x00...", "run.txt")
    Traceback (most recent call last):
    ...
    ranklens.errors.FormatError: run.txt: an SQLite database, not a text file (TREC, LETOR, CSV, TSV, JSON) nor Parquet
    """
    head = bytes(head)
    if head[:4] == b"PAR1":
        return
    what = next((name for magic, name in _MAGIC if head.startswith(magic)), None)
    nul = head.find(b"\x00")
    if what is None and nul >= 0:
        what = f"binary data (a NUL byte at byte {nul})"
    if what is not None:
        raise FormatError(f"{what}, not a text file (TREC, LETOR, CSV, TSV, JSON) nor Parquet", path=path)


def file_bytes(path: str | os.PathLike[str]) -> bytes | mmap.mmap:
    """The bytes of a file as every reader opens it (gzip decompressed, large files mapped; one-line errors)."""
    return open_bytes(Path(path), mapped=True)
