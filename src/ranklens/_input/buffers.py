"""Ids and numbers as buffers: string ids without pyarrow, numpy <-> Arrow without pandas.

:class:`StrIds` holds string ids in Arrow's ``large_string`` layout without
pyarrow; :func:`as_ids` normalises any id input to one of the layouts of
:class:`ranklens._input.ids.IdColumn`; the other functions move numeric columns
between numpy and Arrow (zero-copy where possible) and widen Arrow's 32-bit
string offsets to 64 bits.
"""

from __future__ import annotations

import mmap
import sys
from typing import Any

import numpy as np

from ..errors import InputError

__all__ = [
    "StrIds",
    "arrow_to_numpy",
    "as_ids",
    "chunk_run_heads",
    "chunked_to_numpy",
    "empty_array",
    "np_to_arrow",
    "pyarrow",
    "read_numbers",
    "string_chunk_buffers",
    "to_str_ids",
    "widen_chunks",
    "widen_strings",
    "zeros_array",
]


def pyarrow() -> Any:
    """The pyarrow module, imported on first use (a twentieth of a second at start-up)."""
    import pyarrow as pa

    return pa


_NP_OF_ARROW: dict[str, np.dtype[Any]] = {
    "int8": np.dtype(np.int8), "int16": np.dtype(np.int16), "int32": np.dtype(np.int32), "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8), "uint16": np.dtype(np.uint16), "uint32": np.dtype(np.uint32),
    "uint64": np.dtype(np.uint64), "halffloat": np.dtype(np.float16), "float": np.dtype(np.float32),
    "double": np.dtype(np.float64),
}


class StrIds:
    """String ids in Arrow's ``large_string`` layout, without pyarrow: ``offsets`` (int64, n + 1) and
    UTF-8 ``data`` (uint8); id ``i`` is ``data[offsets[i]:offsets[i + 1]]``.

    The TREC readers return their ids in this form, so that reading and evaluating TREC files does
    not import pyarrow (a twentieth of a second at start-up). It converts to Arrow on demand
    (``pa.array(ids)``, :meth:`to_arrow`) and to Python strings (:meth:`to_numpy`,
    :meth:`to_pylist`).

    Examples
    --------
    >>> import numpy as np
    >>> from ranklens.data import StrIds
    >>> ids = StrIds(np.array([0, 2, 5]), np.frombuffer(b"q1q10", np.uint8))
    >>> len(ids), ids.to_pylist()
    (2, ['q1', 'q10'])
    """

    __slots__ = ("data", "offsets")

    def __init__(self, offsets: np.ndarray, data: np.ndarray):
        self.offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        self.data = np.ascontiguousarray(data, dtype=np.uint8)

    def __len__(self) -> int:
        return int(self.offsets.shape[0]) - 1

    def __repr__(self) -> str:
        head = self.take(np.arange(min(len(self), 3))).to_pylist()
        return f"StrIds({len(self)} ids: {', '.join(head)}{', ...' if len(self) > 3 else ''})"

    def take(self, idx: Any) -> StrIds:
        """The ids at positions ``idx``."""
        from .._kernels.api import gather

        idx = np.asarray(idx, dtype=np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= len(self)):
            raise IndexError(f"index out of range for {len(self)} ids")
        data = self.data if self.data.size else np.zeros(1, np.uint8)
        out, offs = gather(data, self.offsets[idx], self.offsets[idx + 1])
        return StrIds(offs, out)

    def to_arrow(self) -> Any:
        """A ``pyarrow.LargeStringArray`` over the same memory."""
        pa = pyarrow()
        return pa.LargeStringArray.from_buffers(len(self), pa.py_buffer(self.offsets), pa.py_buffer(self.data))

    def __arrow_array__(self, type: Any = None) -> Any:
        arr = self.to_arrow()
        return arr if type is None or type == arr.type else arr.cast(type)

    def to_numpy(self) -> np.ndarray:
        """The ids as an object array of ``str``."""
        n = len(self)
        offs = self.offsets
        body = self.data[offs[0]:offs[-1]] if n else self.data[:0]
        lens = np.diff(offs)
        width = int(lens.max()) if n else 0
        # ASCII without NUL bytes: one fixed-width byte matrix decoded by numpy, no Python loop
        if n and width and n * width <= 4 * body.size + (1 << 20) and not ((body >= 128) | (body == 0)).any():
            mat = np.zeros((n, width), np.uint8)
            rows = np.repeat(np.arange(n), lens)
            cols = np.arange(body.size) - np.repeat(offs[:-1] - offs[0], lens)
            mat[rows, cols] = body
            return mat.view(f"S{width}").ravel().astype(f"U{width}").astype(object)
        if n and width == 0:
            return np.full(n, "", dtype=object)
        return np.asarray(self.to_arrow().to_pylist(), dtype=object)

    def to_pylist(self) -> list[str]:
        return self.to_numpy().tolist()


