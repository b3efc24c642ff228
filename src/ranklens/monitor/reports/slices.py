"""Root cause: the slices (values of one slice column, or combinations of two) that explain the change of a
measure between each series' baseline and a window.

For one series (model, version, environment by default) and one slice definition (a column, or a pair of
columns), every group falls in one cell (a value, or a pair of values). With, for cell c, the shares
``s_b(c)``, ``s_w(c)`` of the counted groups and the means ``m_b(c)``, ``m_w(c)`` in the baseline and the
window, and ``M_b``, ``M_w`` the overall means (``M = sum_c s(c) m(c)``), the change ``M_w - M_b`` is split
into (the shift-share, or Kitagawa, decomposition with the mix anchored on the baseline mean):

* ``rate_effect(c) = s_w(c) * (m_w(c) - m_b(c))``: the cell's groups got worse or better;
* ``mix_effect(c) = (s_w(c) - s_b(c)) * (m_b(c) - M_b)``: the cell got more or fewer groups, and it was
  below or above the baseline's mean (a cell on one side only: ``s_w (m_w - M_b)`` or ``-s_b (m_b - M_b)``);
* ``contribution(c) = rate_effect(c) + mix_effect(c)``; over the cells of one definition of one series the
  contributions add up to ``M_w - M_b`` exactly (the shares sum to 1 on each side).

A cell with fewer than ``min_support`` counted groups in the window or in the baseline is not listed alone:
such cells are pooled into one ``(other)`` row per definition (``n_cells`` says how many), so the rows still
add up. Each listed cell gets Welch's two-sided p-value of ``m_w(c) - m_b(c)`` and its Holm-adjusted value
over every cell listed (``correction="bh"``: Benjamini-Hochberg; ``"none"``).

Measures with another aggregate (:mod:`ranklens.monitor.reports.aggregates`) are split on their own scale
(``contribution_scale`` in the summary, whose ``scale_change`` the contributions add up to): a geometric
mean (``gm_map``) on the logarithms, ``log(max(v, 0.00001))`` (the contributions add up to
``log(G_w / G_b)``; the values shown are the cells' geometric means); a weighted mean (``gauc``) with
shares and means weighted by the lists' items; a count (``num_rel_ret``) on totals (shares are the
lists' numbers, the anchor 0: ``rate = n_w (m_w - m_b)``, ``mix = (n_w - n_b) m_b``, adding up to the
change of the totals; the values shown are the cells' totals, the tests compare per-list counts).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._base.deps import require
from ..._core.stats import scipy_special
from ...errors import InputError, InvalidParameterError
from ..config import Baseline, MonitorConfig
from ..storage.db import column_sql, quote, slice_columns
from ..storage.params import series_where
from ..storage.values import select_values
from .aggregates import StoreAggregate
from .baseline import select_baseline
from .search import MAX_COLUMNS, crosses, one_sided, searched_columns, slice_definitions

__all__ = ["CORRECTIONS", "MIN_SUPPORT", "NothingToSearch", "adjust_p", "auto_cells", "decompose", "slice_report",
           "welch_cells"]


class NothingToSearch(InputError):
    """No slice column left to search: the store has none, or each one asked for is fixed to one value in every
    series (its ``by`` or ``where``). Not a missing baseline: an automatic-slice monitor says which."""

MIN_SUPPORT = 30
CORRECTIONS = ("holm", "bh", "none")
OTHER = "(other)"
MISSING = "(missing)"


def adjust_p(p: np.ndarray, method: str) -> np.ndarray:
    """p-values adjusted for their number (NaN: not tested, left out of the count).

    ``holm``: Holm's step-down, ``min(1, max_{j<=i} (m - j + 1) p_(j))`` (family-wise error; valid for
    dependent tests, as overlapping slices are). ``bh``: Benjamini-Hochberg, ``min_{j>=i} m p_(j) / j``
    (false discovery rate). ``none``: unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> adjust_p(np.array([0.01, 0.04, 0.03, np.nan]), "holm").tolist()  # 3 tests: 3*0.01, 2*0.03, max(0.06, 0.04)
    [0.03, 0.06, 0.06, nan]
    >>> [round(x, 4) for x in adjust_p(np.array([0.01, 0.04, 0.03]), "bh").tolist()]  # 0.01*3/1, min(.04, .03*3/2)
    [0.03, 0.04, 0.04]
    """
    if method not in CORRECTIONS:
        raise InvalidParameterError(f"`correction` must be one of {', '.join(CORRECTIONS)}; got {method!r}.")
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = len(ok)
    if m == 0 or method == "none":
        out[ok] = p[ok]
        return out
    o = ok[np.argsort(p[ok], kind="stable")]
    ps = p[o]
    j = np.arange(1, m + 1)
    if method == "holm":
        adj = np.maximum.accumulate(np.minimum(1.0, (m - j + 1) * ps))
    else:
        adj = np.minimum(1.0, np.minimum.accumulate((m * ps / j)[::-1])[::-1])
    out[o] = adj
    return out


def welch_cells(nw: np.ndarray, mw: np.ndarray, vw: np.ndarray, nb: np.ndarray, mb: np.ndarray,
                vb: np.ndarray) -> np.ndarray:
    """Welch's two-sided p-value per cell from counts, means and variances (ddof=1); NaN under 2 on a side.

    The same test as :func:`ranklens.monitor.reports.stats.welch` (``scipy.stats.ttest_ind(equal_var=False)``),
    for many cells at once.
    """
    p = np.full(nw.shape, np.nan)
    ok = (nw >= 2) & (nb >= 2)
    if not ok.any():
        return p
    a, b = vw[ok] / nw[ok], vb[ok] / nb[ok]
    se2 = a + b
    d = mw[ok] - mb[ok]
    res = np.where(d == 0, 1.0, 0.0)
    pos = se2 > 0
    t = d[pos] / np.sqrt(se2[pos])
    df = se2[pos] ** 2 / (a[pos] ** 2 / (nw[ok][pos] - 1) + b[pos] ** 2 / (nb[ok][pos] - 1))
    res[pos] = 2 * scipy_special().stdtr(df, -np.abs(t))
    p[ok] = res
    return p


def decompose(cw: np.ndarray, xw: np.ndarray, cb: np.ndarray, xb: np.ndarray, n_cells: int,
              ww: np.ndarray | None = None, wb: np.ndarray | None = None, total: bool = False) -> dict[str, np.ndarray]:
    """Per cell (codes ``cw``, ``cb`` in ``[0, n_cells)`` of the counted values ``xw``, ``xb``): counts, means,
    variances, shares, rate and mix effects, contribution. Contributions sum to ``mean(xw) - mean(xb)``.

    With weights ``ww``, ``wb`` (a weighted mean), a cell's mean is weighted and its share is its part of
    the weights (``M = sum_c s(c) m(c)`` still holds); its variance is that of the linearised values
    ``m(c) + w / mean_c(w) (x - m(c))`` (for Welch's test). With ``total``, the shares are the counts and the
    anchor ``M_b`` is 0: the contributions ``n_w m_w - n_b m_b`` sum to ``sum(xw) - sum(xb)``.

    Examples
    --------
    >>> import numpy as np
    >>> xw, xb = np.array([0.2, 0.4, 1.0]), np.array([0.5, 0.8, 1.0])
    >>> d = decompose(np.array([0, 0, 1]), xw, np.array([0, 1, 1]), xb, 2)
    >>> bool(np.isclose(d["contribution"].sum(), xw.mean() - xb.mean(), rtol=0, atol=1e-15))
    True
    """
    nw = np.bincount(cw, minlength=n_cells).astype(np.float64)
    nb = np.bincount(cb, minlength=n_cells).astype(np.float64)
    ww = np.ones_like(xw) if ww is None else ww
    wb = np.ones_like(xb) if wb is None else wb
    with np.errstate(invalid="ignore", divide="ignore"):
        gw, gb = np.bincount(cw, weights=ww, minlength=n_cells), np.bincount(cb, weights=wb, minlength=n_cells)
        mw = np.bincount(cw, weights=ww * xw, minlength=n_cells) / gw
        mb = np.bincount(cb, weights=wb * xb, minlength=n_cells) / gb
        uw = ww / (gw / nw)[cw] * (xw - mw[cw])  # linearised deviations (the deviations when unweighted)
        ub = wb / (gb / nb)[cb] * (xb - mb[cb])
        vw = np.bincount(cw, weights=uw ** 2, minlength=n_cells) / (nw - 1)
        vb = np.bincount(cb, weights=ub ** 2, minlength=n_cells) / (nb - 1)
    if total:
        sw, sb, big_mb = nw, nb, 0.0
    else:
        sw, sb = gw / ww.sum(), gb / wb.sum()
        big_mb = float((wb * xb).sum() / wb.sum())
    mw0, mb0 = np.where(nw > 0, mw, 0.0), np.where(nb > 0, mb, 0.0)
    both = (nw > 0) & (nb > 0)
    rate = np.where(both, sw * (mw0 - mb0), 0.0)
    mix = np.where(both, (sw - sb) * (mb0 - big_mb), np.where(nw > 0, sw * (mw0 - big_mb), -sb * (mb0 - big_mb)))
    return {"n_window": nw, "n_baseline": nb, "window_value": mw, "baseline_value": mb, "var_window": vw,
            "var_baseline": vb, "mass_window": gw, "mass_baseline": gb, "share_window": sw, "share_baseline": sb,
            "rate_effect": rate, "mix_effect": mix, "contribution": rate + mix}


def _codes(columns: Sequence[Any]) -> tuple[list[np.ndarray], list[str]]:
    """Integer codes of string arrays (nulls as "(missing)") over one dictionary shared by every array."""
    pa = require("pyarrow")
    pc = require("pyarrow.compute")
    arrs = [pc.fill_null(c.combine_chunks() if hasattr(c, "combine_chunks") else c, MISSING)
            for c in (c.cast(pa.string()) for c in columns)]
    dictionary = pc.unique(pa.concat_arrays(arrs)).to_pylist()
    dset = pa.array(dictionary, pa.string())
    return [pc.index_in(a, value_set=dset).to_numpy(zero_copy_only=False).astype(np.int64) for a in arrs], dictionary


def _mask(table: Any, values: dict[str, Any], prefix: str) -> np.ndarray:
    pc = require("pyarrow.compute")
    m = np.ones(table.num_rows, dtype=bool)
    for k, v in values.items():
        col = table.column(prefix + k)
        hit = pc.is_null(col) if v is None else pc.fill_null(pc.equal(col.cast("string"), str(v)), False)
        m &= hit.to_numpy(zero_copy_only=False)
    return m


def slice_report(con: Any, config: MonitorConfig, key: str, start: Any, end: Any, spec: Baseline,
                 columns: Sequence[str] | None, where: dict[str, Any] | None, by: Sequence[str], depth: int,
                 min_support: int, correction: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(rows, summary) of the slices of ``[start, end)`` against each series' baseline (see the module)."""
    pa = require("pyarrow")
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_COLUMNS:
        raise InvalidParameterError(f"`depth` must be 1 (one column), 2 (also pairs of columns) or 3 (also triples); "
                                    f"got {depth!r}.")
    if isinstance(min_support, bool) or not isinstance(min_support, int) or min_support < 1:
        raise InvalidParameterError(f"`min_support` must be an integer >= 1; got {min_support!r}.")
    if correction not in CORRECTIONS:
        raise InvalidParameterError(f"`correction` must be one of {', '.join(CORRECTIONS)}; got {correction!r}.")
    slices = slice_columns(con)
    cols = list(slices) if columns is None else [str(c).lower() for c in columns]
    for c in cols:
        column_sql(con, c, slices)
    if not cols:
        raise NothingToSearch("the store has no slice columns to break the change down by.")
    by = [str(b).lower() for b in by]
    searched = searched_columns(cols, where, by)  # a column the series fixes is never its own root cause
    fixed, cols = [c for c in cols if c not in searched], searched
    if not cols:
        raise NothingToSearch(f"no slice column to break the change down by: {', '.join(fixed)} "
                         f"{'is' if len(fixed) == 1 else 'are'} fixed to one value in each series (by or where).")
    sexprs = [f"{column_sql(con, c, slices)} AS {quote('c:' + c)}" for c in cols]
    bexprs = [f"{column_sql(con, b, slices)} AS {quote('s:' + b)}" for b in by]
    wg, wv = select_values(con, config, [key], where, start, end, bexprs + sexprs)
    agg = StoreAggregate.of(key)
    wn = wg.column("w:n_items").to_numpy(zero_copy_only=False).astype(np.float64)
    wgt = agg.weights(wn)
    counted = ~np.isnan(wv[:, 0]) if wgt is None else ~np.isnan(wv[:, 0]) & ~np.isnan(wgt)
    if not counted.any():
        raise InputError(f"no counted groups in the window for {key}.")
    combos = (wg.filter(pa.array(counted)).select(["s:" + b for b in by]).group_by(["s:" + b for b in by])
              .aggregate([]).to_pylist()) if by else [{}]
    combos.sort(key=lambda r: tuple("" if r[k] is None else str(r[k]) for k in r))
    defs = slice_definitions(cols, depth)
    rows: list[dict[str, Any]] = []
    summaries: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    for combo in combos:
        series = {b: combo["s:" + b] for b in by}
        mw = counted & _mask(wg, series, "s:")
        swhere = series_where(where, series)
        bg, bv, sel = select_baseline(con, config, [key], spec, swhere, start, end, sexprs)
        bn = bg.column("w:n_items").to_numpy(zero_copy_only=False).astype(np.float64)
        bgt = agg.weights(bn)
        mb = ~np.isnan(bv[:, 0]) if bgt is None else ~np.isnan(bv[:, 0]) & ~np.isnan(bgt)
        if not mb.any():
            skipped.append({"series": series, "reason": f"no counted groups in the baseline ({sel.describe()})"})
            continue
        ww, wb = (None, None) if wgt is None or bgt is None else (wgt[mw], bgt[mb])
        vw, vb = agg.value(wv[mw, 0], ww), agg.value(bv[mb, 0], wb)
        xw, xb = agg.transform(wv[mw, 0]), agg.transform(bv[mb, 0])  # the scale of the contributions
        summaries.append({"series": series, "baseline": sel.describe(), "window_value": vw, "baseline_value": vb,
                          "change": vw - vb, "n_window": int(len(xw)), "n_baseline": int(len(xb)),
                          "aggregate": agg.kind, "contribution_scale": agg.scale,
                          "scale_change": float(_scale_change(agg, xw, ww, xb, wb))})
        for d in defs:
            names: list[list[str]] = []
            cw, cb = np.zeros(int(mw.sum()), np.int64), np.zeros(int(mb.sum()), np.int64)
            for c in d:  # a cell's code: its columns' codes in mixed radix (the dictionaries' sizes)
                (aw, ab), dictionary = _codes([wg.column("c:" + c).filter(pa.array(mw)),
                                               bg.column("c:" + c).filter(pa.array(mb))])
                size = max(1, len(dictionary))
                cw, cb = cw * size + aw, cb * size + ab
                names.append(dictionary)
            cells, inv = np.unique(np.concatenate([cw, cb]), return_inverse=True)
            dec = decompose(inv[:len(cw)], xw, inv[len(cw):], xb, len(cells), ww, wb, total=agg.kind == "sum")
            support = (dec["n_window"] >= min_support) & (dec["n_baseline"] >= min_support)
            p = np.where(support, welch_cells(dec["n_window"], dec["window_value"], dec["var_window"],
                                              dec["n_baseline"], dec["baseline_value"], dec["var_baseline"]), np.nan)
            for i in np.flatnonzero(support):
                rows.append(_row(series, d, _decode(int(cells[i]), names), dec, int(i), float(p[i]), agg, depth))
            rest = np.flatnonzero(~support)
            if len(rest):
                rows.append(_other(series, d, dec, rest, agg, depth))
    if not summaries:
        raise InputError(f"no counted groups in the baseline for {key}: " + "; ".join(
            f"{' '.join(f'{k}={v}' for k, v in s['series'].items())}: {s['reason']}" for s in skipped))
    pv = np.array([r["p_value"] for r in rows], dtype=np.float64)
    adj = adjust_p(pv, correction)
    for r, a in zip(rows, adj, strict=True):
        r["p_adjusted"] = float(a)
    rows.sort(key=lambda r: (r["pooled"], r["contribution"], r["column"], str(r["value"]),
                             str(r["column2"] or ""), str(r["value2"] or ""), str(r.get("column3") or ""),
                             str(r.get("value3") or "")))
    summary: dict[str, Any] = {
        "measure": key, "by": by, "depth": depth, "min_support": min_support, "correction": correction,
        "columns": cols, "fixed_columns": fixed, "n_tested": int((~np.isnan(pv)).sum()), "series": summaries,
        "skipped": skipped,
    }
    if len(summaries) == 1:
        summary.update({k: v for k, v in summaries[0].items() if k != "series"})
    return rows, summary


def _scale_change(agg: StoreAggregate, xw: np.ndarray, ww: np.ndarray | None, xb: np.ndarray,
                  wb: np.ndarray | None) -> float:
    """The change the contributions add up to: of the (weighted) means of the transformed values (geometric:
    the change of the mean logarithm, ``log(G_w / G_b)``), or of the totals."""
    if agg.kind == "sum":
        return float(xw.sum() - xb.sum())
    ww = np.ones_like(xw) if ww is None else ww
    wb = np.ones_like(xb) if wb is None else wb
    return float((ww * xw).sum() / ww.sum() - (wb * xb).sum() / wb.sum())


def _decode(code: int, names: list[list[str]]) -> list[str]:
    """The values of a cell from its mixed-radix code (the inverse of the codes' combination)."""
    vals = []
    for dictionary in reversed(names):
        size = max(1, len(dictionary))
        vals.append(dictionary[code % size])
        code //= size
    return vals[::-1]


def _columns(d: tuple[str, ...], vals: list[str], depth: int) -> dict[str, Any]:
    """``column``, ``value``, ``column2``, ``value2`` (and ``column3``, ``value3`` for a search of depth 3)."""
    out: dict[str, Any] = {"column": d[0], "value": vals[0]}
    for i in range(1, max(2, depth)):
        out[f"column{i + 1}"] = d[i] if len(d) > i else None
        out[f"value{i + 1}"] = vals[i] if len(d) > i else None
    return out


def _row(series: dict[str, Any], d: tuple[str, ...], vals: list[str], dec: dict[str, np.ndarray], i: int,
         p: float, agg: StoreAggregate, depth: int = 2) -> dict[str, Any]:
    nw, nb = int(dec["n_window"][i]), int(dec["n_baseline"][i])
    vw = float(agg.back(dec["window_value"][i], nw))
    vb = float(agg.back(dec["baseline_value"][i], nb))
    return {**series, **_columns(d, vals, depth), "pooled": False, "n_cells": 1, "n_baseline": nb, "n_window": nw,
            "baseline_value": vb, "window_value": vw, "change": vw - vb,
            "share_baseline": float(dec["share_baseline"][i]), "share_window": float(dec["share_window"][i]),
            "rate_effect": float(dec["rate_effect"][i]), "mix_effect": float(dec["mix_effect"][i]),
            "contribution": float(dec["contribution"][i]), "p_value": p}


def _other(series: dict[str, Any], d: tuple[str, ...], dec: dict[str, np.ndarray], rest: np.ndarray,
           agg: StoreAggregate, depth: int = 2) -> dict[str, Any]:
    """The cells below the minimum support, pooled: their counts, shares and effects summed."""
    nw, nb = float(dec["n_window"][rest].sum()), float(dec["n_baseline"][rest].sum())
    gw, gb = float(dec["mass_window"][rest].sum()), float(dec["mass_baseline"][rest].sum())
    with np.errstate(invalid="ignore"):
        mw = float(agg.back(np.nansum(dec["window_value"][rest] * dec["mass_window"][rest]) / gw, nw)) \
            if nw else math.nan
        mb = float(agg.back(np.nansum(dec["baseline_value"][rest] * dec["mass_baseline"][rest]) / gb, nb)) \
            if nb else math.nan
    return {**series, **_columns(d, [OTHER] * len(d), depth), "pooled": True, "n_cells": int(len(rest)),
            "n_baseline": int(nb),
            "n_window": int(nw), "baseline_value": mb, "window_value": mw,
            "change": mw - mb if nw and nb else math.nan,
            "share_baseline": float(dec["share_baseline"][rest].sum()),
            "share_window": float(dec["share_window"][rest].sum()),
            "rate_effect": float(dec["rate_effect"][rest].sum()), "mix_effect": float(dec["mix_effect"][rest].sum()),
            "contribution": float(dec["contribution"][rest].sum()), "p_value": math.nan}


def auto_cells(rows: Sequence[dict[str, Any]], correction: str, *, threshold: float | None = None,
               relative_drop: float | None = None, absolute_drop: float | None = None,
               significance: float | None = None) -> list[dict[str, Any]]:
    """The candidates of a measure's slice rows with the rule of an automatic-slice monitor: each listed
    (not pooled) slice with its ``relative_change``, the one-sided p-value of its drop (``p_drop``) adjusted
    over every slice tested (``p_drop_adjusted``, by ``correction``), its effective limit and whether it
    ``fires``: below the limit and, with ``significance``, ``p_drop_adjusted < significance``."""
    cand = [dict(r) for r in rows if not r.get("pooled")]
    p = np.array([one_sided(r.get("p_value"), r.get("change")) for r in cand], dtype=np.float64)
    adj = adjust_p(p, correction) if len(p) else p
    for r, pv, pa in zip(cand, p, adj, strict=True):
        base, value = float(r["baseline_value"]), float(r["window_value"])
        r["relative_change"] = (value - base) / base if base else math.nan
        r["p_drop"], r["p_drop_adjusted"] = float(pv), float(pa)
        fires, thr, why = crosses(value, base, threshold=threshold, relative_drop=relative_drop,
                                  absolute_drop=absolute_drop)
        if fires and significance is not None:
            fires = not math.isnan(pa) and pa < significance
        r["limit"], r["why"], r["fires"] = thr, why, bool(fires)
    return cand
