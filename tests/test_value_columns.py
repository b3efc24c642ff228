"""Value columns read and ruled on the kernels' thread pool (issue #29 point 8): numeric Arrow chunks read from their
own buffers (``read_numbers``), the label and score rules in one pass (``value_facts``, ``round_f32``). The numbers are
numpy's (its casts and ``trunc``, computed here), the refusals the same texts, naming the same rows, as for the table
in one chunk; values by hand from the definition."""

from __future__ import annotations

import math
import sys

import numpy as np
import pyarrow as pa
import pytest

import ranklens
from ranklens._input.buffers import chunked_to_numpy, read_numbers
from ranklens._kernels import api
from ranklens.errors import InputError

SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 0.5, -0.5, 1.5, 2.0**52, 2.0**52 - 0.5, 2.0**53 + 2, -3.0, 1e300]


def _column(n: int, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.where(rng.random(n) < 0.5, rng.integers(-4, 5, n).astype(np.float64), rng.standard_normal(n) * 1e3)
    x[rng.integers(0, n, len(SPECIAL))] = SPECIAL
    return x


@pytest.mark.parametrize("n", [7, 300_001])  # one piece; pieces on every thread (from 50,000 rows)
def test_value_facts_are_numpys(n):
    x = _column(n)
    finite = x[np.isfinite(x)]
    want = (int((~np.isfinite(x)).sum()), int((x != np.trunc(x)).sum()), int((x < 0).sum()), float(np.nanmax(x)))
    with api.forced("aot"):
        assert api.value_facts(x) == want
        assert api.value_facts(x, False) == want[:2] + (0, -math.inf)
        assert api.value_facts(finite)[3] == finite.max()
        assert api.value_facts(np.zeros(0)) == (0, 0, 0, -math.inf)


@pytest.mark.parametrize("n", [5, 300_001])
def test_round_f32_is_numpys_cast(n):
    x = _column(n) * np.float64(1.0000001)
    with np.errstate(over="ignore"):  # 1e300 overflows to inf, in numpy's cast as in the kernel
        want = x.astype(np.float32).astype(np.float64)
    with api.forced("aot"):
        got = api.round_f32(x, np.empty_like(x))
        assert got.view(np.uint64).tolist() == want.view(np.uint64).tolist()
        y = x.copy()
        api.round_f32(y, y)  # in place
        assert y.view(np.uint64).tolist() == want.view(np.uint64).tolist()


def _chunks(values: np.ndarray, cuts: list[int], pad: int = 2) -> pa.ChunkedArray:
    """``values`` in chunks cut at ``cuts``, each chunk a slice (an offset into a longer buffer)."""
    parts = []
    for a, b in zip([0, *cuts], [*cuts, len(values)]):
        wide = np.concatenate([np.full(pad, 99, values.dtype), values[a:b], np.full(pad, 99, values.dtype)])
        parts.append(pa.array(wide).slice(pad, b - a))
    return pa.chunked_array(parts, type=pa.array(values[:1]).type)


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
@pytest.mark.parametrize("cuts", [[3], [0, 4, 4, 9], [70_000, 150_001]])
def test_read_numbers_reads_sliced_chunks_as_numpy_casts(dtype, cuts):
    n = 200_000 if cuts[-1] > 10 else 12
    rng = np.random.default_rng(5)
    values = (rng.integers(-(2**62), 2**62, n) if dtype == np.int64 else _column(n)).astype(dtype)
    if dtype == np.int64:
        values[:3] = [2**53 + 1, -(2**53) - 3, 2**63 - 1]  # rounded to the nearest float64, as numpy casts
    col = _chunks(values, cuts)
    with api.forced("aot"):
        out, bad = read_numbers(col)
    want = values.astype(np.float64)
    assert out.view(np.uint64).tolist() == want.view(np.uint64).tolist()
    assert bad == int((~np.isfinite(want)).sum())
    assert out.view(np.uint64).tolist() == chunked_to_numpy(col, np.float64).view(np.uint64).tolist()


def test_read_numbers_leaves_nulls_and_other_types_to_chunked_to_numpy():
    assert read_numbers(pa.chunked_array([pa.array([1.0]), pa.array([2.0, None])])) is None
    assert read_numbers(pa.chunked_array([pa.array([1, 2], pa.int32()), pa.array([3], pa.int32())])) is None
    assert read_numbers(pa.chunked_array([pa.array([True]), pa.array([False])])) is None


def _table(scores: list[pa.Array], labels: list[pa.Array]) -> pa.Table:
    n = sum(len(c) for c in scores)
    return pa.table({"query": pa.chunked_array([pa.array([f"q{i // 3}" for i in range(n)])]),
                     "item": pa.chunked_array([pa.array([f"d{i}" for i in range(n)])]),
                     "score": pa.chunked_array(scores), "label": pa.chunked_array(labels)})


def _error(table: pa.Table, convention: str | None = None) -> str:
    with pytest.raises(InputError) as exc:
        ranklens.evaluate(table, table, ["ndcg@10"], convention=convention)
    return str(exc.value)


S0, L0 = pa.array([0.5, 0.4, 0.3]), pa.array([1, 0, 2])


@pytest.mark.parametrize("bad", [None, np.nan, np.inf])
def test_a_bad_score_in_a_later_sliced_chunk_is_refused_naming_its_row(bad):
    t = _table([S0, pa.array([9.0, 0.2, bad, 0.1, 0.05]).slice(1)], [L0, pa.array([7, 1, 0, 1, 0]).slice(1)])
    shown = {None: "missing", np.inf: "inf"}.get(bad, "nan")
    msg = _error(t)
    assert msg.startswith(f"the arrow table, row 4: score ('score') is {shown}: missing, NaN or infinite values are "
                          "refused")  # rows 0-2 in the first chunk, row 4 the second of the slice
    assert msg == _error(t.combine_chunks())  # the same text as for the table in one chunk


def test_label_rules_on_a_later_chunk_name_the_row_as_for_one_chunk():
    s1 = pa.array([9.0, 0.2, 0.15, 0.1, 0.05]).slice(1)
    frac = _table([S0, s1], [pa.array([1.0, 0, 2]), pa.array([7.0, 1, 0, 1.5, 0]).slice(1)])
    msg = _error(frac, "trec_eval")
    assert msg == ("convention 'trec_eval' accepts only integer labels; 1 fractional in the arrow table "
                   "(query q1 item d5, label 1.5).")
    assert msg == _error(frac.combine_chunks(), "trec_eval")
    nan = _table([S0, s1], [pa.array([1.0, 0, 2]), pa.array([7.0, 1, np.nan, 1, 0]).slice(1)])
    assert "row 4: relevance ('label') is nan" in _error(nan)
    neg = _table([S0, s1], [L0, pa.array([7, 1, 0, -1, 0]).slice(1)])
    conv = ranklens.get_convention("ranklens", negative_labels="error")
    with pytest.raises(InputError, match=r"does not accept negative labels; 1 in the arrow table \(query q1 item d5\)"):
        ranklens.evaluate(neg, neg, ["ndcg@10"], convention=conv)
    big = _table([S0, s1], [L0, pa.array([7, 1, 3, 0, 1]).slice(1)])
    conv = ranklens.get_convention("ranklens", max_label=2)
    with pytest.raises(InputError, match=r"accepts labels up to 2; 1 larger in the arrow table \(query q1 item d4\)"):
        ranklens.evaluate(big, big, ["ndcg@10"], convention=conv)


def test_ndcg_of_a_table_in_sliced_chunks_by_hand():
    # q0: scores 0.5, 0.4, 0.3 with labels 1, 0, 2; q1: 0.2, 0.1, 0.05 with labels 1, 0, 1 (second chunk, sliced)
    t = _table([S0, pa.array([9.0, 0.2, 0.1, 0.05]).slice(1)], [L0, pa.array([7, 1, 0, 1]).slice(1)])
    with api.forced("aot"):
        res = ranklens.evaluate(t, t, ["ndcg@10"], convention="trec_eval")
    q0 = (1 + 2 / math.log2(4)) / (2 + 1 / math.log2(3))  # trec_eval: gain = label, discount log2(rank + 1)
    q1 = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert res.per_query_dict("ndcg@10") == pytest.approx({"q0": q0, "q1": q1}, rel=1e-15)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise and /proc/self/smaps are Linux's")
def test_a_column_sized_buffer_is_kept_off_huge_pages():
    """A fresh column-sized buffer from Arrow's pool is advised not to take transparent huge pages (their compaction
    stalled the first evaluation after a file read): the kernel's own record of the mapping holding it
    (``/proc/self/smaps``, flag ``nh``) says so; its values are those written."""
    from ranklens._input.buffers import empty_array

    a = empty_array(4_000_000, np.float64)  # 32 MB
    a[:] = 2.5
    assert "nh" in _mapping_flags(a.ctypes.data + a.nbytes // 2)
    assert float(a.sum()) == 2.5 * 4_000_000


def _mapping_flags(addr: int) -> list[str]:
    """The flags (``VmFlags``) of the mapping holding ``addr``, from ``/proc/self/smaps``."""
    inside = False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 5:
                lo, hi = (int(x, 16) for x in head[0].split("-"))
                inside = lo <= addr < hi
            elif head[0] == "VmFlags:" and inside:
                return head[1:]
    raise AssertionError(f"no mapping holds {addr:#x}")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise and /proc/self/smaps are Linux's")
def test_sparse_offsets_are_zeros_on_small_pages():
    """The offsets of the few tied rows among all rows (``scatter_offsets``): zeros but where written, as numpy's
    zeros with the same writes, in a mapping of ordinary pages (numpy's large zeros ask for huge pages, each write
    clearing 2 MB)."""
    from ranklens._core.ties import scatter_offsets
    from ranklens._input.buffers import zeros_array

    n = 3_000_000
    rows = np.array([0, 5, 6, 1_000_000, n - 1])
    sub = np.array([0, 2, 5, 9, 10, 14])
    got = scatter_offsets(sub, rows, n)
    want = np.zeros(n + 1, np.int64)
    want[rows], want[rows + 1] = sub[:-1], sub[1:]
    assert got.dtype == np.int64 and got.flags.c_contiguous and got.flags.writeable
    assert np.array_equal(got, want)
    assert "nh" in _mapping_flags(got.ctypes.data + got.nbytes // 2)
    assert zeros_array(10, np.int64).tolist() == [0] * 10  # small: numpy's own
