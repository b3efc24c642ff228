"""ranklens.spark against the local engine (itself tested against the peers), the seeds and real data.

Spark runs in local mode (``local[2]``); one session for the module. Every comparison is at 1e-12
with :func:`ranklens.evaluate` on the same rows, for every preset of ``ranklens.CONVENTIONS`` and
every measure family it supports; a convention that refuses the data locally must refuse it on
Spark with the same error. Small ``rows_per_call`` values force queries to straddle Arrow batches.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import ranklens
from ranklens import spark as rs
from ranklens.errors import EmptyQueryError, InputError, InvalidParameterError, MissingDependencyError

pytestmark = pytest.mark.spark

DATA = Path(__file__).parent / "data"
TOL = 1e-12

ALL = ["ndcg@5", "ndcg", "dcg@5", "idcg@5", "map", "map@10", "mrr@5", "P@3", "recall@10", "hit_rate@5", "err@5",
       "r_precision", "num_ret", "num_rel", "num_rel_ret", "ndcg@3(gain=exponential)", "recall@10(rel=2)",
       # #22: the cited measures (each where the convention defines it)
       "bpref", "infAP", "judged@5", "rbp(p=0.9)", "f1@5", "set_F", "iprec_at_recall_0.50", "11pt_avg", "gm_map",
       "auc@5", "gauc"]
NDCG_ONLY = ["ndcg@3", "ndcg@2", "dcg@3", "idcg@2"]


def defined(ms: list[str], conv: str, **kw: object) -> list[str]:
    """The measures of ``ms`` that ``conv`` defines (a preset refuses those its peer has not, since #18), less
    those it defines on binary labels only (the generated labels are graded)."""
    from ranklens._core.plan import make_plan
    from ranklens.measures import definition, parse_measure

    c = ranklens.get_convention(conv, **kw)
    out = []
    for m in ms:
        try:
            make_plan(c, [m])
        except InvalidParameterError:
            continue
        if not getattr(definition(parse_measure(m)[0], c), "binary_labels", False):
            out.append(m)
    return out


def measures_for(conv: str) -> list[str]:
    return defined(NDCG_ONLY if ranklens.CONVENTIONS[conv].ties == "shared_rank" else ALL, conv)


@pytest.fixture(scope="module")
def spark():
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    s = rs.session("local[2]", app_name="ranklens-tests", spark_ui_enabled="false",
                   spark_sql_shuffle_partitions="3", spark_default_parallelism="2", spark_sql_adaptive_enabled="false",
                   spark_sql_session_timeZone="UTC")
    s.sparkContext.setLogLevel("OFF")
    yield s
    s.stop()


# ---------------------------------------------------------------------------------------------
# generated data: ties, variable lengths, queries without relevant items, one-sided queries
# ---------------------------------------------------------------------------------------------


def generate(seed: int = 7, n_q: int = 60, str_ids: bool = True) -> tuple[pa.Table, pa.Table]:
    rng = np.random.default_rng(seed)
    rq, ri, rs_, jq, ji, jl = [], [], [], [], [], []
    for q in range(n_q):
        qid = f"q{q:03d}" if str_ids else 1000 - 7 * q
        n = int(rng.integers(2, 25))  # variable length (>= 2: scikit-learn's minimum)
        items = rng.choice(60, size=n, replace=False)
        scores = rng.integers(0, 6, size=n).astype(float)  # many ties
        kind = q % 10
        if kind != 9:  # q % 10 == 9: judged only
            rq += [qid] * n
            ri += [f"d{i}" if str_ids else int(i) for i in items]
            rs_ += list(scores)
        if kind == 8:  # ranked only
            continue
        judged = rng.choice(60, size=int(rng.integers(1, 20)), replace=False)
        labels = rng.integers(0, 4, size=judged.size)
        if kind == 3:  # judged, none relevant
            labels[:] = 0
        jq += [qid] * judged.size
        ji += [f"d{i}" if str_ids else int(i) for i in judged]
        jl += list(labels.astype(float))
    runs = pa.table({"query": rq, "item": ri, "score": rs_})
    qrels = pa.table({"query": jq, "item": ji, "relevance": jl})
    return runs, qrels


def both_sides_only(runs: pa.Table, qrels: pa.Table) -> tuple[pa.Table, pa.Table]:
    import pyarrow.compute as pc

    common = pc.unique(runs["query"]).filter(pc.is_in(pc.unique(runs["query"]), pc.unique(qrels["query"])))
    return runs.filter(pc.is_in(runs["query"], common)), qrels.filter(pc.is_in(qrels["query"], common))


def local_or_error(*args, **kw):
    try:
        return ranklens.evaluate(*args, **kw), None
    except ranklens.RanklensError as exc:
        return None, exc


def assert_same_result(local: ranklens.Result, got: ranklens.Result) -> None:
    assert set(local.aggregate) == set(got.aggregate)
    for k, v in local.aggregate.items():
        g = got.aggregate[k]
        assert (math.isnan(v) and math.isnan(g)) or abs(v - g) <= TOL, (k, v, g)
    assert local.counted == got.counted
    # queries left out: the same, with the same examples; rows left out (missing="exclude"): the same numbers (the
    # examples are the first rows of each chunk, not the first of the whole input)
    assert [str(e) if e.reason.unit == "query" else (e.reason, e.count) for e in local.excluded] == [
        str(e) if e.reason.unit == "query" else (e.reason, e.count) for e in got.excluded]
    assert [e.measures for e in local.excluded] == [e.measures for e in got.excluded]


def assert_same_per_query(local: ranklens.Result, df, query_col: str = "query", group: tuple = ()) -> None:
    rows = df.collect()
    keys = local.keys
    got = {r[query_col]: r for r in rows}
    assert len(rows) == len(got) == len(local.queries), (len(rows), len(local.queries))
    for qi, q in enumerate(local.queries):
        r = got[q.item() if isinstance(q, np.generic) else q]
        for c, k in enumerate(keys):
            v = local.values[qi, c]
            if math.isnan(v):
                assert r[k] is None, (q, k, r[k])
            else:
                assert r[k] is not None and abs(r[k] - v) <= TOL, (q, k, r[k], v)


@pytest.fixture(scope="module")
def generated(spark):
    runs, qrels = generate()
    runs2, qrels2 = both_sides_only(runs, qrels)
    return {
        "mixed": (runs, qrels, spark.createDataFrame(runs), spark.createDataFrame(qrels)),
        "both": (runs2, qrels2, spark.createDataFrame(runs2), spark.createDataFrame(qrels2)),
    }


AGG_CASES = [(c, "mixed") for c in ranklens.CONVENTIONS] + [("ranx", "both"), ("trec_eval10", "both")]


@pytest.mark.parametrize("conv,data", AGG_CASES, ids=[f"{c}-{d}" for c, d in AGG_CASES])
def test_every_convention_aggregates(generated, conv, data):
    runs, qrels, rdf, jdf = generated[data]
    ms = measures_for(conv)
    local, err = local_or_error(qrels, runs, ms, convention=conv)
    if err is not None:
        with pytest.raises(type(err)) as info:
            rs.evaluate(jdf, rdf, ms, convention=conv, rows_per_call=37)
        assert str(info.value) == str(err)
        return
    got = rs.evaluate(jdf, rdf, ms, convention=conv, rows_per_call=37)
    assert_same_result(local, got)


@pytest.mark.parametrize("conv", ["ranklens", "trec_eval", "ir_measures", "ranx"])
def test_one_query_per_chunk(generated, conv):
    """rows_per_call=1: every chunk is one query, so a query judged but not ranked (or ranked but not
    judged) is a chunk with no ranked (or no judged) row, and a chunk may evaluate no query at all."""
    runs, qrels, rdf, jdf = generated["mixed" if conv != "ranx" else "both"]
    ms = measures_for(conv)
    local = ranklens.evaluate(qrels, runs, ms, convention=conv)
    assert_same_result(local, rs.evaluate(jdf, rdf, ms, convention=conv, rows_per_call=1))
    assert_same_per_query(local, rs.evaluate(jdf, rdf, ms, convention=conv, per_query=True, rows_per_call=1))


#: ndeval's preset has only the diversity measures, which read judgments per subtopic: Spark refuses them (as
#: every route without subtopics), so it has no kernel measure to compare here
PQ_CASES = [(c, "both") for c in ranklens.CONVENTIONS if c != "ndeval"] + [("ir_measures", "mixed"),
                                                                          ("ranklens", "mixed")]


@pytest.mark.parametrize("conv,data", PQ_CASES, ids=[f"{c}-{d}" for c, d in PQ_CASES])
def test_every_convention_per_query(generated, conv, data):
    """Per-query values; on "mixed", judged-only queries that the convention scores are rows too."""
    runs, qrels, rdf, jdf = generated[data]
    ms = measures_for(conv)
    local = ranklens.evaluate(qrels, runs, ms, convention=conv)
    assert_same_per_query(local, rs.evaluate(jdf, rdf, ms, convention=conv, per_query=True, rows_per_call=50))


def test_integer_ids_one_table_and_rank_column(spark):
    """Integer ids; one table with labels and scores (with missing="exclude": a null label is unjudged, a null
    score judged only, the rows counted as locally); ranks."""
    runs, qrels = generate(seed=3, n_q=40, str_ids=False)
    import pyarrow.compute as pc

    # one table: the rankings' rows with their labels (null when unjudged) + judged-only rows (null score)
    rk = runs.to_pylist()
    jd = {(r["query"], r["item"]): r["relevance"] for r in qrels.to_pylist()}
    ranked_keys = {(r["query"], r["item"]) for r in rk}
    rows = [dict(r, relevance=jd.get((r["query"], r["item"]))) for r in rk]
    rows += [{"query": q, "item": i, "score": None, "relevance": v} for (q, i), v in jd.items()
             if (q, i) not in ranked_keys]
    one = pa.Table.from_pylist(rows)
    for conv in ("ranklens", "trec_eval", "lightgbm"):
        local = ranklens.evaluate(one, None, defined(ALL, conv), convention=conv, missing="exclude")
        got = rs.evaluate(spark.createDataFrame(one), None, defined(ALL, conv), convention=conv, rows_per_call=29,
                          missing="exclude")
        assert_same_result(local, got)
        left = {e.reason.name: e.count for e in got.excluded if e.reason.unit == "row"}
        assert left == {"MISSING_LABEL_LEFT_OUT": sum(r["relevance"] is None for r in rows),
                        "MISSING_SCORE_LEFT_OUT": sum(r["score"] is None for r in rows)}, left
    with pytest.raises(ranklens.InputError, match="is missing"):  # refused by default, as locally
        rs.evaluate(spark.createDataFrame(one), None, ["ndcg"])
    # ranks instead of scores (rank 1 best), ties impossible: input order of ranks
    order = pc.sort_indices(runs, [("query", "ascending"), ("score", "descending")])
    ranked = runs.take(order)
    ranks = np.concatenate([np.arange(1, n + 1) for n in
                            np.unique(np.asarray(ranked["query"]), return_counts=True)[1][
                                np.argsort(np.unique(np.asarray(ranked["query"]), return_index=True)[1])]])
    rtab = pa.table({"query": ranked["query"], "item": ranked["item"], "rank": ranks})
    # judgments with float query ids (1000.0...), rankings with integer ones: matched as locally
    fq = qrels.set_column(0, "query", pc.cast(qrels["query"], pa.float64()))
    trec = defined(ALL, "trec_eval")
    local = ranklens.evaluate(fq, rtab, trec, convention="trec_eval")
    assert_same_result(local, rs.evaluate(spark.createDataFrame(fq), spark.createDataFrame(rtab), trec,
                                          convention="trec_eval"))


# ---------------------------------------------------------------------------------------------
# the seeds: groups x, y, z (by hand)
# ---------------------------------------------------------------------------------------------


def test_seed_groups_by_hand(spark):
    gains = {"x": [0, 0, 1, 1, 1], "y": [1, 0, 1, 0, 1], "z": [1, 0, 0, 0, 0]}
    rows = [(q, f"{q}{i}", float(5 - i), g) for q, gs in gains.items() for i, g in enumerate(gs)]
    df = spark.createDataFrame(rows, ["search_group_id", "item_id", "score", "gains"])

    def ndcg(g):  # the definition, written out: sum g_i / log2(i + 1) over the ideal order
        dcg = sum(v / math.log2(i + 2) for i, v in enumerate(g))
        return dcg / sum(v / math.log2(i + 2) for i, v in enumerate(sorted(g, reverse=True)))

    hand = {q: ndcg(g) for q, g in gains.items()}
    # the seed's printed values (5 decimals, truncated)
    assert all(abs(hand[q] - v) <= 1e-5 for q, v in zip("xyz", [0.61828, 0.88546, 1.0]))
    per_q = rs.evaluate(df, measures=["ndcg"], per_query=True, query_col="search_group_id", label_col="gains")
    got = {r["search_group_id"]: r["ndcg"] for r in per_q.collect()}
    assert set(got) == set("xyz")
    for q in "xyz":
        assert abs(got[q] - hand[q]) <= TOL
    res = rs.evaluate(df, measures=["ndcg"], query_col="search_group_id", label_col="gains")
    assert abs(res["ndcg"] - 0.83458) <= 1e-5
    assert abs(res["ndcg"] - sum(hand.values()) / 3) <= TOL
    assert res.counted == {"ndcg": 3} and res.excluded == []
    # the one table given by name as `run=`: the same table, the same numbers
    alone = rs.evaluate(run=df, measures=["ndcg"], query_col="search_group_id", label_col="gains")
    assert alone["ndcg"] == res["ndcg"] and alone.counted == res.counted


# ---------------------------------------------------------------------------------------------
# groups (monitoring: date, model version, slice)
# ---------------------------------------------------------------------------------------------


def _with_day(runs: pa.Table, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    q = np.asarray(runs["query"].to_pylist(), dtype=object)
    uq = np.unique(q)
    day_of = dict(zip(uq, rng.integers(0, 3, size=uq.size)))
    return runs.append_column("day", pa.array([f"2026-11-{20 + day_of[x]:02d}" for x in q]))


def test_group_by_judgments_without_group_columns(spark):
    runs, qrels = generate(seed=11, n_q=80)
    runs = _with_day(runs, 1)
    # the same query ranked on two days by two models: groups are (day, model)
    runs = pa.concat_tables([runs.append_column("model", pa.array(["a"] * runs.num_rows)),
                             _with_day(runs.drop(["day"]), 2).append_column("model", pa.array(["b"] * runs.num_rows))])
    rdf, jdf = spark.createDataFrame(runs), spark.createDataFrame(qrels)
    for conv in ("ranklens", "trec_eval", "lightgbm"):
        ms = defined(["ndcg@5", "map", "err@5", "num_rel", "mrr@5", "map@5"], conv)
        agg = {(r["day"], r["model"]): r for r in
               rs.evaluate(jdf, rdf, ms, convention=conv, group_by=["day", "model"], rows_per_call=41).collect()}
        per_q = rs.evaluate(jdf, rdf, ms, convention=conv, group_by=["day", "model"], per_query=True).collect()
        import pyarrow.compute as pc

        keys = sorted({(d, m) for d, m in zip(runs["day"].to_pylist(), runs["model"].to_pylist())})
        assert sorted(agg) == keys
        for d, m in keys:
            part = runs.filter(pc.and_(pc.equal(runs["day"], d), pc.equal(runs["model"], m)))
            jpart = qrels.filter(pc.is_in(qrels["query"], pc.unique(part["query"])))
            local = ranklens.evaluate(jpart, part.drop(["day", "model"]), ms, convention=conv)
            row = agg[(d, m)]
            assert row["queries"] == len(local.queries)
            for k in local.keys:
                v = local.aggregate[k]
                assert (math.isnan(v) and row[k] is None) or abs(row[k] - v) <= TOL, (conv, d, m, k, row[k], v)
                assert row[f"queries:{k}"] == local.counted[k]
            mine = [r for r in per_q if (r["day"], r["model"]) == (d, m)]
            got = {r["query"]: r for r in mine}
            assert len(got) == len(mine) == len(local.queries)
            for qi, q in enumerate(local.queries):
                for c, k in enumerate(local.keys):
                    v = local.values[qi, c]
                    g = got[q][k]
                    assert (math.isnan(v) and g is None) or abs(g - v) <= TOL, (conv, q, k, g, v)


def test_group_without_counted_queries(spark):
    """A group whose only query has no relevant item: skipped (null, NaN locally) or scored 1 (XGBoost)."""
    rows = [("d1", "q1", "a", 2.0, 0.0), ("d1", "q1", "b", 1.0, 0.0),
            ("d2", "q2", "c", 2.0, 1.0), ("d2", "q2", "d", 1.0, 0.0)]
    df = spark.createDataFrame(rows, ["day", "query", "item", "score", "relevance"])
    got = {r["day"]: r for r in rs.evaluate(df, None, ["ndcg@2", "num_rel"], group_by="day").collect()}
    assert got["d1"]["ndcg@2"] is None and got["d1"]["queries:ndcg@2"] == 0 and got["d1"]["queries"] == 1
    assert got["d1"]["num_rel"] == 0 and got["d2"]["ndcg@2"] == 1.0 and got["d2"]["num_rel"] == 1
    local = ranklens.evaluate(pa.table({"query": ["q1", "q1"], "item": ["a", "b"], "score": [2.0, 1.0],
                                        "relevance": [0.0, 0.0]}), None, ["ndcg@2"])
    assert math.isnan(local["ndcg@2"]) and local.counted["ndcg@2"] == 0
    got = {r["day"]: r for r in rs.evaluate(df, None, ["ndcg@2"], group_by="day", convention="xgboost").collect()}
    assert got["d1"]["ndcg@2"] == 1.0 and got["d1"]["queries:ndcg@2"] == 1


def test_group_by_with_group_columns_in_judgments(spark):
    """Judgments that carry the group column: a group's judged-only queries belong to it."""
    runs, qrels = generate(seed=5, n_q=50)
    runs = _with_day(runs, 4)
    day_of = dict(zip(runs["query"].to_pylist(), runs["day"].to_pylist()))
    qrels = qrels.append_column("day", pa.array([day_of.get(q, "2026-11-22") for q in qrels["query"].to_pylist()]))
    import pyarrow.compute as pc

    for conv in ("ir_measures", "trec_eval"):
        ms = defined(["ndcg@5", "recall@10", "err@5"], conv)
        res = {r["day"]: r for r in rs.evaluate(spark.createDataFrame(qrels), spark.createDataFrame(runs), ms,
                                                convention=conv, group_by="day").collect()}
        days = sorted(set(qrels["day"].to_pylist()) | set(runs["day"].to_pylist()))
        for d in days:
            jpart = qrels.filter(pc.equal(qrels["day"], d)).drop(["day"])
            part = runs.filter(pc.equal(runs["day"], d)).drop(["day"])
            if part.num_rows == 0:
                assert d not in res  # nothing ranked that day: no group (ranked rows define the groups)
                continue
            local = ranklens.evaluate(jpart, part, ms, convention=conv)
            assert res[d]["queries"] == len(local.queries)
            for k in ms:
                assert abs(res[d][k] - local[k]) <= TOL


# ---------------------------------------------------------------------------------------------
# real data: TREC DL 2019 passage runs, LightGBM's lambdarank sample
# ---------------------------------------------------------------------------------------------


def _arrow(j: ranklens.Judgments | None, r: ranklens.Rankings | None) -> pa.Table:
    from ranklens._input.ids import ids_to_numpy

    if r is None:
        return pa.table({"query": ids_to_numpy(j.qid).tolist(), "item": ids_to_numpy(j.item).tolist(),
                         "relevance": j.label})
    return pa.table({"query": ids_to_numpy(r.qid).tolist(), "item": ids_to_numpy(r.item).tolist(), "score": r.score})


def test_trec_dl_2019(spark):
    retriever = "BM25"
    dl = DATA / "trec-dl-passage"
    qrels_path, run_path = dl / "qrels.dl19-passage.txt.gz", dl / f"run.rank_llm.{retriever}.dl19.txt.gz"
    qrels = _arrow(ranklens.read_judgments(qrels_path), None)
    runs = _arrow(None, ranklens.read_rankings(run_path))
    rdf, jdf = spark.createDataFrame(runs), spark.createDataFrame(qrels)
    ms = ["ndcg_cut.10", "ndcg_cut.100", "P.10", "recip_rank", "map@100(rel=2)", "recall@100(rel=2)", "err@10",
          "ndcg", "num_rel_ret"]
    for conv, kw in (("trec_eval", {"queries": "judged"}), ("trec_eval", {}), ("ranklens", {})):
        local = ranklens.evaluate(qrels_path, run_path, defined(ms, conv, **kw), convention=conv, **kw)
        got = rs.evaluate(jdf, rdf, defined(ms, conv, **kw), convention=conv, **kw)
        assert_same_result(local, got)
        if kw:
            # Anserini's published values (tests/data/trec-dl-passage/SOURCE.md): trec_eval -c, 4 decimals
            assert abs(got["ndcg_cut.10"] - 0.5058) <= 5e-5 and abs(got["recall@100(rel=2)"] - 0.4910) <= 5e-5
            assert got.counted["ndcg_cut.10"] == 43
    ms = defined(ms, "ir_measures")
    per_q = rs.evaluate(jdf, rdf, ms, convention="ir_measures", per_query=True)
    assert_same_per_query(ranklens.evaluate(qrels_path, run_path, ms, convention="ir_measures"), per_q)


def test_lightgbm_lambdarank_sample(spark):
    lgb = DATA / "lightgbm-lambdarank"
    j = ranklens.read_judgments(lgb / "rank.test.gz")
    r = ranklens.read_rankings(lgb / "rank.test.pred")
    from ranklens._input.ids import ids_to_numpy

    one = pa.table({"query": ids_to_numpy(j.qid), "item": ids_to_numpy(j.item), "relevance": j.label, "score": r.score})
    df = spark.createDataFrame(one)
    ms = ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map", "mrr@10", "err@10"]
    for conv, kw in (("lightgbm", {}), ("sklearn", {"min_items": 1}), ("catboost", {})):
        cms = defined(ms + ["map@10"], conv, **kw)
        local = ranklens.evaluate(lgb / "rank.test.gz", lgb / "rank.test.pred", cms, convention=conv, **kw)
        assert_same_result(local, rs.evaluate(df, None, cms, convention=conv, **kw))
    # LightGBM's own value (tests/data/lightgbm-lambdarank/expected_ndcg.tsv, EXPECTED.md section 2)
    got = rs.evaluate(df, None, ["ndcg@10"], convention="lightgbm")
    assert abs(got["ndcg@10"] - 0.7477712744462751) <= TOL and got.counted["ndcg@10"] == 50


# ---------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------


def test_errors_come_back_as_ranklens_errors(spark):
    dup = spark.createDataFrame([("q", "a", 1.0, 1), ("q", "a", 2.0, 0), ("r", "b", 1.0, 1)],
                                ["query", "item", "score", "relevance"])
    with pytest.raises(InputError, match=r"duplicate .* \(query q item a\)"):  # the query by its id
        rs.evaluate(dup, measures=["ndcg"])
    ok = spark.createDataFrame([("q", "a", 1.0, 0), ("q", "b", 2.0, 0)], ["query", "item", "score", "relevance"])
    with pytest.raises(EmptyQueryError, match=r"no relevant item for 'ndcg' \(q\)"):
        rs.evaluate(ok, measures=["ndcg"], empty="error")
    with pytest.raises(InvalidParameterError, match="beyond the deepest rank"):
        rs.evaluate(ok, measures=["ndcg@5"], convention="evidently", empty=0.0)
    with pytest.raises(InvalidParameterError, match="beyond the deepest rank"):
        rs.evaluate(ok, measures=["ndcg@5"], convention="evidently", empty=0.0, per_query=True)
    with pytest.raises(InvalidParameterError, match="group_by"):
        rs.evaluate(ok, measures=["ndcg"], group_by=["nope"])
    with pytest.raises(InvalidParameterError, match="score or rank"):
        rs.evaluate(ok.drop("score"), measures=["ndcg"])
    with pytest.raises(InvalidParameterError, match="`judgments` must be a pyspark DataFrame"):
        rs.evaluate(ok.toPandas(), measures=["ndcg"])
    with pytest.raises(InvalidParameterError, match="`run` must be a pyspark DataFrame; got DataFrame"):
        rs.evaluate(ok, ok.toPandas(), measures=["ndcg"])
    with pytest.raises(InvalidParameterError, match="weights"):
        rs.evaluate(ok, measures=["ndcg"], weights={"q": 1.0})


def test_without_pyspark_the_error_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark", None)  # import pyspark -> ImportError

    class FakeDF:  # passes the type check, so the import is what fails
        pass

    FakeDF.__module__ = "pyspark.sql.dataframe"
    FakeDF.__name__ = "DataFrame"
    with pytest.raises(MissingDependencyError, match=r"pip install 'ranklens\[spark\]'"):
        rs.evaluate(FakeDF(), measures=["ndcg"])
    with pytest.raises(MissingDependencyError, match="pyspark"):
        rs.session()


# ---------------------------------------------------------------------------------------------
# command line, and the monitoring store fed from Spark
# ---------------------------------------------------------------------------------------------


def _seed_table() -> pa.Table:
    gains = {"x": [0, 0, 1, 1, 1], "y": [1, 0, 1, 0, 1], "z": [1, 0, 0, 0, 0]}
    rows = [(q, f"{q}{i}", float(5 - i), float(g)) for q, gs in gains.items() for i, g in enumerate(gs)]
    return pa.table({"query": [r[0] for r in rows], "item": [r[1] for r in rows], "score": [r[2] for r in rows],
                     "relevance": [r[3] for r in rows], "day": ["d1"] * 10 + ["d2"] * 5})


def test_cli_engine_spark_matches_local(spark, tmp_path):
    import json

    import pyarrow.parquet as pq
    from click.testing import CliRunner

    from ranklens.cli import cli

    runs, qrels = generate(seed=2, n_q=30)
    pq.write_table(runs, tmp_path / "run.parquet")
    pq.write_table(qrels, tmp_path / "qrels.parquet")
    base = ["eval", str(tmp_path / "qrels.parquet"), str(tmp_path / "run.parquet"), "-m", "ndcg@10", "-m", "map",
            "-m", "recall@5", "-c", "trec_eval", "-f", "json", "--per-query"]
    local = CliRunner().invoke(cli, base)
    got = CliRunner().invoke(cli, base + ["--engine", "spark"])
    assert local.exit_code == 0 and got.exit_code == 0, (local.output, got.output)
    a, b = json.loads(local.output), json.loads(got.output)
    assert a["counted"] == b["counted"] and a["excluded"] == b["excluded"]
    for k, v in a["aggregate"].items():
        assert abs(b["aggregate"][k] - v) <= TOL
    assert a["per_query"].keys() == b["per_query"].keys()
    for q, row in a["per_query"].items():
        for k, v in row.items():
            assert abs(b["per_query"][q][k] - v) <= TOL
    # groups, written as Parquet
    pq.write_table(_seed_table(), tmp_path / "seed.parquet")
    out = CliRunner().invoke(cli, ["eval", str(tmp_path / "seed.parquet"), "-m", "ndcg", "--engine", "spark",
                                   "--group-by", "day", "--output", str(tmp_path / "by_day")])
    assert out.exit_code == 0, out.output
    t = pq.read_table(tmp_path / "by_day").sort_by("day").to_pylist()
    hand_x, hand_y = 1.3175293 / 2.1309297, 1.8868528 / 2.1309297  # the seed's DCG / IDCG (x, y), 7 digits
    assert [r["day"] for r in t] == ["d1", "d2"] and [r["queries"] for r in t] == [2, 1]
    assert abs(t[0]["ndcg"] - (hand_x + hand_y) / 2) <= 1e-6 and t[1]["ndcg"] == 1.0
    # errors: one line, exit 2
    bad = CliRunner().invoke(cli, ["eval", str(tmp_path / "missing.parquet"), "--engine", "spark"])
    assert bad.exit_code == 2 and bad.output.startswith("ranklens: error: spark: ") and bad.output.count("\n") == 1
    bad = CliRunner().invoke(cli, ["eval", str(tmp_path / "seed.parquet"), "--output", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "--engine spark" in bad.output
    # the local engine groups too (issue #33 point 5): the same values per day
    local = CliRunner().invoke(cli, ["eval", str(tmp_path / "seed.parquet"), "-m", "ndcg", "--group-by", "day",
                                     "-f", "json"])
    assert local.exit_code == 0, local.output
    days = json.loads(local.output)["runs"]
    assert abs(days["d1"]["aggregate"]["ndcg"] - (hand_x + hand_y) / 2) <= 1e-6
    assert days["d2"]["aggregate"]["ndcg"] == 1.0


def test_per_query_results_into_the_monitoring_store(spark, tmp_path):
    """Per-query values computed on Spark, written as Parquet, ingested by the store, reported per day."""
    pytest.importorskip("duckdb")  # the monitor extra; installed with the test extra
    from ranklens.monitor.store import Store

    t = _seed_table()
    n = t.num_rows
    days = {"d1": "2026-11-20T10:00:00", "d2": "2026-11-21T10:00:00"}
    logs = pa.table({"group_id": t["query"], "item": t["item"], "score": t["score"], "relevance": t["relevance"],
                     "timestamp": [days[d] for d in t["day"].to_pylist()], "model": ["ranker"] * n,
                     "model_version": ["v1"] * n, "environment": ["production"] * n,
                     "country": ["US"] * 10 + ["BR"] * 5})
    df = spark.createDataFrame(logs).withColumn("timestamp", __import__("pyspark.sql.functions", fromlist=["x"])
                                                .to_timestamp("timestamp"))
    per_q = rs.evaluate(df, measures=["ndcg@10", "mrr@10"], per_query=True, query_col="group_id",
                        group_by=["timestamp", "model", "model_version", "environment", "country"])
    assert per_q.columns == ["timestamp", "model", "model_version", "environment", "country", "group_id",
                             "ndcg@10", "mrr@10"]
    per_q.write.parquet(str(tmp_path / "per_query"))
    st = Store(tmp_path / "m.duckdb")
    s = st.ingest_results(str(tmp_path / "per_query"))
    assert s.groups == 3
    rep = {(r["window"].day, r["measure"]): r for r in st.report(["ndcg@10", "mrr@10"], ci=None).to_pylist()}
    hand_x, hand_y = 1.3175293 / 2.1309297, 1.8868528 / 2.1309297  # the seed's DCG / IDCG, 7 digits
    assert abs(rep[(20, "ndcg@10")]["value"] - (hand_x + hand_y) / 2) <= 1e-6
    assert rep[(21, "ndcg@10")]["value"] == 1.0
    assert abs(rep[(20, "mrr@10")]["value"] - (1 / 3 + 1) / 2) <= TOL  # first relevant at 3 (x) and 1 (y)
    assert st.ingest_results(str(tmp_path / "per_query")).groups == 0  # the same files again add nothing


def test_group_by_a_query_in_several_groups_agrees_with_the_local_engine(spark):
    """A query whose rows fall in several groups: each group's rows evaluated alone, on both engines; the judgments
    a group's query sees: its group's rows (one table, or judgments carrying the column), else all of the query's."""
    runs, qrels = generate(seed=23, n_q=40)
    rng = np.random.default_rng(5)
    runs = runs.append_column("device", pa.array(rng.choice(["mobile", "desktop", "tv"], size=runs.num_rows)))
    ms = ["ndcg@5", "map", "recall@10"]
    local = ranklens.evaluate(qrels, runs, ms, convention="trec_eval", group_by="device")
    got = {r["device"]: r for r in rs.evaluate(spark.createDataFrame(qrels), spark.createDataFrame(runs), ms,
                                               convention="trec_eval", group_by="device").collect()}
    assert sorted(got) == list(local)
    for g in local:
        for k in ms:
            assert abs(got[g][k] - local[g][k]) <= TOL, (g, k)
        assert got[g]["queries"] == len(local[g].queries)
    # judgments carrying the group column: cut by group on both engines
    import pyarrow.compute as pc

    dev = {(q, d): v for q, d, v in zip(runs["query"].to_pylist(), runs["item"].to_pylist(),
                                        runs["device"].to_pylist())}
    jdev = qrels.append_column("device", pa.array([dev.get((q, d), "tv") for q, d in
                                                   zip(qrels["query"].to_pylist(), qrels["item"].to_pylist())]))
    local = ranklens.evaluate(jdev, runs, ms, convention="trec_eval", group_by="device")
    got = {r["device"]: r for r in rs.evaluate(spark.createDataFrame(jdev), spark.createDataFrame(runs), ms,
                                               convention="trec_eval", group_by="device").collect()}
    for g in local:
        alone = ranklens.evaluate(jdev.filter(pc.equal(jdev["device"], g)).drop(["device"]),
                                  runs.filter(pc.equal(runs["device"], g)).drop(["device"]), ms, convention="trec_eval")
        for k in ms:
            assert abs(got[g][k] - local[g][k]) <= TOL and local[g][k] == alone[k], (g, k)


def test_group_by_refuses_a_row_without_a_group_on_both_engines(spark):
    rows = [("q1", "a", 2.0, 1.0, "mobile"), ("q1", "b", 1.0, 0.0, None), ("q2", "c", 1.0, 1.0, "tv")]
    table = pa.table({k: [r[i] for r in rows] for i, k in enumerate(["query", "item", "score", "relevance", "device"])})
    with pytest.raises(InputError, match=r"column .device. of the rankings DataFrame has no value in a row of "
                                         r"query q1"):
        rs.evaluate(spark.createDataFrame(table.to_pandas()), None, ["ndcg@2"], group_by="device").collect()
    with pytest.raises(InputError, match=r"column 'device' of the judgments has no value in row 1 \(query q1"):
        ranklens.evaluate(table, None, ["ndcg@2"], group_by="device")
