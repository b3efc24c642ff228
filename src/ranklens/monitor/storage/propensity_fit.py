"""Propensities of the store's debiased measures (``ips_dcg@k``, ``ips_ndcg@k``): from the configuration, or fitted
on the store's own logs (``[propensity] source = "fitted"``, :mod:`ranklens.monitor.propensity_config`).

A fit reads the served items of the **mature** lists (served before the label maturity's ``mature_until``:
their clicks are all in; :mod:`ranklens.monitor.storage.maturity`), within ``[propensity] window`` of it when
set, leaving out lists that lost rows to the quarantine (``n_lost > 0``: a missing row shifts the ranks' share of
the clicks) and items without a rank. Each row is a list (session), its item (paired with the list's ``query``
slice when configured, else the item alone), its rank and whether the item holds the click label. The position-based
model is fitted by :func:`ranklens.counterfactual.fit_click_model` (EM); its examination relative to rank 1 is the
propensity curve. As everywhere with a PBM, the examination is identified only by items shown at several ranks
(several rankers, a stochastic policy, interventions); see :mod:`ranklens.counterfactual.click_models`.

A writer fits at the end of every ingest call, before the stored values are computed, and records the curve in
``meta`` (key ``propensity_fit``) with what it was fitted on: rows, lists, pairs, log-likelihood, iterations,
the time span, the number of batches. Readers use the record while no batch has arrived since (and the
``[propensity]`` table is the one it was fitted under), else fit again in memory. The record's digest is part of
the stored values' fingerprint: a new fit makes every stored value stale (computed again by the same ingest).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ...errors import InputError, InvalidParameterError
from ..config import MonitorConfig
from .db import fetch_arrow, quote, slice_columns
from .keys import ITEM_TEXT
from .maturity import maturity_of

__all__ = ["examination_in_force", "propensity_info", "remember_propensity", "values_fingerprint"]

_META_KEY = "propensity_fit"


def _spec(config: MonitorConfig) -> dict[str, Any]:
    p = config.propensity
    return {"window": str(p["window"]) if p.get("window") else None, "query": p.get("query"), "label": p["label"]}


def _batches(con: Any) -> int:
    return int(con.execute("SELECT count(*) FROM batches").fetchall()[0][0])


def _rows(con: Any, config: MonitorConfig) -> tuple[Any, dict[str, Any]]:
    """The served items of the lists the fit reads (gid, item_id, [query,] rank, click) and their time span."""
    spec = _spec(config)
    m = maturity_of(con, config)
    if m.clock is None:
        raise InputError("the store holds no served list yet")
    end = m.mature_until
    start = (end or m.clock) - config.propensity["window"] if config.propensity.get("window") else None
    where, params = ["g.source = 'events'", "coalesce(g.n_lost, 0) = 0", "i.rank IS NOT NULL"], [spec["label"]]
    if start is not None:
        where.append("g.ts >= ?")
        params.append(start)
    if end is not None:
        where.append("g.ts < ?")
        params.append(end)
    query = ""
    if spec["query"]:
        cols = slice_columns(con)
        if spec["query"] not in cols:
            raise InputError(f"[propensity] query: {spec['query']!r} is not a slice column of the store "
                             f"(slices: {', '.join(sorted(cols)) or 'none'})")
        query = f", g.{quote(cols[spec['query']])} AS query"
    table = fetch_arrow(con.sql(f"""
        SELECT i.gid, k.item_id{query}, i.rank, c.gid IS NOT NULL AS click
        FROM items i JOIN groups g ON g.gid = i.gid {ITEM_TEXT}
        LEFT JOIN (SELECT DISTINCT gid, iid FROM item_labels WHERE label = ?) c
               ON c.gid = i.gid AND c.iid = i.iid
        WHERE {' AND '.join(where)}""", params=params))
    span = {"start": start.isoformat() if start else None, "end": end.isoformat() if end else None, **spec,
            "maturity": m.source}
    if not table.num_rows:
        raise InputError("no mature list with ranks to fit on yet" + (
            f" (lists served before {end.isoformat()})" if end else ""))
    return table, span


def _fit(con: Any, config: MonitorConfig) -> dict[str, Any]:
    """A new fit's record (``error`` instead of a curve when the store's logs give none)."""
    from ...counterfactual.click_models import fit_click_model

    rec: dict[str, Any] = {"source": "fitted", "batches": _batches(con), "spec": _spec(config)}
    try:
        table, span = _rows(con, config)
        model = fit_click_model(table, "pbm", session_col="gid", query_col="query" if span["query"] else None,
                                item_col="item_id", rank_col="rank", click_col="click")
    except InputError as exc:
        rec["error"] = str(exc).rstrip(".")
        return rec
    exam = [float(v) for v in model.examination.array]
    rec.update(examination=exam, rows=model.n_rows, sessions=model.n_sessions, pairs=int(len(model.attractiveness)),
               log_likelihood=model.log_likelihood, iterations=model.iterations, converged=model.converged,
               clicks=int(model.clicks.sum()), fitted_on=span,
               digest=hashlib.sha256(json.dumps(exam).encode()).hexdigest()[:12])
    return rec


def remember_propensity(con: Any, config: MonitorConfig) -> dict[str, Any] | None:
    """Under ``source = "fitted"``: fit on the store's logs and record the fit in ``meta`` (a writer, after an
    ingest, before the stored values are computed); returns the record (None under another source)."""
    if config.propensity.get("source") != "fitted":
        return None
    rec = _fit(con, config)
    con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [_META_KEY, json.dumps(rec)])
    return rec


def _current(con: Any, config: MonitorConfig) -> dict[str, Any]:
    """The recorded fit when no batch arrived since and the spec is the same, else a new fit (not recorded)."""
    rows = con.execute("SELECT value FROM meta WHERE key = ?", [_META_KEY]).fetchall()
    if rows:
        try:
            rec = json.loads(rows[0][0])
            if rec.get("batches") == _batches(con) and rec.get("spec") == _spec(config):
                return dict(rec)
        except (ValueError, TypeError):
            pass
    return _fit(con, config)


def propensity_info(con: Any, config: MonitorConfig) -> dict[str, Any] | None:
    """Where the debiased measures' propensities come from, for ``info()``: the configured curve, or the fit's
    record (curve, rows, lists, pairs, log-likelihood, time span), or None without a ``[propensity]`` table."""
    p = config.propensity
    if not p:
        return None
    if p["source"] == "config":
        return {"source": "config", "examination": list(p["examination"])}
    return _current(con, config)


def examination_in_force(con: Any, config: MonitorConfig) -> tuple[float, ...]:
    """The examination curve the ``ips_`` measures divide by; one line naming what is missing otherwise."""
    info = propensity_info(con, config)
    if info is None:
        raise InvalidParameterError(
            "inverse-propensity measures (ips_dcg@k, ips_ndcg@k) need propensities: add a [propensity] table "
            "with `examination = [...]` (one value per rank from 1) or `source = \"fitted\"` to the configuration.")
    if info.get("error"):
        raise InputError(f"[propensity] source = \"fitted\": no propensities fitted on the store's logs: "
                         f"{info['error']}.")
    return tuple(info["examination"])


def values_fingerprint(con: Any, config: MonitorConfig) -> str:
    """The fingerprint of stored values: the configuration's, and under ``source = "fitted"`` the fit's digest."""
    fp = config.fingerprint()
    if config.propensity.get("source") != "fitted":
        return fp
    info = _current(con, config)
    return f"{fp}:{info.get('digest', 'none')}"

