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

from ..errors import InputError, InvalidParameterError
from .alerts.judge import Alert, judge
from .alerts.lifecycle import advance, alert_list, recorded_alerts
from .alerts.notify import deliver_pending
from .config import Baseline, MonitorConfig, load_config
from .reports.reports import Reports
from .signals.compute import signals as compute_signals
from .signals.monitors import judge_signal_monitors, signal_specs
from .storage.db import Database, slice_columns
from .storage.ingest import IngestSummary
from .storage.ingest_call import ingest_call
from .storage.ingest_results import ingest_results
from .storage.maturity import Maturity
from .storage.read import sources
from .storage.values import refresh

__all__ = ["CheckResult", "IngestSummary", "Store"]


class CheckResult(list[Alert]):
    """The alerts of one :meth:`Store.check` run, in window order, each with its ``status`` (in ``extra``):
    ``"opened"``, ``"firing"`` (still open), ``"fired"`` (a window checked again whose alert was since
    resolved) or ``"resolved"``.

    Attributes
    ----------
    not_judged : dict
        Windows left out, counted by reason: ``provisional`` (labels not mature), ``too few groups``,
        ``no baseline``.
    maturity : Maturity
        The label maturity in force and the store's clock.
    notified : int
        Alert changes delivered to the webhook by this run.
    webhook_error : str or None
        One line when the webhook could not be reached (the changes stay pending for the next check).

    Examples
    --------
    >>> r = CheckResult([], not_judged={"provisional": 2})
    >>> len(r), r.not_judged, r.fired, r.webhook_error
    (0, {'provisional': 2}, [], None)
    """

    def __init__(self, alerts: Iterable[Alert] = (), *, not_judged: Mapping[str, int] | None = None,
                 maturity: Maturity | None = None, notified: int = 0, webhook_error: str | None = None) -> None:
        super().__init__(alerts)
        self.not_judged: dict[str, int] = dict(not_judged or {})
        self.maturity = maturity
        self.notified = notified
        self.webhook_error = webhook_error

    @property
    def fired(self) -> list[Alert]:
        """The alerts of windows that fired (every status but ``"resolved"``)."""
        return [a for a in self if a.extra.get("status") != "resolved"]


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

    def _db(self) -> Database:
        return Database(self.path, self.read_only, self.wait)

    def _reports(self) -> Reports:
        return Reports(self._db(), self.config)

    # -- ingest --------------------------------------------------------------------------------------------
    def ingest(self, source: Any, *, source_name: str | None = None, max_quarantine: float | None = None,
               engine: str = "local", master: str | None = None) -> IngestSummary:
        """Add events to the store: a file, a directory of files, a list of them, or a table.

        Files: Parquet, CSV, TSV, JSON Lines (``.parquet``, ``.csv``, ``.tsv``, ``.jsonl``/``.ndjson``/``.json``).
        Tables: pandas, polars or pyarrow. Each file (or table) is one batch and one transaction; a batch
        whose content was ingested before adds nothing. Rows that fail validation go to the quarantine
        table with their reason; rows of groups already in the store are skipped and counted.

        ``max_quarantine`` (a fraction in [0, 1]; default: ``[ingest] max_quarantine`` of the configuration,
        else no limit): a batch with more than that fraction of its rows quarantined is kept out whole
        (nothing of it stored, not recorded as ingested), with status ``refused`` in the summary
        (:attr:`IngestSummary.refused`); the other batches are ingested.

        ``engine="spark"`` runs the reduction of events to served lists (validation, quarantine, lists, items,
        label rows) in Spark's executors (``master``: default ``local[*]``; needs ``ranklens[spark]``); the
        store holds the same contents as after the local engine (:mod:`ranklens.monitor.storage.spark_ingest`).

        Returns
        -------
        IngestSummary
        """
        limit = self.config.max_quarantine if max_quarantine is None else max_quarantine
        return ingest_call(self._db(), sources(source, source_name), self.config, limit, engine, master)

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
        db = self._db()
        for name, kind, obj in sources(source, source_name):
            summary.batches.append(ingest_results(db, self.config.fingerprint(), name, kind, obj))
        return summary

    # -- reports ---------------------------------------------------------------------------------------------
    def report(
        self,
        metrics: Any = ("ndcg@10",),
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
    ) -> Any:
        """Each measure per time window and per series: the mean of the per-list values, or the measure's own
        aggregate (``gm_map``: geometric mean; ``gauc``: weighted by each list's items; counts such as
        ``num_rel_ret``: the window's total; see :mod:`ranklens.monitor.reports.aggregates`).

        Parameters
        ----------
        metrics : str or list of str, default=("ndcg@10",)
            Measure keys (``"ndcg@10"``, ``"map@10"``, ``"mrr@10"``, ``"P@5"``...); with ``k``, names
            without a cutoff are expanded (``metrics=["ndcg"], k=[1, 5, 10]``).
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
            ``window``, the ``by`` columns, ``metric``, ``value``, ``n_groups`` (groups counted),
            ``n_excluded`` (groups left out by the empty-list rule), ``ci_low``, ``ci_high``.
        """
        return self._reports().report(metrics, window, by, where, start, end, k=k, ci=ci, confidence=confidence,
                                      n_resamples=n_resamples, seed=seed)

    def baseline(self, metric: str = "ndcg@10", baseline: Any = None, where: Mapping[str, Any] | None = None,
                 *, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
        """Value of ``metric`` over the baseline groups (environment or date range), with a bootstrap interval."""
        return self._reports().baseline(metric, baseline, where, confidence=confidence, n_resamples=n_resamples,
                                        seed=seed)

    def groups(self, metric: str = "ndcg@10", start: Any = None, end: Any = None,
               where: Mapping[str, Any] | None = None, order: str = "worst", limit: int = 20) -> Any:
        """Served lists of a selection with their value: the worst (or best) first.

        Returns
        -------
        pyarrow.Table
            ``group_id``, ``model``, ``model_version``, ``environment``, ``timestamp``, the slice columns,
            ``value``, ``n_items``, ``n_relevant``.
        """
        return self._reports().groups(metric, start, end, where, order, limit)

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

    def compare(self, metric: str = "ndcg@10", a: Mapping[str, Any] | None = None, b: Mapping[str, Any] | None = None,
                *, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0,
                same_period: bool = True) -> dict[str, Any]:
        """Two selections of groups (model versions, windows...) side by side: means, intervals, Welch's test.

        ``a`` and ``b`` are ``{"where": {...}, "start": ..., "end": ...}``. The groups differ, so the test is
        unpaired (Welch's t) and the interval of the difference a bootstrap over each side's groups.

        When neither side gives a time range, both are taken over the same period (``same_period``): the days
        both were served (two model versions are then compared on the same days, not a new version's days
        against its predecessor's earlier ones); when they never overlap, each keeps its own and ``note``
        says so. Each side reports its ``start`` and ``end``.
        """
        return self._reports().compare(metric, a, b, confidence=confidence, n_resamples=n_resamples, seed=seed,
                                       same_period=same_period)

    def baselines(self, metric: str = "ndcg@10", by: Iterable[str] = ("model", "model_version", "environment"),
                  where: Mapping[str, Any] | None = None, start: Any = None, end: Any = None, baseline: Any = None,
                  *, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Any:
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
        return self._reports().baselines(metric, by, where, start, end, baseline, confidence=confidence,
                                         n_resamples=n_resamples, seed=seed)

    def window(self, start: Any = None, end: Any = None) -> tuple[Any, Any]:
        """The window ``[start, end)`` that :meth:`slices` and drill-downs use: as given, else the last day in
        the store."""
        return self._reports().window(start, end)

    def slices(self, metric: str = "ndcg@10", start: Any = None, end: Any = None, baseline: Any = None,
               columns: Iterable[str] | None = None, where: Mapping[str, Any] | None = None, *,
               by: Iterable[str] = ("model", "model_version", "environment"), depth: int = 2,
               min_support: int = 30, correction: str = "holm") -> Any:
        """Which slices (one column's values, or pairs of two columns' values) explain the change of ``metric``
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
        depth : {1, 2}
            1: one column at a time; 2: also every pair of columns.
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
        return self._reports().slices(metric, start, end, baseline, columns, where, by=by, depth=depth,
                                      min_support=min_support, correction=correction)

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

        By default each monitor judges its latest mature window (the last window whose labels are mature,
        see :meth:`maturity`); ``at`` picks the window holding that time, ``all_windows`` every window in
        ``[start, end)``. Provisional windows are never judged. An alert opens once per monitor and series,
        stays open while its windows fire and resolves at the first judged window that does not; the
        state is kept in the store (``record=False``: a dry run, nothing stored, nothing sent). The
        changes (opened, resolved) not delivered yet are POSTed to the webhook (``[alerts] webhook``, or
        ``webhook``), once, with retries; a failure is in ``webhook_error`` and they stay pending.

        Returns
        -------
        CheckResult
            The run's alerts with their status, the windows left out and why, the webhook's outcome.
        """
        record = record and not self.read_only
        db = self._db()
        if record:  # a writer migrates an older store before anything reads it
            db.prepare()
        # monitors on measures read reports; monitors on label-free signals read Store.signals
        on_measures, on_signals = signal_specs(self.config.monitors)
        reports = self._reports()
        maturity = reports.maturity()
        verdicts = (judge(reports, at=at, all_windows=all_windows, start=start, end=end, monitors=on_measures,
                          mature_until=maturity.mature_until) if on_measures or not on_signals else [])
        if on_signals:
            last = reports.last_time()
            if last is None:
                raise InputError("the store is empty: ingest events first.")
            with self._db().reading() as con:
                slices = list(slice_columns(con))
            # every verdict, "ok" ones too: a judged window that does not fire resolves an open alert
            verdicts += judge_signal_monitors(self.signals, on_signals, self.config.baseline, last, at,
                                              all_windows=all_windows, start=start, end=end, slices=slices)
        with (db.writing("alerts") if record else db.reading()) as con:
            events = advance(con, verdicts, record=record)
        out = CheckResult(events, maturity=maturity)
        for v in verdicts:
            if not v.judged:
                out.not_judged[v.status] = out.not_judged.get(v.status, 0) + 1
        if not record:
            return out
        url = webhook or self.config.webhook
        out.notified, out.webhook_error = deliver_pending(
            db, url if notify else None, self.config.webhook_format, retries=self.config.webhook_retries,
            backoff=self.config.webhook_backoff, sleep=sleep)
        return out

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
        """Alerts (one row per alert: state open or resolved, the windows that opened, last fired and resolved
        it, the values, reason and root cause of its last firing window), newest first; ``limit``/``offset``
        page through them."""
        if state is not None and state not in ("open", "resolved"):
            raise InvalidParameterError(f"`state` must be 'open' or 'resolved'; got {state!r}.")
        with self._db().reading() as con:
            return alert_list(con, start, end, state, limit=limit, offset=offset)
