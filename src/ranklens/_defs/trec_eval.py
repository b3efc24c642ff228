"""trec_eval's measures: their names, parameters and nicknames, and the ranklens measure computing each.

The public face of this module is :mod:`ranklens.trec_eval_measures`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidParameterError

__all__ = ["NICKNAMES", "OTHER_FORMATS", "TREC_EVAL_VERSION", "TREC_MEASURES", "Line", "TrecEvalError", "TrecMeasure",
           "c_atof", "c_atol", "c_fixed", "c_long", "c_lround", "check_gain_order", "mark_measure",
           "measure_lines", "whole_number"]

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

class TrecEvalError(InvalidParameterError):
    """A mistake trec_eval itself stops on, with the exit status it stops with: 1 a usage error (an
    unknown flag or measure), 2 a parameter it cannot initialise (a cutoff of 0, duplicate cutoffs,
    malformed pairs), 4 a measure it cannot calculate (utility without 4 coefficients)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def mark_measure(text: str, params: dict[str, str]) -> list[str]:
    """The measures ``-m text`` marks (a name or a nickname); its parameters are kept in ``params`` (the
    first ones given for a name win, as in trec_eval). An unknown name is a usage error (status 1).

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
            raise TrecEvalError(f"-m {text}: improper measure in parameter {name!r} (nothing after the '.').", 1)
        params.setdefault(name, param)
    if name in NICKNAMES:
        return list(NICKNAMES[name])
    if name in TREC_MEASURES:
        return [name]
    if name in OTHER_FORMATS or name.startswith("prefs_"):
        raise InvalidParameterError(f"-m {text}: {name} needs trec_eval's preference or judgment-group formats "
                                    "(-R prefs, qrels_prefs, qrels_jg), which ranklens trec_eval does not read.")
    raise TrecEvalError(f"illegal measure {text!r} (trec_eval has no such measure).", 1)


# ---------------------------------------------------------------------------------------------------------
# numbers as trec_eval's C reads and prints them (glibc on x86-64)

_C_SPACE = " \t\n\v\f\r"  # isspace() in the C locale: ASCII only (a full-width digit or space is text)
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_C_FLOAT = re.compile(
    r"[ \t\n\v\f\r]*([+-]?)(?:(0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)"
    r"|((?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)|([iI][nN][fF](?:[iI][nN][iI][tT][yY])?)"
    r"|([nN][aA][nN](?:\([0-9A-Za-z_]*\))?))")


def c_atol(text: str) -> tuple[int, int]:
    """C's ``atol`` (``strtol`` in base 10): the integer ``text`` starts with, saturated to a 64-bit
    ``long``, and how many characters it read (0: none, the value is 0). Digits and spaces are ASCII only.

    Examples
    --------
    >>> c_atol("23.4"), c_atol("1e99"), c_atol(" -7x"), c_atol("\\uff15"), c_atol("99999999999999999999")
    ((23, 2), (1, 1), (-7, 3), (0, 0), (9223372036854775807, 20))
    >>> c_atol("-" + "9" * 5000)[0], c_atol("0" * 5000 + "12")
    (-9223372036854775808, (12, 5002))
    """
    i = 0
    while i < len(text) and text[i] in _C_SPACE:
        i += 1
    j = i + (i < len(text) and text[i] in "+-")
    k = j
    while k < len(text) and "0" <= text[k] <= "9":
        k += 1
    if k == j:
        return 0, 0
    return max(_LONG_MIN, min(_LONG_MAX, whole_number(text[i:k]))), k


def whole_number(text: str) -> int:
    """The integer of a sign and ASCII digits, or one beyond any 64-bit ``long`` (of that sign) when it has
    more than 19 significant digits (so Python's limit on converting long digit strings is never reached)."""
    text = text.strip()
    digits = text.lstrip("+-").lstrip("0") or "0"
    sign = -1 if text.startswith("-") else 1
    return sign * (10**20 if len(digits) > 19 else int(digits))


def c_atof(text: str) -> tuple[float, int]:
    """C's ``atof`` (``strtod``): the number ``text`` starts with (decimal, hexadecimal, ``inf``,
    ``nan``; an overflow is infinite) and how many characters it read (0: none, the value is 0).

    Examples
    --------
    >>> c_atof(".5"), c_atof("1.5.2"), c_atof("0x1p-1"), c_atof("1e400"), c_atof("abc")
    ((0.5, 2), (1.5, 3), (0.5, 6), (inf, 5), (0.0, 0))
    """
    m = _C_FLOAT.match(text)
    if m is None:
        return 0.0, 0
    sign, hexa, dec, inf, _ = m.groups()
    if hexa:
        try:
            value = float.fromhex(hexa)
        except OverflowError:
            value = math.inf
    else:
        value = float(dec) if dec else math.inf if inf else math.nan
    return (-value if sign == "-" else value), m.end()


def c_long(x: float) -> int:
    """C's ``(long) x`` on x86-64: truncated; NaN, infinities and values out of range give ``LONG_MIN``."""
    return math.trunc(x) if math.isfinite(x) and -(2.0**63) <= x < 2.0**63 else _LONG_MIN


def c_lround(x: Any) -> Any:
    """glibc's ``lround`` on x86-64, of a number or an array: halves away from zero; NaN, infinities and
    values out of range give ``LONG_MIN``.

    >>> c_lround(2.5), c_lround(-0.5), c_lround(0.49999999999999994), c_lround(float("nan"))
    (3, -1, 0, -9223372036854775808)
    """
    v = np.asarray(x, dtype=np.float64)
    ok = np.isfinite(v) & (v >= -(2.0**63)) & (v < 2.0**63)
    t = np.trunc(np.where(ok, v, 0.0))
    r = t + np.where(np.abs(np.where(ok, v, 0.0) - t) >= 0.5, np.sign(v), 0.0)  # v - trunc(v) is exact
    out = np.where(ok, r, -(2.0**63)).astype(np.int64)
    return int(out) if out.ndim == 0 else out


def c_fixed(x: float, decimals: int, width: int = 0) -> str:
    """``printf("%{width}.{decimals}f", x)``: the sign of a NaN is printed (``-nan``, as glibc does).

    Examples
    --------
    >>> c_fixed(float("-nan"), 4, 6), c_fixed(1e99, 2)[:8], c_fixed(-0.0, 2)
    ('  -nan', '99999999', '-0.00')
    """
    if math.isnan(x):
        text = "-nan" if math.copysign(1.0, x) < 0 else "nan"
    else:
        text = f"{x:.{decimals}f}"
    return text.rjust(width)


def _read(text: str, reader: str, where: str, notes: list[str] | None) -> Any:
    """One number of a parameter list read with C's ``atol`` or ``atof``; a note in ``notes`` when what
    was read is not what is written (text left over, a saturated integer, no number at all)."""
    value, used = c_atol(text) if reader == "atol" else c_atof(text)
    if notes is not None:
        left = text[used:]
        if not used:
            notes.append(f"{where}: {text!r} is not a number; read as {value} (C's {reader})")
        elif left or (reader == "atol" and value in (_LONG_MIN, _LONG_MAX) and whole_number(text[:used]) != value):
            how = f"stops at {left[:1]!r}" if left else "saturates"
            notes.append(f"{where}: {text!r} read as {value!r} (C's {reader} {how})")
    return value


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
    levels: tuple[float, ...] = ()  # iprec_at_recall / 11pt_avg: the recall levels as trec_eval read them
    beyond: float | None = None  # iprec_at_recall above 1: per query iprec at 0 or at 1 or 0 (by lround(x R))


_DEFAULT_11PT = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def measure_lines(tm: TrecMeasure, param: str | None,
                  notes: list[str] | None = None) -> tuple[list[Line], dict[float, float] | None]:
    """The lines one measure prints with its parameters (``None``: its defaults), each with the ranklens
    measure computing it (``None``: not computed), and the gains of ``ndcg.1=3,2=9`` (else ``None``).

    Parameters are read as trec_eval reads them (C's ``atol`` / ``atof``: ``P.1.5`` is ``P_1``, a full-width
    digit is no digit); when a number is read as something else than written, a line saying so is added
    to ``notes``. What trec_eval refuses raises :class:`TrecEvalError` with its exit status.

    Examples
    --------
    >>> lines, gains = measure_lines(TREC_MEASURES["P"], "10,5")
    >>> [(line.name, line.key) for line in lines], gains
    ([('P_5', 'P.5'), ('P_10', 'P.10')], None)
    >>> [line.name for line in measure_lines(TREC_MEASURES["iprec_at_recall"], ".5,.25")[0]]
    ['iprec_at_recall_0.25', 'iprec_at_recall_0.50']
    >>> measure_lines(TREC_MEASURES["ndcg"], "1=3,2=9")[1]
    {1.0: 3.0, 2.0: 9.0}
    >>> notes = []; [line.name for line in measure_lines(TREC_MEASURES["P"], "1e99", notes)[0]], notes
    (['P_1'], ["-m P.1e99: '1e99' read as 1 (C's atol stops at 'e')"])
    """
    if tm.params == "none":  # parameters given to a measure that takes none are not read (nor named)
        return [Line(tm.name, tm.spelling, tm.kind)], None
    text = param if param is not None else tm.default
    where = f"-m {tm.name}.{text}"
    items = text.split(",")
    if tm.kind == "relstring":  # only its first number counts (m_relstring.c: (long) params[0])
        width = c_long(_read(items[0], "atof", where, notes))
        return [Line(tm.name if param is None else f"{tm.name}_{param}", None, tm.kind, width=width)], None
    if tm.params == "long":
        return _long_cutoffs(tm, [_read(p, "atol", where, notes) for p in items], where), None
    if tm.params == "double":
        return _double_cutoffs(tm, [_read(p, "atof", where, notes) for p in items], where), None
    name = tm.name if param is None else f"{tm.name}_{param}"
    if tm.params == "pairs":
        return _pair_lines(tm, name, param, where, notes)
    one = tm.spelling is not None and "{}" in tm.spelling  # the spelling takes one number (set_F's beta...)
    values = [_read(p, "atof", where, notes) for p in items]
    if tm.name == "utility":  # p1 a + p2 b + p3 c + p4 d of the counts (m_utility.c); 4 coefficients
        if len(values) != 4:
            raise TrecEvalError(f"-m utility.{param}: improper number of coefficients (utility takes 4; trec_eval "
                                "stops at the first query: Can't calculate measure 'utility').", 4)
        return [Line(name, "utility", tm.kind, coefficients=() if param is None else tuple(values))], None
    if tm.name == "11pt_avg":
        return [_pt11_line(name, tuple(values), param is None)], None
    if one:
        x = values[0]
        ok = math.isfinite(x) and x >= 0.0  # set_F's beta
        return [Line(name, _fill(tm, repr(x)) if ok else None, tm.kind)], None
    return [Line(name, None, tm.kind)], None  # other parameters than the default: not computed


def _long_cutoffs(tm: TrecMeasure, cuts: list[int], where: str) -> list[Line]:
    """Integer cutoffs sorted as trec_eval sorts them (its comparison is ``(int) (a - b)``: a spread of
    2**31 or more has no order it keeps, and is refused); 0 or less and duplicates are its errors."""
    if len(cuts) > 1 and max(cuts) - min(cuts) >= 2**31:
        raise InvalidParameterError(f"{where}: ranklens trec_eval does not reproduce cutoffs 2**31 or more apart "
                                    "(trec_eval compares them as (int) (a - b), which overflows).")
    cuts = sorted(cuts)
    if cuts[0] <= 0:
        raise TrecEvalError(f"{where}: Negative cutoff detected (a cutoff read as {cuts[0]}; trec_eval: Cannot "
                            f"initialize measure '{tm.name}').", 2)
    if len(set(cuts)) < len(cuts):
        raise TrecEvalError(f"{where}: duplicate cutoffs detected (trec_eval: Cannot initialize measure "
                            f"'{tm.name}').", 2)
    return [Line(f"{tm.name}_{c}", _fill(tm, str(c)), tm.kind) for c in cuts]


def _double_cutoffs(tm: TrecMeasure, xs: list[float], where: str) -> list[Line]:
    """Fractional cutoffs (iprec_at_recall's recall levels, Rprec_mult's multiples), named ``%3.2f`` in
    a name of at most 9 more characters than the measure's, as trec_eval's ``append_double`` does."""
    if len(xs) > 1 and any(math.isnan(x) for x in xs):
        raise InvalidParameterError(f"{where}: ranklens trec_eval does not reproduce a NaN among other cutoffs "
                                    "(trec_eval's sort has no order for it).")
    xs = sorted(xs)
    if any(a == b for a, b in zip(xs, xs[1:])):
        raise TrecEvalError(f"{where}: duplicate cutoffs detected (trec_eval: Cannot initialize measure "
                            f"'{tm.name}').", 2)
    out = []
    for x in xs:
        name = f"{tm.name}_{c_fixed(x, 2, 3)}"[:len(tm.name) + 9]
        if tm.name == "iprec_at_recall":
            # lround(x R) <= 0 (x <= 0, NaN, infinite: LONG_MIN) is the level 0; above 1 it depends on R
            beyond = x > 1.0 and math.isfinite(x)  # from the levels 0 and 1 (the key) per query, by lround(x R)
            level = x if 0.0 <= x <= 1.0 else 1.0 if beyond else 0.0
            out.append(Line(name, _fill(tm, repr(level)), tm.kind, levels=(x,), beyond=x if beyond else None))
        else:  # Rprec_mult: (long) (x R + 0.9) of a negative or non-finite x is not reproduced
            out.append(Line(name, _fill(tm, repr(x)) if math.isfinite(x) and x >= 0.0 else None, tm.kind))
    return out


def _pt11_line(name: str, xs: tuple[float, ...], default: bool) -> Line:
    """11pt_avg: the interpolated precisions at the levels, added from the highest down, / their number
    (m_11pt_avg.c: it walks the levels as given, which must be ascending; a level of 0 or less is the level 0)."""
    if default:
        return Line(name, "11pt_avg", "double", levels=_DEFAULT_11PT)
    ok = list(xs) == sorted(xs) and all(math.isfinite(x) and x <= 1.0 for x in xs)
    keys = tuple(f"iprec_at_recall(recall={max(x, 0.0)!r})" for x in reversed(xs))
    return Line(name, "11pt_avg" if ok else None, "double", mean_of=keys if ok and xs != _DEFAULT_11PT else (),
                levels=xs)


_RBP_NOTE = ("rbp: trec_eval 10.0 rescales the gains between two bounds it never initialises (m_rbp.c: min, max), "
             "so its value depends on what its stack held; ranklens gives it for bounds that start at 0 (each label / "
             "the query's largest label, when that is above 1), which is what trec_eval prints when they hold 0")


def _pair_lines(tm: TrecMeasure, name: str, param: str | None, where: str,
                notes: list[str] | None) -> tuple[list[Line], dict[float, float] | None]:
    """Measures with ``name=value`` pairs: the gains of G, ndcg... and rbp_resid's p."""
    if param is None:
        one = tm.spelling is not None and "{}" in tm.spelling
        if tm.name == "rbp" and notes is not None:
            notes.append(_RBP_NOTE)
        return [Line(name, _fill(tm, repr(c_atof(tm.default)[0])) if one else tm.spelling, tm.kind)], None
    pairs = _pairs(param, where)
    if tm.name in ("ndcg", "dcg", "ideal_dcg", "G", "ndcg_rel", "Rndcg"):
        gains = _gains(pairs, where, notes)
        if any(g < 0 for g in gains.values()):
            raise InvalidParameterError(f"-m {tm.name}.{param}: ranklens trec_eval does not reproduce a negative gain "
                                        "(trec_eval counts it in the ranked list but leaves it out of the ideal one).")
        if tm.name in ("G", "ndcg_rel", "Rndcg") and any(g != int(g) for g in gains.values() if math.isfinite(g)):
            raise InvalidParameterError(
                f"-m {tm.name}.{param}: ranklens trec_eval takes whole-number gains for {tm.name}: trec_eval "
                "orders the gain levels by the integer part of their differences (gain_init.c, comp_rel_gain), "
                "so a fractional gain's place in its ideal list is not reproduced.")
        return [Line(name, tm.spelling if all(math.isfinite(g) for g in gains.values()) else None, tm.kind)], gains
    if tm.name == "rbp_resid":  # its last p=x pair (m_rbp_resid.c); other pairs are not read
        ps = [_read(value, "atof", where, notes) for key, value in pairs if key == "p"]
        p = ps[-1] if ps else 0.9
        if not 0.0 < p < 1.0:
            raise InvalidParameterError(f"-m rbp_resid.{param}: p must be a persistence between 0 and 1 "
                                        "(exclusive).")
        # under -c a missing query's stand-in unjudged document is kept under this name: p + (1 - p) * 1
        return [Line(name, f"rbp_resid(p={p!r})", tm.kind, stand_in=p + (1.0 - p) * 1.0)], None
    # rbp's p=x pairs: trec_eval 10's m_rbp.c rescales the gains with uninitialised min/max: not computed
    return [Line(name, None, tm.kind)], None


def _fill(tm: TrecMeasure, value: str) -> str | None:
    return None if tm.spelling is None else tm.spelling.format(value)


def _pairs(text: str, where: str) -> list[tuple[str, str]]:
    """``name=value`` pairs as trec_eval's ``get_param_pairs`` splits them (a ',' after ',' or at the
    start, '=' after '=', or no '=' last is its "malformed pair parameters", status 2)."""
    last = ","
    for ch in text:
        if ch in ",=":
            if ch == last:
                last = ","
                break
            last = ch
    if last != "=":
        raise TrecEvalError(f"{where}: malformed pair parameters in {text!r} (write level=gain,...; trec_eval: "
                            "Cannot initialize measure).", 2)
    return [(key, value) for key, _, value in (p.partition("=") for p in text.split(","))]


def _gains(pairs: list[tuple[str, str]], where: str, notes: list[str] | None) -> dict[float, float]:
    """trec_eval's ``level=gain`` pairs (gain_init.c: a level that is not ``[+-]digits`` is skipped; levels not
    given keep their value as gain). A level given twice is refused: which gain trec_eval uses then depends
    on its sort of the gains."""
    gains: dict[float, float] = {}
    for level, value in pairs:
        digits = level[1:] if level[:1] in "+-" else level
        if not digits or not all("0" <= ch <= "9" for ch in digits):
            if notes is not None:
                notes.append(f"{where}: level {level!r} is not an integer; trec_eval skips the pair {level}={value}")
            continue
        if float(int(level)) in gains:
            raise InvalidParameterError(f"{where}: level {int(level)} is given twice; ranklens trec_eval does not "
                                        "reproduce which gain trec_eval takes then (it depends on its sort).")
        gains[float(int(level))] = _read(value, "atof", where, notes)
    return gains


def check_gain_order(asked: str, gains: dict[float, float], max_label: int) -> None:
    """Refuse ``-m ndcg.LEVEL=GAIN,...`` when trec_eval's ideal list is not reproduced: it sorts the gain levels
    (the levels given, and every level from 0 to the largest label of the qrels ``max_label`` with its own value
    as gain) by ``(int) (g1 - g2)`` (gain_init.c, comp_rel_gain), which calls two gains less than 1 apart equal,
    so their order, and the ideal list, is left to the C library's sort. Gains at least 1 apart (or equal) are
    ordered as by their value, as ranklens orders them.

    Examples
    --------
    >>> check_gain_order("ndcg.1=3,2=9,4=4.5", {1.0: 3.0, 2.0: 9.0, 4.0: 4.5}, 3)
    >>> check_gain_order("ndcg.1=0.5", {1.0: 0.5}, 1)
    Traceback (most recent call last):
    ...
    ranklens.errors.InvalidParameterError: -m ndcg.1=0.5: the gains 0.5 (level 1) and 0.0 (level 0) are less ...
    """
    named = {level: gain for level, gain in gains.items() if math.isfinite(gain)}
    for level, gain in named.items():
        near = {float(math.floor(gain)), float(math.ceil(gain))}  # a default gain (an integer level) this close
        rivals = [(other, other) for other in near if other not in gains and 0 <= other <= max_label]
        rivals += [(lv, g) for lv, g in named.items() if lv != level]
        for other_level, other in rivals:
            if other != gain and abs(other - gain) < 1.0:
                raise InvalidParameterError(
                    f"-m {asked}: the gains {gain!r} (level {int(level)}) and {other!r} (level {int(other_level)}) "
                    "are less than 1 apart: trec_eval orders the gain levels by the integer part of their "
                    "differences (gain_init.c, comp_rel_gain), so their order in its ideal list is its C library's "
                    "sort's and is not reproduced.")
