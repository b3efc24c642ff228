"""trec_eval's measures: their names, parameters and nicknames, and the ranklens measure computing each.

The public face of this module is :mod:`ranklens.trec_eval_measures`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidParameterError

__all__ = ["NICKNAMES", "OTHER_FORMATS", "TREC_EVAL_VERSION", "TREC_MEASURES", "Line", "TrecMeasure", "mark_measure",
           "measure_lines"]

#: The trec_eval release whose command line and output this module reproduces.
TREC_EVAL_VERSION = "10.0"

_CUTS = "5,10,15,20,30,100,200,500,1000"


@dataclass(frozen=True)
class TrecMeasure:
    """One trec_eval measure: its parameters, the ranklens measure computing it, how it is printed.

    Attributes
    ----------
    name : str
        trec_eval's name (``P``, ``ndcg_cut``, ``set_recall``...).
    params : {"none", "long", "double", "pairs", "values"}
        The parameters ``-m name.params`` takes: none, integer cutoffs, fractional cutoffs (one line each),
        ``level=gain`` pairs, or numbers (one line, named after them).
    default : str
        The parameters used when none are given (trec_eval's defaults).
    spelling : str or None
        The ranklens measure, with ``{}`` where a cutoff goes; ``None``: ranklens has no such measure.
    kind : {"double", "long", "runid", "count", "relstring"}
        Printed with 4 decimals, as an integer, the run's tag, the number of queries, or (relstring, per query
        only) the labels of the first items as a quoted string.
    per_query : bool
        Printed for each query with ``-q`` (trec_eval prints ``gm_map``, ``num_q`` and ``runid`` only in
        the summary).
    """

    name: str
    params: str = "none"
    default: str = ""
    spelling: str | None = None
    kind: str = "double"
    per_query: bool = True


def _m(name: str, spelling: str | None, **kw: Any) -> TrecMeasure:
    return TrecMeasure(name, spelling=spelling, **kw)


#: Every measure of trec_eval's qrels format, in the order trec_eval computes and prints them (its
#: ``measures.c``); the preference and judgment-group measures need ``-R`` formats that are refused.
TREC_MEASURES: dict[str, TrecMeasure] = {m.name: m for m in [
    _m("runid", None, kind="runid", per_query=False),
    _m("num_q", None, kind="count", per_query=False),
    _m("num_ret", "num_ret", kind="long"),
    _m("num_rel", "num_rel", kind="long"),
    _m("num_rel_ret", "num_rel_ret", kind="long"),
    _m("map", "map"),
    _m("gm_map", "gm_map", per_query=False),
    _m("Rprec", "Rprec"),
    _m("bpref", "bpref"),
    _m("recip_rank", "recip_rank"),
    _m("iprec_at_recall", "iprec_at_recall(recall={})", params="double", default="0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1"),
    _m("P", "P.{}", params="long", default=_CUTS),
    _m("relstring", None, params="values", default="10", kind="relstring"),
    _m("recall", "recall.{}", params="long", default=_CUTS),
    _m("infAP", "infAP"),
    _m("gm_bpref", "gm_bpref", per_query=False),
    _m("Rprec_mult", "Rprec_mult(mult={})", params="double", default="0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0"),
    _m("utility", "utility", params="values", default="1.0,-1.0,0.0,0.0"),
    _m("11pt_avg", "11pt_avg", params="values", default="0.0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1.0"),
    _m("binG", "binG"),
    _m("G", "G", params="pairs"),
    _m("dcg", "dcg", params="pairs"),
    _m("ideal_dcg", "idcg", params="pairs"),
    _m("ndcg", "ndcg", params="pairs"),
    _m("ndcg_rel", "ndcg_rel", params="pairs"),
    _m("Rndcg", "Rndcg", params="pairs"),
    _m("ndcg_cut", "ndcg_cut.{}", params="long", default=_CUTS),
    _m("map_cut", "map_cut.{}", params="long", default=_CUTS),
    _m("relative_P", "relative_P.{}", params="long", default=_CUTS),
    _m("success", "success.{}", params="long", default="1,5,10"),
    _m("set_P", "P"),
    _m("set_relative_P", "set_relative_P"),
    _m("set_recall", "recall"),
    _m("set_map", "set_map"),
    _m("set_F", "set_F(beta={})", params="values", default="1.0"),
    _m("num_nonrel_judged_ret", "num_nonrel_judged_ret", kind="long"),
    _m("yaap", None),
    # trec_eval's rbp: graded (label / the query's largest label when above 1) whatever -l says, p = 0.9 unless
    # given (the trec_eval10 convention's rbp); p=x pairs are not used (trec_eval also reads them as gains)
    _m("rbp", "rbp(p={})", params="pairs", default="0.9"),
    _m("rbp_resid", "rbp_resid(p={})", params="pairs", default="0.9"),
    _m("unj", "unj.{}", params="long", default="5,10,20"),
]}

#: trec_eval's nicknames for sets of measures (``-m official`` is the default).
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid", "infAP",
                 "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut",
                 "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P", "set_map",
                 "set_F", "num_nonrel_judged_ret"),
}

#: trec_eval measures of the other rel_info formats (``-R prefs``, ``qrels_prefs``, ``qrels_jg``).
OTHER_FORMATS = ("all_prefs", "prefs", "qrels_jg", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg")

def mark_measure(text: str, params: dict[str, str]) -> list[str]:
    """The measures ``-m text`` marks (a name or a nickname); its parameters are kept in ``params`` (the
    first ones given for a name win, as in trec_eval).

    Examples
    --------
    >>> params = {}
    >>> mark_measure("P.5,10", params), mark_measure("P.20", params), params
    (['P'], ['P'], {'P': '5,10'})
    >>> mark_measure("official", params)[:4]
    ['runid', 'num_q', 'num_ret', 'num_rel']
    """
    name, dot, param = text.partition(".")
    if dot:
        if not param:
            raise InvalidParameterError(f"-m {text}: improper measure in parameter {name!r} (nothing after the '.').")
        params.setdefault(name, param)
    if name in NICKNAMES:
        return list(NICKNAMES[name])
    if name in TREC_MEASURES:
        return [name]
    if name in OTHER_FORMATS or name.startswith("prefs_"):
        raise InvalidParameterError(f"-m {text}: {name} needs trec_eval's preference or judgment-group formats "
                                    "(-R prefs, qrels_prefs, qrels_jg), which ranklens trec_eval does not read.")
    raise InvalidParameterError(f"illegal measure {text!r} (trec_eval has no such measure).")


_NUMBER = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_LONG = re.compile(r"\s*[+-]?\d+")


def _atof(text: str) -> float:
    """C's ``atof``: the number the text starts with, 0 when it starts with none."""
    m = _NUMBER.match(text)
    return float(m.group()) if m else 0.0


