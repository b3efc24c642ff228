"""Convention + measures -> the kernel's arguments (:class:`Plan`), and one kernel run over a problem.

:func:`make_plan` is the one place where a :class:`~ranklens.conventions.Convention` and a list of
:class:`~ranklens.measures.Measure` become what :func:`ranklens._kernels.api.evaluate_queries` takes
(measure codes, cutoffs, gain kinds, relevance levels, gain map, log base, empty test...); the
measures' definitions and refusals come from :data:`ranklens.measures.REGISTRY`. :func:`run_plan` is the
one caller of the kernel: it runs a plan over a :class:`~ranklens._core.problem.Problem` (all queries in
one call) and applies the empty-query rules and the per-query rounding. ``evaluate``, the
scikit-learn drop-ins, the training-loop metrics, ``explain`` and the Spark engine all go through it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._defs.conventions import Convention
from .._defs.measures import Measure, MeasureSpec, check_measures, definition, parse_measures
from .._input.chunks import held
from .._kernels import api
from .._kernels import codes as K
from ..errors import EmptyQueryError, InputError, InvalidParameterError
from .problem import Problem
from .segments import evaluate_held, held_columns

__all__ = ["Plan", "check_cutoffs", "deepest", "empty_rule", "empty_values", "make_plan", "run_plan"]

_GAIN_KIND = {"linear": K.GAIN_LINEAR, "exponential": K.GAIN_EXP}
_EMPTY_MODE = {"no_gain": 0, "label_sum_zero": 1, "ideal_zero": 2, "ideal_nonpositive": 3}


@dataclass(frozen=True, eq=False)
class Plan:
    """Measures under a convention, as the kernel takes them (built by :func:`make_plan` only).

    Attributes
    ----------
    measures : tuple of Measure
        The measures, in the order of the value columns.
    convention : Convention
        The convention they are computed under.
    specs : tuple of MeasureSpec
        The definition of each measure under the convention (:func:`ranklens.measures.definition`).
    codes, cutoffs, gain_kinds : ndarray of int64
        Per measure: kernel code, cutoff (0: the whole list), gain kind.
    levels : ndarray of float64
        Per measure: the relevance level of binary measures.
    params : ndarray of float64
        Per measure: its parameter (RBP's persistence p, the F measure's beta, interpolated precision's
        recall level), written in its name or its definition's default (NaN: none).
    map_keys, map_vals : ndarray of float64
        The gain mapping (label -> gain), empty unless a gain is a mapping.
    rules : tuple
        Per measure: the value of a query without a relevant item (``0.0``, ``1.0``, ``"skip"``, ``"error"``).
    log_base, gain_threshold : float
        The discount's base; labels below the threshold get gain 0 (``-inf``: no threshold).
    negative_zero : bool
        Negative labels have gain 0.
    empty_mode : int
        The kernel's test of an empty query.
    ideal_judgments : bool
        The ideal list comes from the judgments (else from the ranked list).
    err_max_grade : float or None
        ERR's maximum grade (None: the largest label of the judgments).
    round_per_query : int or None
        Decimals per-query values are rounded to (as C's ``printf``).
    check_depth : bool
        Refuse cutoffs beyond the deepest rank of the lists that count (Evidently).
    depth_needs_positive : bool
        Under ``check_depth``, only lists with a positive label count.
    """

    measures: tuple[Measure, ...]
    convention: Convention
    specs: tuple[MeasureSpec, ...]
    codes: np.ndarray
    cutoffs: np.ndarray
    gain_kinds: np.ndarray
    levels: np.ndarray
    params: np.ndarray
    map_keys: np.ndarray
    map_vals: np.ndarray
    rules: tuple[Any, ...]
    log_base: float
    gain_threshold: float
    negative_zero: bool
    empty_mode: int
    ideal_judgments: bool
    err_max_grade: float | None
    round_per_query: int | None
    check_depth: bool
    depth_needs_positive: bool

    @property
    def keys(self) -> list[str]:
        """The measures' keys, in column order."""
        return [m.key for m in self.measures]


def empty_rule(m: Measure, conv: Convention, spec: MeasureSpec | None = None) -> Any:
    """The value of a query with no relevant item for ``m``: its ``-`` suffix, else its definition's under the
    convention (``spec``, e.g. CatBoost's RecallAt gives 1), else the convention's."""
    if m.empty is not None:
        return m.empty
    if spec is not None and spec.empty is not None:
        return spec.empty
    return conv.empty


def _cutoff(m: Measure, conv: Convention, spec: MeasureSpec) -> int:
    if m.k is not None:
        return int(m.k)
    if spec.default_cutoff and conv.default_cutoff is not None:
        return int(conv.default_cutoff)
    return 0


def _param(m: Measure, spec: MeasureSpec) -> float:
    if m.param is not None:
        return float(m.param)
    return float(spec.default_param) if spec.default_param is not None else float("nan")


def make_plan(convention: Convention, measures: str | Measure | Iterable[str | Measure]) -> Plan:
    """The kernel's arguments for ``measures`` under ``convention``.

    Refuses measures the convention has no definition for (see :func:`ranklens.measures.definition`).

    Examples
    --------
    >>> from ranklens import get_convention
    >>> plan = make_plan(get_convention("xgboost"), ["ndcg", "map@10"])
    >>> plan.cutoffs.tolist(), plan.rules
    ([32, 10], (1.0, 1.0))
    """
    conv = convention
    ms = tuple(parse_measures(measures))
    check_measures(ms, conv)
    specs = tuple(definition(m, conv) for m in ms)
    gains = [m.gain or conv.gain for m in ms]
    mapping = next((g for g in gains if not isinstance(g, str)), None)
    keys = sorted(mapping) if mapping else []
    rules = tuple(empty_rule(m, conv, s) for m, s in zip(ms, specs))
    return Plan(
        measures=ms,
        convention=conv,
        specs=specs,
        codes=np.array([s.code for s in specs], dtype=np.int64),
        cutoffs=np.array([_cutoff(m, conv, s) for m, s in zip(ms, specs)], dtype=np.int64),
        gain_kinds=np.array([_GAIN_KIND[g] if isinstance(g, str) else K.GAIN_MAP for g in gains], dtype=np.int64),
        levels=np.array([m.relevance_level if m.relevance_level is not None else conv.relevance_level for m in ms],
                        dtype=np.float64),
        params=np.array([_param(m, s) for m, s in zip(ms, specs)], dtype=np.float64),
        map_keys=np.array(keys, dtype=np.float64) if mapping else np.zeros(0),
        map_vals=np.array([mapping[k] for k in keys], dtype=np.float64) if mapping else np.zeros(0),
        rules=rules,
        log_base=float(conv.log_base),
        gain_threshold=-np.inf if conv.gain_threshold is None else float(conv.gain_threshold),
        negative_zero=conv.negative_labels == "zero",
        empty_mode=_EMPTY_MODE[conv.empty_test],
        ideal_judgments=conv.ideal == "judgments",
        err_max_grade=conv.err_max_grade,
        round_per_query=conv.round_per_query,
        check_depth=conv.k_beyond_longest == "error",
        depth_needs_positive=any(r == "skip" for r, s in zip(rules, specs) if s.empty_when == "no_gain"),
    )


def run_plan(plan: Plan, problem: Problem, *, whole: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Per-query values ``(n_queries, n_measures)`` (NaN where a query is skipped) and the empty-query mask.

    One kernel call computes every measure of every query (one ordering per query, shared).
    ``whole``: the problem holds every query of the evaluation, so the cutoffs are checked against its
    deepest list here (an engine running batches of queries checks the combined depth instead:
    :func:`deepest`, :func:`check_cutoffs`).
    """
    subtopical = [m.key for m, s in zip(plan.measures, plan.specs) if s.subtopics]
    if subtopical:  # no kernel code: ndeval's measures read judgments per subtopic (ranklens.evaluate)
        raise InvalidParameterError(f"{', '.join(subtopical)}: the diversity measures read judgments per subtopic; "
                                    "ranklens.evaluate, compare and `ranklens eval` compute them, this route does not.")
    if plan.check_depth and whole:
        d = deepest(plan, problem)
        check_cutoffs(plan, int(d.max()) if d.size else 0)
    _check_binary(plan, problem)
    _check_untied(plan, problem)
    err_denom = _err_denominator(plan, problem)
    # one table for both sides: the judged labels of a query are its ranked rows' labels, so the ideal
    # list is built from the ranked rows, in the same pass as the ordering
    same = problem.j_start is problem.r_start and problem.j_idx is problem.r_idx and \
        held(problem, "j_label") is held(problem, "label")
    ideal_judged = plan.ideal_judgments and not same
    tail = (problem.ties, plan.log_base, plan.negative_zero, plan.gain_threshold, err_denom, plan.empty_mode,
            plan.codes, plan.cutoffs, plan.gain_kinds, plan.levels, plan.params, plan.map_keys, plan.map_vals)
    columns = held_columns(problem, ideal_judged)
    if columns is not None:  # scores or labels held as an Arrow table's chunks: read there, no copy
        values, empties = evaluate_held(problem, columns, tail)
    else:
        values, empties = api.evaluate_queries(
            problem.r_start, problem.r_end, problem.r_idx, problem.score, problem.label, problem.order_mode,
            problem.item_offs, problem.item_data,
            problem.j_start, problem.j_end, problem.j_idx, problem.j_label, ideal_judged, *tail)
    unranked = [i for i, s in enumerate(plan.specs) if s.unranked_zero]
    if unranked:  # ir_measures' NumRel: a query without a ranked item scores 0
        values[np.ix_(problem.lengths == 0, unranked)] = 0.0
        empties[np.ix_(problem.lengths == 0, unranked)] = False
    empty_values(plan, problem.qids, values, empties)
    if plan.round_per_query is not None:
        values = _round_like_printf(values, plan.round_per_query)
    return values, empties


def empty_values(plan: Plan, qids: np.ndarray, values: np.ndarray, empties: np.ndarray) -> None:
    """The values of the queries without a relevant item (``empties``), in place, by each measure's rule: NaN
    (``"skip"``), 0 or 1, or the error ``empty="error"`` asks for."""
    for i, m in enumerate(plan.measures):
        empty = empties[:, i]
        if not empty.any():
            continue
        rule = plan.rules[i]
        if rule == "error":
            bad = qids[empty][:5]
            raise EmptyQueryError(
                f"{int(empty.sum())} queries have no relevant item for {m.key!r} "
                f"({', '.join(map(str, bad))}); convention {plan.convention.name!r} says empty='error'."
            )
        values[empty, i] = np.nan if rule == "skip" else float(rule)


#: The largest exponent of 2 a double holds: 2**1024 overflows.
_MAX_EXPONENT = 1024.0


def _err_denominator(plan: Plan, problem: Problem) -> float:
    """``2**max_grade``, ERR's normaliser (1.0, unused, when no ERR is asked); refuses grades whose
    ``2**grade`` overflows a double, for ERR and for the exponential gain ``2**label - 1``."""
    exp_gain = plan.gain_kinds == K.GAIN_EXP
    if exp_gain.any() and problem.max_label >= _MAX_EXPONENT:
        names = ", ".join(m.key for m, e in zip(plan.measures, exp_gain) if e)
        raise InvalidParameterError(
            f"{names}: the exponential gain 2**label - 1 overflows double precision for labels of 1024 or more "
            f"(largest label {problem.max_label:g}); use the linear gain (--set gain=linear) or smaller grades."
        )
    is_err = plan.codes == K.ERR
    if not is_err.any():
        return 1.0
    max_grade = plan.err_max_grade if plan.err_max_grade is not None else max(problem.max_label, 1.0)
    if not max_grade < _MAX_EXPONENT:
        names = ", ".join(m.key for m, e in zip(plan.measures, is_err) if e)
        raise InvalidParameterError(
            f"{names}: ERR's stopping probability (2**grade - 1) / 2**max_grade overflows double precision for a "
            f"maximum grade of 1024 or more (got {max_grade:g}); ERR is defined for small graded labels (0-4...)."
        )
    return float(2.0**max_grade)


def _check_binary(plan: Plan, problem: Problem) -> None:
    """Refuse labels other than 0 and 1 for a definition that takes binary labels only (XGBoost's map and
    pre: ``CheckPreLabels``, labels within 1e-6 of 0 or 1; torchmetrics' retrieval measures but NDCG)."""
    keys = [m.key for m, s in zip(plan.measures, plan.specs) if s.binary_labels]
    if not keys:
        return
    for lab in (problem.label, problem.j_label):
        lab = np.asarray(lab, dtype=np.float64)
        bad = np.isfinite(lab) & (np.abs(lab) > 1e-6) & (np.abs(lab - 1.0) > 1e-6)
        if bad.any():
            raise InputError(
                f"convention {plan.convention.name!r}: {', '.join(keys)} can only be used with binary labels "
                f"(0 or 1), as its peer takes them; got label {float(lab[bad][0])!r}. Use ndcg, or "
                "convention='ranklens'."
            )


def _check_untied(plan: Plan, problem: Problem) -> None:
    """Refuse a list whose tied scores hold both relevant and non-relevant items, for a definition whose peer
    orders tied scores in an order it does not define (torchmetrics' ``torch.topk`` / ``argsort``:
    ``MeasureSpec.untied_only``); other lists have one value whatever that order (under ``positive_scores``,
    torchmetrics' ``preds > 0``, a relevant item scored 0 or less is no hit, so ties among such scores do not
    matter either). Refuse ranks given for a definition that reads the scores themselves."""
    specs = [(m.key, s) for m, s in zip(plan.measures, plan.specs) if s.untied_only or s.positive_scores]
    if not specs:
        return
    name = plan.convention.name
    if problem.by_rank and any(s.positive_scores for _, s in specs):
        scored = ", ".join(k for k, s in specs if s.positive_scores)
        raise InputError(f"convention {name!r}: {scored} read the scores themselves (a relevant item scored 0 or less "
                         "is no hit, as torchmetrics' preds > 0); the rankings give ranks: give scores.")
    lengths = problem.r_end - problem.r_start
    q = np.repeat(np.arange(lengths.shape[0]), lengths)
    pos = np.arange(q.shape[0]) - np.repeat(np.cumsum(lengths) - lengths, lengths) + np.repeat(problem.r_start, lengths)
    rows = problem.r_idx[pos] if problem.r_idx.shape[0] else pos
    s = problem.score[rows]
    rel = np.nan_to_num(np.asarray(problem.label, dtype=np.float64)[rows]) > 0
    for filtered in (False, True):
        keys = [k for k, spec in specs if spec.untied_only and spec.positive_scores == filtered]
        if not keys:
            continue
        hit = rel & (s > 0) if filtered else rel
        o = np.lexsort((hit, s, q))
        qo, so, ho = q[o], s[o], hit[o]
        mixed = (qo[1:] == qo[:-1]) & (so[1:] == so[:-1]) & (ho[1:] != ho[:-1])  # a tie group with both kinds
        if mixed.any():
            bad = np.unique(qo[1:][mixed])
            shown = ", ".join(str(x) for x in problem.qids[bad[:5]])
            raise InputError(
                f"convention {name!r}: {', '.join(keys)} are reproduced on lists without ties between relevant and "
                f"non-relevant items: torchmetrics orders tied scores by torch.topk / argsort, in an order it does "
                f"not define; {bad.shape[0]} queries hold such ties ({shown}). convention='ranklens' gives "
                "ranklens' own (ties averaged).")


def _round_like_printf(v: np.ndarray, digits: int) -> np.ndarray:
    """Round as C's printf("%.Nf") does: from the exact binary value (np.round scales first,
    which turns 0.003125 into an exact half and rounds it to even)."""
    out = np.round(v, digits)
    scaled = v * 10.0**digits
    near_half = np.abs(np.abs(scaled - np.trunc(scaled)) - 0.5) < 1e-6
    for i in np.flatnonzero(near_half & np.isfinite(v)):  # rare: values within 1e-6 of a half
        out.flat[i] = round(float(v.flat[i]), digits)
    return out


def deepest(plan: Plan, problem: Problem) -> np.ndarray:
    """Per query: the deepest rank of its list if it counts for the cutoff check, else 0.

    Evidently builds its NDCG@1..n series up to the largest rank of the users it keeps (those with a
    positive label, unless empty queries are scored) and fails on a cutoff past it. Under
    ``ties="shared_rank"`` the deepest rank of a list is the shared rank of its last tied group.
    """
    lengths = problem.lengths
    last, positive = api.list_stats(problem.r_start, problem.r_end, problem.r_idx, problem.score, problem.label)
    out = lengths.astype(np.float64)
    if problem.ties == K.TIES_SHARED_RANK:
        out = np.where(lengths > 0, np.floor(lengths - (last - 1) / 2.0), 0)  # truncated mean rank
    if plan.depth_needs_positive:
        out = np.where(positive, out, 0)
    return out


def check_cutoffs(plan: Plan, top: int, where: str = "") -> None:
    """Refuse cutoffs beyond ``top``, the deepest rank of the lists that count (Evidently's KeyError).

    ``where`` is added after "the lists that count" (e.g. the group of a grouped evaluation).
    """
    for m in plan.measures:
        if m.k is not None and m.k > top:
            raise InvalidParameterError(
                f"convention {plan.convention.name!r}: cutoff {m.k} of {m.key!r} is beyond the deepest rank ({top}) "
                f"of the lists that count{where}; Evidently raises KeyError here (ValueError when no list counts)."
            )
