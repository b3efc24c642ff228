"""A problem's ranked rows in its convention's order, and the problem of some of them.

trec_eval evaluates only each query's first N documents in its order (``-M``) and only the judged ones
(``-J``), and prints the labels of the first documents (relstring). :func:`ranked_order` gives every query's
rows (or its first N) in the order the kernels rank them (one compiled pass, no Python loop over queries),
:func:`keep_rows` the problem of the rows kept, already in that order (so the kernels find them ordered).
Used by ``ranklens trec_eval``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .._kernels.api import ordered_rows
from .problem import Problem

__all__ = ["keep_rows", "ranked_order"]


def ranked_order(problem: Problem, depth: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, offsets)``: query ``q``'s first ``depth`` ranked rows (negative: all) in its convention's order
    are ``rows[offsets[q]:offsets[q + 1]]`` (row numbers of the problem's score and label arrays).

    Examples
    --------
    >>> from ranklens._core.problem import array_problem
    >>> from ranklens.conventions import get_convention
    >>> p = array_problem([0, 0, 1, 0], [0.1, 0.9, 0.5, 0.3], [0, 1, 1, 0], get_convention("trec_eval"),
    ...                   item=[10, 11, 12, 13])
    >>> rows, offsets = ranked_order(p)
    >>> rows.tolist(), offsets.tolist()
    ([1, 3, 0, 2], [0, 3, 4])
    >>> [a.tolist() for a in ranked_order(p, depth=1)]
    [[1, 2], [0, 1, 2]]
    """
    return ordered_rows(problem.r_start, problem.r_end, problem.r_idx, problem.score, problem.label,
                        problem.order_mode, problem.item_offs, problem.item_data, depth)


def keep_rows(problem: Problem, rows: np.ndarray, offsets: np.ndarray, keep: np.ndarray | None = None) -> Problem:
    """The problem of the ordered rows where ``keep`` is True (None: all of them), in that order; a query
    left without rows stays, with an empty list. The judgments (the ideal lists) are unchanged."""
    if keep is None:
        kept, counts = rows, np.diff(offsets)
    else:
        kept = rows[keep]
        total = np.zeros(keep.shape[0] + 1, np.int64)
        np.cumsum(keep, out=total[1:])
        counts = total[offsets[1:]] - total[offsets[:-1]]
    end = np.cumsum(counts)
    return replace(problem, r_start=end - counts, r_end=end, r_idx=kept)
