"""Id columns without Python objects: one :class:`IdColumn` type over the layouts ids come in.

An id column is held in one of five layouts:

* integers: a numpy ``int64`` array (:class:`IntIds`);
* strings as Python objects: a numpy ``object``/``str`` array, as users give them
  (:class:`PyStrIds`; :func:`as_ids` converts them to Arrow);
* :class:`StrIds`: Arrow's ``large_string`` buffers without pyarrow, as the TREC readers give
  them (:class:`BufferIds`);
* an Arrow ``large_string`` array (:class:`ArrowIds`), which :func:`as_ids` makes of other strings;
* Arrow strings kept as they came (``as_ids(..., widen=False)``): 32-bit offsets, or chunked
  (:class:`NarrowArrowIds`): hashed chunk by chunk, widened only where a kernel compares them.

``IdColumn.of(ids)`` finds the layout once; its methods (length, take, filter, hash, the kernels'
arguments, ...) do the rest. The functions below (:func:`take_ids`, :func:`kernel_ids`, ...)
take the raw arrays and are what the other modules call. Strings reach the kernels as Arrow's
buffers (``int64`` offsets and ``uint8`` data), so 10 million ids cost no Python object at all.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from .buffers import (
    StrIds,
    arrow_to_numpy,
    as_ids,
    chunk_run_heads,
    chunked_to_numpy,
    np_to_arrow,
    string_chunk_buffers,
    to_str_ids,
)
from .buffers import pyarrow as _pa

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "ArrowIds",
    "BufferIds",
    "IdArray",
    "IdColumn",
    "IntIds",
    "KernelIds",
    "NarrowArrowIds",
    "PyStrIds",
    "StrIds",
    "arrow_ids",
    "arrow_string_chunks",
    "arrow_to_numpy",
    "as_ids",
    "chunk_run_heads",
    "chunked_to_numpy",
    "concat_ids",
    "filter_ids",
    "hash_ids",
    "id_length",
    "ids_to_numpy",
    "is_str_ids",
    "join_strings",
    "kernel_ids",
    "narrow_strings",
    "np_to_arrow",
    "one_layout",
    "same_ids",
    "str_buffers",
    "take_ids",
    "to_str_ids",
    "unify_ids",
]

#: The raw arrays of the five layouts (see the module's docstring).
IdArray = Union[np.ndarray, StrIds, "pa.LargeStringArray", "pa.StringArray", "pa.ChunkedArray"]

KernelIds = tuple[bool, np.ndarray, np.ndarray, np.ndarray]


def _no_ints() -> np.ndarray:
    return np.zeros(1, np.int64)


class IdColumn:
    """One id column: its raw array (:attr:`values`) and, by its class, its layout.

    Examples
    --------
    >>> import numpy as np
    >>> from ranklens._input.ids import IdColumn
    >>> col = IdColumn.of(np.array([3, 3, 5]))
    >>> type(col).__name__, len(col), col.is_str, col.take(np.array([2, 0])).tolist()
    ('IntIds', 3, False, [5, 3])
    """

    __slots__ = ("values",)
    #: whether the ids are strings
    is_str = True

    def __init__(self, values: Any):
        self.values = values

    @staticmethod
    def of(ids: Any) -> IdColumn:
        """The column of ``ids`` in its layout (an :class:`IdColumn` is returned as it is)."""
        if isinstance(ids, IdColumn):
            return ids
        if isinstance(ids, np.ndarray):
            return PyStrIds(ids) if ids.dtype.kind in "OUST" else IntIds(ids)
        if isinstance(ids, StrIds):
            return BufferIds(ids)
        if arrow_string_chunks(ids) is not None:
            return NarrowArrowIds(ids)
        return ArrowIds(ids)

    def __len__(self) -> int:
        return len(self.values)

    def widened(self) -> IdColumn:
        """The column in a layout the kernels take (ints, or 64-bit string buffers)."""
        return self

    def buffers(self) -> tuple[np.ndarray, np.ndarray]:
        """``(offsets int64, data uint8)`` views of string ids (no copy)."""
        return self.widened().buffers()

    def kernel(self) -> KernelIds:
        """``(is_str, ints, offsets, data)`` as the kernels take them."""
        offs, data = self.buffers()
        return True, _no_ints(), offs, data

    def hash(self) -> np.ndarray:
        """64-bit hash of every id (``group.hash_items``)."""
        from .._kernels.api import hash_items

        return hash_items(*self.kernel())

    def take(self, idx: Any) -> Any:
        """The ids at positions ``idx``, in the same form."""
        return self.widened().take(idx)

    def filter(self, mask: np.ndarray) -> Any:
        """The ids where ``mask`` holds."""
        return self.values.filter(_pa().array(mask))

    def to_numpy(self) -> np.ndarray:
        """The ids as numpy (object array of str, or int64): for small outputs only."""
        return np.asarray(self.values.to_pylist(), dtype=object)

    def to_arrow(self) -> Any:
        """The ids as an Arrow array."""
        return self.values

    def as_strings(self) -> Any:
        """String ids (integers printed in decimal, as Arrow large_string)."""
        return self.values

    def run_starts(self) -> np.ndarray:
        """Positions where a run of equal consecutive ids starts."""
        from .._kernels.api import run_starts

        offs, data = self.buffers()
        return run_starts([(np.ascontiguousarray(offs), data)])[0]

    def n_unique(self) -> int:
        """The number of distinct ids."""
        import pyarrow.compute as pc

        return len(pc.unique(self.to_arrow()))

    @classmethod
    def concat(cls, parts: Sequence[Any]) -> Any:
        """The concatenation of ``parts`` (raw arrays, the first of this layout)."""
        return _pa().concat_arrays([arrow_ids(p) for p in parts])


class _NumpyIds(IdColumn):
    """Ids in a numpy array (the two numpy layouts share these methods)."""

    __slots__ = ()

    def __len__(self) -> int:
        return int(self.values.shape[0])

    def take(self, idx: Any) -> Any:
        return self.values[idx]

    def filter(self, mask: np.ndarray) -> Any:
        return self.values[mask]

    def to_numpy(self) -> np.ndarray:
        return self.values

    def run_starts(self) -> np.ndarray:
        n = len(self)
        mask = np.empty(n, np.bool_)
        mask[:1] = True
        np.not_equal(self.values[1:], self.values[:-1], out=mask[1:])
        return np.flatnonzero(mask)

    def n_unique(self) -> int:
        return len(np.unique(self.values))

    @classmethod
    def concat(cls, parts: Sequence[Any]) -> Any:
        return np.concatenate(parts)


class IntIds(_NumpyIds):
    """Integer ids: a numpy int64 array."""

    __slots__ = ()
    is_str = False

    def buffers(self) -> tuple[np.ndarray, np.ndarray]:
        raise TypeError("integer ids have no string buffers")

    def kernel(self) -> KernelIds:
        return False, self.values, np.zeros(2, np.int64), np.zeros(1, np.uint8)

    def to_arrow(self) -> Any:
        return np_to_arrow(self.values)

    def as_strings(self) -> Any:
        return np_to_arrow(self.values.astype(np.int64, copy=False)).cast(_pa().large_string())


class PyStrIds(_NumpyIds):
    """String ids as Python objects in a numpy array (raw input; :func:`as_ids` converts them)."""

    __slots__ = ()

    def widened(self) -> IdColumn:
        return IdColumn.of(as_ids(self.values))

    def kernel(self) -> KernelIds:
        return self.widened().kernel()

    def to_arrow(self) -> Any:
        return self.widened().to_arrow()


class BufferIds(IdColumn):
    """String ids as :class:`StrIds` buffers."""

    __slots__ = ()

    def buffers(self) -> tuple[np.ndarray, np.ndarray]:
        ids = self.values
        return ids.offsets, (ids.data if ids.data.size else np.zeros(1, np.uint8))

    def take(self, idx: Any) -> Any:
        return self.values.take(idx)

    def filter(self, mask: np.ndarray) -> Any:
        return self.values.take(np.flatnonzero(mask))

    def to_numpy(self) -> np.ndarray:
        return self.values.to_numpy()

    def to_arrow(self) -> Any:
        return self.values.to_arrow()

    @classmethod
    def concat(cls, parts: Sequence[Any]) -> Any:
        return join_strings(parts)


class ArrowIds(IdColumn):
    """String ids as an Arrow large_string array."""

    __slots__ = ()

    def buffers(self) -> tuple[np.ndarray, np.ndarray]:
        arr = self.values
        bufs = arr.buffers()
        offs = np.frombuffer(bufs[1], dtype=np.int64)[arr.offset: arr.offset + len(arr) + 1]
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(1, np.uint8)
        if data.size == 0:
            data = np.zeros(1, np.uint8)
        return offs, data

    def take(self, idx: Any) -> Any:
        pa = _pa()
        picked = StrIds(*self.buffers()).take(idx)
        return pa.LargeStringArray.from_buffers(len(picked), pa.py_buffer(picked.offsets), pa.py_buffer(picked.data))


class NarrowArrowIds(IdColumn):
    """Arrow strings kept as they came: 32-bit offsets, or chunked (string or large_string), no nulls.
    Hashed chunk by chunk, in place; widened where a kernel compares them."""

    __slots__ = ()

    def widened(self) -> IdColumn:
        return IdColumn.of(as_ids(self.values))

    def hash(self) -> np.ndarray:
        # a string's hash depends on its bytes only: chunk by chunk, never widened
        from .._kernels.api import hash_items

        out = np.empty(len(self), np.uint64)
        pos, none = 0, _no_ints()
        for c in arrow_string_chunks(self.values) or []:
            m = len(c)
            if m:
                offs, data = string_chunk_buffers(c)
                out[pos:pos + m] = hash_items(True, none, offs, data)  # 32-bit offsets read as they are
                pos += m
        return out

    def take(self, idx: Any) -> Any:
        # chunk by chunk, the bytes of the rows picked copied once (no widened copy, no pyarrow.compute)
        from .._kernels.api import gather

        idx = np.asarray(idx, dtype=np.int64)
        n = len(self)
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise IndexError(f"index out of range for {n} ids")
        srt = np.argsort(idx, kind="stable")
        rows = idx[srt]
        parts, pos = [], 0
        for c in arrow_string_chunks(self.values) or []:
            m = len(c)
            lo, hi = np.searchsorted(rows, (pos, pos + m))
            if hi > lo:
                offs, data = string_chunk_buffers(c)
                sel = rows[lo:hi] - pos
                out, out_offs = gather(data, offs[sel].astype(np.int64), offs[sel + 1].astype(np.int64))
                parts.append(StrIds(out_offs, out))
            pos += m
        picked = BufferIds.concat(parts) if parts else StrIds(np.zeros(1, np.int64), np.zeros(0, np.uint8))
        if idx.size > 1 and (srt[1:] < srt[:-1]).any():  # back to the order asked for
            inverse = np.empty_like(srt)
            inverse[srt] = np.arange(srt.size)
            picked = picked.take(inverse)
        return picked.to_arrow()

    def run_starts(self) -> np.ndarray:
        # chunk by chunk on the offsets as they are: never widened
        starts = [st + pos for pos, _, _, st in chunk_run_heads(arrow_string_chunks(self.values))]
        return np.concatenate(starts) if starts else np.zeros(0, np.int64)


def arrow_string_chunks(x: Any) -> list[Any] | None:
    """The chunks of ``x`` when it is an Arrow string array (32-bit offsets) or a chunked array of
    string or large_string, without nulls (else None), without importing pyarrow for other inputs.
    (string_view arrays are widened.)"""
    if isinstance(x, (np.ndarray, StrIds)) or "pyarrow" not in sys.modules:
        return None
    pa = _pa()
    if not isinstance(x, (pa.Array, pa.ChunkedArray)) or x.null_count:
        return None
    if pa.types.is_string(x.type) or (isinstance(x, pa.ChunkedArray) and pa.types.is_large_string(x.type)):
        return x.chunks if isinstance(x, pa.ChunkedArray) else [x]
    return None


def is_str_ids(ids: IdArray) -> bool:
    return IdColumn.of(ids).is_str


def id_length(ids: IdArray) -> int:
    return len(IdColumn.of(ids))


def unify_ids(a: IdArray, b: IdArray) -> tuple[IdArray, IdArray]:
    """Both integer, or both strings (integers printed in decimal)."""
    ca, cb = IdColumn.of(a), IdColumn.of(b)
    if ca.is_str == cb.is_str:
        return a, b
    return ca.as_strings(), cb.as_strings()


def str_buffers(arr: Any) -> tuple[np.ndarray, np.ndarray]:
    """(offsets int64, data uint8) views of a large_string array or :class:`StrIds` (no copy)."""
    return IdColumn.of(arr).buffers()


def kernel_ids(ids: IdArray) -> KernelIds:
    """``(is_str, ints, offsets, data)`` as the kernels take them (Arrow strings kept narrow or
    chunked are widened here)."""
    return IdColumn.of(ids).kernel()


def join_strings(parts: Sequence[IdArray]) -> StrIds:
    """String ids of ``parts`` (any string layout) one after the other as :class:`StrIds`: each part's offsets and
    bytes written once into buffers of the result's size (Arrow's ``concat_arrays`` takes about 20 times as long).

    Examples
    --------
    >>> join_strings([np.array(["a", "bc"], dtype=object), np.array(["", "d"], dtype=object)]).to_numpy().tolist()
    ['a', 'bc', '', 'd']
    """
    bufs = [IdColumn.of(p).kernel()[2:] for p in parts]
    offs = np.empty(sum(o.shape[0] - 1 for o, _ in bufs) + 1, np.int64)
    offs[0] = 0
    data = np.empty(sum(int(o[-1] - o[0]) for o, _ in bufs), np.uint8)
    i = at = 0
    for o, d in bufs:  # a loop over parts
        m, lo, hi = o.shape[0] - 1, int(o[0]), int(o[-1])
        np.add(o[1:], at - lo, out=offs[i + 1:i + m + 1])
        data[at:at + hi - lo] = d[lo:hi]
        i, at = i + m, at + hi - lo
    return StrIds(offs, data)


def concat_ids(*parts: IdArray) -> IdArray:
    """The ids of ``parts`` one after the other (all of one kind: integers, or strings)."""
    return type(IdColumn.of(parts[0])).concat(parts)


def arrow_ids(ids: IdArray) -> Any:
    """Ids as an Arrow array (:class:`StrIds` converted; Arrow arrays unchanged)."""
    return IdColumn.of(ids).to_arrow()


def narrow_strings(x: Any) -> bool:
    """Whether ``x`` is Arrow strings kept as they came (``as_ids(..., widen=False)``): 32-bit offsets, or
    chunked; the kernels take them only through :func:`hash_ids` and :func:`kernel_ids` (which widens)."""
    return arrow_string_chunks(x) is not None


def hash_ids(ids: IdArray) -> np.ndarray:
    """64-bit hash of every id (``group.hash_items``); Arrow strings kept narrow or chunked are hashed
    chunk by chunk, in place (a string's hash depends on its bytes only), never widened."""
    return IdColumn.of(ids).hash()


def ids_to_numpy(ids: IdArray) -> np.ndarray:
    """Materialise ids (object array of str, or int64) - for small outputs only."""
    return IdColumn.of(ids).to_numpy()


def take_ids(ids: IdArray, idx: np.ndarray) -> IdArray:
    """The ids at positions ``idx``, in the same form (strings copied by the gather kernel; Arrow
    strings kept narrow or chunked give a large_string array)."""
    return IdColumn.of(ids).take(idx)


def filter_ids(ids: IdArray, mask: np.ndarray) -> IdArray:
    """The ids where ``mask`` holds, in the same form."""
    return IdColumn.of(ids).filter(mask)


def one_layout(parts: Sequence[IdArray]) -> list[IdArray]:
    """Id columns of one kind and one layout, so that they concatenate and share a numbering: all integers, or
    all strings (integers printed in decimal) in the 64-bit layouts the kernels read."""
    cols = [IdColumn.of(p) for p in parts]
    if len({c.is_str for c in cols}) > 1:
        cols = [IdColumn.of(c.as_strings()) for c in cols]
    return [c.widened().values for c in cols]


def same_ids(a: Any, b: Any) -> bool:
    """Whether two id inputs are the same memory, element for element (the one table given as both the
    judgments and the rankings: its rows need no join). Only the layouts held without conversion are
    recognised (numpy arrays, Arrow arrays and chunked arrays, :class:`StrIds`); anything else is False.

    Examples
    --------
    >>> import numpy as np
    >>> q = np.array([1, 1, 2])
    >>> same_ids(q, q[:]), same_ids(q, q.copy())
    (True, False)
    """
    if a is b:
        return True
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return (a.dtype == b.dtype and a.shape == b.shape and a.strides == b.strides
                and a.__array_interface__["data"][0] == b.__array_interface__["data"][0])
    if isinstance(a, StrIds) and isinstance(b, StrIds):
        return same_ids(a.offsets, b.offsets) and same_ids(a.data, b.data)
    chunks_a, chunks_b = getattr(a, "chunks", None), getattr(b, "chunks", None)
    if chunks_a is not None and chunks_b is not None:
        return len(chunks_a) == len(chunks_b) and all(_same_arrow(x, y) for x, y in zip(chunks_a, chunks_b))
    return chunks_a is None and chunks_b is None and _same_arrow(a, b)


def _same_arrow(a: Any, b: Any) -> bool:
    """Two Arrow arrays over the same buffers, at the same offset and length."""
    if not (hasattr(a, "buffers") and hasattr(b, "buffers") and hasattr(a, "offset") and hasattr(b, "offset")):
        return False
    if a.type != b.type or len(a) != len(b) or a.offset != b.offset:
        return False
    return [x.address if x is not None else None for x in a.buffers()] == [
        y.address if y is not None else None for y in b.buffers()]
