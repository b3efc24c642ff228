"""One table given as both the judgments and the rankings, and the tie rule by item id read only where needed.

``evaluate(tab, tab, ...)`` (the same Arrow table twice, or two numpy arrays over the same memory) is one long
table: its rows need no join, so the problem is built the one-table way (the ranked rows' labels are the
judgments' own, row for row). Under a convention breaking ties by item id (trec_eval's), the item bytes are
gathered only when two rows of a query have equal scores. The numbers come from pytrec_eval (trec_eval 9),
run here on the same rows.
"""

from __future__ import annotations

import numpy as np
import pytest

import ranklens
from ranklens._core.problem import build_problem
from ranklens.conventions import get_convention
from ranklens.options import load_inputs


def _table(ties: bool, seed: int = 3):
    pa = pytest.importorskip("pyarrow")
    rng = np.random.default_rng(seed)
    n_q, n_i = 40, 25
    q = np.repeat([f"q{i}" for i in range(n_q)], n_i)
    item = np.array([f"d{i}" for i in range(n_q * n_i)])
    label = rng.integers(0, 4, n_q * n_i)
    score = rng.integers(0, 5, n_q * n_i).astype(float) if ties else rng.normal(size=n_q * n_i)
    cols = {"query": q, "item": item, "label": label, "score": score}
    # three record batches: chunked columns, as a Parquet file read in row groups gives them
    parts = [pa.table({k: v[a:b] for k, v in cols.items()}) for a, b in ((0, 300), (300, 700), (700, 1000))]
    return pa.concat_tables(parts), cols


def _pytrec_eval(cols, k: int) -> float:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels: dict = {}
    run: dict = {}
    for q, d, lab, s in zip(cols["query"], cols["item"], cols["label"], cols["score"]):
        qrels.setdefault(q, {})[d] = int(lab)
        run.setdefault(q, {})[d] = float(s)
    res = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut_{k}"}).evaluate(run)
    return float(np.mean([v[f"ndcg_cut_{k}"] for v in res.values()]))


@pytest.mark.parametrize("ties", [False, True])
def test_one_table_twice_is_one_table(ties: bool) -> None:
    tab, cols = _table(ties)
    assert tab.column("query").num_chunks == 3
    conv = get_convention("trec_eval")
    j, r = load_inputs(tab, tab)
    problem = build_problem(j, r, conv)
    # the one-table way: the judged rows are the ranked rows, not joined by item
    assert problem.j_start is problem.r_start and problem.j_label is problem.label
    # item bytes (trec_eval's tie rule) gathered only when some query has tied scores
    assert (problem.item_data.size > 1) == ties
    res = ranklens.evaluate(tab, tab, ["ndcg@5"], convention="trec_eval")
    assert res["ndcg@5"] == pytest.approx(_pytrec_eval(cols, 5), abs=1e-12)
    # two tables over other memory (a copy) are joined, with the same numbers
    assert ranklens.evaluate(tab, tab.select(tab.column_names).combine_chunks(), ["ndcg@5"],
                             convention="trec_eval")["ndcg@5"] == pytest.approx(res["ndcg@5"], abs=1e-15)


def test_numpy_views_of_the_same_memory_are_one_table() -> None:
    _, cols = _table(False)
    q, item = cols["query"].astype(object), cols["item"].astype(object)
    j = ranklens.Judgments(q, item, cols["label"].astype(float))
    r = ranklens.Rankings(q[:], item[:], score=cols["score"])  # views: other objects, the same memory
    conv = get_convention("trec_eval")
    problem = build_problem(j, r, conv)
    assert problem.j_start is problem.r_start
    joined = build_problem(j, ranklens.Rankings(q.copy(), item.copy(), score=cols["score"]), conv)
    assert joined.j_start is not joined.r_start  # copies: joined by item


