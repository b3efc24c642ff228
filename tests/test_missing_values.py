"""One validation rule for every input form (issue #29, point 1): forms x bad values.

The same two queries are given in every form ranklens reads (dicts, records, lists of lists, numpy, torch,
objects offering only ``__array__`` or only DLPack, pandas of every dtype, Arrow, polars, CSV, Parquet, JSON and
TREC files), with one bad value planted in item e of query q2, as its relevance label or as its score: a missing
value (None, pandas' NA, a null, an empty CSV cell), NaN, an infinity, or text. Every cell of the matrix is
refused in one error that names the form, where the value is (the query and item, the row and column, the
line) and the column; with ``missing="exclude"`` a missing or NaN value leaves its row out of that side, and
the result is the one computed here by hand for the data without it (infinities and text are refused even then).

The data, linear gains, ideal list from the judgments::

    q1: a (label 2, score 0.9), b (0, 0.5), c (1, 0.1)
    q2: d (0, 0.7), e (1, 0.3), f (2, 0.2)
"""

from __future__ import annotations

import gzip
import json
import math
import re

import numpy as np
import pytest

import ranklens
from ranklens import InputError, RanklensError

ROWS = [("q1", "a", 2, 0.9), ("q1", "b", 0, 0.5), ("q1", "c", 1, 0.1),
        ("q2", "d", 0, 0.7), ("q2", "e", 1, 0.3), ("q2", "f", 2, 0.2)]
BAD_ROW = 4  # q2, e


def ndcg_by_hand(judged: dict, ranked: dict) -> float:
    """Mean NDCG over the queries with a positive label: gain = label, discount 1 / log2(rank + 1)."""
    vals = []
    for q, labels in judged.items():
        ideal = sorted(labels.values(), reverse=True)
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal) if g > 0)
        if idcg == 0:
            continue
        order = sorted(ranked.get(q, {}), key=lambda d: -ranked[q][d])
        dcg = sum(labels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(order))
        vals.append(dcg / idcg)
    return sum(vals) / len(vals)


def _dicts(rows):
    j, r = {}, {}
    for q, d, lab, sc in rows:
        j.setdefault(q, {})[d] = lab
        r.setdefault(q, {})[d] = sc
    return j, r


FULL = ndcg_by_hand(*_dicts(ROWS))


def _planted(side: str, value):
    rows = [list(r) for r in ROWS]
    rows[BAD_ROW][2 if side == "label" else 3] = value
    return rows


# --- the forms: (judgments, rankings, keywords) of rows holding the planted value, and how an error names it ------

def _matrix(rows, col):
    return [[r[col] for r in rows if r[0] == q] for q in ("q1", "q2")]


class OnlyArray:
    """An array-like of another library offering numpy's ``__array__`` only."""

    def __init__(self, a):
        self.a = np.asarray(a, dtype=float)

    def __array__(self, dtype=None, copy=None):
        return self.a if dtype is None else self.a.astype(dtype)


class OnlyDLPack:
    """An array-like offering DLPack only (as a CuPy or JAX array does, read on the CPU here)."""

    def __init__(self, a):
        self.a = np.asarray(a, dtype=float)

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def _records(rows, tmp):
    from ir_measures import Qrel, ScoredDoc

    return [Qrel(q, d, lab) for q, d, lab, _ in rows], [ScoredDoc(q, d, sc) for q, d, _, sc in rows], {}


def _pandas(dtype_label=None, dtype_score=None, one=False):
    def make(rows, tmp):
        pd = pytest.importorskip("pandas")
        df = pd.DataFrame({"query": [r[0] for r in rows], "item": [r[1] for r in rows],
                           "label": pd.Series([r[2] for r in rows], dtype=dtype_label),
                           "score": pd.Series([r[3] for r in rows], dtype=dtype_score)})
        if one:
            return df, None, {}
        return df[["query", "item", "label"]], df[["query", "item", "score"]], {}
    return make


def _typed(values):
    """A column of one type, as Arrow and polars hold them: with one text among numbers, every value is text."""
    return [None if v is None else str(v) for v in values] if any(isinstance(v, str) for v in values) else values


#: forms whose columns have one type: text there is the whole column's, refused from its first row
TYPED = ("arrow", "arrow one table", "polars", "polars one table", "parquet one table")


def _arrow(one=False):
    def make(rows, tmp):
        pa = pytest.importorskip("pyarrow")
        cols = {"query": [r[0] for r in rows], "item": [r[1] for r in rows], "label": _typed([r[2] for r in rows]),
                "score": _typed([r[3] for r in rows])}
        t = pa.Table.from_pydict(cols)
        return (t, None, {}) if one else (t.select(["query", "item", "label"]), t.select(["query", "item", "score"]),
                                          {})
    return make


