"""The kernels' entry points: ahead-of-time compiled machine code, numba's parallel JIT where it is missing.

Every entry point has one signature, written below in :data:`SIGNATURES`. When ranklens is installed, its build
compiles these functions from the same Python sources (``numba.pycc``) into the extension module
``ranklens._kernels._aot``: code that loads in milliseconds, needs no compiler at run time and releases the GIL. Work
of every size runs there, so ranklens never imports numba when the module is present; from :data:`SPLIT_MIN_WORK` up,
one call is cut into chunks of whole queries (rows, lines, resamples) run on all cores by a thread pool. Where the
module could not be built (no C compiler when ranklens was built from its sources), every kernel runs on numba's JIT,
parallel over queries, compiled on first use and cached on disk: the first call that must compile says so on stderr,
once (:func:`ranklens._cli.warmup.warmup`, ``ranklens warmup``, compiles them beforehand). Every query, row or
resample is computed by the same source with the same floating point operations in the same order whichever way the
work is cut, so the results are identical (tested).

The compiled module carries a digest of the kernel sources it was built from; when the sources have changed since (a
development checkout), it is not used. ``RANKLENS_KERNELS=jit`` / ``aot`` forces one side (``aot`` fails when the
module is missing or stale).

A kernel is called only with arguments of exactly its signature (checked here, in microseconds): compiled code
reading an array of another type would read garbage.
"""

from __future__ import annotations

import importlib
import os
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from .codes import MEASURES

__all__ = [
    "JIT_NOTICE", "PARTS", "SIGNATURES", "SOURCES", "SPLIT_MIN_WORK", "aot_status", "bootstrap_means",
    "evaluate_queries", "explain_query", "factorize", "field_spans", "find_duplicates", "forced", "fuse_queries",
    "gather", "greedy_ideal", "hash_items", "list_stats", "lookup_labels", "ordered_rows", "parse_floats", "quiet",
    "run_heads", "scan_columns", "segments", "sign_flip_exceed", "source_digest", "split_fields",
]

#: Smallest work (rows, or resamples x values) cut into chunks run on several threads by the
#: ahead-of-time kernels.
SPLIT_MIN_WORK = 50_000

