"""Rank fusion (issue #33, point 2): ``ranklens.fuse`` against ``ranx.fuse`` (ranx 0.3.21, the peer), every
unsupervised method with every normalisation, on random runs with ties and missing documents; the refusals;
the fused run written and read back in every run format; ``ranklens fuse`` on the command line.
"""

from __future__ import annotations

import copy
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ranklens
from ranklens._input.ids import ids_to_numpy
from ranklens.errors import InputError, InvalidParameterError
from ranklens.fusion import METHODS, NORMS, SUPERVISED
from ranklens.render import RUN_FORMATS, write_run

ranx = pytest.importorskip("ranx")

RANK_METHODS = [m for m, spec in METHODS.items() if spec.reads == "rank"]
WEIGHTED = [m for m, spec in METHODS.items() if "weights" in spec.required]
PARAMS = {"gmnz": {"gamma": 1.5}, "rbc": {"phi": 0.8}, "rrf": {"k": 10}, "logn_isr": {"sigma": 0.3}}


def _ids(x) -> list[str]:
    return [str(v) for v in ids_to_numpy(x).tolist()]


def _runs(seed: int, n_runs: int = 3, n_q: int = 6, pool: int = 9) -> list[dict[str, dict[str, float]]]:
    """Random runs: each query's documents a random subset of a pool (documents missing from runs), integer
    scores around 0 (many ties, negative scores)."""
    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(n_runs):
        run = {}
        for q in range(n_q):
            docs = rng.permutation(pool)[: int(rng.integers(1, pool + 1))]
            scores = np.round(rng.normal(0.5, 2.0, docs.size))
            run[f"q{q}"] = {f"d{d}": float(s) for d, s in zip(docs, scores)}
        runs.append(run)
    return runs


def _params(method: str, n_runs: int, seed: int = 0) -> dict:
    if method in WEIGHTED:
        w = np.random.default_rng(seed).uniform(0.2, 2.0, n_runs)
        return {"weights": [float(x) for x in w]}
    return dict(PARAMS.get(method, {}))


def _ranx(runs: list[dict], method: str, norm: str, params: dict) -> dict:
    fused = ranx.fuse([ranx.Run(copy.deepcopy(r)) for r in runs], norm=None if norm == "none" else norm,
                      method=method, params=params)
    return {q: dict(docs) for q, docs in fused.to_dict().items()}


def _ours(runs: list, method: str, norm: str, params: dict, **kw) -> dict:
    fused = ranklens.fuse(runs, method=method, norm=norm, **params, **kw)
    out: dict = {}
    for q, d, s in zip(_ids(fused.qid), _ids(fused.item), fused.score.tolist()):
        out.setdefault(str(q), {})[str(d)] = s
    return out


def _same(ours: dict, theirs: dict, queries=None) -> None:
    queries = sorted(theirs) if queries is None else queries
    for q in queries:
        assert set(ours[q]) == set(theirs[q]), q
        for d, v in theirs[q].items():
            assert math.isclose(ours[q][d], v, rel_tol=1e-9, abs_tol=1e-9), (q, d, ours[q][d], v)


def _vote_is_an_order(runs: list[dict], norm: str, weights: list[float]) -> list[str]:
    """The queries where ranx's Condorcet vote is a strict total order (by hand from ranx's definition, over
    the positions ranx's normalised runs give the documents): x before y when the weight of the runs ranking x
    above y (a missing document at 1,000,000) is at least the weight of the others."""
    nruns = [ranx.Run(copy.deepcopy(r)) for r in runs]
    if norm != "none":
        nruns = [ranx.normalization.norm_switch(norm)(r) for r in nruns]
    ok = []
    for q in runs[0]:
        pos = [{d: i for i, d in enumerate(r.run[q].keys())} for r in nruns]
        docs = sorted(set().union(*pos))
        first = {}
        for x in docs:
            for y in docs:
                if x != y:
                    xv = sum(w for p, w in zip(pos, weights) if p.get(x, 10**6) < p.get(y, 10**6))
                    first[x, y] = xv >= sum(weights) - xv
        consistent = all(first[x, y] != first[y, x] for x in docs for y in docs if x != y)
        wins = sorted(sum(first[x, y] for y in docs if y != x) for x in docs)
        if consistent and wins == list(range(len(docs))):
            ok.append(q)
    return ok


