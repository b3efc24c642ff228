"""Expected exposure of stochastic rankings (Diaz et al. 2020), as expeval computes it, and Plackett-Luce samples.

Fernando Diaz, Bhaskar Mitra, Michael D. Ekstrand, Asia J. Biega, Ben Carterette. "Evaluating Stochastic
Rankings with Expected Exposure." CIKM 2020. The reference implementation is expeval (diazf/expeval, read at
commit 69ab070); every number here is checked against its output on a fixture (tests/data/expeval/SOURCE.md).

Definitions (p: patience, u: utility; i: 0-based rank; S: the query's sampled rankings):

* exposure of a rank under the user model: RBP ``p^i``; GERR ``p^i (1-u)^(relevant items above i)``;
* a document's expected exposure ``eps_d`` = its exposure averaged over the samples (0 where not ranked);
* its target exposure ``eps*_d``, from relevance: the documents in decreasing grade, ``m`` at a grade and ``b``
  above it, share the exposure of their ranks: RBP ``(p^b - p^(b+m)) / (m (1-p))``; GERR with ``pp = p (1-u)``
  ``(pp^b - pp^(b+m)) / (m (1-pp))`` for a grade above 0, ``(1-u)^b (p^b - p^(b+m)) / (m (1-p))`` for grade 0.
  The documents are the relevant ones (grade > 0), or every judged one with ``complete=True`` (re-ranking);
* EE-D (disparity) ``= ||eps||^2``, EE-R (relevance) ``= eps . eps*``, EE-L (loss, expeval's "difference")
  ``= ||eps - eps*||^2``; with group labels, each over the groups' exposures (a group's exposure is the sum of
  its judged documents' exposures, each times the document's weight in the group).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._base.runs import run_positions
from .._input.dispatch import as_judgments
from .._input.factorize import factorize_parts
from .._input.fairness import SampledRun, as_sampled_run, read_group_labels
from .._input.ids import ids_to_numpy, one_layout, take_ids
from ..errors import InputError, InvalidParameterError
from .querytable import QueryTable

__all__ = ["MEASURES", "USER_MODELS", "SampledRun", "expected_exposure", "plackett_luce"]

#: The per-query values of :func:`expected_exposure`.
MEASURES = ("EE-D", "EE-R", "EE-L")
#: expeval's user models.
USER_MODELS = ("gerr", "rbp")
#: expeval's value of a normalised measure whose bounds coincide: relevance 1, disparity 0, loss 0
_DEFAULTS = np.array([0.0, 1.0, 0.0])


def _geometric(x: float, n: np.ndarray) -> np.ndarray:
    """``sum_{i<n} x^i`` (``n`` may be infinite)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(np.isinf(n), 1.0 / (1.0 - x), (1.0 - np.power(x, np.where(np.isinf(n), 0.0, n))) / (1.0 - x))


