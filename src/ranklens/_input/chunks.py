"""A numeric column held as Arrow's chunks, read where it lies: no column-sized copy until one is asked for.

A table's label or score column whose chunks are all float64 (labels: or int64) without nulls is kept as the chunks'
own buffers (:class:`ChunkedValues`). The evaluation's kernels read it chunk by chunk (``_core.segments``), the
scores rounded to float32 on the way when the convention says so; anything else that reads the column as one array
gets it made once, on first use (:class:`FlatColumn`, the fields of the records and of the problem), with the same
numbers the copy made beforehand would have held (``read_values``, ``round_f32``).
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, overload

import numpy as np

from .buffers import arrow_to_numpy, empty_array, pyarrow

__all__ = ["ChunkedValues", "FlatColumn", "chunked_values", "held"]


class ChunkedValues:
    """A column of numbers as its chunks (numpy views of Arrow's buffers, float64 or int64, C-contiguous) and the
    first row of each (``bounds``, one more: the length); ``round32``: the values are the chunks' rounded to float32
    and back (a problem's scores under ``score_precision="float32"``).

    Examples
    --------
    >>> import numpy as np
    >>> v = ChunkedValues((np.array([1.0, 2.5]), np.array([0.1])), round32=True)
    >>> len(v), v.flat().tolist() == [1.0, 2.5, float(np.float32(0.1))]
    (3, True)
    """

    def __init__(self, chunks: tuple[np.ndarray, ...], round32: bool = False) -> None:
        self.chunks = tuple(c for c in chunks if c.shape[0])
        self.bounds = np.zeros(len(self.chunks) + 1, np.int64)
        np.cumsum([c.shape[0] for c in self.chunks], out=self.bounds[1:])
        self.round32 = round32
        self.dtype = np.dtype(np.float64)
        self._flat: np.ndarray | None = None
        self._facts: tuple[int, int, int, float] | None = None
        self._ints: list[np.ndarray] = []  # int64 chunks not yet looked at for a negative value

    def __len__(self) -> int:
        return int(self.bounds[-1])

    @property
    def shape(self) -> tuple[int]:
        return (len(self),)

    @property
    def size(self) -> int:
        return len(self)

    def rounded(self) -> ChunkedValues:
        """The same chunks, read rounded to float32 and back."""
        return ChunkedValues(self.chunks, round32=True)

    def flat(self) -> np.ndarray:
        """The values as one float64 array, made once (``read_values`` on the thread pool, then ``round_f32`` in
        place with ``round32``): the numbers a copy of the column made when it was read would hold."""
        if self._flat is None:
            from .._kernels.api import read_values, round_f32

            out = empty_array(len(self), np.float64)
            read_values(list(self.chunks), out)
            self._flat = round_f32(out, out) if self.round32 else out
        return self._flat

    def take(self, rows: np.ndarray) -> np.ndarray:
        """The values of ``rows`` (ascending or not) as float64, not rounded (the kernels round them as they read)."""
        out = np.empty(rows.shape[0], np.float64)
        which = np.searchsorted(self.bounds, rows, side="right") - 1
        for k in np.flatnonzero(np.bincount(which, minlength=len(self.chunks))):
            at = which == k
            out[at] = self.chunks[k][rows[at] - self.bounds[k]]
        return out

    def facts(self, negative: bool = True) -> tuple[int, int, int, float]:
        """``(non-finite, fractional, negative, largest)`` as ``value_facts`` counts them over the flat column, once:
        float64 chunks in one pass on the thread pool; int64 chunks are finite and whole, their largest value read
        (and, with ``negative``, whether one is negative: a count of 0 or 1)."""
        if self._facts is None:
            from .._kernels.api import value_facts_many

            floats = [c for c in self.chunks if c.dtype == np.float64]
            got = value_facts_many(floats, True) if floats else (0, 0, 0, -np.inf)
            ints = [c for c in self.chunks if c.dtype != np.float64]
            top = max([got[3], *(float(c.max()) for c in ints)])
            self._facts = (got[0], got[1], got[2], top)
            self._ints = ints
        if negative and self._ints:
            below = int(any(c.min() < 0 for c in self._ints))
            self._facts, self._ints = (*self._facts[:2], self._facts[2] + below, self._facts[3]), []
        return self._facts

    def nonfinite(self) -> int:
        """How many values are NaN or infinite (int64 chunks: none, without a pass over them)."""
        if self._facts is None and all(c.dtype != np.float64 for c in self.chunks):
            return 0
        return self.facts(negative=False)[0]

    def max(self) -> float:
        """The largest value (the chunks' own, not rounded)."""
        return self.facts(negative=False)[3]


def chunked_values(column: Any, kinds: str) -> ChunkedValues | None:
    """An Arrow array or ChunkedArray as :class:`ChunkedValues` when every chunk is of one of ``kinds``
    (``"f"``: float64, ``"i"``: int64) and has no null; else None (the column is copied as before)."""
    pa = pyarrow()
    chunks = getattr(column, "chunks", None)
    chunks = [column] if chunks is None else chunks
    views = []
    for c in chunks:
        t = c.type
        if c.null_count or not (("f" in kinds and pa.types.is_float64(t)) or ("i" in kinds and pa.types.is_int64(t))):
            return None
        views.append(arrow_to_numpy(c))
    return ChunkedValues(tuple(views)) if views else None


T = TypeVar("T")


class FlatColumn(Generic[T]):
    """A dataclass field holding an array, or :class:`ChunkedValues` made flat on first read (:meth:`~ChunkedValues.
    flat`: once per chunked column, so two fields holding one column read one array). ``required``: the field has
    no default (else None). :func:`held` reads the field as held, without making it flat."""

    def __init__(self, required: bool = True) -> None:
        self.required = required
        self.slot = ""

    def __set_name__(self, owner: Any, name: str) -> None:
        self.slot = f"_{name}_held"

    @overload
    def __get__(self, obj: None, owner: Any = None) -> FlatColumn[T]: ...
    @overload
    def __get__(self, obj: object, owner: Any = None) -> T: ...
    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            if self.required:
                raise AttributeError(self.slot)  # a dataclass field without a default
            return None
        value = obj.__dict__[self.slot]
        return value.flat() if isinstance(value, ChunkedValues) else value

    def __set__(self, obj: Any, value: T | ChunkedValues) -> None:
        obj.__dict__[self.slot] = value


def held(obj: Any, name: str) -> Any:
    """Field ``name`` of ``obj`` as held: :class:`ChunkedValues` not made flat yet (a :class:`FlatColumn`), or the
    attribute's value. Once made, the flat array is the column (whoever read it may have written into it)."""
    value = obj.__dict__[f"_{name}_held"] if f"_{name}_held" in obj.__dict__ else getattr(obj, name)
    if isinstance(value, ChunkedValues) and value._flat is not None:
        return value._flat
    return value
