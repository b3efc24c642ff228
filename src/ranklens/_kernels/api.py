"""The kernels' entry points: ahead-of-time compiled machine code for small work, numba's parallel JIT for large.

Every entry point has one signature, written below in :data:`SIGNATURES`. When ranklens is installed,
its build compiles these functions from the same Python sources (``numba.pycc``) into the extension
module ``ranklens._kernels._aot``: serial code that loads in milliseconds and needs no compiler at run
time. Work of at most :data:`AOT_MAX_WORK` rows (or draws, for resampling) runs there, so a command
line on ordinary files never imports numba; larger work runs on numba's JIT, in parallel over all
cores (compiled on first use and cached on disk). Both run the same source with the same floating
point operations in the same order per query, so their results are identical (tested).

The compiled module carries a digest of the kernel sources it was built from; when the sources have
changed since (a development checkout), it is not used. ``RANKLENS_KERNELS=jit`` / ``aot`` forces one
side (``aot`` fails when the module is missing or stale).

A kernel is called only with arguments of exactly its signature (checked here, in microseconds):
compiled code reading an array of another type would read garbage.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

__all__ = [
    "AOT_MAX_WORK", "SIGNATURES", "SOURCES", "aot_status", "bootstrap_means", "evaluate_queries",
    "find_duplicates", "forced", "gain", "gather", "hash_items", "list_stats", "lookup_labels", "order",
    "parse_floats", "segments",
    "sign_flip_exceed", "source_digest", "split_fields",
]

#: Largest work (rows, or resamples x values) given to the serial ahead-of-time kernels under ``auto``.
AOT_MAX_WORK = 2_000_000

# Argument types: ``i8 f8 u1 u8 i4 b1`` scalars; ``T[C]`` 1-d C-contiguous array, ``T[A]`` 1-d any
# strides, ``T[C2]`` 2-d C-contiguous, ``T[R]`` 1-d C-contiguous read-only. Results: the same notation.
SIGNATURES: dict[str, tuple[str, str, str]] = {
    # name: (module, result, arguments)
    "evaluate_queries": (
        "fused", "(f8[C2], b1[C2])",
        "i8[C] i8[C] i8[C] f8[C] f8[C] i8 i8[C] u1[C] i8[C] i8[C] i8[C] f8[C] b1 i8 f8 b1 f8 f8 i8 "
        "i8[C] i8[C] i8[C] f8[C] f8[C] f8[C]",
    ),
    "list_stats": ("fused", "(i8[C], b1[C])", "i8[C] i8[C] i8[C] f8[C] f8[C]"),
    "gain": ("fused._gain", "f8", "f8 i8 b1 f8 f8[C] f8[C]"),
    "order": ("fused._order", "i8[C]", "f8[C] f8[C] i8[C] i8 i8[C] u1[C]"),
    "segments": ("group", "(i8[C], i8[C], i8[C])", "i4[C] i8"),
    "hash_items": ("group", "u8[C]", "b1 i8[C] i8[C] u1[C]"),
    "find_duplicates": ("group", "i8[C]", "i8[C] i8[C] i8[C] u8[C] b1 i8[C] i8[C] u1[C]"),
    "lookup_labels": (
        "group", "f8[C]",
        "i8[C] i8[C] i8[C] u8[C] i8[C] i8[C] u1[C] i8[C] i8[C] i8[C] u8[C] i8[C] i8[C] u1[C] f8[C] b1",
    ),
    "split_fields": ("text", "(i8[C2], i8[C2], i8[C], i8[C], i8[C], i8[C])", "u1[R] i8"),
    "gather": ("text", "(u1[C], i8[C])", "u1[R] i8[A] i8[A]"),
    "parse_floats": ("text", "(f8[C], b1[C])", "u1[R] i8[A] i8[A]"),
    "bootstrap_means": ("resample", "f8[C2]", "f8[C2] u8 i8"),
    "sign_flip_exceed": ("resample", "u1[C2]", "f8[C2] f8[C] f8[C] u8 i8"),
}

#: The kernel sources the compiled module is built from (its digest is checked before use).
SOURCES = ("api.py", "codes.py", "fused.py", "group.py", "measures.py", "resample.py", "text.py")

_DTYPES = {"i8": np.int64, "i4": np.int32, "f8": np.float64, "u1": np.uint8, "u8": np.uint64, "b1": np.bool_}
_SCALARS: dict[str, Callable[[Any], Any]] = {"i8": int, "i4": int, "u8": int, "f8": float, "b1": bool}


def _parse(arg: str) -> tuple[Any, ...]:
    if "[" not in arg:
        return ("scalar", _SCALARS[arg])
    t, _, kind = arg.partition("[")
    kind = kind.rstrip("]")
    return ("array", np.dtype(_DTYPES[t]), 2 if kind == "C2" else 1, kind != "A")


_CHECKS = {name: [_parse(a) for a in args.split()] for name, (_, _, args) in SIGNATURES.items()}


def source_digest() -> str:
    """SHA-256 (hex) over the kernel sources in :data:`SOURCES`, the compiled module's build stamp."""
    h = hashlib.sha256()
    here = Path(__file__).parent
    for name in SOURCES:
        h.update(name.encode())
        h.update((here / name).read_bytes().replace(b"\r\n", b"\n"))
    return h.hexdigest()


_state: dict[str, Any] = {}