def _polars(one=False):
    def make(rows, tmp):
        pl = pytest.importorskip("polars")
        df = pl.DataFrame({"query": [r[0] for r in rows], "item": [r[1] for r in rows],
                           "label": _typed([r[2] for r in rows]), "score": _typed([r[3] for r in rows])}, strict=False)
        return (df, None, {}) if one else (df.select(["query", "item", "label"]), df.select(["query", "item", "score"]),
                                           {})
    return make


def _cell(v):
    return "" if v is None else str(v)


def _csv(one=False):
    def make(rows, tmp):
        if one:
            p = tmp / "both.csv"
            p.write_text("query,item,label,score\n" + "".join(f"{q},{d},{_cell(lab)},{_cell(sc)}\n"
                                                               for q, d, lab, sc in rows))
            return p, None, {}
        j, r = tmp / "qrels.csv", tmp / "run.csv"
        j.write_text("query,item,label\n" + "".join(f"{q},{d},{_cell(lab)}\n" for q, d, lab, _ in rows))
        r.write_text("query,item,score\n" + "".join(f"{q},{d},{_cell(sc)}\n" for q, d, _, sc in rows))
        return j, r, {}
    return make


def _parquet(rows, tmp):
    pq = pytest.importorskip("pyarrow.parquet")

    t, _, _ = _arrow(one=True)(rows, tmp)
    pq.write_table(t, tmp / "both.parquet")
    return tmp / "both.parquet", None, {}


def _json(rows, tmp):
    j, r = _dicts(rows)
    (tmp / "qrels.json").write_text(json.dumps(j))  # a NaN is written NaN, None null
    (tmp / "run.json").write_text(json.dumps(r))
    return tmp / "qrels.json", tmp / "run.json", {}


def _trec(rows, tmp):
    (tmp / "qrels").write_text("".join(f"{q} 0 {d} {lab}\n" for q, d, lab, _ in rows))
    (tmp / "run.gz").write_bytes(gzip.compress("".join(f"{q} Q0 {d} {i} {sc} x\n" for i, (q, d, _, sc) in
                                                       enumerate(rows)).encode()))
    return tmp / "qrels", tmp / "run.gz", {"format": "trec", "run_format": "trec"}


def _torch(rows, tmp):
    torch = pytest.importorskip("torch")
    return (torch.tensor(_matrix(rows, 2), dtype=torch.float64), torch.tensor(_matrix(rows, 3), dtype=torch.float64),
            {})


#: how a refusal names the planted cell of a matrix, and of a table (``where`` its name, ``at`` its row or line)
MATRIX = {"label": r"the y_true matrix, row 1, column 1", "score": r"the y_score matrix, row 1, column 1"}


def _table(where_label: str, where_score: str, at: str = "row 4") -> dict[str, str]:
    return {"label": rf"{where_label}, {at}: relevance \('label'\)",
            "score": rf"{where_score}, {at}: score \('score'\)"}


#: form -> (maker, how the refusal names where the value is: the form's words and the place)
FORMS = {
    "dict": (lambda rows, tmp: (*_dicts(rows), {}), {"label": r"the judgments dict, query q2 item e",
                                                      "score": r"the rankings dict, query q2 item e"}),
    "records": (_records, {"label": r"the judgment records, query q2 item e",
                           "score": r"the ranking records, query q2 item e"}),
    "list of lists": (lambda rows, tmp: (_matrix(rows, 2), _matrix(rows, 3), {}), MATRIX),
    "numpy": (lambda rows, tmp: (np.array(_matrix(rows, 2), dtype=float), np.array(_matrix(rows, 3), dtype=float),
                                 {}), MATRIX),
    "torch": (_torch, MATRIX),
    "__array__ only": (lambda rows, tmp: (OnlyArray(_matrix(rows, 2)), OnlyArray(_matrix(rows, 3)), {}), MATRIX),
    "DLPack only": (lambda rows, tmp: (OnlyDLPack(_matrix(rows, 2)), OnlyDLPack(_matrix(rows, 3)), {}), MATRIX),
    "pandas float64": (_pandas(), _table("the pandas table", "the pandas table")),
    "pandas Float64/Int64": (_pandas("Int64", "Float64"), _table("the pandas table", "the pandas table")),
    "pandas Float64": (_pandas("Float64", "Float64"), _table("the pandas table", "the pandas table")),
    "pandas object": (_pandas(object, object), _table("the pandas table", "the pandas table")),
    "pandas one table": (_pandas(one=True), _table("the pandas table", "the pandas table")),
    "arrow": (_arrow(), _table("the arrow table", "the arrow table")),
    "arrow one table": (_arrow(one=True), _table("the arrow table", "the arrow table")),
    "polars": (_polars(), _table("the polars table", "the polars table")),
    "polars one table": (_polars(one=True), _table("the polars table", "the polars table")),
    "csv": (_csv(), _table("qrels.csv", "run.csv", "line 6")),
    "csv one table": (_csv(one=True), _table("both.csv", "both.csv", "line 6")),
    "parquet one table": (_parquet, _table("both.parquet", "both.parquet")),
    "json": (_json, {"label": r"qrels.json, query q2 item e", "score": r"run.json, query q2 item e"}),
    "trec (gzip run)": (_trec, {"label": r"qrels, line 5", "score": r"run.gz, line 5"}),
}

