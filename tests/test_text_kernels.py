"""The text kernels: splitting lines into fields, and the exact fast path for decimal numbers."""

from __future__ import annotations

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
        "123456789012345.6", "1e22", "1e-22", "4.35", "17.0230", "00012", "0e400", "900719925474099"]
# valid numbers outside the fast path (mantissa >= 2**53 / 10, |exponent| > 22): parsed by the general parser
SLOW = ["9007199254740993", "1e23", "1e-23", "1.7976931348623157e308", "5e-324", "12.500000000000000000"]
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
