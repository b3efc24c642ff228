"""Ids numbered: ``factorize_unsorted`` (codes in order of first appearance, and the order of the ids), and
``factorize_parts`` for several id columns at once, hashing only the first id of each run of equal ids.

The id layouts themselves are :mod:`ranklens._input.ids`'.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ..errors import InputError
from .buffers import StrIds, arrow_to_numpy, as_ids
from .ids import (
    IdArray,
    IdColumn,
    PyStrIds,
    arrow_ids,
    arrow_string_chunks,
    chunk_run_heads,
    concat_ids,
    id_length,
    ids_to_numpy,
    is_str_ids,
)

__all__ = ["ARROW_FACTORIZE_MIN", "ARROW_SORT_MIN", "RunCodes", "cut_runs", "factorize_parts", "factorize_runs",
           "factorize_unsorted", "number_runs"]


def _heads(ids: IdArray) -> tuple[IdArray, np.ndarray | None]:
    """The first id of every run of equal ids and the run lengths; ``(ids, None)`` when runs are short."""
    col = IdColumn.of(ids)
    n = len(col)
    starts = col.run_starts() if n else np.zeros(0, np.int64)
    if starts.size > n // 2:
        return ids, None
    return col.take(starts), np.diff(np.append(starts, n))


def _raw_heads(x: Any, what: str) -> tuple[IdArray, np.ndarray | None]:
    """:func:`_heads` of ``as_ids(x)``; numpy arrays of Python str (or numpy strings) are cut into runs
    first, so that only the heads are converted (a Python object costs more than a comparison)."""
    if isinstance(x, np.ndarray) and x.ndim == 1 and x.dtype.kind in "OUT" and x.shape[0] > 1:
        n = x.shape[0]
        starts = PyStrIds(x).run_starts()
        if starts.size <= n // 2:
            try:
                return as_ids(x[starts], what), np.diff(np.append(starts, n))
            except InputError:
                pass  # missing values: counted over every row below
    chunks = arrow_string_chunks(x)
    if chunks is not None and len(x) > 1:  # neighbours compared on the 32-bit offsets: no wide copy
        found = _string_chunk_heads(chunks)
        if found is not None:
            return found
    return _heads(as_ids(x, what))


def _string_chunk_heads(chunks: list[Any]) -> tuple[IdArray, np.ndarray] | None:
    """``_heads`` of Arrow ``string`` / ``large_string`` chunks, one chunk at a time (the first id of a
    chunk compared with the last of the one before); None when runs are short."""
    from .._kernels.api import gather

    starts, parts, n, count = [], [], sum(len(c) for c in chunks), 0
    for pos, offs, data, st in chunk_run_heads(chunks):
        starts.append(st + pos)
        count += st.size
        if count > n // 2:
            return None
        head_data, head_offs = gather(data, offs[st].astype(np.int64), offs[st + 1].astype(np.int64))
        parts.append(StrIds(head_offs, head_data))
    first = np.concatenate(starts)
    return concat_ids(*parts), np.diff(np.append(first, n))


class RunCodes:
    """One id column's codes, kept per run of equal ids (``lengths``: the run lengths) or per row (``lengths``
    None): the rows of a query that come together never get a code each.

    Examples
    --------
    >>> import numpy as np
    >>> c = RunCodes(np.array([1, 0]), np.array([2, 3]))
    >>> len(c), c.rows().tolist(), c.present(3).tolist()
    (5, [1, 1, 0, 0, 0], [True, True, False])
    >>> [a.tolist() for a in c.groups(2, np.array([0, 1]))]
    [[2, 0], [5, 2], []]
    """

    __slots__ = ("codes", "lengths")

    def __init__(self, codes: np.ndarray, lengths: np.ndarray | None):
        self.codes = codes
        self.lengths = lengths

    def __len__(self) -> int:
        return int(self.codes.shape[0] if self.lengths is None else self.lengths.sum())

    def rows(self) -> np.ndarray:
        """One code per row."""
        return self.codes if self.lengths is None else np.repeat(self.codes, self.lengths)

    def present(self, n_codes: int) -> np.ndarray:
        """Which of the codes ``0 .. n_codes - 1`` some row has."""
        return np.bincount(self.codes, minlength=n_codes) > 0

    def groups(self, n_codes: int, sel: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(start, end, idx)`` of the rows of the codes ``sel`` (as ``group.segments``: ``idx`` empty when each
        code's rows are contiguous, as they are when every code is one run: then no row is read at all)."""
        from .._kernels.api import segments

        if self.lengths is not None and not (np.bincount(self.codes, minlength=n_codes) > 1).any():
            bounds = np.zeros(self.lengths.shape[0] + 1, np.int64)
            np.cumsum(self.lengths, out=bounds[1:])
            start, end = np.zeros(n_codes, np.int64), np.zeros(n_codes, np.int64)
            start[self.codes] = bounds[:-1]
            end[self.codes] = bounds[1:]
            return start[sel], end[sel], np.empty(0, np.int64)
        start, end, idx = segments(self.rows(), n_codes)
        return start[sel], end[sel], idx


