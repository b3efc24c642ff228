"""Measure names: parsing ``"ndcg@10"``, ``"P.10"``, ``"ndcg@10-"`` ... into :class:`Measure` values.

Accepted spellings (case-insensitive unless noted):

========================  =========================================================
family                    spellings
========================  =========================================================
``ndcg``                  ``ndcg``, ``ndcg@k``, ``ndcg_cut.k`` / ``ndcg_cut_k`` (trec_eval),
                          ``ndcg_burges@k`` (ranx: gain 2^rel-1), ``ndcg@k-`` (XGBoost:
                          empty queries score 0), ``ndcg_exp@k`` / ``ndcg_lin@k``
``dcg`` / ``idcg``        ``dcg@k``, ``idcg@k``, ``dcg_burges@k``
``map``                   ``map``, ``map@k``, ``ap@k``, ``map_cut.k``
``mrr``                   ``mrr``, ``mrr@k``, ``rr@k``, ``recip_rank``
``precision``             ``precision@k``, ``p@k``, ``P.k`` / ``P_k``
``recall``                ``recall@k``, ``r@k``, ``recall.k`` / ``recall_k``
``hit_rate``              ``hit_rate@k``, ``hits@k``, ``success@k``, ``success.k``
``err``                   ``err@k``
``r_precision``           ``r_precision``, ``rprec``
``num_ret`` ...           ``num_ret``, ``num_rel``, ``num_rel_ret`` (summed, not averaged)
========================  =========================================================

A relevance level can be given to binary measures with ``(rel=2)``, e.g.
``recall@100(rel=2)``; trec_eval spelling has ``-l2`` on the command line instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import InvalidParameterError

__all__ = ["FAMILIES", "Measure", "flat_name", "parse_measure", "parse_measures"]

#: family -> (description, higher_is_better, takes a cutoff)
FAMILIES: dict[str, str] = {
    "ndcg": "normalised discounted cumulative gain",
    "dcg": "discounted cumulative gain",
    "idcg": "ideal discounted cumulative gain",
    "map": "average precision (mean over queries: MAP)",
    "mrr": "reciprocal rank of the first relevant item (mean: MRR)",
    "precision": "precision: relevant items in the top k / k",
    "recall": "recall: relevant items in the top k / relevant items",
    "hit_rate": "hit rate: 1 if a relevant item is in the top k",
    "err": "expected reciprocal rank (Chapelle et al. 2009, cascade model)",
    "r_precision": "precision at R, R = number of relevant items",
    "num_ret": "number of ranked items (summed over queries)",
    "num_rel": "number of relevant items (summed over queries)",
    "num_rel_ret": "number of relevant ranked items (summed over queries)",
}

_ALIASES = {
    "ndcg": "ndcg", "ndcg_cut": "ndcg", "ndcg_burges": "ndcg", "ndcg_exp": "ndcg", "ndcg_lin": "ndcg",
    "dcg": "dcg", "dcg_burges": "dcg", "dcg_exp": "dcg", "dcg_lin": "dcg",
    "idcg": "idcg", "idcg_burges": "idcg", "idcg_exp": "idcg",
    "map": "map", "ap": "map", "map_cut": "map",
    "mrr": "mrr", "rr": "mrr", "recip_rank": "mrr",
    "precision": "precision", "p": "precision", "prec": "precision",
    "recall": "recall", "r": "recall",
    "hit_rate": "hit_rate", "hits": "hit_rate", "hit": "hit_rate", "success": "hit_rate", "hitrate": "hit_rate",
    "err": "err",
    "r_precision": "r_precision", "rprec": "r_precision", "r-precision": "r_precision",
    "num_ret": "num_ret", "num_rel": "num_rel", "num_rel_ret": "num_rel_ret",
}
_GAIN_SUFFIX = {"_burges": "exponential", "_exp": "exponential", "_lin": "linear"}
_NO_CUTOFF = {"r_precision", "num_rel", "idcg_nocut"}
_TREC_NAMES = {
    "ndcg": "ndcg_cut", "map": "map_cut", "precision": "P", "recall": "recall", "hit_rate": "success",
}


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
    """

    key: str
    family: str
    k: int | None = None
    gain: str | None = None
    empty: float | None = None
    relevance_level: float | None = None

    @property
    def summed(self) -> bool:
        """True for counts that trec_eval sums over queries instead of averaging."""
        return self.family in ("num_ret", "num_rel", "num_rel_ret")

    @property
    def higher_is_better(self) -> bool:
        """Direction of improvement (every measure here grows with quality)."""
        return True

    @property
    def trec_name(self) -> str:
        """The name trec_eval prints for this measure."""
        fam = self.family
        if fam == "mrr":
            return "recip_rank" if self.k is None else f"recip_rank_{self.k}"
        if fam == "r_precision":
            return "Rprec"
        if fam in ("num_ret", "num_rel", "num_rel_ret"):
            return fam
        if self.k is None:
            return {"ndcg": "ndcg", "map": "map", "precision": "P", "recall": "recall"}.get(fam, fam)
        return f"{_TREC_NAMES.get(fam, fam)}_{self.k}"

    def __str__(self) -> str:
        return self.key


