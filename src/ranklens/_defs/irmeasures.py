"""ir_measures' measure language: its strings and its ``Measure`` objects, and the providers behind them.

`ir_measures <https://ir-measur.es>`_ writes a measure as a Python expression, ``Name(param=value, ...)@at``
(``nDCG@10``, ``P(rel=2)@10``, ``nDCG(dcg='exp-log2')@10``, ``IPrec@0.5``), and computes each with the first
*provider* of its pipeline that supports it: pytrec_eval for most, its MS MARCO script for ``RR@k``, gdeval
for ``nDCG(dcg='exp-log2')@k`` and ``ERR@k``, its own code for ``Judged@k``.

This module reads that language the way ``ir_measures.parse_measure`` does (the same grammar, the same
names and aliases, the same parameter types, defaults and requirements), from a string or from an
``ir_measures`` object (recognised by its type's module and its ``NAME`` / ``params``; ir_measures is never
imported), into the fields of a :class:`ranklens.measures.Measure`: :func:`parse`. A name means the same
measure under every convention (``P(rel=2)@10`` is precision at 10 at relevance level 2 everywhere); how ties,
scores and queries are handled is the convention's. Under ``convention="ir_measures"`` each measure is
computed under the convention of the provider ir_measures itself picks for it: :func:`measure_convention`,
:func:`convention_groups` (an evaluation asking for measures of several providers computes each group
under its own and joins the columns; every provider averages over the judged queries).

What ranklens cannot reproduce is refused in one line naming the measure: :func:`refusal`.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Sequence
from typing import Any, Protocol

from ..errors import InvalidParameterError
from .conventions import Convention
from .presets import CONVENTIONS
from .registry import MAX_CUTOFF, param_refusal

__all__ = [
    "IR_MEASURES_NAMES", "PROVIDERS", "convention_groups", "is_ir_measures_object", "looks_like_ir_measures",
    "measure_convention", "parse", "provider", "refusal", "split_list", "well_formed",
]

#: ir_measures' name (or alias) -> the measure it registers, and the parameters that name fixes
#: (``NumRelRet`` is ``NumRet(rel=1)``, ``SetRelP`` is ``SetP(relative=True)``).
IR_MEASURES_NAMES: dict[str, tuple[str, tuple[tuple[str, Any], ...]]] = {
    "nDCG": ("nDCG", ()), "NDCG": ("nDCG", ()), "P": ("P", ()), "Precision": ("P", ()), "R": ("R", ()),
    "Recall": ("R", ()), "AP": ("AP", ()), "MAP": ("AP", ()), "RR": ("RR", ()), "MRR": ("RR", ()),
    "Rprec": ("Rprec", ()), "RPrec": ("Rprec", ()), "Success": ("Success", ()), "NumRet": ("NumRet", ()),
    "NumRelRet": ("NumRet", (("rel", 1),)), "NumRel": ("NumRel", ()), "NumQ": ("NumQ", ()), "SetP": ("SetP", ()),
    "SetRelP": ("SetP", (("relative", True),)), "SetR": ("SetR", ()), "SetF": ("SetF", ()), "SetAP": ("SetAP", ()),
    "ERR": ("ERR", ()), "Judged": ("Judged", ()), "Bpref": ("Bpref", ()), "BPref": ("Bpref", ()),
    "infAP": ("infAP", ()), "IPrec": ("IPrec", ()), "RBP": ("RBP", ()),
    # registered by ir_measures, not computed by ranklens (refused by name)
    **{n: (n, ()) for n in ("Accuracy", "alpha_DCG", "alpha_nDCG", "AP_IA", "MAP_IA", "BPM", "Compat", "ERR_IA",
                            "nERR_IA", "INSQ", "INST", "NERR8", "NERR9", "NERR10", "NERR11", "NRBP", "nNRBP",
                            "P_IA", "SDCG", "StRecall")},
    "α_DCG": ("alpha_DCG", ()), "α_nDCG": ("alpha_nDCG", ()),
}

_INT, _BOOL, _STR, _DICT, _FLOAT = "int", "bool", "str", "dict", "float"
#: Per ir_measures measure: its parameters as ir_measures declares them (type, required, default, choices),
#: and the parameter ``@`` sets (``AT_PARAM``: the cutoff, or IPrec's recall level).
_PARAMS: dict[str, dict[str, tuple[str, bool, Any, tuple[Any, ...]]]] = {
    "nDCG": {"cutoff": (_INT, False, None, ()), "dcg": (_STR, False, "log2", ("log2", "exp-log2")),
             "gains": (_DICT, False, None, ()), "judged_only": (_BOOL, False, False, ())},
    **{n: {"cutoff": (_INT, n in ("P", "R", "Success"), None, ()), "rel": (_INT, False, 1, ()),
           "judged_only": (_BOOL, False, False, ())} for n in ("P", "R", "AP", "RR", "Success")},
    "Rprec": {"rel": (_INT, False, 1, ()), "judged_only": (_BOOL, False, False, ())},
    "NumRet": {"rel": (_INT, False, None, ())},
    "NumRel": {"rel": (_INT, False, 1, ())},
    "NumQ": {},
    "SetP": {"rel": (_INT, False, 1, ()), "relative": (_BOOL, False, False, ()),
             "judged_only": (_BOOL, False, False, ())},
    "SetR": {"rel": (_INT, False, 1, ())},
    "SetF": {"rel": (_INT, False, 1, ()), "beta": (_FLOAT, False, 1.0, ()), "judged_only": (_BOOL, False, False, ())},
    "SetAP": {"rel": (_INT, False, 1, ()), "judged_only": (_BOOL, False, False, ())},
    "ERR": {"cutoff": (_INT, False, None, ())},
    "Judged": {"cutoff": (_INT, False, None, ())},
    "Bpref": {"rel": (_INT, False, 1, ())},
    "infAP": {"rel": (_INT, False, 1, ())},
    "IPrec": {"recall": (_FLOAT, True, None, ()), "rel": (_INT, False, 1, ()),
              "judged_only": (_BOOL, False, False, ())},
    "RBP": {"cutoff": (_INT, False, None, ()), "p": (_FLOAT, False, 0.8, ()), "rel": (_INT, False, None, ())},
}
_AT_PARAM = {"IPrec": "recall"}

#: ir_measures measure -> our family (measures ranklens has no family for are refused by :func:`parse`)
_FAMILY = {"nDCG": "ndcg", "P": "precision", "R": "recall", "AP": "map", "RR": "mrr", "Rprec": "r_precision",
           "Success": "hit_rate", "NumRet": "num_ret", "NumRel": "num_rel", "SetP": "precision", "SetR": "recall",
           "ERR": "err", "Bpref": "bpref", "infAP": "infap", "Judged": "judged", "IPrec": "iprec", "SetF": "f1",
           "RBP": "rbp", "SetAP": "set_map"}
#: the parameter of a family (``Measure.param``) and ir_measures' default for it (left to the definition)
_PARAM = {"IPrec": ("recall", None), "SetF": ("beta", 1.0), "RBP": ("p", None)}
#: measures ir_measures has and ranklens does not compute yet, with what they are
_NOT_YET = {"NumQ": "the number of queries"}


class _MeasureLike(Protocol):
    """What :func:`provider` reads of a :class:`ranklens.measures.Measure`."""

    @property
    def family(self) -> str: ...
    @property
    def k(self) -> int | None: ...
    @property
    def gain(self) -> str | None: ...
    @property
    def relevance_level(self) -> float | None: ...
    @property
    def settings(self) -> tuple[tuple[str, Any], ...]: ...


# -- the grammar ---------------------------------------------------------------------------------------

def looks_like_ir_measures(text: str) -> bool:
    """Whether ``text`` starts with a name ir_measures registers (``nDCG@10``, ``Judged@10``, ``SetP``...).

    Examples
    --------
    >>> looks_like_ir_measures("P(rel=2)@10"), looks_like_ir_measures("ndcg_cut.10")
    (True, False)
    """
    head = text.strip()
    for i, c in enumerate(head):
        if not (c.isalnum() or c == "_"):
            head = head[:i]
            break
    return head in IR_MEASURES_NAMES


def is_ir_measures_object(obj: Any) -> bool:
    """Whether ``obj`` is one of ir_measures' ``Measure`` objects (recognised without importing ir_measures)."""
    module = getattr(type(obj), "__module__", "") or ""
    return (module == "ir_measures" or module.startswith("ir_measures.")) and isinstance(
        getattr(obj, "NAME", None), str) and isinstance(getattr(obj, "params", None), dict)


