"""Scores and labels read where an Arrow table holds them (issue #29 point 8): a label column of float64 or int64
chunks and a score column of float64 chunks, without nulls, are not copied; the fused kernel reads them chunk by
chunk (queries across a chunk boundary on a copy of their own rows), rounding the scores to float32 as it reads them
under trec_eval's convention (``_core.segments``, ``_input.chunks``). Every other layout (nulls, other numeric types)
takes the copy as before, with the same refusals.

The expected numbers come from pytrec_eval (trec_eval 9), run here on the same rows, query by query.
"""

from __future__ import annotations

import numpy as np
import pytest

import ranklens
from ranklens._core import plan, segments
from ranklens._input.chunks import ChunkedValues, held
from ranklens.errors import InputError
from ranklens.options import load_inputs

pa = pytest.importorskip("pyarrow")
pytrec_eval = pytest.importorskip("pytrec_eval")

MEASURES = ["ndcg@10", "ndcg", "map", "P@5"]
TREC = {"ndcg@10": "ndcg_cut_10", "ndcg": "ndcg", "map": "map", "P@5": "P_5"}


def _rows(seed: int = 5, n_q: int = 30, n_i: int = 17, shuffle: bool = False) -> dict[str, np.ndarray]:
    """Queries of ``n_i`` rows each (contiguous), string ids; scores with ties after float32 rounding only (pairs
    of doubles 1e-12 apart, equal as float32) and exact ties; graded labels."""
    rng = np.random.default_rng(seed)
    names = np.array([f"q{i}" for i in range(n_q)])
    order = rng.permutation(n_q) if shuffle else np.arange(n_q)  # queries not in the order of their ids
    q = np.repeat(names[order], n_i)
    item = np.array([f"d{i}" for i in range(n_q * n_i)])
    score = np.round(rng.random(n_q * n_i), 3)
    near = rng.random(n_q * n_i) < 0.3
    score[near] += 1e-12  # a double apart, one float32
    label = rng.integers(0, 4, n_q * n_i)
    return {"query": q, "item": item, "score": score, "label": label}


def _expected(cols: dict[str, np.ndarray], judged: np.ndarray | None = None) -> dict[str, dict[str, float]]:
    """pytrec_eval's values per measure and query (``judged``: the rows that are judgments; default all)."""
    qrels: dict = {}
    run: dict = {}
    judged = np.ones(len(cols["query"]), bool) if judged is None else judged
    for q, d, lab, s, j in zip(cols["query"], cols["item"], cols["label"], cols["score"], judged):
        if j:
            qrels.setdefault(str(q), {})[str(d)] = int(lab)
        run.setdefault(str(q), {})[str(d)] = float(s)
    res = pytrec_eval.RelevanceEvaluator(qrels, set(TREC.values())).evaluate(run)
    return {m: {q: v[TREC[m]] for q, v in res.items()} for m in MEASURES}


def _chunked(values: np.ndarray, cuts: list[int], dtype=None, pad: int = 2):
    """``values`` as Arrow chunks cut at ``cuts``, each a slice (an offset into a longer buffer)."""
    parts = []
    for a, b in zip([0, *cuts], [*cuts, len(values)]):
        v = values[a:b] if dtype is None else values[a:b].astype(dtype)
        wide = np.concatenate([np.full(pad, 7, v.dtype), v, np.full(pad, 7, v.dtype)]) if v.dtype.kind in "iuf" \
            else np.concatenate([np.full(pad, "x"), v, np.full(pad, "x")])
        parts.append(pa.array(wide).slice(pad, b - a))
    return pa.chunked_array(parts)


def _check(tab, cols: dict[str, np.ndarray], held_path: bool = True) -> None:
    """``evaluate(tab, tab)`` under trec_eval equals pytrec_eval query by query; ``held_path``: the scores and labels
    were read where the table holds them (no copy, the kernel segment by segment)."""
    calls = []

    def spy(*args):
        calls.append(1)
        return segments.evaluate_held(*args)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(plan, "evaluate_held", spy)
        res = ranklens.evaluate(tab, tab, MEASURES, convention="trec_eval")
    assert bool(calls) == held_path
    want = _expected(cols)
    for m in MEASURES:
        got = res.per_query_dict(m)
        assert set(got) == set(want[m])
        for q, v in want[m].items():
            assert got[q] == pytest.approx(v, abs=1e-12), (m, q)


def _table(cols: dict[str, np.ndarray], score_cuts: list[int], label_cuts: list[int] | None = None,
           label_type=None, score_type=None):
    label_cuts = score_cuts if label_cuts is None else label_cuts
    return pa.table({"query": _chunked(cols["query"], score_cuts), "item": _chunked(cols["item"], score_cuts),
                     "score": _chunked(cols["score"], score_cuts, score_type),
                     "label": _chunked(cols["label"], label_cuts, label_type)})


