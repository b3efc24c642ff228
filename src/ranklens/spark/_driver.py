"""The driver's side: what depends on more than one query (settled globally before the executors run),
and the executors' partial sums turned into the aggregates of a :class:`ranklens.Result`."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from .._problem import Exclusion
from ..conventions import Convention
from ..errors import EmptyQueryError, InputError, InvalidParameterError
from ..evaluate import _rule
from ..measures import Measure
from ..result import _XGB_MAX_MEAN, Result
from ._layout import (
    COUNT,
    EX,
    KIND,
    KIND_EMPTY,
    KIND_NOTE,
    KIND_PARTIAL,
    KIND_SKIP,
    LABEL,
    MEAS,
    N_EXAMPLES,
    NQ,
    REASON,
    SIDE,
    SIDE_JUDGED,
    SIDE_RANKED,
    TOP,
    Layout,
    Q,
)
from ._session import collect, reraise

__all__ = ["check_depth", "check_universe", "grouped", "max_labels", "result", "with_per_query"]

#: the order in which build_problem reports its notes
_NOTE_ORDER = (
    "ranked but not judged: left out",
    "judged but not ranked: left out",
    "judged but not ranked: scored as an empty ranking",
    "ranked but not judged",
)


def with_per_query(res: Result, per_query_df: Any) -> Result:
    """The Result with its per-query values filled from the per-query DataFrame (for printing; small inputs)."""
    keys = res.keys
    rows = collect(per_query_df)
    qcol = per_query_df.columns[0]
    qids = [r[qcol] for r in rows]
    integral = all(isinstance(q, int) for q in qids)
    order = sorted(range(len(rows)), key=lambda i: qids[i] if integral else str(qids[i]))
    values = np.array([[math.nan if rows[i][k] is None else rows[i][k] for k in keys] for i in order],
                      dtype=np.float64).reshape(len(rows), len(keys))
    queries = np.array([qids[i] for i in order], dtype=np.int64 if integral else object)
    return Result(res.measures, res.aggregate, queries, values, res.counted, res.excluded, res.convention, None,
                  per_query=True)


def check_universe(prepared: Any, lay: Layout) -> None:
    """The two conventions that refuse a query missing from one side: counted over all queries at once."""
    from pyspark.sql import functions as F

    conv = lay.conv
    refuses = conv.queries == "same" or (conv.missing_ranking == "error" and conv.queries != "judged")
    if not lay.two_tables or not refuses:
        return
    flags = prepared.groupBy(*lay.keys).agg(
        F.max((F.col(SIDE) == SIDE_JUDGED).cast("int")).alias("j"),
        F.max((F.col(SIDE) == SIDE_RANKED).cast("int")).alias("r"),
    ).filter(F.col("j") != F.col("r")).cache()
    try:
        with reraise():
            counts = {(r["j"], r["r"]): r["n"] for r in flags.groupBy("j", "r").agg(F.count("*").alias("n")).collect()}
            n_j, n_r = counts.get((1, 0), 0), counts.get((0, 1), 0)
            if not n_j and not n_r:
                return

            def ex(j: int) -> str:
                rows = flags.filter(F.col("j") == j).select(Q).distinct().orderBy(Q).limit(5).collect()
                return ", ".join(str(r[Q]) for r in rows)

        if conv.queries == "same":
            raise InputError(
                f"convention {conv.name!r} needs the same queries in judgments and rankings: "
                f"{n_j} judged but not ranked ({ex(1) if n_j else ''}), "
                f"{n_r} ranked but not judged ({ex(0) if n_r else ''})."
            )
        if n_j:
            raise InputError(
                f"convention {conv.name!r}: {n_j} judged queries have no ranking ({ex(1)}); trec_eval 10 stops here "
                "too (use -c, i.e. queries='judged', to score them 0)."
            )
    finally:
        flags.unpersist()


def max_labels(prepared: Any, lay: Layout) -> dict[Any, float]:
    """The largest label (after the convention's label rule) of every group's judgments."""
    from pyspark.sql import functions as F

    from .._problem import _label_rule

    side = SIDE_JUDGED if lay.two_tables else SIDE_RANKED
    rows = collect(prepared.filter((F.col(SIDE) == side) & F.col(LABEL).isNotNull())
                    .groupBy(*lay.gcols).agg(F.max(LABEL).alias("m")))
    return {tuple(r[g] for g in lay.gcols): float(_label_rule(np.array([r["m"]], dtype=np.float64), lay.conv)[0])
            for r in rows}


def _finish_mean(m: Measure, conv: Convention, n: int, s: float) -> float:
    if m.summed:
        return float(s)
    mean = s / n if n > 0 else math.nan
    if conv.clamp_mean and m.family == "ndcg" and not math.isnan(mean):
        if mean > _XGB_MAX_MEAN:  # pragma: no cover - needs weights, which Spark does not take
            raise InputError(f"convention {conv.name!r}: the mean of {m.key!r} is {mean!r} > 1.")
        mean = min(1.0, mean)
    return mean


def check_depth(lay: Layout, tops: dict[Any, float]) -> None:
    for gkey, top_f in tops.items():
        top = int(top_f)
        for m in lay.measures:
            if m.k is not None and m.k > top:
                where = f" (group {dict(zip(lay.group_by, gkey))})" if lay.group_by else ""
                raise InvalidParameterError(
                    f"convention {lay.conv.name!r}: cutoff {m.k} of {m.key!r} is beyond the deepest rank ({top}) of "
                    f"the lists that count{where}; Evidently raises KeyError here (ValueError when no list counts)."
                )


def _sort_examples(ex: Iterable[str], integral: bool) -> tuple[str, ...]:
    uniq = set(ex)
    key = (lambda s: int(s) if s.lstrip("-").isdigit() else float(s)) if integral else None
    return tuple(sorted(uniq, key=key)[:N_EXAMPLES])


def result(rows: list[Any], lay: Layout, integral: bool) -> Result:
    measures, conv = lay.measures, lay.conv
    n_m = len(measures)
    n = [0] * n_m
    s = [0.0] * n_m
    nq = 0
    top = 0.0
    notes: dict[str, list[Any]] = {}
    mnotes: dict[tuple[int, int], list[Any]] = {}
    for r in rows:
        kind = r[KIND]
        if kind == KIND_PARTIAL:
            nq += r[NQ]
            top = max(top, r[TOP])
            for i in range(n_m):
                n[i] += r[f"__rl_n{i}"]
                s[i] += r[f"__rl_s{i}"]
        elif kind == KIND_NOTE:
            acc = notes.setdefault(r[REASON], [0, []])
            acc[0] += r[COUNT]
            acc[1].extend(r[EX])
        else:
            acc = mnotes.setdefault((r[MEAS], kind), [0, []])
            acc[0] += r[COUNT]
            acc[1].extend(r[EX])
    if nq == 0:
        raise InputError("no query to evaluate: the judgments and the rankings have no query in common.")
    if lay.check_depth:
        check_depth(lay, {(): top})
    for i, m in enumerate(measures):
        if (i, KIND_EMPTY) in mnotes and _rule(m, conv) == "error":
            cnt, ex = mnotes[(i, KIND_EMPTY)]
            raise EmptyQueryError(  # pragma: no cover - raised in the executors first
                f"{cnt} queries have no relevant item for {m.key!r} ({', '.join(_sort_examples(ex, integral)[:5])}); "
                f"convention {conv.name!r} says empty='error'."
            )
    excluded: list[Exclusion] = []
    order = {r: i for i, r in enumerate(_NOTE_ORDER)}
    for reason in sorted(notes, key=lambda x: order.get(x, len(order))):
        cnt, ex = notes[reason]
        excluded.append(Exclusion(reason, int(cnt), _sort_examples(ex, integral)))
    by_reason: dict[tuple[str, int, tuple[str, ...]], list[str]] = {}
    aggregate, counted = {}, {}
    for i, m in enumerate(measures):
        counted[m.key] = int(n[i])
        aggregate[m.key] = _finish_mean(m, conv, n[i], s[i])
        if (i, KIND_SKIP) in mnotes:
            cnt, ex = mnotes[(i, KIND_SKIP)]
            by_reason.setdefault(("no relevant item: skipped (not in the mean)", int(cnt),
                                  _sort_examples(ex, integral)), []).append(m.key)
        if (i, KIND_EMPTY) in mnotes:
            cnt, ex = mnotes[(i, KIND_EMPTY)]
            reason = f"no relevant item: scored {float(_rule(m, conv)):g} by the convention"
            by_reason.setdefault((reason, int(cnt), _sort_examples(ex, integral)), []).append(m.key)
    for (reason, count, ids), keys in by_reason.items():
        excluded.append(Exclusion(reason, count, ids, tuple(keys)))
    return Result(measures, aggregate, np.zeros(0, dtype=object), np.zeros((0, n_m)), counted, excluded, conv,
                  None, per_query=False)


def grouped(out: Any, lay: Layout, keep_top: bool = False) -> Any:
    from pyspark.sql import functions as F

    parts = out.filter(F.col(KIND) == KIND_PARTIAL)
    aggs = [F.sum(NQ).alias(NQ), F.max(TOP).alias(TOP)]
    for i in range(len(lay.measures)):
        aggs += [F.sum(f"__rl_n{i}").alias(f"__rl_n{i}"), F.sum(f"__rl_s{i}").alias(f"__rl_s{i}")]
    g = parts.groupBy(*lay.gcols).agg(*aggs)
    sel = [F.col(a).alias(name) for a, name in zip(lay.gcols, lay.group_by)]
    sel.append(F.col(NQ).alias("queries"))
    if keep_top:
        sel.append(F.col(TOP))
    for i, m in enumerate(lay.measures):
        n_i, s_i = F.col(f"__rl_n{i}"), F.col(f"__rl_s{i}")
        if m.summed:
            v = s_i
        else:
            v = s_i / n_i
            if lay.conv.clamp_mean and m.family == "ndcg":
                v = F.least(F.lit(1.0), v)  # XGBoost's Finalize
            v = F.when(n_i > 0, v)  # no query counted: null (NaN locally)
        sel.append(v.alias(m.key))
        sel.append(n_i.alias(f"queries:{m.key}"))
    return g.select(*sel)