def split_list(text: str) -> list[str]:
    """The measures of a space-separated list, as ir_measures' command line takes them (``"nDCG@10 P@5"``);
    spaces inside parentheses or braces stay inside their measure.

    Examples
    --------
    >>> split_list("nDCG@10 P(rel=2)@5  nDCG(gains={0: 0, 1: 1})")
    ['nDCG@10', 'P(rel=2)@5', 'nDCG(gains={0: 0, 1: 1})']
    """
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for c in text:
        depth += (c in "([{") - (c in ")]}")
        if c.isspace() and depth <= 0:
            if cur:
                out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    if cur:
        out.append("".join(cur))
    return out


def well_formed(text: str) -> bool:
    """Whether ``text`` is an ir_measures expression with a name ir_measures registers (its parameters not
    checked yet): ``AP(judged_only=True)`` is, ``P@10(rel=2)`` is not.

    Examples
    --------
    >>> well_formed("AP(judged_only=True)"), well_formed("P@10(rel=2)"), well_formed("nDCG@")
    (True, False, False)
    """
    try:
        _read(text)
    except InvalidParameterError:
        return False
    return True


def _value(node: ast.expr, text: str) -> Any:
    """A parameter value as ir_measures' ``_ast_to_value`` reads it: a constant or a dict of constants."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool)) or (
            isinstance(node, ast.Constant) and node.value is None):
        return node.value
    if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        return {_value(k, text): _value(v, text) for k, v in zip(node.keys, node.values) if k is not None}
    raise InvalidParameterError(f"measure {text!r}: ir_measures takes a constant (number, string, True/False) or a "
                                "dict of them as a parameter value, e.g. P(rel=2)@10.")


def _syntax(text: str, why: str) -> InvalidParameterError:
    return InvalidParameterError(f"measure {text!r}: not a measure of ir_measures' language ({why}); it is written "
                                 "Name(param=value, ...)@cutoff, e.g. nDCG@10, P(rel=2)@10, nDCG(dcg='exp-log2')@10.")


def _read(text: str) -> tuple[str, dict[str, Any]]:
    """``text`` parsed as ``ir_measures.parse_measure`` parses it: the measure's name and its parameters."""
    try:
        body = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as err:
        raise _syntax(text, f"a syntax error: {err.msg}") from None
    except (ValueError, RecursionError, MemoryError):  # an integer of over 4300 digits; nesting too deep for ast
        raise _syntax(text, "a number or a nesting too large to read") from None
    params: dict[str, Any] = {}
    at: Any = None
    has_at = False
    if isinstance(body, ast.BinOp) and isinstance(body.op, ast.MatMult):
        at, has_at, body = _value(body.right, text), True, body.left
    if isinstance(body, ast.Call):
        if body.args:
            raise _syntax(text, "parameters must be named")
        for kw in body.keywords:
            if kw.arg is None:
                raise _syntax(text, "parameters must be named")
            if kw.arg in params:  # Python itself refuses a keyword repeated; ast.parse does not
                raise InvalidParameterError(f"measure {text!r}: parameter {kw.arg} is given twice; give it once.")
            params[kw.arg] = _value(kw.value, text)
        body = body.func
    if not isinstance(body, ast.Name):
        raise _syntax(text, "an unexpected expression")
    if body.id not in IR_MEASURES_NAMES:
        raise InvalidParameterError(f"measure {text!r}: ir_measures has no measure {body.id!r} (names are "
                                    "case-sensitive: nDCG, P, R, AP, RR, Rprec, Success, NumRet, NumRel, SetP, ...).")
    name, fixed = IR_MEASURES_NAMES[body.id]
    at_name = _AT_PARAM.get(name, "cutoff")
    params = {**dict(fixed), **params}  # as ir_measures: NumRelRet(rel=2) is NumRet(rel=2)
    if has_at:
        if at_name in params:
            raise InvalidParameterError(f"measure {text!r}: {at_name} is given twice (in the parentheses and after "
                                        "@); give it once.")
        params[at_name] = at
    return name, params


