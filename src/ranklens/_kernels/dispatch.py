"""Which machine code runs a kernel: ahead-of-time compiled, numba's parallel JIT where it is missing.

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

__all__ = ["JIT_NOTICE", "PARTS", "SIGNATURES", "SOURCES", "SPLIT_MIN_WORK", "aot_status", "by_query", "by_resample",
           "by_row", "call", "cat", "conform", "distinct", "drop_stale_jit_cache", "forced", "jit", "jit_stamp",
           "map_parts", "n_chunks", "query_pieces", "quiet", "run_pieces", "side", "source_digest", "start_parts",
           "start_pieces", "start_query_many", "state"]


#: Smallest work (rows, or resamples x values) cut into chunks run on several threads by the
#: ahead-of-time kernels.
SPLIT_MIN_WORK = 50_000

# Argument types: ``i8 f8 u1 u8 i4 b1`` scalars; ``T[C]`` 1-d C-contiguous array, ``T[A]`` 1-d any
# strides, ``T[C2]`` 2-d C-contiguous, ``T[R]`` 1-d C-contiguous read-only. Results: the same notation.
SIGNATURES: dict[str, tuple[str, str, str]] = {
    # name: (module, result, arguments)
    "evaluate_queries": ("fused", "(f8[C2], b1[C2])", "i8[C] i8[C] i8[C] f8[C] f8[C] i8 i8[C] u1[C] i8[C] i8[C] i8[C] "
                         "f8[C] b1 i8 f8 b1 f8 f8 i8 i8[C] i8[C] i8[C] f8[C] f8[C] f8[C] f8[C] b1"),
    "evaluate_queries_li8": ("fused.evaluate_queries", "(f8[C2], b1[C2])",
                             "i8[C] i8[C] i8[C] f8[C] i8[C] i8 i8[C] u1[C] i8[C] i8[C] i8[C] f8[C] b1 i8 f8 b1 f8 f8 "
                             "i8 i8[C] i8[C] i8[C] f8[C] f8[C] f8[C] f8[C] b1"),
    "list_stats": ("fused", "(i8[C], b1[C])", "i8[C] i8[C] i8[C] f8[C] f8[C]"),
    "ordered_rows": ("order", "i8", "i8[C] i8[C] i8[C] f8[C] f8[C] i8 i8[C] u1[C] i8 i8[C] i8[C]"),
    "explain_query": (
        "fused", "(i8[C], f8[C], f8[C], f8[C], f8[C], i8[C], f8[C], f8[C])",
        "f8[C] f8[C] i8[C] i8 i8[C] u1[C] f8[C] b1 i8 f8 b1 f8 i8 f8[C] f8[C] i8",
    ),
    "segments": ("group", "(i8[C], i8[C], i8[C])", "i4[C] i8"),
    "run_starts": ("group", "i8", "i8[C] u1[C] i8 i8 i8[C]"),
    "run_starts_i4": ("group.run_starts", "i8", "i4[C] u1[C] i8 i8 i8[C]"),
    "hash_items": ("group", "u8[C]", "b1 i8[C] i8[C] u1[C]"),
    "hash_items_i4": ("group.hash_items", "u8[C]", "b1 i8[C] i4[C] u1[C]"),
    "factorize": ("group", "(i4[C], i8[C])", "b1 i8[C] i8[C] u1[C] u8[C]"),
    "find_duplicates": ("group", "i8[C]", "i8[C] i8[C] i8[C] u8[C] b1 i8[C] i8[C] u1[C]"),
    "check_groups": ("group", "i8[C]", "i8[C] i8[C] i8 i8[C] u1[C] f8[C] i8 b1 b1 i8[C] b1[C]"),
    "check_groups_i4": ("group.check_groups", "i8[C]", "i8[C] i8[C] i8 i4[C] u1[C] f8[C] i8 b1 b1 i8[C] b1[C]"),
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
    "fuse_queries": ("fusion", "i8[C]", "i8[C] i8[C] i8[C2] i8[C2] i8[C] b1 i8[C] i8[C] u1[C] f8[C] i8[C] i8 i8 "
                     "i8 f8[C] f8[C] i8[C] f8[C] i8[C] i8[C]"),
    "take_strings": ("fusion", "(i8[C], u1[C])", "i8[C] u1[C] i8[C]"),
    "fusion_outputs": ("fusion", "(i8[C], f8[C], f8[C])", "i8 i8"),
    "read_f8": ("columns", "i8", "f8[R] f8[C] i8"),
    "read_i8": ("columns", "i8", "i8[R] f8[C] i8"),
    "value_facts": ("columns", "i8", "f8[C] b1 f8[C]"),
    "round_f32": ("columns", "i8", "f8[C] f8[C]"),
    "count_repeats": ("monitor_repeats", "i8", "u8[C]"),
    "attribute_labels": ("monitor_labels", "(f8[C], f8[C])", "i8[C] i8[C] i8[C] i8[C] i8[C] f8[C] f8[C] i8 i8"),
}


#: Kernels used only by other entry points (split_fields and scan_columns chunk by chunk; run_starts, hash_items and
#: check_groups on 32-bit offsets; evaluate_queries on int64 labels by ``evaluate_segments``; read_values by the type
#: of each chunk; the monitor's count_repeats and attribute_labels by ``monitor.storage``, through :func:`call`).
PARTS = ("count_lines", "scan_lines", "scan_cols", "count_chunks", "scan_chunks", "run_starts_i4", "hash_items_i4",
         "check_groups_i4", "read_f8", "read_i8", "count_repeats", "attribute_labels", "evaluate_queries_li8")


#: The kernel sources the compiled module is built from (its digest is checked before use).
SOURCES = ("api.py", "binary.py", "codes.py", "columns.py", "dispatch.py", "diversity.py", "fused.py", "fusion.py",
           "fusion_parts.py", "graded.py", "group.py", "monitor_labels.py", "monitor_repeats.py", "order.py",
           "positions.py", "resample.py", "text.py", "trec.py", "trec_more.py", "values.py")

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


state: dict[str, Any] = {}


def _mode() -> str:
    mode = state.get("forced") or os.environ.get("RANKLENS_KERNELS", "auto").strip().lower() or "auto"
    if mode not in ("auto", "aot", "jit"):
        from ..errors import InvalidParameterError

        raise InvalidParameterError(f"RANKLENS_KERNELS must be auto, aot or jit; got {mode!r}.")
    return mode


def aot_status() -> str:
    """``"ok"``, or why the ahead-of-time module is not used (missing, stale)."""
    if "aot_status" not in state:
        try:
            mod = importlib.import_module("._aot", __package__)
        except ImportError as exc:
            state["aot"], state["aot_status"] = None, f"missing ({exc})"
        else:
            built = "".join(f"{int(x) & (2**64 - 1):016x}" for x in mod.stamp())
            if built != source_digest():
                state["aot"], state["aot_status"] = None, "stale (the kernel sources changed since it was built)"
            else:
                state["aot"], state["aot_status"] = mod, "ok"
                state["nogil"] = bool(mod.nogil())
    return state["aot_status"]


@contextmanager


def forced(mode: str) -> Iterator[None]:
    """Run the block on one side only: ``"aot"`` or ``"jit"`` (tests and benchmarks)."""
    old = state.get("forced")
    state["forced"] = mode
    try:
        yield
    finally:
        state["forced"] = old


@contextmanager


def quiet() -> Iterator[None]:
    """Run the block without the notice a first JIT compilation prints (``ranklens warmup`` says
    what it does itself)."""
    old = state.get("quiet")
    state["quiet"] = True
    try:
        yield
    finally:
        state["quiet"] = old


def jit(name: str) -> Callable[..., Any]:
    fn = state.get("jit:" + name)
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
        state["jit:" + name] = fn
        stamp = jit_stamp(name)
        if not stamp.exists():
            if not state.get("stale_checked") and stamp.parent == Path(__file__).parent / "__pycache__":
                state["stale_checked"] = True  # numba's default place (NUMBA_CACHE_DIR's layout is left to it)
                drop_stale_jit_cache(stamp.parent, stamp.name.rpartition(".")[0])
            fn = _first_compile(name, fn)
    from .._base.threads import apply_threads

    apply_threads()
    return fn


def drop_stale_jit_cache(folder: Path, prefix: str) -> list[str]:
    """Remove numba's cache files of the kernels in ``folder`` when no kernel was stamped (:func:`jit_stamp`, whose
    names start with ``prefix``) for these sources yet: numba keys a function's cache by its own file's time
    stamp only, so a kernel compiled into another (``trec_more.g_at`` into ``fused.evaluate_queries``) would
    stay as it was in the other's cache after its own file changed. Returns the names removed (tests/test_aot.py)."""
    if not folder.is_dir() or any(folder.glob(prefix + ".*")):
        return []
    kernels = {source[:-3] for source in SOURCES}
    removed = sorted(f.name for f in folder.glob("*.nb[ic]") if f.name.split(".")[0] in kernels)
    for name in removed:
        (folder / name).unlink(missing_ok=True)
    return removed


