"""Thread count of the compiled kernels (all cores by default; ``RANKLENS_THREADS`` or ``--threads``)."""

from __future__ import annotations

from .errors import InvalidParameterError

__all__ = ["set_threads"]


def set_threads(n: int) -> int:
    """Use ``n`` threads in the kernels (capped at the cores numba may use); returns the count set.

    Every kernel computes each query independently and writes it to its own slot, so the results
    are identical for any thread count.
    """
    import numba

    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise InvalidParameterError(f"`threads` must be an integer >= 1; got {n!r}.")
    n = min(n, numba.config.NUMBA_NUM_THREADS)
    numba.set_num_threads(n)
    return n
