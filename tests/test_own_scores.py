"""Scores rounded in place only where nobody else holds them.

``evaluate`` reading an Arrow table itself rounds the scores it copied out of the table's chunks to the
convention's precision over that copy (trec_eval's float32), instead of into a second array of the column's size.
Nothing outside the call may see the rounding: the table, rankings the caller made (``as_rankings``, used again
under another convention), and a second call on the same table all keep the float64 scores. (Float64 chunks without
nulls are not copied at all: the kernel rounds them as it reads them, ``tests/test_held_columns.py``.)

The numbers are by hand: query ``q`` has item ``a`` (label 1) scored ``0.5 + 1e-12`` and item ``b`` (label 0)
scored ``0.5``. In float64 ``a`` comes first: NDCG@2 = 1. Rounded to float32 the scores tie, and trec_eval breaks
ties by item id, descending: ``b`` first, NDCG@2 = (1 / log2 3) / 1.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ranklens
from ranklens._input.chunks import ChunkedValues, held

pa = pytest.importorskip("pyarrow")

TIED = 1 / math.log2(3)  # a relevant item second, out of one


def _table():
    batch = pa.record_batch({"query": ["q", "q"], "item": ["a", "b"], "label": [1, 0], "score": [0.5 + 1e-12, 0.5]})
    other = pa.record_batch({"query": ["r", "r"], "item": ["c", "d"], "label": [1, 0], "score": [2.0, 1.0]})
    return pa.Table.from_batches([batch, other])  # two chunks per column: the reader copies the scores


def _ndcg(j, r, convention=None):
    res = ranklens.evaluate(j, r, ["ndcg@2"], convention=convention)
    return res.per_query_dict("ndcg@2")["q"]


def test_the_table_read_in_the_call_gives_both_conventions_their_numbers():
    tab = _table()
    assert _ndcg(tab, tab, "trec_eval") == pytest.approx(TIED, abs=1e-12)
    assert _ndcg(tab, tab) == 1.0  # the table itself untouched: float64 scores again
    assert _ndcg(tab, None, "trec_eval") == pytest.approx(TIED, abs=1e-12)
    assert _ndcg(tab, None) == 1.0
    assert tab.column("score").to_pylist()[0] == 0.5 + 1e-12


def test_rankings_the_caller_holds_are_never_rounded_over():
    tab = _table()
    r = ranklens.as_rankings(tab)
    assert isinstance(held(r, "score"), ChunkedValues)  # two float64 chunks held as they are (no copy)...
    before = r.score.copy()
    assert _ndcg(tab, r, "trec_eval") == pytest.approx(TIED, abs=1e-12)
    np.testing.assert_array_equal(r.score, before)  # ...but the caller's rankings: rounded into a new array
    assert _ndcg(tab, r) == 1.0


def test_only_arrays_of_the_readers_own_are_marked():
    tab = _table()
    one_chunk = tab.combine_chunks()  # one chunk: the scores are Arrow's memory, seen through a view
    assert not ranklens.as_rankings(one_chunk).own_scores
    pd = pytest.importorskip("pandas")
    assert not ranklens.as_rankings(tab.to_pandas()).own_scores  # a data frame's column is the caller's memory
    assert _ndcg(pd.DataFrame(tab.to_pandas()), tab.to_pandas(), "trec_eval") == pytest.approx(TIED, abs=1e-12)


def test_values_checked_finite_once_only_inside_the_call():
    """A table read by ``evaluate`` has its labels and scores checked for NaN and infinities once, by the reader; the
    judgments and rankings a caller holds are checked again at every call: made by the reader (marked finite when
    read) and changed since, their NaN is still refused, naming the row."""
    tab = _table()
    j, r = ranklens.as_judgments(tab), ranklens.as_rankings(tab)
    assert j.finite and r.finite  # what the reader found; not trusted outside the call that read it
    j.label[0] = np.nan
    with pytest.raises(ranklens.InputError, match=r"1 relevance labels in .* are NaN or infinite \(query q item a\)"):
        ranklens.evaluate(j, tab, ["ndcg@2"])
    r.score[1] = np.inf
    with pytest.raises(ranklens.InputError, match=r"1 scores in .* are NaN or infinite \(query q item b\)"):
        ranklens.evaluate(tab, r, ["ndcg@2"])
    bad = pa.table({"query": ["q", "q"], "item": ["a", "b"], "label": [1.0, float("nan")], "score": [0.5, 0.4]})
    with pytest.raises(ranklens.InputError, match="NaN"):
        ranklens.evaluate(bad, bad, ["ndcg@2"], convention="trec_eval")
