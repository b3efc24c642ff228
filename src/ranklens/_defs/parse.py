"""Parsing measure names (``"ndcg@10"``, ``"P.10"``, ``"ndcg@10-"`` ...) into :class:`Measure` values.

The spellings accepted are listed in :mod:`ranklens.measures`; each family's names are its
:attr:`MeasureSpec.spellings` in :data:`ranklens.measures.REGISTRY`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidParameterError
from . import irmeasures
from .registry import FAMILIES, MAX_CUTOFF, REGISTRY, MeasureSpec, param_refusal

__all__ = ["MAX_CUTOFF", "Measure", "flat_name", "parse_measure", "parse_measures"]

_SPELLINGS = {name: s.family for s in REGISTRY.values() for name in s.spellings}
_GAIN_SUFFIX = {"_burges": "exponential", "_exp": "exponential", "_lin": "linear"}
#: spellings that must carry a cutoff (trec_eval's ``ndcg_cut.10``)
_NEEDS_CUTOFF = ("ndcg_cut", "map_cut")


@dataclass(frozen=True)
class Measure:
    """One measure at one cutoff, with the options written in its name.

    Attributes
    ----------
    key : str
        The measure as the user wrote it (used as the result's key).
    family : str
        One of :data:`FAMILIES`.
    k : int or None
        Cutoff; ``None`` means the whole list (or the convention's default).
    gain : str or None
        Gain override from the name (``ndcg_burges``), else the convention's.
    empty : float or None
        Empty-query value override (XGBoost's ``-`` suffix gives 0).
    relevance_level : float or None
        Relevance level override for binary measures.
    param : float or None
        The family's parameter when written (RBP's ``p``, the F measure's ``beta``, interpolated precision's
        recall level); None: the definition's default.
    settings : tuple of (str, value) pairs
        Convention fields the measure's own parameters set (ir_measures' ``nDCG(gains={0: 0, 1: 1, 2: 3})``
        sets the gain mapping): it is computed under the convention with these fields changed.
    options : tuple of (str, float) pairs
        The family's further parameters written in the name (:attr:`MeasureSpec.more_params`: NRBP's ``beta``);
        :meth:`option` gives one, or its default.
    """

    key: str
    family: str
    k: int | None = None
    gain: str | None = None
    empty: float | None = None
    relevance_level: float | None = None
    param: float | None = None
    settings: tuple[tuple[str, Any], ...] = field(default=(), repr=False)
    options: tuple[tuple[str, float], ...] = field(default=(), repr=False)

    def option(self, name: str) -> float:
        """A further parameter of the family (NRBP's ``beta``): as written, else the family's default."""
        given = dict(self.options)
        if name in given:
            return given[name]
        for opt, _, default in self.spec.more_params:
            if opt == name:
                return default
        raise KeyError(f"{self.family} has no parameter {name!r}")

    @property
    def spec(self) -> MeasureSpec:
        """The family's entry in :data:`REGISTRY`."""
        try:
            return REGISTRY[self.family]
        except KeyError:
            raise InvalidParameterError(f"measure {self.key!r} is not supported.") from None

    @property
    def summed(self) -> bool:
        """True for counts that trec_eval sums over queries instead of averaging."""
        return self.family in REGISTRY and REGISTRY[self.family].summed

    @property
    def trec_name(self) -> str:
        """The name trec_eval prints for this measure."""
        spec = self.spec
        if self.family in ("iprec", "rprec_mult") and self.param is not None:
            return f"{spec.trec_name}_{self.param:.2f}"
        if self.k is None or spec.trec_cut is None:
            return spec.trec_name
        return f"{spec.trec_cut}_{self.k}"

    def __str__(self) -> str:
        return self.key


_MEASURE_RE = re.compile(
    r"""^\s*(?P<name>(?i:11-?pt_avg|11pt)|[A-Za-z][A-Za-z0-9_\-]*?)
        (?:(?:@|\.|_)(?P<k>\d+(?:,\d+)*))?
        (?P<minus>-)?
        (?:\((?P<opts>[^)]*)\))?\s*$""",
    re.VERBOSE | re.ASCII,  # ASCII digits only: "ndcg@１０" is refused, not read as ndcg@10
)

#: Interpolated precision with its recall level(s) in the name: ``iprec_at_recall_0.50``, trec_eval's
#: ``iprec_at_recall..10,.20``, ``iprec@0.5``.
_IPREC_RE = re.compile(r"^\s*(?P<name>iprec_at_recall|iprec)(?P<sep>[@._])(?P<x>\d*\.?\d+(?:,\d*\.?\d+)*)\s*$",
                       re.IGNORECASE | re.ASCII)

#: trec_eval's set measures: their family without a cutoff (a cutoff is refused)
_SET_SPELLINGS = {"set_p": "precision", "set_recall": "recall", "set_f": "f1", "set_relative_p": "relative_p"}
_NO_CUTOFF = tuple(_SET_SPELLINGS)
#: trec_eval's default recall levels of iprec_at_recall (m_iprec_at_recall.c)
_IPREC_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

def parse_measure(text: Any) -> list[Measure]:
    """Parse one measure string; trec_eval lists like ``P.5,10`` give several.

    ir_measures' language is accepted too (:mod:`ranklens._defs.irmeasures`): its strings (``P(rel=2)@10``,
    ``nDCG(dcg='exp-log2')@10``), its space-separated lists (``"nDCG@10 P@5"``) and its ``Measure`` objects
    (``ir_measures.nDCG@10``, keyed ``str(obj)``). A name means the same measure in both languages.

    Examples
    --------
    >>> from ranklens import parse_measure
    >>> parse_measure("ndcg@10")
    [Measure(key='ndcg@10', family='ndcg', k=10, gain=None, empty=None, relevance_level=None, param=None)]
    >>> [m.key for m in parse_measure("P.5,10")]
    ['P.5', 'P.10']
    >>> [(m.key, m.family, m.k, m.relevance_level) for m in parse_measure("nDCG@10 P(rel=2)@5")]
    [('nDCG@10', 'ndcg', 10, None), ('P(rel=2)@5', 'precision', 5, 2.0)]
    """
    if irmeasures.is_ir_measures_object(text):
        return [Measure(**irmeasures.parse(text))]
    if not isinstance(text, str) or not text.strip():
        raise InvalidParameterError(f"a measure must be a non-empty string; got {text!r}.")
    parts = irmeasures.split_list(text)
    if len(parts) > 1:
        return [m for part in parts for m in parse_measure(part)]
    try:
        return _parse_ours(text)
    except InvalidParameterError as ours:
        if not irmeasures.looks_like_ir_measures(text) or not text.isascii():  # its names are ASCII
            raise
        try:
            return [Measure(**irmeasures.parse(text))]
        except InvalidParameterError:
            if _ours(text) and not irmeasures.well_formed(text):  # our names in our syntax: our error says more
                raise ours from None
            raise


def _ours(text: str) -> bool:
    """Whether ``text`` is written in our syntax with one of our names (``ndcg@0``, ``P@10(rel=x)``)."""
    m = _MEASURE_RE.match(text)
    if m is None:
        return False
    name = m.group("name").lower()
    stems = [name] + [name[: -len(s)] for s in _GAIN_SUFFIX if name.endswith(s)]
    return name in _NEEDS_CUTOFF or name in _SET_SPELLINGS or any(s in _SPELLINGS for s in stems)


def _parse_ours(text: str) -> list[Measure]:
    """``text`` in ranklens' own spellings (``ndcg@10``, ``P.5,10``, ``recall@100(rel=2)``...)."""
    ip = _IPREC_RE.match(text)
    if ip:
        return _iprec(text, ip)
    m = _MEASURE_RE.match(text)
    if not m and not text.isascii():
        raise InvalidParameterError(
            f"measure {text!r}: a measure is written in ASCII letters and digits (e.g. ndcg@10); not ASCII: "
            f"{', '.join(repr(c) for c in dict.fromkeys(text) if not c.isascii())}."
        )
    if not m:
        raise InvalidParameterError(_unknown(text))
    raw_name = m.group("name")
    name = raw_name.lower()
    gain = None
    base = name
    for suffix, g in _GAIN_SUFFIX.items():
        stem = name[: -len(suffix)]
        if name.endswith(suffix) and stem in REGISTRY and REGISTRY[stem].gain_suffix:
            base, gain = stem, g
    if name in _NEEDS_CUTOFF:
        base = name
    family = _SPELLINGS.get(base) or _SET_SPELLINGS.get(base)
    if family == "iprec" and m.group("k") is None and not m.group("opts") and not m.group("minus"):
        # trec_eval's -m iprec_at_recall: the 11 standard levels
        return [Measure(key=f"iprec_at_recall_{x:.2f}", family="iprec", param=x) for x in _IPREC_LEVELS]
    if family is None:
        raise InvalidParameterError(_unknown(text))
    ks_text = m.group("k")
    ks: list[int | None]
    if ks_text is None:
        if name in _NEEDS_CUTOFF:
            raise InvalidParameterError(f"measure {text!r} needs a cutoff, e.g. {name}.10.")
        ks = [None]
    else:
        written = ks_text.split(",")
        cutoffs = [_cutoff_number(x) for x in written]
        for cut, digits in zip(cutoffs, written):
            if cut < 1 or cut > MAX_CUTOFF:
                shown = digits if len(digits) <= 30 else f"{digits[:12]}... ({len(digits)} digits)"
                raise InvalidParameterError(
                    f"measure {text[:60]!r}: the cutoff must be an integer from 1 to {MAX_CUTOFF}; got {shown}."
                )
        ks = list(cutoffs)
        if not REGISTRY[family].cutoff or base in _NO_CUTOFF:
            raise InvalidParameterError(f"measure {text!r}: {base if base in _NO_CUTOFF else family} takes no cutoff.")
    empty = 0.0 if m.group("minus") else None
    if empty is not None and family not in ("ndcg", "map"):
        raise InvalidParameterError(f"measure {text!r}: the '-' suffix (empty queries score 0) is for ndcg and map "
                                    "only.")
    rel = None
    param = None
    options: list[tuple[str, float]] = []
    spec = REGISTRY[family]
    more = {name: rng for name, rng, _ in spec.more_params}
    opts = m.group("opts")
    if opts:
        seen: set[str] = set()
        for part in opts.split(","):
            if not part.strip():
                continue
            key, _, value = part.partition("=")
            key = key.strip().lower()
            value = value.strip().strip("'\"")
            alias = "rel" if key in ("rel", "relevance_level", "level") else key
            if alias in seen:
                raise InvalidParameterError(f"measure {text!r}: {key} is given twice; give each option once.")
            seen.add(alias)
            if key in ("rel", "relevance_level", "level"):
                rel = _finite(value)
                if rel is None:
                    raise InvalidParameterError(f"measure {text!r}: rel must be a finite number; got {value!r}.")
            elif key == "gain":
                if value not in ("linear", "exponential", "exp", "lin"):
                    raise InvalidParameterError(f"measure {text!r}: gain must be 'linear' or 'exponential'.")
                gain = "exponential" if value.startswith("exp") else "linear"
            elif spec.param_name is not None and key == spec.param_name:
                param = _check_param(text, family, key, value)
            elif key in more:
                options.append((key, _check_param(text, family, more[key], value, key)))
            else:
                valid = ", ".join(["rel", "gain"] + ([spec.param_name] if spec.param_name else []) + list(more))
                raise InvalidParameterError(f"measure {text!r}: unknown option {key!r}; valid options: {valid}.")
    if spec.param_name is not None and param is None and spec.default_param is None:
        raise InvalidParameterError(f"measure {text!r}: {family} needs its {spec.param_name}, e.g. "
                                    f"{name}({spec.param_name}=0.5).")
    if family == "num_ret" and rel is not None:
        # ir_measures' NumRet(rel=N): the retrieved items with a label of at least N, i.e. num_rel_ret at N
        family = "num_rel_ret"
    multi = len(ks) > 1
    out = []
    for k in ks:
        key = text.strip()
        if multi:
            sep = "@" if "@" in text else ("." if "." in text else "_")
            key = f"{raw_name}{sep}{k}" + ("-" if empty is not None else "") + (f"({opts})" if opts else "")
        out.append(Measure(key=key, family=family, k=k, gain=gain, empty=empty, relevance_level=rel, param=param,
                           options=tuple(options)))
    return out


def _check_param(text: str, family: str, key: str, value: str, name: str | None = None) -> float:
    """The parameter ``key`` of ``family`` within its range (:func:`ranklens._defs.registry.param_refusal`: RBP's p
    in (0, 1), the F measure's beta >= 0, a recall level in [0, 1], NRBP's beta (range ``patience``, written
    ``name``) in [0, 1]), else an error naming the measure."""
    x = _finite(value)
    why = param_refusal(key, x if x is not None else math.nan, name)
    if x is None or why:
        raise InvalidParameterError(f"measure {text!r}: {why}; got {value!r}.")
    return x


def _cutoff_number(digits: str) -> int:
    """A cutoff's ASCII digits as an int (more than 19 significant digits: past :data:`MAX_CUTOFF`, refused by the
    caller without converting them, as Python refuses to convert over 4300 digits)."""
    significant = digits.lstrip("0") or "0"
    return MAX_CUTOFF + 1 if len(significant) > 19 else int(significant)


def _iprec(text: str, m: re.Match[str]) -> list[Measure]:
    """``iprec_at_recall_0.50`` (one level) or ``iprec_at_recall..10,.20`` (several): one measure per level."""
    levels = m.group("x").split(",")
    out = []
    for lv in levels:
        x = _check_param(text, "iprec", "recall", lv)
        key = text.strip() if len(levels) == 1 else f"{m.group('name')}_{x:.2f}"
        out.append(Measure(key=key, family="iprec", param=x))
    return out


def _finite(text: str) -> float | None:
    """The number ``text`` spells in ASCII (``1``, ``0.5``, ``-2e1``), if finite, else ``None``."""
    if not text.isascii():
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_measures(measures: str | Measure | Iterable[str | Measure]) -> list[Measure]:
    """Parse a measure or a list of measures (strings, or ir_measures objects); duplicates are kept once."""
    items: Iterable[Any]
    if isinstance(measures, (str, Measure)) or irmeasures.is_ir_measures_object(measures):
        items = [measures]
    elif isinstance(measures, Iterable):
        items = measures
    else:
        raise InvalidParameterError(
            f"`measures` must be a measure name such as 'ndcg@10' or a list of them; got {measures!r}."
        )
    out: list[Measure] = []
    seen = set()
    for item in items:
        parsed = [item] if isinstance(item, Measure) else parse_measure(item)
        for p in parsed:
            if p.key not in seen:
                seen.add(p.key)
                out.append(p)
    if not out:
        raise InvalidParameterError("`measures` is empty: name at least one measure, e.g. 'ndcg@10'.")
    return out


def _unknown(text: str) -> str:
    """The refusal of a measure string no rule reads: a cutoff that is not a number, a cutoff without its name
    (``"ndcg @10"`` splits in two), or the names."""
    at = re.fullmatch(r"\s*([A-Za-z][A-Za-z0-9_\-]*)@(.*?)\s*", text)
    if at and (at.group(1).lower() in _SPELLINGS or at.group(1).lower() in _SET_SPELLINGS):
        return (f"measure {text[:60]!r}: the cutoff must be an integer from 1 to {MAX_CUTOFF}; got "
                f"{at.group(2)[:30]!r}.")
    if text.strip().startswith("@"):
        return (f"measure {text[:60]!r} is a cutoff without its measure: write them together, with no space "
                "(e.g. ndcg@10).")
    return (
        f"unknown measure {text!r}; valid measures: {', '.join(FAMILIES)} "
        "(with @k for a cutoff, e.g. ndcg@10, map@100, P.10, ndcg_cut.10, recip_rank, ndcg@10-)."
    )


def flat_name(key: str) -> str:
    """A measure key as a metric name experiment trackers accept: ``ndcg@10`` -> ``ndcg_at_10``.

    ``@`` becomes ``_at_``; any other character but letters, digits, ``_``, ``-``, ``.`` and ``/``
    becomes ``_`` (MLflow also refuses ``@``, ``(`` and ``=``; TensorBoard and Weights & Biases group
    names on ``/``).

    Examples
    --------
    >>> flat_name("ndcg@10"), flat_name("recall@100(rel=2)"), flat_name("ndcg@10-"), flat_name("P.10")
    ('ndcg_at_10', 'recall_at_100_rel_2', 'ndcg_at_10-', 'P.10')
    """
    out = re.sub(r"[^A-Za-z0-9_.\-/]+", "_", str(key).replace("@", "_at_"))
    return re.sub(r"_+", "_", out).strip("_") or "metric"

