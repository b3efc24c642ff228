"""The input layer (issue #17): one records type, one id column type over its layouts, typed options.

Expected values are worked out by hand in the comments; the layouts of one id column are compared
with each other and with the ids written out in Python.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest

import ranklens
from ranklens._input.buffers import StrIds, as_ids
from ranklens._input.factorize import factorize_parts
from ranklens._input.ids import (
    ArrowIds,
    BufferIds,
    IdColumn,
    IntIds,
    NarrowArrowIds,
    PyStrIds,
    concat_ids,
    filter_ids,
    hash_ids,
    id_length,
    ids_to_numpy,
    is_str_ids,
    kernel_ids,
    take_ids,
    unify_ids,
)
from ranklens.errors import InputError, InvalidParameterError
from ranklens.options import Columns, Formats, load_inputs, split_options
from ranklens.records import Judgments, Rankings, Records

pa = pytest.importorskip("pyarrow")

SRC = Path(ranklens.__file__).parent
IDS = ["q10", "q9", "q9", "é", "q10", "q1"]


def _layouts() -> dict[str, object]:
    data = "".join(IDS).encode()
    offs = np.cumsum([0] + [len(s.encode()) for s in IDS])
    return {
        "python": np.array(IDS, dtype=object),
        "buffers": StrIds(offs, np.frombuffer(data, np.uint8)),
        "arrow": pa.array(IDS, pa.large_string()),
        "narrow": pa.array(IDS, pa.string()),
        "chunked": pa.chunked_array([pa.array(IDS[:2], pa.string()), pa.array(IDS[2:], pa.string())]),
    }


def test_each_layout_is_one_class():
    kinds = {name: type(IdColumn.of(v)) for name, v in _layouts().items()}
    assert kinds == {"python": PyStrIds, "buffers": BufferIds, "arrow": ArrowIds, "narrow": NarrowArrowIds,
                     "chunked": NarrowArrowIds}
    assert type(IdColumn.of(np.array([3, 1]))) is IntIds
    assert not is_str_ids(np.array([3, 1])) and all(is_str_ids(v) for v in _layouts().values())


@pytest.mark.parametrize("name", ["python", "buffers", "arrow", "narrow", "chunked"])
def test_every_layout_gives_the_same_ids(name):
    ids = _layouts()[name]
    assert id_length(ids) == 6
    assert ids_to_numpy(ids).tolist() == IDS
    assert ids_to_numpy(take_ids(ids, np.array([5, 3, 0]))).tolist() == ["q1", "é", "q10"]
    mask = np.array([True, False, True, False, False, True])
    assert ids_to_numpy(filter_ids(ids, mask)).tolist() == ["q10", "q9", "q1"]
    # a string's hash depends on its bytes only: the same in every layout, equal for equal ids
    h = hash_ids(ids)
    assert h.tolist() == hash_ids(_layouts()["arrow"]).tolist()
    assert h[0] == h[4] and h[1] == h[2] and len(set(h.tolist())) == 4
    is_str, _, offs, data = kernel_ids(ids)
    assert is_str and offs.dtype == np.int64 and bytes(data[offs[3]:offs[4]]).decode() == "é"
    # codes in order of first appearance; sorted by bytes: q1 < q10 < q9 < é
    (codes,), uniques, order = factorize_parts([ids], "ids")
    assert codes.tolist() == [0, 1, 1, 2, 0, 3]
    assert uniques.tolist() == ["q10", "q9", "é", "q1"]
    assert uniques[order].tolist() == ["q1", "q10", "q9", "é"]


def test_integer_ids_and_unification():
    ints = np.array([10, 9, 9])
    assert take_ids(ints, np.array([1])).tolist() == [9]
    assert kernel_ids(ints)[0] is False
    a, b = unify_ids(ints, pa.array(["9"], pa.large_string()))
    assert ids_to_numpy(a).tolist() == ["10", "9", "9"] and ids_to_numpy(b).tolist() == ["9"]
    assert ids_to_numpy(concat_ids(ints, np.array([1]))).tolist() == [10, 9, 9, 1]
    with pytest.raises(TypeError, match="no string buffers"):
        IdColumn.of(ints).buffers()


def test_string_view_ids_are_widened():
    # Arrow string_view columns used to reach the kernels as if they were large_string (a crash)
    t = pa.table({"query": pa.array(["a", "a", "b", "b"], pa.string_view()),
                  "item": pa.array(["x", "y", "x", "y"], pa.string_view()),
                  "label": [1, 0, 0, 1], "score": [0.1, 0.2, 0.3, 0.4]})
    assert as_ids(t.column("item").chunk(0), widen=False).type == pa.large_string()
    # a: y (0) then x (1): 1/log2(3); b: y (1) first: 1
    res = ranklens.evaluate(t, None, ["ndcg"])
    assert res["ndcg"] == pytest.approx((1 / math.log2(3) + 1) / 2, rel=1e-15)


def test_records_split_into_judged_and_ranked_rows():
    # one table: row 1 unjudged, row 2 unranked
    t = pa.table({"query": ["q", "q", "q"], "item": ["a", "b", "c"], "relevance": [2.0, None, 1.0],
                  "score": [0.5, 0.9, None]})
    from ranklens._input.tables import table_records

    with pytest.raises(InputError, match=r"row 1: relevance \('relevance'\) is missing"):
        table_records(t, need="both")  # missing cells are refused unless missing="exclude" asks to leave them out
    rec = table_records(t, need="both", missing="exclude")
    assert isinstance(rec, Records) and rec.has_labels and rec.has_order
    assert [(x.side, x.count, x.examples) for x in rec.left_out] == [("judgments", 1, ("query q item b",)),
                                                                     ("rankings", 1, ("query q item c",))]
    j, r = rec.judgments(), rec.rankings()
    assert isinstance(j, Judgments) and isinstance(r, Rankings)
    assert ids_to_numpy(j.item).tolist() == ["a", "c"] and j.label.tolist() == [2.0, 1.0]
    assert ids_to_numpy(r.item).tolist() == ["a", "b"] and r.score.tolist() == [0.5, 0.9]
    assert r.label is not None and r.label[0] == 2.0 and math.isnan(r.label[1])
    with pytest.raises(InputError, match="^run.txt has no relevance labels"):
        Records(np.array([1]), np.array([1]), score=np.array([1.0]), source="run.txt").judgments()
    with pytest.raises(InputError, match="^the input has no score or rank"):
        Records(np.array([1]), np.array([1]), label=np.array([1.0])).rankings()


def test_every_reader_gives_records(tmp_path):
    from ranklens.io import read_records

    (tmp_path / "q.txt").write_text("q1 0 d1 2\nq1 0 d2 0\n")
    (tmp_path / "r.txt").write_text("q1 Q0 d2 1 3.5 s\nq1 Q0 d1 2 1.5 s\n")
    (tmp_path / "p.txt").write_text("0.5\n0.25\n")
    (tmp_path / "l.svm").write_text("2 qid:7 1:0.5\n0 qid:7 1:0.1\n")
    (tmp_path / "d.json").write_text('{"q1": {"d1": 1, "d2": 0}}')
    (tmp_path / "t.csv").write_text("query,item,relevance,score\nq1,d1,1,0.2\nq1,d2,0,0.7\n")
    got = {name: read_records(tmp_path / name, need=need) for name, need in
           [("q.txt", "judgments"), ("r.txt", "rankings"), ("p.txt", "rankings"), ("l.svm", "judgments"),
            ("d.json", "judgments"), ("t.csv", "both")]}
    assert all(type(v) is Records for v in got.values())
    assert got["q.txt"].label.tolist() == [2.0, 0.0] and got["r.txt"].score.tolist() == [3.5, 1.5]
    assert got["p.txt"].qid is None and got["p.txt"].score.tolist() == [0.5, 0.25]
    assert ids_to_numpy(got["l.svm"].qid).tolist() == ["7", "7"] and got["l.svm"].item.tolist() == [0, 1]
    assert got["d.json"].source == str(tmp_path / "d.json") and got["d.json"].label.tolist() == [1.0, 0.0]
    assert got["t.csv"].label.tolist() == [1.0, 0.0] and got["t.csv"].score.tolist() == [0.2, 0.7]
    with pytest.raises(InputError, match="holds either judgments or a ranking, not both"):
        read_records(tmp_path / "q.txt")


def test_split_options_groups_the_keywords():
    cols, fmts, rest = split_options({"query_col": "topic", "label_col": "grade", "format": "trec",
                                      "run_format": "csv", "groups": "g.txt", "gain": "exponential", "ties": "input",
                                      "missing": "exclude"})
    assert cols == Columns(query="topic", label="grade")
    assert fmts == Formats(judgments="trec", run="csv", groups="g.txt", missing="exclude")
    assert rest == {"gain": "exponential", "ties": "input"}
    with pytest.raises(InvalidParameterError, match=r"unknown keyword 'k'.*its own: query.*query_col.*missing.*ties"):
        split_options({"k": 3}, own=("query",))
    assert cols.judgments_kwargs() == {"query_col": "topic", "label_col": "grade"}
    assert cols.rankings_kwargs() == {"query_col": "topic"}
    assert split_options({"judgments_format": "json"})[1].judgments == "json"
    with pytest.raises(InvalidParameterError, match="format=` or `judgments_format="):
        split_options({"format": "trec", "judgments_format": "trec"})


def test_load_inputs_reads_files_with_their_formats(tmp_path):
    q, r = tmp_path / "qrels", tmp_path / "run"
    q.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    r.write_text("topic,doc,score\nq1,d2,0.9\nq1,d1,0.1\n")
    j, rk = load_inputs(str(q), str(r), Columns(query="topic"), Formats(judgments="trec", run="csv"))
    assert j.label.tolist() == [1.0, 0.0] and rk.score.tolist() == [0.9, 0.1]
    # the format applies to files only: an in-memory dict is read as a dict
    j2, _ = load_inputs({"q1": {"d1": 1}}, {"q1": {"d1": 0.3}}, Columns(), Formats(judgments="trec"))
    assert j2.label.tolist() == [1.0]
    with pytest.raises(InvalidParameterError, match="`run` is missing"):
        load_inputs({"q1": {"d1": 1}}, None)
    # evaluate takes the same keywords: d1 (relevant) ranked second: 1/log2(3)
    res = ranklens.evaluate(str(q), str(r), ["ndcg"], query_col="topic", run_format="csv")
    assert res["ndcg"] == pytest.approx(1 / math.log2(3), rel=1e-15)


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names.add(node.module or "")
    return names


def test_io_and_data_do_not_import_each_other():
    layer = SRC / "_input"  # io is _input/files, data _input/dispatch
    assert "dispatch" not in _imports(layer / "files.py")
    for name in ("coerce.py", "tables.py"):
        assert not {"files", "dispatch"} & _imports(layer / name), name
    for name in ("records.py", "ids.py", "factorize.py", "buffers.py", "text.py", "opening.py"):
        assert not {"files", "dispatch", "coerce", "tables", "options"} & _imports(layer / name), name


def test_column_options_with_a_text_format_are_refused_not_ignored(tmp_path):
    """--query-col and friends name columns of a table; given with a TREC file they used to be ignored silently."""
    import ranklens
    from ranklens.errors import InvalidParameterError

    q = tmp_path / "q.txt"
    q.write_text("1 0 a 1\n")
    r = tmp_path / "r.txt"
    r.write_text("1 Q0 a 1 0.5 t\n")
    assert ranklens.evaluate(q, r, ["ndcg"])["ndcg"] == 1.0
    with pytest.raises(InvalidParameterError, match=r"^query_col name columns of a table .* neither input is one"):
        ranklens.evaluate(q, r, ["ndcg"], query_col="topic")
    with pytest.raises(InvalidParameterError, match=r"^item_col, score_col name columns"):
        ranklens.evaluate({"1": {"a": 1}}, {"1": {"a": 0.5}}, ["ndcg"], score_col="s", item_col="i")
    # one table among the inputs: the options are its columns
    run = tmp_path / "r.csv"
    run.write_text("topic,docid,score\n1,a,0.5\n")
    res = ranklens.evaluate(q, run, ["ndcg"], query_col="topic", item_col="docid")
    assert res["ndcg"] == 1.0


def test_join_strings_of_every_string_layout_is_the_lists_joined():
    """One buffer join for StrIds, Arrow (narrow, large, chunked, sliced) and Python strings: the ids in order."""
    import pyarrow as pa

    from ranklens._input.ids import as_ids, join_strings

    a = ["q1", "", "é", "long id"]
    b = ["x", "yy"]
    sliced = pa.array(["drop", "z", "zz", "end"]).slice(1, 2)  # offsets not starting at 0
    parts = [as_ids(np.array(a, dtype=object)), pa.array(b), pa.chunked_array([["c1"], ["c2", "c3"]]),
             sliced, pa.array(["w"], pa.large_string()), np.array(["p"], dtype=object)]
    joined = join_strings(parts)
    assert joined.to_numpy().tolist() == a + b + ["c1", "c2", "c3", "z", "zz", "w", "p"]
    assert join_strings([pa.array(["", ""])]).to_numpy().tolist() == ["", ""]
