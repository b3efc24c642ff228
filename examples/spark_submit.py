"""Evaluate rankings on a Spark cluster with ranklens (run it with spark-submit).

    spark-submit --master local[2] examples/spark_submit.py --demo-data /tmp/ranklens-demo \\
        -m ndcg@10 -m map -m recall@100 -c trec_eval --group-by model --per-query-output /tmp/ranklens-demo/per_query

    spark-submit --master yarn --deploy-mode cluster examples/spark_submit.py \\
        --rankings s3a://lake/rankings/date=2026-11-21 --judgments s3a://lake/judgments \\
        -m ndcg@10 --group-by model_version --per-query-output s3a://lake/ranklens/2026-11-21

``--demo-data DIR`` writes the TREC DL 2019 judgments and two runs bundled in ``examples/data`` as
Parquet into DIR (one rankings table with a ``model`` column) and evaluates those.
"""

from __future__ import annotations

import argparse
import os
import warnings
from pathlib import Path

import ranklens
import ranklens.spark


def write_demo(directory: Path) -> tuple[str, str]:
    """TREC DL 2019 (BM25 and SPLADE runs) as Parquet: judgments, and rankings with a model column."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def fields(path: Path, *cols: int) -> list[list[str]]:  # the TREC files' whitespace-separated fields
        rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
        return [[r[c] for r in rows] for c in cols]

    data = Path(__file__).parent / "data"
    directory.mkdir(parents=True, exist_ok=True)
    q, d, rel = fields(data / "qrels.dl19-passage.txt", 0, 2, 3)
    pq.write_table(pa.table({"query": q, "item": d, "relevance": [float(x) for x in rel]}),
                   directory / "judgments.parquet")
    parts = []
    for model in ("bm25", "splade"):
        q, d, score = fields(data / f"run.{model}.dl19.txt", 0, 2, 4)
        parts.append(pa.table({"model": [model] * len(q), "query": q, "item": d, "score": [float(x) for x in score]}))
    pq.write_table(pa.concat_tables(parts), directory / "rankings.parquet")
    return str(directory / "rankings.parquet"), str(directory / "judgments.parquet")


def main() -> None:
    # pyspark 4 warns about pandas >= 3 though nothing here uses pandas
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rankings", help="Parquet table(s) of ranked items: query, item, score (or rank).")
    ap.add_argument("--judgments", help="Parquet table(s) of judgments: query, item, relevance (optional when the "
                                        "rankings carry a relevance column).")
    ap.add_argument("--demo-data", type=Path, help="Write and use the bundled TREC DL 2019 data as Parquet here.")
    ap.add_argument("-m", "--measure", action="append", dest="measures", help="Measure, repeatable (default ndcg@10).")
    ap.add_argument("-c", "--convention", default="ranklens")
    ap.add_argument("--group-by", action="append", default=[], help="Group column, repeatable (e.g. date, model).")
    ap.add_argument("--per-query-output", help="Also write per-query values (Parquet) here, e.g. for "
                                               "'ranklens monitor ingest-results'.")
    args = ap.parse_args()

    from pyspark.sql import SparkSession

    if args.demo_data:
        args.rankings, args.judgments = write_demo(args.demo_data)
    if not args.rankings:
        ap.error("give --rankings (and --judgments), or --demo-data DIR")
    spark = SparkSession.builder.appName("ranklens").getOrCreate()  # spark-submit's --master and --conf hold
    spark.sparkContext.setLogLevel("ERROR")
    rankings = spark.read.parquet(args.rankings)
    judgments = spark.read.parquet(args.judgments) if args.judgments else None
    measures = args.measures or ["ndcg@10"]
    print(f"spark {spark.version}, master {spark.sparkContext.master}, "
          f"{rankings.count()} ranked rows" + (f", {judgments.count()} judgments" if judgments is not None else ""))

    if args.group_by:
        per_group = ranklens.spark.evaluate(judgments, rankings, measures, convention=args.convention,
                                            group_by=args.group_by)
        per_group.orderBy(*args.group_by).show(truncate=False)
    else:
        print(ranklens.spark.evaluate(judgments, rankings, measures, convention=args.convention))
    if args.per_query_output:
        per_query = ranklens.spark.evaluate(judgments, rankings, measures, convention=args.convention,
                                            group_by=args.group_by or None, per_query=True)
        per_query.write.mode("overwrite").parquet(args.per_query_output)
        print(f"per-query values written to {args.per_query_output} "
              f"({len(os.listdir(args.per_query_output)) if os.path.isdir(args.per_query_output) else '?'} files)")
    spark.stop()


if __name__ == "__main__":
    main()
