"""ranklens on Spark: the numbers of :func:`ranklens.evaluate`, computed on a cluster.

Spark brings the rows of each query together (a shuffle by the query key, plus
any ``group_by`` columns, sorted within partitions); the executors then hand
whole queries, many at a time, as Arrow batches to the same code the local
engine runs (the core's plan: ``make_plan``, ``build_problem``, ``run_plan``).
No measure arithmetic is written in Spark SQL: Spark only moves rows; what each
chunk of queries contributes (a :class:`ranklens.result.Partial`) is added up by
the core's one aggregation (:func:`ranklens.result.combine`,
:meth:`ranklens.Result.from_partial`).

What depends on more than one query is computed globally first, exactly as the
local engine does on the whole input: the largest label (ERR's default maximum
grade), and Evidently's "cutoff beyond the deepest rank" check. The query
universe of the convention (judged, ranked, both, intersection, same) is decided
per query, so it needs no global step.

The package: ``_session`` (the session, the pyspark check, executors' errors
brought back), ``_layout`` (columns and the long DataFrame of both sides),
``_worker`` (whole queries through the core in ``mapInArrow``), ``_driver``
(global steps, the partial results combined), ``_evaluate`` (:func:`evaluate`) and ``_files``
(:func:`evaluate_files`, what ``ranklens eval --engine spark`` runs).

Examples
--------
On Parquet files of a data lake (not run here: see the function's example for one that runs)::

    from pyspark.sql import SparkSession
    import ranklens.spark

    spark = SparkSession.builder.master("local[2]").getOrCreate()
    qrels = spark.read.parquet("qrels.parquet")
    runs = spark.read.parquet("runs.parquet")
    res = ranklens.spark.evaluate(qrels, runs, ["ndcg@10", "map"], convention="trec_eval")
    res["ndcg@10"]

>>> import ranklens.spark

Anything but a Spark DataFrame is refused (and without pyspark installed, the
error says ``pip install 'ranklens[spark]'``):

>>> ranklens.spark.evaluate(None)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ranklens.errors.InvalidParameterError: `judgments` must be a pyspark DataFrame; got NoneType.
"""

from __future__ import annotations

from ._evaluate import evaluate
from ._files import SparkRun, evaluate_files, read_table
from ._session import session

__all__ = ["SparkRun", "evaluate", "evaluate_files", "read_table", "session"]
