"""The driver's side: what depends on more than one query (settled globally before the executors run),
and the executors' partial results combined into a :class:`ranklens.Result` (or one row per group) by
the core's one aggregation (:func:`ranklens.result.combine`, :meth:`ranklens.Result.from_partial`)."""

from __future__ import annotations

import math
import pickle
from typing import Any

import numpy as np

from .._core.plan import Plan, check_cutoffs
from .._core.problem import label_rule
from ..errors import InputError
from ..result import Partial, Result, combine
from ._layout import LABEL, PARTIAL, SIDE, SIDE_JUDGED, SIDE_RANKED, Layout, Q
from ._session import collect, reraise

__all__ = ["check_universe", "grouped", "max_labels", "result", "with_per_query"]


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

    conv = lay.plan.convention
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

    side = SIDE_JUDGED if lay.two_tables else SIDE_RANKED
    rows = collect(prepared.filter((F.col(SIDE) == side) & F.col(LABEL).isNotNull())
                   .groupBy(*lay.gcols).agg(F.max(LABEL).alias("m")))
    conv = lay.plan.convention
    return {tuple(r[g] for g in lay.gcols): float(label_rule(np.array([r["m"]], dtype=np.float64), conv)[0])
            for r in rows}


def _partials(out: Any, lay: Layout) -> dict[tuple[Any, ...], Partial]:
    """The executors' partial results, combined per group (one group, ``()``, without ``group_by``)."""
    by_group: dict[tuple[Any, ...], list[Partial]] = {}
    for r in collect(out):
        by_group.setdefault(tuple(r[g] for g in lay.gcols), []).append(pickle.loads(r[PARTIAL]))
    return {key: combine(parts) for key, parts in by_group.items()}


def _check_depth(plan: Plan, partial: Partial, group: dict[str, Any]) -> None:
    if plan.check_depth and partial.deepest is not None:
        check_cutoffs(plan, int(partial.deepest), f" (group {group})" if group else "")


def result(out: Any, lay: Layout) -> Result:
    """The aggregates of an evaluation without groups: its chunks' partial results combined."""
    plan = lay.plan
    partial = _partials(out, lay).get(())
    if partial is None:  # no row at all: no query (Result.from_partial says so)
        n_m = len(plan.measures)
        partial = Partial.from_values(plan, np.zeros(0), np.zeros((0, n_m)), np.zeros((0, n_m), bool))
    return Result.from_partial(plan, partial)


def check_depth(out: Any, lay: Layout) -> None:
    """Refuse a cutoff beyond the deepest list of a group (Evidently), from the chunks' partial results."""
    for key, partial in _partials(out, lay).items():
        _check_depth(lay.plan, partial, dict(zip(lay.group_by, key)))


def grouped(out: Any, lay: Layout, prepared: Any) -> Any:
    """One row per group: the group's columns, ``queries``, each measure's aggregate and ``queries:<key>``."""
    from pyspark.sql import types as T

    plan = lay.plan
    rows = []
    for key, partial in _partials(out, lay).items():
        _check_depth(plan, partial, dict(zip(lay.group_by, key)))
        res = Result.from_partial(plan, partial)
        row: list[Any] = [*key, partial.queries]
        for k in plan.keys:
            v = res.aggregate[k]
            row += [None if math.isnan(v) else v, res.counted[k]]  # no query counted: null (NaN locally)
        rows.append(row)
    fields = [T.StructField(name, prepared.schema[g].dataType, True) for g, name in zip(lay.gcols, lay.group_by)]
    fields.append(T.StructField("queries", T.LongType(), True))
    for k in plan.keys:
        fields += [T.StructField(k, T.DoubleType(), True), T.StructField(f"queries:{k}", T.LongType(), True)]
    return prepared.sparkSession.createDataFrame(rows, T.StructType(fields))