def _mode() -> str:
    mode = _state.get("forced") or os.environ.get("RANKLENS_KERNELS", "auto").strip().lower() or "auto"
    if mode not in ("auto", "aot", "jit"):
        from ..errors import InvalidParameterError

        raise InvalidParameterError(f"RANKLENS_KERNELS must be auto, aot or jit; got {mode!r}.")
    return mode


def aot_status() -> str:
    """``"ok"``, or why the ahead-of-time module is not used (missing, stale)."""
    if "aot_status" not in _state:
        try:
            mod = importlib.import_module("._aot", __package__)
        except ImportError as exc:
            _state["aot"], _state["aot_status"] = None, f"missing ({exc})"
        else:
            built = "".join(f"{int(x) & (2**64 - 1):016x}" for x in mod.stamp())
            if built != source_digest():
                _state["aot"], _state["aot_status"] = None, "stale (the kernel sources changed since it was built)"
            else:
                _state["aot"], _state["aot_status"] = mod, "ok"
    return _state["aot_status"]


@contextmanager
def forced(mode: str) -> Iterator[None]:
    """Run the block on one side only: ``"aot"`` or ``"jit"`` (tests and benchmarks)."""
    old = _state.get("forced")
    _state["forced"] = mode
    try:
        yield
    finally:
        _state["forced"] = old


def _jit(name: str) -> Callable[..., Any]:
    fn = _state.get("jit:" + name)
    if fn is None:
        mod, _, attr = SIGNATURES[name][0].partition(".")
        module = importlib.import_module("." + mod, __package__)
        fn = getattr(module, attr or name)
        _state["jit:" + name] = fn
    from .._threads import apply_threads

    apply_threads()
    return fn


def _conform(name: str, args: tuple[Any, ...]) -> list[Any] | None:
    """The arguments converted for the compiled module, or None when an array is not of the signature."""
    out = []
    for a, spec in zip(args, _CHECKS[name]):
        if spec[0] == "scalar":
            out.append(spec[1](a))
            continue
        _, dtype, ndim, contiguous = spec
        if not isinstance(a, np.ndarray) or a.dtype != dtype or a.ndim != ndim:
            return None
        if contiguous and not a.flags.c_contiguous:
            return None
        out.append(a)
    return out


def _call(name: str, work: int, *args: Any) -> Any:
    mode = _mode()
    if mode == "jit" or (mode == "auto" and work > AOT_MAX_WORK):
        return _jit(name)(*args)
    status = aot_status()
    conformed = _conform(name, args) if status == "ok" else None
    if conformed is None:
        if mode == "aot":
            raise RuntimeError(f"ranklens: the ahead-of-time kernel {name} cannot run: "
                               + (f"module {status}" if status != "ok" else "arguments not of its signature"))
        return _jit(name)(*args)
    return getattr(_state["aot"], name)(*conformed)


def evaluate_queries(*args: Any) -> Any:
    """Every measure of every query: ``(values, empty)``; see :func:`ranklens._kernels.fused.evaluate_queries`."""
    return _call("evaluate_queries", args[3].shape[0], *args)


def list_stats(*args: Any) -> Any:
    """Per query, the size of the last tie group and whether a label is positive (``fused.list_stats``)."""
    return _call("list_stats", args[3].shape[0], *args)


def gain(*args: Any) -> float:
    """The gain of one label under a convention (``fused._gain``)."""
    return _call("gain", 1, *args)


def order(*args: Any) -> Any:
    """The ranked order of one query's rows (``fused._order``)."""
    return _call("order", args[0].shape[0], *args)


def segments(codes: np.ndarray, n_groups: int) -> Any:
    """``(start, end, idx)`` of the rows of each group code (``group.segments``)."""
    return _call("segments", codes.shape[0], codes, n_groups)


def hash_items(*args: Any) -> Any:
    """64-bit hash of every item id (``group.hash_items``)."""
    return _call("hash_items", args[1].shape[0] + args[2].shape[0], *args)


def find_duplicates(*args: Any) -> Any:
    """Per group, a row whose item appears twice, or -1 (``group.find_duplicates``)."""
    return _call("find_duplicates", args[3].shape[0], *args)


def lookup_labels(*args: Any) -> Any:
    """The judged label of every ranked row, NaN when unjudged (``group.lookup_labels``)."""
    return _call("lookup_labels", args[3].shape[0] + args[10].shape[0], *args)


def split_fields(buf: np.ndarray, max_fields: int) -> Any:
    """Field spans and line numbers of every data line of a text buffer (``text.split_fields``)."""
    return _call("split_fields", buf.shape[0] // 40, buf, max_fields)


def gather(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> Any:
    """One column's bytes, contiguous, with offsets (``text.gather``)."""
    return _call("gather", starts.shape[0], buf, starts, ends)


def parse_floats(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> Any:
    """Decimal numbers of the spans, where exactly parseable on the fast path (``text.parse_floats``)."""
    return _call("parse_floats", starts.shape[0], buf, starts, ends)


def bootstrap_means(x: np.ndarray, key: int, n_resamples: int) -> Any:
    """Means of bootstrap resamples of the rows of ``x`` (``resample.bootstrap_means``)."""
    return _call("bootstrap_means", x.size * int(n_resamples), x, key, n_resamples)


def sign_flip_exceed(d: np.ndarray, observed: np.ndarray, tol: np.ndarray, key: int, n_resamples: int) -> Any:
    """Sign-flip randomization exceedances (``resample.sign_flip_exceed``)."""
    return _call("sign_flip_exceed", d.size * int(n_resamples), d, observed, tol, key, n_resamples)
