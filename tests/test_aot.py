"""The kernels compiled ahead of time (numba.pycc, at build time) and numba's parallel JIT give the same numbers.

Small work runs on the ahead-of-time module, large work on the JIT; a result must never depend on
which one ran. These tests force each side on the same inputs and require bit-identical values.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import ranklens
import ranklens._base.threads
from ranklens import stats
from ranklens._kernels import api, dispatch

CONVENTIONS = sorted(ranklens.CONVENTIONS)
MEASURES = ["ndcg@10", "ndcg", "dcg@5", "idcg@5", "map", "map@10", "mrr@10", "P@3", "recall@20", "err@5",
            "hit_rate@3", "r_precision"]


def test_ahead_of_time_module_is_built_and_current():
    # make test installs ranklens, which compiles the module; a missing or stale module is a failed build
    assert api.aot_status() == "ok"


def test_the_build_stamp_covers_every_kernel_source():
    # the module's stamp is the digest of dispatch.SOURCES: a kernel file left out of it could change while the
    # stale module is still taken for current (the package's __init__ and the builder compile no kernel)
    folder = Path(dispatch.__file__).parent
    files = sorted(p.name for p in folder.glob("*.py") if p.name not in ("__init__.py", "_build.py"))
    assert sorted(dispatch.SOURCES) == files


def _both(fn):
    with api.forced("aot"):
        a = fn()
    with api.forced("jit"):
        b = fn()
    return a, b


def _tables(seed: int, str_ids: bool):
    rng = np.random.default_rng(seed)
    n_q = 60
    lengths = rng.integers(0, 40, n_q)
    q = np.repeat(np.arange(n_q), lengths)
    item = np.concatenate([rng.permutation(60)[:n] for n in lengths])
    score = np.round(rng.standard_normal(q.size), 1)  # many ties
    label = rng.choice([0, 0, 0, 1, 2, 3, -1], size=q.size).astype(np.float64)
    if str_ids:
        qid = pa.array([f"q{x}" for x in q])
        iid = pa.array([f"d{x}" for x in item])
    else:
        qid, iid = pa.array(q), pa.array(item)
    run = pa.table({"query": qid, "item": iid, "score": score})
    keep = rng.random(q.size) < 0.8  # some ranked items unjudged
    qrels = pa.table({"query": qid.filter(pa.array(keep)), "item": iid.filter(pa.array(keep)),
                      "relevance": label[keep]})
    return qrels, run


def test_stale_jit_cache_is_dropped(tmp_path: Path) -> None:
    # numba keys a kernel's cache by its own file only: with no stamp for these sources yet, the kernels' cache files
    # go (a kernel compiled into another stays stale otherwise); other files and a stamped folder are left alone
    for f in ("fused.evaluate_queries-2.py311.nbi", "fused.evaluate_queries-2.py311.1.nbc", "other.f-1.py311.nbi",
              "ranklens-jit-old.evaluate_queries"):
        (tmp_path / f).write_bytes(b"")
    assert dispatch.drop_stale_jit_cache(tmp_path, "ranklens-jit-new") == [
        "fused.evaluate_queries-2.py311.1.nbc", "fused.evaluate_queries-2.py311.nbi"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.f-1.py311.nbi", "ranklens-jit-old.evaluate_queries"]
    (tmp_path / "ranklens-jit-new.evaluate_queries").write_bytes(b"")
    (tmp_path / "group.f-1.py311.nbi").write_bytes(b"")
    assert dispatch.drop_stale_jit_cache(tmp_path, "ranklens-jit-new") == []
    assert (tmp_path / "group.f-1.py311.nbi").exists()


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("str_ids", [False, True])
def test_every_convention_and_measure_identical(convention, str_ids, cut):
    qrels, run = _tables(3 + str_ids, str_ids)

    def go():
        try:
            res = ranklens.evaluate(qrels, run, MEASURES, convention=convention, empty=0)
        except ranklens.RanklensError as exc:  # the same refusal on both sides
            return type(exc).__name__, str(exc)
        return res.values.tolist(), dict(res.aggregate)

    a, b = _both(go)
    assert a == b


def test_trec_files_identical(tmp_path, cut):
    rng = np.random.default_rng(11)
    q, r = tmp_path / "qrels.txt", tmp_path / "run.txt"
    q.write_text("".join(f"{i // 30} 0 doc{i % 97} {rng.integers(0, 4)}\n" for i in range(3000)))
    r.write_text("# a comment\n\n" + "".join(
        f"{i // 50} Q0 doc{(i * 7) % 101} {i % 50 + 1} {rng.integers(0, 20) / 4} tag\n" for i in range(5000)))

    def go():
        # trec_eval's own measures under its preset; every measure on the same tie path (item ids descending)
        trec = [m for m in MEASURES if not m.startswith(("dcg", "idcg", "err"))]
        res = ranklens.evaluate(str(q), str(r), trec, convention="trec_eval")
        every = ranklens.evaluate(str(q), str(r), MEASURES, ties="item_desc", score_precision="float32")
        return res.values.tolist(), every.values.tolist()

    a, b = _both(go)
    assert a == b


def test_sklearn_dropin_and_explain_identical(cut):
    rng = np.random.default_rng(5)
    y = rng.integers(0, 5, (200, 30))
    s = np.round(rng.random((200, 30)), 1)
    a, b = _both(lambda: (ranklens.ndcg_score(y, s, k=10), ranklens.dcg_score(y, s), ranklens.ndcg_score(y, s,
                                                                                                       ignore_ties=True)))
    assert a == b
    qrels = {"q": {"a": 2, "b": 0, "c": 1}}
    run = {"q": {"a": 0.1, "b": 0.5, "c": 0.5}}
    a, b = _both(lambda: str(ranklens.explain(qrels, run, "q", k=3, compare="lightgbm")))
    assert a == b


def test_resampling_identical(cut):
    rng = np.random.default_rng(8)
    x = rng.uniform(0, 1, 500)
    y = np.clip(x + rng.normal(0.02, 0.1, 500), 0, 1)

    def go():
        r = stats.randomization(x, y, n_resamples=2000, seed=3)
        c = stats.bootstrap_ci(x - y, "bca", n_resamples=2000, seed=3)
        p = stats.paired_bootstrap(x, y, n_resamples=2000, seed=3)
        return r.p_value, c.low, c.high, p.p_value

    a, b = _both(go)
    assert a == b


def test_arguments_not_of_the_signature_never_reach_compiled_code():
    codes32 = np.array([0, 0, 1], np.int32)
    assert dispatch.conform("segments", (codes32, 2)) is not None
    assert dispatch.conform("segments", (codes32.astype(np.int64), 2)) is None  # wrong dtype
    assert dispatch.conform("segments", (np.array([0, 9, 0, 9, 1], np.int32)[::2], 2)) is None  # not contiguous
    assert dispatch.conform("segments", ([0, 0, 1], 2)) is None  # not an array
    # under auto such a call runs on the JIT instead (same answer); forced to aot it is refused
    start, end, idx = api.segments(codes32.astype(np.int64).astype(np.int32), 2)
    assert start.tolist() == [0, 2] and end.tolist() == [2, 3]
    with api.forced("aot"), pytest.raises(RuntimeError, match="not of its signature"):
        api.segments(codes32.astype(np.int64), 2)


def test_every_signature_has_its_kernel_and_module_function():
    mod = dispatch.state["aot"] if api.aot_status() == "ok" else None
    assert mod is not None
    for name in api.SIGNATURES:
        assert callable(getattr(mod, name))
        assert name in api.PARTS or callable(getattr(api, name))


def test_stale_module_is_not_used(monkeypatch):
    saved = dict(dispatch.state)
    try:
        dispatch.state.clear()
        monkeypatch.setattr(dispatch, "source_digest", lambda: "0" * 64)
        assert api.aot_status().startswith("stale")
        res = ranklens.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"a": 0.2, "b": 0.9}}, ["mrr"])
        assert res.aggregate["mrr"] == 0.5  # by hand: the relevant item is ranked second
    finally:
        dispatch.state.clear()
        dispatch.state.update(saved)


def test_bad_kernel_mode_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("RANKLENS_KERNELS", "fast")
    with pytest.raises(ranklens.InvalidParameterError, match="RANKLENS_KERNELS"):
        ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 0.2}}, ["mrr"])


def test_small_evaluation_loads_no_compiler(tmp_path):
    code = (
        "import sys, ranklens\n"
        "r = ranklens.evaluate({'q': {'a': 2, 'b': 0}}, {'q': {'a': 0.1, 'b': 0.3}}, ['ndcg@10', 'map'])\n"
        "print(sorted(m for m in sys.modules if m == 'numba' or m.startswith(('numba.', 'llvmlite'))))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "RANKLENS_KERNELS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip() == "[]"


def test_chunks_really_run_on_several_threads(monkeypatch):
    monkeypatch.setattr(dispatch, "SPLIT_MIN_WORK", 8)
    monkeypatch.setattr(ranklens._base.threads, "_requested", [3])
    seen = []
    real = dispatch.map_parts

    def spy(fn, parts):
        seen.append(len(parts))
        return real(fn, parts)

    monkeypatch.setattr(dispatch, "map_parts", spy)
    qrels, run = _tables(9, True)
    with api.forced("aot"):
        ranklens.evaluate(qrels, run, ["ndcg@10"])
    assert max(seen) == 3


def test_every_size_runs_ahead_of_time(monkeypatch):
    monkeypatch.delenv("RANKLENS_KERNELS", raising=False)
    args = (np.zeros(1, np.int32), 1)
    assert dispatch.side("segments", args) is not None
    monkeypatch.setitem(dispatch.state, "jit:segments", object())  # a JIT version loaded changes nothing
    assert dispatch.side("segments", args) is not None
    monkeypatch.setenv("RANKLENS_KERNELS", "jit")
    assert dispatch.side("segments", args) is None


@pytest.mark.slow
def test_large_evaluation_loads_no_compiler():
    # 3M rows (over the 2M that used to switch to the JIT): the ahead-of-time kernels on the thread pool,
    # numba never imported; the value checked against the definition (every query's items ranked in
    # order of their labels: NDCG@10 = 1 for a query with a positive label, empty ones counted as 0)
    code = (
        "import sys, numpy as np, pyarrow as pa, ranklens\n"
        "n = 3_000_000; q = np.repeat(np.arange(n // 100), 100); lab = np.tile(np.arange(100) % 4, n // 100)\n"
        "t = pa.table({'query': q, 'item': np.arange(n), 'score': lab * 1.0, 'label': lab * 1.0})\n"
        "r = ranklens.evaluate(t, None, ['ndcg@10', 'P@10'])\n"
        "print(r.aggregate['ndcg@10'], r.aggregate['P@10'], 'numba' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "RANKLENS_KERNELS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    ndcg, p10, loaded = out.stdout.split()
    # by hand: labels 0..3 repeat 25 times per query, the top 10 are all label 3 (relevant): P@10 = 1
    assert float(ndcg) == pytest.approx(1.0, abs=1e-12) and float(p10) == 1.0 and loaded == "False"
    assert out.stderr == ""


def test_module_releases_the_gil():
    # numba.pycc has no option for it: the build sets it (_build._release_gil, numba's private Flags).
    # The day a numba ignores it, the module holds the GIL and this fails loudly (make test-numba-latest).
    assert api.aot_status() == "ok" and dispatch.state["nogil"] is True
    import threading

    x = np.random.default_rng(1).random((20_000, 4))
    counter, during = [0], []
    stop = threading.Event()

    def work():
        before = counter[0]
        dispatch.state["aot"].bootstrap_means(x, 7, 1000)
        during.append(counter[0] - before)  # this thread's loop ran while the kernel did: the GIL was free
        stop.set()

    worker = threading.Thread(target=work)
    worker.start()
    while not stop.is_set():
        counter[0] += 1
    worker.join()
    assert during[0] > 1000, during


def test_first_compilation_is_announced_once(monkeypatch, tmp_path, capsys):
    # a kernel whose JIT version has no stamp: the first call says so on stderr, once in this process,
    # and stamps it; a new process (state cleared) with the stamp says nothing
    monkeypatch.setattr(dispatch, "jit_stamp", lambda name: tmp_path / name)
    for key in ("jit:segments", "jit:hash_items", "announced"):
        monkeypatch.delitem(dispatch.state, key, raising=False)
    codes = np.array([1, 0, 1], np.int32)
    with api.forced("jit"):
        start, end, idx = api.segments(codes, 2)
        api.hash_items(False, np.arange(3), np.zeros(2, np.int64), np.zeros(1, np.uint8))
    err = capsys.readouterr().err
    assert err.count("ranklens: compiling the kernels with numba's JIT") == 1, err
    assert "RANKLENS_KERNELS=jit" in err and "ranklens warmup" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hash_items", "segments"]
    assert (start.tolist(), end.tolist(), idx.tolist()) == ([0, 1], [1, 3], [1, 0, 2])  # by hand: code 0 at row 1
    for key in ("jit:segments", "announced"):
        dispatch.state.pop(key, None)
    with api.forced("jit"):
        api.segments(codes, 2)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("mode", ["aot", "jit"])
def test_run_heads_and_factorize_parts(mode, cut):
    import pyarrow as pa

    from ranklens._input.factorize import factorize_parts

    rng = np.random.default_rng(3)
    for runs in (True, False):
        a = [f"q{v}" for v in (np.repeat(rng.integers(0, 50, 400), rng.integers(1, 9, 400)) if runs
                               else rng.integers(0, 50, 3000))]
        b = [f"q{v}" for v in rng.integers(0, 80, 2000)]
        with api.forced(mode):
            (starts,) = api.run_starts([_offs_data(a)])
            (ca, cb), uniques, order = factorize_parts([pa.array(a, pa.large_string()), pa.array(b, pa.large_string())])
        assert starts.tolist() == [i for i in range(len(a)) if i == 0 or a[i] != a[i - 1]]
        # by hand: codes number the ids in order of first appearance over a then b
        first = list(dict.fromkeys(a + b))
        assert uniques.tolist() == first
        assert ca.tolist() == [first.index(x) for x in a] and cb.tolist() == [first.index(x) for x in b]
        assert [first[i] for i in order] == sorted(first)
    ints = np.repeat(np.array([5, 3, 5, 9]), [3, 1, 2, 4])
    (c,), uniques, _ = factorize_parts([ints])
    assert c.tolist() == [0, 0, 0, 1, 0, 0, 2, 2, 2, 2] and uniques.tolist() == [5, 3, 9]


@pytest.mark.parametrize("mode", ["aot", "jit"])
@pytest.mark.parametrize("wide", [True, False])
def test_chunk_run_heads(mode, wide):
    """Runs of equal ids in Arrow string chunks, found by the kernel on every chunk at once, against the definition
    (an id starts a run when it differs from the one before, across chunk boundaries): runs across chunks, empty
    strings, chunks of one row, sliced chunks (an offset into their buffers), ids that are prefixes of each other, ids
    of 7 to 17 bytes that differ in one byte (the kernel compares eight bytes at a time, the last few masked), chunks
    large enough to be cut between threads."""
    import pyarrow as pa

    from ranklens._input.buffers import chunk_run_heads

    rng = np.random.default_rng(7)
    words = ["", "a", "ab", "b", "abcdefg", "abcdefh", "abcdefgh", "abcdefgi", "abcdefghijklmnopq", "abcdefghijklmnopr"]
    for reps in ((1, 5), (1, 3000)):
        ids = [words[v] for v in np.repeat(rng.integers(0, len(words), 300), rng.integers(*reps, 300))]
        t = pa.large_string() if wide else pa.string()
        cuts = [0, 1, 2, 37, 38, 200, 201, 500, len(ids)]
        chunks = [pa.array(["x"] + ids[a:b], t).slice(1) for a, b in zip(cuts[:-1], cuts[1:])]  # offset 1 each
        with api.forced(mode):
            found = np.concatenate([st + pos for pos, _, _, st in chunk_run_heads(chunks + [pa.array([], t)])])
        assert found.tolist() == [i for i in range(len(ids)) if i == 0 or ids[i] != ids[i - 1]]


def _offs_data(ids: list[str]):
    data = "".join(ids).encode()
    offs = np.cumsum([0] + [len(x.encode()) for x in ids]).astype(np.int64)
    return offs, np.frombuffer(data, np.uint8).copy()


def test_join_with_clustered_integer_ids(cut):
    # integer ids that are all multiples of a large power of two must not pile into one hash slot
    n = 4000
    items = np.arange(n, dtype=np.int64) * 2**20
    labels = (np.arange(n) % 5).astype(float)
    scores = -np.arange(n, dtype=float)
    import pyarrow as pa

    res = ranklens.evaluate(pa.table({"query": np.zeros(n, np.int64), "item": items, "label": labels}),
                            pa.table({"query": np.zeros(n, np.int64), "item": items[::-1].copy(), "score": scores}),
                            ["ndcg"])
    # by hand: the ranking lists items in reverse, so labels in reverse; NDCG from the definition
    # (ranklens' default gain is linear: the label itself)
    gains = labels[::-1]
    disc = 1 / np.log2(np.arange(2, n + 2))
    ideal = np.sort(labels)[::-1]
    assert res["ndcg"] == pytest.approx((gains * disc).sum() / (ideal * disc).sum(), rel=1e-12)


@pytest.mark.parametrize("kind", ["object", "unicode", "stringdtype", "list", "arrow_string", "arrow_string_sliced",
                                  "arrow_string_view"])
def test_factorize_parts_raw_ids(kind):
    # raw id inputs are cut into runs before conversion; codes must be those of the plain definition
    from ranklens._input.factorize import factorize_parts

    rng = np.random.default_rng(11)
    for runs in (True, False):
        a = [f"q{v}" for v in (np.repeat(rng.integers(0, 40, 300), rng.integers(1, 7, 300)) if runs
                               else rng.integers(0, 40, 900))]
        b = rng.integers(0, 60, 700)  # integer ids on the other side: made strings, as unify_ids does
        if kind == "object":
            raw = np.array(a, dtype=object)
        elif kind == "unicode":
            raw = np.array(a)
        elif kind == "stringdtype":
            raw = np.array(a, dtype=np.dtypes.StringDType())
        elif kind == "arrow_string":  # neighbours compared on the 32-bit offsets, no wide copy
            raw = pa.array(a, pa.string())
        elif kind == "arrow_string_sliced":  # an array that starts inside its buffers
            raw = pa.array(["zz", *a, "q1"], pa.string()).slice(1, len(a))
        elif kind == "arrow_string_view":
            raw = pa.array(a, pa.string_view())
        else:
            raw = a
        (ca, cb), uniques, order = factorize_parts([raw, b], "query ids")
        bs = [str(v) for v in b]
        first = list(dict.fromkeys(a + bs))
        assert uniques.tolist() == first
        assert ca.tolist() == [first.index(x) for x in a] and cb.tolist() == [first.index(x) for x in bs]
        assert [first[i] for i in order] == sorted(first, key=str.encode)


def test_raw_ids_with_missing_values_are_named():
    from ranklens._input.factorize import factorize_parts
    from ranklens.errors import InputError

    raw = np.array(["q1", "q1", None, None, "q2"], dtype=object)
    with pytest.raises(InputError, match="query ids contain 2 missing values"):
        factorize_parts([raw], "query ids")


def test_parquet_table_loads_neither_pandas_nor_arrow_compute(tmp_path):
    # a Parquet table (string ids, 32-bit offsets) to a number: Arrow reads it, the kernels do the rest
    import pyarrow.parquet as pq

    rng = np.random.default_rng(5)
    q = np.repeat([f"q{i}" for i in range(50)], 20)
    t = pa.table({"query": q, "item": [f"d{i}" for i in range(q.size)], "score": rng.random(q.size),
                  "label": rng.integers(0, 3, q.size)})
    pq.write_table(t, tmp_path / "t.parquet")
    code = (
        "import sys, ranklens\n"
        f"r = ranklens.evaluate({str(tmp_path / 't.parquet')!r}, None, ['ndcg@10'])\n"
        "print(sorted(m for m in sys.modules if m in ('numba', 'pandas', 'pyarrow.compute', 'numpy.ma')))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "RANKLENS_KERNELS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip() == "[]"


def test_trec_files_load_no_compiler_and_no_arrow_compute():
    # the start-up path: TREC files to a number on the ahead-of-time kernels, without the modules
    # whose import alone costs hundredths of a second (numba, pyarrow, pyarrow.compute, numpy.ma)
    root = Path(__file__).resolve().parents[1] / "examples" / "data"
    code = (
        "import sys, ranklens\n"
        f"r = ranklens.evaluate({str(root / 'qrels.dl19-passage.txt')!r}, {str(root / 'run.bm25.dl19.txt')!r},"
        " ['ndcg@10', 'map'], convention='trec_eval')\n"
        "print(sorted(m for m in sys.modules if m in ('numba', 'pyarrow', 'pyarrow.compute', 'numpy.ma')))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "RANKLENS_KERNELS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("mode", ["aot", "jit"])
@pytest.mark.parametrize("arrow_sort", [True, False])
def test_factorize_unsorted_orders_by_bytes(mode, arrow_sort, monkeypatch):
    # the sorted order is strcmp's (UTF-8 bytes) whether numpy or Arrow sorts the distinct ids
    import ranklens._input.factorize as ids_mod

    # arrow_sort: Arrow numbers and sorts the ids; otherwise the factorize kernel and numpy do
    monkeypatch.setattr(ids_mod, "ARROW_SORT_MIN", -1 if arrow_sort else 10**9)
    monkeypatch.setattr(ids_mod, "ARROW_FACTORIZE_MIN", -1 if arrow_sort else 10**9)
    if not arrow_sort:
        monkeypatch.delitem(sys.modules, "pyarrow.compute", raising=False)
    words = ["z", "é", "e", "\U0001F600", "E", "ez", "", "z", "é", "10", "9", "e"]
    with api.forced(mode):
        codes, uniques, order = ids_mod.factorize_unsorted(pa.array(words, pa.large_string()))
    first = list(dict.fromkeys(words))
    assert uniques.tolist() == first and codes.tolist() == [first.index(w) for w in words]
    assert [first[i] for i in order] == sorted(first, key=lambda w: w.encode())
    with api.forced(mode):
        codes, uniques, order = ids_mod.factorize_unsorted(np.array([7, -3, 7, 2**40, -3, 0], np.int64))
    assert codes.tolist() == [0, 1, 0, 2, 1, 3] and uniques.tolist() == [7, -3, 2**40, 0]
    assert uniques[order].tolist() == [-3, 0, 7, 2**40]
    assert ("pyarrow.compute" in sys.modules) == arrow_sort


@pytest.mark.parametrize("mode", ["aot", "jit"])
def test_factorize_kernel_grows_its_table(mode):
    # thousands of distinct ids: the table doubles many times; codes stay those of first appearance
    rng = np.random.default_rng(5)
    vals = rng.integers(-(2**62), 2**62, 3000)[rng.integers(0, 3000, 20000)]
    strs = [f"id-{v}" for v in vals]
    first_i = {v: k for k, v in enumerate(dict.fromkeys(vals.tolist()))}
    first_s = {v: k for k, v in enumerate(dict.fromkeys(strs))}
    offs, data = _offs_data(strs)
    with api.forced(mode):
        ci, fi = api.factorize(False, vals.astype(np.int64), np.zeros(2, np.int64), np.zeros(1, np.uint8))
        cs, fs = api.factorize(True, np.zeros(1, np.int64), offs, data)
    assert ci.tolist() == [first_i[v] for v in vals.tolist()] and cs.tolist() == [first_s[v] for v in strs]
    assert vals[fi].tolist() == list(first_i) and [strs[i] for i in fs] == list(first_s)


def test_without_module_nor_numba_one_line(tmp_path):
    # a kernel that must run on the JIT where numba cannot be imported: one line and status 2, no traceback
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text("a 0 x 1\n")
    r.write_text("a Q0 x 1 1.0 s\n")
    code = ("import sys; sys.modules['numba'] = None\n"
            "from ranklens.cli import main\n"
            f"main(['eval', {str(q)!r}, {str(r)!r}, '-m', 'mrr'])\n")
    env = dict(os.environ, RANKLENS_KERNELS="jit")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 2 and out.stdout == "", out
    [line] = out.stderr.strip().splitlines()
    assert "numba, which would compile them instead, cannot be imported" in line, line


def test_warmup_runs_its_evaluations_without_a_refusal_escaping():
    """`ranklens warmup --jit` (run by `make install-test`) evaluates every preset on small files; a measure a
    preset refuses must not stop it (err@10 under trec_eval did, once presets refused what their peer lacks)."""
    from ranklens._cli import warmup as _warmup

    assert _warmup._run().startswith("ranklens: kernels compiled and cached in ")
