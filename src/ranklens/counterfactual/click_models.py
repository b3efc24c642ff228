"""Click models fitted from a click log: PBM (EM, regression EM), cascade, DCM, DBN (EM) and SDBN.

:func:`fit_click_model` reads the log (any table form, :func:`ranklens.counterfactual.read_log`), fits the
model (:mod:`ranklens.counterfactual._fit` holds the arithmetic) and returns a :class:`FittedClickModel`:
the examination per rank **relative to rank 1** (PBM: ``theta_r / theta_1``; the cascade models: the mean over
the logged sessions of the model's ``P(E_r = 1)``, rank 1 being always examined), the attractiveness of every
(query, item) pair of the log, the log-likelihood and the perplexity per rank (lower is better: 1 is a perfect
prediction, 2 a coin), for choosing a model.

Without randomisation, a PBM's examination is identified only by items shown at several ranks (the same
(query, item) pair at different positions: several rankers, a stochastic logging policy, interventions); a log
where each pair has a single rank leaves the EM where it started for the ranks' share of the clicks. See
:mod:`ranklens.counterfactual.propensity` for the estimates from interventions.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError, InvalidParameterError
from ..online.click_models import cascade_examination
from ._fit import check_kind, fit_cascade_family, fit_dbn, fit_pbm, forward_loglik
from ._log import ClickLog, read_log

__all__ = ["MODELS", "ByRank", "FittedClickModel", "fit_click_model"]

#: The click models :func:`fit_click_model` fits.
MODELS = ("pbm", "cascade", "dcm", "dbn", "sdbn")


class ByRank(Mapping[int, float]):
    """Values per rank, indexed from 1 (``curve[1]`` is rank 1); ``.array`` is the numpy array (rank 1 first).

    >>> c = ByRank([1.0, 0.5])
    >>> c[2], list(c), c.array.tolist()
    (0.5, [1, 2], [1.0, 0.5])
    """

    def __init__(self, values: Any) -> None:
        self.array = np.asarray(values, dtype=np.float64)
        self.array.setflags(write=False)

    def __getitem__(self, rank: int) -> float:
        if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or not 1 <= rank <= len(self.array):
            raise KeyError(f"rank {rank!r}: ranks go from 1 to {len(self.array)}")
        return float(self.array[int(rank) - 1])

    def __iter__(self) -> Iterator[int]:
        return iter(range(1, len(self.array) + 1))

    def __len__(self) -> int:
        return len(self.array)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.array, dtype=dtype)

    def __repr__(self) -> str:
        return "ByRank(" + ", ".join(f"{r}: {v:.4g}" for r, v in zip(self, self.array)) + ")"


@dataclass(frozen=True, eq=False)
class FittedClickModel:
    """A click model fitted on a log.

    Attributes
    ----------
    kind : {"pbm", "cascade", "dcm", "dbn", "sdbn"}
    examination : ByRank
        ``P(E_r = 1) / P(E_1 = 1)`` for ranks 1..depth (see the module).
    attractiveness : ndarray
        ``alpha`` of each (query, item) pair (``query_ids`` / ``item_ids``); PBM: on the scale where rank 1's
        examination is ``theta1`` (only products ``theta * alpha`` are identified).
    satisfaction : ndarray or None
        DBN / SDBN: ``sigma`` per pair.
    continuation : float or ByRank or None
        DBN: gamma; DCM: ``lambda_r`` per rank (the probability of going on after a click at rank r).
    theta1 : float
        PBM: the fitted examination of rank 1 (1 for the cascade models).
    log_likelihood : float
        Of the log under the model (natural log, summed over rows).
    perplexity : ByRank
        ``2 ** (-mean log2 P(C_r = c_r | clicks above r))`` per rank.
    impossible_clicks : int
        Clicks the model gives probability 0 (cascade: every click after a session's first).
    """

    kind: str
    examination: ByRank
    query_ids: np.ndarray
    item_ids: np.ndarray
    attractiveness: np.ndarray
    impressions: np.ndarray
    clicks: np.ndarray
    satisfaction: np.ndarray | None
    continuation: float | ByRank | None
    theta1: float
    log_likelihood: float
    perplexity: ByRank
    n_sessions: int
    n_rows: int
    iterations: int
    converged: bool
    rows_per_rank: np.ndarray
    clicks_per_rank: np.ndarray
    impossible_clicks: int = 0
    coefficients: np.ndarray | None = None
    has_query: bool = True
    _index: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def depth(self) -> int:
        """The deepest rank the model covers."""
        return len(self.examination)

    @property
    def mean_perplexity(self) -> float:
        """The perplexity over all ranks (rows weighted equally)."""
        return float(2 ** np.average(np.log2(self.perplexity.array), weights=self._rank_rows()))

    def _rank_rows(self) -> np.ndarray:
        return np.asarray(self.rows_per_rank, dtype=np.float64)

    def pair_index(self, query_ids: np.ndarray, item_ids: np.ndarray) -> np.ndarray:
        """The index of each (query, item) among the model's pairs, -1 where the log never showed it (ids
        compared as strings; hashed by Arrow, no loop over pairs)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        def text(ids: np.ndarray) -> Any:
            if isinstance(ids, np.ndarray) and ids.dtype == object:
                try:  # a log's ids: Python strings already
                    return pa.array(ids, pa.string())
                except (pa.ArrowException, TypeError):
                    pass
            return pa.array(np.asarray(ids, dtype=object).astype(str), pa.string())

        if not self._index:  # the model's pairs as integer keys over its distinct query and item ids
            qs = pc.dictionary_encode(text(self.query_ids if self.has_query else np.full(len(self.item_ids), "")))
            its = pc.dictionary_encode(text(self.item_ids))
            n_items = max(len(its.dictionary), 1)
            keys = (qs.indices.to_numpy(zero_copy_only=False).astype(np.int64) * n_items
                    + its.indices.to_numpy(zero_copy_only=False).astype(np.int64))
            self._index.update(queries=qs.dictionary, items=its.dictionary, n_items=n_items, keys=pa.array(keys))
        ix = self._index
        if not self.has_query:
            query_ids = np.full(len(item_ids), "", dtype=object)
        q = np.asarray(pc.index_in(text(query_ids), value_set=ix["queries"]).fill_null(-1), dtype=np.int64)
        i = np.asarray(pc.index_in(text(item_ids), value_set=ix["items"]).fill_null(-1), dtype=np.int64)
        asked = np.where((q >= 0) & (i >= 0), q * ix["n_items"] + i, -1)
        return np.asarray(pc.index_in(pa.array(asked), value_set=ix["keys"]).fill_null(-1), dtype=np.int64)

    def table(self) -> Any:
        """The pairs as a pyarrow Table: query, item, attractiveness, [satisfaction,] impressions, clicks."""
        import pyarrow as pa

        cols: dict[str, Any] = {}
        if self.has_query:
            cols["query"] = pa.array(self.query_ids.astype(str))
        cols["item"] = pa.array(self.item_ids.astype(str))
        cols["attractiveness"] = self.attractiveness
        if self.satisfaction is not None:
            cols["satisfaction"] = self.satisfaction
        cols["impressions"] = self.impressions.astype(np.int64)
        cols["clicks"] = self.clicks.astype(np.int64)
        return pa.table(cols)

    def ranks(self) -> Any:
        """Per rank: examination (relative to rank 1), perplexity, rows and clicks (a pyarrow Table)."""
        import pyarrow as pa

        d = self.depth
        return pa.table({"rank": np.arange(1, d + 1), "examination": self.examination.array,
                         "perplexity": self.perplexity.array, "rows": self._rank_rows().astype(np.int64),
                         "clicks": np.asarray(self.clicks_per_rank, dtype=np.int64)})

    def to_dict(self) -> dict[str, Any]:
        """The model's summary as plain JSON values (not the per-pair parameters: :meth:`table`)."""
        cont: Any = self.continuation
        if isinstance(cont, ByRank):
            cont = cont.array.tolist()
        return {"model": self.kind, "examination": self.examination.array.tolist(), "theta1": self.theta1,
                "continuation": cont, "log_likelihood": self.log_likelihood,
                "perplexity": self.perplexity.array.tolist(), "mean_perplexity": self.mean_perplexity,
                "sessions": self.n_sessions, "rows": self.n_rows, "pairs": len(self.attractiveness),
                "iterations": self.iterations, "converged": self.converged,
                "impossible_clicks": self.impossible_clicks}

    def __repr__(self) -> str:
        return (f"FittedClickModel(kind={self.kind!r}, sessions={self.n_sessions}, pairs={len(self.attractiveness)}, "
                f"examination={self.examination!r}, mean_perplexity={self.mean_perplexity:.4f})")