def jit_stamp(name: str) -> Path:
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
    if not state.get("announced") and not state.get("quiet"):
        import sys

        status = aot_status().split(" (")[0]
        why = {"ok": "RANKLENS_KERNELS=jit asks for them",
               "missing": "the ahead-of-time kernels are missing: they could not be compiled when ranklens was "
                          "built, for want of a C compiler most likely"}.get(
                   status, f"the ahead-of-time kernels are {status}")
        print(JIT_NOTICE.format(why=why), file=sys.stderr, flush=True)
        state["announced"] = True

    def first(*args: Any) -> Any:
        out = fn(*args)
        stamp = jit_stamp(name)
        try:
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.touch()
        except OSError:  # pragma: no cover - a read-only cache: numba cannot cache either
            pass
        return out

    return first


def conform(name: str, args: tuple[Any, ...]) -> list[Any] | None:
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


def side(name: str, args: tuple[Any, ...]) -> list[Any] | None:
    """The arguments for the ahead-of-time kernel (of every size), or None when the JIT runs this call."""
    mode = _mode()
    if mode == "jit":
        return None
    status = aot_status()
    conformed = conform(name, args) if status == "ok" else None
    if conformed is None and mode == "aot":
        raise RuntimeError(f"ranklens: the ahead-of-time kernel {name} cannot run: "
                           + (f"module {status}" if status != "ok" else "arguments not of its signature"))
    return conformed


