"""Rank fusion: several runs -> one run, ranx's unsupervised methods and normalisations on flat arrays.

The public face of this module is :mod:`ranklens.fusion`; ``ranklens.fuse`` is :func:`fuse`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._input.buffers import StrIds
from .._input.dispatch import as_rankings, is_pathlike
from .._input.factorize import factorize_runs
from .._input.ids import IdColumn, concat_ids, join_strings, kernel_ids, one_layout, take_ids
from .._input.options import COLUMN_KEYS
from .._input.records import Rankings
from .._kernels import codes as K
from ..errors import InputError, InvalidParameterError

__all__ = ["METHODS", "NORMS", "SUPERVISED", "FusionMethod", "fuse"]


@dataclass(frozen=True)
class FusionMethod:
    """One fusion method: its kernel code, what it reads of the runs, its parameters."""

    code: int
    #: ``"score"``: the runs' (normalised) scores; ``"rank"``: the documents' positions in the runs
    reads: str
    #: required parameters
    required: tuple[str, ...] = ()
    #: optional parameters and their defaults (ranx's)
    defaults: tuple[tuple[str, float], ...] = ()
    #: the method in words (docs, errors)
    formula: str = ""


#: ranx 0.3.21's unsupervised fusion methods, by ranx's names (``ranx.fusion.fusion_switch``). s_r(d): the
#: document's (normalised) score in run r; i_r(d): its 0-based position there; R(d): the runs holding it,
#: n(d) their number; C: the documents of the query in any run; w_r: the run's weight.
METHODS: dict[str, FusionMethod] = {
    "sum": FusionMethod(K.FUSE_SUM, "score", formula="CombSUM: sum over runs of s_r(d), 0 where missing"),
    "mnz": FusionMethod(K.FUSE_MNZ, "score", formula="CombMNZ: n(d) * sum over R(d) of s_r(d)"),
    "max": FusionMethod(K.FUSE_MAX, "score", formula="CombMAX: max over runs of s_r(d), -1e9 where missing"),
    "min": FusionMethod(K.FUSE_MIN, "score", formula="CombMIN: min over runs of s_r(d), 1e9 where missing"),
    "med": FusionMethod(K.FUSE_MED, "score", formula="CombMED: median over R(d) of s_r(d)"),
    "anz": FusionMethod(K.FUSE_ANZ, "score", formula="CombANZ: sum over R(d) of s_r(d) / n(d)"),
    "gmnz": FusionMethod(K.FUSE_GMNZ, "score", ("gamma",), formula="CombGMNZ: n(d)^gamma * sum over R(d)"),
    "wsum": FusionMethod(K.FUSE_WSUM, "score", ("weights",), formula="sum over runs of w_r * s_r(d)"),
    "wmnz": FusionMethod(K.FUSE_WMNZ, "score", ("weights",),
                         formula="WMNZ: (sum over R(d) of s_r(d)) * (sum over R(d) of w_r)"),
    "mixed": FusionMethod(K.FUSE_MIXED, "score", ("weights",),
                          formula="Mixed: sqrt(n(d)) * sum over R(d) of w_r * s_r(d)"),
    "rrf": FusionMethod(K.FUSE_RRF, "rank", defaults=(("k", 60.0),),
                        formula="Reciprocal rank fusion: sum over R(d) of 1 / (k + i_r(d) + 1)"),
    "isr": FusionMethod(K.FUSE_ISR, "rank", formula="ISR: n(d) * sum over R(d) of 1 / (i_r(d) + 1)^2"),
    "log_isr": FusionMethod(K.FUSE_LOG_ISR, "rank",
                            formula="log_ISR: ln n(d) * sum over R(d) of 1 / (i_r(d) + 1)^2 (0 in one run only)"),
    "logn_isr": FusionMethod(K.FUSE_LOGN_ISR, "rank", defaults=(("sigma", 0.01),),
                             formula="logN_ISR: ln(n(d) + sigma) * sum over R(d) of 1 / (i_r(d) + 1)^2"),
    "rbc": FusionMethod(K.FUSE_RBC, "rank", ("phi",),
                        formula="Rank-biased centroid: sum over R(d) of (1 - phi) * phi^i_r(d)"),
    "bordafuse": FusionMethod(K.FUSE_BORDA, "rank", formula="BordaFuse: sum over runs of size(C) - i_r(d), "
                              "(size(C) - length of r + 1) / 2 where missing"),
    "w_bordafuse": FusionMethod(K.FUSE_W_BORDA, "rank", ("weights",),
                                formula="weighted BordaFuse: sum over runs of w_r * Borda points"),
    "condorcet": FusionMethod(K.FUSE_CONDORCET, "rank", formula="CondorcetFuse: documents sorted by pairwise "
                              "majority votes; score size(C) - position"),
    "w_condorcet": FusionMethod(K.FUSE_W_CONDORCET, "rank", ("weights",),
                                formula="weighted CondorcetFuse: votes weighted by w_r"),
}

#: ranx's supervised methods (their parameters are trained on judgments: ``ranx.fusion.*_train``): refused.
SUPERVISED = ("bayesfuse", "mapfuse", "posfuse", "probfuse", "segfuse", "slidefuse")

#: ranx's normalisations (``ranx.normalization.norm_switch``), by ranx's names, per query and run:
#: x the run's scores for the query, i a document's 0-based position, n the run's length, C the documents
#: of the query in any run.
NORMS: dict[str, tuple[int, str]] = {
    "min-max": (K.NORM_MIN_MAX, "(x - min) / max(max - min, 1e-9)"),
    "min-max-inverted": (K.NORM_MIN_MAX_INVERTED, "(max - x) / max(max - min, 1e-9), the run sorted again"),
    "max": (K.NORM_MAX, "x / max(max, 1e-9)"),
    "sum": (K.NORM_SUM, "(x - min) / max(sum(x) - min * n, 1e-9)"),
    "zmuv": (K.NORM_ZMUV, "(x - mean) / max(std, 1e-9), std over n (ddof 0)"),
    "rank": (K.NORM_RANK, "1 - i / n"),
    "borda": (K.NORM_BORDA, "1 - i / size(C); a document the run lacks gets 0.5 - (n - 1) / (2 size(C))"),
    "none": (K.NORM_NONE, "the scores as they are"),
}
_NORM_ALIASES = {"min_max": "min-max", "min_max_inverted": "min-max-inverted"}
_TIES = ("ranx", "input")
_READ_KEYS = (*COLUMN_KEYS, "run_format")


def _method(method: Any) -> tuple[str, FusionMethod]:
    name = str(method).strip().lower() if isinstance(method, str) else method
    if name in METHODS:
        return name, METHODS[name]
    if name in SUPERVISED:
        raise InvalidParameterError(
            f"method {method!r} is supervised in ranx (its parameters are trained on judgments with "
            f"ranx.fusion.{name}_train); ranklens fuses with the unsupervised methods: {', '.join(METHODS)}.")
    raise InvalidParameterError(f"`method` must be one of {', '.join(METHODS)}; got {method!r}.")


def _norm(norm: Any) -> str:
    if norm is None:
        return "none"
    name = str(norm).strip().lower() if isinstance(norm, str) else norm
    name = _NORM_ALIASES.get(name, name)
    if name not in NORMS:
        raise InvalidParameterError(f"`norm` must be one of {', '.join(NORMS)} (or None); got {norm!r}.")
    return str(name)


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InvalidParameterError(f"parameter {name!r} must be a number; got {value!r}.")
    v = float(value)
    if not math.isfinite(v):
        raise InvalidParameterError(f"parameter {name!r} must be finite; got {value!r}.")
    return v


def _params(name: str, spec: FusionMethod, params: Mapping[str, Any], n_runs: int) -> tuple[np.ndarray, np.ndarray]:
    """``(weights, par)``: the run weights (1 where the method has none) and (k, gamma, sigma, phi)."""
    allowed = set(spec.required) | {k for k, _ in spec.defaults}
    extra = sorted(set(params) - allowed)
    if extra:
        takes = f"takes {', '.join(sorted(allowed))}" if allowed else "takes no parameter"
        raise InvalidParameterError(f"method {name!r} {takes}; got {', '.join(extra)}.")
    missing = [k for k in spec.required if k not in params]
    if missing:
        raise InvalidParameterError(f"method {name!r} needs {', '.join(missing)} (e.g. "
                                    + ("weights=[0.5, 0.5]" if "weights" in missing else f"{missing[0]}=0.5") + ").")
    weights = np.ones(n_runs)
    if "weights" in params:
        w = params["weights"]
        if isinstance(w, (str, bytes)) or not hasattr(w, "__len__"):
            raise InvalidParameterError(f"`weights` must be a list of {n_runs} numbers, one per run; got {w!r}.")
        if len(w) != n_runs:
            raise InvalidParameterError(f"`weights` must have one number per run ({n_runs}); got {len(w)}.")
        weights = np.array([_number("weights", x) for x in w], np.float64)
    values = {k: d for k, d in spec.defaults}
    values.update({k: _number(k, v) for k, v in params.items() if k != "weights"})
    if name == "logn_isr" and not 0.0 <= values["sigma"] <= 1.0:
        raise InvalidParameterError(f"`sigma` must lie in [0, 1] (ranx asserts it); got {values['sigma']!r}.")
    if name == "rrf" and not values["k"] >= 0.0:  # k + rank of 0 divides by zero (ranx's numba raises too)
        raise InvalidParameterError(f"`k` (RRF's constant added to each rank) must be a number >= 0; got "
                                    f"{values['k']!r}.")
    if name == "rbc" and not 0.0 <= values["phi"] <= 1.0:
        raise InvalidParameterError(f"`phi` (RBC's persistence) must lie in [0, 1]; got {values['phi']!r}.")
    par = np.array([values.get("k", 60.0), values.get("gamma", 1.0), values.get("sigma", 0.01),
                    values.get("phi", 0.5)], np.float64)
    return weights, par


def _named(runs: Any) -> list[tuple[str, Any]]:
    if isinstance(runs, Mapping):
        items = [(str(k), v) for k, v in runs.items()]
    elif isinstance(runs, (str, bytes, os.PathLike)) or not hasattr(runs, "__iter__"):
        raise InvalidParameterError("`runs` must be a list (or a dict name -> run) of at least two runs; got one "
                                    f"{type(runs).__name__}.")
    else:
        items = []
        for i, r in enumerate(runs):
            items.append((os.path.basename(os.fspath(r)) if is_pathlike(r) else f"run{i + 1}", r))
    if len(items) < 2:
        raise InvalidParameterError(f"fusion needs at least two runs; got {len(items)}.")
    return items


def _load(named: list[tuple[str, Any]], read: dict[str, Any]) -> list[Rankings]:
    columns = {k: v for k, v in read.items() if k in COLUMN_KEYS and v is not None}
    out = []
    for name, obj in named:
        kw = dict(columns)
        if is_pathlike(obj) and read.get("run_format") is not None:
            kw["format"] = read["run_format"]
        rk = as_rankings(obj, **kw)
        if rk.qid is None or rk.item is None:
            raise InputError(f"run {name!r} is a bare vector of scores without query and item ids: it cannot be "
                             "fused.")
        out.append(rk)
    return out


def _check_queries(names: list[str], seen: np.ndarray, uniques: np.ndarray) -> None:
    """Every run holds the same queries (ranx's ``fuse`` asserts it); ``seen``: runs x queries."""
    lacking = ~seen
    if lacking.any():
        r, q = (int(x[0]) for x in np.nonzero(lacking))
        has = names[int(np.flatnonzero(seen[:, q])[0])]
        raise InputError(
            f"run {names[r]!r} has no row for query {uniques[q]!s}, which run {has!r} ranks ({int(lacking.sum())} "
            "such run-query pairs): ranx's fuse requires the runs to hold the same queries; pass "
            "queries='union' to fuse each query over the runs that rank it.")


def fuse(runs: Any, method: str, norm: str | None = "min-max", *, ties: str = "ranx", queries: str = "same",
         **params: Any) -> Rankings:
    """Fuse several runs into one, with ranx's unsupervised methods and normalisations.

    Every method and normalisation of ``ranx.fuse`` (ranx 0.3.21) that needs no training, by ranx's names and
    with ranx's definitions: the fused score of every document equals ranx's to 1e-9 (tested on random runs
    with ties and missing documents, every method with every normalisation). The work runs on flat arrays in a
    compiled kernel, all queries at once.

    Parameters
    ----------
    runs : list or dict
        Two or more runs (a dict: name -> run), each any input :func:`ranklens.as_rankings` accepts: a file (TREC
        run, CSV, Parquet, JSON...), a ``{query: {item: score}}`` dict, a ``ranx.Run``, a table...
    method : str
        One of :data:`METHODS`: ``sum``, ``mnz``, ``max``, ``min``, ``med``, ``anz``, ``gmnz`` (``gamma=``),
        ``wsum``, ``wmnz``, ``mixed`` (``weights=``), ``rrf`` (``k=60``), ``isr``, ``log_isr``, ``logn_isr``
        (``sigma=0.01``), ``rbc`` (``phi=``), ``bordafuse``, ``w_bordafuse`` (``weights=``), ``condorcet``,
        ``w_condorcet`` (``weights=``). ranx's supervised methods (:data:`SUPERVISED`) are refused.
    norm : str or None, default="min-max"
        The normalisation of each run's scores per query before fusing (ranx's default): ``min-max``,
        ``min-max-inverted``, ``max``, ``sum``, ``zmuv``, ``rank``, ``borda``, or None / ``"none"``.
    ties : {"ranx", "input"}, default="ranx"
        The position of tied documents in a run, which the rank-based methods read: ``"ranx"``, numba's quicksort
        of the scores, the order a ``ranx.Run`` gives a dict's documents when it is built (a ``ranx.Run`` given
        itself keeps its order); ``"input"``, tied documents keep the order they come in.
    queries : {"same", "union"}, default="same"
        ``"same"``: every run must hold the same queries (ranx's requirement). ``"union"``: a query a run lacks
        is an empty ranking of that run (as ranx fuses a run holding ``{query: {}}``).
    **params
        The method's parameters (``k``, ``gamma``, ``sigma``, ``phi``, ``weights``: one per run, in order), and
        for files and tables ``run_format=``, ``query_col=``, ``item_col=``, ``score_col=``, ``rank_col=``.

    Returns
    -------
    Rankings
        The fused run: each query's documents (those of any run) with their fused scores, in descending order
        (ties in order of first appearance), queries in order of their ids; :func:`ranklens.evaluate`,
        :func:`ranklens.compare` and :func:`ranklens.render.write_run` take it as it is.

    Notes
    -----
    ``norm="borda"`` lists each run's documents in the order of a Python set in ranx, which depends on the
    process's string hashes: the rank-based methods, which read that order, are refused with it. For
    ``condorcet`` ranx sorts the documents of a set with its pairwise vote; where the vote is not a consistent
    total order (a cycle, a tie, documents missing from runs) its result depends on the string hashes too;
    ranklens sorts by the same vote with a stable merge sort from the order of first appearance, the same
    result wherever the vote is a consistent order.

    Examples
    --------
    >>> import ranklens
    >>> a = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    >>> b = {"q1": {"d3": 0.9, "d1": 0.5}}
    >>> fused = ranklens.fuse([a, b], method="rrf")
    >>> [round(s, 6) for s in fused.score.tolist()]  # d1: 1/61 + 1/62, d3: 1/63 + 1/61, d2: 1/62
    [0.032522, 0.032266, 0.016129]
    >>> ranklens.evaluate({"q1": {"d3": 1}}, fused, ["mrr"])["mrr"]
    0.5
    """
    named = _named(runs)
    read = {k: params.pop(k) for k in list(params) if k in _READ_KEYS}
    name, spec = _method(method)
    norm_name = _norm(norm)
    if ties not in _TIES:
        raise InvalidParameterError(f"`ties` must be one of {', '.join(_TIES)}; got {ties!r}.")
    if queries not in ("same", "union"):
        raise InvalidParameterError(f"`queries` must be 'same' or 'union'; got {queries!r}.")
    if norm_name == "borda" and spec.reads == "rank":
        raise InvalidParameterError(
            f"norm='borda' with method {name!r}: ranx's borda normalisation lists each run's documents in the "
            "order of a Python set (its string hashes), and a rank-based method reads that order, so ranx's "
            "result changes from one process to the next; use another norm (the rank-based methods read positions, "
            "which min-max, max, sum, zmuv and rank keep).")
    weights, par = _params(name, spec, params, len(named))
    rankings = _load(named, read)
    names = [n for n, _ in named]
    if spec.reads == "score" or norm_name not in ("none", "rank", "borda"):
        rank_only = [n for n, r in zip(names, rankings) if r.score is None]
        if rank_only:
            raise InputError(f"run {rank_only[0]!r} has ranks but no scores: method {name!r} with norm "
                             f"{norm_name!r} reads scores (give a run with scores, or a rank-based method with "
                             "norm 'rank' or None).")
    return _fuse_rankings(names, rankings, spec, norm_name, ties, queries, weights, par, f"fuse({name}, {norm_name})")


def _query_rows(codes: list[Any], lengths: np.ndarray, n_q: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rstart, rend, idx)``: query ``q``'s rows of run ``r`` are the positions ``rstart[q, r]:rend[q, r]`` of the
    runs' rows one after the other (rows ``idx[p]``; ``idx`` empty when every run keeps each query's rows together,
    as run files do: then no row is read)."""
    n_runs = len(lengths)
    base = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    rstart = np.empty((n_q, n_runs), np.int64)
    rend = np.empty((n_q, n_runs), np.int64)
    every = np.arange(n_q)
    parts = [c.groups(n_q, every) for c in codes]  # a loop over runs
    for r, (s, e, _) in enumerate(parts):
        rstart[:, r] = s + base[r]
        rend[:, r] = e + base[r]
    if all(ix.size == 0 for _, _, ix in parts):
        return rstart, rend, np.empty(0, np.int64)
    idx = np.concatenate([ix + base[r] if ix.size else np.arange(base[r], base[r + 1]) for r, (_, _, ix)
                          in enumerate(parts)])
    return rstart, rend, idx


def _fuse_rankings(names: list[str], rankings: list[Rankings], spec: FusionMethod, norm: str, ties: str,
                   queries: str, weights: np.ndarray, par: np.ndarray, source: str) -> Rankings:
    from .._kernels.api import fuse_queries, fusion_outputs

    n_runs = len(rankings)
    lengths = np.array([len(r) for r in rankings], np.int64)
    parts, owner = [r.qid for r in rankings], list(range(n_runs))
    for i, r in enumerate(rankings):  # queries declared with no row ({query: {}})
        if r.empty_qids is not None and len(r.empty_qids):
            parts.append(r.empty_qids)
            owner.append(i)
    qcodes, quniques, qorder = factorize_runs(one_layout(parts))
    n_q = quniques.shape[0]
    if queries == "same":
        seen = np.zeros((n_runs, n_q), np.bool_)
        for c, o in zip(qcodes, owner):
            seen[o] |= c.present(n_q)
        _check_queries(names, seen, quniques)
    is_str, ints, offs, data = _joined_ids(one_layout([r.item for r in rankings]))
    n = max(int(lengths.sum()), 1)  # room for every row; the slots filled are the fused documents only
    out_row, out_score, score_all = fusion_outputs(n, int(lengths.sum()))  # pages given as they are filled
    np.concatenate([r.order_key() for r in rankings], out=score_all, casting="unsafe")
    for name, a, b in zip(names, np.cumsum(lengths) - lengths, np.cumsum(lengths)):  # a loop over runs
        if not np.isfinite(score_all[a:b]).all():
            raise InputError(f"run {name!r} has a score that is NaN or infinite: a fused score needs finite scores.")
    rstart, rend, idx = _query_rows(qcodes[:n_runs], lengths, n_q)
    size = (rend - rstart).sum(axis=1)
    lo = np.zeros(n_q, np.int64)
    np.cumsum(size[:-1], out=lo[1:])
    tie_codes = np.array([K.FUSE_TIES_STABLE if ties == "input" else
                          K.FUSE_TIES_RANKED if r.in_ranx_order else K.FUSE_TIES_QUICKSORT for r in rankings],
                         np.int64)
    count, first = np.zeros(n_q, np.int64), np.zeros(n_q, np.int64)
    fuse_queries(lo, lo + size, rstart, rend, idx, is_str, ints, offs, data, score_all, tie_codes, n_runs,
                 NORMS[norm][0], spec.code, weights, par, out_row, out_score, count, first)
    if (count < 0).any():
        row = int(-1 - count[count < 0][0])
        which = int(np.searchsorted(np.cumsum(lengths), row, side="right"))
        local = row - int(lengths[:which].sum())
        q = IdColumn.of(take_ids(rankings[which].qid, np.array([local]))).to_numpy()[0]
        d = IdColumn.of(take_ids(rankings[which].item, np.array([local]))).to_numpy()[0]
        raise InputError(f"run {names[which]!r} ranks item {d!s} twice for query {q!s}: a run holds a document once "
                         "per query.")
    cnt = count[qorder]
    total = int(cnt.sum())
    before = np.cumsum(cnt) - cnt
    pos = np.arange(total, dtype=np.int64) - np.repeat(before, cnt)
    slots = np.repeat(first[qorder], cnt) + pos
    qids = _take(kernel_ids(one_layout([quniques])[0]), np.repeat(qorder, cnt))  # the query ids once, repeated
    items = _take((is_str, ints, offs, data), out_row[slots])
    return Rankings(qids, items, score=out_score[slots], rank=(pos + 1).astype(np.float64), source=source)


def _joined_ids(parts: list[Any]) -> tuple[bool, np.ndarray, np.ndarray, np.ndarray]:
    """The ids of the runs one after the other, as the kernels take them ``(is_str, ints, offsets, data)``."""
    return kernel_ids(join_strings(parts) if IdColumn.of(parts[0]).is_str else concat_ids(*parts))


def _take(ids: tuple[bool, np.ndarray, np.ndarray, np.ndarray], rows: np.ndarray) -> Any:
    """The ids at ``rows`` (of ``(is_str, ints, offsets, data)``): strings copied once into buffers of their size
    (:class:`StrIds`), integers by numpy."""
    from .._kernels.api import take_strings

    is_str, ints, offs, data = ids
    if not is_str:
        return ints[rows]
    return StrIds(*take_strings(np.ascontiguousarray(offs), data, rows))