def _atol(text: str) -> int:
    """C's ``atol``: the integer the text starts with (``23.4`` -> 23), 0 when it starts with none."""
    m = _LONG.match(text)
    return int(m.group()) if m else 0


@dataclass(frozen=True)
class Line:
    """One printed value: trec_eval's name for it and the ranklens measure computing it."""

    name: str
    key: str | None
    kind: str
    total: str | None = None  # the measure whose aggregate is printed on the 'all' line, when not `key`'s
    coefficients: tuple[float, ...] = ()  # utility's p1..p4 other than the default: from the counts
    width: int = 0  # relstring: the number of items whose labels are printed
    mean_of: tuple[str, ...] = ()  # 11pt_avg at other levels: the mean of these measures, added in this order
    stand_in: float = 0.0  # the value of a query missing from the run under -c (trec_eval's stand-in document)


def measure_lines(tm: TrecMeasure, param: str | None) -> tuple[list[Line], dict[float, float] | None]:
    """The lines one measure prints with its parameters (``None``: its defaults), each with the ranklens
    measure computing it (``None``: not computed), and the gains of ``ndcg.1=3,2=9`` (else ``None``).

    Examples
    --------
    >>> lines, gains = measure_lines(TREC_MEASURES["P"], "10,5")
    >>> [(line.name, line.key) for line in lines], gains
    ([('P_5', 'P.5'), ('P_10', 'P.10')], None)
    >>> [line.name for line in measure_lines(TREC_MEASURES["iprec_at_recall"], ".5,.25")[0]]
    ['iprec_at_recall_0.25', 'iprec_at_recall_0.50']
    >>> measure_lines(TREC_MEASURES["ndcg"], "1=3,2=9")[1]
    {1.0: 3.0, 2.0: 9.0}
    """
    text = param if param is not None else tm.default
    if tm.kind == "relstring":  # only its first number counts (m_relstring.c: (long) params[0])
        return [Line(tm.name if param is None else f"{tm.name}_{param}", None, tm.kind,
                     width=int(_atof(text.split(",")[0])))], None
    if tm.params == "long":
        cuts = sorted(_atol(p) for p in text.split(","))
        if cuts[0] <= 0 or len(set(cuts)) < len(cuts):
            raise InvalidParameterError(f"-m {tm.name}.{text}: cutoffs must be positive, without duplicates.")
        return [Line(f"{tm.name}_{c}", _fill(tm, str(c)), tm.kind) for c in cuts], None
    if tm.params == "double":
        levels = sorted(_atof(p) for p in text.split(","))
        if len(set(levels)) < len(levels):
            raise InvalidParameterError(f"-m {tm.name}.{text}: duplicate cutoffs.")
        return [Line(f"{tm.name}_{x:3.2f}", _fill(tm, repr(x)), tm.kind) for x in levels], None
    name = tm.name if param is None else f"{tm.name}_{param}"
    one = tm.spelling is not None and "{}" in tm.spelling  # the spelling takes one number (set_F's beta...)
    if param is None:
        return [Line(name, _fill(tm, repr(_atof(tm.default))) if one else tm.spelling, tm.kind)], None
    if tm.params == "pairs":
        if tm.name in ("ndcg", "dcg", "ideal_dcg", "G", "ndcg_rel", "Rndcg"):
            gains = _gains(tm.name, param)
            if tm.name in ("G", "ndcg_rel", "Rndcg") and any(g != int(g) for g in gains.values()):
                raise InvalidParameterError(
                    f"-m {tm.name}.{param}: ranklens trec_eval takes whole-number gains for {tm.name}: trec_eval "
                    "orders the gain levels by the integer part of their differences (gain_init.c, comp_rel_gain), "
                    "so a fractional gain's place in its ideal list is not reproduced.")
            return [Line(name, tm.spelling, tm.kind)], gains
        if tm.name == "rbp_resid":  # its last p=x pair (m_rbp_resid.c); other pairs are not read
            ps = [_atof(value) for key, eq, value in (pair.partition("=") for pair in param.split(",")) if key == "p"]
            p = ps[-1] if ps else 0.9
            if not 0.0 < p < 1.0:
                raise InvalidParameterError(f"-m rbp_resid.{param}: p must be a persistence between 0 and 1 "
                                            "(exclusive).")
            # under -c a missing query's stand-in unjudged document is kept under this name: p + (1 - p) * 1
            return [Line(name, f"rbp_resid(p={p!r})", tm.kind, stand_in=p + (1.0 - p) * 1.0)], None
        # rbp's p=x pairs: trec_eval 10's m_rbp.c rescales the gains with uninitialised min/max: not computed
        return [Line(name, None, tm.kind)], None
    values = [_atof(p) for p in param.split(",")]
    if one and len(values) == 1:
        return [Line(name, _fill(tm, repr(values[0])), tm.kind)], None
    if tm.name != "utility" and not one and values == [_atof(p) for p in tm.default.split(",")]:
        return [Line(name, tm.spelling, tm.kind)], None
    if tm.name == "utility":  # p1 a + p2 b + p3 c + p4 d of the counts (m_utility.c); 4 coefficients
        if len(values) != 4:
            raise InvalidParameterError(f"-m utility.{param}: utility takes 4 coefficients (trec_eval: improper "
                                        "number of coefficients).")
        return [Line(name, "utility", tm.kind, coefficients=tuple(values))], None
    if tm.name == "11pt_avg" and values == sorted(values) and all(0.0 <= x <= 1.0 for x in values):
        # the interpolated precisions at the levels, added from the highest down, / their number (m_11pt_avg.c)
        return [Line(name, "11pt_avg", tm.kind, mean_of=tuple(f"iprec_at_recall(recall={x!r})"
                                                                for x in reversed(values)))], None
    return [Line(name, None, tm.kind)], None  # other parameters than the default: not computed


def _fill(tm: TrecMeasure, value: str) -> str | None:
    return None if tm.spelling is None else tm.spelling.format(value)


def _gains(name: str, text: str) -> dict[float, float]:
    """trec_eval's ``level=gain`` pairs (levels not given keep their value as gain)."""
    pairs = [p.partition("=") for p in text.split(",")]
    if any(not eq or not level for level, eq, _ in pairs):
        raise InvalidParameterError(f"-m {name}.{text}: malformed pair parameters (write level=gain,...).")
    return {float(_atol(level)): _atof(gain) for level, _, gain in pairs}