@pytest.mark.parametrize("int_items", [False, True])
def test_item_bytes_of_tied_queries_only(int_items: bool) -> None:
    """Only the rows of the queries with tied scores get their item bytes (the kernels compare items within runs
    of equal scores only); items of unequal lengths across chunk boundaries, as strings or integers (compared as
    strings: "10" < "9")."""
    pa = pytest.importorskip("pyarrow")
    rng = np.random.default_rng(5)
    n_q, n_i = 30, 12
    q = np.repeat([f"q{i}" for i in range(n_q)], n_i)
    ids = rng.permutation(np.arange(n_q * n_i) * 7 + 3)
    item = ids if int_items else np.array([f"doc-{x}" for x in ids])
    label = rng.integers(0, 3, n_q * n_i)
    score = rng.normal(size=n_q * n_i)
    tied_q = (4, 17, 29)
    for t in tied_q:  # three queries with ties (two pairs and a triple)
        base = t * n_i
        score[base + 1] = score[base + 5]
        score[base + 7] = score[base + 8] = score[base + 2]
    cols = {"query": q, "item": item, "label": label, "score": score}
    cuts = ((0, 50), (50, 200), (200, 205), (205, n_q * n_i))
    tab = pa.concat_tables([pa.table({k: v[a:b] for k, v in cols.items()}) for a, b in cuts])
    j, r = load_inputs(tab, tab)
    problem = build_problem(j, r, get_convention("trec_eval"))
    rows = np.concatenate([np.arange(t * n_i, (t + 1) * n_i) for t in tied_q])
    assert problem.item_data.size == sum(len(str(x)) for x in item[rows])
    for row in rows:
        a, b = problem.item_offs[row], problem.item_offs[row + 1]
        assert problem.item_data[a:b].tobytes().decode() == str(item[row])
    cols["item"] = np.array([str(x) for x in item])
    for k in (3, 10):
        got = ranklens.evaluate(tab, tab, [f"ndcg@{k}"], convention="trec_eval")[f"ndcg@{k}"]
        assert got == pytest.approx(_pytrec_eval(cols, k), abs=1e-12)


def test_checks_across_chunk_boundaries() -> None:
    """The duplicate and tie checks of one table read Arrow's chunks where they are (32-bit offsets): a query cut
    by a chunk boundary is checked over both chunks. A duplicate item across the boundary is refused; 0.0 and -0.0
    across it tie, and trec_eval's tie rule orders them by item id: the numbers of pytrec_eval."""
    pa = pytest.importorskip("pyarrow")
    cols = {"query": np.array(["a"] * 4 + ["b"] * 4),
            "item": np.array(["d1", "d2", "d3", "d4", "e1", "e2", "e3", "e4"]),
            "score": np.array([0.0, 1.0, 2.0, -0.0, 0.5, 0.0, -0.0, 3.0]), "label": np.array([1, 0, 2, 3, 1, 2, 0, 1])}

    def table(c):
        parts = [pa.table({k: pa.array(v[a:b].tolist(), pa.string() if v.dtype.kind == "U" else None)
                           for k, v in c.items()}) for a, b in ((0, 2), (2, 6), (6, 8))]
        return pa.concat_tables(parts)

    tab = table(cols)
    assert tab.column("item").num_chunks == 3 and tab.schema.field("item").type == pa.string()
    for k in (1, 2, 3, 4):
        got = ranklens.evaluate(tab, tab, [f"ndcg@{k}"], convention="trec_eval")[f"ndcg@{k}"]
        assert got == pytest.approx(_pytrec_eval(cols, k), abs=1e-12)
    dup = dict(cols, item=np.array(["d1", "d2", "d3", "d1", "e1", "e2", "e3", "e4"]))  # d1: rows 0 and 3
    with pytest.raises(ranklens.InputError, match=r"1 duplicate \(query, item\) rows .*query a item d1"):
        ranklens.evaluate(table(dup), None, ["ndcg@3"], convention="trec_eval")


@pytest.mark.parametrize("mode", ["aot", "jit"])
def test_group_checks_over_many_queries(mode) -> None:
    """The duplicate and tie checks of 300 queries of 1 to 12 rows (the kernel reuses its tables from one query to
    the next, in blocks of queries): each query's first duplicated row and whether two of its scores tie, against
    the definition computed here with Python sets, query by query."""
    pa = pytest.importorskip("pyarrow")
    from ranklens._core.ties import group_checks
    from ranklens._kernels.api import forced

    rng = np.random.default_rng(11)
    sizes = rng.integers(1, 13, 300)
    start = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    end = start + sizes
    items = [f"d{v}" for v in rng.integers(0, 40, int(sizes.sum()))]  # duplicates in many queries, not all
    score = rng.integers(0, 30, int(sizes.sum())).astype(float)
    cuts = [0, 7, 400, 401, 1200, len(items)]
    col = pa.chunked_array([pa.array(items[a:b], pa.string()) for a, b in zip(cuts[:-1], cuts[1:])])
    with forced(mode):
        checked = group_checks(col, start, end, np.empty(0, np.int64), score, True)
    assert checked is not None
    dup, tied = checked
    for g in range(300):
        rows = range(start[g], end[g])
        first = next((r for r in rows if items[r] in items[start[g]:r]), -1)
        assert dup[g] == first
        assert tied[g] == (len(set(score[start[g]:end[g]])) < end[g] - start[g])
    assert (dup >= 0).sum() > 30 and (dup < 0).sum() > 30 and tied.sum() > 30 and (~tied).sum() > 30