def _lookup(keys_sorted: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of ``wanted`` in ``keys_sorted`` and whether each is there."""
    if keys_sorted.shape[0] == 0:
        return np.zeros(wanted.shape[0], np.int64), np.zeros(wanted.shape[0], np.bool_)
    pos = np.minimum(np.searchsorted(keys_sorted, wanted), keys_sorted.shape[0] - 1)
    return pos, keys_sorted[pos] == wanted


def _targets(q: np.ndarray, lab: np.ndarray, model: str, p: float, u: float) -> np.ndarray:
    """Target exposure of each target document (rows sorted by query, then grade descending)."""
    qs, _, qpos = run_positions(q)
    ls, ln, _ = run_positions(q, lab)
    b = np.repeat(qpos[ls], ln).astype(np.float64)
    m = np.repeat(ln, ln).astype(np.float64)
    if model == "rbp":
        return (p ** b - p ** (b + m)) / (m * (1.0 - p))
    pp = p * (1.0 - u)
    graded = (pp ** b - pp ** (b + m)) / (m * (1.0 - pp))
    zero = (1.0 - u) ** b * (p ** b - p ** (b + m)) / (m * (1.0 - p))
    return np.where(lab > 0, graded, zero)


def expected_exposure(judgments: Any, run: Any, *, groups: Any = None, user_model: str = "gerr",
                      patience: float = 0.5, utility: float = 0.5, binarize: bool = False, complete: bool = False,
                      normalize: bool | None = None, confidence: float = 0.95, ci: str = "bca",
                      n_resamples: int = 10000, seed: int = 0, **columns: Any) -> QueryTable:
    """Expected exposure of stochastic rankings (Diaz et al. 2020): EE-D, EE-R and EE-L per query, as expeval.

    Parameters
    ----------
    judgments : path, dict, table...
        Graded relevance (every form :func:`ranklens.evaluate` takes).
    run : path, SampledRun, or any run
        The stochastic rankings: a :class:`SampledRun` (:func:`plackett_luce` samples one from a run's scores), a
        file in expeval's format (a TREC run whose second column names the sample: ``q1 3 doc7 2 0.9 tag``;
        the rank column orders each sample, as expeval, which ignores the score), or any run
        :func:`ranklens.as_rankings` reads (one deterministic ranking per query).
    groups : path or mapping, optional
        Group labels of items (lines ``item group [weight]``, or ``{item: group}``...): the measures are then
        computed over the groups' exposures (expeval's ``-G``), and given unnormalised.
    user_model : {"gerr", "rbp"}, default="gerr"
        expeval's ``-u``: the exposure of a rank.
    patience, utility : float, default=0.5
        expeval's ``-p`` and ``-r``: ``0 < patience < 1``, ``0 <= utility <= 1``.
    binarize : bool, default=False
        expeval's ``-B``: grades above 0 become 1.
    complete : bool, default=False
        expeval's ``-C``: every judged document has a target exposure (re-ranking); otherwise the relevant ones
        (retrieval), the others' target being 0.
    normalize : bool, optional
        Each value mapped to ``(v - lb) / (ub - lb)`` with expeval's bounds for the query (its default value where
        the bounds coincide: EE-R 1, EE-D 0, EE-L 0); expeval's default, and so the default here without groups.
        Refused with groups: expeval's group bounds are not bounds (its group relevance's upper bound is 0 by
        construction, its group disparity's bounds put values below 0).
    confidence, ci, n_resamples, seed
        The intervals of the means (see :class:`QueryTable`).
    **columns
        Table columns and formats of the inputs (``query_col=``...).

    Returns
    -------
    QueryTable
        ``EE-D``, ``EE-R``, ``EE-L`` per query with a target (queries without a relevant document are left out,
        as expeval leaves them), their means and intervals.

    Notes
    -----
    As expeval: a query judged but not ranked gets EE-D at its upper bound and EE-R at its lower bound; its
    EE-L is the loss of an empty ranking, ``||eps*||^2``, which is expeval's value too except in one case,
    a query with a single relevance grade, where expeval's code reads EE-R's upper bound after setting it to
    0 (and prints 0). With a single relevance grade (every query under ``binarize``) expeval sets EE-R's
    bounds to 0, so its normalised EE-R is 1 for every ranking.

    Examples
    --------
    >>> from ranklens.fairness import expected_exposure
    >>> qrels = {"q": {"a": 1, "b": 1, "c": 0}}
    >>> one = {"q": {"a": 3.0, "c": 2.0, "b": 1.0}}  # a deterministic ranking: a, c, b
    >>> t = expected_exposure(qrels, one, user_model="rbp", normalize=False, ci="percentile", n_resamples=10)
    >>> t.per_query_dict("EE-D")  # 1 + 0.5^2 + 0.25^2: every rank's exposure, squared
    {'q': 1.3125}
    """
    if user_model not in USER_MODELS:
        raise InvalidParameterError(f"`user_model` must be one of {', '.join(USER_MODELS)}; got {user_model!r}.")
    p, u = float(patience), float(utility)
    if not 0.0 < p < 1.0:
        raise InvalidParameterError(f"`patience` must lie strictly between 0 and 1; got {patience!r}.")
    if not 0.0 <= u <= 1.0:
        raise InvalidParameterError(f"`utility` must lie in [0, 1]; got {utility!r}.")
    if normalize is None:
        normalize = groups is None
    if normalize and groups is not None:
        raise InvalidParameterError(
            "normalize=True with group labels: expeval's group bounds are not bounds (its group relevance's upper "
            "bound is 0 by construction, its group disparity can fall below its lower bound); ranklens gives "
            "group-level expected exposure unnormalised (normalize=False).")
    j = as_judgments(judgments, **{k: v for k, v in columns.items() if k != "score_col" and k != "rank_col"})
    sr = as_sampled_run(run, **{k: v for k, v in columns.items() if k != "label_col"})
    labels = read_group_labels(groups) if groups is not None else None
    values, queries, notes = _compute(j, sr, labels, user_model, p, u, binarize, complete, bool(normalize))
    settings = {"user_model": user_model, "patience": p, "utility": u, "binarize": binarize, "complete": complete,
                "normalize": bool(normalize), "groups": None if labels is None else labels.source}
    return QueryTable.build(list(MEASURES), queries, values, confidence=confidence, ci=ci, n_resamples=n_resamples,
                            seed=seed, settings=settings, notes=notes,
                            title="expected exposure (Diaz et al. 2020, as expeval)")


def _compute(j: Any, sr: SampledRun, labels: Any, model: str, p: float, u: float, binarize: bool, complete: bool,
             normalize: bool) -> tuple[np.ndarray, np.ndarray, list[str]]:
    id_parts = [j.item, sr.item] + ([labels.item] if labels is not None else [])
    (jq, rq), quniq, qorder = factorize_parts(one_layout([j.qid, sr.qid]))
    icodes, iuniq, _ = factorize_parts(one_layout(id_parts))
    ji, ri = icodes[0].astype(np.int64), icodes[1].astype(np.int64)
    n_i, n_q = max(int(iuniq.shape[0]), 1), int(quniq.shape[0])
    label = np.where(j.label > 0, 1.0, j.label) if binarize else j.label
    jkey = jq.astype(np.int64) * n_i + ji
    jorder = np.argsort(jkey, kind="stable")
    if jkey.shape[0] > 1 and (np.diff(jkey[jorder]) == 0).any():
        raise InputError(f"{j.source or 'the judgments'}: a document is judged twice for one query.")
    # the target documents: relevant, or every judged one (complete)
    in_t = np.ones(label.shape[0], np.bool_) if complete else label > 0
    tq, ti, tl = jq[in_t].astype(np.int64), ji[in_t], label[in_t]
    order = np.lexsort((-tl, tq))
    tq, ti, tl = tq[order], ti[order], tl[order]
    t = _targets(tq, tl, model, p, u)
    has_target = np.zeros(n_q, np.bool_)
    has_target[tq] = True
    notes = []
    judged_only = np.zeros(n_q, np.bool_)
    judged_only[jq] = True
    if (judged_only & ~has_target).any():
        notes.append(f"{int((judged_only & ~has_target).sum())} judged queries without a relevant document: left out "
                     "(no target exposure), as expeval")
    # the run: rows of queries with a target, in (query, sample, rank) order
    keep = has_target[rq]
    ranked_q = np.zeros(n_q, np.bool_)
    ranked_q[rq] = True
    if (ranked_q & ~has_target).any():
        notes.append(f"{int((ranked_q & ~has_target).sum())} ranked queries without a target (not judged, or no "
                     "relevant document): left out")
    rq_k, ri_k = rq[keep].astype(np.int64), ri[keep]
    rs, rr = sr.sample[keep], sr.rank[keep]
    order = np.lexsort((rr, rs, rq_k))
    rq_k, ri_k, rs, rr = rq_k[order], ri_k[order], rs[order], rr[order]
    _check_samples(sr, np.flatnonzero(keep)[order], rq_k, rs, rr, ri_k)
    starts, lengths, pos = run_positions(rq_k, rs)
    rkey = rq_k * n_i + ri_k
    jpos, found = _lookup(jkey[jorder], rkey)
    rel = found & (label[jorder][jpos] > 0)
    if model == "gerr":
        csum = np.cumsum(rel) - rel
        above = csum - np.repeat(csum[starts], lengths)
        e = p ** pos.astype(np.float64) * (1.0 - u) ** above.astype(np.float64)
    else:
        e = p ** pos.astype(np.float64)
    samples_per_q = np.bincount(rq_k[starts], minlength=n_q).astype(np.float64)
    # expected exposure of each ranked (query, document)
    pair_order = np.argsort(rkey, kind="stable")
    ps, pn, _ = run_positions(rkey[pair_order])
    pkey = rkey[pair_order][ps]
    pq = pkey // n_i
    eps = np.add.reduceat(e[pair_order], ps) / samples_per_q[pq] if ps.shape[0] else np.zeros(0)
    tkey = tq * n_i + ti
    tpos, tfound = _lookup(pkey, tkey)
    eps_t = np.where(tfound, eps[tpos] if eps.shape[0] else 0.0, 0.0)
    if labels is None:
        raw, bounds = _document_metrics(n_q, tq, t, tl, eps_t, pq, pkey, eps, tkey, p, u, model, complete)
    else:
        raw, bounds, unlabelled = _group_metrics(n_q, tq, ti, t, eps_t, labels, icodes[2].astype(np.int64), label,
                                                 jq, p, u, model)
        if unlabelled:
            notes.append(f"{unlabelled} target documents without a group label: in no group's exposure")
    ranked = np.zeros(n_q, np.bool_)
    ranked[rq_k] = True
    missing = has_target & ~ranked
    lb, ub = bounds
    raw[missing, 0] = ub[missing, 0]
    raw[missing, 1] = lb[missing, 1]
    if missing.any():
        notes.append(f"{int(missing.sum())} queries with a target but no ranking: EE-D at its upper bound, EE-R at its "
                     "lower bound, EE-L that of an empty ranking")
    values = raw
    if normalize:
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.where(ub == lb, _DEFAULTS, (raw - lb) / (ub - lb))
    sel = qorder[has_target[qorder]]
    return values[sel], quniq[sel], notes


def _one(ids: Any, row: int) -> str:
    """One id, as text (for messages)."""
    return str(ids_to_numpy(take_ids(ids, np.array([row], np.int64)))[0])


def _check_samples(sr: SampledRun, rows: np.ndarray, q: np.ndarray, s: np.ndarray, r: np.ndarray,
                   item: np.ndarray) -> None:
    """Within a sample, each rank and each document once (expeval refuses a repeated rank)."""
    same = np.zeros(q.shape[0], np.bool_)
    same[1:] = (q[1:] == q[:-1]) & (s[1:] == s[:-1]) & (r[1:] == r[:-1])
    if same.any():
        row = int(rows[np.flatnonzero(same)[0]])
        raise InputError(f"{sr.source or 'the run'}: rank {r[np.flatnonzero(same)[0]]:g} appears twice in one sample "
                         f"of query {_one(sr.qid, row)} (a sample is a ranking: no ties).")
    order = np.lexsort((item, s, q))
    dup = np.zeros(q.shape[0], np.bool_)
    a, b, c = q[order], s[order], item[order]
    dup[1:] = (a[1:] == a[:-1]) & (b[1:] == b[:-1]) & (c[1:] == c[:-1])
    if dup.any():
        row = int(rows[order][np.flatnonzero(dup)[0]])
        raise InputError(f"{sr.source or 'the run'}: item {_one(sr.item, row)} appears twice in "
                         f"one sample of query {_one(sr.qid, row)}.")


def _document_metrics(n_q: int, tq: np.ndarray, t: np.ndarray, tl: np.ndarray, eps_t: np.ndarray, pq: np.ndarray,
                      pkey: np.ndarray, eps: np.ndarray, tkey: np.ndarray, p: float, u: float, model: str,
                      complete: bool) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Per query: (EE-D, EE-R, EE-L) over documents, and expeval's (lower, upper) bounds of each."""
    _, in_target = _lookup(np.sort(tkey), pkey)
    disp = np.bincount(pq, weights=eps * eps, minlength=n_q)
    rel = np.bincount(tq, weights=t * eps_t, minlength=n_q)
    loss = np.bincount(tq, weights=(t - eps_t) ** 2, minlength=n_q) + \
        np.bincount(pq, weights=np.where(in_target, 0.0, eps * eps), minlength=n_q)
    tt = np.bincount(tq, weights=t * t, minlength=n_q)
    n_t = np.bincount(tq, minlength=n_q).astype(np.float64)
    _, ln, _ = run_positions(tq, tl)
    levels = np.bincount(tq[np.cumsum(ln) - 1], minlength=n_q) if ln.shape[0] else np.zeros(n_q, np.int64)
    n = n_t if complete else np.full(n_q, np.inf)
    pp = p if model == "rbp" else p * u
    lb = np.zeros((n_q, 3))
    ub = np.zeros((n_q, 3))
    ub[:, 0] = _geometric(p * p, n)
    ub[:, 1] = tt
    ub[:, 2] = tt + _geometric(pp, np.full(n_q, np.inf))
    if complete:
        with np.errstate(invalid="ignore", divide="ignore"):
            lb[:, 0] = _geometric(pp, n) ** 2 / n
        asc = np.lexsort((t, tq))
        _, _, i = run_positions(tq[asc])
        w = pp ** i.astype(np.float64)
        lb[:, 1] = np.bincount(tq[asc], weights=w * t[asc], minlength=n_q)
        ub[:, 2] = np.bincount(tq[asc], weights=(w - t[asc]) ** 2, minlength=n_q)
    single = levels <= 1
    lb[single, 1] = 0.0
    ub[single, 1] = 0.0
    return np.column_stack([disp, rel, loss]), (lb, ub)


