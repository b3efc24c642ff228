"""The console scripts' entry points (``ranklens``, ``ranklens-trec_eval``): the process is the command's own, so
before numpy is loaded, numpy's BLAS (OpenBLAS) is given one thread unless the user set ``OPENBLAS_NUM_THREADS``.

A command gives BLAS no work that a second thread would speed up (the arithmetic is in the kernels, which use every
core), while OpenBLAS's idle threads spin at start-up on the cores the kernels use: about 0.1 CPU-s per command,
a quarter of ``ranklens eval`` on a 1M-line run (docs/benchmarks.md). ``import ranklens`` in a user's own process
sets nothing; only these two entry points do.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping, Sequence

__all__ = ["main", "prepare", "trec_eval_main"]

#: The environment variable set, and its value when the user has not set it.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "1")


def prepare(env: MutableMapping[str, str] | None = None) -> None:
    """One BLAS thread for this process unless the user chose (``env``: default ``os.environ``; call before numpy
    is imported).

    Examples
    --------
    >>> env = {}
    >>> prepare(env); env
    {'OPENBLAS_NUM_THREADS': '1'}
    >>> env = {"OPENBLAS_NUM_THREADS": "4"}
    >>> prepare(env); env
    {'OPENBLAS_NUM_THREADS': '4'}
    """
    (os.environ if env is None else env).setdefault(*BLAS_THREADS)


def main(argv: Sequence[str] | None = None) -> None:
    """The ``ranklens`` command (:func:`ranklens._cli.main.main`)."""
    prepare()
    from .main import main as run

    run(None if argv is None else list(argv))


def trec_eval_main(argv: Sequence[str] | None = None) -> None:
    """The ``ranklens-trec_eval`` command (:func:`ranklens._cli.trec_eval.main`)."""
    prepare()
    from .trec_eval import main as run

    run(argv)
