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
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .broken import broken_scores, popular_items
from .checks import (
    MAX_DAYS,
    MAX_GROUPS,
    check_date,
    check_fraction,
    check_int,
    check_items,
    check_slice,
    epoch_ms,
    fail,
)
from .columns import arrow_codes, arrow_ids, arrow_labels, arrow_numbers, iso_text, write_table

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["COLUMNS", "FORMATS", "LABELS", "SLICES", "simulate", "simulate_counted"]

#: Outcome labels, from the weakest to the strongest.
LABELS: tuple[str, ...] = ("click", "favorite", "buy")

#: Slice columns and their values with their shares of the traffic.
SLICES: dict[str, dict[str, float]] = {
    "country": {"US": 0.35, "BR": 0.15, "DE": 0.15, "IN": 0.20, "JP": 0.15},
    "device": {"mobile": 0.60, "desktop": 0.32, "tablet": 0.08},
    "query_type": {"head": 0.50, "torso": 0.30, "tail": 0.20},
}

#: Columns of the events, in order: the event schema of ``docs/monitoring.md``, then the slices.
COLUMNS: tuple[str, ...] = (
    "timestamp", "model", "model_version", "environment", "group_id", "item_id", "rank", "score",
    "relevance", "labels", "country", "device", "query_type",
)

_ENVS = ("training", "validation", "production", "staging")  # "staging": only in malformed rows
_TRAIN, _VALID, _PROD, _BADENV = 0, 1, 2, 3
# (model, version, score noise): the second model is added by ``second_model=True``
_SERVING = (("ranker", "v1", 0.75), ("ranker", "v2", 0.60), ("related", "v1", 0.90))
_RANKER_V1, _RANKER_V2, _RELATED = 0, 1, 2
# latent grade 0..3 of an item per query type (head queries have more good items than tail ones)
_GRADE_P = np.array([[0.45, 0.27, 0.17, 0.11], [0.55, 0.25, 0.13, 0.07], [0.68, 0.19, 0.09, 0.04]])
_TAIL_NOISE = 1.35  # the score noise of tail queries is this much larger
# outcome probabilities by grade: click, favorite (needs a click), buy (needs a click)
_P_CLICK = np.array([0.03, 0.70, 0.85, 0.95])
_P_FAVORITE = np.array([0.0, 0.03, 0.60, 0.80])
_P_BUY = np.array([0.0, 0.0, 0.08, 0.60])
# traffic by hour of day (UTC), a smooth daily cycle peaking in the afternoon
_HOURLY = 1.0 + 0.6 * np.sin(2 * np.pi * (np.arange(24) - 9) / 24)
_CATALOGUE = 100_003  # a prime: (start + j * step) mod it gives distinct items within a list
_DAY_MS = 86_400_000
_BAD_TIMES = ("2026-13-45T25:61:00Z", "not a time", "yesterday")
_DECAYS = ("swap_first_last", "broken_scores")
#: File formats :func:`simulate` writes, by name: the file extension.
FORMATS = {"parquet": "parquet", "csv": "csv", "jsonl": "jsonl"}


# ------------------------------------------------------------------------------------------------ drawing


