"""``evaluate``: judgments + rankings + measures + convention -> :class:`Result`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ._ids import arrow_to_numpy
from ._kernels import api
from ._kernels import codes as K
from ._problem import Problem, build_problem
from .conventions import Convention, get_convention
from .data import Judgments, Rankings, as_judgments, as_rankings, split_table, _table_kind
from .errors import EmptyQueryError, InvalidParameterError
from .measures import Measure, parse_measures
from .result import Result

__all__ = ["compute_values", "evaluate"]

_CODES = {
    "ndcg": K.NDCG, "dcg": K.DCG, "idcg": K.IDCG, "map": K.AP, "mrr": K.RR, "precision": K.P,
    "recall": K.RECALL, "hit_rate": K.HIT, "err": K.ERR, "r_precision": K.RPREC, "num_ret": K.NUM_RET,
    "num_rel_ret": K.NUM_REL_RET, "num_rel": K.NUM_REL,
}
_GAIN_KIND = {"linear": K.GAIN_LINEAR, "exponential": K.GAIN_EXP}
_EMPTY_MODE = {"no_gain": 0, "label_sum_zero": 1, "ideal_zero": 2, "ideal_nonpositive": 3}
_GRADED = {"ndcg", "err"}
_BINARY = {"map", "mrr", "precision", "recall", "hit_rate", "r_precision"}


def _inputs(judgments: Any, rankings: Any, columns: dict[str, Any]) -> tuple[Judgments, Rankings]:
    if rankings is None:
        if _table_kind(judgments):
            j, r = split_table(judgments, need="both", **columns)
        elif isinstance(judgments, (str,)) or hasattr(judgments, "__fspath__"):
            from .io import read_table

            j, r = read_table(judgments, **columns)
        else:
            raise InvalidParameterError(
                "`rankings` is missing; it may be left out only when `judgments` is a table with both a "
                "relevance column and a score or rank column."
            )
        if j is None:
            raise InvalidParameterError("the table has no relevance column (e.g. 'relevance', 'label', 'gain').")
        if r is None:
            raise InvalidParameterError("the table has no score or rank column (e.g. 'score', 'rank').")
        return j, r
    jcols = {k: v for k, v in columns.items() if k in ("query_col", "item_col", "label_col", "format", "groups")}
    rcols = {k: v for k, v in columns.items() if k in ("query_col", "item_col", "score_col", "rank_col", "run_format")}
    if "run_format" in rcols:
        rcols["format"] = rcols.pop("run_format")
    return as_judgments(judgments, **jcols), as_rankings(rankings, **rcols)


def compute_values(
    problem: Problem, measures: list[Measure], conv: Convention
) -> tuple[np.ndarray, np.ndarray]:
    """Per-query values ``(n_queries, n_measures)`` (NaN where a query is skipped) and the empty-query mask.

    One kernel call computes every measure of every query (one ordering per query, shared).
    """
    if conv.k_beyond_longest == "error":
        _check_k_beyond_deepest(problem, measures, conv)
    max_grade = conv.err_max_grade if conv.err_max_grade is not None else max(problem.max_label, 1.0)
    codes = np.array([_CODES[m.family] for m in measures], dtype=np.int64)
    ks = np.array([_cutoff(m, conv) for m in measures], dtype=np.int64)
    gains = [m.gain or conv.gain for m in measures]
    kinds = np.array([_GAIN_KIND[g] if isinstance(g, str) else K.GAIN_MAP for g in gains], dtype=np.int64)
    levels = np.array([m.relevance_level if m.relevance_level is not None else conv.relevance_level
                       for m in measures], dtype=np.float64)
    mapping = next((g for g in gains if not isinstance(g, str)), None)
    map_keys = np.array(sorted(mapping), dtype=np.float64) if mapping else np.zeros(0)
    map_vals = np.array([mapping[k] for k in sorted(mapping)], dtype=np.float64) if mapping else np.zeros(0)
    # one table for both sides: the judged labels of a query are its ranked rows' labels, so the ideal
    # list is built from the ranked rows, in the same pass as the ordering
    same = problem.j_start is problem.r_start and problem.j_idx is problem.r_idx and problem.j_label is problem.label
    values, empties = api.evaluate_queries(
        problem.r_start, problem.r_end, problem.r_idx, problem.score, problem.label, problem.order_mode,
        problem.item_offs, problem.item_data,
        problem.j_start, problem.j_end, problem.j_idx, problem.j_label, conv.ideal == "judgments" and not same,
        problem.ties, float(conv.log_base), conv.negative_labels == "zero",
        -np.inf if conv.gain_threshold is None else float(conv.gain_threshold), float(2.0**max_grade),
        _EMPTY_MODE[conv.empty_test], codes, ks, kinds, levels, map_keys, map_vals,
    )
    for i, m in enumerate(measures):
        empty = empties[:, i]
        if not empty.any():
            continue
        rule = m.empty if m.empty is not None else conv.empty
        if rule == "error":
            bad = problem.qids[empty][:5]
            raise EmptyQueryError(
                f"{int(empty.sum())} queries have no relevant item for {m.key!r} "
                f"({', '.join(map(str, bad))}); convention {conv.name!r} says empty='error'."
            )
        values[empty, i] = np.nan if rule == "skip" else float(rule)
    if conv.round_per_query is not None:
        values = _round_like_printf(values, conv.round_per_query)
    return values, empties


def _round_like_printf(v: np.ndarray, digits: int) -> np.ndarray:
    """Round as C's printf("%.Nf") does: from the exact binary value (np.round scales first,
    which turns 0.003125 into an exact half and rounds it to even)."""
    out = np.round(v, digits)
    scaled = v * 10.0**digits
    near_half = np.abs(np.abs(scaled - np.trunc(scaled)) - 0.5) < 1e-6
    for i in np.flatnonzero(near_half & np.isfinite(v)):  # rare: values within 1e-6 of a half
        out.flat[i] = round(float(v.flat[i]), digits)
    return out


def _check_k_beyond_deepest(problem: Problem, measures: list[Measure], conv: Convention) -> None:
    """Refuse cutoffs beyond the deepest rank of the lists that count (Evidently's KeyError).

    Evidently builds its NDCG@1..n series up to the largest rank of the users it keeps (those with a
    positive label, unless empty queries are scored) and fails on a cutoff past it. Under
    ``ties="shared_rank"`` the deepest rank of a list is the shared rank of its last tied group.
    """
    lengths = problem.lengths
    last, positive = api.list_stats(problem.r_start, problem.r_end, problem.r_idx, problem.score, problem.label)
    deepest = lengths.astype(np.float64)
    if problem.ties == K.TIES_SHARED_RANK:
        deepest = np.where(lengths > 0, np.floor(lengths - (last - 1) / 2.0), 0)  # truncated mean rank
    if any(_rule(m, conv) == "skip" for m in measures if m.family in _GRADED):
        deepest = np.where(positive, deepest, 0)
    top = int(deepest.max()) if deepest.size else 0
    for m in measures:
        if m.k is not None and m.k > top:
            raise InvalidParameterError(
                f"convention {conv.name!r}: cutoff {m.k} of {m.key!r} is beyond the deepest rank ({top}) of the "
                "lists that count; Evidently raises KeyError here (ValueError when no list counts)."
            )


def _rule(m: Measure, conv: Convention) -> Any:
    return m.empty if m.empty is not None else conv.empty


def _cutoff(m: Measure, conv: Convention) -> int:
    if m.k is not None:
        return int(m.k)
    if m.family == "ndcg" and conv.default_cutoff is not None:
        return int(conv.default_cutoff)
    return 0


def _weights(weights: Any, qids: np.ndarray) -> np.ndarray | None:
    if weights is None:
        return None
    if isinstance(weights, Mapping):
        # vectorised lookup: the mapping's keys and the evaluated ids, both as strings, matched by Arrow
        import pyarrow as pa
        import pyarrow.compute as pc

        keys = pa.array([str(k) for k in weights.keys()], type=pa.large_string())
        vals = np.fromiter((float(v) for v in weights.values()), dtype=np.float64, count=len(weights))
        wanted = pa.array(qids.astype(str).astype(object) if qids.dtype.kind != "O" else qids, type=pa.large_string())
        pos = pc.index_in(wanted, value_set=keys)
        found = ~np.asarray(arrow_to_numpy(pos.is_null()), dtype=bool)
        if not found.all():
            missing = qids[~found][:5]
            raise InvalidParameterError(
                f"`weights` has no weight for {int((~found).sum())} queries ({', '.join(map(str, missing))})."
            )
        w = vals[np.asarray(arrow_to_numpy(pos.fill_null(0)), dtype=np.int64)]
    else:
        w = np.asarray(weights, dtype=np.float64).reshape(-1)
        if w.shape[0] != qids.shape[0]:
            raise InvalidParameterError(
                f"`weights` has {w.shape[0]} values but {qids.shape[0]} queries are evaluated; "
                "pass a mapping {query: weight} to be explicit."
            )
    if not np.isfinite(w).all() or (w < 0).any():
        raise InvalidParameterError("`weights` must be finite and non-negative.")
    return w


def check_measures(measures: list[Measure], conv: Convention) -> None:
    """Refuse measures the kernels do not compute, and non-NDCG measures under a shared-rank convention."""
    for m in measures:
        if m.family not in _CODES and m.family != "num_rel":
            raise InvalidParameterError(f"measure {m.key!r} is not supported.")
    if conv.ties == "shared_rank":
        bad = [m.key for m in measures if m.family not in ("ndcg", "dcg", "idcg")]
        if bad:
            raise InvalidParameterError(f"convention {conv.name!r} reproduces NDCG only; not {', '.join(bad)}.")


def evaluate(
    judgments: Any,
    rankings: Any = None,
    metrics: str | Measure | Iterable[str | Measure] = ("ndcg@10",),
    *,
    convention: str | Convention | None = None,
    per_query: bool = True,
    weights: Mapping[Any, float] | Iterable[float] | None = None,
    **options: Any,
) -> Result:
    """Evaluate ranked lists against relevance judgments.

    Parameters
    ----------
    judgments : path, dict, array-like or table
        Relevance judgments: a TREC qrels / LETOR / CSV / Parquet / JSON Lines
        file, a dict ``{query: {item: label}}``, a 2-D array or list of lists
        of labels (row = query), or a pandas/polars/pyarrow long table. A table
        that also has a score or rank column may stand alone (``rankings=None``).
    rankings : path, dict, array-like, table or None
        The ranked lists, in the same forms (scores, or ranks with 1 best).
        A 1-D score vector aligns row by row with the judgments.
    metrics : str or list of str, default=("ndcg@10",)
        Measures such as ``"ndcg@10"``, ``"map"``, ``"P.10"``; see
        :mod:`ranklens.measures`. Results are keyed as written.
    convention : str or Convention, default="ranklens"
        A preset name from :data:`ranklens.CONVENTIONS` or a Convention.
    per_query : bool, default=True
        Keep per-query values in the result.
    weights : mapping or array-like, optional
        Per-query weights for the mean (a mapping ``{query: weight}``, or one
        value per evaluated query in the result's query order).
    **options
        Convention field overrides (``gain="exponential"``, ``ties="input"``,
        ``empty=0``, ...) and table column names (``query_col=``,
        ``item_col=``, ``score_col=``, ``rank_col=``, ``label_col=``).

    Returns
    -------
    Result
        Aggregates, per-query values and what was left out and why.

    Examples
    --------
    The seeds' groups x, y and z (ranks given, linear gains):

    >>> import ranklens
    >>> qrels = {"x": {"a": 0, "b": 0, "c": 1, "d": 1, "e": 1},
    ...          "y": {"f": 1, "g": 0, "h": 1, "i": 0, "j": 1},
    ...          "z": {"k": 1, "l": 0, "m": 0, "n": 0, "o": 0}}
    >>> run = {q: {d: -i for i, d in enumerate(docs)} for q, docs in qrels.items()}
    >>> res = ranklens.evaluate(qrels, run, ["ndcg"])
    >>> round(res["ndcg"], 5)
    0.83458
    >>> {q: round(v, 4) for q, v in res.per_query_dict("ndcg").items()}
    {'x': 0.6183, 'y': 0.8855, 'z': 1.0}
    """
    column_keys = {"query_col", "item_col", "score_col", "rank_col", "label_col", "format", "run_format", "groups"}
    columns = {k: v for k, v in options.items() if k in column_keys}
    overrides = {k: v for k, v in options.items() if k not in column_keys}
    conv = get_convention(convention, **overrides)
    measures = parse_measures(metrics)
    check_measures(measures, conv)
    j, r = _inputs(judgments, rankings, columns)
    problem = build_problem(j, r, conv)
    values, empties = compute_values(problem, measures, conv)
    w = _weights(weights, problem.qids)
    return Result.build(problem, measures, values, empties, conv, w, per_query=per_query)