#: ir_measures' diversity measures (its pyndeval provider) with parameters, and how ranklens writes them
_DIVERSITY = {"alpha_nDCG": "alpha_ndcg@k(alpha=0.3)", "alpha_DCG": "alpha_dcg@k(alpha=0.3)", "ERR_IA": "err_ia@k",
              "nERR_IA": "nerr_ia@k", "NRBP": "nrbp(alpha=0.3,beta=0.8)", "nNRBP": "nnrbp(alpha=0.3,beta=0.8)",
              "AP_IA": "map_ia", "P_IA": "p_ia@k(rel=2)", "StRecall": "strec@k(rel=2)"}


def _check(name: str, params: dict[str, Any], text: str) -> dict[str, Any]:
    """ir_measures' ``validate_params``: known names, types, choices, required ones; the defaults filled in."""
    if name in _DIVERSITY:
        raise InvalidParameterError(f"measure {text!r}: ir_measures computes {name} with pyndeval (ndeval), as "
                                    f"ranklens does under convention='ndeval', written {_DIVERSITY[name]}.")
    if name not in _PARAMS:
        raise InvalidParameterError(f"measure {text!r}: ir_measures' {name} is not computed by ranklens (it has "
                                    f"{', '.join(sorted(_FAMILY))}).")
    spec = _PARAMS[name]
    unknown = sorted(set(params) - set(spec))
    if unknown:
        raise InvalidParameterError(f"measure {text!r}: ir_measures' {name} has no parameter {', '.join(unknown)} "
                                    f"(it takes {', '.join(spec) or 'none'}).")
    out = {}
    for p, (kind, required, default, choices) in spec.items():
        if p not in params:
            if required:
                example = f"{name}@0.5" if p == "recall" else f"{name}@10"
                raise InvalidParameterError(f"measure {text!r}: ir_measures' {name} needs {p} (e.g. {example}).")
            out[p] = default
            continue
        v = params[p]
        ok = {_INT: isinstance(v, int) and not isinstance(v, bool), _BOOL: isinstance(v, bool),
              _STR: isinstance(v, str), _DICT: isinstance(v, dict),
              _FLOAT: isinstance(v, float)}[kind]  # as ir_measures: IPrec@1 and SetF(beta=2) are refused there
        if not ok or (choices and v not in choices):
            want = f"one of {', '.join(map(repr, choices))}" if choices else {
                _INT: "an integer", _BOOL: "True or False", _STR: "a string", _DICT: "a dict",
                _FLOAT: "a float (1.0, not 1)"}[kind]
            raise InvalidParameterError(f"measure {text!r}: {p} must be {want}; got {v!r}.")
        why = _out_of_range(name, p, v)
        if why:
            raise InvalidParameterError(f"measure {text!r}: {why}; got {v!r}.")
        out[p] = v
    return out


