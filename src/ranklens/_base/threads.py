"""Thread count of the compiled kernels (all cores by default; ``RANKLENS_THREADS`` or ``--threads``).

Setting it does not load numba: the count is applied when a parallel (JIT) kernel runs; the
ahead-of-time kernels cut their work into as many chunks, run on a thread pool.
"""

from __future__ import annotations

import os
import sys

from ..errors import InvalidParameterError

__all__ = ["apply_threads", "set_threads", "threads"]

_requested: list[int] = []


def _cores() -> int:
    """The threads numba may use: ``NUMBA_NUM_THREADS``, else the cores this process may run on."""
    env = os.environ.get("NUMBA_NUM_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def set_threads(n: int) -> int:
    """Use ``n`` threads in the kernels (capped at the cores numba may use); returns the count set.

    Every kernel computes each query independently and writes it to its own slot, so the results
    are identical for any thread count.
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise InvalidParameterError(f"`threads` must be an integer >= 1; got {n!r}.")
    n = min(n, _cores())
    _requested[:] = [n]
    if "numba" in sys.modules:
        apply_threads()
    return n


def threads() -> int:
    """The thread count the kernels use: the one set, else every core."""
    return _requested[0] if _requested else _cores()


def apply_threads() -> None:
    """Pass the requested count to numba (called before a parallel kernel runs)."""
    if _requested:
        import numba

        # numba.config defines its settings at run time (through globals()), which a type checker cannot see
        numba.set_num_threads(min(_requested[0], numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