def _features(log: ClickLog, names: Sequence[str]) -> np.ndarray:
    """Per pair, the features (constant within a pair: checked)."""
    cols = []
    n = np.bincount(log.pair, minlength=log.n_pairs).astype(np.float64)
    for name in names:
        x = log.extra[name]
        s = np.bincount(log.pair, weights=x, minlength=log.n_pairs)
        s2 = np.bincount(log.pair, weights=x * x, minlength=log.n_pairs)
        mean = s / np.maximum(n, 1)
        var = s2 / np.maximum(n, 1) - mean * mean
        if (var > 1e-9 * np.maximum(1.0, mean * mean)).any():
            p = int(np.argmax(var > 1e-9 * np.maximum(1.0, mean * mean)))
            raise InputError(f"{log.source}: feature {name!r} differs between rows of the same (query, item) pair "
                             f"(item {log.item_ids[log.pair_item[p]]!r}); a feature of the regression EM describes "
                             "the pair.")
        cols.append(mean)
    X = np.column_stack(cols)
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def fit_click_model(log: Any, model: str = "pbm", *, session_col: str | None = None, query_col: str | None = None,
                    item_col: str | None = None, rank_col: str | None = None, click_col: str | None = None,
                    click_label: str = "click", features: Sequence[str] | None = None, iterations: int = 200,
                    tol: float = 1e-4) -> FittedClickModel:
    """Fit a click model on a click log.

    Parameters
    ----------
    log : table, mapping of columns or path
        One row per served item: session (``group_id``), query (optional: without it an item id is its own
        pair), item, rank (1 = top) and click (``click`` 0/1, or ``labels`` holding ``click_label``).
    model : {"pbm", "cascade", "dcm", "dbn", "sdbn"}
    session_col, query_col, item_col, rank_col, click_col : str, optional
        Column names (defaults: group_id, query, item_id, rank, click or labels).
    features : list of str, optional
        PBM only: numeric columns describing each (query, item) pair; alpha becomes a logistic regression on
        them (regression EM, for logs where most pairs are seen a few times).
    iterations, tol : EM's limits (PBM, DBN): stop when no parameter moves by more than ``tol``.

    Returns
    -------
    FittedClickModel

    Examples
    --------
    >>> log = {"group_id": [1, 1, 2, 2], "query": ["q", "q", "q", "q"], "item_id": ["a", "b", "b", "a"],
    ...        "rank": [1, 2, 1, 2], "click": [1, 0, 1, 1]}
    >>> m = fit_click_model(log, "cascade")
    >>> m.attractiveness.tolist()  # a: clicked at rank 1 (session 1); b: clicked at rank 1 (session 2)
    [1.0, 1.0]
    >>> m.impossible_clicks  # session 2's second click: a cascade user stops at the first
    1
    """
    kind = check_kind(model, MODELS)
    if features and kind != "pbm":
        raise InvalidParameterError(f"`features` (the regression EM) apply to the pbm model, not {kind!r}.")
    for name, value in (("iterations", iterations),):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise InvalidParameterError(f"`{name}` must be an integer >= 1; got {value!r}.")
    if not (isinstance(tol, (int, float)) and tol > 0 and math.isfinite(tol)):
        raise InvalidParameterError(f"`tol` must be a number > 0; got {tol!r}.")
    lg = read_log(log, session_col=session_col, query_col=query_col, item_col=item_col, rank_col=rank_col,
                  click_col=click_col, click_label=click_label, extra_cols=tuple(features or ()))
    return fit_on(lg, kind, features=features, iterations=int(iterations), tol=float(tol))