def _draw_slices(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    out = {}
    for col, shares in SLICES.items():
        p = np.array(list(shares.values()))
        out[col] = np.searchsorted(np.cumsum(p / p.sum())[:-1], rng.random(n), side="right").astype(np.int8)
    return out


def _served_times(rng: np.random.Generator, day_start_ms: np.ndarray) -> np.ndarray:
    """Serving time of each group within its day: the daily cycle, never in the day's last second."""
    p = _HOURLY / _HOURLY.sum()
    n = int(day_start_ms.shape[0])
    hour = np.searchsorted(np.cumsum(p)[:-1], rng.random(n), side="right")
    within = np.minimum(hour * 3_600_000 + (rng.random(n) * 3_600_000).astype(np.int64), _DAY_MS - 1001)
    return day_start_ms + within


class _Groups:
    """One record per served list (flat arrays)."""

    def __init__(self, env: np.ndarray, serving: np.ndarray, ts: np.ndarray, length: np.ndarray,
                 slices: dict[str, np.ndarray]):
        self.env = env.astype(np.int8)
        self.serving = serving.astype(np.int8)
        self.ts = ts.astype(np.int64)
        self.length = length.astype(np.int64)
        self.slices = slices

    @staticmethod
    def concat(parts: Sequence[_Groups]) -> _Groups:
        return _Groups(
            np.concatenate([p.env for p in parts]), np.concatenate([p.serving for p in parts]),
            np.concatenate([p.ts for p in parts]), np.concatenate([p.length for p in parts]),
            {c: np.concatenate([p.slices[c] for p in parts]) for c in SLICES},
        )


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

    Model ``"ranker"`` serves every production list, version ``"v1"`` from ``start`` and, from
    ``v2_start``, version ``"v2"`` on a share ``v2_share`` of the lists (an A/B test; v2 ranks a little
    better). With ``second_model=True`` a model ``"related"`` (version ``"v1"``) serves 30% of the lists.
    Each model version also has ``training_groups`` lists in the ``training`` environment, served in the
    seven days before ``start``, whose outcomes are in-line ``labels`` on the ranking rows.

    Every list has a length drawn uniformly in ``items``, and every item a latent grade 0..3 (the share
    of good items depends on the query type). Outcomes follow the grade, with noise: grade >= 1 is
    usually clicked, grade >= 2 often favorited, grade 3 often bought (a few clicks land on grade 0).
    Outcomes do not depend on the position (no position bias), so NDCG moves only when the ordering
    does. The model's score is the grade plus Gaussian noise, and the list is served by decreasing score.

    In production the ranking rows carry no labels: each outcome is one *label row* (``group_id``,
    ``item_id``, ``labels=[outcome]``, no rank, no score), stamped when it happened: the serving time
    plus a delay. A share ``late_fraction`` of the label rows falls on a later (UTC) day than their
    list, up to ``max_delay_hours`` after it; the others arrive the same day.

    From ``decay_start``, for production lists whose slice values match ``decay_slice``, the first and
    last items of the list exchange places (the seed's example): the item served at rank 1 is the one
    the model put last, and the other way round. Ranks and scores stay with the positions; item ids,
    outcomes and label rows are exactly those of the same simulation without the decay.

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
        ``"broken_scores"``: the lists are scored by a broken model whose scores ignore the grades (drawn
        from a normal distribution of its own, see :mod:`ranklens.monitor.simulate.broken`) and served in that
        order; label-free signals (``psi(score)``...) see it as soon as the lists are served. ``None`` plants no decay.
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
        Share in [0, 1) of the rows written that are bad, for the quarantine: added copies of production
        rows with a missing ``item_id``, an unparsable ``timestamp``, a ``rank`` <= 0, an unknown
        ``environment`` ("staging"), a negative ``relevance`` (on a label row), or an item already in its
        list (in equal numbers). With ``malformed > 0`` the ``timestamp`` column holds ISO-8601 strings.
    format : {"parquet", "csv", "jsonl"}, default="parquet"
        File format with ``out``. CSV and JSON Lines write timestamps as ISO-8601 strings; CSV writes
        ``labels`` as one string with labels separated by ``|``.

    Returns
    -------
    pyarrow.Table or list of pathlib.Path
        Without ``out``: every event in time order, columns ``COLUMNS`` (timestamp[ms] naive UTC,
        strings, rank int32, score and relevance float64, labels list<string>, the slice columns).
        With ``out``: the paths written, in time order (training, validation, then the days).

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


def simulate_counted(out: Any, *, start: Any, days: Any, groups_per_day: Any, items: Any, seed: Any, decay_start: Any,
              decay_slice: Any, decay: Any, late_fraction: Any, max_delay_hours: Any, training_groups: Any,
              validation_groups: Any, v2_start: Any, v2_share: Any, second_model: bool, malformed: Any,
              format: Any) -> tuple[Any, int, int]:
    """:func:`simulate`, also returning the numbers of lists (groups) and of rows."""
    import pyarrow as pa

    # ---------------------------------------------------------------- arguments
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
    if format not in FORMATS:
        raise fail("format", f"must be one of {', '.join(FORMATS)}; got {format!r}.")
    rng = np.random.default_rng(int(seed))
    start_ms = epoch_ms(start_day)

    # ---------------------------------------------------------------- lists
    n_prod = days * groups_per_day
    day_of = np.repeat(np.arange(days, dtype=np.int64), groups_per_day)
    prod_ts = _served_times(rng, start_ms + day_of * _DAY_MS)
    u = rng.random(n_prod)
    serving = np.full(n_prod, _RANKER_V1, dtype=np.int8)
    serving[(prod_ts >= epoch_ms(v2_day)) & (rng.random(n_prod) < v2_share)] = _RANKER_V2
    if second_model:
        serving[u < 0.3] = _RELATED
    servings = [_RANKER_V1, _RANKER_V2] + ([_RELATED] if second_model else [])
    prod = _Groups(np.full(n_prod, _PROD), serving, prod_ts, rng.integers(lo, hi + 1, n_prod),
                   _draw_slices(rng, n_prod))
    parts = []
    for env, n, first, span in ((_TRAIN, n_train, start_ms - 7 * _DAY_MS, 6 * _DAY_MS),
                                (_VALID, n_valid, start_ms - _DAY_MS, _DAY_MS - 1000)):
        m = n * len(servings)
        parts.append(_Groups(np.full(m, env), np.repeat(np.array(servings), n),
                             first + (rng.random(m) * span).astype(np.int64), rng.integers(lo, hi + 1, m),
                             _draw_slices(rng, m)))
    g = _Groups.concat([*parts, prod])  # training, validation, production
    n_groups = int(g.env.shape[0])

    # ---------------------------------------------------------------- items of each list, ordered by score
    ends = np.cumsum(g.length)
    starts = ends - g.length
    n_rows = int(ends[-1]) if n_groups else 0
    row_g = np.repeat(np.arange(n_groups), g.length)
    pos = np.arange(n_rows) - starts[row_g]
    qtype = g.slices["query_type"][row_g]
    grade = (rng.random(n_rows)[:, None] > np.cumsum(_GRADE_P, axis=1)[qtype, :3]).sum(axis=1).astype(np.int8)
    first_item = rng.integers(0, _CATALOGUE, n_groups)
    step = rng.integers(1, _CATALOGUE, n_groups)
    item = (first_item[row_g] + pos * step[row_g]) % _CATALOGUE
    noise = np.array([s[2] for s in _SERVING])[g.serving[row_g]] * np.where(qtype == 2, _TAIL_NOISE, 1.0)
    score = np.round(grade + noise * rng.standard_normal(n_rows), 6)
    hit = (g.env == _PROD) & (g.ts >= epoch_ms(decay_day))  # the lists the decay touches
    for col, val in spec.items():
        hit &= g.slices[col] == list(SLICES[col]).index(val)
    if decay == "broken_scores":  # the label-free case (broken.py): popular items; scores without signal
        item = popular_items(rng, grade, row_g)
        score = broken_scores(rng, score, hit[row_g])
    click = rng.random(n_rows) < _P_CLICK[grade]
    favorite = click & (rng.random(n_rows) < _P_FAVORITE[grade])
    buy = click & (rng.random(n_rows) < _P_BUY[grade])
    bits = (click.astype(np.int8) | (favorite.astype(np.int8) << 1) | (buy.astype(np.int8) << 2))
    # by group, then by decreasing score: one integer key (scores have 6 decimals and stay within +-64)
    desc = np.round((64.0 - np.clip(score, -63.0, 63.0)) * 1e6).astype(np.int64)
    order = np.argsort((row_g.astype(np.int64) << 28) | desc, kind="stable")
    item, grade, bits, score = item[order], grade[order], bits[order], score[order]
    rank = (pos + 1).astype(np.int32)
    row_env = g.env[row_g]

    # ---------------------------------------------------------------- label rows (production), before any swap
    prod_rows = np.flatnonzero((row_env == _PROD) & (bits != 0))
    kind_rows = [prod_rows[(bits[prod_rows] >> k) & 1 == 1] for k in range(len(LABELS))]
    lab_src = np.concatenate(kind_rows)
    lab_kind = np.concatenate([np.full(r.shape[0], k, dtype=np.int8) for k, r in enumerate(kind_rows)])
    o = np.argsort(lab_src, kind="stable")
    lab_src, lab_kind = lab_src[o], lab_kind[o]
    n_lab = lab_src.shape[0]
    served = g.ts[row_g[lab_src]]
    to_midnight = _DAY_MS - (served - start_ms) % _DAY_MS
    late = rng.random(n_lab) < late_fraction
    v = rng.random(n_lab)
    on_time = 1 + (v * v * (to_midnight - 1)).astype(np.int64)
    max_delay = round(float(max_delay_hours) * 3_600_000)
    later = to_midnight + (v * np.maximum(max_delay - to_midnight, 0)).astype(np.int64)
    lab_ts = served + np.where(late, later, on_time)
    lab_item = item[lab_src]  # the item the outcome is about, wherever the decay serves it

    # ---------------------------------------------------------------- the decay: swap first and last
    if decay == "swap_first_last":
        a, b = starts[hit], ends[hit] - 1
        for arr in (item, grade, bits):
            arr[a], arr[b] = arr[b], arr[a].copy()

    # ---------------------------------------------------------------- malformed rows
    n_bad = round(malformed / (1.0 - malformed) * (n_rows + n_lab)) if malformed else 0
    prod_all = np.flatnonzero(row_env == _PROD)
    if n_bad and prod_all.shape[0] == 0:
        raise fail("malformed", "needs production rows to copy.")
    bad_src = prod_all[rng.integers(0, prod_all.shape[0], n_bad)] if n_bad else np.zeros(0, np.int64)
    bad_kind = rng.integers(0, 6, n_bad).astype(np.int8)
    bad_time = rng.integers(0, len(_BAD_TIMES), n_bad)

    # ---------------------------------------------------------------- one row set: rankings, labels, bad rows
    n_all = n_rows + n_lab + n_bad
    src = np.concatenate([np.arange(n_rows), lab_src, bad_src])  # the ranking row each row comes from
    grp = row_g[src]
    is_rank = np.ones(n_all, dtype=bool)
    is_rank[n_rows:n_rows + n_lab] = False
    ts = np.concatenate([g.ts[row_g], lab_ts, g.ts[grp[n_rows + n_lab:]]])
    env = g.env[grp].copy()
    item_out = item[src]
    item_out[n_rows:n_rows + n_lab] = lab_item
    item_ok = np.ones(n_all, dtype=bool)
    rank_out = rank[src].copy()
    score_out = score[src].copy()
    relevance = np.where(env == _VALID, grade[src], 0).astype(np.float64)
    rel_ok = env == _VALID
    label_bits = bits[src].copy()
    label_ok = env == _TRAIN
    label_bits[n_rows:n_rows + n_lab] = (1 << lab_kind).astype(np.int8)
    label_ok[n_rows:n_rows + n_lab] = True
    time_bad = np.zeros(n_all, dtype=bool)
    if n_bad:
        b = np.arange(n_rows + n_lab, n_all)
        label_ok[b] = False
        fresh = _CATALOGUE + np.arange(n_bad)  # item ids no list holds
        length = g.length[grp[b]]
        k = bad_kind
        item_ok[b[k == 0]] = False                                        # missing item_id
        time_bad[b[k == 1]] = True                                        # unparsable timestamp
        item_out[b[k == 1]] = fresh[k == 1]
        rank_out[b[k == 1]] = (length[k == 1] + 1).astype(np.int32)
        item_out[b[k == 2]] = fresh[k == 2]                               # rank 0 or negative
        rank_out[b[k == 2]] = -rng.integers(0, 3, int((k == 2).sum())).astype(np.int32)
        env[b[k == 3]] = _BADENV                                          # unknown environment
        is_rank[b[k == 4]] = False                                        # negative relevance
        relevance[b[k == 4]] = -1.0
        rel_ok[b[k == 4]] = True
        ts[b[k == 4]] += 1000
        rank_out[b[k == 5]] = (length[k == 5] + 1).astype(np.int32)     # the same item twice
        score_out[b[k == 5]] = score[starts[grp[b[k == 5]]] + length[k == 5] - 1] - 0.5

    # ---------------------------------------------------------------- time order; files
    file_of = np.where(env == _TRAIN, -2, np.where(env == _VALID, -1, 0)).astype(np.int64)
    file_of[file_of == 0] = np.floor_divide(ts[file_of == 0] - start_ms, _DAY_MS)
    # training, validation, then the days; by time inside each (stable: a list's rows stay together)
    order = np.argsort(((file_of + 2) << 42) | (ts - ts.min()), kind="stable")
    ts, env, grp, item_out, item_ok = ts[order], env[order], grp[order], item_out[order], item_ok[order]
    rank_out, score_out, relevance, rel_ok = rank_out[order], score_out[order], relevance[order], rel_ok[order]
    label_bits, label_ok, time_bad = label_bits[order], label_ok[order], time_bad[order]
    is_rank, file_of = is_rank[order], file_of[order]
    meta = is_rank  # model, version, environment and slices are on ranking rows only

    import pyarrow.compute as pc

    ts_arr = pa.Array.from_buffers(pa.timestamp("ms"), n_all, [None, pa.py_buffer(np.ascontiguousarray(ts))])
    if n_bad:
        junk = np.zeros(n_all, dtype=np.int64)
        junk[time_bad] = bad_time[: int(time_bad.sum())]
        ts_arr = pc.if_else(arrow_numbers(time_bad), arrow_codes(junk, _BAD_TIMES), iso_text(ts_arr))
    serving_rows = g.serving[grp]
    columns = {
        "timestamp": ts_arr,
        "model": arrow_codes(np.array([0, 0, 1])[serving_rows], ("ranker", "related"), meta),
        "model_version": arrow_codes(np.array([0, 1, 0])[serving_rows], ("v1", "v2"), meta),
        "environment": arrow_codes(env, _ENVS, meta),
        "group_id": arrow_ids("g", grp.astype(np.int64)),
        "item_id": arrow_ids("i", item_out.astype(np.int64), item_ok),
        "rank": arrow_numbers(rank_out, is_rank),
        "score": arrow_numbers(score_out, is_rank),
        "relevance": arrow_numbers(relevance, rel_ok),
        "labels": arrow_labels(label_bits, label_ok, LABELS),
    }
    for col, names in SLICES.items():
        columns[col] = arrow_codes(g.slices[col][grp], tuple(names), meta)
    table = pa.table(columns)
    if out is None:
        return table, n_groups, n_all

    # ---------------------------------------------------------------- files
    outdir = pathlib.Path(out)
    outdir.mkdir(parents=True, exist_ok=True)
    ext = FORMATS[format]
    keys, first_row = np.unique(file_of, return_index=True)
    bounds = [*first_row.tolist(), n_all]
    paths = []
    for i, key in enumerate(keys):
        if key == -2:
            name = f"training.{ext}"
        elif key == -1:
            name = f"validation.{ext}"
        else:
            name = f"events-{(start_day + _dt.timedelta(days=int(key))):%Y-%m-%d}.{ext}"
        path = outdir / name
        write_table(table.slice(int(bounds[i]), int(bounds[i + 1] - bounds[i])), path, format)
        paths.append(path)
    return paths, n_groups, n_all