def call(name: str, *args: Any) -> Any:
    conformed = side(name, args)
    if conformed is None:
        return jit(name)(*args)
    return getattr(state["aot"], name)(*conformed)


def n_chunks(work: int, released: bool | None = None) -> int:
    """Chunks for one call: one per thread when the work is large enough and the code releases the
    GIL (``released``; default: whether the ahead-of-time module does)."""
    if work < SPLIT_MIN_WORK or not (state.get("nogil") if released is None else released):
        return 1
    from .._base.threads import threads

    return max(1, min(threads(), work // (SPLIT_MIN_WORK // 2)))


def map_parts(fn: Callable[..., Any], parts: list[tuple[Any, ...]]) -> list[Any]:
    """``fn(*p)`` for every part, on a thread pool (the compiled code releases the GIL)."""
    if len(parts) == 1:
        return [fn(*parts[0])]
    return start_parts(fn, parts)()


def start_parts(fn: Callable[..., Any], parts: list[tuple[Any, ...]]) -> Callable[[], list[Any]]:
    """:func:`map_parts` started on the thread pool without waiting: returns the wait for the results (the caller
    goes on meanwhile, e.g. with Python work that the kernels' threads, which release the GIL, do not hold up)."""
    pool = state.get("pool")
    if pool is None or state.get("pool_size", 0) < len(parts):
        from concurrent.futures import ThreadPoolExecutor

        if pool is not None:
            pool.shutdown(wait=False)
        pool = ThreadPoolExecutor(max_workers=max(2, len(parts)), thread_name_prefix="ranklens")
        state["pool"], state["pool_size"] = pool, max(2, len(parts))
    futures = [pool.submit(fn, *p) for p in parts]
    return lambda: [f.result() for f in futures]


def distinct(sorted_cuts: np.ndarray) -> np.ndarray:
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
    return distinct(np.concatenate([[0], inner, [n]]).astype(np.int64))


def by_query(name: str, args: tuple[Any, ...], sliced: tuple[int, ...], lengths: np.ndarray,
              merge: Callable[[list[Any]], Any]) -> Any:
    """Run a per-query kernel on runs of whole queries (arguments ``sliced`` cut), merged by ``merge``."""
    conformed = side(name, args)
    if conformed is None:
        return jit(name)(*args)
    fn = getattr(state["aot"], name)
    k = n_chunks(int(lengths.sum()))
    if k == 1:
        return fn(*conformed)
    cuts = _cuts(np.cumsum(lengths), k)
    parts = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        p = list(conformed)
        for i in sliced:
            p[i] = conformed[i][a:b]
        parts.append(tuple(p))
    return merge(map_parts(fn, parts))


def start_query_many(calls: list[tuple[str, tuple[Any, ...], np.ndarray]],
                     sliced: tuple[int, ...]) -> Callable[[], Any]:
    """:func:`by_query` of calls ``(name, args, lengths)`` (one per Arrow chunk...) writing into arrays of ``sliced``,
    all started at once (:func:`query_pieces`): returns the wait. On the JIT side the calls run before it returns."""
    made = query_pieces(calls, sliced)
    if made is None:
        for name, args, _ in calls:
            jit(name)(*args)
        return lambda: None
    return start_pieces(made[0])


def query_pieces(calls: list[tuple[str, tuple[Any, ...], np.ndarray]], sliced: tuple[int, ...]
                 ) -> tuple[list[tuple[int, Callable[..., Any], tuple[Any, ...]]], list[int]] | None:
    """The pieces of :func:`start_query_many`'s calls (queries of all cut into runs of about equal work, ``sliced``
    arguments cut with them) and how many each call gave, in order; None when a call must run on the JIT."""
    sides = [side(name, args) for name, args, _ in calls]
    if any(c is None for c in sides):
        return None
    total = sum(int(lengths.sum()) for _, _, lengths in calls)
    k, pieces, counts = n_chunks(total), [], []
    for (name, _, lengths), c in zip(calls, sides):
        cuts = _cuts(np.cumsum(lengths), max(1, round(k * int(lengths.sum()) / total)) if total else 1)
        for a, b in zip(cuts[:-1], cuts[1:]):
            p = list(c)  # type: ignore[arg-type]
            for i in sliced:
                p[i] = p[i][a:b]
            pieces.append((int(lengths[a:b].sum()), getattr(state["aot"], name), tuple(p)))
        counts.append(cuts.shape[0] - 1)
    return pieces, counts


def run_pieces(pieces: list[tuple[int, Callable[..., Any], tuple[Any, ...]]],
               released: bool | None = None) -> list[Any]:
    """``fn(*args)`` of every piece ``(work, fn, args)``, the pieces taken in order into runs of about equal work (one
    per thread, :func:`n_chunks`; ``released``: as there), all handed to the thread pool at once, each thread running
    its run one piece after the other (one dispatch to the pool, not one per piece); the results in the pieces'
    order."""
    total = sum(w for w, _, _ in pieces)
    runs = _runs(pieces, n_chunks(total, released))
    done = map_parts(_run, [(r,) for r in runs]) if pieces else []
    return [x for run in done for x in run]


def start_pieces(pieces: list[tuple[int, Callable[..., Any], tuple[Any, ...]]]) -> Callable[[], list[Any]]:
    """:func:`run_pieces` started on the thread pool without waiting (one run per thread, even when one thread would
    do: the caller goes on meanwhile): returns the wait for the results."""
    wait = start_parts(_run, [(r,) for r in _runs(pieces, n_chunks(sum(w for w, _, _ in pieces)))])
    return lambda: [x for run in wait() for x in run]


def _runs(pieces: list[tuple[int, Callable[..., Any], tuple[Any, ...]]],
          k: int) -> list[list[tuple[Callable[..., Any], tuple[Any, ...]]]]:
    """The pieces taken in order into (at most) ``k`` runs of about equal work, by where each piece starts."""
    total = sum(w for w, _, _ in pieces)
    runs: list[list[tuple[Callable[..., Any], tuple[Any, ...]]]] = [[] for _ in range(k)]
    at = 0
    for w, fn, args in pieces:
        runs[min(k - 1, at * k // max(total, 1))].append((fn, args))
        at += w
    return [r for r in runs if r]


def _run(run: list[tuple[Callable[..., Any], tuple[Any, ...]]]) -> list[Any]:
    return [fn(*args) for fn, args in run]


def by_row(name: str, args: tuple[Any, ...], sliced: tuple[int, ...], n: int,
            merge: Callable[[list[Any]], Any], extend: tuple[int, ...] = ()) -> Any:
    """Run a per-row kernel on runs of rows (arguments ``sliced`` cut; ``extend``: offsets, one more)."""
    conformed = side(name, args)
    if conformed is None:
        return jit(name)(*args)
    fn = getattr(state["aot"], name)
    k = n_chunks(n)
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
    return merge(map_parts(fn, parts))


def cat(outs: list[Any]) -> Any:
    if isinstance(outs[0], tuple):
        return tuple(np.concatenate([o[i] for o in outs]) for i in range(len(outs[0])))
    return np.concatenate(outs)


def by_resample(name: str, args: tuple[Any, ...], width: int) -> Any:
    """Resampling kernels cut by resample: resample ``r`` of a run from ``a`` is resample ``a + r``
    (its random numbers start at ``key + (a + r) * width``), so the cut changes no draw."""
    *head, key, n_res = args
    work = head[0].size * int(n_res)
    conformed = side(name, args)
    if conformed is None:
        return jit(name)(*args)
    fn = getattr(state["aot"], name)
    k = n_chunks(work) if n_res >= 2 else 1
    if k == 1:
        return fn(*conformed)
    cuts = np.linspace(0, int(n_res), k + 1).astype(np.int64)
    parts = [(*conformed[:-2], (int(key) + int(a) * width) % 2**64, int(b - a)) for a, b in zip(cuts[:-1], cuts[1:])]
    return np.concatenate(map_parts(fn, parts))
