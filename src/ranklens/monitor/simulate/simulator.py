"""A realistic stream of ranking events for ``ranklens monitor``: several models, slices, late labels, a decay.

:func:`simulate` writes (or returns) events in the schema of ``docs/monitoring.md``: one *ranking row* per
item of a served list, and one *label row* per outcome (click, favorite, buy) that arrives later. Its
planted decay is the example of the seed (Arize, "Demystifying NDCG"): from some day, in one slice, the
first and last recommendation of every list are swapped, and NDCG falls sharply there and only there.

Everything is drawn with numpy in bulk (no Python loop over groups or rows), so ten million events take
seconds; a seed gives the same events, byte for byte, on every run. ``docs/simulator.md`` explains the
distributions.
"""

from __future__ import annotations

import datetime as _dt
import pathlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .checks import (
    MAX_DAYS,
    MAX_GROUPS,
    check_date,
    check_fraction,
    check_int,
    check_items,
    check_slice,
    fail,
)
from .columns import arrow_codes, arrow_ids, arrow_labels, arrow_numbers, iso_text, write_table
from .model import (
    BADENV,
    CATALOGUE,
    DAY_MS,
    ENVIRONMENTS,
    LABELS,
    PROD,
    SLICES,
    TRAIN,
    VALID,
    Items,
    Labels,
    Lists,
    Settings,
    draw_items,
    draw_label_rows,
    draw_lists,
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["COLUMNS", "FORMATS", "LABELS", "SLICES", "simulate", "simulate_counted"]

#: The largest share of bad rows ``malformed`` asks for (99 bad rows per good one).
MAX_MALFORMED = 0.99

#: Columns of the events, in order: the event schema of ``docs/monitoring.md``, then the slices.
COLUMNS: tuple[str, ...] = (
    "timestamp", "model", "model_version", "environment", "group_id", "item_id", "rank", "score",
    "relevance", "labels", "country", "device", "query_type",
)

_BAD_TIMES = ("2026-13-45T25:61:00Z", "not a time", "yesterday")
_DECAYS = ("swap_first_last", "broken_scores")
#: File formats :func:`simulate` writes, by name: the file extension.
FORMATS = {"parquet": "parquet", "csv": "csv", "jsonl": "jsonl"}


# ------------------------------------------------------------------------------------------------ simulate


def simulate(
    out: str | pathlib.Path | None = None,
    *,
    start: str | _dt.date = "2026-10-01",
    days: int = 30,
    groups_per_day: int = 2000,
    items: tuple[int, int] = (5, 20),
    seed: int = 0,
    decay_start: str | _dt.date | None = None,
    decay_slice: Mapping[str, str] | None = {"country": "BR"},
    decay: str | None = "swap_first_last",
    late_fraction: float = 0.5,
    max_delay_hours: float = 48.0,
    training_groups: int | None = None,
    validation_groups: int = 0,
    v2_start: str | _dt.date | None = None,
    v2_share: float = 0.5,
    second_model: bool = False,
    malformed: float = 0.0,
    format: str = "parquet",
) -> pa.Table | list[pathlib.Path]:
    """Simulate the ranking events of a search ranker in production, with a planted decay.

    Model ``"ranker"`` serves every production list (version ``"v1"``, and from ``v2_start`` version ``"v2"``
    on a share ``v2_share``: an A/B test), optionally beside a model ``"related"``; each version also has
    training lists, whose outcomes are in-line ``labels``. Items have a latent grade 0..3, scores are the
    grade plus noise, outcomes (click, favorite, buy) follow the grade without position bias, and arrive as
    later *label rows*, some on a later day. From ``decay_start``, in the slice ``decay_slice``, the first and
    last items of every list exchange places (the seed's example), all else equal. ``docs/simulator.md``
    gives every distribution.

    Parameters
    ----------
    out : str or path, optional
        A directory (created if needed) to write one file per UTC day, ``events-YYYY-MM-DD.<ext>``,
        holding the production rows stamped that day (so late labels land in later files, up to
        ``ceil(max_delay_hours / 24)`` days after the period), plus ``training.<ext>`` (and
        ``validation.<ext>`` when ``validation_groups > 0``). ``None`` returns one table instead.
    start : str or date, default="2026-10-01"
        First production day (UTC).
    days : int, default=30
        Number of production days.
    groups_per_day : int, default=2000
        Production lists served per day, all models together.
    items : (int, int), default=(5, 20)
        Smallest and largest list length (inclusive); lengths are uniform in between.
    seed : int, default=0
        Seed of the random generator: a seed and the other arguments fix every event.
    decay_start : str or date, optional
        First day of the decay; default: two thirds into the period (day 20 of 30).
    decay_slice : mapping, default={"country": "BR"}
        Slice values a list must have to decay (``SLICES`` lists the columns and values); ``None`` or
        ``{}`` decays every production list.
    decay : {"swap_first_last", "broken_scores", None}, default="swap_first_last"
        ``"broken_scores"``: served in the order of a broken model's scores, which ignore the grades
        (:mod:`ranklens.monitor.simulate.broken`; label-free signals see it at once). ``None``: no decay.
    late_fraction : float, default=0.5
        Share of the label rows stamped on a later day than their list.
    max_delay_hours : float, default=48
        Largest delay of a label row after its list (at least 24, so that any outcome can be late).
    training_groups : int, optional
        Training lists per model version (default: ``groups_per_day``).
    validation_groups : int, default=0
        Lists per model version in the ``validation`` environment, served the day before ``start``,
        graded by editors: an explicit ``relevance`` (the grade, 0..3) and no labels.
    v2_start : str or date, optional
        Day ``"v2"`` of the ranker ships (default: a third into the period, day 10 of 30).
    v2_share : float, default=0.5
        Share of the ranker's production lists that v2 serves from ``v2_start``.
    second_model : bool, default=False
        Also simulate a model ``"related"``.
    malformed : float, default=0.0
        Share in [0, 0.99] of the rows written that are bad, for the quarantine (kinds in ``docs/simulator.md``);
        with ``malformed > 0`` the ``timestamp`` column holds ISO-8601 strings.
    format : {"parquet", "csv", "jsonl"}, default="parquet"
        File format with ``out``. CSV and JSON Lines write timestamps as ISO-8601 strings; CSV writes
        ``labels`` as one string with labels separated by ``|``.

    Returns
    -------
    pyarrow.Table or list of pathlib.Path
        Without ``out``: every event in time order, columns ``COLUMNS``. With ``out``: the paths written, in
        time order (training, validation, then the days).

    Raises
    ------
    InvalidParameterError
        An argument is out of range; the message names it.

    See Also
    --------
    ranklens.monitor.Store.ingest : reads these files.

    Examples
    --------
    >>> from ranklens.monitor.simulate import simulate
    >>> t = simulate(days=3, groups_per_day=50, items=(5, 8), seed=1)
    >>> t.column_names[:10]  # doctest: +NORMALIZE_WHITESPACE
    ['timestamp', 'model', 'model_version', 'environment', 'group_id', 'item_id', 'rank', 'score',
     'relevance', 'labels']
    >>> sorted(set(t.column("environment").drop_null().to_pylist()))
    ['production', 'training']
    >>> t.num_rows == simulate(days=3, groups_per_day=50, items=(5, 8), seed=1).num_rows
    True

    Written to a directory, one file per day:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     [p.name for p in simulate(d, days=2, groups_per_day=20, seed=1)]  # late labels land up to 2 days later
    ... # doctest: +NORMALIZE_WHITESPACE
    ['training.parquet', 'events-2026-10-01.parquet', 'events-2026-10-02.parquet',
     'events-2026-10-03.parquet', 'events-2026-10-04.parquet']
    """
    return simulate_counted(
        out, start=start, days=days, groups_per_day=groups_per_day, items=items, seed=seed,
        decay_start=decay_start, decay_slice=decay_slice, decay=decay, late_fraction=late_fraction,
        max_delay_hours=max_delay_hours, training_groups=training_groups, validation_groups=validation_groups,
        v2_start=v2_start, v2_share=v2_share, second_model=second_model, malformed=malformed, format=format,
    )[0]


def simulate_counted(out: Any, *, start: Any, days: Any, groups_per_day: Any, items: Any, seed: Any,
                     decay_start: Any, decay_slice: Any, decay: Any, late_fraction: Any, max_delay_hours: Any,
                     training_groups: Any, validation_groups: Any, v2_start: Any, v2_share: Any, second_model: bool,
                     malformed: Any, format: Any) -> tuple[Any, int, int]:
    """:func:`simulate`, also returning the numbers of lists (groups) and of rows.

    The steps draw from one generator in a fixed order (lists, items, outcomes, label rows, bad rows): a seed
    gives the same events whatever the output.
    """
    a = _check_args(start=start, days=days, groups_per_day=groups_per_day, items=items, seed=seed,
                    decay_start=decay_start, decay_slice=decay_slice, decay=decay, late_fraction=late_fraction,
                    max_delay_hours=max_delay_hours, training_groups=training_groups,
                    validation_groups=validation_groups, v2_start=v2_start, v2_share=v2_share,
                    second_model=second_model, malformed=malformed, format=format)
    rng = np.random.default_rng(a.seed)
    g = draw_lists(rng, a)
    r = draw_items(rng, a, g)
    lab = draw_label_rows(rng, a, g, r)
    if a.decay == "swap_first_last":  # the first and last items of the lists hit exchange places
        first, last = r.starts[r.hit], r.ends[r.hit] - 1
        for arr in (r.item, r.grade, r.bits):
            arr[first], arr[last] = arr[last], arr[first].copy()
    rows = _row_set(rng, a, g, r, lab)
    table = _arrow_table(g, rows)
    n_groups, n_all = int(g.env.shape[0]), int(rows.ts.shape[0])
    if out is None:
        return table, n_groups, n_all
    return _write_files(table, rows.file_of, pathlib.Path(out), a), n_groups, n_all


def _check_args(*, start: Any, days: Any, groups_per_day: Any, items: Any, seed: Any, decay_start: Any,
                decay_slice: Any, decay: Any, late_fraction: Any, max_delay_hours: Any, training_groups: Any,
                validation_groups: Any, v2_start: Any, v2_share: Any, second_model: bool, malformed: Any,
                format: Any) -> Settings:
    start_day = check_date("start", start)
    days = check_int("days", days, 1, MAX_DAYS)
    groups_per_day = check_int("groups_per_day", groups_per_day, 1, MAX_GROUPS)
    lo, hi = check_items(items)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise fail("seed", f"must be an integer >= 0; got {seed!r}.")
    if decay is not None and decay not in _DECAYS:
        raise fail("decay", f"must be one of {', '.join(_DECAYS)} or None; got {decay!r}.")
    decay_day = (check_date("decay_start", decay_start) if decay_start is not None
                 else start_day + _dt.timedelta(days=round(days * 2 / 3)))
    spec = check_slice(decay_slice, SLICES)
    late_fraction = check_fraction("late_fraction", late_fraction, high_open=False)
    ok = isinstance(max_delay_hours, (int, float, np.floating)) and not isinstance(max_delay_hours, bool)
    if not ok or not 24 <= float(max_delay_hours) <= 24 * 365:
        raise fail("max_delay_hours", f"must be a number of hours in [24, 8760]; got {max_delay_hours!r}.")
    n_train = (groups_per_day if training_groups is None
               else check_int("training_groups", training_groups, 0, MAX_GROUPS))
    n_valid = check_int("validation_groups", validation_groups, 0, MAX_GROUPS)
    v2_day = (check_date("v2_start", v2_start) if v2_start is not None
              else start_day + _dt.timedelta(days=days // 3))
    v2_share = check_fraction("v2_share", v2_share, high_open=False)
    malformed = check_fraction("malformed", malformed, high_open=True)
    if malformed > MAX_MALFORMED:  # m / (1 - m) bad rows per good one: 0.999999999 asked for a billion per good row
        raise fail("malformed", f"must be at most {MAX_MALFORMED} (99 bad rows per good one); got {malformed!r}.")
    if format not in FORMATS:
        raise fail("format", f"must be one of {', '.join(FORMATS)}; got {format!r}.")
    return Settings(start_day, days, groups_per_day, lo, hi, int(seed), decay, decay_day, spec, late_fraction,
                 float(max_delay_hours), n_train, n_valid, v2_day, v2_share, bool(second_model), malformed, format)


@dataclass
class _Rows:
    """Every row written (ranking rows, label rows, bad rows) as columns, in time order, and its file."""

    ts: np.ndarray
    env: np.ndarray
    grp: np.ndarray
    item: np.ndarray
    item_ok: np.ndarray
    rank: np.ndarray
    score: np.ndarray
    relevance: np.ndarray
    rel_ok: np.ndarray
    label_bits: np.ndarray
    label_ok: np.ndarray
    time_bad: np.ndarray
    is_rank: np.ndarray
    file_of: np.ndarray  # -2 training, -1 validation, else the day
    bad_time: np.ndarray  # per bad row, its unparsable timestamp (an index in _BAD_TIMES)


def _row_set(rng: np.random.Generator, a: Settings, g: Lists, r: Items, lab: Labels) -> _Rows:
    """Ranking rows, label rows and (with ``malformed``) bad rows as one set, in time order."""
    n_rows, n_lab = r.n_rows, int(lab.src.shape[0])
    row_env = g.env[r.row_g]
    n_bad = round(a.malformed / (1.0 - a.malformed) * (n_rows + n_lab)) if a.malformed else 0
    prod_all = np.flatnonzero(row_env == PROD)
    if n_bad and prod_all.shape[0] == 0:
        raise fail("malformed", "needs production rows to copy.")
    bad_src = prod_all[rng.integers(0, prod_all.shape[0], n_bad)] if n_bad else np.zeros(0, np.int64)
    bad_kind = rng.integers(0, 6, n_bad).astype(np.int8)
    bad_time = rng.integers(0, len(_BAD_TIMES), n_bad)

    n_all = n_rows + n_lab + n_bad
    src = np.concatenate([np.arange(n_rows), lab.src, bad_src])  # the ranking row each row comes from
    grp = r.row_g[src]
    is_rank = np.ones(n_all, dtype=bool)
    is_rank[n_rows:n_rows + n_lab] = False
    env = g.env[grp].copy()
    item_out = r.item[src]
    item_out[n_rows:n_rows + n_lab] = lab.item
    label_bits = r.bits[src].copy()
    label_ok = env == TRAIN
    label_bits[n_rows:n_rows + n_lab] = (1 << lab.kind).astype(np.int8)
    label_ok[n_rows:n_rows + n_lab] = True
    rows = _Rows(ts=np.concatenate([g.ts[r.row_g], lab.ts, g.ts[grp[n_rows + n_lab:]]]), env=env, grp=grp,
                 item=item_out, item_ok=np.ones(n_all, dtype=bool), rank=r.rank[src].copy(),
                 score=r.score[src].copy(), relevance=np.where(env == VALID, r.grade[src], 0).astype(np.float64),
                 rel_ok=env == VALID, label_bits=label_bits, label_ok=label_ok,
                 time_bad=np.zeros(n_all, dtype=bool), is_rank=is_rank, file_of=np.zeros(0, np.int64),
                 bad_time=bad_time)
    if n_bad:
        _spoil(rng, rows, np.arange(n_rows + n_lab, n_all), bad_kind, g.length[grp[n_rows + n_lab:]], r)
    return _time_order(rows, a.start_ms)


def _spoil(rng: np.random.Generator, rows: _Rows, b: np.ndarray, k: np.ndarray, length: np.ndarray,
           r: Items) -> None:
    """Make the copied rows ``b`` bad, each in its way ``k`` (in equal numbers), in place."""
    n_bad = int(b.shape[0])
    rows.label_ok[b] = False
    fresh = CATALOGUE + np.arange(n_bad)  # item ids no list holds
    rows.item_ok[b[k == 0]] = False                                        # missing item_id
    rows.time_bad[b[k == 1]] = True                                        # unparsable timestamp
    rows.item[b[k == 1]] = fresh[k == 1]
    rows.rank[b[k == 1]] = (length[k == 1] + 1).astype(np.int32)
    rows.item[b[k == 2]] = fresh[k == 2]                                   # rank 0 or negative
    rows.rank[b[k == 2]] = -rng.integers(0, 3, int((k == 2).sum())).astype(np.int32)
    rows.env[b[k == 3]] = BADENV                                          # unknown environment
    rows.is_rank[b[k == 4]] = False                                        # negative relevance
    rows.relevance[b[k == 4]] = -1.0
    rows.rel_ok[b[k == 4]] = True
    rows.ts[b[k == 4]] += 1000
    rows.rank[b[k == 5]] = (length[k == 5] + 1).astype(np.int32)          # the same item twice
    grp = rows.grp[b[k == 5]]
    rows.score[b[k == 5]] = r.score[r.starts[grp] + length[k == 5] - 1] - 0.5


def _time_order(rows: _Rows, start_ms: int) -> _Rows:
    """The rows by file (training, validation, then the days) and by time inside each (stable: a list's rows
    stay together)."""
    file_of = np.where(rows.env == TRAIN, -2, np.where(rows.env == VALID, -1, 0)).astype(np.int64)
    file_of[file_of == 0] = np.floor_divide(rows.ts[file_of == 0] - start_ms, DAY_MS)
    order = np.argsort(((file_of + 2) << 42) | (rows.ts - rows.ts.min()), kind="stable")
    return _Rows(rows.ts[order], rows.env[order], rows.grp[order], rows.item[order], rows.item_ok[order],
                 rows.rank[order], rows.score[order], rows.relevance[order], rows.rel_ok[order],
                 rows.label_bits[order], rows.label_ok[order], rows.time_bad[order], rows.is_rank[order],
                 file_of[order], rows.bad_time)


def _arrow_table(g: Lists, rows: _Rows) -> pa.Table:
    """The events as an Arrow table, columns ``COLUMNS``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n_all = int(rows.ts.shape[0])
    meta = rows.is_rank  # model, version, environment and slices are on ranking rows only
    ts_arr = pa.Array.from_buffers(pa.timestamp("ms"), n_all, [None, pa.py_buffer(np.ascontiguousarray(rows.ts))])
    if rows.bad_time.shape[0]:
        junk = np.zeros(n_all, dtype=np.int64)
        junk[rows.time_bad] = rows.bad_time[: int(rows.time_bad.sum())]
        ts_arr = pc.if_else(arrow_numbers(rows.time_bad), arrow_codes(junk, _BAD_TIMES), iso_text(ts_arr))
    serving_rows = g.serving[rows.grp]
    columns = {
        "timestamp": ts_arr,
        "model": arrow_codes(np.array([0, 0, 1])[serving_rows], ("ranker", "related"), meta),
        "model_version": arrow_codes(np.array([0, 1, 0])[serving_rows], ("v1", "v2"), meta),
        "environment": arrow_codes(rows.env, ENVIRONMENTS, meta),
        "group_id": arrow_ids("g", rows.grp.astype(np.int64)),
        "item_id": arrow_ids("i", rows.item.astype(np.int64), rows.item_ok),
        "rank": arrow_numbers(rows.rank, rows.is_rank),
        "score": arrow_numbers(rows.score, rows.is_rank),
        "relevance": arrow_numbers(rows.relevance, rows.rel_ok),
        "labels": arrow_labels(rows.label_bits, rows.label_ok, LABELS),
    }
    for col, names in SLICES.items():
        columns[col] = arrow_codes(g.slices[col][rows.grp], tuple(names), meta)
    return pa.table(columns)


def _write_files(table: pa.Table, file_of: np.ndarray, outdir: pathlib.Path, a: Settings) -> list[pathlib.Path]:
    """One file per UTC day (and training, validation) in ``outdir``; the paths in time order."""
    outdir.mkdir(parents=True, exist_ok=True)
    ext = FORMATS[a.format]
    keys, first_row = np.unique(file_of, return_index=True)
    bounds = [*first_row.tolist(), int(file_of.shape[0])]
    paths = []
    for i, key in enumerate(keys):
        if key == -2:
            name = f"training.{ext}"
        elif key == -1:
            name = f"validation.{ext}"
        else:
            name = f"events-{(a.start_day + _dt.timedelta(days=int(key))):%Y-%m-%d}.{ext}"
        path = outdir / name
        write_table(table.slice(int(bounds[i]), int(bounds[i + 1] - bounds[i])), path, a.format)
        paths.append(path)
    return paths
