"""Generated evaluation cases for the conformance tests (fixed-seed numpy generator).

A case is a list of :class:`Query`. Every query carries its ranked list (items in input order,
float64 scores, a label per ranked item or NaN when the item is unjudged) and the judged items that
were not ranked. The generators deliberately over-sample the situations where libraries disagree:

* ties in scores (few distinct values, whole lists tied),
* ties that exist only after rounding to float32 (``v`` against ``v +- 1e-9`` with ``v`` exact in float32),
* all-zero queries, single-item queries, long lists (> 15 items for ranx's quicksort, > 32 for XGBoost),
* judged items missing from the ranking and ranked items that are not judged (qrels-based peers),
* queries only in the judgments or only in the rankings,
* negative and fractional labels (where the peer accepts them).

Item ids are drawn so that their byte order has nothing to do with the input order (``d10`` < ``d9``,
upper case before lower case, and a few non-ASCII ids), which is what separates "ties by item id
descending" (trec_eval) from "ties in input order" (LightGBM, XGBoost).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

SEED = 20240601

#: float32-exact base values for near ties (1e-9 is far below half a float32 ulp of these)
_F32_BASES = np.array([0.5, 0.75, 1.0, 1.25, 2.0, 3.0])


@dataclass
class Query:
    qid: str
    items: list[str]
    scores: np.ndarray  # float64, one per ranked item
    labels: np.ndarray  # float64, one per ranked item; NaN = not judged
    extra: dict[str, float] = field(default_factory=dict)  # judged, not ranked
    in_run: bool = True
    in_qrels: bool = True
    pattern: str = ""

    @property
    def n(self) -> int:
        return len(self.items)

    def judged(self) -> dict[str, float]:
        out = {i: float(lab) for i, lab in zip(self.items, self.labels) if not np.isnan(lab)}
        out.update(self.extra)
        return out


# -- pieces ---------------------------------------------------------------------------------------

def _item_ids(rng: np.random.Generator, n: int, unicode: bool = True) -> list[str]:
    nums = rng.permutation(np.arange(1, 3 * n + 20))[:n]
    prefixes = np.array(["d", "d", "d", "D", "doc", "é" if unicode else "e"])
    pre = rng.choice(prefixes, size=n)
    return [f"{p}{k}" for p, k in zip(pre, nums)]


def _scores(rng: np.random.Generator, n: int, pattern: str) -> np.ndarray:
    if pattern == "distinct":
        return rng.normal(size=n)
    if pattern == "coarse":  # few distinct values: many ties
        return rng.integers(0, 3, size=n).astype(np.float64)
    if pattern == "tied":  # the whole list tied
        return np.full(n, float(rng.integers(-2, 3)))
    if pattern == "f32":  # distinct as doubles, tied as float32
        base = rng.choice(_F32_BASES[:3], size=n)
        return base + rng.choice(np.array([0.0, 1e-9, -1e-9, 2e-9]), size=n)
    if pattern == "mixed":
        s = rng.integers(0, 4, size=n).astype(np.float64) / 4.0
        eps = rng.choice(np.array([0.0, 0.0, 1e-9, -1e-9]), size=n)
        return s + np.where(s > 0, eps, 0.0)
    raise ValueError(pattern)


def _labels(rng: np.random.Generator, n: int, pattern: str, max_label: int,
            negative: bool, fractional: bool) -> np.ndarray:
    if pattern == "zero":
        return np.zeros(n)
    p = np.array([0.45, 0.25, 0.15, 0.1, 0.05])[: max_label + 1]
    lab = rng.choice(np.arange(max_label + 1), size=n, p=p / p.sum()).astype(np.float64)
    if negative and pattern in ("neg", "any"):
        lab = np.where(rng.random(n) < 0.25, -rng.integers(1, 3, size=n).astype(np.float64), lab)
    if fractional and pattern in ("frac", "any"):
        frac = rng.choice(np.array([0.0, 0.0, 0.5, 0.7, 0.2, 0.9]), size=n)
        lab = np.where(lab >= 0, lab + frac, lab)
        lab = np.minimum(lab, max_label)
    return lab


def _length(rng: np.random.Generator, min_len: int, long_len: int) -> int:
    kind = rng.choice(5, p=[0.12, 0.38, 0.2, 0.2, 0.1])
    if kind == 0:
        return int(rng.integers(min_len, min_len + 2))
    if kind == 1:
        return int(rng.integers(max(min_len, 2), 11))
    if kind == 2:
        return int(rng.integers(11, 16))
    if kind == 3:
        return int(rng.integers(16, 31))
    return int(rng.integers(31, long_len + 1))


_SCORE_PATTERNS = np.array(["distinct", "coarse", "tied", "f32", "mixed"])


def list_cases(seed: int, n_queries: int = 200, *, min_len: int = 1, long_len: int = 60, max_label: int = 4,
               negative: bool = False, fractional: bool = False, unicode: bool = True,
               fixed_len: int | None = None) -> list[Query]:
    """Every ranked item judged, nothing judged outside the list (matrix-style peers)."""
    rng = np.random.default_rng(seed)
    out = []
    label_patterns = ["graded", "graded", "zero"]
    if negative:
        label_patterns += ["neg", "neg"]
    if fractional:
        label_patterns += ["frac"]
    if negative and fractional:
        label_patterns += ["any"]
    for qi in range(n_queries):
        n = fixed_len if fixed_len is not None else _length(rng, min_len, long_len)
        sp = str(rng.choice(_SCORE_PATTERNS, p=[0.25, 0.25, 0.1, 0.2, 0.2]))
        lp = str(rng.choice(label_patterns))
        q = Query(qid=str(100 + qi), items=_item_ids(rng, n, unicode), scores=_scores(rng, n, sp),
                  labels=_labels(rng, n, lp, max_label, negative, fractional), pattern=f"{sp}/{lp}")
        out.append(q)
    return out


def judged_cases(seed: int, n_queries: int = 200, *, max_label: int = 4, negative: bool = True,
                 fractional: bool = False, partial_queries: bool = True, unicode: bool = True) -> list[Query]:
    """Qrels-style cases: unjudged ranked items, judged items not ranked, queries on one side only."""
    qs = list_cases(seed, n_queries, min_len=1, max_label=max_label, negative=negative, fractional=fractional,
                    unicode=unicode)
    rng = np.random.default_rng(seed + 1)
    for q in qs:
        unjudged = rng.random(q.n) < 0.2
        q.labels = np.where(unjudged, np.nan, q.labels)
        n_extra = int(rng.choice(5, p=[0.4, 0.25, 0.15, 0.1, 0.1]))
        taken = set(q.items)
        for _ in range(n_extra):
            item = f"x{int(rng.integers(0, 1000))}"
            if item in taken:
                continue
            taken.add(item)
            lab = float(rng.integers(-1 if negative else 0, max_label + 1))
            if fractional and rng.random() < 0.3 and lab >= 0:
                lab = min(lab + 0.5, max_label)
            q.extra[item] = lab
        if not q.judged():  # keep at least one judgment so the query is in the qrels
            q.extra["x0"] = 0.0
        if partial_queries:
            r = rng.random()
            if r < 0.06:
                q.in_run = False
            elif r < 0.12:
                q.in_qrels = False
    return qs


# -- converters -----------------------------------------------------------------------------------

def qrels_dict(qs: list[Query], cast=int) -> dict[str, dict[str, object]]:
    return {q.qid: {i: cast(v) for i, v in q.judged().items()} for q in qs if q.in_qrels}


def run_dict(qs: list[Query]) -> dict[str, dict[str, float]]:
    return {q.qid: {i: float(s) for i, s in zip(q.items, q.scores)} for q in qs if q.in_run}


def long_arrays(qs: list[Query]) -> dict[str, np.ndarray]:
    """Row-per-ranked-item arrays (all items must be judged), queries contiguous, input order kept."""
    qid = np.concatenate([[q.qid] * q.n for q in qs]).astype(object)
    item = np.concatenate([q.items for q in qs]).astype(object)
    score = np.concatenate([q.scores for q in qs])
    label = np.concatenate([q.labels for q in qs])
    assert not np.isnan(label).any()
    sizes = np.array([q.n for q in qs])
    return {"query": qid, "item": item, "score": score, "relevance": label, "sizes": sizes}


def long_table(qs: list[Query]):
    import pandas as pd

    a = long_arrays(qs)
    return pd.DataFrame({k: a[k] for k in ("query", "item", "score", "relevance")})


def f32_tie_only(scores: np.ndarray) -> bool:
    """True when some scores are distinct as doubles but equal as float32."""
    s64 = np.unique(scores).size
    s32 = np.unique(scores.astype(np.float32)).size
    return s32 < s64


def has_exact_tie(scores: np.ndarray) -> bool:
    return np.unique(scores).size < scores.size