def arrow_to_numpy(arr: Any) -> np.ndarray:
    """A numeric/boolean Arrow array as numpy, zero-copy when it has no nulls (and without importing
    pandas, which pyarrow's generic conversion does)."""
    pa = pyarrow()
    t = arr.type
    if arr.null_count == 0 and (pa.types.is_integer(t) or pa.types.is_floating(t)):
        # straight from the value buffer: Array.to_numpy() imports pandas (~0.1 s) when it is installed
        dtype = _NP_OF_ARROW.get(str(t))
        if dtype is None:
            return arr.to_numpy(zero_copy_only=False)
        buf = arr.buffers()[1]
        return np.frombuffer(buf, dtype=dtype)[arr.offset: arr.offset + len(arr)]
    return arr.to_numpy(zero_copy_only=False)


def np_to_arrow(a: np.ndarray) -> Any:
    """A numeric numpy array as an Arrow array without copying (``pa.array`` would import pandas, which
    costs a tenth of a second at start-up when it is installed)."""
    pa = pyarrow()
    a = np.ascontiguousarray(a)
    if a.dtype == np.bool_:
        return pa.array(a)
    return pa.Array.from_buffers(pa.from_numpy_dtype(a.dtype), a.shape[0], [None, pa.py_buffer(a)])


def widen_strings(arr: Any) -> Any:
    """A string array without nulls as large_string: its 32-bit offsets widened (no pyarrow.compute,
    whose import costs a few hundredths of a second)."""
    pa = pyarrow()
    bufs = arr.buffers()
    offs = np.frombuffer(bufs[1], dtype=np.int32)[arr.offset: arr.offset + len(arr) + 1].astype(np.int64)
    data = bufs[2] if bufs[2] is not None else pa.py_buffer(b"")
    return pa.LargeStringArray.from_buffers(len(arr), pa.py_buffer(offs), data)


#: From this many bytes on, :func:`empty_array` takes its memory from Arrow's pool.
POOL_MIN_BYTES = 1 << 20


def empty_array(n: int, dtype: Any) -> np.ndarray:
    """An uninitialised writeable array of ``n`` values, its memory from Arrow's memory pool when pyarrow is loaded
    and the array is large (:data:`POOL_MIN_BYTES`), else from numpy.

    A column's copy taken from the pool reuses the memory the pool holds already (what decoding a Parquet file
    freed, the arrays of an earlier call): fresh pages cost their faults (~2 ms per MB on a loaded machine, more
    than the copy itself), and numpy hands arrays this large back to the system when they are freed.

    Examples
    --------
    >>> import numpy as np
    >>> a = empty_array(3, np.float64)
    >>> a[:] = 1.5
    >>> a.tolist()
    [1.5, 1.5, 1.5]
    """
    dtype = np.dtype(dtype)
    size = n * dtype.itemsize
    if size < POOL_MIN_BYTES or "pyarrow" not in sys.modules:
        return np.empty(n, dtype)
    buf = pyarrow().allocate_buffer(size)
    _small_pages(buf.address, size)
    return np.frombuffer(buf, dtype=dtype, count=n)


