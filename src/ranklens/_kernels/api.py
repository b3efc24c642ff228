"""The kernels' entry points: one function per kernel of :data:`dispatch.SIGNATURES`, each with the same arguments
as the compiled kernel it runs, cutting the work into chunks (whole queries, rows, lines, resamples) where it is
large. Which machine code runs a call, ahead-of-time or numba's JIT, and how chunks are run on threads is
:mod:`ranklens._kernels.dispatch`'s; its controls (:func:`aot_status`, :func:`forced`, :func:`quiet`,
:func:`source_digest`) are re-exported here, so that callers import ``_kernels.api`` and ``_kernels.codes`` only.

A kernel is called only with arguments of exactly its signature (checked in :func:`dispatch.conform`, in
microseconds): compiled code reading an array of another type would read garbage.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .codes import MEASURES
from .dispatch import (
    JIT_NOTICE,
    PARTS,
    SIGNATURES,
    SOURCES,
    aot_status,
    by_query,
    by_resample,
    by_row,
    call,
    cat,
    distinct,
    forced,
    jit,
    map_parts,
    n_chunks,
    query_pieces,
    quiet,
    run_pieces,
    side,
    source_digest,
    start_query_many,
    state,
)

__all__ = [
    "JIT_NOTICE", "PARTS", "SIGNATURES", "SOURCES", "GroupPart", "aot_status", "bootstrap_means", "check_groups",
    "evaluate_queries", "evaluate_segments", "explain_query", "factorize", "field_spans", "find_duplicates", "forced",
    "fuse_queries", "fusion_outputs", "gather", "greedy_ideal", "hash_items", "list_stats", "lookup_labels",
    "ordered_rows", "parse_floats", "quiet", "read_values", "round_f32", "run_starts", "scan_columns", "segments",
    "sign_flip_exceed", "source_digest", "split_fields", "start_check_groups", "take_strings", "value_facts",
    "value_facts_many",
]

_MEASURE_CODES = frozenset(MEASURES)


def evaluate_queries(*args: Any, round32: bool = False) -> Any:
    """Every measure of every query: ``(values, empty)``; see :func:`ranklens._kernels.fused.evaluate_queries`
    (``round32``: the scores rounded to float32 as the kernel reads them). A code outside :data:`codes.MEASURES` (no
    branch in the kernels) is an error before any kernel runs."""
    _known_codes(args[19])
    return by_query("evaluate_queries", (*args, bool(round32)), (0, 1, 8, 9), args[1] - args[0], cat)


def _known_codes(codes: Any) -> None:
    bad = set(np.asarray(codes).tolist()) - _MEASURE_CODES
    if bad:
        raise ValueError(f"measure code(s) {sorted(bad)} have no kernel (ranklens._kernels.codes.MEASURES)")


#: What :func:`evaluate_segments` passes for the judgments' arguments it does not read (no ideal list of judgments).
_NO_ROWS, _NO_LABELS = np.zeros(0, np.int64), np.zeros(1, np.float64)


def evaluate_segments(segments: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
                      order_mode: int, item_data: np.ndarray, tail: tuple[Any, ...],
                      round32: bool) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`evaluate_queries` of several segments of rows, each ``(r_start, r_end, score, label, item_offs)``: its
    queries' rows ``r_start[q]:r_end[q]`` of its own ``score`` (float64) and ``label`` (float64 or int64: an Arrow
    chunk's buffers as they are, no copy) and item offsets (``item_offs[r]`` for row ``r`` of the segment); the ideal
    list made of the ranked rows' labels (one table holding both sides); ``tail``: the arguments from ``ties`` to
    ``map_vals``. The queries of all segments cut into runs of about equal work, all on the thread pool at once
    (:func:`run_pieces`); the results per segment, in its queries' order."""
    _known_codes(tail[6])
    calls = []
    for r_start, r_end, score, label, item_offs in segments:
        name = "evaluate_queries_li8" if label.dtype == np.int64 else "evaluate_queries"
        calls.append((name, (r_start, r_end, _NO_ROWS, score, label, order_mode, item_offs, item_data, r_start,
                             r_end, _NO_ROWS, _NO_LABELS, False, *tail, bool(round32)), r_end - r_start))
    made = query_pieces(calls, (0, 1, 8, 9))
    if made is None:
        return [jit(name)(*args) for name, args, _ in calls]
    pieces, count = made
    done = iter(run_pieces(pieces))
    return [cat([next(done) for _ in range(n)]) for n in count]