@pytest.mark.parametrize("label_type", [np.int64, np.float64])
def test_chunks_read_where_they_lie(label_type):
    """Several chunks, each a slice of a longer buffer, queries across boundaries (17 rows a query, chunks of 40)."""
    cols = _rows()
    tab = _table(cols, list(range(40, 510, 40)), label_type=label_type)
    j, r = load_inputs(tab, tab)
    assert isinstance(held(j, "label"), ChunkedValues) and isinstance(held(r, "score"), ChunkedValues)
    assert tab.column("label").num_chunks == 13
    _check(tab, cols)


def test_a_query_across_two_chunks():
    cols = _rows(seed=7, n_q=3, n_i=10)
    tab = _table(cols, [15])  # query q1: rows 10-19, five in each chunk
    _check(tab, cols)


def test_score_and_label_chunked_differently():
    cols = _rows(seed=8)
    tab = _table(cols, [50, 51, 200, 333], label_cuts=[17, 34, 100, 101, 102, 400])
    _check(tab, cols)


def test_a_sliced_table():
    cols = _rows(seed=9)
    tab = _table(cols, [100, 250, 400])
    a, b = 17 * 3, 17 * 25  # whole queries 3 to 24 (a slice is a table of other rows: offsets into each chunk)
    sliced = tab.slice(a, b - a)
    _check(sliced, {k: v[a:b] for k, v in cols.items()})


def test_queries_not_in_row_order():
    cols = _rows(seed=10, shuffle=True)
    _check(_table(cols, [60, 61, 300]), cols)


def test_a_query_in_two_runs_reads_the_flat_columns():
    """A query whose rows come in two runs (not contiguous): grouped through row indices, read as one array."""
    cols = _rows(seed=11, n_q=6, n_i=10)
    perm = np.concatenate([np.arange(0, 5), np.arange(10, 60), np.arange(5, 10)])  # q0 in two runs
    cols = {k: v[perm] for k, v in cols.items()}
    _check(_table(cols, [23]), cols, held_path=False)


@pytest.mark.parametrize("label_type,score_type", [(np.int32, np.float64), (np.int64, np.float32),
                                                   (np.float32, np.float64)])
def test_other_numeric_types_are_copied_as_before(label_type, score_type):
    """int32 labels, float32 scores: copied (float64) as before; only the other column is read where it lies."""
    cols = _rows(seed=12)
    if score_type == np.float32:
        cols["score"] = cols["score"].astype(np.float32).astype(np.float64)  # the values the table holds
    tab = _table(cols, [100, 200], label_type=label_type, score_type=score_type)
    j, r = load_inputs(tab, tab)
    assert isinstance(held(j, "label"), ChunkedValues) == (label_type == np.int64)
    assert isinstance(held(r, "score"), ChunkedValues) == (score_type == np.float64)
    _check(tab, cols)


def test_ties_after_float32_rounding_only():
    """Two scores a double apart are one float32: trec_eval ranks them by item id (descending), as pytrec_eval."""
    cols = {"query": np.array(["a"] * 4 + ["b"] * 4), "item": np.array(["d1", "d2", "d3", "d4"] * 2),
            "score": np.array([0.5, 0.5 + 1e-12, 0.25, 0.25 - 1e-12, 0.7, 0.7 + 1e-11, 0.1, 0.0]),
            "label": np.array([0, 1, 0, 2, 1, 0, 0, 1])}
    assert np.float32(0.5) == np.float32(0.5 + 1e-12) and 0.5 != 0.5 + 1e-12
    tab = _table(cols, [2, 6])  # a tied pair split across chunks, another inside one
    _check(tab, cols)
    # by hand, query a: float32 ties broken by item id descending: d2 (1), d1 (0), d4 (2), d3 (0)
    dcg = 1 / np.log2(3) * 0 + 1 / np.log2(2) + 3 / np.log2(4)
    ideal = 3 / np.log2(2) + 1 / np.log2(3)
    res = ranklens.evaluate(tab, tab, ["ndcg"], convention="trec_eval", gain="exponential")
    assert res.per_query_dict("ndcg")["a"] == pytest.approx(dcg / ideal, abs=1e-12)