def zeros_array(n: int, dtype: Any) -> np.ndarray:
    """A zero-filled writeable array of ``n`` values that costs memory only where it is written: for a large array
    (:data:`POOL_MIN_BYTES`), a fresh anonymous mapping of ordinary 4 kB pages (the system's zero pages until
    touched), else :func:`numpy.zeros`.

    For an array of which few values are set (offsets of a few tied rows among 10M): numpy asks for transparent huge
    pages for large arrays, so each value written cleared its 2 MB page (6 ms a call for 1,000 rows of 10M, 65 ms
    on the first, against ~2 ms here).

    Examples
    --------
    >>> a = zeros_array(1_000_000, np.int64)
    >>> a[[3, 999_999]] = 7
    >>> int(a.sum()), a.flags.writeable
    (14, True)
    """
    dtype = np.dtype(dtype)
    size = n * dtype.itemsize
    if size < POOL_MIN_BYTES:
        return np.zeros(n, dtype)
    out = np.frombuffer(mmap.mmap(-1, size), dtype=dtype, count=n)
    _small_pages(out.ctypes.data, size)
    return out


#: ``madvise``'s advice not to back a range with transparent huge pages (Linux).
MADV_NOHUGEPAGE = getattr(mmap, "MADV_NOHUGEPAGE", 15)