def _out_of_range(name: str, p: str, v: Any) -> str | None:
    """Why a parameter of the right type is outside its range (the family's parameter by the one rule of
    :func:`ranklens._defs.registry.param_refusal`; a cutoff from 1 to :data:`MAX_CUTOFF`; a level a finite number)."""
    if p == "cutoff" and v is not None and not 1 <= v <= MAX_CUTOFF:
        return f"the cutoff must be an integer from 1 to {MAX_CUTOFF}"
    if p == "rel" and v is not None and not -2**53 <= v <= 2**53:
        return "rel must be an integer a double holds exactly (within 2**53)"
    if name in _PARAM and p == _PARAM[name][0] and v is not None:
        return param_refusal(p, v)
    return None


def parse(measure: Any) -> dict[str, Any]:
    """An ir_measures measure (a string or an ``ir_measures`` object) as the fields of a ranklens measure.

    Returns the keyword arguments of :class:`ranklens.measures.Measure`: ``key`` (the string as written, or
    ``str(obj)``, which is how ir_measures names it), ``family``, ``k``, ``gain`` (``"exponential"`` for
    ``dcg='exp-log2'``), ``relevance_level`` (``rel`` when it is not ir_measures' default of 1) and
    ``settings`` (``gains=`` as the convention's gain mapping). Parameters left at ir_measures' defaults are
    left to the convention, as ``ir_measures`` itself treats ``P(rel=1)@10`` as ``P@10``.

    Raises
    ------
    InvalidParameterError
        In one line naming the measure: not ir_measures' language, a parameter ir_measures refuses, or a
        measure or parameter ranklens does not reproduce.

    Examples
    --------
    >>> f = parse("P(rel=2)@10")
    >>> f["family"], f["k"], f["relevance_level"]
    ('precision', 10, 2.0)
    >>> parse("nDCG(dcg='exp-log2')@10")["gain"]
    'exponential'
    >>> parse("nDCG(gains={0: 0, 1: 1, 2: 3})")["settings"]
    (('gain', ((0.0, 0.0), (1.0, 1.0), (2.0, 3.0))),)
    """
    if isinstance(measure, str):
        text = measure.strip()
        name, raw = _read(text)
    elif is_ir_measures_object(measure):
        text = str(measure)
        name = IR_MEASURES_NAMES.get(measure.NAME, (measure.NAME, ()))[0]
        raw = dict(measure.params)
    else:
        raise InvalidParameterError(f"a measure must be a string or an ir_measures measure; got {measure!r}.")
    params = _check(name, raw, text)
    if name in _NOT_YET:
        raise InvalidParameterError(f"measure {text!r}: ranklens does not compute ir_measures' {name} "
                                    f"({_NOT_YET[name]}) yet.")
    if params.get("judged_only"):
        raise InvalidParameterError(f"measure {text!r}: judged_only=True (trec_eval -J: unjudged documents removed "
                                    "from the ranking) is not reproduced by ranklens.")
    family = "relative_p" if name == "SetP" and params["relative"] else _FAMILY[name]  # trec_eval's set_relative_P
    k = params.get("cutoff")
    rel = params.get("rel")
    level = None if rel is None or rel == 1 else float(rel)  # ir_measures' default level: the convention's
    if name == "NumRet" and rel is not None:
        family, level = "num_rel_ret", float(rel)  # NumRet(rel=N): the retrieved items labelled N or more
    param = None
    if name in _PARAM:
        which, default = _PARAM[name]
        param = None if params[which] is None or params[which] == default else float(params[which])
    gain = "exponential" if params.get("dcg") == "exp-log2" else None
    settings: tuple[tuple[str, Any], ...] = ()
    gains = params.get("gains")
    if gains is not None:
        pairs = []
        for a, b in gains.items():
            if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) or \
                    not isinstance(b, (int, float)) or not (math.isfinite(a) and math.isfinite(b)):
                raise InvalidParameterError(f"measure {text!r}: gains maps labels to gains, finite numbers; got "
                                            f"{a!r}: {b!r}.")
            if b != int(b):  # ir_measures maps the qrels' labels through gains for pytrec_eval, which takes integers
                raise InvalidParameterError(f"measure {text!r}: ir_measures gives no value with the fractional gain "
                                            f"{b!r} (its pytrec_eval provider takes the mapped labels as whole-number "
                                            "relevance: 'Expected relevance to be integer').")
            pairs.append((float(a), float(b)))
        if gain is not None:
            raise InvalidParameterError(f"measure {text!r}: gains with dcg='exp-log2' has no provider in ir_measures.")
        settings = (("gain", tuple(sorted(pairs))),)
    return {"key": text, "family": family, "k": k, "gain": gain, "relevance_level": level, "param": param,
            "settings": settings}


