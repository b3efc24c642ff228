"""Id handling: factorising query and item ids into dense integer codes."""

from __future__ import annotations

import numpy as np

__all__ = ["factorize", "is_integer_ids", "to_str_ids"]


def is_integer_ids(a: np.ndarray) -> bool:
    return a.dtype.kind in "iu" or a.dtype.kind == "b"


def to_str_ids(a: np.ndarray) -> np.ndarray:
    """Ids as an object array of str (integers printed in decimal)."""
    if a.dtype.kind == "O":
        if all(issubclass(t, str) for t in set(map(type, a))):  # distinct types only
            return a
        return np.array([str(x) for x in a], dtype=object)
    if a.dtype.kind in "US":
        return a.astype(str).astype(object)
    if a.dtype.kind == "f":
        # float ids (e.g. pandas with NaN): print integral values without ".0"
        return np.array([str(int(x)) if float(x).is_integer() else str(x) for x in a], dtype=object)
    return a.astype(str).astype(object)


def factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dense codes in sorted order of the unique values.

    Returns ``(codes, uniques)`` with ``uniques[codes] == values``; integers
    sort numerically, strings by byte order (UTF-8), so comparing codes
    compares ids the way trec_eval's ``strcmp`` does.
    """
    if values.dtype.kind in "iub":
        uniques, codes = np.unique(values, return_inverse=True)
        return codes.astype(np.int64, copy=False), uniques
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = pa.array(values, type=pa.string()) if values.dtype.kind != "U" else pa.array(values.astype(object), type=pa.string())
    enc = pc.dictionary_encode(arr)
    dictionary = enc.dictionary
    order = pc.array_sort_indices(dictionary).to_numpy()
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    idx = enc.indices.to_numpy(zero_copy_only=False)
    codes = rank[idx]
    uniques = dictionary.take(pa.array(order)).to_numpy(zero_copy_only=False).astype(object)
    return codes, uniques