def factorize_runs(parts: list[IdArray], what: str | None = None) -> tuple[list[RunCodes], np.ndarray, np.ndarray]:
    """:func:`factorize_parts` with each part's codes as :class:`RunCodes` (per run where rows come in runs)."""
    return number_runs(cut_runs(parts, what), what)


def cut_runs(parts: list[IdArray], what: str | None = None) -> list[tuple[IdArray, np.ndarray | None]]:
    """The first step of :func:`factorize_runs`: per part, the first id of every run of equal ids and the runs'
    lengths (``(ids, None)`` where runs are short), before any id is numbered (:func:`number_runs`)."""
    return [_raw_heads(x, what) for x in parts] if what is not None else [_heads(x) for x in parts]


def number_runs(cut: list[tuple[IdArray, np.ndarray | None]],
                what: str | None = None) -> tuple[list[RunCodes], np.ndarray, np.ndarray]:
    """The second step of :func:`factorize_runs`: the heads of :func:`cut_runs` numbered."""
    heads = [h for h, _ in cut]
    if what is not None and any(map(is_str_ids, heads)):
        heads = [IdColumn.of(h).as_strings() for h in heads]
    codes, uniques, order = factorize_unsorted(heads[0] if len(heads) == 1 else concat_ids(*heads))
    out, pos = [], 0
    for h, (_, r) in zip(heads, cut, strict=True):
        m = id_length(h)
        out.append(RunCodes(codes[pos:pos + m], r))
        pos += m
    return out, uniques, order


def factorize_parts(parts: list[IdArray], what: str | None = None) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """:func:`factorize_unsorted` of the concatenation of ``parts``, codes returned per part.

    Rows of one query usually come together: only the first id of every run of equal ids is
    hashed (the runs found by comparing neighbours), and the codes are repeated along the runs.
    With ``what`` the parts are raw id inputs, converted by :func:`as_ids` (``what`` names them in
    errors) and made one type as :func:`unify_ids` does.
    """
    runs, uniques, order = factorize_runs(parts, what)
    return [c.rows() for c in runs], uniques, order


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
    col = IdColumn.of(ids)
    if "pyarrow.compute" in sys.modules or len(col) > ARROW_FACTORIZE_MIN:
        import pyarrow.compute as pc

        enc = pc.dictionary_encode(col.to_arrow())
        codes = arrow_to_numpy(enc.indices).astype(np.int32, copy=False)
        picked = enc.dictionary
        firsts = None
    else:
        from .._kernels.api import factorize

        is_str, ints, offs, data = col.kernel()
        codes, firsts = factorize(is_str, ints, offs, data)
        picked = ints[firsts] if not is_str else col.take(firsts)
    if not col.is_str:
        uniques = arrow_to_numpy(picked).astype(np.int64) if firsts is None else picked
        return codes, uniques, np.argsort(uniques, kind="stable")
    uniques = ids_to_numpy(picked)
    if uniques.shape[0] > ARROW_SORT_MIN or "pyarrow.compute" in sys.modules:
        import pyarrow.compute as pc

        order = arrow_to_numpy(pc.array_sort_indices(arrow_ids(picked)))
    else:  # Python compares str by code point, which is the byte order of UTF-8
        order = np.argsort(uniques, kind="stable")
    return codes, uniques, order.astype(np.int64, copy=False)