# -- the providers ---------------------------------------------------------------------------------------

def _provider_conventions() -> dict[str, Convention]:
    ir = CONVENTIONS["ir_measures"]
    asc = ir.replace(ties="item_asc", score_precision="float64")
    gd = CONVENTIONS["gdeval"]
    return {
        "pytrec_eval": ir,
        "msmarco": asc.replace(mirrors="ir_measures 0.4 RR@k (its msmarco provider: scores as doubles, ties by "
                               "document id ascending)"),
        "gdeval": ir.replace(**{f: getattr(gd, f) for f in gd.differences(ir) if f not in ("queries", "summation")},
                             mirrors="ir_measures 0.4 nDCG(dcg='exp-log2')@k and ERR@k (its gdeval provider)"),
        "judged": asc.replace(mirrors="ir_measures 0.4 Judged@k (its judged provider: scores as doubles, ties by "
                              "document id ascending)"),
    }


#: The convention of each ir_measures provider ranklens reproduces (all named ``ir_measures``: the preset's
#: rules apply to each): pytrec_eval's is the preset itself.
PROVIDERS: dict[str, Convention] = _provider_conventions()


def provider(m: _MeasureLike) -> str:
    """The ir_measures provider that computes ``m`` (its ``DefaultPipeline``'s first that supports it).

    Examples
    --------
    >>> from ranklens.measures import parse_measure
    >>> [provider(parse_measure(s)[0]) for s in ("nDCG@10", "RR@10", "ERR@20", "nDCG(dcg='exp-log2')@5", "Judged@10")]
    ['pytrec_eval', 'msmarco', 'gdeval', 'gdeval', 'judged']
    """
    if m.family == "mrr" and m.k is not None:
        return "msmarco"
    if m.family == "judged":
        return "judged"
    if m.family == "err" or (m.family == "ndcg" and m.gain == "exponential"):
        return "gdeval"
    return "pytrec_eval"