@pytest.mark.peer
@pytest.mark.parametrize("norm", list(NORMS))
def test_every_method_equals_ranx_per_document(norm):
    """Every unsupervised method under this normalisation, two seeds of random runs with ties, missing
    documents and negative scores: the fused score of every document equals ranx's (rel. and abs. 1e-9)."""
    for seed in (1, 2):
        runs = _runs(seed, n_runs=2 + seed)
        for method in METHODS:
            if method in ("condorcet", "w_condorcet"):
                continue  # below, on the queries where ranx's result is defined
            if norm == "borda" and method in RANK_METHODS:
                with pytest.raises(InvalidParameterError, match="Python set"):
                    _ours(runs, method, norm, _params(method, len(runs)))
                continue
            params = _params(method, len(runs), seed)
            _same(_ours(runs, method, norm, params), _ranx(runs, method, norm, params))


@pytest.mark.peer
@pytest.mark.parametrize("norm", [n for n in NORMS if n != "borda"])
def test_condorcet_equals_ranx_where_the_vote_is_an_order(norm):
    """CondorcetFuse sorts the documents by a pairwise vote: where the vote is a strict total order (checked by
    hand in this test) ranx's result is that order, whatever its set order; ranklens gives the same scores."""
    rng = np.random.default_rng(7)
    runs = []
    base = {f"q{q}": rng.normal(size=6) for q in range(12)}
    for _ in range(3):  # three noisy views of one ranking: every document in every run, no ties
        runs.append({q: {f"d{i}": float(s + rng.normal(0, 0.8)) for i, s in enumerate(b)} for q, b in base.items()})
    for method in ("condorcet", "w_condorcet"):
        params = _params(method, 3)
        weights = params.get("weights", [1.0, 1.0, 1.0])
        queries = _vote_is_an_order(runs, norm, weights)
        assert len(queries) >= 4
        _same(_ours(runs, method, norm, params), _ranx(runs, method, norm, params), queries)


@pytest.mark.peer
def test_ranx_runs_keep_their_order():
    """A ``ranx.Run`` given itself is fused in its own order (ties as ranx sorted them), as ranx fuses it."""
    runs = _runs(5, n_runs=3)
    objs = [ranx.Run(copy.deepcopy(r)) for r in runs]
    for method, norm in (("rrf", "min-max"), ("isr", "none"), ("sum", "zmuv"), ("bordafuse", "rank"),
                         ("rbc", "min-max-inverted")):
        params = _params(method, 3)
        _same(_ours(objs, method, norm, params), _ranx(runs, method, norm, params))


@pytest.mark.peer
def test_union_of_queries_is_ranx_with_empty_rankings():
    """``queries="union"``: a query a run lacks is an empty ranking there, as ranx fuses ``{query: {}}``."""
    runs = _runs(3, n_runs=3)
    lacking = copy.deepcopy(runs)
    del lacking[1]["q2"]
    with pytest.raises(InputError, match="has no row for query q2"):
        ranklens.fuse(lacking, "rrf")
    declared = copy.deepcopy(runs)
    declared[1]["q2"] = {}
    for method, norm in (("rrf", "none"), ("mnz", "min-max"), ("bordafuse", "rank"), ("sum", "borda")):
        theirs = _ranx(declared, method, norm, {})
        _same(_ours(lacking, method, norm, {}, queries="union"), theirs)
        _same(_ours(declared, method, norm, {}), theirs)  # a declared empty query counts as held