@pytest.mark.parametrize("mode", ["aot", "jit"])
def test_group_checks_long_ids_and_a_long_query(mode) -> None:
    """The duplicate and tie checks on ids of 0 to 27 bytes (the kernel hashes them eight bytes at a time: empty
    ids, ids of exactly 8, 16 or 24 bytes, ids equal in their first words and not in their tails) and one query of
    20,000 rows (larger than the kernel's sparse tables, which then get 2 slots per row): each query's first
    duplicated row and whether two of its scores tie, against the definition computed here with Python sets."""
    pa = pytest.importorskip("pyarrow")
    from ranklens._core.ties import group_checks
    from ranklens._kernels.api import forced

    rng = np.random.default_rng(12)
    sizes = np.concatenate([rng.integers(1, 40, 200), [20_000], rng.integers(1, 40, 50)])
    start = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    end = start + sizes
    n = int(sizes.sum())
    pads = rng.choice([0, 1, 7, 8, 15, 16, 23], n)  # the same 8-, 16- or 24-byte head before different tails
    vocab = rng.integers(0, rng.choice([60, 50_000], n))
    items = ["" if v == 0 else "p" * int(k) + str(v) for k, v in zip(pads, vocab)]
    score = rng.integers(0, rng.choice([50, 10**9], n)).astype(float)
    col = pa.chunked_array([pa.array(items, pa.string())])
    with forced(mode):
        checked = group_checks(col, start, end, np.empty(0, np.int64), score, True)
    assert checked is not None
    dup, tied = checked
    for g in range(sizes.shape[0]):
        seen, first = set(), -1
        for r in range(start[g], end[g]):
            if items[r] in seen:
                first = r
                break
            seen.add(items[r])
        assert dup[g] == first
        assert tied[g] == (len(set(score[start[g]:end[g]])) < end[g] - start[g])
    assert (dup >= 0).sum() > 30 and (dup < 0).sum() > 30 and tied.sum() > 30 and (~tied).sum() > 30


def _random_groups(seed: int, low: int, high: int, count: int):
    """A generator and ``count`` groups of ``low`` to ``high - 1`` rows, one after the other: sizes, starts, ends,
    and the number of rows."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(low, high, count)
    start = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return rng, sizes, start, start + sizes, int(sizes.sum())


def _checked_as_sets(mode: str, col, items: list, score: np.ndarray, start: np.ndarray, end: np.ndarray,
                     ties: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``group_checks`` of the groups ``start:end`` of the ids ``col`` (``items`` as Python strings), asserted equal
    group by group to the definition computed with Python: the first row whose item an earlier row of its group
    has, and (with ``ties``) whether two of its scores are equal (Python's set: -0.0 equals 0.0)."""
    from ranklens._core.ties import group_checks
    from ranklens._kernels.api import forced

    sizes = np.asarray(end) - np.asarray(start)
    groups = (np.ascontiguousarray(start, np.int64), np.ascontiguousarray(end, np.int64))
    with forced(mode):
        checked = group_checks(col, *groups, np.empty(0, np.int64), score, ties)
    assert checked is not None
    dup, tied = checked
    for g, (a, b) in enumerate(zip(start, end)):
        assert dup[g] == next((r for r in range(a, b) if items[r] in items[a:r]), -1)
        assert tied[g] == (ties and len(set(score[a:b].tolist())) < sizes[g])
    return dup, tied


