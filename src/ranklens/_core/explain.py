"""``explain``: the DCG table of one query, and why two conventions disagree on it.

The public face of this module is :mod:`ranklens.explain`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .._base.display import text_table
from .._base.renamed import renamed_keywords
from .._defs.conventions import AGGREGATE_FIELDS, VALUE_FIELDS, Convention
from .._defs.irmeasures import measure_convention
from .._defs.measures import Measure, parse_measure
from .._defs.presets import get_convention
from .._input.dispatch import Judgments, Rankings
from .._input.ids import arrow_ids, arrow_to_numpy, as_ids, filter_ids, ids_to_numpy, is_str_ids, take_ids
from .._input.options import load_inputs, split_options
from .._kernels.api import explain_query
from ..errors import InputError, InvalidParameterError
from .plan import Plan, make_plan, run_plan
from .problem import Problem, build_problem

__all__ = ["Difference", "Explanation", "explain"]



@dataclass(frozen=True)
class Difference:
    """One convention field switched from A's value to B's, and its effect on the query."""

    field: str
    a: Any
    b: Any
    value_after: float
    change: float


@dataclass
class Explanation:
    """The table behind one query's DCG / NDCG under a convention.

    ``rows`` follow the ranked list; ``ideal_rows`` the ideal order. With tie
    averaging, ``gain_used`` is the mean gain of the row's tie group.
    """

    query: str
    measure: str
    convention: Convention
    k: int | None
    rows: list[dict[str, Any]]
    ideal_rows: list[dict[str, Any]]
    dcg: float
    idcg: float
    value: float
    note: str = ""
    compare: Convention | None = None
    value_b: float | None = None
    differences: list[Difference] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    aggregate_only: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "query": self.query, "measure": self.measure, "convention": self.convention.name, "k": self.k,
            "rows": self.rows, "ideal_rows": self.ideal_rows, "dcg": self.dcg, "idcg": self.idcg,
            "value": self.value,
        }
        if self.note:
            d["note"] = self.note
        if self.compare is not None:
            d["compare"] = {
                "convention": self.compare.name, "value": self.value_b,
                "differences": [{"field": x.field, "a": _plain(x.a), "b": _plain(x.b), "value_after": x.value_after,
                                 "change": x.change} for x in self.differences],
                "no_effect_on_this_query": self.unchanged,
                "affect_only_the_mean": self.aggregate_only,
            }
        return d

    def to_pandas(self) -> Any:
        from .._base.deps import require

        pd = require("pandas")
        return pd.DataFrame(self.rows)

    def _parts(self, limit: int | None = None) -> tuple[str, list[str], list[list[str]], list[str]]:
        """Title, column names, cells (the first ``limit`` positions when given) and the lines below: what the text
        table and the HTML show."""
        cut = f"@{self.k}" if self.k else ""
        title = f"query {self.query} - {self.measure} under convention {self.convention.name!r}"
        head = ["pos", "item", "rel", "gain", "discount", "contrib", "DCG", "ideal item", "ideal gain", "IDCG"]
        body = []
        n = max(len(self.rows), len(self.ideal_rows))
        for i in range(n if limit is None else min(n, limit)):
            r = self.rows[i] if i < len(self.rows) else None
            g = self.ideal_rows[i] if i < len(self.ideal_rows) else None
            body.append([
                str(i + 1),
                "" if r is None else str(r["item"]),
                "" if r is None else _num(r["relevance"]),
                "" if r is None else _num(r["gain_used"]),
                "" if r is None else f"{r['discount']:.5f}",
                "" if r is None else f"{r['contribution']:.5f}",
                "" if r is None else f"{r['running_dcg']:.5f}",
                "" if g is None else str(g["item"]),
                "" if g is None else _num(g["gain"]),
                "" if g is None else f"{g['running_idcg']:.5f}",
            ])
        out = [f"DCG{cut} = {self.dcg:.6f}   IDCG{cut} = {self.idcg:.6f}   {self.measure} = {_num(self.value, 6)}"]
        if self.note:
            out.append(self.note)
        if self.compare is not None:
            out.append("")
            diff = _num((self.value_b or 0.0) - self.value, 6) if _finite(self.value, self.value_b) else "n/a"
            out.append(
                f"{self.convention.name}: {_num(self.value, 6)}   {self.compare.name}: {_num(self.value_b, 6)}   "
                f"difference: {diff}"
            )
            if self.differences:
                out.append(f"switching {self.convention.name} -> {self.compare.name} one choice at a time:")
                for d in self.differences:
                    out.append(f"  {d.field}: {_plain(d.a)!r} -> {_plain(d.b)!r}   value {_num(d.value_after, 6)} "
                               f"({'+' if d.change >= 0 else ''}{_num(d.change, 6)})")
            if self.unchanged:
                out.append(f"  differ, but change nothing for this query: {', '.join(self.unchanged)}")
            if self.aggregate_only:
                out.append("  differ in which queries count or how they are averaged: "
                           + ", ".join(self.aggregate_only))
        return title, head, body, out

    def table(self) -> str:
        title, head, body, below = self._parts()
        # the ideal side is set off by a bar, its item ids left-aligned
        iw = max([len(head[7])] + [len(row[7]) for row in body]) if self.ideal_rows else 0
        head = head[:7] + ["| " + head[7]] + head[8:]
        body = [row[:7] + ["| " + row[7].ljust(iw)] + row[8:] for row in body]
        return "\n".join([title] + text_table(head, body, align="right", rule=False) + below)

    def __repr__(self) -> str:
        vs = f", against {self.compare.name!r}: {self.value_b!r}" if self.compare is not None else ""
        return (f"<Explanation of query {self.query!r}: {self.measure} = {self.value!r} under "
                f"{self.convention.name!r}{vs}>")

    #: Positions a notebook shows (:meth:`_repr_html_`); the others are counted below the table.
    HTML_ROWS = 50

    def _repr_html_(self) -> str:
        """The table as HTML, its first :attr:`HTML_ROWS` positions (a 2,000-item list stays a few kilobytes); the
        positions left out are counted, and ``str()`` or :meth:`to_pandas` give them all."""
        from .._base.display import html_table

        title, head, body, below = self._parts(self.HTML_ROWS)
        n = max(len(self.rows), len(self.ideal_rows))
        more = [f"{n - self.HTML_ROWS} more positions not shown (of {n}); print() or to_pandas() gives all of "
                "them"] if n > self.HTML_ROWS else []
        return html_table(head, body, title=title, notes=more + [line for line in below if line.strip()],
                          left=(1, 7))

    def __str__(self) -> str:
        return self.table()


def _finite(*xs: Any) -> bool:
    return all(x is not None and not math.isnan(x) for x in xs)


def _plain(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): v for k, v in x.items()}
    return x


def _num(x: Any, digits: int = 4) -> str:
    if x is None:
        return ""
    if isinstance(x, float) and math.isnan(x):
        return "skipped"
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.{digits}f}"


def _match(ids: Any, query: Any) -> np.ndarray:
    ids = as_ids(ids)
    if is_str_ids(ids):
        import pyarrow.compute as pc

        return np.asarray(arrow_to_numpy(pc.equal(arrow_ids(ids), str(query))), dtype=bool)
    try:
        return ids == int(str(query))
    except ValueError:
        return np.zeros(ids.shape[0], dtype=bool)


def _subset(j: Judgments, r: Rankings, query: Any) -> tuple[Judgments, Rankings]:
    if r.qid is None:
        r = Rankings(j.qid, j.item, score=r.score, rank=r.rank, source=r.source, label=np.asarray(j.label, float))
    assert r.qid is not None and r.item is not None
    jm = _match(j.qid, query)
    rm = _match(r.qid, query)
    if not jm.any() and not rm.any():
        sample = sorted({str(x) for x in ids_to_numpy(as_ids(r.qid))[:100000]})[:10]
        raise InputError(f"query {query!r} is neither judged nor ranked; some ranked queries: {', '.join(sample)}.")
    if jm.any():
        js = Judgments(filter_ids(as_ids(j.qid), jm), filter_ids(as_ids(j.item), jm), np.asarray(j.label)[jm],
                       source=j.source)
    else:
        js = Judgments(np.array([str(query)], dtype=object), np.array(["\x00none"], dtype=object), np.zeros(1),
                       source=j.source)
    rs = Rankings(filter_ids(as_ids(r.qid), rm), filter_ids(as_ids(r.item), rm),
                  score=None if r.score is None else r.score[rm], rank=None if r.rank is None else r.rank[rm],
                  source=r.source, label=None if r.label is None else r.label[rm],
                  # no ranked row: the query's list is empty (its ideal list still counts)
                  empty_qids=None if rm.any() else take_ids(as_ids(j.qid), np.flatnonzero(jm)[:1]))
    return js, rs


def _explained(measure: Any, k: int | None) -> Measure:
    """The NDCG or DCG measure ``explain`` shows: ``"ndcg"`` / ``"dcg"`` with ``k``, or one measure of either
    family in any spelling (``ndcg_exp@10``, ``nDCG(dcg='exp-log2')@10``, ``ir_measures.nDCG@10``)."""
    if isinstance(measure, str) and measure in ("ndcg", "dcg"):
        return parse_measure(measure if k is None else f"{measure}@{k}")[0]
    why = "`measure` must be 'ndcg', 'dcg' or one NDCG or DCG measure (e.g. 'ndcg_exp@10', \"nDCG(dcg='exp-log2')@10\")"
    try:
        ms = parse_measure(measure)
    except InvalidParameterError as err:
        raise InvalidParameterError(f"{why}; {err}") from None
    if len(ms) != 1 or ms[0].family not in ("ndcg", "dcg") or ms[0].empty is not None:
        raise InvalidParameterError(f"{why}; got {str(measure)!r}.")
    m = ms[0]
    if k is not None and m.k is not None and k != m.k:
        raise InvalidParameterError(f"`k` is {k} but measure {m.key!r} has cutoff {m.k}: give one of them.")
    return m if k is None or m.k is not None else replace(m, k=k, key=f"{m.key}@{k}")


def _query_value(js: Judgments, rs: Rankings, measure: Measure, conv: Convention) -> float:
    p = build_problem(js, rs, conv.replace(queries="both", missing_ranking="zero", min_items=0))
    vals, _ = run_plan(make_plan(conv, [measure]), p)
    return float(vals[0, 0])


@renamed_keywords(rankings="run")
def explain(
    judgments: Any,
    run: Any = None,
    query: Any = None,
    *,
    k: int | None = None,
    measure: str = "ndcg",
    convention: str | Convention | None = None,
    compare: str | Convention | None = None,
    **options: Any,
) -> Explanation:
    """Show how one query's DCG and NDCG are built, position by position.

    Parameters
    ----------
    judgments, run : any input accepted by :func:`ranklens.evaluate` (``rankings=`` is the deprecated name of ``run``)
    query : query id
        The query to explain.
    k : int, optional
        Cutoff (``None``: the whole list).
    measure : {"ndcg", "dcg"} or a measure, default="ndcg"
        Or one NDCG or DCG measure in any spelling, with its cutoff and gain: ``"ndcg_exp@10"``,
        ``"nDCG(dcg='exp-log2')@10"``, ``ir_measures.nDCG@10`` (under ``convention="ir_measures"``, computed
        as the provider ir_measures picks for it computes it).
    convention : str or Convention, default="ranklens"
    compare : str or Convention, optional
        A second convention: the explanation then lists which of the
        choices that differ change this query's value, and by how much.
    **options
        Column names for tables, as in :func:`ranklens.evaluate`.

    Examples
    --------
    >>> import ranklens
    >>> qrels = {"x": {"a": 0, "b": 0, "c": 1, "d": 1, "e": 1}}
    >>> run = {"x": {"a": 5, "b": 4, "c": 3, "d": 2, "e": 1}}
    >>> e = ranklens.explain(qrels, run, "x", k=3)
    >>> round(e.dcg, 5), round(e.idcg, 5), round(e.value, 5)
    (0.5, 2.13093, 0.23464)
    >>> [r["item"] for r in e.ideal_rows]
    ['c', 'd', 'e']
    """
    if query is None:
        raise InvalidParameterError("`query` is required: which query to explain.")
    if k is not None and (not isinstance(k, int) or k < 1):
        raise InvalidParameterError(f"`k` must be an integer >= 1 or None; got {k!r}.")
    m = _explained(measure, k)
    family, mname, k = m.family, m.key, m.k
    columns, formats, overrides = split_options(options, own=("query", "k", "measure", "convention", "compare"))
    conv = measure_convention(get_convention(convention, **overrides), m)  # ir_measures: its provider's
    j, r = load_inputs(judgments, run, columns, formats)
    js, rs = _subset(j, r, query)
    eff_k = k if k is not None else (conv.default_cutoff if family == "ndcg" else None)

    rows: list[dict[str, Any]] = []
    ideal_rows: list[dict[str, Any]] = []
    note = ""
    # an empty ranked list too: its ideal list and the convention's empty rule still apply
    p = build_problem(js, rs, conv.replace(queries="both", missing_ranking="zero", min_items=0))
    t = _table(p, make_plan(conv, [m]))
    v_item, v_score, v_label = t["item"], t["score"], t["label"]
    n = v_score.shape[0]
    depth = n if eff_k is None else min(eff_k, n)
    if conv.ties in ("average", "shared_rank") and n > 1 and bool((v_score[1:] == v_score[:-1]).any()):
        note = "tied scores: each tied item gets the mean gain of its tie group" if conv.ties == "average" \
            else "tied scores: tied items share their truncated mean rank (Evidently)"
    running = np.cumsum(t["contribution"][:depth])
    for i in range(depth):
        lab = v_label[i]
        rows.append({
            "position": i + 1, "item": _py(v_item[i]), "score": float(v_score[i]),
            "relevance": None if math.isnan(lab) else float(lab), "gain": float(t["gain"][i]),
            "gain_used": float(t["gain_used"][i]), "discount": float(t["discount"][i]),
            "contribution": float(t["contribution"][i]), "running_dcg": float(running[i]),
        })
    dcg = float(running[-1]) if depth else 0.0
    ig, items = t["ideal_gain"], t["ideal_item"]
    idepth = ig.shape[0] if eff_k is None else min(eff_k, ig.shape[0])
    irunning = np.cumsum(t["ideal_contribution"][:idepth])
    for i in range(idepth):
        ideal_rows.append({"position": i + 1, "item": _py(items[i]), "gain": float(ig[i]),
                           "contribution": float(t["ideal_contribution"][i]),
                           "running_idcg": float(irunning[i])})
    idcg = float(irunning[-1]) if idepth else 0.0
    if not rows:
        note = note or "the query has no ranked list: DCG is 0"
    value = _query_value(js, rs, m, conv) if family == "ndcg" else dcg

    exp = Explanation(str(query), mname, conv, eff_k, rows, ideal_rows, float(dcg), float(idcg), value, note)
    if compare is not None:
        other = measure_convention(get_convention(compare), m)
        exp.compare = other
        exp.value_b = _query_value(js, rs, m, other)
        diffs = conv.differences(other)
        current = conv
        prev = value
        for name in VALUE_FIELDS:
            if name not in diffs:
                continue
            current = current.replace(**{name: diffs[name][1]})
            try:
                after = _query_value(js, rs, m, current)
            except Exception:  # a step may be invalid alone (e.g. labels refused); skip its attribution
                continue
            delta = after - prev if _finite(after, prev) else math.nan
            if after == prev or (math.isnan(after) and math.isnan(prev)):
                exp.unchanged.append(name)
            else:
                exp.differences.append(Difference(name, diffs[name][0], diffs[name][1], after, delta))
            prev = after
        exp.aggregate_only = [f for f in AGGREGATE_FIELDS if f in diffs]
    return exp


def _table(p: Problem, plan: Plan) -> dict[str, np.ndarray]:
    """The DCG table of the problem's one query for the plan's one measure, computed by the kernels
    (their order, gains, tie averaging, discounts, with the plan's kernel arguments), with the item
    ids of both lists."""
    rows = _rows(p.r_start, p.r_end, p.r_idx)
    jrows = _rows(p.j_start, p.j_end, p.j_idx)
    o, g, used, disc, contrib, io, ig, ic = explain_query(
        p.score[rows], p.label[rows], rows, p.order_mode, p.item_offs, p.item_data,
        np.ascontiguousarray(p.j_label[jrows]), plan.ideal_judgments, p.ties, plan.log_base, plan.negative_zero,
        plan.gain_threshold, int(plan.gain_kinds[0]), plan.map_keys, plan.map_vals, int(plan.cutoffs[0]),
    )
    item = ids_to_numpy(take_ids(p.r_item, rows[o]))
    ideal_item = ids_to_numpy(take_ids(p.j_item, jrows[io])) if plan.ideal_judgments else item[io]
    return {"item": item, "score": p.score[rows][o], "label": p.label[rows][o], "gain": g, "gain_used": used,
            "discount": disc, "contribution": contrib, "ideal_item": ideal_item, "ideal_gain": ig,
            "ideal_contribution": ic}


def _rows(start: np.ndarray, end: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The rows of the problem's first (only) query."""
    lo, hi = int(start[0]), int(end[0])
    return np.arange(lo, hi, dtype=np.int64) if idx.shape[0] == 0 else np.ascontiguousarray(idx[lo:hi], np.int64)


def _py(x: Any) -> Any:
    return x.item() if isinstance(x, np.generic) else x