def test_rrf_by_hand():
    """RRF by hand (k=60): d1 is 1st and 2nd, d3 3rd and 1st, d2 2nd only."""
    a = {"q": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    b = {"q": {"d3": 0.9, "d1": 0.5}}
    f = ranklens.fuse([a, b], "rrf", norm=None)
    assert _ids(f.item) == ["d1", "d3", "d2"]
    assert f.score.tolist() == [1 / 61 + 1 / 62, 1 / 63 + 1 / 61, 1 / 62]
    assert f.rank.tolist() == [1.0, 2.0, 3.0]


def test_ties_input_keeps_the_given_order():
    """``ties="input"``: tied documents keep the order they come in (by hand: b before a in run 1)."""
    a = {"q": {"b": 1.0, "a": 1.0}}
    c = {"q": {"a": 5.0}}
    f = _ours([a, c], "isr", "none", {}, ties="input")["q"]
    assert f == {"b": 1 * (1 / 1**2), "a": 2 * (1 / 2**2 + 1 / 1**2)}


def test_refusals():
    runs = _runs(4, n_runs=2)
    for name in SUPERVISED:
        with pytest.raises(InvalidParameterError, match="supervised"):
            ranklens.fuse(runs, name)
    with pytest.raises(InvalidParameterError, match="`method` must be one of"):
        ranklens.fuse(runs, "combsum")
    with pytest.raises(InvalidParameterError, match="`norm` must be one of"):
        ranklens.fuse(runs, "sum", norm="l2")
    with pytest.raises(InvalidParameterError, match="needs weights"):
        ranklens.fuse(runs, "wsum")
    with pytest.raises(InvalidParameterError, match="one number per run"):
        ranklens.fuse(runs, "wsum", weights=[1.0])
    with pytest.raises(InvalidParameterError, match="takes k"):
        ranklens.fuse(runs, "rrf", phi=0.5)
    with pytest.raises(InvalidParameterError, match="must be finite"):
        ranklens.fuse(runs, "gmnz", gamma=float("nan"))
    with pytest.raises(InvalidParameterError, match="sigma"):
        ranklens.fuse(runs, "logn_isr", sigma=2.0)
    for k in (-1, -5, -0.5):  # 1 / (k + rank): k = -1 divides by zero at rank 1 (it was an internal error)
        with pytest.raises(InvalidParameterError, match=r"`k` \(RRF's constant added to each rank\) must be a number "
                                                        r">= 0; got"):
            ranklens.fuse(runs, "rrf", k=k)
    with pytest.raises(InvalidParameterError, match="at least two runs"):
        ranklens.fuse(runs[:1], "rrf")
    with pytest.raises(InvalidParameterError, match="`ties`"):
        ranklens.fuse(runs, "rrf", ties="random")


def test_duplicates_and_rank_only_runs_are_refused(tmp_path):
    p = tmp_path / "dup.trec"
    p.write_text("q1 Q0 a 1 2.0 x\nq1 Q0 b 2 1.0 x\nq1 Q0 a 3 0.5 x\n")
    ok = tmp_path / "ok.trec"
    ok.write_text("q1 Q0 a 1 2.0 x\n")
    with pytest.raises(InputError, match="ranks item a twice for query q1"):
        ranklens.fuse([str(ok), str(p)], "rrf")
    pa = pytest.importorskip("pyarrow")
    ranked = pa.table({"query": ["q1", "q1"], "item": ["a", "b"], "rank": [2, 1]})
    f = ranklens.fuse([ranked, {"q1": {"a": 1.0}}], "rrf", norm=None)
    assert dict(zip(_ids(f.item), f.score.tolist())) == {"a": 1 / 62 + 1 / 61, "b": 1 / 61}
    with pytest.raises(InputError, match="has ranks but no scores"):
        ranklens.fuse([ranked, {"q1": {"a": 1.0}}], "sum")


@pytest.mark.parametrize("method", ["rrf", "sum", "med", "condorcet"])
def test_a_document_twice_is_named_by_its_first_repeat_in_input_order(method):
    """A run holding documents twice: the refusal names the first row, in the order the rows come, whose document an
    earlier row holds (b here, while in ranked order a's repeat comes first), whichever way the method fuses."""
    pa = pytest.importorskip("pyarrow")
    twice = pa.table({"query": ["q1"] * 4, "item": ["b", "a", "b", "a"], "score": [1.0, 3.0, 0.5, 2.0]})
    with pytest.raises(InputError, match="ranks item b twice for query q1"):
        ranklens.fuse([{"q1": {"a": 1.0}}, twice], method)


@pytest.mark.parametrize("fmt", RUN_FORMATS)
def test_fused_run_round_trips_in_every_format(tmp_path, fmt):
    """The fused run written in each format reads back to the same ids and scores, bit for bit, and evaluates
    to the same numbers."""
    runs = _runs(6, n_runs=3)
    fused = ranklens.fuse(runs, "rrf")
    path = tmp_path / f"fused.{fmt}"
    write_run(fused, path, fmt)
    back = ranklens.read_rankings(path, format=fmt)
    key = lambda r: sorted(zip(_ids(r.qid), _ids(r.item), r.score.tolist()))  # noqa: E731
    assert key(back) == key(fused)
    qrels = {q: {d: int(d[1:]) % 3 for d in docs} for q, docs in runs[0].items()}
    assert ranklens.evaluate(qrels, back, ["ndcg@5", "map"]).aggregate == \
        ranklens.evaluate(qrels, fused, ["ndcg@5", "map"]).aggregate


def test_trec_lines_are_ranked(tmp_path):
    """Lines by descending score with ranks 1, 2...; numbers as the shortest text that reads back the same; ids
    a TREC line cannot hold refused."""
    run = ranklens.as_rankings({"q": {"a": 1e300, "b": -0.0, "c": 1 / 3, "d": 5e-324}})
    assert write_run(run, tag="x") == \
        "q Q0 a 1 1e+300 x\nq Q0 c 2 0.3333333333333333 x\nq Q0 d 3 5e-324 x\nq Q0 b 4 -0 x\n"
    path = tmp_path / "r.trec"
    write_run(run, path)
    assert ranklens.read_rankings(path).score.tolist() == [1e300, 1 / 3, 5e-324, -0.0]
    with pytest.raises(InputError, match="'a b' is empty or holds white space"):
        write_run(ranklens.as_rankings({"q": {"a b": 1.0}}))
    fused = ranklens.fuse([{"q": {"a": 1.0, "b": 3.0}}, {"q": {"a": 2.0}}], "sum", norm=None)
    # a tie (3.0) in order of first appearance: b is the first run's first document
    assert write_run(fused, tag="t") == "q Q0 b 1 3 t\nq Q0 a 2 3 t\n"


def test_cli_fuse(tmp_path):
    runs = _runs(8, n_runs=2)
    paths = []
    for i, run in enumerate(runs):
        p = tmp_path / f"r{i}.trec"
        p.write_text("".join(f"{q} Q0 {d} {k + 1} {s} r{i}\n" for q, docs in run.items()
                             for k, (d, s) in enumerate(docs.items())))
        paths.append(str(p))
    out = tmp_path / "fused.trec"
    cmd = [sys.executable, "-m", "ranklens._cli.main", "fuse", *paths, "--method", "wsum", "--norm", "zmuv",
           "-p", "weights=0.3,0.7", "-o", str(out), "--tag", "both"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    back = ranklens.read_rankings(out)
    expected = ranklens.fuse(paths, "wsum", norm="zmuv", weights=[0.3, 0.7])
    assert sorted(zip(_ids(back.qid), _ids(back.item), back.score.tolist())) == \
        sorted(zip(_ids(expected.qid), _ids(expected.item), expected.score.tolist()))
    bad = subprocess.run([sys.executable, "-m", "ranklens._cli.main", "fuse", *paths, "--method", "wsum"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "needs weights" in bad.stderr
    printed = subprocess.run([sys.executable, "-m", "ranklens._cli.main", "fuse", *paths, "--method", "rrf",
                              "-f", "csv"], capture_output=True, text=True)
    assert printed.returncode == 0 and printed.stdout.startswith('"query","item","score","rank"\n')


@pytest.mark.peer
@pytest.mark.slow
def test_ranx_condorcet_depends_on_the_hash_seed_where_the_vote_is_no_order():
    """Why Condorcet is compared only where the vote is an order: on a cycle (a > b > c > a over three runs),
    ranx's result follows the order of a Python set of strings, which changes with PYTHONHASHSEED."""
    code = textwrap.dedent("""
        import ranx
        runs = [ranx.Run({"q": {"a": 3.0, "b": 2.0, "c": 1.0}}), ranx.Run({"q": {"b": 3.0, "c": 2.0, "a": 1.0}}),
                ranx.Run({"q": {"c": 3.0, "a": 2.0, "b": 1.0}})]
        f = ranx.fuse(runs, norm=None, method="condorcet").to_dict()["q"]
        print(max(f, key=f.get))
    """)
    firsts = set()
    for seed in range(6):
        env = dict(os.environ, PYTHONHASHSEED=str(seed))
        firsts.add(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                                  check=True).stdout.strip())
    assert len(firsts) > 1
    f = ranklens.fuse([{"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, {"q": {"b": 3.0, "c": 2.0, "a": 1.0}},
                       {"q": {"c": 3.0, "a": 2.0, "b": 1.0}}], "condorcet", norm=None)
    assert _ids(f.item) == ["c", "a", "b"]  # the merge sort from a, b, c: (a vs b) a, then c beats a


def test_equal_hashes_never_join_two_documents():
    """Documents are gathered by the 64-bit hash of their id, equal hashes confirmed on the bytes: two ids given
    the same hash on purpose stay two documents (the kernel's numbering of a query's documents, on the JIT)."""
    from ranklens._kernels.fusion_parts import new_table, number_doc

    # ids "a", "b", "a", "c" (offsets into b"abac"); the hash given says a = b = c
    offs = np.array([0, 1, 2, 3, 4], np.int64)
    data = np.frombuffer(b"abac", np.uint8).copy()
    table, cand_hash, cand_row = np.empty(20, np.int64), np.empty(4, np.uint64), np.empty(4, np.int64)
    shift, mask = new_table(table, 4)
    n, cand = 0, []
    for row in range(4):
        c, n = number_doc(table, np.uint64(shift), np.uint64(mask), cand_hash, cand_row, n, True,
                          np.zeros(1, np.int64), offs, data, row, np.uint64(7))
        cand.append(c)
    assert n == 3 and cand == [0, 1, 0, 2] and cand_row[:3].tolist() == [0, 1, 3]


@pytest.mark.parametrize("method, norm", [("rrf", "min-max"), ("med", "zmuv"), ("condorcet", "rank"),
                                          ("w_bordafuse", "min-max-inverted")])
def test_same_numbers_ahead_of_time_and_jit(monkeypatch, method, norm):
    """The kernel compiled ahead of time (cut into chunks of queries on threads) and numba's JIT give the same
    fused run, bit for bit."""
    from ranklens._kernels import api, dispatch

    monkeypatch.setattr(dispatch, "SPLIT_MIN_WORK", 8)
    runs = _runs(9, n_runs=4, n_q=40)
    out = []
    for side in ("aot", "jit"):
        with api.forced(side):
            f = ranklens.fuse(runs, method, norm, **_params(method, 4))
        out.append((_ids(f.qid), _ids(f.item), f.score.tolist()))
    assert out[0] == out[1]