#: the values planted, and the forms that cannot hold them (None in a float array is NaN; a TREC or CSV line has
#: no "missing" field and no Python text; an array of numbers holds no text)
BAD = {"missing": None, "nan": math.nan, "inf": math.inf, "-inf": -math.inf, "text": "1.5"}
CANNOT = {
    "missing": {"numpy", "torch", "__array__ only", "DLPack only", "trec (gzip run)", "json"},
    "text": {"numpy", "torch", "__array__ only", "DLPack only", "trec (gzip run)", "csv", "csv one table",
             "pandas float64", "pandas Float64/Int64", "pandas Float64", "json"},
    "inf": {"json"}, "-inf": {"json"},
}
#: a missing or NaN value in these forms can be left out with missing="exclude" (their rows have ids)
EXCLUDABLE = {"dict", "records", "list of lists", "numpy", "torch", "__array__ only", "DLPack only", "pandas float64",
              "pandas Float64/Int64", "pandas Float64", "pandas object", "pandas one table", "arrow",
              "arrow one table", "polars", "polars one table", "csv", "csv one table", "parquet one table", "json"}

CASES = [(form, side, bad) for form in FORMS for side in ("label", "score") for bad in BAD
         if form not in CANNOT.get(bad, set()) and not (form == "pandas Float64/Int64" and side == "label"
                                                         and bad in ("inf", "-inf"))]  # Int64 holds no infinity


def _make(form, side, bad, tmp_path):
    maker, where = FORMS[form]
    value = BAD[bad]
    if form == "pandas Float64/Int64" and side == "label" and bad == "nan":
        value = None  # an Int64 column holds NA, not NaN
    place = where[side].replace("row 4", "row 0") if bad == "text" and form in TYPED else where[side]
    return maker(_planted(side, value), tmp_path), place


@pytest.mark.parametrize(("form", "side", "bad"), CASES)
def test_every_form_refuses_every_bad_value_naming_where_it_is(form, side, bad, tmp_path):
    (judgments, rankings, kw), where = _make(form, side, bad, tmp_path)
    with pytest.raises(RanklensError) as info:
        ranklens.evaluate(judgments, rankings, ["ndcg"], **kw)
    msg = str(info.value)
    assert re.search(where, msg), msg
    if bad == "text":  # the planted text, or the first text of a column of text
        assert re.search(r"must be numbers; found '(1\.5|2|0\.9)' \(text\)", msg), msg
    else:
        assert "missing, NaN or infinite values are refused" in msg, msg


def _expected(side: str) -> float:
    rows = [r for i, r in enumerate(ROWS)]
    j, r = _dicts(rows)
    if side == "label":
        del j["q2"]["e"]  # e is ranked, not judged
    else:
        del r["q2"]["e"]  # e is judged, not ranked
    return ndcg_by_hand(j, r)


@pytest.mark.parametrize(("form", "side", "bad"), [c for c in CASES if c[0] in EXCLUDABLE and c[2] in ("missing",
                                                                                                      "nan")])
def test_missing_exclude_leaves_the_row_out_of_its_side_and_counts_it(form, side, bad, tmp_path):
    (judgments, rankings, kw), _ = _make(form, side, bad, tmp_path)
    res = ranklens.evaluate(judgments, rankings, ["ndcg"], missing="exclude", **kw)
    assert res["ndcg"] == pytest.approx(_expected(side), rel=1e-12)
    assert res["ndcg"] != pytest.approx(FULL)  # the planted row matters: e is relevant
    (e,) = [e for e in res.excluded if e.reason.unit == "row"]
    assert e.count == 1 and e.reason.name == ("MISSING_LABEL_LEFT_OUT" if side == "label" else "MISSING_SCORE_LEFT_OUT")
    assert e.examples[0] in ("query q2 item e", "query 1 item 1"), e.examples  # by id, or by row and column
    assert str(e).startswith("1 row: a missing ")


