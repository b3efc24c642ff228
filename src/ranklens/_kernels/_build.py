"""Build ``ranklens._kernels._aot``: the kernels of :data:`dispatch.SIGNATURES` compiled ahead of time (``numba.pycc``).

Run by the package build (``hatch_build.py``) or by hand: ``python -m ranklens._kernels._build [OUTDIR]``.
Needs numba, numpy and a C compiler at build time only; the module it writes needs neither numba nor
a compiler. It also exports ``stamp()``, the digest of the kernel sources (:func:`dispatch.source_digest`),
so that a module built from other sources is never used.
"""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["build"]

_SCALAR = {"i8": "int64", "i4": "int32", "f8": "float64", "u1": "uint8", "u8": "uint64", "b1": "boolean"}


def _type(spec: str) -> Any:
    """The numba type written ``spec`` in :data:`dispatch.SIGNATURES`."""
    from numba import types as T

    spec = spec.strip()
    if spec.startswith("("):
        return T.Tuple(tuple(_type(s) for s in _split(spec[1:-1])))
    if "[" not in spec:
        return getattr(T, _SCALAR[spec])
    t, _, kind = spec.partition("[")
    kind = kind.rstrip("]")
    dtype = getattr(T, _SCALAR[t])
    if kind == "C2":
        return T.Array(dtype, 2, "C")
    if kind == "A":
        return T.Array(dtype, 1, "A")
    return T.Array(dtype, 1, "C", readonly=kind == "R")


def _split(s: str) -> list[str]:
    return [p for p in (x.strip() for x in s.split(",")) if p]


@contextmanager
def _release_gil() -> Iterator[bool]:
    """Make the exported functions release the GIL while they run, as ``@njit(nogil=True)`` does.

    numba.pycc has no option for it: it compiles every export with a fresh ``Flags()`` of
    ``numba.pycc.compiler``. For the duration of the build that name is bound to a subclass with
    ``release_gil`` set, so that ``api`` can run chunks of one call on several Python threads. Yields
    False when this numba differs (the module then holds the GIL and ``api`` runs it on one thread);
    the module's ``nogil()`` says which, and tests/test_aot.py fails loudly on a module that holds it.
    """
    import numba.pycc.compiler as pycc_compiler
    from numba.core.compiler import Flags

    current = getattr(pycc_compiler, "Flags", None)
    if current is not Flags or not hasattr(Flags(), "release_gil"):
        yield False
        return

    class _NoGilFlags(Flags):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.release_gil = True  # type: ignore[assignment]  # numba's Flags options: typed as descriptors

    pycc_compiler.Flags = _NoGilFlags  # type: ignore[misc]  # rebinding pycc's name is the point (see above)
    try:
        yield True
    finally:
        pycc_compiler.Flags = current  # type: ignore[misc]


def build(out_dir: str | Path, *, verbose: bool = False) -> Path:
    """Compile the module into ``out_dir``; return the path of the file written."""
    import importlib

    from numba import njit
    from numba import types as T
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from numba.pycc import CC
        from numba.pycc.platform import external_compiler_works
    for w in caught:  # numba.pycc's pending deprecation: shown, not silenced (docs/architecture.md)
        print(f"{w.category.__name__}: {w.message}".splitlines()[0], file=sys.stderr)

    from . import dispatch

    if not external_compiler_works():
        raise SystemExit("ranklens: no working C compiler (numba.pycc needs one to link the module)")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    cc = CC("_aot")
    cc.output_dir = str(out_dir)
    cc.verbose = verbose
    for name, (where, result, args) in dispatch.SIGNATURES.items():
        mod, _, attr = where.partition(".")
        fn = getattr(importlib.import_module(f".{mod}", __package__), attr or name)
        sig = _type(result)(*[_type(a) for a in args.split()])
        cc.export(name, sig)(fn.py_func)
    digest = dispatch.source_digest()
    words = tuple(int(digest[i:i + 16], 16) - (2**64 if int(digest[i:i + 16], 16) >= 2**63 else 0)
                  for i in range(0, 64, 16))
    w0, w1, w2, w3 = words

    @njit
    def stamp() -> tuple[int, int, int, int]:  # pragma: no cover - compiled
        return (w0, w1, w2, w3)

    cc.export("stamp", T.UniTuple(T.int64, 4)())(stamp.py_func)
    with _release_gil() as released:
        gil = 1 if released else 0

        @njit
        def nogil() -> int:  # pragma: no cover - compiled
            return gil

        cc.export("nogil", T.int64())(nogil.py_func)
        cc.compile()  # numba.pycc warns of its pending deprecation: the build shows it (docs/architecture.md)
    written = sorted(out_dir.glob("_aot.*"), key=lambda p: p.stat().st_mtime)[-1]
    if verbose:
        print(f"ranklens: compiled {len(dispatch.SIGNATURES)} kernels ahead of time in "
              f"{time.perf_counter() - t0:.0f} s -> {written}")
    return written


if __name__ == "__main__":
    build(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent, verbose=True)