def _group_metrics(n_q: int, tq: np.ndarray, ti: np.ndarray, t: np.ndarray, eps_t: np.ndarray, labels: Any,
                   litem: np.ndarray, label: np.ndarray, jq: np.ndarray, p: float, u: float,
                   model: str) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray], int]:
    """Per query: (EE-D, EE-R, EE-L) over the groups of the target documents, expeval's bounds of EE-D (the only
    ones used: a query not ranked gets its upper bound), and the number of target documents without a label."""
    lorder = np.argsort(litem, kind="stable")
    li, lg, lw = litem[lorder], labels.group[lorder], labels.weight[lorder]
    lo = np.searchsorted(li, ti, side="left")
    hi = np.searchsorted(li, ti, side="right")
    count = hi - lo
    rows = np.repeat(np.arange(tq.shape[0]), count)
    at = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count) + np.repeat(lo, count)
    n_g = len(labels.groups)
    key = tq[rows] * n_g + lg[at]
    target = np.bincount(key, weights=lw[at] * t[rows], minlength=n_q * n_g).reshape(n_q, n_g)
    exposed = np.bincount(key, weights=lw[at] * eps_t[rows], minlength=n_q * n_g).reshape(n_q, n_g)
    present = np.bincount(key, minlength=n_q * n_g).reshape(n_q, n_g) > 0
    disp = (exposed ** 2).sum(axis=1)
    rel = (exposed * target).sum(axis=1)
    loss = ((target - exposed) ** 2).sum(axis=1)
    k = present.sum(axis=1)
    r = np.bincount(jq[label > 0], minlength=n_q).astype(np.float64)
    lb = np.zeros((n_q, 3))
    ub = np.zeros((n_q, 3))
    many = k > 1
    ub[many, 0] = _geometric(p, r[many]) ** 2 * k[many]
    pp = p if model == "rbp" else p * u
    lb[many, 0] = k[many] * _geometric(pp, r[many]) ** 2
    return np.column_stack([disp, rel, loss]), (lb, ub), int((count == 0).sum())


