"""The text kernels: splitting lines into fields, and the exact fast path for decimal numbers."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ranklens
from ranklens._kernels import api


def _spans(tokens: list[str]):
    text = " ".join(tokens).encode()
    buf = np.frombuffer(text, np.uint8)
    starts, ends, p = [], [], 0
    for t in tokens:
        starts.append(p)
        p += len(t.encode())
        ends.append(p)
        p += 1
    return buf, np.array(starts, np.int64), np.array(ends, np.int64)


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def _check(tokens: list[str], mode: str) -> None:
    buf, s, e = _spans(tokens)
    with api.forced(mode):
        vals, ok = api.parse_floats(buf, s, e)
    for tok, v, good in zip(tokens, vals, ok):
        if good:  # whatever the fast path accepts, it parses exactly as Python's float (correctly rounded)
            assert _bits(float(v)) == _bits(float(tok)), tok


FAST = ["0", "-0", "+0", "0.0", "-0.0", "1", "-1", "+1", "3.", ".5", "-.5", "1e5", "1E-5", "2.5e+3", "0.1", "0.3",
        "123456789012345.6", "1e22", "1e-22", "4.35", "17.0230", "00012", "0e400", "900719925474099",
        # Eisel-Lemire: mantissas of 2**53 and more (up to 19 digits), |exponent| > 22
        "9007199254740993", "1e23", "1e-23", "1.7976931348623157e308", "2.2250738585072014e-308",
        "9999999999999999999", "0.30000000000000004", "1.9216039673931276", "-4.940656458412465e-300",
        "12.500000000000000000", "0.000000000000000000000000000001234567890123456789"]
# valid numbers outside the fast path (20+ significant digits, subnormal, overflow): the general parser
SLOW = ["5e-324", "2.5e-310", "12.5000000000000000001", "18446744073709551616", "1.7976931348623159e308",
        "1e-400"]
NOT_PLAIN = ["", "-", ".", "e5", "1e", "1e+", "inf", "-inf", "nan", "NaN", "1.2.3", "0x10", "1,5", "1e12345", "abc",
             "١٢"]


@pytest.mark.parametrize("mode", ["aot", "jit"])
def test_edge_cases(mode, cut):
    _check(FAST + SLOW, mode)
    buf, s, e = _spans(FAST + SLOW + NOT_PLAIN)
    with api.forced(mode):
        vals, ok = api.parse_floats(buf, s, e)
    assert ok[: len(FAST)].all()
    assert not ok[len(FAST):].any()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(-1e6, 1e6).map(lambda x: f"{x:.6f}"),
    st.floats(-1e30, 1e30).map(lambda x: f"{x:.9e}"),
    st.integers(-10**18, 10**18).map(str),
    st.decimals(allow_nan=False, allow_infinity=False, places=8).map(str),
), min_size=1, max_size=40))
def test_fast_path_is_exact(tokens):
    tokens = [t for t in tokens if " " not in t]
    if tokens:
        _check(tokens, "aot")
        _check(tokens, "jit")


@pytest.mark.parametrize("mode", ["aot", "jit"])
def test_halfway_cases_round_to_even(mode):
    # exact midpoints between adjacent doubles (and one unit in the last digit either side), written
    # exactly in at most 19 digits: where the rounding rule alone decides; Python's float is the truth
    from decimal import Decimal

    rng = np.random.default_rng(7)
    tokens = []
    for _ in range(3000):
        mid = Decimal(2 * int(rng.integers(2**52, 2**53)) + 1) * Decimal(2) ** (int(rng.integers(-8, 12)) - 1)
        unit = Decimal(1).scaleb(mid.as_tuple().exponent)
        for text in (format(mid, "f"), format(mid + unit, "f"), format(mid - unit, "f")):
            if len(text.replace(".", "").strip("0")) <= 19:
                tokens.append(text)
    assert len(tokens) > 3000
    _check(tokens, mode)
    buf, s, e = _spans(tokens)
    with api.forced(mode):
        assert api.parse_floats(buf, s, e)[1].all()


def test_trec_run_scores_read_exactly(tmp_path):
    # scores written with every notation, read back equal to Python's float of the same text
    rng = np.random.default_rng(1)
    toks = [repr(float(x)) for x in rng.standard_normal(50) * 10.0 ** rng.integers(-30, 30, 50)]
    toks += ["1e300", "2.5e-310", "-0.0", "12.500000000000000000000", "0.1", "17"]
    run = tmp_path / "run.txt"
    run.write_text("".join(f"q Q0 d{i} {i + 1} {t} tag\n" for i, t in enumerate(toks)))
    rk = ranklens.read_rankings(str(run))
    got = np.asarray(rk.score)
    assert [_bits(float(v)) for v in got] == [_bits(float(t)) for t in toks]


@pytest.mark.parametrize("mode", ["aot", "jit"])
def test_split_fields_with_blank_and_comment_lines(mode, cut):
    lines = ["# header", "a b c", "", "   ", "d e", "# c", "f g h i", "  j  "]
    text = (("\n".join(lines) + "\n") * 40000).encode()  # > 1 MB: several chunks, gaps to close
    buf = np.frombuffer(text, np.uint8)
    with api.forced(mode):
        starts, ends, nf, line_no, ls, le = api.split_fields(buf, 3)
    # by hand: in each block of 8 lines, the data lines are 2, 5, 7 and 8, with 3, 2, 4 and 1 fields
    blocks = 40000
    assert starts.shape == (4 * blocks, 3)
    assert nf.tolist() == [3, 2, 4, 1] * blocks
    assert line_no.tolist() == [8 * b + i for b in range(blocks) for i in (2, 5, 7, 8)]
    row = 4 * 12345 + 2  # "f g h i" of block 12345
    assert [bytes(buf[starts[row, f]:ends[row, f]]) for f in range(3)] == [b"f", b"g", b"h"]
    assert bytes(buf[ls[row]:le[row]]) == b"f g h i"
    row = 4 * 39999 + 3  # "  j  " of the last block
    assert bytes(buf[starts[row, 0]:ends[row, 0]]) == b"j" and starts[row, 1] == -1 and ends[row, 2] == -1


def _by_python(text: bytes, fields: dict[int, str]):
    """The columns of every data line, split by Python (the reference for scan_columns)."""
    rows = [ln.split() for ln in text.split(b"\n")]
    rows = [r for r in rows if r and not r[0].startswith(b"#")]
    return rows, {f: [r[f] if f < len(r) else b"" for r in rows] for f in fields}


@pytest.mark.parametrize("mode", ["aot", "jit"])
@pytest.mark.parametrize("size", ["small", "large"])
def test_scan_columns_matches_python_split(mode, size, cut, monkeypatch):
    # blank lines, comments, tabs, CRLF, a missing last newline, UTF-8 ids, fewer fields than asked
    lines = ["# header", "q1 Q0 d1 1 2.5 run", "", "q1\tQ0  dé2 2 -1.5e3 run\r", "   ", "# c", "q2 Q0 d3 x 0.1 run",
             "  q2 Q0 d4 4 17", "q3 Q0"]
    blocks = 20 if size == "small" else 30000  # large: > 1 MB, several chunks and gaps on the JIT side too
    text = ("\n".join(lines * blocks)).encode()
    fields = {0: "str", 2: "str", 3: "num", 4: "num"}
    kind = np.array([1, 0, 1, 2, 2])
    col = np.array([0, 0, 1, 0, 1])
    buf = np.frombuffer(text, np.uint8)
    with api.forced(mode):
        lstart, nf, soffs, sdata, nvals, nok = api.scan_columns(buf, kind, col, 2, 2)
    rows, ref = _by_python(text, fields)
    assert nf.tolist() == [len(r) for r in rows]
    for j, f in enumerate((0, 2)):
        got = [bytes(sdata[j, soffs[j, i]:soffs[j, i + 1]]) for i in range(len(rows))]
        assert got == ref[f]
    for j, f in enumerate((3, 4)):
        for i, tok in enumerate(ref[f]):
            if tok == b"":
                assert np.isnan(nvals[j, i]) and nok[j, i]
            elif nok[j, i]:
                assert _bits(float(nvals[j, i])) == _bits(float(tok))
            else:
                assert tok == b"x"
    starts = [i for i, ln in enumerate(text.split(b"\n")) if ln.split() and not ln.split()[0].startswith(b"#")]
    line_offsets = np.cumsum([0] + [len(ln) + 1 for ln in text.split(b"\n")])
    assert lstart.tolist() == [int(line_offsets[i]) for i in starts]
    fs, fe = api.field_spans(buf, lstart[:7], 3)
    assert [bytes(buf[a:b]) if a >= 0 else None for a, b in zip(fs, fe)] == [r[3] if len(r) > 3 else None
                                                                            for r in rows[:7]]


def test_trec_reader_errors_name_the_line(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("# judged\nq1 0 d1 1\n\nq1 0 d2 high\n")
    with pytest.raises(ranklens.errors.FormatError, match=r"qrels.txt, line 4: relevance 'high' is not a number"):
        ranklens.read_judgments(str(qrels))
    qrels.write_text("q1 0 d1 1\nq1 0 d2 1 extra\n")
    with pytest.raises(ranklens.errors.FormatError, match=r"line 2: expected 4 fields .* got 5: 'q1 0 d2 1 extra'"):
        ranklens.read_judgments(str(qrels))
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 2.5 r\nq1 Q0 d2 2 inf r\n")
    with pytest.raises(ranklens.errors.FormatError, match=r"run.txt, line 2: score is inf"):
        ranklens.read_rankings(str(run))


def test_large_trec_files_are_mapped(tmp_path, monkeypatch):
    # files of at least MAP_MIN_BYTES are read through mmap: same values, same error lines
    from ranklens._input import opening as rio

    n_q, n_i = 3000, 40
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    with open(qrels, "w") as fq, open(run, "w") as fr:
        for q in range(n_q):
            for i in range(n_i):
                fq.write(f"query{q} 0 document{q}_{i} {1 if i in (0, 3) else 0}\n")
                fr.write(f"query{q} Q0 document{q}_{i} {i + 1} {100.0 - i:.15f} system\n")
    assert qrels.stat().st_size >= rio.MAP_MIN_BYTES and run.stat().st_size >= rio.MAP_MIN_BYTES
    mapped = []
    real = rio._map_file
    monkeypatch.setattr(rio, "_map_file", lambda p: mapped.append(p) or real(p))
    res = ranklens.evaluate(str(qrels), str(run), ["ndcg@10"], per_query=False)
    assert len(mapped) == 2
    # by hand: relevant at ranks 1 and 4 of every list, linear gain
    import math

    dcg = 1 + 1 / math.log2(5)
    assert res["ndcg@10"] == pytest.approx(dcg / (1 + 1 / math.log2(3)), rel=1e-12)
    with open(run, "a") as fr:
        fr.write("query1 Q0 extra 1 high system\n")
    line = n_q * n_i + 1
    with pytest.raises(ranklens.errors.FormatError, match=rf"run.txt, line {line}: score 'high' is not a number"):
        ranklens.read_rankings(str(run))
    # a gzip file of the same name is decompressed, not mapped
    import gzip

    gz = tmp_path / "qrels.gz"
    gz.write_bytes(gzip.compress(qrels.read_bytes()))
    monkeypatch.setattr(rio, "MAP_MIN_BYTES", 1)
    assert real(gz) is None and real(qrels) is not None
    assert len(ranklens.read_judgments(str(gz))) == n_q * n_i


def test_mapped_tables_read_as_before(tmp_path, monkeypatch):
    # CSV, Parquet and JSON Lines tables go to Arrow straight from the mapped file
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    from ranklens._input import opening as rio

    monkeypatch.setattr(rio, "MAP_MIN_BYTES", 1)
    mapped = []
    real = rio._map_file
    monkeypatch.setattr(rio, "_map_file", lambda p: mapped.append(p) or real(p))
    n = 2000
    q = [f"q{i // 20:03d}" for i in range(n)]
    table = pa.table({"query": q, "item": [f"d{i}" for i in range(n)],
                      "score": [float(-(i % 20)) for i in range(n)],
                      "relevance": [1 if i % 20 == 1 else 0 for i in range(n)]})
    pq.write_table(table, tmp_path / "t.parquet")
    pcsv.write_csv(table, tmp_path / "t.csv")
    with open(tmp_path / "t.jsonl", "w") as f:
        f.writelines(json.dumps(row) + "\n" for row in table.to_pylist())
    import math

    for name in ("t.parquet", "t.csv", "t.jsonl"):
        res = ranklens.evaluate(str(tmp_path / name), None, ["ndcg@10"], per_query=False)
        # by hand: the one relevant item of each query is ranked second
        assert res["ndcg@10"] == pytest.approx(1 / math.log2(3), rel=1e-12), name
    assert len(mapped) == 3


def test_str_ids_without_arrow():
    # the TREC readers' id form: offsets + bytes, converted to str and Arrow by the definition
    import pyarrow as pa

    from ranklens._input.ids import StrIds, concat_ids, filter_ids, ids_to_numpy, take_ids

    words = ["q1", "", "é-ü", "a\x00b", "x" * 5000, "q1", "\U0001F600"]
    raw = [w.encode() for w in words]
    offs = np.cumsum([0] + [len(b) for b in raw])
    ids = StrIds(offs, np.frombuffer(b"".join(raw), np.uint8))
    assert len(ids) == 7 and ids.to_pylist() == words and ids_to_numpy(ids).tolist() == words
    ascii_ids = StrIds(np.array([0, 2, 2, 5]), np.frombuffer(b"q1abc", np.uint8))
    assert ascii_ids.to_pylist() == ["q1", "", "abc"]  # the numpy decoding path
    assert StrIds(np.zeros(1, np.int64), np.zeros(0, np.uint8)).to_pylist() == []
    assert StrIds(np.zeros(3, np.int64), np.zeros(0, np.uint8)).to_pylist() == ["", ""]
    assert take_ids(ids, np.array([6, 0, 2])).to_pylist() == ["\U0001F600", "q1", "é-ü"]
    assert filter_ids(ids, np.array([w.startswith("q") for w in words])).to_pylist() == ["q1", "q1"]
    both = concat_ids(take_ids(ids, np.array([2, 3])), ascii_ids)
    assert isinstance(both, StrIds) and both.to_pylist() == ["é-ü", "a\x00b", "q1", "", "abc"]
    mixed = concat_ids(ascii_ids, pa.array(["z"], pa.large_string()))
    assert mixed.to_pylist() == ["q1", "", "abc", "z"]
    assert pa.array(ids).to_pylist() == words and pa.array(ids).type == pa.large_string()
    with pytest.raises(IndexError):
        ids.take([7])


def test_trec_files_with_utf8_ids(tmp_path):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("requête 0 doc-é 1\nrequête 0 doc-e 0\nq2 0 d😀 2\n", encoding="utf-8")
    run.write_text("requête Q0 doc-e 1 2.0 r\nrequête Q0 doc-é 2 1.0 r\nq2 Q0 d😀 1 1.0 r\n", encoding="utf-8")
    res = ranklens.evaluate(str(qrels), str(run), ["mrr"])
    # by hand: the relevant "doc-é" is second for "requête", first for q2
    assert res.per_query_dict("mrr") == {"q2": 1.0, "requête": 0.5}
    assert list(res.queries) == ["q2", "requête"]  # byte order
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"q1 0 d1 1\nq1 0 d\xff 1\n")
    with pytest.raises(ranklens.errors.FormatError, match=r"bad.txt, line 2: not UTF-8"):
        ranklens.read_judgments(str(bad))
