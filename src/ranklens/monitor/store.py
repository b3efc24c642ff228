"""The monitoring store: ranking events in a DuckDB file, per-group values, reports, alerts, root cause.

:class:`Store` is the facade the command line and the dashboard use; the work is done by one folder per
responsibility, each module taking the store's file (``storage.db.Database``) and configuration:

* ``storage/``: opening the file (file lock with a wait, migrations), transactions, the catalogue of slice
  and measure columns, the SQL of a selection (``db``, ``schema``); reading batches (Parquet, CSV, TSV,
  JSON Lines, tables), validation in SQL with a quarantine, loading events (``read``, ``events``,
  ``ingest``); per-group results computed elsewhere (``ingest_results``); per-group values computed by the
  core from the store's own arrays, and their cache (``values``); label maturity (``maturity``);
* ``reports/``: aggregation per window and series, baselines, comparisons, slices, one list's table;
  means, intervals and Welch's test;
* ``signals/``: label-free signals and their monitors;
* ``alerts/``: monitors over reports, the record of fired alerts, the webhook.

Every method opens the DuckDB file for its own duration. Readers never wait for a writer: a writer (an
ingest, ``check`` recording its alerts) writes a copy of the file and swaps it in when it commits, so a
read sees the store before or after a commit, never in between (``storage/swap.py``). A second writer of
the same side waits up to ``wait`` seconds for the first, then gets :class:`~ranklens.errors.StoreBusyError`.
An ingest call is published whole when it ends (a crash leaves nothing of it) and each batch is identified
by a hash of its content (ingesting it again adds nothing).

The values of the tracked measures (``[evaluation] tracked``) are a per-group cache: a group is marked
stale when its events or late labels arrive, and :meth:`Store.refresh` (run at the end of every ingest
call) computes the stale groups once with the core's kernels. Reads compute stale groups from their
events, so results never depend on the cache. Reports over stored values aggregate a small per-group
table; other measures are computed on demand from the events, a bounded chunk of groups at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import InvalidParameterError
from .alerts.check import CheckResult, Window, run_check
from .alerts.lifecycle import alert_list, recorded_alerts
from .alerts.operations import acknowledge, snooze
from .config import Baseline, MonitorConfig, load_config, parse_duration
from .reports.quality import quality_report
from .reports.reports import Reports
from .signals.compute import signals as compute_signals
from .storage.db import Database
from .storage.ingest import IngestSummary
from .storage.ingest_call import ingest_call
from .storage.ingest_results import ingest_results
from .storage.maturity import Maturity
from .storage.params import parse_time, renamed
from .storage.read import sources
from .storage.values import refresh

__all__ = ["CheckResult", "IngestSummary", "Store"]


class Store:
    """A monitoring store in a DuckDB file.

    Parameters
    ----------
    path : str or Path, default="ranklens.duckdb"
        The DuckDB file (created by the first ingest).
    config : path, dict or MonitorConfig, optional
        Attribution, evaluation, baseline and monitors (see :func:`ranklens.monitor.load_config`);
        default: ``ranklens.toml`` in the current directory when present, else the defaults.
    read_only : bool, default=False
        Open the file read-only (the dashboard does); ingesting then raises.
    wait : float, default=30
        Seconds to wait for another process holding the store before :class:`StoreBusyError`.

    Examples
    --------
    >>> import tempfile, os, pyarrow as pa
    >>> from ranklens.monitor import Store
    >>> events = pa.table({
    ...     "timestamp": ["2026-10-01T10:00:00"] * 5, "model": ["m"] * 5, "model_version": ["v1"] * 5,
    ...     "environment": ["production"] * 5, "group_id": ["x"] * 5, "item_id": list("abcde"),
    ...     "rank": [1, 2, 3, 4, 5], "labels": [[], [], ["click"], ["click"], ["click", "buy"]]})
    >>> d = tempfile.mkdtemp()
    >>> st = Store(os.path.join(d, "ranklens.duckdb"))
    >>> print(st.ingest(events))  # doctest: +ELLIPSIS
    table: 5 rows -> 1 groups (5 ranked items), 0 label rows, 0 quarantined, 0 skipped
    >>> rep = st.report(["ndcg@5"], ci=None)
    >>> round(rep.column("value")[0].as_py(), 4)  # the seed's group x: 1.31752 / 2.13093
    0.6183
    """

    def __init__(
        self,
        path: str | Path = "ranklens.duckdb",
        config: Any = None,
        *,
        read_only: bool = False,
        wait: float = 30.0,
    ) -> None:
        self.path = Path(path)
        self.config: MonitorConfig = load_config(config)
        self.read_only = bool(read_only)
        if not isinstance(wait, (int, float)) or wait < 0:
            raise InvalidParameterError(f"`wait` must be a number of seconds >= 0; got {wait!r}.")
        self.wait = float(wait)

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r}, read_only={self.read_only})"

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def _db(self, create: bool = False) -> Database:
        return Database(self.path, self.read_only, self.wait, create=create)

    def _reports(self) -> Reports:
        return Reports(self._db(), self.config)

    # -- ingest --------------------------------------------------------------------------------------------
    def ingest(self, source: Any, *, source_name: str | None = None, max_quarantine: float | None = None,
               engine: str = "local", master: str | None = None, spark_conf: Mapping[str, str] | None = None
               ) -> IngestSummary:
        """Add events to the store: a file, a directory of files, a list of them, or a table.

        Files: Parquet, CSV, TSV, JSON Lines (``.parquet``, ``.csv``, ``.tsv``, ``.jsonl``/``.ndjson``/``.json``);
        tables: pandas, polars or pyarrow. Each is one batch and one transaction; a batch ingested before adds nothing.
        Rows that fail validation go to the quarantine with their reason; rows of stored groups are skipped, counted.

        ``max_quarantine`` (a fraction in [0, 1]; default: ``[ingest] max_quarantine``, else no limit): a batch with
        more than that fraction of its rows quarantined is kept out whole (nothing of it stored, not recorded as
        ingested), with status ``refused`` in the summary (:attr:`IngestSummary.refused`); the others are ingested.

        ``engine="spark"``: the reduction of events to lists in Spark's executors (``master``: default ``local[*]``;
        ``spark_conf``: settings of the session it starts, ``{"spark.driver.memory": "6g"}``), the same contents as
        the local engine's (:mod:`ranklens.monitor.storage.spark_ingest`; needs ``ranklens[spark]``).

        Returns
        -------
        IngestSummary
        """
        limit = self.config.max_quarantine if max_quarantine is None else max_quarantine
        return ingest_call(self._db(create=True), sources(source, source_name), self.config, limit, engine, master,
                           spark_conf)

    def refresh(self) -> int:
        """Compute and store the tracked values of the groups whose values are stale; returns their number.

        :meth:`ingest` calls it after its batches, so each group is computed once per ingest call however
        many of its batches brought labels. Until then (or after a crash in between) reads compute stale
        groups from their events, so results never depend on it. A configuration whose attribution or
        convention changed makes every stored value stale.
        """
        return refresh(self._db(), self.config)

    def ingest_results(self, source: Any, *, source_name: str | None = None) -> IngestSummary:
        """Add per-group values computed elsewhere (e.g. by :func:`ranklens.spark.evaluate` on a cluster).

        The table has ``timestamp``, ``model``, ``model_version``, ``environment``, ``group_id``, any
        slice columns, and one numeric column per measure named by its key (``ndcg@10``...; null or NaN:
        the group was left out by the empty-list rule). Reports then aggregate these values with the
        store's own. Groups already in the store are skipped; a batch ingested before adds nothing.
        """
        summary = IngestSummary()
        db = self._db(create=True)
        for name, kind, obj in sources(source, source_name):
            summary.batches.append(ingest_results(db, self.config.fingerprint(), name, kind, obj))
        return summary

    # -- reports ---------------------------------------------------------------------------------------------
    def report(
        self,
        measures: Any = None,
        window: str = "day",
        by: Iterable[str] = ("model", "model_version", "environment"),
        where: Mapping[str, Any] | None = None,
        start: Any = None,
        end: Any = None,
        *,
        k: Any = None,
        ci: str | None = "bootstrap",
        confidence: float = 0.95,
        n_resamples: int = 1000,
        seed: int = 0,
        metrics: Any = None,
    ) -> Any:
        """Each measure per time window and per series: the mean of the per-list values, or the measure's own
        aggregate (``gm_map``: geometric mean; ``gauc``: weighted by each list's items; counts such as
        ``num_rel_ret``: the window's total; see :mod:`ranklens.monitor.reports.aggregates`).

        Parameters
        ----------
        measures : str or list of str, default=("ndcg@10",)
            Measure keys (``"ndcg@10"``, ``"map@10"``, ``"mrr@10"``, ``"P@5"``...); with ``k``, names
            without a cutoff are expanded (``measures=["ndcg"], k=[1, 5, 10]``). ``metrics=`` is its
            deprecated name.
        window : {"hour", "day", "week"}, default="day"
        by : list of str, default=("model", "model_version", "environment")
            Series columns: any of model, model_version, environment, group_id and the slice columns.
        where : mapping, optional
            ``{column: value or [values]}`` filters.
        start, end : str or datetime, optional
            Time range ``[start, end)`` (UTC).
        ci : {"bootstrap", "t", None}, default="bootstrap"
            Confidence interval of each value: percentile bootstrap over groups, Student's t (on the
            logarithms for a geometric mean), or none.

        Returns
        -------
        pyarrow.Table
            ``window``, the ``by`` columns, ``measure``, ``value``, ``n_groups`` (groups counted),
            ``n_excluded`` (groups left out by the empty-list rule), ``ci_low``, ``ci_high``.
        """
        measures = renamed(measures, metrics, "measures", "metrics", ("ndcg@10",))
        return self._reports().report(measures, window, by, where, start, end, k=k, ci=ci, confidence=confidence,
                                      n_resamples=n_resamples, seed=seed)

    def baseline(self, measure: str | None = None, baseline: Any = None, where: Mapping[str, Any] | None = None,
                 *, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0,
                 metric: str | None = None) -> dict[str, Any]:
        """Value of ``measure`` over the baseline groups (environment or date range), with a bootstrap interval
        (``metric=``: its deprecated name)."""
        measure = renamed(measure, metric, "measure", "metric", "ndcg@10")
        return self._reports().baseline(measure, baseline, where, confidence=confidence, n_resamples=n_resamples,
                                        seed=seed)

    def groups(self, measure: str | None = None, start: Any = None, end: Any = None,
               where: Mapping[str, Any] | None = None, order: str = "worst", limit: int = 20, *,
               metric: str | None = None) -> Any:
        """Served lists of a selection with their value of ``measure`` (``metric=``: its deprecated name): the
        worst (or best) first.

        Returns
        -------
        pyarrow.Table
            ``group_id``, ``model``, ``model_version``, ``environment``, ``timestamp``, the slice columns,
            ``measure``, ``value``, ``n_items``, ``n_relevant``, ``provisional`` (served after the labels'
            maturity: its labels may still arrive).
        """
        measure = renamed(measure, metric, "measure", "metric", "ndcg@10")
        return self._reports().groups(measure, start, end, where, order, limit)

    def explain(self, group_id: Any, model: str | None = None, model_version: str | None = None,
                environment: str | None = None, k: int | None = 10, measure: str = "ndcg") -> Any:
        """One served list position by position, over the whole list: the core's :func:`ranklens.explain`
        table with the store's attributed gains, and each item's served rank, real score, labels and
        explicit relevance. ``dcg``, ``idcg`` and ``value`` are at cutoff ``k`` (at most 1000); the rows
        after it are marked ``beyond_cutoff``.

        Returns
        -------
        GroupExplanation
            ``rows``, ``ideal_rows``, ``dcg``, ``idcg``, ``value``; ``to_dict()`` and ``table()``.
        """
        return self._reports().explain(group_id, model, model_version, environment, k, measure)

    def compare(self, measure: str | None = None, a: Mapping[str, Any] | None = None,
                b: Mapping[str, Any] | None = None, *, confidence: float = 0.95, n_resamples: int = 1000,
                seed: int = 0, same_period: bool = True, metric: str | None = None) -> dict[str, Any]:
        """Two selections of groups (model versions, windows...) side by side: means, intervals, Welch's test.

        ``a`` and ``b`` are ``{"where": {...}, "start": ..., "end": ...}``. The groups differ, so the test is
        unpaired (Welch's t) and the interval of the difference a bootstrap over each side's groups.

        When neither side gives a time range, both are taken over the same period (``same_period``): the days
        both were served (two model versions are then compared on the same days, not a new version's days
        against its predecessor's earlier ones); when they never overlap, each keeps its own and ``note``
        says so. Each side reports its ``start`` and ``end``.
        """
        measure = renamed(measure, metric, "measure", "metric", "ndcg@10")
        return self._reports().compare(measure, a, b, confidence=confidence, n_resamples=n_resamples, seed=seed,
                                       same_period=same_period)

    def baselines(self, measure: str | None = None, by: Iterable[str] = ("model", "model_version", "environment"),
                  where: Mapping[str, Any] | None = None, start: Any = None, end: Any = None, baseline: Any = None,
                  *, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0,
                  metric: str | None = None) -> Any:
        """The baseline of each series served in ``[start, end)``, by the rule the monitors use.

        With the default ``environment`` baseline, the series (model, version, production) is compared with
        the same model and version in training, or, when that version has no training lists, with the
        model's training lists over all versions (the ``baseline`` column says which). A ``range`` baseline
        is the same series over the fixed range; a ``previous`` baseline depends on each window (the
        values are then NaN: see :meth:`slices` or ``monitor check``).

        Returns
        -------
        pyarrow.Table
            The ``by`` columns, ``value``, ``ci_low``, ``ci_high`` (bootstrap), ``n_groups``, ``baseline`` (the
            selection in words), ``own`` (the series is its own baseline, e.g. a training series).
        """
        measure = renamed(measure, metric, "measure", "metric", "ndcg@10")
        return self._reports().baselines(measure, by, where, start, end, baseline, confidence=confidence,
                                         n_resamples=n_resamples, seed=seed)

    def window(self, start: Any = None, end: Any = None) -> tuple[Any, Any]:
        """The window ``[start, end)`` that :meth:`slices` and drill-downs use: as given, else the last day in
        the store."""
        return self._reports().window(start, end)

    def slices(self, measure: str | None = None, start: Any = None, end: Any = None, baseline: Any = None,
               columns: Iterable[str] | None = None, where: Mapping[str, Any] | None = None, *,
               by: Iterable[str] = ("model", "model_version", "environment"), depth: int = 2,
               min_support: int = 30, correction: str = "holm", metric: str | None = None) -> Any:
        """Which slices (one column's values, or pairs of two columns' values) explain the change of ``measure``
        (``metric=``: its deprecated name)
        between each series' baseline and a window.

        Each series (``by``: model, version, environment) is compared with its own baseline, chosen by the
        rule of the monitors (:meth:`baselines`). For a cell c (a value, or a pair of values) with shares
        s_b, s_w of the counted groups and means m_b, m_w in the baseline and the window, and M_b the
        baseline's mean: ``rate_effect = s_w * (m_w - m_b)``, ``mix_effect = (s_w - s_b) * (m_b - M_b)``,
        ``contribution = rate_effect + mix_effect``. Over the cells of one column (or pair) of one series the
        contributions add up to the series' change exactly (on the measure's scale: the logarithm for a
        geometric mean, totals for a count; ``contribution_scale`` in the summary). Cells with fewer than
        ``min_support`` counted groups on either side are pooled into one ``(other)`` row. Each listed cell
        has Welch's p-value and its value adjusted over every listed cell (``correction``: ``"holm"``,
        ``"bh"`` or ``"none"``).

        Parameters
        ----------
        start, end : str or datetime, optional
            The window (default: the last day in the store).
        baseline : str or Baseline, optional
            Default: the configured one.
        columns : list of str, optional
            Slice columns (default: all).
        where : mapping, optional
            Filters.
        by : list of str
            Series columns.
        depth : {1, 2, 3}
            1: one column at a time; 2: also every pair of columns; 3: also every triple.
        min_support : int
            Counted groups a cell needs in the window and in the baseline to be listed alone.
        correction : {"holm", "bh", "none"}

        Returns
        -------
        pyarrow.Table
            The ``by`` columns, ``column``, ``value``, ``column2``, ``value2`` (null for one column),
            ``n_cells``, ``n_baseline``, ``n_window``, ``baseline_value``, ``window_value``, ``change``,
            ``share_baseline``, ``share_window``, ``rate_effect``, ``mix_effect``, ``contribution``,
            ``p_value``, ``p_adjusted``; most harmful first, pooled rows last. The schema metadata
            ``ranklens`` holds the summary (JSON): window, baseline of each series, changes.
        """
        measure = renamed(measure, metric, "measure", "metric", "ndcg@10")
        return self._reports().slices(measure, start, end, baseline, columns, where, by=by, depth=depth,
                                      min_support=min_support, correction=correction)

    def auto_slices(self, measure: str = "ndcg@10", start: Any = None, end: Any = None, baseline: Any = None,
                    columns: Iterable[str] | None = None, where: Mapping[str, Any] | None = None, *,
                    by: Iterable[str] = ("model", "model_version", "environment"), max_columns: int = 2,
                    min_support: int = 30, correction: str = "holm", threshold: float | None = None,
                    relative_drop: float | None = 0.1, absolute_drop: float | None = None,
                    significance: float | None = 0.05) -> Any:
        """The automatic slice search of ``slices = "auto"`` monitors (docs/monitoring.md, Slice Finder style):
        every value of the slice ``columns`` and their combinations of up to ``max_columns``, with
        ``min_support`` lists in the window and in its baseline, each against its own baseline; the slices whose
        value crosses the rule (``threshold``, ``relative_drop``, ``absolute_drop``: the strictest decides) with
        a one-sided Welch p-value of the drop under ``significance`` once adjusted (``correction``) over every
        slice tested, most harmful first.

        Returns
        -------
        pyarrow.Table
            The rows of :meth:`slices` that fire, with ``relative_change``, ``p_drop``, ``p_drop_adjusted``,
            ``limit``; the summary in the schema metadata (``n_tested``: the slices tested).
        """
        return self._reports().auto_slices(measure, start, end, baseline, columns, where, by=by,
                                           max_columns=max_columns, min_support=min_support, correction=correction,
                                           threshold=threshold, relative_drop=relative_drop,
                                           absolute_drop=absolute_drop, significance=significance)

    def quality(self, metric: str = "volume", window: str = "day", by: Iterable[str] = (),
                where: Mapping[str, Any] | None = None, start: Any = None, end: Any = None) -> Any:
        """A data-quality metric per window and series: ``volume`` (lists served), ``label_arrival`` (share of
        lists with an outcome), ``partial_lists`` (share that lost rows to the quarantine) or ``quarantine_rate``
        (share of the rows quarantined; the store's, no ``by``/``where``).

        Returns
        -------
        pyarrow.Table
            ``window``, the ``by`` columns, ``metric``, ``value``, ``count``, ``n``.
        """
        with self._db().reading() as con:
            return quality_report(con, metric, window, list(by), where, start, end)

    def signals(self, signals: Any = None, window: str = "day",
                by: Iterable[str] = ("model", "model_version", "environment"), where: Mapping[str, Any] | None = None,
                start: Any = None, end: Any = None, baseline: Any = None, *, items: Any = None,
                attribute: str | None = None, catalogue_size: int | None = None) -> Any:
        """Label-free signals per window and series against the baseline (no outcome needed).

        Parameters
        ----------
        signals : str or list of str, optional
            ``psi(score)``, ``ks(score)``, ``psi(position)``, ``psi(popularity@K)``, ``coverage[@K]``,
            ``gini[@K]``, ``novelty[@K]``, ``ild[@K]``, and for the feature columns of the events
            ``psi(feature:NAME)``, ``js(feature:NAME)``, ``ks(feature:NAME)`` (numeric) (default: all of
            them; ``ild`` when item attributes are given). Definitions: ``docs/monitoring.md``, "Signals
            without labels" and "Feature drift".
        window, by, where, start, end
            As in :meth:`report`.
        baseline : str or Baseline, optional
            As in :meth:`slices` (default: the configuration's).
        items, attribute : optional
            Item attributes for ``ild``: a file or table with ``item_id`` and the ``attribute`` column
            (default: ``[signals] items`` and ``attribute`` of the configuration).
        catalogue_size : int, optional
            Size of the catalogue for ``coverage`` (default: the items the baseline served).

        Returns
        -------
        pyarrow.Table
            ``window``, the ``by`` columns, ``signal``, ``value``, ``baseline``, ``p_value``, ``n_groups``,
            ``n``, ``n_baseline``, ``n_excluded``.
        """
        conf = self.config.signals
        spec = Baseline.parse(baseline) if baseline is not None else self.config.baseline
        with self._db().reading() as con:
            return compute_signals(con, signals, window, by, where, start, end, spec,
                            items=items if items is not None else conf.get("items"),
                            attribute=attribute or conf.get("attribute"),
                            catalogue_size=catalogue_size if catalogue_size is not None else conf.get("catalogue_size"))

    def info(self) -> dict[str, Any]:
        """What the store holds: counts, time range, models, slice columns, tracked measures."""
        return self._reports().info()

    def quarantine(self, limit: int = 100) -> Any:
        """Rows that failed validation: batch, source, row number, reason and the row as it came."""
        return self._reports().quarantine(limit)

    # -- monitors ---------------------------------------------------------------------------------------------
    def check(self, at: Any = None, *, all_windows: bool = False, start: Any = None, end: Any = None,
              notify: bool = True, record: bool = True, webhook: str | None = None,
              sleep: Any = None) -> CheckResult:
        """Judge the configured monitors' windows, move the alerts' states forward and notify the changes.

        Each monitor is judged by its kind's rule (measures, label-free signals, data quality:
        :mod:`ranklens.monitor.kinds`). By default a measure's monitor judges its latest mature window (see
        :meth:`maturity`); ``at`` picks the window holding that time, ``all_windows`` every window in
        ``[start, end)``. Provisional windows are never judged. An alert opens once per monitor and series,
        stays open while its windows fire and resolves at the first judged window that does not; the state is
        kept in the store (``record=False``: a dry run, nothing stored, nothing sent). The changes (opened,
        resolved) not delivered yet are POSTed to every webhook route that takes them (``[alerts] webhook``
        and ``routes``; ``webhook`` replaces the first), once, with retries; failures are in
        ``delivery_errors`` (and recorded) and the changes stay pending.

        Returns
        -------
        CheckResult
            The run's alerts with their status, the windows left out and why, the webhooks' outcome.
        """
        record = record and not self.read_only
        db = self._db()
        if record:  # a writer migrates an older store before anything reads it
            db.prepare()
        reports = self._reports()
        w = Window(reports, self.signals, db, self.config.baseline, at, all_windows, start, end, reports.maturity())
        routes = self.config.all_routes(webhook) if notify else ()
        return run_check(w, self.config.monitors, record=record, routes=routes,
                         retries=self.config.webhook_retries, backoff=self.config.webhook_backoff, sleep=sleep)

    def acknowledge(self, alert_id: int, by: str | None = None, note: str | None = None) -> dict[str, Any]:
        """Record that someone is on the open alert ``alert_id`` (who, a note); it stays open and resolves as
        any other (see :mod:`ranklens.monitor.alerts.operations`)."""
        with self._db().writing("alerts") as con:
            return acknowledge(con, alert_id, by, note)

    def snooze(self, alert_id: int, duration: Any = None, *, until: Any = None, by: str | None = None,
               note: str | None = None) -> dict[str, Any]:
        """Hold the webhook changes of alert ``alert_id``'s monitor and series for ``duration`` (``"24h"``,
        ``"2d"``...) or ``until`` a time (UTC, wall clock; now or earlier lifts the snooze). Checks go on
        judging and recording them, and exit 1 when they fire."""
        dur = parse_duration(duration, "the snooze's duration") if duration is not None else None
        t = parse_time(until, "until") if until is not None else None
        with self._db().writing("alerts") as con:
            return snooze(con, alert_id, duration=dur, until=t, by=by, note=note)

    def maturity(self) -> Maturity:
        """The label maturity in force (``[labels] maturity``, or learned from the store's label rows) and the
        store's clock: windows ending after ``clock - delay`` are provisional (see docs/monitoring.md)."""
        return self._reports().maturity()

    def alerts(self, start: Any = None, end: Any = None) -> Any:
        """The windows that fired (recorded by :meth:`check`), newest window first (``[start, end)`` on the
        window start), each with its alert's id and state."""
        with self._db().reading() as con:
            return recorded_alerts(con, start, end)

    def alert_list(self, start: Any = None, end: Any = None, state: str | None = None, *, limit: int | None = None,
                   offset: int = 0) -> Any:
        """Alerts (one row per alert: state open or resolved, severity, the windows that opened, last fired and
        resolved it, the values, reason and root cause of its last firing window: ``top_slices`` a list of
        slices, ``root_cause`` the first in words; its acknowledgement, snooze and last failed delivery), newest
        first; ``limit``/``offset`` page through them."""
        if state is not None and state not in ("open", "resolved"):
            raise InvalidParameterError(f"`state` must be 'open' or 'resolved'; got {state!r}.")
        with self._db().reading() as con:
            return alert_list(con, start, end, state, limit=limit, offset=offset)
