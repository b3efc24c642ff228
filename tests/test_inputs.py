"""The same judgments and run in every accepted input form give the same per-query values.

Expected values come from a small plain-Python reference written here (linear gain, ranklens's
default convention: ideal list from all judgments of the query, relevant = label >= 1, negative
labels = judged non-relevant, queries without a relevant item left out of the mean).
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import ranklens

MEASURES = ["ndcg", "ndcg@3", "dcg@4", "map", "map@3", "mrr", "P@3", "P@10", "recall@3", "hit_rate@2"]

# ---------------------------------------------------------------------------------------------
# reference implementation (plain Python, from the definitions)
# ---------------------------------------------------------------------------------------------


def _disc(i: int) -> float:
    return 1.0 / math.log2(i + 1)


def reference(qrels: dict, run: dict) -> dict:
    """{query: {measure: value}}; queries without a relevant item are absent for that measure."""
    out: dict = {}
    for q in set(qrels) | set(run):
        judged = qrels.get(q, {})
        ranked = [d for d, _ in sorted(run.get(q, {}).items(), key=lambda kv: -kv[1])]
        gains = [max(judged.get(d, 0.0), 0.0) for d in ranked]
        rel = [1 if judged.get(d, 0.0) >= 1 else 0 for d in ranked]
        ideal = sorted((max(v, 0.0) for v in judged.values()), reverse=True)
        n_rel = sum(1 for v in judged.values() if v >= 1)
        vals: dict = {}

        def dcg(gs, k=None):
            return sum(g * _disc(i) for i, g in enumerate(gs[:k] if k else gs, 1))

        vals["dcg@4"] = dcg(gains, 4)
        if any(g > 0 for g in ideal):
            vals["ndcg"] = dcg(gains) / dcg(ideal)
            vals["ndcg@3"] = dcg(gains, 3) / dcg(ideal, 3)
        if n_rel:
            def ap(k=None, rel=rel, n_rel=n_rel):  # this query's
                top = rel[:k] if k else rel
                return sum(sum(top[:i]) / i for i in range(1, len(top) + 1) if top[i - 1]) / n_rel

            vals["map"] = ap()
            vals["map@3"] = ap(3)
            vals["mrr"] = next((1.0 / i for i, r in enumerate(rel, 1) if r), 0.0)
            vals["P@3"] = sum(rel[:3]) / 3
            vals["P@10"] = sum(rel[:10]) / 10
            vals["recall@3"] = sum(rel[:3]) / n_rel
            vals["hit_rate@2"] = float(any(rel[:2]))
        out[q] = vals
    return out


def test_reference_by_hand():
    """The reference itself on a case small enough to do on paper."""
    ref = reference({"q": {"a": 2, "b": 0, "c": 1, "z": 1}}, {"q": {"a": 0.1, "b": 0.9, "c": 0.5}})
    # ranking b (0), c (1), a (2); judged z (1) never retrieved; R = 3
    v = ref["q"]
    assert math.isclose(v["ndcg"], (1 / math.log2(3) + 2 / 2) / (2 + 1 / math.log2(3) + 1 / 2))
    assert math.isclose(v["map"], (1 / 2 + 2 / 3) / 3)
    assert v["mrr"] == 0.5 and v["P@3"] == 2 / 3 and v["P@10"] == 0.2 and v["hit_rate@2"] == 1.0
    assert math.isclose(v["recall@3"], 2 / 3)


# ---------------------------------------------------------------------------------------------
# datasets: rows (query, item, label or None, score or None)
# ---------------------------------------------------------------------------------------------

# every query has the same five items, all judged and all ranked (a 2-D array can hold it)
SQUARE = [
    (q, d, lab, sc)
    for q, labels, scores in [
        (0, [3, 0, 1, 0, 2], [0.1, 0.9, 0.8, 0.3, 0.5]),
        (1, [0, 1, 0, 0, 0], [2.0, 1.0, 4.0, 3.0, 5.0]),
        (2, [1, 2, 2, 0, 1], [-1.0, -2.0, -0.5, -3.0, 0.0]),
    ]
    for d, lab, sc in zip(range(5), labels, scores)
]

# every item ranked and judged, lists of different lengths (ragged lists, LETOR files)
RAGGED = [
    (q, d, lab, sc)
    for q, labels, scores in [
        (0, [1, 0, 2], [0.3, 0.2, 0.1]),
        (1, [0, 0, 1, 3, 0, 2], [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]),
        (2, [0, 0, 0, 0], [1.0, 2.0, 3.0, 4.0]),  # nothing relevant: left out of the means
        (3, [4, 0, 1, 1, 0], [0.25, 0.75, 0.5, 1.0, 0.125]),
    ]
    for d, lab, sc in zip(range(len(labels)), labels, scores)
]

# integer query ids, text item ids: unjudged ranked items, judged items never ranked, a negative label (judged,
# not relevant), a fractional label, and a query whose only positive label is below 1
SPARSE = [
    (301, "d1", 2, 12.5), (301, "d2", None, 11.0), (301, "d3", 0, 10.25), (301, "d4", 1, 9.0),
    (301, "d9", 3, None), (301, "d8", -1, 3.0),
    (302, "a", 0, 3.0), (302, "b", 1.5, 2.0), (302, "c", None, 1.0), (302, "e", 1, None),
    (303, "x1", None, 0.9), (303, "x2", 0, 0.8), (303, "x3", 1, 0.7), (303, "x4", 0, 0.6),
    (303, "x5", None, 0.5), (303, "x6", 2, 0.4), (303, "x7", 1, None),
    (304, "m1", 0.5, 2.0), (304, "m2", 0, 1.0),
    (305, "p1", 1, 1.0), (305, "p2", 1, 2.0), (305, "p3", 0, 3.0),
]

DATASETS = {"square": SQUARE, "ragged": RAGGED, "sparse": SPARSE}


def str_ids(rows):
    return [(f"Q{q}", f"doc-{d}", lab, sc) for q, d, lab, sc in rows]


def qrels_of(rows) -> dict:
    out: dict = {}
    for q, d, lab, _ in rows:
        if lab is not None:
            out.setdefault(q, {})[d] = lab
    return out


def run_of(rows) -> dict:
    out: dict = {}
    for q, d, _, sc in rows:
        if sc is not None:
            out.setdefault(q, {})[d] = sc
    return out


def ranks_of(rows) -> dict:
    """(query, item) -> rank, 1 = highest score."""
    out = {}
    for q, docs in run_of(rows).items():
        for i, d in enumerate(sorted(docs, key=lambda d: -docs[d]), 1):
            out[(q, d)] = i
    return out


def queries_in_order(rows) -> list:
    seen: list = []
    for q, *_ in rows:
        if q not in seen:
            seen.append(q)
    return seen


def aligned(rows) -> bool:
    return all(lab is not None and sc is not None for _, _, lab, sc in rows)


def square(rows) -> bool:
    sizes = [sum(1 for r in rows if r[0] == q) for q in queries_in_order(rows)]
    return aligned(rows) and len(set(sizes)) == 1


def shuffled(rows, seed: int = 0):
    order = np.random.default_rng(seed).permutation(len(rows))
    return [rows[i] for i in order]


# ---------------------------------------------------------------------------------------------
# input forms: each returns (judgments, rankings, extra kwargs, positional) where positional
# means queries come back numbered 0..n-1 in order of first appearance
# ---------------------------------------------------------------------------------------------

Form = Callable[[list, Path], tuple]
FORMS: dict[str, tuple[Form, Callable[[list], bool]]] = {}


def form(name: str, needs: Callable[[list], bool] = lambda rows: True):
    def deco(f):
        FORMS[name] = (f, needs)
        return f

    return deco


def _matrix(rows, col: int) -> list[list]:
    return [[r[col] for r in rows if r[0] == q] for q in queries_in_order(rows)]


@form("numpy_2d", square)
def _(rows, tmp):
    return np.array(_matrix(rows, 2), dtype=float), np.array(_matrix(rows, 3)), {}, True


@form("numpy_int_labels", square)
def _(rows, tmp):
    return np.array(_matrix(rows, 2), dtype=np.int64), np.array(_matrix(rows, 3), dtype=np.float32).astype(float), \
        {}, True


@form("ragged_lists", aligned)
def _(rows, tmp):
    return _matrix(rows, 2), _matrix(rows, 3), {}, True


@form("dict")
def _(rows, tmp):
    return qrels_of(rows), run_of(rows), {}, False


def _long(rows, with_rank: bool = False):
    jq, ji, jl = zip(*[(q, d, lab) for q, d, lab, _ in rows if lab is not None])
    ranked = [(q, d, sc) for q, d, _, sc in rows if sc is not None]
    rq, ri, rs = zip(*ranked)
    judg = {"query": list(jq), "doc_id": list(ji), "relevance": list(jl)}
    if with_rank:
        ranks = ranks_of(rows)
        run = {"qid": list(rq), "docno": list(ri), "rank": [ranks[(q, d)] for q, d, _ in ranked]}
    else:
        run = {"qid": list(rq), "docno": list(ri), "score": list(rs)}
    return judg, run


def _one_table(rows):
    return {
        "query_id": [q for q, *_ in rows], "item": [d for _, d, _, _ in rows],
        "label": [lab for _, _, lab, _ in rows], "prediction": [sc for *_, sc in rows],
    }


@form("pandas")
def _(rows, tmp):
    pd = pytest.importorskip("pandas")
    j, r = _long(shuffled(rows))
    return pd.DataFrame(j), pd.DataFrame(r), {}, False


@form("pandas_ranks")
def _(rows, tmp):
    pd = pytest.importorskip("pandas")
    j, r = _long(shuffled(rows, 1), with_rank=True)
    return pd.DataFrame(j), pd.DataFrame(r), {}, False


@form("pandas_one_table")
def _(rows, tmp):
    pd = pytest.importorskip("pandas")
    return pd.DataFrame(_one_table(shuffled(rows, 2))), None, {}, False


@form("pandas_custom_columns")
def _(rows, tmp):
    pd = pytest.importorskip("pandas")
    t = pd.DataFrame(_one_table(rows)).rename(columns={"query_id": "A", "item": "B", "label": "C", "prediction": "D"})
    return t, None, {"query_col": "A", "item_col": "B", "label_col": "C", "score_col": "D"}, False


@form("polars")
def _(rows, tmp):
    pl = pytest.importorskip("polars")
    j, r = _long(shuffled(rows, 3))
    return pl.DataFrame(j, strict=False), pl.DataFrame(r, strict=False), {}, False


@form("polars_one_table")
def _(rows, tmp):
    pl = pytest.importorskip("polars")
    return pl.DataFrame(_one_table(rows), strict=False), None, {}, False


@form("polars_lazy_ranks")
def _(rows, tmp):
    pl = pytest.importorskip("polars")
    j, r = _long(rows, with_rank=True)
    return pl.DataFrame(j, strict=False).lazy(), pl.DataFrame(r, strict=False).lazy(), {}, False


@form("pyarrow")
def _(rows, tmp):
    pa = pytest.importorskip("pyarrow")
    j, r = _long(shuffled(rows, 4))
    return pa.table(j), pa.table(r), {}, False


@form("pyarrow_one_table")
def _(rows, tmp):
    pa = pytest.importorskip("pyarrow")
    return pa.table(_one_table(rows)), None, {}, False


def _arrow_chunks(t, size: int = 3):
    """The table cut into record batches of ``size`` rows: chunk edges fall inside runs of one query."""
    pa = pytest.importorskip("pyarrow")
    return pa.Table.from_batches(t.to_batches(max_chunksize=size))


@form("pyarrow_chunked")
def _(rows, tmp):
    pa = pytest.importorskip("pyarrow")
    j, r = _long(rows)
    return _arrow_chunks(pa.table(j)), _arrow_chunks(pa.table(r), 4), {}, False


@form("pyarrow_chunked_one_table")
def _(rows, tmp):
    pa = pytest.importorskip("pyarrow")
    return _arrow_chunks(pa.table(_one_table(rows))), None, {}, False


def _polars_chunks(df, size: int = 3):
    pl = pytest.importorskip("polars")
    out = pl.concat([df[i:i + size] for i in range(0, df.height, size)], rechunk=False)
    assert out.n_chunks() > 1 or df.height <= size
    return out


@form("polars_chunked")
def _(rows, tmp):
    pl = pytest.importorskip("polars")
    j, r = _long(rows)
    return _polars_chunks(pl.DataFrame(j, strict=False)), _polars_chunks(pl.DataFrame(r, strict=False), 4), {}, False


@form("polars_chunked_one_table")
def _(rows, tmp):
    pl = pytest.importorskip("polars")
    return _polars_chunks(pl.DataFrame(_one_table(rows), strict=False)), None, {}, False


def _write(path: Path, text: str, gz: bool) -> Path:
    if gz:
        path = path.with_name(path.name + ".gz")
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def _trec(rows, tmp, gz):
    qrels = "".join(f"{q} 0 {d} {lab}\n" for q, d, lab, _ in rows if lab is not None)
    ranks = ranks_of(rows)
    run_rows = [(q, d, sc) for q, d, _, sc in shuffled(rows, 5) if sc is not None]
    run = "# a comment line\n" + "".join(f"{q} Q0 {d} {ranks[(q, d)]} {sc!r} tag\n" for q, d, sc in run_rows)
    return _write(tmp / "qrels.txt", qrels, gz), _write(tmp / "run.txt", run, gz), {}, False


@form("trec")
def _(rows, tmp):
    return _trec(rows, tmp, False)


@form("trec_gz")
def _(rows, tmp):
    return _trec(rows, tmp, True)


def _delimited(rows, tmp, sep, ext, gz, with_rank=False):
    j, r = _long(shuffled(rows, 6), with_rank=with_rank)

    def text(cols):
        names = list(cols)
        lines = [sep.join(names)] + [sep.join(str(v) for v in vals) for vals in zip(*cols.values())]
        return "\n".join(lines) + "\n"

    return _write(tmp / f"judgments.{ext}", text(j), gz), _write(tmp / f"run.{ext}", text(r), gz), {}, False


@form("csv")
def _(rows, tmp):
    return _delimited(rows, tmp, ",", "csv", False)


@form("csv_gz")
def _(rows, tmp):
    return _delimited(rows, tmp, ",", "csv", True)


@form("csv_ranks")
def _(rows, tmp):
    return _delimited(rows, tmp, ",", "csv", False, with_rank=True)


@form("tsv")
def _(rows, tmp):
    return _delimited(rows, tmp, "\t", "tsv", False)


@form("tsv_gz")
def _(rows, tmp):
    return _delimited(rows, tmp, "\t", "tsv", True)


@form("csv_one_table")
def _(rows, tmp):
    t = _one_table(rows)
    lines = [",".join(t)] + [",".join("" if v is None else str(v) for v in vals) for vals in zip(*t.values())]
    return _write(tmp / "both.csv", "\n".join(lines) + "\n", False), None, {}, False


@form("parquet")
def _(rows, tmp):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    j, r = _long(shuffled(rows, 7))
    pq.write_table(pa.table(j), tmp / "judgments.parquet")
    pq.write_table(pa.table(r), tmp / "run.parquet")
    return tmp / "judgments.parquet", tmp / "run.parquet", {}, False


@form("parquet_one_table")
def _(rows, tmp):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table(_one_table(rows)), tmp / "both.parquet")
    return str(tmp / "both.parquet"), None, {}, False


def _jsonl(rows, tmp, gz):
    j, r = _long(shuffled(rows, 8))

    def text(cols):
        return "".join(json.dumps(dict(zip(cols, vals))) + "\n" for vals in zip(*cols.values()))

    return _write(tmp / "judgments.jsonl", text(j), gz), _write(tmp / "run.jsonl", text(r), gz), {}, False


@form("jsonl")
def _(rows, tmp):
    return _jsonl(rows, tmp, False)


@form("jsonl_gz")
def _(rows, tmp):
    return _jsonl(rows, tmp, True)


def _json_nested(rows, tmp, gz):
    qrels = {str(q): {str(d): v for d, v in docs.items()} for q, docs in qrels_of(rows).items()}
    run = {str(q): {str(d): v for d, v in docs.items()} for q, docs in run_of(rows).items()}
    return (_write(tmp / "qrels.json", json.dumps(qrels), gz), _write(tmp / "run.json", json.dumps(run), gz), {},
            False)


@form("json_nested")
def _(rows, tmp):
    return _json_nested(rows, tmp, False)


@form("json_nested_gz")
def _(rows, tmp):
    return _json_nested(rows, tmp, True)


@form("json_records")
def _(rows, tmp):
    j, r = _long(shuffled(rows, 9))

    def records(cols):
        return json.dumps([dict(zip(cols, vals)) for vals in zip(*cols.values())])

    return _write(tmp / "j.json", records(j), False), _write(tmp / "r.json", records(r), False), {}, False


def _svm_lines(rows, with_qid: bool) -> str:
    lines = []
    for i, (q, _, lab, _) in enumerate(rows):
        qid = f" qid:{q}" if with_qid else ""
        lines.append(f"{lab}{qid} 1:{i % 7 / 7:.3f} 3:{(i * 3) % 5} # row {i}")
    return "\n".join(lines) + "\n"


def _predictions(rows) -> str:
    return "".join(f"{sc!r}\n" for *_, sc in rows)


@form("svmlight_qid", aligned)
def _(rows, tmp):
    (tmp / "letor.txt").write_text(_svm_lines(rows, True))
    (tmp / "letor.pred").write_text(_predictions(rows))
    return tmp / "letor.txt", tmp / "letor.pred", {}, False


@form("svmlight_qid_gz", aligned)
def _(rows, tmp):
    (tmp / "letor.txt.gz").write_bytes(gzip.compress(_svm_lines(rows, True).encode()))
    (tmp / "letor.pred.gz").write_bytes(gzip.compress(_predictions(rows).encode()))
    return tmp / "letor.txt.gz", tmp / "letor.pred.gz", {}, False


@form("svmlight_query_sidecar", aligned)
def _(rows, tmp):
    sizes = [sum(1 for r in rows if r[0] == q) for q in queries_in_order(rows)]
    (tmp / "rank.test").write_text(_svm_lines(rows, False))
    (tmp / "rank.test.query").write_text("".join(f"{s}\n" for s in sizes))
    (tmp / "rank.test.pred").write_text(_predictions(rows))
    return str(tmp / "rank.test"), str(tmp / "rank.test.pred"), {}, True


@form("svmlight_predictions_array", aligned)
def _(rows, tmp):
    (tmp / "letor.txt").write_text(_svm_lines(rows, True))
    return tmp / "letor.txt", np.array([sc for *_, sc in rows]), {}, False


@form("dict_judgments_trec_run")
def _(rows, tmp):
    # integer ids on one side, text ids read from a file on the other
    _, run, _, _ = _trec(rows, tmp, False)
    return qrels_of(rows), run, {}, False


@form("pandas_judgments_dict_run")
def _(rows, tmp):
    pd = pytest.importorskip("pandas")
    j, _ = _long(rows)
    return pd.DataFrame(j), run_of(rows), {}, False


CASES = [
    pytest.param(ds, ids, name, id=f"{ds}-{ids}-{name}")
    for ds, rows in DATASETS.items()
    for ids in ("int_ids", "str_ids")
    for name, (_, needs) in FORMS.items()
    if needs(rows)
]


def _expected(rows, positional: bool) -> dict:
    ref = reference(qrels_of(rows), run_of(rows))
    if positional:
        return {i: ref[q] for i, q in enumerate(queries_in_order(rows))}
    return {str(q): v for q, v in ref.items()}


def _got(res, positional: bool) -> dict:
    pq = res.per_query_dict()
    return {(int(q) if positional else str(q)): v for q, v in pq.items()}


def _missing_cells(rows, rankings, kwargs):
    """One table holding unjudged and unranked rows (empty cells): read with ``missing="exclude"``, which leaves
    such a row out of that side (refused by default)."""
    if rankings is None and not aligned(rows):
        return {**kwargs, "missing": "exclude"}
    return kwargs


@pytest.mark.parametrize("dataset,ids,name", CASES)
def test_every_form_matches_the_reference(dataset, ids, name, tmp_path):
    rows = DATASETS[dataset] if ids == "int_ids" else str_ids(DATASETS[dataset])
    f, _ = FORMS[name]
    judgments, rankings, kwargs, positional = f(rows, tmp_path)
    kwargs = _missing_cells(rows, rankings, kwargs)
    res = ranklens.evaluate(judgments, rankings, MEASURES, **kwargs)
    if "missing" in kwargs:  # the rows a table left out: counted, by side
        left = {e.reason.name: e.count for e in res.excluded if e.reason.unit == "row"}
        assert left == {"MISSING_LABEL_LEFT_OUT": sum(r[2] is None for r in rows),
                        "MISSING_SCORE_LEFT_OUT": sum(r[3] is None for r in rows)}, left
    expected = _expected(rows, positional)
    got = _got(res, positional)
    # queries whose every measure is left out do not appear in per_query_dict
    assert set(got) == {q for q, v in expected.items() if v}
    for q, vals in expected.items():
        for m in MEASURES:
            if m in vals:
                assert got[q][m] == pytest.approx(vals[m], rel=1e-12, abs=1e-12), (q, m)
            else:
                assert m not in got.get(q, {}), (q, m)
    # the means are the means of the counted queries
    for m in MEASURES:
        vals = [v[m] for v in expected.values() if m in v]
        assert res.counted[m] == len(vals)
        assert res[m] == pytest.approx(sum(vals) / len(vals), rel=1e-12)


@pytest.mark.parametrize("dataset", list(DATASETS))
def test_forms_agree_bit_for_bit(dataset, tmp_path):
    """No form is 'close enough': every form gives exactly the floats of the dict form."""
    rows = DATASETS[dataset]
    base = None
    for name, (f, needs) in FORMS.items():
        if not needs(rows):
            continue
        sub = tmp_path / name
        sub.mkdir()
        judgments, rankings, kwargs, positional = f(rows, sub)
        res = ranklens.evaluate(judgments, rankings, MEASURES, **_missing_cells(rows, rankings, kwargs))
        order = list(range(len(queries_in_order(rows)))) if positional else [str(q) for q in queries_in_order(rows)]
        pq = _got(res, positional)
        table = [[pq.get(q, {}).get(m) for m in MEASURES] for q in order]
        if base is None:
            base = table
        assert table == base, name


def test_sklearn_dropin_matches_evaluate_on_square_data():
    y_true = np.array(_matrix(SQUARE, 2), dtype=float)
    y_score = np.array(_matrix(SQUARE, 3))
    per_query = ranklens.evaluate(y_true, y_score, ["ndcg", "ndcg@3"], convention="sklearn").per_query_dict()
    assert ranklens.ndcg_score(y_true, y_score) == pytest.approx(np.mean([v["ndcg"] for v in per_query.values()]))
    assert ranklens.ndcg_score(y_true, y_score, k=3) == pytest.approx(
        np.mean([v["ndcg@3"] for v in per_query.values()]))
    ref = reference(qrels_of(SQUARE), run_of(SQUARE))
    assert ranklens.ndcg_score(y_true, y_score) == pytest.approx(np.mean([v["ndcg"] for v in ref.values()]))


def test_cli_reads_the_same_files(tmp_path):
    """The command line on TREC files prints the reference values."""
    import subprocess
    import sys

    rows = str_ids(SPARSE)
    qrels, run, _, _ = _trec(rows, tmp_path, True)
    out = subprocess.run(
        [sys.executable, "-c", "from ranklens.cli import main; main()", "eval", str(qrels), str(run),
         "-m", "ndcg@3", "-m", "map", "-f", "json", "--per-query"],
        capture_output=True, text=True, check=True,
    ).stdout
    payload = json.loads(out)
    ref = _expected(rows, False)
    for q, vals in payload["per_query"].items():
        assert vals["ndcg@3"] == pytest.approx(ref[q]["ndcg@3"], rel=1e-12)
        if "map" in ref[q]:
            assert vals["map"] == pytest.approx(ref[q]["map"], rel=1e-12)


# ---------------------------------------------------------------------------------------------
# ids in text tables, format detection
# ---------------------------------------------------------------------------------------------


def test_text_table_ids_are_kept_as_written(tmp_path):
    """'001' keeps its zeros, 'NA' and '1e5' stay ids (not null, not a float): they must match the qrels."""
    (tmp_path / "qrels.txt").write_text("001 0 NA 1\n001 0 1e5 0\n001 0 007 2\n002 0 x 1\n")
    rows = [("001", "NA", 2.0), ("001", "1e5", 3.0), ("001", "007", 1.0), ("002", "x", 1.0)]
    ref = reference({"001": {"NA": 1, "1e5": 0, "007": 2}, "002": {"x": 1}},
                    {"001": {"NA": 2.0, "1e5": 3.0, "007": 1.0}, "002": {"x": 1.0}})
    for sep, ext in ((",", "csv"), ("\t", "tsv")):
        run = tmp_path / f"run.{ext}"
        run.write_text(sep.join(["qid", "docno", "score"]) + "\n" + "".join(
            sep.join([q, d, str(s)]) + "\n" for q, d, s in rows))
        res = ranklens.evaluate(tmp_path / "qrels.txt", run, ["ndcg", "mrr"])
        assert res.excluded == []
        got = res.per_query_dict()
        assert set(got) == {"001", "002"}
        for q in got:
            assert got[q]["ndcg"] == pytest.approx(ref[q]["ndcg"], rel=1e-12)
            assert got[q]["mrr"] == ref[q]["mrr"]


def test_integer_ids_in_text_tables_stay_integers(tmp_path):
    (tmp_path / "both.csv").write_text("query,item,relevance,score\n1,10,1,0.5\n1,11,0,0.7\n2,10,2,0.1\n")
    res = ranklens.evaluate(tmp_path / "both.csv", measures=["mrr"])
    assert res.per_query_dict() == {1: {"mrr": 0.5}, 2: {"mrr": 1.0}}
    same = ranklens.evaluate({1: {10: 1, 11: 0}, 2: {10: 2}}, {1: {10: 0.5, 11: 0.7}, 2: {10: 0.1}}, ["mrr"])
    assert same.per_query_dict() == res.per_query_dict()


@pytest.mark.parametrize("sep", [",", "\t"])
def test_tables_without_extension_are_detected(tmp_path, sep):
    # a header with four names looks like a TREC line; its non-numeric fields tell it apart
    text = sep.join(["query id", "item id", "rank", "relevance score"]) + "\n"
    text += "".join(sep.join(r) + "\n" for r in [("q", "a", "2", "1"), ("q", "b", "1", "0"), ("q", "c", "3", "2")])
    (tmp_path / "table").write_text(text)
    res = ranklens.evaluate(tmp_path / "table", measures=["dcg"], query_col="query id", item_col="item id",
                            rank_col="rank", label_col="relevance score")
    assert res["dcg"] == pytest.approx(0 + 1 / math.log2(3) + 2 / math.log2(4), rel=1e-12)


def test_letor_group_file_beside_the_data(tmp_path):
    """``rank.train`` + ``rank.query`` (with_suffix) works like ``rank.train.query``."""
    rows = RAGGED
    sizes = [sum(1 for r in rows if r[0] == q) for q in queries_in_order(rows)]
    (tmp_path / "rank.train").write_text(_svm_lines(rows, False))
    (tmp_path / "rank.query").write_text("\n".join(map(str, sizes)) + "\n")
    (tmp_path / "rank.train.pred").write_text(_predictions(rows))
    res = ranklens.evaluate(tmp_path / "rank.train", tmp_path / "rank.train.pred", MEASURES)
    expected = _expected(rows, True)
    for q, vals in _got(res, True).items():
        for m, v in vals.items():
            assert v == pytest.approx(expected[q][m], rel=1e-12, abs=1e-12)