# Argument types: ``i8 f8 u1 u8 i4 b1`` scalars; ``T[C]`` 1-d C-contiguous array, ``T[A]`` 1-d any
# strides, ``T[C2]`` 2-d C-contiguous, ``T[R]`` 1-d C-contiguous read-only. Results: the same notation.
SIGNATURES: dict[str, tuple[str, str, str]] = {
    # name: (module, result, arguments)
    "evaluate_queries": ("fused", "(f8[C2], b1[C2])", "i8[C] i8[C] i8[C] f8[C] f8[C] i8 i8[C] u1[C] i8[C] i8[C] i8[C] "
                         "f8[C] b1 i8 f8 b1 f8 f8 i8 i8[C] i8[C] i8[C] f8[C] f8[C] f8[C] f8[C]"),
    "list_stats": ("fused", "(i8[C], b1[C])", "i8[C] i8[C] i8[C] f8[C] f8[C]"),
    "ordered_rows": ("order", "i8", "i8[C] i8[C] i8[C] f8[C] f8[C] i8 i8[C] u1[C] i8 i8[C] i8[C]"),
    "explain_query": (
        "fused", "(i8[C], f8[C], f8[C], f8[C], f8[C], i8[C], f8[C], f8[C])",
        "f8[C] f8[C] i8[C] i8 i8[C] u1[C] f8[C] b1 i8 f8 b1 f8 i8 f8[C] f8[C] i8",
    ),
    "segments": ("group", "(i8[C], i8[C], i8[C])", "i4[C] i8"),
    "run_heads": ("group", "i8", "i8[C] u1[C] i8 i8 b1[C]"),
    "run_heads_i4": ("group.run_heads", "i8", "i4[C] u1[C] i8 i8 b1[C]"),
    "hash_items": ("group", "u8[C]", "b1 i8[C] i8[C] u1[C]"),
    "factorize": ("group", "(i4[C], i8[C])", "b1 i8[C] i8[C] u1[C] u8[C]"),
    "find_duplicates": ("group", "i8[C]", "i8[C] i8[C] i8[C] u8[C] b1 i8[C] i8[C] u1[C]"),
    "lookup_labels": (
        "group", "f8[C]",
        "i8[C] i8[C] i8[C] u8[C] i8[C] i8[C] u1[C] i8[C] i8[C] i8[C] u8[C] i8[C] i8[C] u1[C] f8[C] b1 f8[C]",
    ),
    "split_fields": ("text", "(i8[C2], i8[C2], i8[C], i8[C], i8[C], i8[C], i8)", "u1[R] i8"),
    "count_lines": ("text", "i8", "u1[R] i8 i8"),
    "scan_lines": ("text", "(i8, i8)", "u1[R] i8 i8 i8 b1 i8 i8 i8[C2] i8[C2] i8[C] i8[C] i8[C] i8[C]"),
    "count_chunks": ("text", "i8[C]", "u1[R] i8[C]"),
    "scan_chunks": ("text", "i8[C]", "u1[R] i8[C] i8[C] i8[C] i8[C] i8[C] u1[C] i8[C2] u1[C2] i8[C2] f8[C2] b1[C2]"),
    "scan_cols": ("text", "i8", "u1[R] i8 i8 i8[C] i8[C] i8 i8[C] u1[C] i8[C2] u1[C2] i8[C] f8[C2] b1[C2]"),
    "field_spans": ("text", "(i8[C], i8[C])", "u1[R] i8[C] i8"),
    "gather": ("text", "(u1[C], i8[C])", "u1[R] i8[A] i8[A]"),
    "parse_floats": ("text", "(f8[C], b1[C])", "u1[R] i8[A] i8[A]"),
    "bootstrap_means": ("resample", "f8[C2]", "f8[C2] u8 i8"),
    "sign_flip_exceed": ("resample", "u1[C2]", "f8[C2] f8[C] f8[C] u8 i8"),
    "greedy_ideal": ("diversity", "f8[C]", "i8[C] i8[C] i8[C] i8 f8"),
    "fuse_queries": ("fusion", "i8[C]", "i8[C] i8[C] i8[C] i8[C] u8[C] b1 i8[C] i8[C] u1[C] f8[C] i8[C] i8 i8 i8 "
                     "f8[C] f8[C] i8[C] f8[C] i8[C]"),
}

#: Kernels used only by other entry points (split_fields and scan_columns chunk by chunk; run_heads on 32-bit offsets).
PARTS = ("count_lines", "scan_lines", "scan_cols", "count_chunks", "scan_chunks", "run_heads_i4")

#: The kernel sources the compiled module is built from (its digest is checked before use).
SOURCES = ("api.py", "codes.py", "diversity.py", "fused.py", "fusion.py", "group.py", "measures.py", "order.py",
           "resample.py", "text.py", "trec_more.py", "values.py")

_MEASURE_CODES = frozenset(MEASURES)
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
    """Checksum (64 hex digits) over the kernel sources in :data:`SOURCES`, the compiled module's build
    stamp: CRC-32 and Adler-32 of the sources, CRC-32 of them reversed, and their size. It detects
    edits, not tampering; zlib is loaded already, while hashlib would add milliseconds to start-up."""
    here = Path(__file__).parent
    text = b"".join(name.encode() + b"\0" + (here / name).read_bytes().replace(b"\r\n", b"\n") for name in SOURCES)
    words = (zlib.crc32(text), zlib.adler32(text), zlib.crc32(text[::-1]), len(text))
    return "".join(f"{w:016x}" for w in words)


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
                _state["nogil"] = bool(mod.nogil())
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


@contextmanager
def quiet() -> Iterator[None]:
    """Run the block without the notice a first JIT compilation prints (``ranklens warmup`` says
    what it does itself)."""
    old = _state.get("quiet")
    _state["quiet"] = True
    try:
        yield
    finally:
        _state["quiet"] = old