def list_stats(*args: Any) -> Any:
    """Per query, the size of the last tie group and whether a label is positive (``fused.list_stats``)."""
    return by_query("list_stats", args, (0, 1), args[1] - args[0], cat)


def ordered_rows(r_start: np.ndarray, r_end: np.ndarray, r_idx: np.ndarray, score: np.ndarray, label: np.ndarray,
                 order_mode: int, item_offs: np.ndarray, item_data: np.ndarray, depth: int = -1) -> Any:
    """``(rows, offsets)``: each query's first ``depth`` rows (< 0: all) in order (``order.ordered_rows``)."""
    lengths = r_end - r_start
    offsets = np.zeros(lengths.shape[0] + 1, np.int64)
    np.cumsum(lengths if depth < 0 else np.minimum(lengths, depth), out=offsets[1:])
    out = np.empty(int(offsets[-1]), np.int64)
    by_query("ordered_rows", (r_start, r_end, r_idx, score, label, order_mode, item_offs, item_data, int(depth),
                               offsets[:-1], out), (0, 1, 9), lengths, lambda parts: None)
    return out, offsets


def explain_query(*args: Any) -> Any:
    """One query's DCG table: the order, gains, discounts and contributions the kernels compute DCG
    with, and the ideal list's (``fused.explain_query``)."""
    return call("explain_query", *args)


def segments(codes: np.ndarray, n_groups: int) -> Any:
    """``(start, end, idx)`` of the rows of each group code (``group.segments``)."""
    return call("segments", codes, n_groups)


def hash_items(is_str: bool, ints: np.ndarray, offs: np.ndarray, data: np.ndarray) -> Any:
    """64-bit hash of every item id (``group.hash_items``; offsets int64, or int32 as in Arrow's ``string``)."""
    if not is_str:
        return call("hash_items", is_str, ints, offs, data)
    name = "hash_items_i4" if offs.dtype == np.int32 else "hash_items"
    return by_row(name, (is_str, ints, offs, data), (), offs.shape[0] - 1, cat, extend=(2,))


