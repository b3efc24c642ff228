"""The monitoring store's file: the DuckDB database, its schema, ingest, per-group values, label maturity.

``db`` and ``schema`` (the file: lock, migrations, transactions, the catalogue of slice and measure columns,
the SQL of a selection), ``read`` (ingest batches as Arrow tables, their hash), ``ingest`` (validation in
SQL, quarantine, loading), ``ingest_results`` (per-group values computed elsewhere), ``values`` (per-group
values computed from the store's own arrays, cached per group), ``maturity`` (when a window's labels are
complete), ``params`` (times, windows, measure keys). Internal: the public names are in
:mod:`ranklens.monitor`.
"""