def _jit(name: str) -> Callable[..., Any]:
    fn = _state.get("jit:" + name)
    if fn is None:
        mod, _, attr = SIGNATURES[name][0].partition(".")
        try:
            module = importlib.import_module("." + mod, __package__)
        except ImportError as exc:
            from ..errors import MissingDependencyError

            raise MissingDependencyError(
                f"the ahead-of-time kernels are {aot_status()} and numba, which would compile them instead, cannot "
                f"be imported ({exc}); reinstall ranklens with its dependencies "
                "(pip install --force-reinstall ranklens)") from None
        fn = getattr(module, attr or name)
        _state["jit:" + name] = fn
        if not _jit_stamp(name).exists():
            fn = _first_compile(name, fn)
    from .._base.threads import apply_threads

    apply_threads()
    return fn


def _jit_stamp(name: str) -> Path:
    """The file saying that this kernel was compiled by this numba from these sources and cached:
    beside numba's cache (``NUMBA_CACHE_DIR``, else the kernels' ``__pycache__`` when writable, else
    the user's cache directory)."""
    import sys

    import numba

    here = Path(__file__).parent / "__pycache__"
    base = os.environ.get("NUMBA_CACHE_DIR", "").strip()
    if base:
        folder = Path(base) / "ranklens"
    elif os.access(here if here.exists() else here.parent, os.W_OK):
        folder = here
    else:
        folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ranklens"
    key = f"{source_digest()[:16]}-numba{numba.__version__}-py{sys.version_info[0]}{sys.version_info[1]}"
    return folder / f"ranklens-jit-{key}.{name}"


#: What a first compilation announces on stderr (once per process): what, why, how long, how to avoid it.
JIT_NOTICE = (
    "ranklens: compiling the kernels with numba's JIT ({why}); this happens once and may take a minute or two "
    "(a first `ranklens eval` took 90 s on 2 cores), then the machine code is cached for later runs. "
    "Run `ranklens warmup` after installing to compile them beforehand."
)


