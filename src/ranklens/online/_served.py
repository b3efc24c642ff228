"""What each arm of a simulated experiment serves: graded candidates per query and each ranker's list.

Judgments are simulated (``n_queries`` queries of ``n_candidates`` items with grades drawn from ``grade_p``)
or given (any judgments input of ranklens); a ranker is a simulated one (scores = grade + ``noise`` x a
standard normal draw, once per query and item: a smaller noise is a better ranker), another arm's name (the
same ranker: an A/A test), or a run (any rankings input of ranklens) over the judged queries. Lists are
padded to the longest with grade -1 (no item: never clicked).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._input.logs import shown
from ..errors import InputError, InvalidParameterError

__all__ = ["GRADE_P", "Served", "run_grades", "serve"]

#: Default grade distribution of simulated candidates (grades 0..4).
GRADE_P = (0.50, 0.25, 0.13, 0.08, 0.04)


@dataclass(frozen=True, eq=False)
class Served:
    """The candidates of each query and the list each arm serves.

    Attributes
    ----------
    arms : tuple of str
    query_ids : ndarray of str, shape (n_queries,)
    item_ids : ndarray of str, shape (n_items,)
        Every candidate item; ``items`` index it.
    cand_items, cand_grades, cand_scores : ndarray, shape (n_arms, n_queries, n_candidates)
        Each arm's candidates of each query with their grades and that ranker's scores, best first
        (item -1 / grade -1 / score -inf: padding).
    item_query, item_grade : ndarray, shape (n_items,)
        The query each candidate belongs to and its grade.
    k : int
        Positions served (the top ``k`` candidates of a ranker).
    """

    arms: tuple[str, ...]
    query_ids: np.ndarray
    item_ids: np.ndarray
    cand_items: np.ndarray
    cand_grades: np.ndarray
    cand_scores: np.ndarray
    item_query: np.ndarray
    item_grade: np.ndarray
    k: int

    @property
    def items(self) -> np.ndarray:
        """Items served by each arm for each query (n_arms x n_queries x k; -1: none)."""
        return self.cand_items[:, :, : self.k]

    @property
    def grades(self) -> np.ndarray:
        """Grades of the served items (n_arms x n_queries x k; -1: no item)."""
        return self.cand_grades[:, :, : self.k]

    @property
    def lengths(self) -> np.ndarray:
        """Length of each served list (n_arms x n_queries)."""
        return (self.items >= 0).sum(axis=2)


def _ids(values: Any) -> np.ndarray:
    from .._input.ids import IdColumn

    col = IdColumn.of(values)
    arrow = col.to_arrow() if col.is_str else col.as_strings()
    return np.asarray(arrow.to_pylist(), dtype=object).astype(str)


def _simulated_judgments(rng: np.random.Generator, n_queries: int, n_candidates: int,
                         grade_p: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    p = np.asarray(grade_p, dtype=np.float64)
    if p.ndim != 1 or len(p) < 2 or (p < 0).any() or not np.isclose(p.sum(), 1.0):
        raise InvalidParameterError(f"`grade_p` must be probabilities of grades 0, 1, ... summing to 1; "
                                    f"got {grade_p!r}.")
    grades = rng.choice(len(p), size=(n_queries, n_candidates), p=p)
    qids = np.char.add("q", np.arange(n_queries).astype(str))
    items = np.char.add("d", np.arange(n_queries * n_candidates).astype(str))
    return qids, items, grades


def _given_judgments(judgments: Any, max_grade: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(query ids, item ids of every judged row, query index of each row, grade of each row)."""
    from ..data import as_judgments

    j = as_judgments(judgments)
    q, it, lab = _ids(j.qid), _ids(j.item), np.asarray(j.label, dtype=np.float64)
    lab = np.maximum(lab, 0.0)  # judged non-relevant (negative) is grade 0
    if (lab != np.round(lab)).any() or (lab > max_grade).any():
        bad = lab[(lab != np.round(lab)) | (lab > max_grade)][0]
        raise InputError(f"judgments: grades must be integers 0..{max_grade} (the click model's attractiveness "
                         f"has {max_grade + 1} values); got {shown(bad)}.")
    qids, qidx = np.unique(q, return_inverse=True)
    return qids, it, qidx, lab.astype(np.int64)


