"""Ids without Python objects: integers as int64 arrays, strings as Arrow large_string arrays.

Every id column is normalised by :func:`as_ids` to one of the two forms.
Strings are handed to the kernels as Arrow's buffers (``int64`` offsets and
``uint8`` data), so 10 million ids cost no Python object at all.
"""

from __future__ import annotations

import sys
from typing import Any, Union

import numpy as np

from .errors import InputError

__all__ = [
    "IdArray",
    "StrIds",
    "arrow_ids",
    "arrow_to_numpy",
    "as_ids",
    "concat_ids",
    "factorize_parts",
    "factorize_unsorted",
    "filter_ids",
    "hash_ids",
    "id_length",
    "ids_to_numpy",
    "is_str_ids",
    "kernel_ids",
    "narrow_strings",
    "np_to_arrow",
    "str_buffers",
    "take_ids",
    "to_str_ids",
    "unify_ids",
]

IdArray = Union[np.ndarray, Any]  # np.ndarray of int64, StrIds, or pyarrow.LargeStringArray


def _pa() -> Any:
    import pyarrow as pa

    return pa


_NP_OF_ARROW = {
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
        from ._kernels.api import gather

        idx = np.asarray(idx, dtype=np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= len(self)):
            raise IndexError(f"index out of range for {len(self)} ids")
        data = self.data if self.data.size else np.zeros(1, np.uint8)
        out, offs = gather(data, self.offsets[idx], self.offsets[idx + 1])
        return StrIds(offs, out)

    def to_arrow(self) -> Any:
        """A ``pyarrow.LargeStringArray`` over the same memory."""
        pa = _pa()
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
    pa = _pa()
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
    pa = _pa()
    a = np.ascontiguousarray(a)
    if a.dtype == np.bool_:
        return pa.array(a)
    return pa.Array.from_buffers(pa.from_numpy_dtype(a.dtype), a.shape[0], [None, pa.py_buffer(a)])


def is_str_ids(ids: IdArray) -> bool:
    return not isinstance(ids, np.ndarray)


def id_length(ids: IdArray) -> int:
    return int(ids.shape[0]) if isinstance(ids, np.ndarray) else len(ids)


def _all_str(a: np.ndarray) -> bool:
    pa = _pa()
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


def as_ids(x: Any, what: str = "ids", widen: bool = True) -> IdArray:
    """Normalise ids: int64 ndarray for integers, :class:`StrIds` kept as they are, Arrow large_string
    array for other strings (``widen=False``: Arrow string arrays of any width kept as they are)."""
    if isinstance(x, StrIds):
        return x
    pa = _pa()
    if isinstance(x, pa.ChunkedArray):
        if x.num_chunks > 1 and not x.null_count:
            t = x.type
            if pa.types.is_integer(t):
                return chunked_to_numpy(x, np.int64)
            if (pa.types.is_string(t) or pa.types.is_large_string(t)) and not widen:
                return x  # cut into runs chunk by chunk (factorize_parts)
            if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
                return _widen_chunks(x)
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
        if pa.types.is_large_string(t) or (not widen and (pa.types.is_string(t) or pa.types.is_string_view(t))):
            return x
        if pa.types.is_string(t):
            return _widen(x)
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
    pa = _pa()
    if isinstance(arr, pa.ChunkedArray):  # over 2 GiB of text
        return pa.concat_arrays([_widen(c) for c in arr.chunks])
    return _widen(arr)


def _widen(arr: Any) -> Any:
    """A string array without nulls as large_string: its 32-bit offsets widened (no pyarrow.compute,
    whose import costs a few hundredths of a second)."""
    pa = _pa()
    bufs = arr.buffers()
    offs = np.frombuffer(bufs[1], dtype=np.int32)[arr.offset: arr.offset + len(arr) + 1].astype(np.int64)
    data = bufs[2] if bufs[2] is not None else pa.py_buffer(b"")
    return pa.LargeStringArray.from_buffers(len(arr), pa.py_buffer(offs), data)


def chunked_to_numpy(x: Any, dtype: Any) -> np.ndarray:
    """A numeric Arrow ChunkedArray as one numpy array of ``dtype``, filled chunk by chunk (a chunk with
    nulls gives NaN there): no combined copy beside the result."""
    pa = _pa()
    out = np.empty(len(x), dtype=dtype)
    pos = 0
    for c in x.chunks:
        m = len(c)
        out[pos:pos + m] = arrow_to_numpy(c.cast(pa.float64()) if c.null_count else c)
        pos += m
    return out


def _str_chunk(c: Any) -> tuple[np.ndarray, np.ndarray]:
    """(offsets int32 or int64, data uint8) views of a string or large_string array."""
    pa = _pa()
    bufs = c.buffers()
    dt = np.int64 if pa.types.is_large_string(c.type) else np.int32
    offs = np.frombuffer(bufs[1], dtype=dt)[c.offset: c.offset + len(c) + 1]
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None and bufs[2].size else np.zeros(1, np.uint8)
    return offs, data


def _widen_chunks(x: Any) -> Any:
    """A chunked string array (any width, no nulls) as one large_string array: offsets and bytes
    written once into the result (combining the chunks first would copy everything twice;
    string_view chunks are cast one at a time)."""
    pa = _pa()
    n = len(x)
    offs = np.empty(n + 1, np.int64)
    offs[0] = 0
    spans = [_str_chunk(c.cast(pa.large_string()) if pa.types.is_string_view(c.type) else c)
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


def _has_none(x: np.ndarray) -> bool:
    return bool((x == None).any())


def unify_ids(a: IdArray, b: IdArray) -> tuple[IdArray, IdArray]:
    """Both integer, or both strings (integers printed in decimal)."""
    if is_str_ids(a) == is_str_ids(b):
        return a, b
    return (_int_to_str(a) if not is_str_ids(a) else a), (_int_to_str(b) if not is_str_ids(b) else b)


def _int_to_str(a: np.ndarray) -> Any:
    pa = _pa()
    return np_to_arrow(a.astype(np.int64, copy=False)).cast(pa.large_string())


def str_buffers(arr: Any) -> tuple[np.ndarray, np.ndarray]:
    """(offsets int64, data uint8) views of a large_string array or :class:`StrIds` (no copy)."""
    if isinstance(arr, StrIds):
        return arr.offsets, (arr.data if arr.data.size else np.zeros(1, np.uint8))
    bufs = arr.buffers()
    offs = np.frombuffer(bufs[1], dtype=np.int64)[arr.offset: arr.offset + len(arr) + 1]
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(1, np.uint8)
    if data.size == 0:
        data = np.zeros(1, np.uint8)
    return offs, data


def kernel_ids(ids: IdArray) -> tuple[bool, np.ndarray, np.ndarray, np.ndarray]:
    """``(is_str, ints, offsets, data)`` as the kernels take them (Arrow strings kept narrow or
    chunked are widened here)."""
    if _narrow_arrow_strings(ids) is not None:
        ids = as_ids(ids)
    if is_str_ids(ids):
        offs, data = str_buffers(ids)
        return True, np.zeros(1, np.int64), offs, data
    return False, ids, np.zeros(2, np.int64), np.zeros(1, np.uint8)


def concat_ids(*parts: IdArray) -> IdArray:
    if isinstance(parts[0], np.ndarray):
        return np.concatenate(parts)
    if all(isinstance(p, StrIds) for p in parts):
        offs, datas, base = [np.zeros(1, np.int64)], [], 0
        for p in parts:
            lo, hi = int(p.offsets[0]), int(p.offsets[-1])
            offs.append(p.offsets[1:] - lo + base)
            datas.append(p.data[lo:hi])
            base += hi - lo
        return StrIds(np.concatenate(offs), np.concatenate(datas) if datas else np.zeros(0, np.uint8))
    pa = _pa()
    return pa.concat_arrays([arrow_ids(p) for p in parts])


def arrow_ids(ids: IdArray) -> Any:
    """String ids as an Arrow array (:class:`StrIds` converted); other ids unchanged."""
    return ids.to_arrow() if isinstance(ids, StrIds) else ids


def _run_starts(ids: IdArray) -> np.ndarray:
    """Positions where a run of equal consecutive ids starts (any numpy array, or Arrow strings)."""
    n = id_length(ids)
    if isinstance(ids, np.ndarray):
        mask = np.empty(n, np.bool_)
        mask[:1] = True
        np.not_equal(ids[1:], ids[:-1], out=mask[1:])
    else:
        from ._kernels.api import run_heads

        offs, data = str_buffers(ids)
        mask = run_heads(np.ascontiguousarray(offs), data)
    return np.flatnonzero(mask)


def _heads(ids: IdArray) -> tuple[IdArray, np.ndarray | None]:
    """The first id of every run of equal ids and the run lengths; ``(ids, None)`` when runs are short."""
    n = id_length(ids)
    starts = _run_starts(ids) if n else np.zeros(0, np.int64)
    if starts.size > n // 2:
        return ids, None
    return take_ids(ids, starts), np.diff(np.append(starts, n))


def _raw_heads(x: Any, what: str) -> tuple[IdArray, np.ndarray | None]:
    """:func:`_heads` of ``as_ids(x)``; numpy arrays of Python str (or numpy strings) are cut into runs
    first, so that only the heads are converted (a Python object costs more than a comparison)."""
    if isinstance(x, np.ndarray) and x.ndim == 1 and x.dtype.kind in "OUT" and x.shape[0] > 1:
        n = x.shape[0]
        starts = _run_starts(x)
        if starts.size <= n // 2:
            try:
                return as_ids(x[starts], what), np.diff(np.append(starts, n))
            except InputError:
                pass  # missing values: counted over every row below
    chunks = _narrow_arrow_strings(x)
    if chunks is not None and len(x) > 1:  # neighbours compared on the 32-bit offsets: no wide copy
        found = _string_chunk_heads(chunks)
        if found is not None:
            return found
    return _heads(as_ids(x, what))


def _string_chunk_heads(chunks: list[Any]) -> tuple[StrIds, np.ndarray] | None:
    """``_heads`` of Arrow ``string`` / ``large_string`` chunks, one chunk at a time (the first id of a chunk compared with
    the last of the one before); None when runs are short."""
    from ._kernels.api import gather, run_heads

    starts, parts, pos, n, prev, count = [], [], 0, sum(len(c) for c in chunks), None, 0
    for c in chunks:
        m = len(c)
        if m == 0:
            continue
        offs, data = _str_chunk(c)
        mask = run_heads(offs, data)
        if prev is not None and data[offs[0]:offs[1]].tobytes() == prev:
            mask[0] = False
        prev = data[offs[m - 1]:offs[m]].tobytes()
        st = np.flatnonzero(mask)
        starts.append(st + pos)
        pos += m
        count += st.size
        if count > n // 2:
            return None
        head_data, head_offs = gather(data, offs[st].astype(np.int64), offs[st + 1].astype(np.int64))
        parts.append(StrIds(head_offs, head_data))
    first = np.concatenate(starts)
    return concat_ids(*parts), np.diff(np.append(first, n))


def narrow_strings(x: Any) -> bool:
    """Whether ``x`` is Arrow strings kept as they came (``as_ids(..., widen=False)``): 32-bit offsets, or
    chunked; the kernels take them only through :func:`hash_ids` and :func:`kernel_ids` (which widens)."""
    return _narrow_arrow_strings(x) is not None


def _narrow_arrow_strings(x: Any) -> list[Any] | None:
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


def factorize_parts(parts: list[IdArray], what: str | None = None) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """:func:`factorize_unsorted` of the concatenation of ``parts``, codes returned per part.

    Rows of one query usually come together: only the first id of every run of equal ids is
    hashed (the runs found by comparing neighbours), and the codes are repeated along the runs.
    With ``what`` the parts are raw id inputs, converted by :func:`as_ids` (``what`` names them in
    errors) and made one type as :func:`unify_ids` does.
    """
    cut = [_raw_heads(x, what) for x in parts] if what is not None else [_heads(x) for x in parts]
    heads = [h for h, _ in cut]
    if what is not None and any(map(is_str_ids, heads)):
        heads = [h if is_str_ids(h) else _int_to_str(h) for h in heads]
    codes, uniques, order = factorize_unsorted(heads[0] if len(heads) == 1 else concat_ids(*heads))
    out, pos = [], 0
    for h, (_, r) in zip(heads, cut):
        m = id_length(h)
        c = codes[pos:pos + m]
        pos += m
        out.append(c if r is None else np.repeat(c, r))
    return out, uniques, order


#: Above this many ids, Arrow numbers them (its hash table is quicker on large inputs); below it,
#: the kernel does, as importing pyarrow.compute would cost more than the work.
ARROW_FACTORIZE_MIN = 500_000
#: Above this many distinct string ids, Arrow sorts them (numpy sorts Python strings slowly).
ARROW_SORT_MIN = 20_000


def factorize_unsorted(ids: IdArray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Codes in order of first appearance: ``(codes, uniques, order)``.

    ``order`` lists the codes in sorted order of their ids (integers
    numerically, strings by byte order as ``strcmp``). Hash based (Arrow's
    ``dictionary_encode``, or :func:`_kernels.api.factorize` for small inputs
    when pyarrow.compute is not loaded yet): only the uniques are sorted, the
    codes are not rewritten.
    """
    import sys

    if "pyarrow.compute" in sys.modules or id_length(ids) > ARROW_FACTORIZE_MIN:
        import pyarrow.compute as pc

        enc = pc.dictionary_encode(np_to_arrow(ids) if isinstance(ids, np.ndarray) else arrow_ids(ids))
        codes = arrow_to_numpy(enc.indices).astype(np.int32, copy=False)
        picked = enc.dictionary
        firsts = None
    else:
        from ._kernels.api import factorize

        is_str, ints, offs, data = kernel_ids(ids)
        codes, firsts = factorize(is_str, ints, offs, data)
        picked = ints[firsts] if not is_str else take_ids(ids, firsts)
    if not is_str_ids(ids):
        uniques = arrow_to_numpy(picked).astype(np.int64) if firsts is None else picked
        return codes, uniques, np.argsort(uniques, kind="stable")
    uniques = picked.to_numpy() if isinstance(picked, StrIds) else np.asarray(picked.to_pylist(), dtype=object)
    if uniques.shape[0] > ARROW_SORT_MIN or "pyarrow.compute" in sys.modules:
        import pyarrow.compute as pc

        order = arrow_to_numpy(pc.array_sort_indices(arrow_ids(picked)))
    else:  # Python compares str by code point, which is the byte order of UTF-8
        order = np.argsort(uniques, kind="stable")
    return codes, uniques, order.astype(np.int64, copy=False)


def hash_ids(ids: IdArray) -> np.ndarray:
    """64-bit hash of every id (``group.hash_items``); Arrow strings kept narrow or chunked are hashed
    chunk by chunk, in place (a string's hash depends on its bytes only), never widened."""
    from ._kernels.api import hash_items

    chunks = _narrow_arrow_strings(ids)
    if chunks is None:
        return hash_items(*kernel_ids(ids))
    out = np.empty(id_length(ids), np.uint64)
    pos, none = 0, np.zeros(1, np.int64)
    for c in chunks:
        m = len(c)
        if m:
            offs, data = _str_chunk(c)
            out[pos:pos + m] = hash_items(True, none, offs.astype(np.int64, copy=False), data)
            pos += m
    return out


def ids_to_numpy(ids: IdArray) -> np.ndarray:
    """Materialise ids (object array of str, or int64) - for small outputs only."""
    if isinstance(ids, np.ndarray):
        return ids
    if isinstance(ids, StrIds):
        return ids.to_numpy()
    return np.asarray(ids.to_pylist(), dtype=object)


def take_ids(ids: IdArray, idx: np.ndarray) -> IdArray:
    """The ids at positions ``idx``, in the same form (strings copied by the gather kernel; Arrow
    strings kept narrow or chunked give a large_string array)."""
    if isinstance(ids, np.ndarray):
        return ids[idx]
    if isinstance(ids, StrIds):
        return ids.take(idx)
    pa = _pa()
    if _narrow_arrow_strings(ids) is not None:
        return as_ids(ids.take(np_to_arrow(np.asarray(idx, dtype=np.int64))))
    offs, data = str_buffers(ids)
    picked = StrIds(offs, data).take(idx)
    return pa.LargeStringArray.from_buffers(len(picked), pa.py_buffer(picked.offsets), pa.py_buffer(picked.data))


def filter_ids(ids: IdArray, mask: np.ndarray) -> IdArray:
    if isinstance(ids, np.ndarray):
        return ids[mask]
    if isinstance(ids, StrIds):
        return ids.take(np.flatnonzero(mask))
    pa = _pa()
    return ids.filter(pa.array(mask))