def _first_compile(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, announcing (once per process) that its first call compiles, and stamping it when done."""
    if not _state.get("announced") and not _state.get("quiet"):
        import sys

        status = aot_status().split(" (")[0]
        why = {"ok": "RANKLENS_KERNELS=jit asks for them",
               "missing": "the ahead-of-time kernels are missing: they could not be compiled when ranklens was "
                          "built, for want of a C compiler most likely"}.get(
                   status, f"the ahead-of-time kernels are {status}")
        print(JIT_NOTICE.format(why=why), file=sys.stderr, flush=True)
        _state["announced"] = True

    def first(*args: Any) -> Any:
        out = fn(*args)
        stamp = _jit_stamp(name)
        try:
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.touch()
        except OSError:  # pragma: no cover - a read-only cache: numba cannot cache either
            pass
        return out

    return first


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


def _side(name: str, args: tuple[Any, ...]) -> list[Any] | None:
    """The arguments for the ahead-of-time kernel (of every size), or None when the JIT runs this call."""
    mode = _mode()
    if mode == "jit":
        return None
    status = aot_status()
    conformed = _conform(name, args) if status == "ok" else None
    if conformed is None and mode == "aot":
        raise RuntimeError(f"ranklens: the ahead-of-time kernel {name} cannot run: "
                           + (f"module {status}" if status != "ok" else "arguments not of its signature"))
    return conformed


def _call(name: str, *args: Any) -> Any:
    conformed = _side(name, args)
    if conformed is None:
        return _jit(name)(*args)
    return getattr(_state["aot"], name)(*conformed)


def _n_chunks(work: int, released: bool | None = None) -> int:
    """Chunks for one call: one per thread when the work is large enough and the code releases the
    GIL (``released``; default: whether the ahead-of-time module does)."""
    if work < SPLIT_MIN_WORK or not (_state.get("nogil") if released is None else released):
        return 1
    from .._base.threads import threads

    return max(1, min(threads(), work // (SPLIT_MIN_WORK // 2)))


def _map(fn: Callable[..., Any], parts: list[tuple[Any, ...]]) -> list[Any]:
    """``fn(*p)`` for every part, on a thread pool (the compiled code releases the GIL)."""
    if len(parts) == 1:
        return [fn(*parts[0])]
    pool = _state.get("pool")
    if pool is None or _state.get("pool_size", 0) < len(parts):
        from concurrent.futures import ThreadPoolExecutor

        if pool is not None:
            pool.shutdown(wait=False)
        pool = ThreadPoolExecutor(max_workers=len(parts), thread_name_prefix="ranklens")
        _state["pool"], _state["pool_size"] = pool, len(parts)
    return list(pool.map(lambda p: fn(*p), parts))


def _distinct(sorted_cuts: np.ndarray) -> np.ndarray:
    """Nondecreasing boundaries without repeats (np.unique would import numpy.ma: 10 ms at start-up)."""
    keep = np.ones(sorted_cuts.shape[0], np.bool_)
    keep[1:] = sorted_cuts[1:] != sorted_cuts[:-1]
    return sorted_cuts[keep]


def _cuts(weights_cum: np.ndarray, k: int) -> np.ndarray:
    """``k + 1`` boundaries splitting items into ``k`` runs of about equal cumulative weight."""
    n = weights_cum.shape[0]
    if k <= 1 or n == 0:
        return np.array([0, n])
    targets = weights_cum[-1] * np.arange(1, k) / k
    inner = np.searchsorted(weights_cum, targets, side="right")
    return _distinct(np.concatenate([[0], inner, [n]]).astype(np.int64))


def _by_query(name: str, args: tuple[Any, ...], sliced: tuple[int, ...], lengths: np.ndarray,
              merge: Callable[[list[Any]], Any]) -> Any:
    """Run a per-query kernel on runs of whole queries (arguments ``sliced`` cut), merged by ``merge``."""
    conformed = _side(name, args)
    if conformed is None:
        return _jit(name)(*args)
    fn = getattr(_state["aot"], name)
    k = _n_chunks(int(lengths.sum()))
    if k == 1:
        return fn(*conformed)
    cuts = _cuts(np.cumsum(lengths), k)
    parts = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        p = list(conformed)
        for i in sliced:
            p[i] = conformed[i][a:b]
        parts.append(tuple(p))
    return merge(_map(fn, parts))


def _by_row(name: str, args: tuple[Any, ...], sliced: tuple[int, ...], n: int,
            merge: Callable[[list[Any]], Any], extend: tuple[int, ...] = ()) -> Any:
    """Run a per-row kernel on runs of rows (arguments ``sliced`` cut; ``extend``: offsets, one more)."""
    conformed = _side(name, args)
    if conformed is None:
        return _jit(name)(*args)
    fn = getattr(_state["aot"], name)
    k = _n_chunks(n)
    if k == 1:
        return fn(*conformed)
    cuts = np.linspace(0, n, k + 1).astype(np.int64)
    parts = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        p = list(conformed)
        for i in sliced:
            p[i] = conformed[i][a:b]
        for i in extend:
            p[i] = conformed[i][a:b + 1]
        parts.append(tuple(p))
    return merge(_map(fn, parts))


def _cat(outs: list[Any]) -> Any:
    if isinstance(outs[0], tuple):
        return tuple(np.concatenate([o[i] for o in outs]) for i in range(len(outs[0])))
    return np.concatenate(outs)


def evaluate_queries(*args: Any) -> Any:
    """Every measure of every query: ``(values, empty)``; see :func:`ranklens._kernels.fused.evaluate_queries`.
    A code outside :data:`codes.MEASURES` (no branch in the kernels) is an error before any kernel runs."""
    bad = set(np.asarray(args[19]).tolist()) - _MEASURE_CODES
    if bad:
        raise ValueError(f"measure code(s) {sorted(bad)} have no kernel (ranklens._kernels.codes.MEASURES)")
    return _by_query("evaluate_queries", args, (0, 1, 8, 9), args[1] - args[0], _cat)


def list_stats(*args: Any) -> Any:
    """Per query, the size of the last tie group and whether a label is positive (``fused.list_stats``)."""
    return _by_query("list_stats", args, (0, 1), args[1] - args[0], _cat)


def ordered_rows(r_start: np.ndarray, r_end: np.ndarray, r_idx: np.ndarray, score: np.ndarray, label: np.ndarray,
                 order_mode: int, item_offs: np.ndarray, item_data: np.ndarray, depth: int = -1) -> Any:
    """``(rows, offsets)``: each query's first ``depth`` rows (< 0: all) in order (``order.ordered_rows``)."""
    lengths = r_end - r_start
    offsets = np.zeros(lengths.shape[0] + 1, np.int64)
    np.cumsum(lengths if depth < 0 else np.minimum(lengths, depth), out=offsets[1:])
    out = np.empty(int(offsets[-1]), np.int64)
    _by_query("ordered_rows", (r_start, r_end, r_idx, score, label, order_mode, item_offs, item_data, int(depth),
                               offsets[:-1], out), (0, 1, 9), lengths, lambda parts: None)
    return out, offsets


def explain_query(*args: Any) -> Any:
    """One query's DCG table: the order, gains, discounts and contributions the kernels compute DCG
    with, and the ideal list's (``fused.explain_query``)."""
    return _call("explain_query", *args)


def segments(codes: np.ndarray, n_groups: int) -> Any:
    """``(start, end, idx)`` of the rows of each group code (``group.segments``)."""
    return _call("segments", codes, n_groups)


def hash_items(is_str: bool, ints: np.ndarray, offs: np.ndarray, data: np.ndarray) -> Any:
    """64-bit hash of every item id (``group.hash_items``)."""
    if not is_str:
        return _call("hash_items", is_str, ints, offs, data)
    return _by_row("hash_items", (is_str, ints, offs, data), (), offs.shape[0] - 1, _cat, extend=(2,))


def factorize(is_str: bool, ints: np.ndarray, offs: np.ndarray, data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, firsts)``: ids numbered in order of first appearance, and the first row of each
    (``group.factorize``; one pass, on one thread)."""
    hashes = hash_items(is_str, ints, offs, data)
    return _call("factorize", is_str, ints, offs, data, hashes)


def run_heads(offs: np.ndarray, data: np.ndarray) -> np.ndarray:
    """Whether each string of an Arrow-style ``(offsets, data)`` array differs from the one before
    (``group.run_heads``; offsets int64, or int32 as in Arrow's ``string``): rows cut into chunks on the
    thread pool, on either side (both release the GIL)."""
    n = offs.shape[0] - 1
    out = np.empty(n, np.bool_)
    name = "run_heads_i4" if offs.dtype == np.int32 else "run_heads"
    conformed = _side(name, (offs, data, 0, n, out))
    fn = _jit(name) if conformed is None else getattr(_state["aot"], name)
    offs, data = (offs, data) if conformed is None else (conformed[0], conformed[1])
    k = _n_chunks(n, released=True if conformed is None else None)
    cuts = np.linspace(0, n, k + 1).astype(np.int64)
    _map(lambda a, b: fn(offs, data, a, b, out), [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])])
    return out


def find_duplicates(*args: Any) -> Any:
    """Per group, a row whose item appears twice, or -1 (``group.find_duplicates``)."""
    return _by_query("find_duplicates", args, (0, 1), args[1] - args[0], _cat)


def lookup_labels(*args: Any) -> Any:
    """The judged label of every ranked row, NaN when unjudged (``group.lookup_labels``)."""
    out = np.full(args[3].shape[0], np.nan)
    return _by_query("lookup_labels", (*args, out), (0, 1, 7, 8), (args[1] - args[0]) + (args[8] - args[7]),
                     lambda parts: out)


def split_fields(buf: np.ndarray, max_fields: int) -> Any:
    """Field spans and line numbers of every data line of a text buffer (``text.split_fields``).

    On the ahead-of-time side the buffer is cut at newlines into one chunk per thread; the chunks' lines are counted,
    then each chunk writes its lines into the shared arrays at its own offset (``text.scan_lines``); blank and comment
    lines leave gaps, closed at the end.
    """
    n = buf.shape[0]
    conformed = _side("split_fields", (buf, max_fields))
    if conformed is None:
        return _jit("split_fields")(buf, max_fields)[:6]
    aot = _state["aot"]
    cuts = _line_cuts(buf, _n_chunks(n // 40)).tolist()
    bounds = [(a, b) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
    counts = _map(lambda a, b: aot.count_lines(buf, a, b), bounds)
    first = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    cap = int(first[-1])
    starts = np.empty((cap, max_fields), np.int64)
    ends = np.empty((cap, max_fields), np.int64)
    cols = [np.empty(cap, np.int64) for _ in range(4)]  # n_fields, line_no, line_start, line_end
    done = _map(lambda a, b, f: aot.scan_lines(buf, a, b, max_fields, True, f, f, starts, ends, *cols)[0],
                [(a, b, int(f)) for (a, b), f in zip(bounds, first[:-1])])
    if sum(done) == cap:
        return (starts, ends, *cols)
    keep = np.concatenate([np.arange(f, f + d) for f, d in zip(first[:-1], done)] or [np.zeros(0, np.int64)])
    return (starts[keep], ends[keep], *(c[keep] for c in cols))


def _line_cuts(buf: np.ndarray, k: int) -> np.ndarray:
    """``k + 1`` (or fewer) offsets cutting ``buf`` into chunks that end just after a newline."""
    n = buf.shape[0]
    cuts = [0]
    for c in range(1, k):
        p = max(c * n // k, cuts[-1])
        while p < n:
            nl = np.flatnonzero(buf[p:p + 65536] == 10)
            if nl.size:
                p += int(nl[0]) + 1
                break
            p += 65536
        cuts.append(min(p, n))
    cuts.append(n)
    return _distinct(np.array(cuts, np.int64))


def scan_columns(buf: np.ndarray, kind: np.ndarray, col: np.ndarray, n_str: int, n_num: int) -> tuple[np.ndarray, ...]:
    """The data lines of a text buffer as columns, in one pass (``text.scan_cols``).

    Returns ``(lstart, nf, soffs, sdata, nvals, nok)``: per data line its start offset and field count; per string
    column ``j`` Arrow-style offsets ``soffs[j]`` (``n + 1``) into the bytes ``sdata[j]``; per numeric column the
    values and whether the exact fast path parsed them. The buffer is cut at newlines into chunks scanned side by
    side; chunk ``c`` writes its lines from its first line's index and its string bytes from its first byte's offset
    (never past the next chunk's: a field is no longer than its chunk), and the gaps are closed afterwards.
    """
    n = buf.shape[0]
    kind = np.ascontiguousarray(kind, np.int64)
    col = np.ascontiguousarray(col, np.int64)
    aot_side = _side("count_chunks", (buf, np.zeros(2, np.int64))) is not None
    k = _n_chunks(n // 40) if aot_side else (1 if n < (1 << 20) else 64)
    bounds = _line_cuts(buf, k)
    k = bounds.shape[0] - 1
    aot: Any = _state.get("aot")
    if aot_side:
        counts = np.array(_map(lambda a, b: aot.count_lines(buf, a, b), list(zip(bounds[:-1], bounds[1:]))), np.int64)
    else:
        counts = _jit("count_chunks")(buf, bounds)
    first = np.zeros(k, np.int64)
    np.cumsum(counts[:-1], out=first[1:])
    cap = int(counts.sum())
    lstart = np.empty(cap, np.int64)
    nf = np.empty(cap, np.uint8)
    soffs = np.empty((n_str, cap + 1), np.int64)
    soffs[:, 0] = 0
    sdata = np.empty((n_str, max(n, 1)), np.uint8)  # untouched pages cost nothing
    spos = np.repeat(bounds[:-1, None], n_str, axis=1).astype(np.int64)  # (chunks, n_str)
    nvals = np.empty((n_num, cap), np.float64)
    nok = np.empty((n_num, cap), np.bool_)
    if aot_side:
        done = np.array(_map(lambda c: aot.scan_cols(buf, int(bounds[c]), int(bounds[c + 1]), kind, col,
                                                       int(first[c]), lstart, nf, soffs, sdata, spos[c], nvals, nok),
                             [(c,) for c in range(k)]), np.int64)
    else:
        done = _jit("scan_chunks")(buf, bounds, first, kind, col, lstart, nf, soffs, sdata, spos, nvals, nok)
    for j in range(n_str):  # close the gaps between chunks' string bytes
        end = int(spos[0, j])
        for c in range(1, k):
            size = int(spos[c, j] - bounds[c])
            shift = int(bounds[c]) - end
            if shift and size:
                sdata[j, end:end + size] = sdata[j, bounds[c]:bounds[c] + size]
            if shift:
                soffs[j, first[c] + 1:first[c] + done[c] + 1] -= shift
            end += size
    total = int(done.sum())
    if total != cap:  # blank or comment lines: close the gaps between chunks' lines
        keep = np.concatenate([np.arange(f, f + d) for f, d in zip(first, done)])
        lstart, nf = lstart[keep], nf[keep]
        nvals, nok = np.ascontiguousarray(nvals[:, keep]), np.ascontiguousarray(nok[:, keep])
        ends = soffs[:, 1:][:, keep]
        soffs = np.zeros((n_str, total + 1), np.int64)
        soffs[:, 1:] = ends
    return lstart, nf, soffs, sdata, nvals, nok


def field_spans(buf: np.ndarray, lstart: np.ndarray, field: int) -> Any:
    """``(starts, ends)`` of one field of the lines starting at ``lstart`` (``text.field_spans``)."""
    return _call("field_spans", buf, np.ascontiguousarray(lstart, np.int64), int(field))


def gather(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> Any:
    """One column's bytes, contiguous, with offsets (``text.gather``)."""
    def merge(outs: list[Any]) -> Any:
        data = np.concatenate([o[0] for o in outs])
        offs = [outs[0][1]]
        for o in outs[1:]:
            offs.append(o[1][1:] + offs[-1][-1])
        return data, np.concatenate(offs)

    return _by_row("gather", (buf, starts, ends), (1, 2), starts.shape[0], merge)


def parse_floats(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> Any:
    """Decimal numbers of the spans, where exactly parseable on the fast path (``text.parse_floats``)."""
    return _by_row("parse_floats", (buf, starts, ends), (1, 2), starts.shape[0], _cat)


def _by_resample(name: str, args: tuple[Any, ...], width: int) -> Any:
    """Resampling kernels cut by resample: resample ``r`` of a run from ``a`` is resample ``a + r``
    (its random numbers start at ``key + (a + r) * width``), so the cut changes no draw."""
    *head, key, n_res = args
    work = head[0].size * int(n_res)
    conformed = _side(name, args)
    if conformed is None:
        return _jit(name)(*args)
    fn = getattr(_state["aot"], name)
    k = _n_chunks(work) if n_res >= 2 else 1
    if k == 1:
        return fn(*conformed)
    cuts = np.linspace(0, int(n_res), k + 1).astype(np.int64)
    parts = [(*conformed[:-2], (int(key) + int(a) * width) % 2**64, int(b - a)) for a, b in zip(cuts[:-1], cuts[1:])]
    return np.concatenate(_map(fn, parts))


def bootstrap_means(x: np.ndarray, key: int | np.unsignedinteger[Any], n_resamples: int) -> Any:
    """Means of bootstrap resamples of the rows of ``x`` (``resample.bootstrap_means``)."""
    return _by_resample("bootstrap_means", (x, key, n_resamples), x.shape[0])


def sign_flip_exceed(d: np.ndarray, observed: np.ndarray, tol: np.ndarray, key: int | np.unsignedinteger[Any],
                     n_resamples: int) -> Any:
    """Sign-flip randomization exceedances (``resample.sign_flip_exceed``)."""
    return _by_resample("sign_flip_exceed", (d, observed, tol, key, n_resamples), (d.shape[0] + 63) // 64)


def fuse_queries(*args: Any) -> Any:
    """Every query's fused list, written into the output arrays; per query its length (``fusion.fuse_queries``)."""
    return _by_query("fuse_queries", args, (0, 1, 18), args[1] - args[0], lambda parts: args[18])


def greedy_ideal(q_start: np.ndarray, d_start: np.ndarray, keys: np.ndarray, n_keys: int, alpha: float) -> Any:
    """ndeval's greedy ideal list of every query: the gain at each rank (``diversity.greedy_ideal``)."""
    return _call("greedy_ideal", q_start, d_start, keys, n_keys, alpha)