_MEASURE_RE = re.compile(
    r"""^\s*(?P<name>[A-Za-z][A-Za-z_\-]*?)
        (?:(?:@|\.|_)(?P<k>\d+(?:,\d+)*))?
        (?P<minus>-)?
        (?:\((?P<opts>[^)]*)\))?\s*$""",
    re.VERBOSE,
)


def parse_measure(text: str) -> list[Measure]:
    """Parse one measure string; trec_eval lists like ``P.5,10`` give several.

    Examples
    --------
    >>> from ranklens import parse_measure
    >>> parse_measure("ndcg@10")
    [Measure(key='ndcg@10', family='ndcg', k=10, gain=None, empty=None, relevance_level=None)]
    >>> [m.key for m in parse_measure("P.5,10")]
    ['P.5', 'P.10']
    """
    if not isinstance(text, str) or not text.strip():
        raise InvalidParameterError(f"a measure must be a non-empty string; got {text!r}.")
    m = _MEASURE_RE.match(text)
    if not m:
        raise InvalidParameterError(_unknown(text))
    raw_name = m.group("name")
    name = raw_name.lower()
    gain = None
    base = name
    for suffix, g in _GAIN_SUFFIX.items():
        if name.endswith(suffix) and name[: -len(suffix)] in ("ndcg", "dcg", "idcg"):
            base, gain = name[: -len(suffix)], g
    if name in ("ndcg_cut", "map_cut"):
        base = name
    family = _ALIASES.get(base)
    if family is None:
        raise InvalidParameterError(_unknown(text))
    ks_text = m.group("k")
    ks: list[int | None]
    if ks_text is None:
        if name in ("ndcg_cut", "map_cut"):
            raise InvalidParameterError(f"measure {text!r} needs a cutoff, e.g. {name}.10.")
        ks = [None]
    else:
        ks = [int(x) for x in ks_text.split(",")]
        for k in ks:
            if k < 1:
                raise InvalidParameterError(f"measure {text!r}: the cutoff must be an integer >= 1; got {k}.")
        if family in ("r_precision", "num_rel"):
            raise InvalidParameterError(f"measure {text!r}: {family} takes no cutoff.")
    empty = 0.0 if m.group("minus") else None
    if empty is not None and family != "ndcg":
        raise InvalidParameterError(f"measure {text!r}: the '-' suffix (empty queries score 0) is for ndcg only.")
    rel = None
    opts = m.group("opts")
    if opts:
        for part in opts.split(","):
            if not part.strip():
                continue
            key, _, value = part.partition("=")
            key = key.strip().lower()
            value = value.strip().strip("'\"")
            if key in ("rel", "relevance_level", "level"):
                try:
                    rel = float(value)
                except ValueError:
                    raise InvalidParameterError(f"measure {text!r}: rel must be a number; got {value!r}.") from None
            elif key == "gain":
                if value not in ("linear", "exponential", "exp", "lin"):
                    raise InvalidParameterError(f"measure {text!r}: gain must be 'linear' or 'exponential'.")
                gain = "exponential" if value.startswith("exp") else "linear"
            else:
                raise InvalidParameterError(f"measure {text!r}: unknown option {key!r}; valid options: rel, gain.")
    multi = len(ks) > 1
    out = []
    for k in ks:
        key = text.strip()
        if multi:
            sep = "@" if "@" in text else ("." if "." in text else "_")
            key = f"{raw_name}{sep}{k}" + ("-" if empty is not None else "") + (f"({opts})" if opts else "")
        out.append(Measure(key=key, family=family, k=k, gain=gain, empty=empty, relevance_level=rel))
    return out


def parse_measures(measures: str | Measure | Iterable[str | Measure]) -> list[Measure]:
    """Parse a measure or a list of measures; duplicates are kept once."""
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    out: list[Measure] = []
    seen = set()
    for item in measures:
        parsed = [item] if isinstance(item, Measure) else parse_measure(item)
        for p in parsed:
            if p.key not in seen:
                seen.add(p.key)
                out.append(p)
    if not out:
        raise InvalidParameterError("`metrics` is empty: name at least one measure, e.g. 'ndcg@10'.")
    return out


def _unknown(text: str) -> str:
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