def _small_pages(address: int, size: int) -> None:
    """Ask Linux to back the pages of ``address:address + size`` with ordinary 4 kB pages, not transparent huge pages.

    Arrow's pool asks for huge pages; where the kernel is set to compact memory for them on the spot (``defrag``
    ``madvise``), the first touch of a fresh column-sized buffer right after a large file read stalled 0.1-0.3 s
    (system time) on a 10M-row table, against ~0.03 s for its 4 kB pages; the buffer's later reuse from the pool
    faults nothing either way. Elsewhere, or where the call fails, nothing changes (the pages are the same memory)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    if "fn" not in _MADVISE:
        try:
            fn = ctypes.CDLL(None, use_errno=True).madvise
            fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
            fn.restype = ctypes.c_int
        except (OSError, AttributeError):  # pragma: no cover - no libc symbols to call
            fn = None
        _MADVISE["fn"] = fn
    fn = _MADVISE["fn"]
    lo, hi = (address + 4095) & ~4095, (address + size) & ~4095  # whole pages inside the buffer
    if fn is not None and hi > lo:
        fn(lo, hi - lo, MADV_NOHUGEPAGE)


_MADVISE: dict[str, Any] = {}


def chunked_to_numpy(x: Any, dtype: Any) -> np.ndarray:
    """A numeric or boolean Arrow ChunkedArray as one numpy array of ``dtype``, filled chunk by chunk from the
    chunks' buffers (a null gives NaN: read it as a float dtype then): no combined copy beside the result
    (:func:`empty_array`), and no pandas import (pyarrow's ``to_numpy`` of a chunk with nulls or of booleans makes
    one when pandas is installed)."""
    pa = pyarrow()
    out = empty_array(len(x), dtype)
    pos = 0
    for c in x.chunks:
        m = len(c)
        if m and (c.null_count or not (pa.types.is_integer(c.type) or pa.types.is_floating(c.type))):
            c = c.cast(pa.float64())
            bufs = c.buffers()
            part = out[pos:pos + m]
            part[:] = np.frombuffer(bufs[1], dtype=np.float64)[c.offset:c.offset + m]
            if c.null_count:
                valid = np.unpackbits(np.frombuffer(bufs[0], dtype=np.uint8), count=c.offset + m,
                                      bitorder="little")[c.offset:]
                part[valid == 0] = np.nan
        elif m:
            out[pos:pos + m] = arrow_to_numpy(c)
        pos += m
    return out


def read_numbers(x: Any) -> tuple[np.ndarray, int] | None:
    """A numeric Arrow ChunkedArray whose chunks are all int64 or float64 without nulls as one float64 array, and how
    many of its values are NaN or infinite: every chunk read from its own buffer (no copy of the chunk beside it) into
    its slice of the result (:func:`empty_array`), the chunks' rows cut into pieces run on the kernels' thread pool at
    once (``read_values``); the same numbers :func:`chunked_to_numpy` writes. None for chunks of another type or with
    nulls (:func:`chunked_to_numpy` reads those)."""
    from .._kernels.api import read_values

    pa = pyarrow()
    views = []
    for c in x.chunks:
        if not len(c):
            continue
        if c.null_count or not (pa.types.is_int64(c.type) or pa.types.is_float64(c.type)):
            return None
        views.append(arrow_to_numpy(c))
    out = empty_array(len(x), np.float64)
    return out, read_values(views, out)


def string_chunk_buffers(c: Any) -> tuple[np.ndarray, np.ndarray]:
    """(offsets int32 or int64, data uint8) views of a string or large_string array."""
    pa = pyarrow()
    bufs = c.buffers()
    dt = np.int64 if pa.types.is_large_string(c.type) else np.int32
    offs = np.frombuffer(bufs[1], dtype=dt)[c.offset: c.offset + len(c) + 1]
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None and bufs[2].size else np.zeros(1, np.uint8)
    return offs, data


def chunk_run_heads(chunks: list[Any] | None) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """Per non-empty chunk of Arrow ``string`` / ``large_string`` chunks: ``(position of its first row, offsets,
    data, the chunk's rows that start a run of equal ids)``, the first id of a chunk compared with the last of the one
    before: neighbours compared on the chunks' buffers as they are, by the kernel ``run_starts`` (every chunk in one
    batch on the thread pool)."""
    from .._kernels.api import run_starts

    chunks = [c for c in chunks or [] if len(c)]
    buffers = [string_chunk_buffers(c) for c in chunks]
    out, pos, prev = [], 0, None
    for c, (offs, data), starts in zip(chunks, buffers, run_starts(buffers)):
        m = len(c)
        if prev is not None and data[offs[0]:offs[1]].tobytes() == prev:
            starts = starts[1:]
        prev = data[offs[m - 1]:offs[m]].tobytes()
        out.append((pos, offs, data, starts))
        pos += m
    return out


def widen_chunks(x: Any) -> Any:
    """A chunked string array (any width, no nulls) as one large_string array: offsets and bytes
    written once into the result (combining the chunks first would copy everything twice;
    string_view chunks are cast one at a time)."""
    pa = pyarrow()
    n = len(x)
    offs = np.empty(n + 1, np.int64)
    offs[0] = 0
    spans = [string_chunk_buffers(c.cast(pa.large_string()) if pa.types.is_string_view(c.type) else c)
             for c in x.chunks if len(c)]
    data = np.empty(max(sum(int(o[-1]) - int(o[0]) for o, _ in spans), 1), np.uint8)
    pos = base = 0
    for o, d in spans:
        m = o.shape[0] - 1
        lo, hi = int(o[0]), int(o[-1])
        np.add(o[1:], base - lo, out=offs[pos + 1:pos + m + 1], dtype=np.int64)
        data[base:base + hi - lo] = d[lo:hi]
        pos += m
        base += hi - lo
    return pa.LargeStringArray.from_buffers(n, pa.py_buffer(offs), pa.py_buffer(data[:base]))


def _all_str(a: np.ndarray) -> bool:
    pa = pyarrow()
    try:
        pa.array(a, type=pa.large_string(), from_pandas=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return False
    return True


def to_str_ids(a: np.ndarray) -> np.ndarray:
    """Ids as an object array of str (integral floats printed without '.0')."""
    if a.dtype.kind == "O":
        if _all_str(a):
            return a
        return np.array([x if isinstance(x, str) else _str_id(x) for x in a], dtype=object)
    if a.dtype.kind in "US":
        return a.astype(str).astype(object)
    if a.dtype.kind == "f":
        return np.array([_str_id(x) for x in a], dtype=object)
    return a.astype(str).astype(object)


def _str_id(x: Any) -> str:
    if isinstance(x, (float, np.floating)) and float(x).is_integer():
        return str(int(x))
    return str(x)


def as_ids(x: Any, what: str = "ids", widen: bool = True) -> Any:
    """Normalise ids: int64 ndarray for integers, :class:`StrIds` kept as they are, Arrow large_string
    array for other strings (``widen=False``: Arrow ``string`` arrays and chunked ``string``/``large_string``
    arrays kept as they are; ``string_view`` is always cast to ``large_string``).

    Examples
    --------
    >>> import numpy as np
    >>> from ranklens._input.buffers import as_ids
    >>> as_ids(np.array([3.0, 4.0])).tolist(), as_ids(np.array(["a", "b"], dtype=object)).type
    ([3, 4], DataType(large_string))
    """
    if isinstance(x, StrIds):
        return x
    pa = pyarrow()
    if isinstance(x, pa.ChunkedArray):
        if x.num_chunks > 1 and not x.null_count:
            t = x.type
            if pa.types.is_integer(t):
                return chunked_to_numpy(x, np.int64)
            if (pa.types.is_string(t) or pa.types.is_large_string(t)) and not widen:
                return x  # cut into runs chunk by chunk (factorize_parts)
            if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
                return widen_chunks(x)
        x = x.combine_chunks() if x.num_chunks != 1 else x.chunk(0)
    if isinstance(x, pa.Array):
        t = x.type
        if x.null_count:
            raise InputError(f"{what} contain {x.null_count} missing values.")
        if pa.types.is_dictionary(t):
            x = x.cast(t.value_type)
            t = x.type
        if pa.types.is_integer(t):
            return arrow_to_numpy(x).astype(np.int64, copy=False)
        if pa.types.is_large_string(t) or (not widen and pa.types.is_string(t)):  # string_view: cast below
            return x
        if pa.types.is_string(t):
            return widen_strings(x)
        if pa.types.is_string_view(t):
            return x.cast(pa.large_string())
        if pa.types.is_floating(t):
            return as_ids(arrow_to_numpy(x), what)
        return x.cast(pa.large_string())
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    if x.dtype.kind in "iub":
        return x.astype(np.int64, copy=False)
    if x.dtype.kind == "f":
        if np.isnan(x).any():
            raise InputError(f"{what} contain {int(np.isnan(x).sum())} missing values.")
        if (x == np.trunc(x)).all():
            return x.astype(np.int64)
        return pa.array(to_str_ids(x), type=pa.large_string())
    if x.dtype.kind in "OUT":
        # Arrow converts an object array of str about twice as fast to 32-bit offsets as to 64-bit ones
        try:
            arr = pa.array(x, type=pa.string(), from_pandas=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            arr = None
        if arr is not None:
            if arr.null_count:
                raise InputError(f"{what} contain {arr.null_count} missing values.")
            return _large_string(arr)
        if x.dtype.kind == "O" and _has_none(x):
            raise InputError(f"{what} contain missing values.")
        return pa.array(to_str_ids(x), type=pa.large_string())
    return pa.array(x.astype(str).astype(object), type=pa.large_string())




def _large_string(arr: Any) -> Any:
    pa = pyarrow()
    if isinstance(arr, pa.ChunkedArray):  # over 2 GiB of text
        return pa.concat_arrays([widen_strings(c) for c in arr.chunks])
    return widen_strings(arr)


def _has_none(x: np.ndarray) -> bool:
    return bool((x == None).any())  # noqa: E711 (elementwise comparison)
