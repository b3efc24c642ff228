"""The numbers ``ranklens trec_eval`` prints: trec_eval's inputs read as it reads them, one problem, its selections.

The qrels are read as trec_eval 10 reads them (labels by C's ``atol``), the run as a TREC run; one problem is
built under the ``trec_eval10`` convention (every judged query, a missing run empty, duplicates marked rather
than refused) and its rows are put in trec_eval's order once (:mod:`ranklens._core.select`); ``-M`` and ``-J`` keep
some of them, relstring reads them, and every group of measures is evaluated on that one problem
(:func:`ranklens._core.evaluate.evaluate_problem`). Where trec_eval stops (a judged query missing from the run
without ``-c``, a document twice in a query, a first query whose judgments are all negative) the values of the
queries before it are kept, so that the command prints them as trec_eval does before it exits with status 4;
where it crashes (a later query judged -2 or below) the command refuses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._defs.trec_eval import Line, c_lround, check_gain_order
from ..errors import RanklensError

__all__ = ["Outcome", "evaluate_lines"]

# (name as asked, printed lines, ndcg gains or None)
Asked = list[tuple[str, list[Line], dict[float, float] | None]]


@dataclass
class Outcome:
    """What the command prints: the queries in trec_eval's order, per line name its per-query values and
    its mean; ``stop``: the index of the query trec_eval stops at (exit status 4), with why."""

    queries: list[str]
    values: dict[str, np.ndarray] = field(default_factory=dict)
    aggregate: dict[str, float] = field(default_factory=dict)
    stop: int | None = None
    why: str = ""


def evaluate_lines(args: Any, asked: Asked, run_path: str, convention_of: Callable[[Any], Any],
                   notes: list[str]) -> Outcome:
    """Every printed line's values. ``args``: the command line (``complete``, ``judged_only``, ``max_docs``,
    ``docs_in_coll``); ``convention_of(gains)``: the ``trec_eval10`` convention of the flags (with an ndcg gain
    mapping or None); ``notes``: lines for stderr, appended to."""
    from .._input.files import read_trec_eval_judgments, read_trec_eval_run
    from .evaluate import evaluate_problem
    from .problem import build_problem, same_problem
    from .select import keep_rows, ranked_order

    rankings = read_trec_eval_run(run_path)  # the larger file first: less held while it is read
    judgments, note = read_trec_eval_judgments(args.qrels)
    if note:
        notes.append(note)
    for name, _, gains in asked:  # ndcg's gains, in the order trec_eval sorts them for this qrels
        if gains is not None and name.partition(".")[0] == "ndcg":
            labels = np.asarray(judgments.label)
            check_gain_order(name, gains, int(labels.max(initial=-1)))
    base = convention_of(None).replace(queries="judged", missing_ranking="zero")
    problem = build_problem(judgments, rankings, base, duplicates="mark")
    del judgments, rankings  # the problem holds what it needs (the query ids are codes now)
    ranked = problem.r_end > problem.r_start  # before -M and -J: the queries the run has
    duplicated = problem.duplicated if problem.duplicated is not None else np.zeros(ranked.shape[0], bool)
    unjudged, below_minus_1 = _only_negative(problem, 0.0), _only_negative(problem, -1.0)
    no_gain = {line.name: _no_positive_gain(problem, gains) for name, lines, gains in asked
               if name.partition(".")[0] == "Rndcg" for line in lines}
    wants_order = args.max_docs is not None or args.judged_only or any(
        line.kind == "relstring" for _, lines, _ in asked for line in lines)
    if wants_order:  # -M: each query's first N in trec_eval's order; -J: of those, the judged ones
        rows, offsets = ranked_order(problem, -1 if args.max_docs is None else args.max_docs)
        if args.max_docs is not None and duplicated.any():  # trec_eval looks for them in the first N only
            duplicated = _duplicated_within(problem, rows, offsets)
        # judged: a label of 0 or more (a negative one is "in the pool, not judged")
        problem = keep_rows(problem, rows, offsets, problem.label[rows] >= 0 if args.judged_only else None)

    by_gains: dict[str, tuple[dict[float, float] | None, list[Line]]] = {}
    hidden = ["num_ret", "num_rel"]  # for trec_eval's 0 / 0 of an empty list and the levels above 1
    for _, lines, gains in asked:
        group = by_gains.setdefault(repr(gains), (gains, []))
        group[1].extend(line for line in lines if line.key is not None)
        if any(line.coefficients for line in lines):  # utility's other coefficients: from the counts
            hidden += ["num_rel_ret"]
        hidden += [k for line in lines for k in line.mean_of]
        if any(line.beyond is not None for line in lines):
            hidden += ["iprec_at_recall(recall=0.0)", "iprec_at_recall(recall=1.0)"]
    first = next(iter(by_gains.values()))[1]
    first.extend(Line(f"\0{k}", k, "double") for k in dict.fromkeys(hidden))  # named apart from printed lines

    def problem_of(c: Any) -> Any:
        if not same_problem(c, base):  # pragma: no cover - every trec_eval measure shares the problem
            raise RanklensError(f"ranklens trec_eval: convention {c.name!r} needs another problem")
        return problem

    out = Outcome(queries=[])
    order: np.ndarray | None = None
    for gains, lines in by_gains.values():
        keys = list(dict.fromkeys(k for line in lines for k in (line.key, line.total) if k is not None))
        conv = convention_of(gains).replace(queries="judged", missing_ranking="zero")
        res = evaluate_problem(problem_of, keys, convention=conv)
        if order is None:
            ids = np.asarray([str(q) for q in res.queries.tolist()], dtype=str)
            order = np.argsort(np.char.encode(ids, "utf-8"), kind="stable")  # trec_eval: strcmp order
            out.queries = ids[order].tolist()
        for line in lines:
            out.values[line.name] = np.asarray(res.values)[:, res.keys.index(str(line.key))][order]
            out.aggregate[line.name] = float(res[line.total or str(line.key)])
    assert order is not None
    n_ret = (problem.r_end - problem.r_start)[order]
    stand_in = _stand_in(args, ranked[order])
    out.stop, out.why = _stop(args, asked, out.queries, ranked[order], duplicated[order], unjudged[order])
    _refuse_crash(asked, out, below_minus_1[order])
    _finish(args, asked, out, n_ret, stand_in, {k: v[order] for k, v in no_gain.items()})
    if any(line.kind == "relstring" for _, lines, _ in asked for line in lines):
        for _, lines, _ in asked:
            for line in lines:
                if line.kind == "relstring":
                    out.values[line.name] = _relstrings(problem, order, line.width)
                    if line.name != "relstring" and line.width > 0:  # trec_eval clears its stand-in by that name
                        out.values[line.name][stand_in > 0] = "-"
    out.aggregate["num_q"] = float(len(out.queries))
    return out


def _judged_labels(problem: Any) -> np.ndarray:
    """The judgments' labels query after query (query ``q``'s are ``j_start[q]:j_end[q]``)."""
    return problem.j_label[problem.j_idx] if problem.j_idx.size else problem.j_label


def _none_of(problem: Any, hit: np.ndarray) -> np.ndarray:
    """Per query, whether none of its judgments is ``hit`` (one flag per label of :func:`_judged_labels`)."""
    count = np.zeros(hit.shape[0] + 1, np.int64)
    np.cumsum(hit, out=count[1:])
    return count[problem.j_end] == count[problem.j_start]


def _only_negative(problem: Any, floor: float) -> np.ndarray:
    """Per query, whether it has judgments and every one is below ``floor`` (0: all negative)."""
    return (problem.j_end > problem.j_start) & _none_of(problem, _judged_labels(problem) >= floor)


def _reads_lists(asked: Asked) -> bool:
    """Whether a measure asked for reads the lists (trec_eval's form_res_rels.c): runid and num_q alone do not."""
    return any(name.partition(".")[0] not in ("runid", "num_q") for name, _, _ in asked)


def _refuse_crash(asked: Asked, out: Outcome, below_minus_1: np.ndarray) -> None:
    """Refuse what trec_eval 10.0 crashes on before it stops: a query after the first (trec_eval's order) whose
    judgments are all -2 or below, when a measure reads the lists. form_res_rels.c clears ``largest label + 1``
    counts of relevance levels with memset, a negative size there (the first query fails before, status 4)."""
    later = np.flatnonzero(below_minus_1[1:])
    if not _reads_lists(asked) or not later.size or (out.stop is not None and out.stop <= later[0] + 1):
        return
    q = out.queries[int(later[0]) + 1]
    raise RanklensError(f"query {q!r}: every judgment of it is -2 or below, and trec_eval 10.0 crashes there "
                        "(form_res_rels.c clears its largest label + 1 relevance levels: a negative size); ranklens "
                        "trec_eval does not make up its output. 'ranklens eval -c trec_eval' evaluates such a query.")


def _no_positive_gain(problem: Any, gains: dict[float, float] | None) -> np.ndarray:
    """Per query, whether none of its judgments of 0 or more has a positive gain (``gains``: level -> gain, the
    other levels' gain their value)."""
    labels = _judged_labels(problem)
    gain = labels.copy()
    for level, value in (gains or {}).items():
        gain[labels == level] = value
    return _none_of(problem, (labels >= 0) & (gain > 0))


def _duplicated_within(problem: Any, rows: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per query, an item twice among its rows ``rows[offsets[q]:offsets[q + 1]]`` (``-M``: trec_eval's
    form_res_rels.c cuts the list to its first N before it looks for duplicates) or in its judgments."""
    from .._input.ids import kernel_ids
    from .._kernels.api import find_duplicates, hash_items

    ranked, judged = kernel_ids(problem.r_item), kernel_ids(problem.j_item)
    in_run = find_duplicates(offsets[:-1], offsets[1:], rows, hash_items(*ranked), *ranked) >= 0
    return in_run | (find_duplicates(problem.j_start, problem.j_end, problem.j_idx, hash_items(*judged),
                                     *judged) >= 0)


def _stop(args: Any, asked: Asked, queries: list[str], ranked: np.ndarray, duplicated: np.ndarray,
          only_negative: np.ndarray) -> tuple[int | None, str]:
    """The first query (trec_eval's order) trec_eval stops at with status 4, and why: judged but not in the
    run (without ``-c``), a document twice in its run or qrels lines, or, for the first query it evaluates,
    judgments all negative (when a measure reads the lists: runid and num_q alone do not).

    The last is trec_eval 10.0's allocation: it sizes its count of relevance levels by the query's largest
    label plus one, once, at the first query it evaluates; with no label of 0 or more that size is 0, its
    ``te_chk_and_malloc`` hands back no buffer, and the measure cannot be calculated. Later queries reuse the
    buffer: judgments all -1 are evaluated there, -2 or below crash it (:func:`_refuse_crash`; form_res_rels.c,
    utility_pool.c)."""
    n = ranked.shape[0]
    missing = ~ranked if not args.complete else np.zeros(n, bool)
    reads = _reads_lists(asked)
    first_negative = np.zeros(n, bool)
    first_negative[:1] = only_negative[:1]
    failing = missing | ((duplicated | first_negative) if reads else False)
    if not failing.any():
        return None, ""
    i = int(np.flatnonzero(failing)[0])
    if missing[i]:
        return i, (f"judged query {queries[i]!r} is not in the run (trec_eval: result qid '{queries[i]}' not found "
                   "in qrels); -c scores such a query 0. Stopped there, as trec_eval does")
    if duplicated[i]:
        return i, (f"query {queries[i]!r} has a document twice in the run or the qrels (trec_eval: duplicate docs; "
                   "Can't calculate measure). Stopped there, as trec_eval does")
    return i, (f"query {queries[i]!r}, the first trec_eval evaluates, has only negative judgments (trec_eval "
               "10.0 cannot size its relevance levels for it: Can't calculate measure). Stopped there, as "
               "trec_eval does")


def _stand_in(args: Any, ranked: np.ndarray) -> np.ndarray:
    """Per query (trec_eval's order), the number of stand-in documents trec_eval ranks for it: under ``-c`` a
    judged query missing from the run is evaluated on one unjudged document (``ceci_nest_pas_un_docno``;
    none under ``-J``, which removes it, nor ``-M 0``), and trec_eval then zeroes num_ret, unj, rbp_resid, and
    utility and relstring by those exact names, but not ``utility_p1,...`` nor ``relstring_N``."""
    if not args.complete or args.judged_only or (args.max_docs is not None and args.max_docs <= 0):
        return np.zeros(ranked.shape[0], dtype=np.int64)
    return (~ranked).astype(np.int64)


def _finish(args: Any, asked: Asked, out: Outcome, n_ret: np.ndarray, stand_in: np.ndarray,
            no_gain: dict[str, np.ndarray]) -> None:
    """The lines computed from other lines: utility's coefficients, 11pt_avg's levels, interpolated precision
    above recall 1, a stand-in's values, and trec_eval's 0 / 0 (``-nan``) for an empty list and for Rndcg of a
    query with relevant documents but no judged level of positive gain (``no_gain``, per Rndcg line: m_Rndcg.c
    averages over no R level)."""
    values, aggregate = out.values, out.aggregate
    big_r = values["\0num_rel"]
    for _, lines, _ in asked:
        for line in lines:
            if line.kind == "relstring" or line.key is None:
                continue
            column = values[line.name]
            if line.coefficients:
                column = _utility(values, line.coefficients, args.docs_in_coll, stand_in)
            elif line.mean_of:
                column = sum((values[f"\0{k}"] for k in line.mean_of), np.zeros(len(out.queries))) / len(line.mean_of)
            elif line.beyond is not None:  # lround(x R): 0 or less is the level 0, R the level 1, above R 0
                cut = c_lround(line.beyond * big_r)
                column = np.where(cut <= 0, values["\0iprec_at_recall(recall=0.0)"],
                                  np.where(cut == big_r, values["\0iprec_at_recall(recall=1.0)"], 0.0))
            elif line.stand_in:  # a value trec_eval gives a missing query under -c
                column = column.copy()
                column[stand_in > 0] = line.stand_in
            if line.levels:
                column = _empty_nan(column, line.levels, n_ret + stand_in, big_r)
            if line.name in no_gain and (no_gain[line.name] & (big_r > 0)).any():
                column = np.where(no_gain[line.name] & (big_r > 0), np.copysign(np.nan, -1.0), column)
            if column is values[line.name]:
                if np.isnan(column[:out.stop]).any():  # the queries trec_eval prints, before it stops
                    q = out.queries[int(np.flatnonzero(np.isnan(column))[0])]
                    raise RanklensError(f"{line.name}: query {q!r} has no value under trec_eval's rules.")
                continue
            values[line.name] = column
            aggregate[line.name] = _mean(column)


def _empty_nan(column: np.ndarray, levels: tuple[float, ...], n_ret: np.ndarray, big_r: np.ndarray) -> np.ndarray:
    """trec_eval's interpolated precisions of an empty list: ``0 / 0`` (``-nan``) where some recall level's
    ``lround(x R)`` is 0 or less (it stays 0 elsewhere)."""
    empty = n_ret == 0
    if not empty.any():
        return column
    hit = empty & np.any([c_lround(x * big_r) <= 0 for x in levels], axis=0)
    if not hit.any():
        return column
    column = column.copy()
    column[hit] = np.copysign(np.nan, -1.0)
    return column


def _mean(column: np.ndarray) -> float:
    """trec_eval's mean: the values added one after the other in query order (a NaN, the first one), / their
    number."""
    if not column.size:
        return 0.0
    nan = np.flatnonzero(np.isnan(column))
    if nan.size:
        return float(column[nan[0]])
    return float(np.cumsum(column)[-1] / column.size)


def _utility(values: dict[str, np.ndarray], coefficients: tuple[float, ...], docs: int,
             stand_in: np.ndarray) -> np.ndarray:
    """trec_eval's utility with coefficients p1..p4 (``m_utility.c``): ``p1 a + p2 b + p3 c + p4 d`` of the
    query's counts (a relevant ranked, b non-relevant ranked, c relevant not ranked, d the rest of the ``-N``
    documents; a query missing from the run under ``-c`` has trec_eval's stand-in document ranked)."""
    ret, rel, rel_ret = (values[f"\0{k}"] for k in ("num_ret", "num_rel", "num_rel_ret"))
    ret = ret + stand_in
    p1, p2, p3, p4 = coefficients
    return p1 * rel_ret + p2 * (ret - rel_ret) + p3 * (rel - rel_ret) + p4 * (docs + rel_ret - ret - rel)


def _relstrings(problem: Any, order: np.ndarray, width: int) -> np.ndarray:
    """trec_eval's relstring per query (``m_relstring.c``), from the rows already in its order: the labels of
    its first ``width`` documents, one character each: the label 0-9, ``>`` above 9, ``-`` not in the qrels,
    ``.`` in the qrels with a negative label; '' for an empty list."""
    lengths = problem.r_end - problem.r_start
    w = int(min(max(width, 0), int(lengths.max()) if lengths.size else 0))
    out = np.full(lengths.shape[0], "", dtype=object)
    if w <= 0:
        return out
    counts = np.minimum(lengths, w)
    q = np.repeat(np.arange(lengths.shape[0]), counts)
    pos = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    label = problem.label[problem.r_idx[problem.r_start[q] + pos]]
    chars = np.where(np.isnan(label), ord("-"), np.where(label < 0, ord("."), np.where(
        label > 9, ord(">"), ord("0") + np.clip(np.nan_to_num(label), 0, 9).astype(np.int64))))
    grid = np.zeros((lengths.shape[0], w), dtype=np.uint8)
    grid[q, pos] = chars
    out[:] = np.char.decode(grid.view(f"S{w}").ravel(), "ascii")
    return out[order]