def refusal(m: _MeasureLike, convention: Convention) -> str | None:
    """Why ``convention`` (``ir_measures``) has no provider for ``m``, or None.

    The refusals of the registry (:data:`ranklens.measures.REGISTRY`) apply too; these are the ones that
    depend on a measure's parameters.
    """
    if convention.name != "ir_measures":
        return None
    if m.family == "ndcg" and m.gain == "exponential" and m.k is None:
        return ("computes nDCG(dcg='exp-log2') without a cutoff with its ranx provider, which ranklens does not "
                "reproduce under this preset: write a cutoff (gdeval), or use convention='ranx' with ndcg_burges")
    if m.family == "err" and m.k is None:
        return "has no provider for ERR without a cutoff (gdeval reports ERR@k): write ERR@k"
    if m.family == "num_rel" and m.relevance_level not in (None, 1.0):
        return "has no provider for NumRel(rel=N) with N other than 1 (pytrec_eval's num_rel takes rel=1 only)"
    return None


def measure_convention(convention: Convention, m: _MeasureLike) -> Convention:
    """The convention ``m`` is computed under when ``convention`` is asked.

    Under ``ir_measures`` (the preset, or the preset with fields changed), that of the provider ir_measures picks
    for ``m`` (:func:`provider`), with the fields changed from the preset changed there too; under any other
    convention, the convention itself. A measure's own settings (``nDCG(gains={...})``) apply on top.

    Examples
    --------
    >>> from ranklens import get_convention
    >>> from ranklens.measures import parse_measure
    >>> c = measure_convention(get_convention("ir_measures"), parse_measure("RR@10")[0])
    >>> c.name, c.ties, c.score_precision
    ('ir_measures', 'item_asc', 'float64')
    >>> measure_convention(get_convention("ranklens"), parse_measure("RR@10")[0]).ties
    'average'
    """
    out = convention
    if convention.name == "ir_measures":
        preset = CONVENTIONS["ir_measures"]
        changed = {f: getattr(convention, f) for f in convention.differences(preset)}
        base = PROVIDERS[provider(m)]
        out = base.replace(**changed) if changed else base
        if out.differences(convention) == {}:
            out = convention
    if m.settings:
        wanted = dict(m.settings)
        if "gain" in wanted and not isinstance(wanted["gain"], str):
            wanted["gain"] = dict(wanted["gain"])
        out = out.replace(**wanted)
    return out


def convention_groups(convention: Convention, measures: Sequence[_MeasureLike]) -> list[tuple[Convention, list[int]]]:
    """The measures (their positions) grouped by the convention each is computed under, in order of first use.

    One group, ``convention`` itself, unless measures need another (:func:`measure_convention`).

    Examples
    --------
    >>> from ranklens import get_convention
    >>> from ranklens.measures import parse_measures
    >>> groups = convention_groups(get_convention("ir_measures"), parse_measures(["nDCG@10", "RR@10", "AP"]))
    >>> [(c.ties, idx) for c, idx in groups]
    [('item_desc', [0, 2]), ('item_asc', [1])]
    """
    groups: list[tuple[Convention, list[int]]] = []
    for i, m in enumerate(measures):
        c = measure_convention(convention, m)
        for g, idx in groups:
            if g is c or (g.differences(c) == {} and g.mirrors == c.mirrors):
                idx.append(i)
                break
        else:
            groups.append((c, [i]))
    return groups