def fit_on(lg: ClickLog, kind: str, *, features: Sequence[str] | None = None, iterations: int = 200,
           tol: float = 1e-4) -> FittedClickModel:
    """:func:`fit_click_model` on a log already read."""
    depth = lg.depth
    rows_rank = np.bincount(lg.rank - 1, minlength=depth).astype(np.float64)
    clicks_rank = np.bincount(lg.rank - 1, weights=lg.click, minlength=depth)
    impressions = np.bincount(lg.pair, minlength=lg.n_pairs).astype(np.float64)
    clicks = np.bincount(lg.pair, weights=lg.click, minlength=lg.n_pairs)
    impossible = 0
    coef = None
    sigma: np.ndarray | None = None
    continuation: float | ByRank | None = None
    if kind == "pbm":
        X = _features(lg, features) if features else None
        fit = fit_pbm(lg, iterations=iterations, tol=tol, features=X)
        theta, alpha = fit["theta"], fit["alpha"]
        theta1 = float(theta[0])
        exam = theta / theta1
        ll_rank = fit["ll_rank"]
        coef = fit["coef"]
    else:
        fit = fit_dbn(lg, iterations=iterations, tol=tol) if kind == "dbn" else fit_cascade_family(lg, kind)
        alpha = fit["alpha"]
        P, C = lg.matrix, lg.click_matrix
        has = P >= 0
        Pz = np.where(has, P, 0)
        a = np.where(has, alpha[Pz], 0.0)
        if kind == "dcm":
            lam = fit["lam"]
            s = np.broadcast_to(1.0 - lam[None, :], a.shape)
            gamma = 1.0
            continuation = ByRank(lam)
        else:
            sigma = fit["sigma"]
            s = np.where(has, sigma[Pz], 0.0)
            gamma = float(fit["gamma"])
            continuation = gamma if kind == "dbn" else None
            if kind == "cascade":
                sigma = None
        e = cascade_examination(a, s, gamma)
        exam = np.where(has, e, 0.0).sum(axis=0) / np.maximum(has.sum(axis=0), 1)
        theta1 = 1.0
        ll, impossible = forward_loglik(a, s, gamma, C, has)
        ll_rank = ll.sum(axis=0)
    perplexity = 2.0 ** (-ll_rank / np.log(2) / np.maximum(rows_rank, 1.0))
    out = FittedClickModel(kind, ByRank(exam), lg.query_ids[lg.pair_query], lg.item_ids[lg.pair_item], alpha,
                           impressions, clicks, sigma, continuation, theta1, float(ll_rank.sum()),
                           ByRank(perplexity), lg.n_sessions, lg.n_rows, int(fit["iterations"]),
                           bool(fit["converged"]), rows_rank, clicks_rank, impossible, coef, lg.has_query)
    return out
