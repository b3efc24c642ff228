"""One ingest call (:meth:`ranklens.monitor.Store.ingest`): its checks, its one writer's connection, the engine
that reduces the batches (local DuckDB, or Spark: :mod:`ranklens.monitor.storage.spark_ingest`), then the label
maturity, the fitted propensities and the values, computed once for the call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import InputError, InvalidParameterError
from .ingest import IngestSummary, ingest_batches
from .maturity import remember_maturity
from .propensity_fit import remember_propensity
from .values import refresh_values

__all__ = ["ENGINES", "ingest_call"]

#: The engines of an ingest.
ENGINES = ("local", "spark")


def ingest_call(db: Any, batches: list[tuple[str, str, Any]], config: Any, limit: float | None, engine: str = "local",
                master: str | None = None, spark_conf: Mapping[str, str] | None = None) -> IngestSummary:
    """Ingest ``batches`` (:func:`ranklens.monitor.storage.read.sources`) into the store ``db`` (a
    :class:`~ranklens.monitor.storage.db.Database`) under ``config``; ``limit``: the ``max_quarantine``."""
    from ..._base.progress import Progress

    if engine not in ENGINES:
        raise InvalidParameterError(f"`engine` must be 'local' or 'spark'; got {engine!r}.")
    if master is not None and engine != "spark":
        raise InvalidParameterError("`master` goes with engine='spark'.")
    if spark_conf and engine != "spark":
        raise InvalidParameterError("`spark_conf` goes with engine='spark'.")
    for k, v in (spark_conf or {}).items():
        if not isinstance(k, str) or not k.strip() or not isinstance(v, str):
            raise InvalidParameterError(f"`spark_conf` maps Spark setting names to text values; got {k!r}: {v!r}.")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, float)) or not 0 <= limit <= 1):
        raise InvalidParameterError(f"`max_quarantine` must be a fraction between 0 and 1; got {limit!r}.")
    summary = IngestSummary()
    # one connection for the call: the store's pages stay in memory from one batch to the next
    with db.writing() as con, Progress(len(batches), "ingesting files") as progress:
        # committed batches go to DuckDB's log and the file is rewritten once, when the call ends (or by
        # the next open after a crash), rather than at every commit of a large batch
        con.execute("SET checkpoint_threshold = '16GB'")
        # nothing an ingest writes depends on the order of rows inside a statement (row numbers, list ids
        # and every read that needs an order say it): DuckDB may then write in parallel without ordering
        con.execute("SET preserve_insertion_order = false")
        features = config.signals.get("features")
        try:
            if engine == "spark":
                from .spark_ingest import ingest_batches_spark

                summary.batches.extend(ingest_batches_spark(con, batches, limit, progress.advance, features, master,
                                                            conf=spark_conf))
            else:
                summary.batches.extend(ingest_batches(con, batches, limit, progress.advance, features))
        except InputError as exc:  # a file that cannot be read: the batches stored before it are kept
            failed: InputError | None = exc
        else:
            failed = None
        remember_maturity(con)  # learned once per ingest call, for every read until the next batch
        remember_propensity(con, config)  # [propensity] source = "fitted": on the mature lists, before the values
        refresh_values(con, config)
    if failed is not None:
        raise failed
    return summary