def plackett_luce(run: Any, n_samples: int = 50, *, temperature: float = 1.0, depth: int | None = None,
                  seed: int = 0, **columns: Any) -> SampledRun:
    """Stochastic rankings sampled from a run's scores by the Plackett-Luce model.

    Each sample ranks a query's items by successive draws without replacement, item ``d`` drawn with
    probability proportional to ``exp(score_d / temperature)`` among those left; drawn at once by the Gumbel
    trick (each item's ``score / temperature`` plus standard Gumbel noise, sorted), on flat arrays.

    Parameters
    ----------
    run : any run
        Scores (every form :func:`ranklens.as_rankings` takes).
    n_samples : int, default=50
        Rankings per query.
    temperature : float, default=1.0
        Larger: closer to uniformly random rankings; smaller: closer to the run's own order.
    depth : int, optional
        Keep the first ``depth`` items of each sampled ranking (default: all).
    seed : int, default=0
        The same samples for the same seed.

    Returns
    -------
    SampledRun

    Examples
    --------
    >>> from ranklens.fairness import plackett_luce
    >>> s = plackett_luce({"q": {"a": 2.0, "b": 1.0, "c": 0.0}}, n_samples=4, seed=1)
    >>> len(s), int(s.sample.max()) + 1
    (12, 4)
    """
    from .._input.dispatch import as_rankings

    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 1:
        raise InvalidParameterError(f"`n_samples` must be a positive integer; got {n_samples!r}.")
    if not (isinstance(temperature, (int, float)) and math.isfinite(temperature) and temperature > 0):
        raise InvalidParameterError(f"`temperature` must be a positive number; got {temperature!r}.")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1):
        raise InvalidParameterError(f"`depth` must be a positive integer or None; got {depth!r}.")
    r = as_rankings(run, **columns)
    if r.qid is None or r.score is None:
        raise InputError(f"{r.source or 'the run'} needs query ids and scores to sample rankings from.")
    (codes,), _, _ = factorize_parts(one_layout([r.qid]))
    n = len(r)
    rows = np.tile(np.arange(n), int(n_samples))
    sample = np.repeat(np.arange(int(n_samples), dtype=np.int64), n)
    gumbel = -np.log(-np.log(np.random.default_rng(seed).random(rows.shape[0])))
    key = r.score[rows] / float(temperature) + gumbel
    order = np.lexsort((-key, sample, codes[rows]))
    _, _, pos = run_positions(codes[rows][order], sample[order])
    keep = pos < depth if depth is not None else np.ones(pos.shape[0], np.bool_)
    picked = rows[order][keep]
    return SampledRun(take_ids(r.qid, picked), take_ids(r.item, picked), sample[order][keep],
                      (pos[keep] + 1).astype(np.float64), source=f"plackett_luce({r.source or 'run'})")
