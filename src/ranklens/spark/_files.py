"""Files in, results out: what ``ranklens eval --engine spark`` runs (the command line only prints)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, RanklensError
from ..measures import Measure
from ..result import Result
from ._driver import with_per_query
from ._evaluate import evaluate
from ._session import require_pyspark, reraise, session

__all__ = ["SparkRun", "evaluate_files", "read_table"]


@dataclass(frozen=True)
class SparkRun:
    """What :func:`evaluate_files` gives for one run: exactly one of ``result``, ``table``, ``written``.

    Attributes
    ----------
    name : str
        The run's path (the judgments' path for one table holding both sides).
    result : Result or None
        The aggregates (and, when asked, the per-query values) of the run.
    table : pyarrow.Table or None
        With ``group_by`` and no ``output``: the per-group aggregates (or the per-query values).
    written : str or None
        With ``output``: the path the Parquet files were written to.
    """

    name: str
    result: Result | None = None
    table: Any = None
    written: str | None = None


def read_table(spark: Any, path: str) -> Any:
    """A table Spark can read, by its extension (a directory: Parquet unless its files say otherwise).

    Parameters
    ----------
    spark : pyspark.sql.SparkSession
    path : str
        A Parquet, CSV/TSV (header line) or JSON Lines file or directory, any path Spark reads.

    Returns
    -------
    pyspark.sql.DataFrame

    Raises
    ------
    InputError
        A text format Spark does not read as a table (TREC, LETOR).

    Examples
    --------
    >>> read_table(None, "run.trec")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ranklens.errors.InputError: run.trec: --engine spark reads Parquet, CSV/TSV or JSON Lines tables ...
    """
    low = path.lower().rstrip("/")
    if low.endswith((".csv", ".csv.gz", ".tsv", ".tsv.gz")):
        sep = "\t" if ".tsv" in low else ","
        return spark.read.options(header=True, inferSchema=True, sep=sep).csv(path)
    if low.endswith((".jsonl", ".jsonl.gz", ".json", ".ndjson")):
        return spark.read.json(path)
    if low.endswith((".parquet", ".pq")) or "." not in os.path.basename(low):
        return spark.read.parquet(path)
    raise InputError(f"{path}: --engine spark reads Parquet, CSV/TSV or JSON Lines tables (TREC and LETOR text "
                     "files: convert them, or use the local engine).")


def _session(master: str | None) -> Any:
    """The active session, the one spark-submit configures, or a new one on ``master`` (logs: errors only)."""
    require_pyspark()
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    if spark is None:
        if master is None and os.environ.get("SPARK_ENV_LOADED"):
            # under spark-submit: its --master and --conf hold
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            spark = SparkSession.builder.appName("ranklens eval").getOrCreate()
        else:
            spark = session(master or "local[*]", app_name="ranklens eval")
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def evaluate_files(
    judgments: str,
    runs: Sequence[str] = (),
    measures: str | Measure | Iterable[str | Measure] = ("ndcg@10",),
    *,
    convention: str | None = None,
    per_query: bool = False,
    group_by: Sequence[str] = (),
    output: str | None = None,
    partitions: int | None = None,
    master: str | None = None,
    spark: Any = None,
    **options: Any,
) -> list[SparkRun]:
    """Evaluate run files against a judgments file on Spark (``ranklens eval --engine spark``).

    Parameters
    ----------
    judgments : str
        Path of the judgments table (or, without ``runs``, of one table holding both sides).
    runs : sequence of str
        Paths of the run tables.
    measures, convention, per_query, group_by, partitions, **options
        As in :func:`ranklens.spark.evaluate`.
    output : str, optional
        Write the per-group aggregates (or, with ``per_query``, the per-query values) as Parquet there
        (one directory per run when there are several) instead of returning them.
    master : str, optional
        Spark master URL when no session is active (default ``local[*]``, or spark-submit's).
    spark : pyspark.sql.SparkSession, optional
        The session to use (default: the active one, else one started as ``master`` says).

    Returns
    -------
    list of SparkRun
        One per run, in order.

    Raises
    ------
    MissingDependencyError
        pyspark is not installed.
    InvalidParameterError, InputError, EmptyQueryError
        As :func:`ranklens.evaluate`; an error of Spark itself (a missing path...) as an
        ``InputError`` starting ``spark:`` with its first line.

    Examples
    --------
    Starting a JVM is not done in a doctest; ``tests/test_spark.py`` runs it::

        for run in ranklens.spark.evaluate_files("qrels.parquet", ["run.parquet"], ["ndcg@10"]):
            print(run.name, run.result["ndcg@10"])
    """
    if spark is None:
        spark = _session(master)
    try:
        out: list[SparkRun] = []
        jdf = read_table(spark, judgments)
        todo = [(judgments, None, jdf)] if not runs else [(run, jdf, read_table(spark, run)) for run in runs]
        for name, judged, rdf in todo:
            kw: dict[str, Any] = dict(options, convention=convention, partitions=partitions)
            if group_by or output:
                df = evaluate(judged, rdf, measures, per_query=per_query, group_by=list(group_by) or None, **kw)
                if output:
                    target = output if len(runs) <= 1 else os.path.join(output, os.path.basename(name))
                    with reraise():
                        df.write.mode("overwrite").parquet(target)
                    out.append(SparkRun(name, written=target))
                    continue
                with reraise():
                    table = df.toArrow() if hasattr(df, "toArrow") else None
                    if table is None:  # pragma: no cover - pyspark < 4
                        import pyarrow as pa

                        table = pa.Table.from_pylist([r.asDict() for r in df.collect()])
                out.append(SparkRun(name, table=table))
                continue
            res = evaluate(judged, rdf, measures, **kw)
            if per_query:
                res = with_per_query(res, evaluate(judged, rdf, measures, per_query=True, **kw))
            out.append(SparkRun(name, result=res))
        return out
    except RanklensError:
        raise
    except Exception as exc:  # Spark's own errors (a missing path...) as one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"spark: {first}") from None
