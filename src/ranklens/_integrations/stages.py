"""Two-stage systems (candidate generation, then ranking): each stage measured by what it can lose.

``two_stage(judgments, candidates, ranking)`` gives, per query and on average with intervals: the recall of
the candidate set (recall@N of the first stage's list), the NDCG@k of the final ranking, the NDCG@k of the
ideal re-ranking of the candidates (the candidates ordered by their judged gain: the best any ranker given
these candidates can do, the ranker's ceiling), and the loss split between the stages: what the candidate
set loses (1 - ceiling) and what the ranker loses of what the candidates allow (ceiling - NDCG@k), which add
up to the system's loss 1 - NDCG@k.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._base.runs import run_positions
from .._core.evaluate import evaluate
from .._defs.presets import get_convention
from .._input.dispatch import as_rankings, is_pathlike
from .._input.factorize import factorize_parts
from .._input.ids import filter_ids, one_layout
from .._input.options import load_inputs, split_options
from .._input.records import Judgments, Rankings
from ..errors import InvalidParameterError
from .querytable import QueryTable

__all__ = ["two_stage"]


def _top(run: Rankings, depth: int | None) -> tuple[Rankings, np.ndarray]:
    """The first ``depth`` rows of each query's list by descending score (all when None; ties in the given
    order), and the query codes of those rows."""
    (codes,), _, _ = factorize_parts(one_layout([run.qid]))
    key = run.order_key()
    order = np.lexsort((-key, codes))
    pos = run_positions(codes[order])[2]
    keep = np.zeros(order.shape[0], np.bool_)
    keep[order] = True if depth is None else pos < depth
    return Rankings(filter_ids(run.qid, keep), filter_ids(run.item, keep),
                    score=run.score[keep] if run.score is not None else None,
                    rank=run.rank[keep] if run.rank is not None else None, source=run.source), keep


def _labels_of(judgments: Judgments, run: Rankings) -> np.ndarray:
    """The judged label of every row of ``run`` (NaN where unjudged)."""
    (jq, rq), _, _ = factorize_parts(one_layout([judgments.qid, run.qid]))
    (ji, ri), items, _ = factorize_parts(one_layout([judgments.item, run.item]))
    n_i = max(int(items.shape[0]), 1)
    jkey = jq.astype(np.int64) * n_i + ji
    rkey = rq.astype(np.int64) * n_i + ri
    order = np.argsort(jkey, kind="stable")
    sk = jkey[order]
    pos = np.minimum(np.searchsorted(sk, rkey), max(sk.shape[0] - 1, 0))
    found = (sk.shape[0] > 0) & (sk[pos] == rkey) if sk.shape[0] else np.zeros(rkey.shape[0], np.bool_)
    return np.where(found, judgments.label[order][pos] if sk.shape[0] else np.nan, np.nan)


def _gain_key(labels: np.ndarray, gain: Any) -> np.ndarray:
    """An order key of the labels by their gain under the convention (unjudged last)."""
    key = np.where(np.isnan(labels), -np.inf, labels)
    if isinstance(gain, dict) or hasattr(gain, "items"):
        mapped = dict(gain)
        key = np.array([mapped.get(v, v) if np.isfinite(v) else v for v in key.tolist()], np.float64)
    lowest = float(key[np.isfinite(key)].min()) - 1.0 if np.isfinite(key).any() else 0.0
    return np.where(np.isfinite(key), key, lowest)


def two_stage(judgments: Any, candidates: Any, ranking: Any, *, depth: int | None = None, k: int = 10,
              convention: Any = None, confidence: float = 0.95, ci: str = "bca", n_resamples: int = 10000,
              seed: int = 0, **options: Any) -> QueryTable:
    """Measure a two-stage system (candidate generation, then ranking), each stage by what it can lose.

    Parameters
    ----------
    judgments : path, dict, table...
        Relevance judgments (every form :func:`ranklens.evaluate` takes).
    candidates : path, dict, table...
        The first stage's lists (scores or ranks): the candidate set of each query is its first ``depth``.
    ranking : path, dict, table...
        The second stage's final lists.
    depth : int, optional
        N, the number of candidates per query handed to the ranker (default: every candidate).
    k : int, default=10
        The cutoff of NDCG.
    convention : str or Convention, default="ranklens"
        The convention of the three measures (its query rule, gains, ties, empty queries...).
    confidence, ci, n_resamples, seed
        The intervals of the means (bootstrap BCa / percentile, or t; see :mod:`ranklens.stats`).
    **options
        Convention field overrides and table columns, as :func:`ranklens.evaluate` takes them.

    Returns
    -------
    QueryTable
        Per query and on average, with intervals:

        * ``recall@N (candidates)``: the share of the query's relevant items among its N candidates;
        * ``ndcg@k (ranking)``: the final ranking's NDCG@k;
        * ``ndcg@k (ceiling)``: the NDCG@k of the candidates ordered by their judged gain, the best ranking
          of these candidates (unjudged candidates last);
        * ``loss (candidates)`` = 1 - ceiling: what the candidate set loses;
        * ``loss (ranking)`` = ceiling - NDCG@k: what the ranker loses of what its candidates allow (negative
          when the final lists hold relevant items that are not among the candidates: counted in a note).

        The two losses add up to 1 - NDCG@k. Queries are those the convention evaluates; a query without a
        relevant item is left out as the convention says (under ``ranklens``: skipped, and noted).

    Examples
    --------
    >>> import ranklens
    >>> qrels = {"q": {"a": 2, "b": 1, "c": 1}}
    >>> candidates = {"q": {"a": 0.9, "x": 0.8, "b": 0.7}}  # c was not retrieved
    >>> ranking = {"q": {"b": 2.0, "a": 1.0, "x": 0.5}}
    >>> t = ranklens.two_stage(qrels, candidates, ranking, k=3, ci="percentile", n_resamples=100)
    >>> round(t["recall (candidates)"], 4), round(t["ndcg@3 (ceiling)"], 4), round(t["ndcg@3 (ranking)"], 4)
    (0.6667, 0.8403, 0.7224)
    """
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise InvalidParameterError(f"`k` must be a positive integer; got {k!r}.")
    if depth is not None and (not isinstance(depth, (int, np.integer)) or isinstance(depth, bool) or depth < 1):
        raise InvalidParameterError(f"`depth` must be a positive integer or None; got {depth!r}.")
    columns, formats, overrides = split_options(options)
    conv = get_convention(convention, **overrides)
    j, cand = load_inputs(judgments, candidates, columns, formats)
    rank = as_rankings(ranking, **columns.rankings_kwargs(),
                       **({"format": formats.run} if is_pathlike(ranking) and formats.run else {}))
    for name, r in (("candidates", cand), ("ranking", rank)):
        if r.qid is None:
            raise InvalidParameterError(f"`{name}` is a bare vector of scores: give query and item ids.")
    top, _ = _top(cand, None if depth is None else int(depth))
    labels = _labels_of(j, top)
    ideal = Rankings(top.qid, top.item, score=_gain_key(labels, conv.gain), source="the candidates ordered by gain")
    recall = f"recall@{depth}" if depth is not None else "recall"
    ndcg = f"ndcg@{k}"
    r_cand = evaluate(j, top, [recall], convention=conv)
    r_rank = evaluate(j, rank, [ndcg], convention=conv)
    r_ceil = evaluate(j, ideal, [ndcg], convention=conv)
    queries = r_rank.queries
    values = np.full((queries.shape[0], 5), np.nan)
    for col, res in ((0, r_cand), (1, r_rank), (2, r_ceil)):
        at = {q: i for i, q in enumerate(res.queries.tolist())}
        rows = np.array([at.get(q, -1) for q in queries.tolist()], np.int64)
        ok = rows >= 0
        values[ok, col] = res.values[rows[ok], 0]
    values[:, 3] = 1.0 - values[:, 2]
    values[:, 4] = values[:, 2] - values[:, 1]
    notes = [str(e) for e in r_rank.excluded]
    beyond = int(np.sum(values[:, 4] < -1e-12))
    if beyond:
        notes.append(f"{beyond} queries: the final ranking scores above the ideal re-ranking of the candidates (its "
                     "lists hold relevant items that are not among the candidates): a negative ranking loss")
    names = [f"{recall} (candidates)", f"{ndcg} (ranking)", f"{ndcg} (ceiling)", "loss (candidates)",
             "loss (ranking)"]
    return QueryTable.build(names, queries, values, confidence=confidence, ci=ci, n_resamples=n_resamples, seed=seed,
                            settings={"depth": depth, "k": int(k), "convention": conv.name}, notes=notes,
                            title="two-stage evaluation: candidates, then ranking")