def serve(rankers: Mapping[str, Any], *, judgments: Any, n_queries: int, n_candidates: int, k: int,
          grade_p: Sequence[float], max_grade: int, rng: np.random.Generator) -> Served:
    """The :class:`Served` lists of ``rankers`` (arm -> noise, another arm's name, or a run)."""
    arms = tuple(str(a) for a in rankers)
    if len(arms) < 1:
        raise InvalidParameterError("`rankers` needs at least one arm, e.g. {'control': 1.0, 'treatment': 0.7}.")
    if judgments is None:
        qids, items, grades = _simulated_judgments(rng, n_queries, n_candidates, grade_p)
        if grades.max() > max_grade:
            raise InvalidParameterError(f"`grade_p` has grades up to {grades.max()}, the click model {max_grade}.")
        cand = np.arange(grades.size).reshape(grades.shape)
        base_items, base_grades = cand, grades
        judged = (np.repeat(np.arange(n_queries), n_candidates), grades.ravel())
    else:
        qids, items, qidx, g = _given_judgments(judgments, max_grade)
        judged = (qidx, g)
        order = np.argsort(qidx, kind="stable")
        counts = np.bincount(qidx, minlength=len(qids))
        width = int(counts.max())
        pos = np.arange(len(order)) - np.repeat(np.cumsum(counts) - counts, counts)
        base_items = np.full((len(qids), width), -1, dtype=np.int64)
        base_grades = np.full((len(qids), width), -1, dtype=np.int64)
        base_items[qidx[order], pos] = order
        base_grades[qidx[order], pos] = g[order]
    lists: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    aliases: dict[str, str] = {}
    for arm in arms:
        spec = rankers[arm]
        if isinstance(spec, str) and spec in rankers and spec != arm:
            aliases[arm] = spec  # the same ranker as another arm: resolved below
        elif isinstance(spec, (int, float)) and not isinstance(spec, bool):
            if not spec >= 0:
                raise InvalidParameterError(f"ranker {arm!r}: the noise must be a number >= 0; got {spec!r}.")
            score = np.where(base_grades >= 0, base_grades + float(spec) * rng.standard_normal(base_grades.shape),
                             -np.inf)
            order = np.argsort(-score, axis=1, kind="stable")
            lists[arm] = (np.take_along_axis(base_items, order, axis=1), np.take_along_axis(base_grades, order, axis=1),
                          np.take_along_axis(score, order, axis=1))
        elif isinstance(spec, str) and judgments is None:
            raise InvalidParameterError(f"ranker {arm!r}: {spec!r} is not another arm's name.")
        elif judgments is None:
            raise InvalidParameterError(f"ranker {arm!r} is a run: give the `judgments` its items are graded by "
                                        "(or a noise level for a simulated ranker).")
        else:
            lists[arm] = _run_lists(spec, arm, qids, items, *judged)
    for arm, other in aliases.items():
        if other not in lists:
            raise InvalidParameterError(f"ranker {arm!r} names {other!r}, which names another arm in turn.")
        lists[arm] = lists[other]
    width = max(int(v[0].shape[1]) for v in lists.values())
    stacked = [np.stack([np.pad(lists[a][c], [(0, 0), (0, width - lists[a][c].shape[1])], constant_values=fill)
                         for a in arms]) for c, fill in ((0, -1), (1, -1), (2, -np.inf))]
    if not (stacked[0][:, :, 0] >= 0).all():
        raise InputError("a ranker serves no item for some query: every query needs at least one judged item.")
    return Served(arms, np.asarray(qids).astype(str), np.asarray(items).astype(str), stacked[0], stacked[1],
                  stacked[2], judged[0], judged[1], min(int(k), width))


def run_grades(run: Any, name: str, served: Served, k: int) -> np.ndarray:
    """The grades (queries x k, -1: no item) of the top ``k`` of a run over a simulation's queries and items."""
    _, grades, _ = _run_lists(run, name, served.query_ids, served.item_ids, served.item_query, served.item_grade)
    out = np.full((grades.shape[0], k), -1, dtype=np.int64)
    width = min(k, grades.shape[1])
    out[:, :width] = grades[:, :width]
    return out


def _run_lists(run: Any, arm: str, qids: np.ndarray, items: np.ndarray, qidx: np.ndarray, grades: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A run's candidates per judged query, best first, as judged rows (every ranked item must be judged)."""
    from ..data import as_rankings

    r = as_rankings(run)
    rq, ri, key = _ids(r.qid), _ids(r.item), np.asarray(r.order_key(), dtype=np.float64)
    q_sorted = np.argsort(qids)
    pos = np.searchsorted(qids, rq, sorter=q_sorted)
    pos = np.minimum(pos, len(qids) - 1)
    rq_i = np.where(qids[q_sorted[pos]] == rq, q_sorted[pos], -1)
    served = np.zeros(len(qids), dtype=bool)
    served[rq_i[rq_i >= 0]] = True
    if not served.all():
        raise InputError(f"ranker {arm!r}: the run ranks nothing for {int((~served).sum())} judged queries "
                         f"(e.g. {str(qids[np.argmin(served)])!r}); every arm must serve every query.")
    keep = rq_i >= 0
    rq_i, ri, key = rq_i[keep], ri[keep], key[keep]
    # join (query, item) of the run to the judged rows
    _, codes = np.unique(np.concatenate([items, ri]), return_inverse=True)
    width = int(codes.max()) + 1
    jkey = qidx.astype(np.int64) * width + codes[: len(items)]
    rkey = rq_i.astype(np.int64) * width + codes[len(items):]
    jorder = np.argsort(jkey, kind="stable")
    at = np.minimum(np.searchsorted(jkey, rkey, sorter=jorder), len(jkey) - 1)
    hit = jkey[jorder[at]] == rkey
    if not hit.all():
        first = int(np.argmin(hit))
        raise InputError(f"ranker {arm!r}: {int((~hit).sum())} ranked items have no judgment (e.g. {str(ri[first])!r} "
                         f"for query {str(qids[rq_i[first]])!r}); a simulated user's clicks need every served item's "
                         "grade.")
    cand = jorder[at]
    grade = grades[cand]
    order = np.lexsort((-key, rq_i))
    rq_i, cand, grade, key = rq_i[order], cand[order], grade[order], key[order]
    counts = np.bincount(rq_i, minlength=len(qids))
    pos = np.arange(len(rq_i)) - np.repeat(np.cumsum(counts) - counts, counts)
    n = int(counts.max())
    it = np.full((len(qids), n), -1, dtype=np.int64)
    gr = np.full((len(qids), n), -1, dtype=np.int64)
    sc = np.full((len(qids), n), -np.inf)
    it[rq_i, pos], gr[rq_i, pos], sc[rq_i, pos] = cand, grade, key
    return it, gr, sc