def test_nulls_take_the_copy_with_the_same_refusal():
    """A null label in one chunk: not read in place; refused in the words of the one-chunk table, or left out with
    missing="exclude" (then the values are pytrec_eval's with that row ranked but not judged)."""
    cols = _rows(seed=13, n_q=5, n_i=8)
    lab = cols["label"].astype(object)
    lab[11] = None
    tab = pa.table({"query": _chunked(cols["query"], [20]), "item": _chunked(cols["item"], [20]),
                    "score": _chunked(cols["score"], [20]),
                    "label": pa.chunked_array([pa.array(lab[:20], pa.int64()), pa.array(lab[20:], pa.int64())])})
    one = tab.combine_chunks()
    with pytest.raises(InputError) as many_err:
        ranklens.evaluate(tab, tab, ["ndcg@10"], convention="trec_eval")
    with pytest.raises(InputError) as one_err:
        ranklens.evaluate(one, one, ["ndcg@10"], convention="trec_eval")
    assert str(many_err.value) == str(one_err.value) and "row 11" in str(many_err.value)
    j, _ = load_inputs(tab, tab, formats=ranklens.options.Formats(missing="exclude"))
    assert not isinstance(held(j, "label"), ChunkedValues)
    res = ranklens.evaluate(tab, tab, ["ndcg@10"], convention="trec_eval", missing="exclude")
    want = _expected(cols, judged=np.arange(len(lab)) != 11)["ndcg@10"]
    got = res.per_query_dict("ndcg@10")
    assert got == pytest.approx(want, abs=1e-12)


def test_nan_in_a_chunk_is_refused_as_before():
    cols = _rows(seed=14, n_q=4, n_i=6)
    cols["score"][9] = np.nan
    tab = _table(cols, [5, 12])
    one = tab.combine_chunks()
    with pytest.raises(InputError) as many_err:
        ranklens.evaluate(tab, tab, ["ndcg@10"], convention="trec_eval")
    with pytest.raises(InputError) as one_err:
        ranklens.evaluate(one, one, ["ndcg@10"], convention="trec_eval")
    assert str(many_err.value) == str(one_err.value)


def test_flat_columns_made_on_first_use_are_the_copys():
    """Whatever reads the problem's scores or labels as one array gets them, made once, equal to the copy made
    before (rounded to float32 under trec_eval), and the labels of both sides one array."""
    from ranklens._core.problem import build_problem
    from ranklens.conventions import get_convention

    cols = _rows(seed=15)
    tab = _table(cols, [77, 200, 201], label_type=np.int64)
    problem = build_problem(*load_inputs(tab, tab), get_convention("trec_eval"))
    assert isinstance(held(problem, "score"), ChunkedValues)
    want = cols["score"].astype(np.float32).astype(np.float64)
    assert problem.score.view(np.uint64).tolist() == want.view(np.uint64).tolist()
    assert problem.score is problem.score and problem.j_label is problem.label
    assert problem.label.tolist() == cols["label"].astype(np.float64).tolist()


def test_kernel_rounds_as_it_reads_and_takes_int64_labels():
    """The AOT kernel on raw float64 scores with ``round32`` and int64 labels gives, bit for bit, what it gives on
    the scores rounded by numpy's cast and the labels as float64; so does ``check_groups`` for ties."""
    from ranklens._core.plan import make_plan
    from ranklens._kernels import api
    from ranklens.conventions import get_convention

    cols = _rows(seed=16)
    n = len(cols["score"])
    start = np.arange(0, n, 17, dtype=np.int64)
    end = start + 17
    plan_ = make_plan(get_convention("trec_eval"), MEASURES)
    tail = (0, plan_.log_base, plan_.negative_zero, plan_.gain_threshold, 1.0, plan_.empty_mode, plan_.codes,
            plan_.cutoffs, plan_.gain_kinds, plan_.levels, plan_.params, plan_.map_keys, plan_.map_vals)
    none, offs, data = np.zeros(0, np.int64), np.zeros(2, np.int64), np.zeros(1, np.uint8)
    rounded = cols["score"].astype(np.float32).astype(np.float64)
    labels = cols["label"].astype(np.int64)
    with api.forced("aot"):
        want = api.evaluate_queries(start, end, none, rounded, labels.astype(np.float64), 0, offs, data, start, end,
                                    none, np.zeros(1), False, *tail)
        (got,) = api.evaluate_segments([(start, end, cols["score"], labels, offs)], 0, data, tail, True)
        assert want[0].view(np.uint64).tolist() == got[0].view(np.uint64).tolist()
        assert want[1].tolist() == got[1].tolist()
        item = pa.array(cols["item"])
        ioffs, idata = np.frombuffer(item.buffers()[1], np.int32), np.frombuffer(item.buffers()[2], np.uint8)
        tied = []
        for key, round32 in ((rounded, False), (cols["score"], True)):
            dup, t = np.full(start.shape[0], -1, np.int64), np.zeros(start.shape[0], np.bool_)
            api.check_groups([(start, end, 0, ioffs, idata, key, 0, dup, t)], True, round32)
            tied.append(t.tolist())
        assert tied[0] == tied[1] and any(tied[0])
        by_hand = [len(set(rounded[a:b])) < b - a for a, b in zip(start, end)]
        assert tied[0] == by_hand