def factorize(is_str: bool, ints: np.ndarray, offs: np.ndarray, data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, firsts)``: ids numbered in order of first appearance, and the first row of each
    (``group.factorize``; one pass, on one thread)."""
    hashes = hash_items(is_str, ints, offs, data)
    return call("factorize", is_str, ints, offs, data, hashes)


def run_starts(buffers: list[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
    """Per buffer of strings (Arrow-style offsets, int64 or int32 as in Arrow's ``string``, and data), the rows whose
    string differs from the one before, ascending (row 0 always; ``group.run_starts``): the rows of all buffers cut
    into pieces of about equal size, all run on the thread pool at once (either side releases the GIL)."""
    total = sum(offs.shape[0] - 1 for offs, _ in buffers)
    k = n_chunks(total, released=True)
    pieces, outs = [], []
    for offs, data in buffers:
        n = offs.shape[0] - 1
        out = np.empty(n, np.int64)  # only the pages the starts are written to are touched
        name = "run_starts_i4" if offs.dtype == np.int32 else "run_starts"
        conformed = side(name, (offs, data, 0, n, out))
        fn = jit(name) if conformed is None else getattr(state["aot"], name)
        offs, data = (offs, data) if conformed is None else (conformed[0], conformed[1])
        cuts = _row_cuts(n, total, k)
        outs.append((out, cuts))
        pieces += [(int(b - a), fn, (offs, data, int(a), int(b), out)) for a, b in zip(cuts[:-1], cuts[1:])]
    counts = iter(run_pieces(pieces, released=True))
    return [np.concatenate([out[a:a + next(counts)] for a in cuts[:-1]]) for out, cuts in outs]


def _kernel(name: str, args: tuple[Any, ...]) -> Callable[..., Any]:
    """The kernel ``name`` that runs a call with ``args`` (ahead of time when they are of its signature, else the
    JIT); either side releases the GIL."""
    return jit(name) if side(name, args) is None else getattr(state["aot"], name)


def _row_cuts(n: int, total: int, k: int) -> np.ndarray:
    """Boundaries cutting ``n`` of ``total`` rows into pieces of about ``total / k`` rows (at least one piece)."""
    p = max(1, round(k * n / max(total, 1)))
    return np.arange(p + 1, dtype=np.int64) * n // p  # integers: np.linspace costs ~10 us a call, per chunk


def read_values(chunks: list[np.ndarray], out: np.ndarray) -> int:
    """Numeric chunks (float64 or int64, views of Arrow's buffers) written one after the other into the float64
    ``out`` as numpy's ``astype(np.float64)`` writes them (``columns.read_f8`` / ``read_i8``), the rows of all chunks
    cut into pieces of about equal size run on the thread pool at once; returns how many are NaN or infinite."""
    total = sum(c.shape[0] for c in chunks)
    k = n_chunks(total, released=True)
    pieces: list[tuple[int, Callable[..., Any], tuple[Any, ...]]] = []
    at = 0
    fns: dict[tuple[str, bool], Callable[..., Any]] = {}  # one choice of kernel per layout, not one per chunk
    for c in chunks:
        name = "read_f8" if c.dtype == np.float64 else "read_i8"
        fn = fns.get((name, c.flags.c_contiguous)) or fns.setdefault((name, c.flags.c_contiguous),
                                                                     _kernel(name, (c, out, 0)))
        cuts = _row_cuts(c.shape[0], total, k)
        pieces += [(int(b - a), fn, (c[a:b], out, at + int(a))) for a, b in zip(cuts[:-1], cuts[1:])]
        at += c.shape[0]
    return int(sum(run_pieces(pieces, released=True)))


def value_facts(x: np.ndarray, extremes: bool = True) -> tuple[int, int, int, float]:
    """What the label and score rules read of a float64 column, on the thread pool: how many values are NaN or
    infinite, not whole numbers (``v != trunc(v)``: NaN counts), and with ``extremes`` how many are negative and the
    largest (-inf: none; NaN skipped; without ``extremes``: 0 and -inf) (``columns.value_facts``)."""
    return value_facts_many([x], extremes)


def value_facts_many(chunks: list[np.ndarray], extremes: bool = True) -> tuple[int, int, int, float]:
    """:func:`value_facts` of the float64 ``chunks`` of one column (views of Arrow's buffers) taken as one: the rows
    of all chunks cut into pieces of about equal size run on the thread pool at once."""
    total = sum(c.shape[0] for c in chunks)
    k = n_chunks(total, released=True)
    pieces: list[tuple[int, Callable[..., Any], tuple[Any, ...]]] = []
    outs = []
    fn = None  # one choice of kernel for the column, not one per chunk
    for c in chunks:
        fn = fn or _kernel("value_facts", (c, extremes, np.empty(4)))
        cuts = _row_cuts(c.shape[0], total, k)
        for a, b in zip(cuts[:-1], cuts[1:]):
            outs.append(np.empty(4))
            pieces.append((int(b - a), fn, (c[a:b], bool(extremes), outs[-1])))
    run_pieces(pieces, released=True)
    return (int(sum(o[0] for o in outs)), int(sum(o[1] for o in outs)), int(sum(o[2] for o in outs)),
            float(max((o[3] for o in outs), default=-np.inf)))


def round_f32(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``x`` rounded to float32 and back, into ``out`` (may be ``x``), as numpy's ``astype(np.float32)`` rounds, on
    the thread pool (``columns.round_f32``)."""
    n = x.shape[0]
    fn = _kernel("round_f32", (x, out))
    cuts = _row_cuts(n, n, n_chunks(n, released=True))
    run_pieces([(int(b - a), fn, (x[a:b], out[a:b])) for a, b in zip(cuts[:-1], cuts[1:])], released=True)
    return out


def find_duplicates(*args: Any) -> Any:
    """Per group, a row whose item appears twice, or -1 (``group.find_duplicates``)."""
    return by_query("find_duplicates", args, (0, 1), args[1] - args[0], cat)


#: One part of :func:`check_groups`: ``(start, end, base, offs, data, key, kbase, dup, tied)``.
GroupPart = tuple[np.ndarray, np.ndarray, int, np.ndarray, np.ndarray, np.ndarray, int, np.ndarray, np.ndarray]


def check_groups(parts: list[GroupPart], ties: bool, round32: bool = False) -> None:
    """Per group, the first row whose item is there twice (into ``dup``) and, with ``ties``, whether two scores
    (float64, without NaN; ``round32``: rounded to float32 as they are read) are equal (into ``tied``; -0.0 equals
    0.0), in one pass over its rows (``group.check_groups``; offsets int64, or int32 as in Arrow's ``string``), for
    every part ``(start, end, base, offs, data, key, kbase, dup, tied)`` (one per buffer of strings; row ``r``'s item
    at ``offs[r - base]``, its score ``key[r - kbase]``): the groups of all parts spread over the threads in one
    batch."""
    start_check_groups(parts, ties, round32)()


def start_check_groups(parts: list[GroupPart], ties: bool, round32: bool = False) -> Callable[[], Any]:
    """:func:`check_groups` started on the thread pool without waiting for it (``dispatch.start_query_many``):
    returns the wait; ``dup`` and ``tied`` are written when it returns."""
    return start_query_many([("check_groups_i4" if offs.dtype == np.int32 else "check_groups",
                              (start, end, base, offs, data, key, kbase, round32, ties, dup, tied), end - start)
                             for start, end, base, offs, data, key, kbase, dup, tied in parts], (0, 1, 9, 10))


def lookup_labels(*args: Any) -> Any:
    """The judged label of every ranked row, NaN when unjudged (``group.lookup_labels``)."""
    out = np.full(args[3].shape[0], np.nan)
    return by_query("lookup_labels", (*args, out), (0, 1, 7, 8), (args[1] - args[0]) + (args[8] - args[7]),
                     lambda parts: out)


def split_fields(buf: np.ndarray, max_fields: int) -> Any:
    """Field spans and line numbers of every data line of a text buffer (``text.split_fields``).

    On the ahead-of-time side the buffer is cut at newlines into one chunk per thread; the chunks' lines are counted,
    then each chunk writes its lines into the shared arrays at its own offset (``text.scan_lines``); blank and comment
    lines leave gaps, closed at the end.
    """
    n = buf.shape[0]
    conformed = side("split_fields", (buf, max_fields))
    if conformed is None:
        return jit("split_fields")(buf, max_fields)[:6]
    aot = state["aot"]
    cuts = _line_cuts(buf, n_chunks(n // 40)).tolist()
    bounds = [(a, b) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
    counts = map_parts(lambda a, b: aot.count_lines(buf, a, b), bounds)
    first = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    cap = int(first[-1])
    starts = np.empty((cap, max_fields), np.int64)
    ends = np.empty((cap, max_fields), np.int64)
    cols = [np.empty(cap, np.int64) for _ in range(4)]  # n_fields, line_no, line_start, line_end
    done = map_parts(lambda a, b, f: aot.scan_lines(buf, a, b, max_fields, True, f, f, starts, ends, *cols)[0],
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
    return distinct(np.array(cuts, np.int64))


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
    aot_side = side("count_chunks", (buf, np.zeros(2, np.int64))) is not None
    k = n_chunks(n // 40) if aot_side else (1 if n < (1 << 20) else 64)
    bounds = _line_cuts(buf, k)
    k = bounds.shape[0] - 1
    aot: Any = state.get("aot")
    if aot_side:
        counts = np.array(map_parts(lambda a, b: aot.count_lines(buf, a, b), list(zip(bounds[:-1], bounds[1:]))),
                          np.int64)
    else:
        counts = jit("count_chunks")(buf, bounds)
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
        done = np.array(map_parts(lambda c: aot.scan_cols(buf, int(bounds[c]), int(bounds[c + 1]), kind, col,
                                                       int(first[c]), lstart, nf, soffs, sdata, spos[c], nvals, nok),
                             [(c,) for c in range(k)]), np.int64)
    else:
        done = jit("scan_chunks")(buf, bounds, first, kind, col, lstart, nf, soffs, sdata, spos, nvals, nok)
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
    return call("field_spans", buf, np.ascontiguousarray(lstart, np.int64), int(field))


def gather(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> Any:
    """One column's bytes, contiguous, with offsets (``text.gather``)."""
    def merge(outs: list[Any]) -> Any:
        data = np.concatenate([o[0] for o in outs])
        offs = [outs[0][1]]
        for o in outs[1:]:
            offs.append(o[1][1:] + offs[-1][-1])
        return data, np.concatenate(offs)

    return by_row("gather", (buf, starts, ends), (1, 2), starts.shape[0], merge)


def parse_floats(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> Any:
    """Decimal numbers of the spans, where exactly parseable on the fast path (``text.parse_floats``)."""
    return by_row("parse_floats", (buf, starts, ends), (1, 2), starts.shape[0], cat)


def bootstrap_means(x: np.ndarray, key: int | np.unsignedinteger[Any], n_resamples: int) -> Any:
    """Means of bootstrap resamples of the rows of ``x`` (``resample.bootstrap_means``)."""
    return by_resample("bootstrap_means", (x, key, n_resamples), x.shape[0])


def sign_flip_exceed(d: np.ndarray, observed: np.ndarray, tol: np.ndarray, key: int | np.unsignedinteger[Any],
                     n_resamples: int) -> Any:
    """Sign-flip randomization exceedances (``resample.sign_flip_exceed``)."""
    return by_resample("sign_flip_exceed", (d, observed, tol, key, n_resamples), (d.shape[0] + 63) // 64)


def fuse_queries(*args: Any) -> Any:
    """Every query's fused list, written into the output arrays; per query its length and first slot
    (``fusion.fuse_queries``)."""
    return by_query("fuse_queries", args, (0, 1, 2, 3, 18, 19), args[1] - args[0], lambda parts: args[18])


def fusion_outputs(n: int, n_rows: int) -> Any:
    """``(rows, scores, row_scores)``: room for ``n`` fused documents and ``n_rows`` scores, uninitialised
    (``fusion.fusion_outputs``)."""
    return call("fusion_outputs", n, n_rows)


def take_strings(offs: np.ndarray, data: np.ndarray, rows: np.ndarray) -> Any:
    """``(offsets, data)`` of the strings at ``rows``, one after the other (``fusion.take_strings``)."""
    return call("take_strings", offs, data, rows)


def greedy_ideal(q_start: np.ndarray, d_start: np.ndarray, keys: np.ndarray, n_keys: int, alpha: float) -> Any:
    """ndeval's greedy ideal list of every query: the gain at each rank (``diversity.greedy_ideal``)."""
    return call("greedy_ideal", q_start, d_start, keys, n_keys, alpha)