@pytest.mark.parametrize("mode", ["aot", "jit"])
def test_group_checks_negative_zero(mode) -> None:
    """The tie check takes -0.0 and 0.0 for equal scores (they are: Python's set holds one of them) while their bits
    differ: the kernel reads the scores as they are and looks at a group again, -0.0 made 0.0, only when it finds no
    equal bits and the group holds a -0.0. Groups with -0.0 alone, -0.0 twice, -0.0 beside 0.0, beside other ties or
    beside a duplicated item, in sliced large_string chunks; without ``ties`` no group is tied. Expected: Python
    sets, query by query."""
    pa = pytest.importorskip("pyarrow")
    rng, sizes, start, end, n = _random_groups(13, 1, 9, 400)
    score = rng.choice([-0.0, 0.0, 1.5, -2.25, 3.0, 1e-300], n) * (rng.random(n) < 0.7)  # more zeros, of both signs
    score = np.where(rng.random(n) < 0.5, score, rng.standard_normal(n))  # and distinct values
    assert (np.signbit(score) & (score == 0)).sum() > 50 and (~np.signbit(score) & (score == 0)).sum() > 50
    items = [f"item-{v}" for v in rng.integers(0, 30, n)]
    whole = pa.array(["x"] + items + ["y"], pa.large_string())
    col = pa.chunked_array([whole.slice(1, 500), whole.slice(501, n - 500)])  # sliced: offsets not from 0
    for ties in (True, False):
        _checked_as_sets(mode, col, items, score, start, end, ties)
    zeros_only = [g for g in range(sizes.shape[0]) if
                  len(set(score[start[g]:end[g]].tolist())) < sizes[g]
                  and len(set(score[start[g]:end[g]].view(np.uint64).tolist())) == sizes[g]]
    assert len(zeros_only) > 5  # groups whose only tie is -0.0 beside 0.0


@pytest.mark.parametrize("mode", ["aot", "jit"])
def test_group_checks_groups_in_any_order(mode) -> None:
    """The checks of groups given out of row order (a query's groups in the order of its sorted id) are those of the
    same groups in row order (the kernel reads a buffer's groups as one slice then): the same first duplicated
    row and tie per group, against Python sets; groups across chunk boundaries, empty groups."""
    pa = pytest.importorskip("pyarrow")
    rng, sizes, start, end, n = _random_groups(14, 0, 15, 300)
    items = [f"d{v}" for v in rng.integers(0, 50, n)]
    score = rng.integers(0, 40, n).astype(float)
    cuts = [0, 5, 333, 334, 900, 1500, n]
    col = pa.chunked_array([pa.array(items[a:b], pa.string()) for a, b in zip(cuts[:-1], cuts[1:])])
    perm = rng.permutation(300)
    in_order = _checked_as_sets(mode, col, items, score, start, end)
    shuffled = _checked_as_sets(mode, col, items, score, start[perm], end[perm])
    assert (in_order[0] >= 0).sum() > 30 and in_order[1].sum() > 30
    assert (shuffled[0] == in_order[0][perm]).all() and (shuffled[1] == in_order[1][perm]).all()


def test_duplicates_named_alike_whether_queries_come_in_one_run_or_two() -> None:
    """One table with items twice in some queries: refused with the count and the first three (query, item) pairs
    in the order of the sorted query ids, whether each query's rows come together (checked run by run while the ids
    are numbered) or one query comes in two runs (checked query by query after). Expected: found here by hand."""
    pa = pytest.importorskip("pyarrow")
    rng = np.random.default_rng(15)
    qs = [f"q{i}" for i in range(12)]
    rows = []
    for q in qs:
        items = [f"{q}-d{k}" for k in range(8)]
        if q in ("q3", "q10", "q7", "q8"):
            items[6] = items[int(rng.integers(0, 6))]  # row 6 repeats an earlier item
        rows += [(q, it, float(rng.normal()), int(rng.integers(0, 3))) for it in items]
    split = rows[:30] + rows[40:50] + rows[30:40] + rows[50:]  # q3's rows (24..31) now in two runs
    dups = {q: [r[1] for r in rows if r[0] == q][6] for q in ("q3", "q10", "q7", "q8")}
    expect = "; ".join(f"query {q} item {dups[q]}" for q in sorted(dups)[:3])
    assert expect.startswith("query q10 item q10-d")
    for order in (rows, split):
        cols = list(zip(*order))
        whole = pa.table({"query": pa.array(cols[0], pa.string()), "item": pa.array(cols[1], pa.string()),
                          "score": pa.array(cols[2]), "label": pa.array(cols[3])})
        tab = pa.concat_tables([whole.slice(0, 37), whole.slice(37, 20), whole.slice(57)])
        with pytest.raises(ranklens.InputError) as err:
            ranklens.evaluate(tab, tab, ["ndcg@5"], convention="trec_eval")
        assert "4 duplicate (query, item) rows in " in str(err.value)
        assert f"({expect}); each item may appear once per query." in str(err.value)