@pytest.mark.parametrize(("form", "side", "bad"), [c for c in CASES if c[0] in EXCLUDABLE and c[2] in ("inf", "text")])
def test_missing_exclude_still_refuses_infinities_and_text(form, side, bad, tmp_path):
    (judgments, rankings, kw), where = _make(form, side, bad, tmp_path)
    with pytest.raises(RanklensError, match=where):
        ranklens.evaluate(judgments, rankings, ["ndcg"], missing="exclude", **kw)


def test_the_planted_row_is_read_when_it_is_good(tmp_path):
    """The forms read the good data to the number by hand (the matrix above is about the bad cell only)."""
    for form, (maker, _) in FORMS.items():
        sub = tmp_path / form.replace(" ", "_").replace("/", "_")
        sub.mkdir()
        judgments, rankings, kw = maker([list(r) for r in ROWS], sub)
        assert ranklens.evaluate(judgments, rankings, ["ndcg"], **kw)["ndcg"] == pytest.approx(FULL, rel=1e-6), form


def test_a_bare_score_vector_refuses_nan_and_has_no_exclusion():
    """A score vector aligns with the judgments row by row: a missing score there cannot be left out."""
    j = {"q1": {"a": 2, "b": 0}}
    with pytest.raises(InputError, match=r"the score vector, row 1: score is nan: missing, NaN or infinite values "
                                         r"are refused$"):
        ranklens.evaluate(j, np.array([0.5, np.nan]), ["ndcg"], missing="exclude")


@pytest.mark.parametrize("rankings", [[[0.1, 0.2, 0.3], [0.5, 0.4]], [[0.1, 0.2], [0.5, 0.4, 0.1]], [[0.1, 0.2, 0.3]]])
def test_matrix_rows_of_other_lengths_than_the_labels_are_refused(rankings):
    """Row q of y_true and row q of y_score are one list, item by item: a row of another length (or a missing
    row) would leave items unjudged or unranked without a word."""
    with pytest.raises(InputError, match=r"y_true .* y_score matri"):
        ranklens.evaluate([[1, 0, 2], [0, 1, 1]], rankings, ["ndcg"])


def test_ragged_lists_of_the_same_lengths_stay_accepted():
    y_true, y_score = [[1, 0, 2], [0, 1]], [[0.1, 0.2, 0.3], [0.5, 0.4]]
    by_hand = (ndcg_by_hand({0: {0: 1, 1: 0, 2: 2}}, {0: {0: .1, 1: .2, 2: .3}})
               + ndcg_by_hand({1: {0: 0, 1: 1}}, {1: {0: .5, 1: .4}})) / 2
    assert ranklens.evaluate(y_true, y_score, ["ndcg"])["ndcg"] == pytest.approx(by_hand, rel=1e-12)


@pytest.mark.parametrize("value", ["1.5", b"1.5", "nan", [1.5], {"x": 1}, 1 + 2j])
def test_a_dict_value_that_is_no_number_is_refused(value):
    with pytest.raises(InputError, match=r"the rankings dict, query q item b: score must be numbers"):
        ranklens.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"a": 0.5, "b": value}}, ["ndcg"])


def test_missing_is_checked():
    with pytest.raises(ranklens.InvalidParameterError, match="`missing` must be 'error'"):
        ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 0.5}}, ["ndcg"], missing="skip")


def test_cli_missing_option_and_its_note(tmp_path, run_cli):
    both = tmp_path / "both.csv"
    both.write_text("query,item,label,score\n" + "".join(f"{q},{d},{'' if i == BAD_ROW else lab},{sc}\n"
                                                         for i, (q, d, lab, sc) in enumerate(ROWS)))
    code, out, err = run_cli(["eval", both])
    assert code == 2 and "line 6: relevance ('label') is missing" in err and "--missing exclude" in err, err
    code, out, err = run_cli(["eval", both, "-m", "ndcg", "--missing", "exclude", "-f", "json"])
    assert code == 0, err
    doc = json.loads(out)
    assert doc["aggregate"]["ndcg"] == pytest.approx(_expected("label"), rel=1e-12)
    assert doc["excluded"] == [{"reason": "a missing label: left out of the judgments (missing='exclude')",
                                "count": 1, "examples": ["query q2 item e"], "measures": []}]
