"""Malformed files of every format through ``ranklens.evaluate`` and the CLI (``eval``, ``compare``).

Each case is either read, with the number checked by hand (CR or CRLF line endings, a byte-order mark,
gzip give what the plain file gives), or refused with one of ranklens' errors naming the file; through
the CLI a refusal is exactly one line on stderr and exit status 2, never a traceback. A Hypothesis
test feeds mutations of valid files (bytes flipped, cut, spliced) to every reader with the same
assertion.

The valid data, by hand (trec_eval's NDCG: gain = label, discount log2(rank + 1)):
q1 judges d1=1, d2=0, d3=2 and ranks d2, d3, d1: DCG = 2/log2(3) + 1/log2(4), ideal 2 + 1/log2(3);
q2 judges d1=1, d4=0 and ranks d4, d1: DCG = 1/log2(3), ideal 1.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import math
import os
from pathlib import Path

import pytest

import ranklens
from ranklens.cli import main
from ranklens.errors import RanklensError

Q1 = (2 / math.log2(3) + 1 / math.log2(4)) / (2 + 1 / math.log2(3))
Q2 = (1 / math.log2(3)) / 1
NDCG = (Q1 + Q2) / 2

#: (query, item, label) and (query, item, rank, score)
QRELS = [("q1", "d1", 1), ("q1", "d2", 0), ("q1", "d3", 2), ("q2", "d1", 1), ("q2", "d4", 0)]
RUN = [("q1", "d2", 1, 3.0), ("q1", "d3", 2, 2.0), ("q1", "d1", 3, 1.0), ("q2", "d4", 1, 2.0), ("q2", "d1", 2, 1.0)]

QRELS_TXT = "".join(f"{q} 0 {d} {lab}\n" for q, d, lab in QRELS).encode()
RUN_TXT = "".join(f"{q} Q0 {d} {r} {s} sys\n" for q, d, r, s in RUN).encode()
RUN_CSV = ("query,item,score\n" + "".join(f"{q},{d},{s}\n" for q, d, _, s in RUN)).encode()
QRELS_CSV = ("query,item,relevance\n" + "".join(f"{q},{d},{lab}\n" for q, d, lab in QRELS)).encode()
RUN_JSONL = "".join(json.dumps({"query": q, "item": d, "score": s}) + "\n" for q, d, _, s in RUN).encode()
QRELS_JSONL = "".join(json.dumps({"query": q, "item": d, "relevance": lab}) + "\n" for q, d, lab in QRELS).encode()
RUN_JSON = json.dumps({q: {d: s for qq, d, _, s in RUN if qq == q} for q in ("q1", "q2")}).encode()
QRELS_JSON = json.dumps({q: {d: lab for qq, d, lab in QRELS if qq == q} for q in ("q1", "q2")}).encode()
RUN_JSON_LIST = json.dumps([{"query": q, "item": d, "score": s} for q, d, _, s in RUN]).encode()


def _parquet(rows: list[dict]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), sink)
    return sink.getvalue()


def _read_cases() -> list[tuple[str, str, str, bytes]]:
    """Files that must be read, giving NDCG ``NDCG``: (id, role, file name, bytes)."""
    cases = []
    for role, name, data in (("run", "run.txt", RUN_TXT), ("qrels", "qrels.txt", QRELS_TXT),
                             ("run", "run.csv", RUN_CSV), ("qrels", "qrels.csv", QRELS_CSV),
                             ("run", "run.tsv", RUN_CSV.replace(b",", b"\t")),
                             ("run", "run.jsonl", RUN_JSONL), ("qrels", "qrels.jsonl", QRELS_JSONL),
                             ("run", "run.json", RUN_JSON), ("qrels", "qrels.json", QRELS_JSON),
                             ("run", "list.json", RUN_JSON_LIST)):
        stem = name.replace(".", "_")
        cases += [
            (f"{stem}-plain", role, name, data),
            (f"{stem}-crlf", role, name, data.replace(b"\n", b"\r\n")),
            (f"{stem}-bom", role, name, b"\xef\xbb\xbf" + data),
            (f"{stem}-bom-crlf", role, name, b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n")),
            (f"{stem}-no-final-newline", role, name, data.rstrip(b"\n")),
            (f"{stem}-gzip", role, name + ".gz", gzip.compress(data)),
        ]
        if not name.endswith(".json"):  # a JSON document has no lines; the rest read old-Mac files
            cases.append((f"{stem}-cr", role, name, data.replace(b"\n", b"\r")))
            cases.append((f"{stem}-blank-lines", role, name, data.replace(b"\n", b"\n\n")))
    for role, name, data in (("run", "run.txt", RUN_TXT), ("qrels", "qrels.txt", QRELS_TXT)):
        stem = name.replace(".", "_")
        cases += [
            (f"{stem}-tabs", role, name, data.replace(b" ", b"\t")),
            (f"{stem}-many-spaces", role, name, data.replace(b" ", b"   ")),
            (f"{stem}-trailing-space", role, name, data.replace(b"\n", b"  \n")),
            (f"{stem}-comment", role, name, b"# a comment\n" + data),
            (f"{stem}-cr-comment", role, name, (b"# a comment\n" + data).replace(b"\n", b"\r")),
        ]
    cases.append(("run_parquet", "run", "run.parquet",
                  _parquet([{"query": q, "item": d, "score": s} for q, d, _, s in RUN])))
    return cases


def _bad_number_cases() -> list[tuple[str, str, str, bytes]]:
    """Every numeric column of every format holding a value that is no finite number."""
    cases = []
    for tok in ("nan", "NaN", "inf", "-inf", "Infinity", "1e999", "-1e400", "", "abc", "0x10", "1,5", "--1"):
        t = tok.encode()
        label = tok or "empty"
        # TREC: an empty field is a missing field, so the line has the wrong number of fields
        cases.append((f"trec-run-score-{label}", "run", "run.txt",
                      RUN_TXT.replace(b" 2.0 sys", b" " + t + b" sys", 1)))
        cases.append((f"trec-qrels-label-{label}", "qrels", "qrels.txt", QRELS_TXT.replace(b"d3 2", b"d3 " + t, 1)))
        cases.append((f"csv-score-{label}", "run", "run.csv", RUN_CSV.replace(b",2.0\n", b"," + t + b"\n", 1)))
        cases.append((f"csv-label-{label}", "qrels", "qrels.csv", QRELS_CSV.replace(b"d3,2", b"d3," + t, 1)))
        cases.append((f"tsv-score-{label}", "run", "run.tsv",
                      RUN_CSV.replace(b",2.0\n", b"," + t + b"\n", 1).replace(b",", b"\t")))
    for val, label in (("NaN", "nan"), ("Infinity", "inf"), ("-Infinity", "-inf"), ("null", "null"),
                       ('"abc"', "text"), ("[1, 2]", "list"), ('{"a": 1}', "object"), ("1" * 400, "400-digits"),
                       ("1e400", "1e400")):
        v = val.encode()
        cases.append((f"jsonl-score-{label}", "run", "run.jsonl",
                      RUN_JSONL.replace(b'"score": 2.0', b'"score": ' + v, 1)))
        cases.append((f"jsonl-label-{label}", "qrels", "qrels.jsonl",
                      QRELS_JSONL.replace(b'"item": "d3", "relevance": 2', b'"item": "d3", "relevance": ' + v, 1)))
        cases.append((f"json-score-{label}", "run", "run.json", RUN_JSON.replace(b'"d3": 2.0', b'"d3": ' + v, 1)))
        cases.append((f"json-label-{label}", "qrels", "qrels.json", QRELS_JSON.replace(b'"d3": 2', b'"d3": ' + v, 1)))
        cases.append((f"jsonlist-score-{label}", "run", "list.json",
                      RUN_JSON_LIST.replace(b'"score": 2.0', b'"score": ' + v, 1)))
    for val, label in ((float("nan"), "nan"), (float("inf"), "inf"), (None, "null")):
        rows = [{"query": q, "item": d, "score": (val if (q, d) == ("q1", "d3") else s)} for q, d, _, s in RUN]
        cases.append((f"parquet-score-{label}", "run", "run.parquet", _parquet(rows)))
        rows = [{"query": q, "item": d, "relevance": (val if (q, d) == ("q1", "d3") else lab)} for q, d, lab in QRELS]
        cases.append((f"parquet-label-{label}", "qrels", "qrels.parquet", _parquet(rows)))
    # one table holding labels and scores: a NaN or an infinity is refused (an empty cell says "not judged")
    both = b"query,item,relevance,score\nq1,d1,1,1.0\nq1,d2,0,3.0\nq1,d3,2,2.0\n"
    for tok in (b"nan", b"inf", b"-inf", b"NaN"):
        cases.append((f"both-csv-score-{tok.decode()}", "both", "both.csv", both.replace(b",3.0", b"," + tok)))
        cases.append((f"both-csv-label-{tok.decode()}", "both", "both.csv",
                      both.replace(b"d3,2,", b"d3," + tok + b",")))
    return cases


def _structure_cases() -> list[tuple[str, str, str, bytes]]:
    """Files whose shape is wrong: field counts, truncation, encodings, garbage, nesting."""
    cases = []
    for n in (1, 2, 3, 4, 5):
        fields = ["q1", "Q0", "d9", "4", "0.5", "sys", "x", "y", "z", "w", "v", "u"][:n]
        cases.append((f"trec-run-{n}-fields", "run", "run.txt", RUN_TXT + " ".join(fields).encode() + b"\n"))
    for n in (1, 2, 3, 5, 6):
        fields = ["q1", "0", "d9", "1", "x", "y"][:n]
        cases.append((f"trec-qrels-{n}-fields", "qrels", "qrels.txt", QRELS_TXT + " ".join(fields).encode() + b"\n"))
    # two lines run together, a line cut short (a truncated download)
    cases.append(("trec-qrels-joined", "qrels", "qrels.txt", QRELS_TXT.replace(b"1\nq1 0 d2", b"1 q1 0 d2", 1)))
    # cut inside a line, leaving it fewer fields than it needs (a cut inside the tag leaves a valid line)
    for cut in (5, 12, 33, len(RUN_TXT) - 6):
        data = RUN_TXT[:cut]
        assert len(data.split(b"\n")[-1].split()) < 6
        cases.append((f"trec-run-truncated-{cut}", "run", "run.txt", data))
    for cut in (3, 8, 27, len(QRELS_TXT) - 3):
        data = QRELS_TXT[:cut]
        assert len(data.split(b"\n")[-1].split()) < 4
        cases.append((f"trec-qrels-truncated-{cut}", "qrels", "qrels.txt", data))
    # a qrels given as the run and the other way round
    cases.append(("qrels-as-run", "run", "run.txt", QRELS_TXT))
    cases.append(("run-as-qrels", "qrels", "qrels.txt", RUN_TXT))
    # encodings
    for role, name, data in (("run", "run.txt", RUN_TXT), ("qrels", "qrels.txt", QRELS_TXT),
                             ("run", "run.csv", RUN_CSV), ("run", "run.jsonl", RUN_JSONL),
                             ("run", "run.json", RUN_JSON), ("run", "run.tsv", RUN_CSV.replace(b",", b"\t"))):
        stem = name.replace(".", "_")
        for bad, label in ((b"\xff", "ff"), (b"\xc3", "cut-2-byte"), (b"\xed\xa0\x80", "surrogate"),
                           (b"\xc0\xaf", "overlong"), (b"\xe9", "latin1")):
            cases.append((f"{stem}-utf8-{label}", role, name, data.replace(b"d3", b"d" + bad + b"3", 1)))
        cases.append((f"{stem}-utf16", role, name, b"\xff\xfe" + data.decode().encode("utf-16-le")))
        cases.append((f"{stem}-empty", role, name, b""))
        cases.append((f"{stem}-blank", role, name, b"\n \n\t\n"))
        cases.append((f"{stem}-bom-only", role, name, b"\xef\xbb\xbf"))
        cases.append((f"{stem}-nul", role, name, b"\x00" * 64))
        cases.append((f"{stem}-garbage", role, name, bytes(range(256)) * 4))
        cases.append((f"{stem}-gzip-truncated", role, name + ".gz", gzip.compress(data)[:-9]))
        cases.append((f"{stem}-gzip-garbage", role, name + ".gz", b"\x1f\x8b" + b"\x00garbage" * 10))
        cases.append((f"{stem}-only-comment", role, name, b"# nothing here\n"))
    # CSV / TSV
    cases += [
        ("csv-duplicate-header", "run", "run.csv", RUN_CSV.replace(b"query,item,score", b"query,item,score,score", 1)
         .replace(b"\n", b",1\n").replace(b"score,score,1", b"score,score", 1)),
        ("csv-duplicate-id-header", "run", "run.csv", b"query,query,item,score\nq1,q1,d1,1\n"),
        ("csv-header-only", "run", "run.csv", b"query,item,score\n"),
        ("csv-no-score-column", "run", "run.csv", b"query,item,foo\nq1,d1,1\n"),
        ("csv-no-query-column", "run", "run.csv", b"foo,item,score\nq1,d1,1\n"),
        ("csv-ragged-row", "run", "run.csv", RUN_CSV + b"q1,d9\n"),
        ("csv-extra-cell", "run", "run.csv", RUN_CSV + b"q1,d9,1.0,7\n"),
        ("csv-unclosed-quote", "run", "run.csv", RUN_CSV + b'"q1,d9,1.0\n'),
        ("csv-huge-number", "run", "run.csv", RUN_CSV.replace(b",2.0\n", b"," + b"9" * 400 + b"\n", 1)),
        ("csv-label-huge-int", "qrels", "qrels.csv", QRELS_CSV.replace(b"d3,2", b"d3," + b"9" * 400, 1)),
        ("csv-semicolons", "run", "run.csv", RUN_CSV.replace(b",", b";")),
        ("tsv-with-commas", "run", "run.tsv", RUN_CSV),
        ("csv-duplicate-row", "run", "run.csv", RUN_CSV + b"q1,d1,5.0\n"),
    ]
    # JSON Lines and JSON
    cases += [
        ("jsonl-list-column", "run", "run.jsonl", RUN_JSONL.replace(b'"item": "d3"', b'"item": ["d3", "d4"]', 1)),
        ("jsonl-struct-column", "run", "run.jsonl", RUN_JSONL.replace(b'"query": "q1"', b'"query": {"id": "q1"}')),
        ("jsonl-struct-query", "run", "run.jsonl", RUN_JSONL.replace(b'"query": "q2"', b'"query": {"id": 2}')),
        ("jsonl-list-score", "run", "run.jsonl", RUN_JSONL.replace(b'"score": ', b'"score": [1, ').replace(
            b"}\n", b"]}\n")),
        ("jsonl-truncated", "run", "run.jsonl", RUN_JSONL[:-7]),
        ("jsonl-not-object", "run", "run.jsonl", RUN_JSONL + b"[1, 2, 3]\n"),
        # pyarrow's JSON reader crashes the process (segmentation fault) on a first line `null`
        ("jsonl-first-null", "run", "run.jsonl", b"null\n" + RUN_JSONL),
        ("jsonl-only-null", "run", "run.jsonl", b"\n  null"),
        ("jsonl-first-number", "run", "run.jsonl", b"5\n" + RUN_JSONL),
        ("jsonl-first-list", "qrels", "qrels.jsonl", b"[1]\n" + QRELS_JSONL),
        ("jsonl-null-line", "run", "run.jsonl", RUN_JSONL + b"null\n"),
        ("jsonl-garbage-line", "run", "run.jsonl", RUN_JSONL + b"hello\n"),
        ("jsonl-mixed-types", "run", "run.jsonl", RUN_JSONL + b'{"query": 5, "item": "d1", "score": 1}\n'),
        ("jsonl-huge-int-id", "run", "run.jsonl",
         RUN_JSONL + b'{"query": ' + b"9" * 400 + b', "item": "d", "score": 1}\n'),
        ("json-list-of-numbers", "run", "run.json", b"[1, 2, 3]"),
        ("json-list-of-lists", "run", "run.json", b"[[1, 2], [3, 4]]"),
        ("json-string", "run", "run.json", b'"hello"'),
        ("json-number", "run", "run.json", b"42"),
        ("json-null", "run", "run.json", b"null"),
        ("json-deep-list", "run", "run.json", b"[" * 100000 + b"]" * 100000),
        ("json-deep-dict", "run", "run.json", b'{"a":' * 100000 + b"1" + b"}" * 100000),
        ("json-nested-3", "run", "run.json", b'{"q1": {"d1": {"x": 1}}}'),
        ("json-query-to-list", "run", "run.json", b'{"q1": [1, 2]}'),
        ("json-query-to-number", "run", "run.json", b'{"q1": 3}'),
        ("json-empty-object", "run", "run.json", b"{}"),
        ("json-empty-list", "run", "run.json", b"[]"),
        ("json-empty-inner", "run", "run.json", b'{"q1": {}}'),
        ("json-truncated", "run", "run.json", RUN_JSON[:-3]),
        ("json-trailing-garbage", "run", "run.json", RUN_JSON + b" x"),
        ("json-huge-int-digits", "run", "run.json", b'{"q1": {"d1": ' + b"9" * 5000 + b"}}"),
        ("json-list-huge-int", "run", "list.json", b'[{"query": "q1", "item": "d1", "score": ' + b"9" * 400 + b"}]"),
        ("json-list-mixed", "run", "list.json", b'[{"query": "q1", "item": "d1", "score": 1}, 5]'),
        ("json-list-struct-id", "run", "list.json", b'[{"query": {"a": 1}, "item": "d1", "score": 1}]'),
        ("json-list-list-id", "run", "list.json", b'[{"query": [1], "item": "d1", "score": 1}]'),
        ("json-qrels-as-list-of-numbers", "qrels", "qrels.json", b"[0, 1, 2]"),
    ]
    # Parquet
    cases += [
        ("parquet-truncated", "run", "run.parquet",
         _parquet([{"query": q, "item": d, "score": s} for q, d, _, s in RUN])[:-20]),
        ("parquet-magic-only", "run", "run.parquet", b"PAR1"),
        ("parquet-garbage", "run", "run.parquet", b"PAR1" + bytes(range(256)) + b"PAR1"),
        ("parquet-list-column", "run", "run.parquet", _parquet([{"query": "q1", "item": ["d1"], "score": 1.0}])),
        ("parquet-struct-column", "run", "run.parquet",
         _parquet([{"query": {"id": "q1"}, "item": "d1", "score": 1.0}])),
        ("parquet-list-score", "run", "run.parquet", _parquet([{"query": "q1", "item": "d1", "score": [1.0]}])),
        ("parquet-no-rows", "run", "run.parquet", _parquet_empty()),
        ("parquet-bad-utf8", "run", "run.parquet", _parquet_bad_utf8()),
    ]
    # LETOR and predictions
    cases += [
        ("letor-nan-label", "qrels", "train.svmlight", b"nan qid:1 1:0.5\n1 qid:1 1:0.3\n"),
        ("letor-inf-label", "qrels", "train.svmlight", b"inf qid:1 1:0.5\n1 qid:1 1:0.3\n"),
        ("letor-empty-qid", "qrels", "train.svmlight", b"1 qid: 1:0.5\n"),
        ("letor-mixed-qid", "qrels", "train.svmlight", b"1 qid:1 1:0.5\n0 1:0.3\n"),
        ("letor-bad-label", "qrels", "train.svmlight", b"x qid:1 1:0.5\n"),
        ("letor-utf8", "qrels", "train.svmlight", b"1 qid:\xff 1:0.5\n"),
        ("letor-no-group-file", "qrels", "train.svmlight", b"1 1:0.5\n0 1:0.3\n"),
    ]
    return cases


def _parquet_empty() -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(pa.table({"query": pa.array([], pa.string()), "item": pa.array([], pa.string()),
                             "score": pa.array([], pa.float64())}), sink)
    return sink.getvalue()


def _parquet_bad_utf8() -> bytes:
    """A Parquet file whose string column holds the byte 0xff (written as binary, then relabelled)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    good = _parquet([{"query": "q1", "item": "dX", "score": 1.0}, {"query": "q1", "item": "d2", "score": 0.5}])
    assert good.count(b"dX") >= 1
    out = good.replace(b"dX", b"d\xff")
    # the statistics hold the bytes too; a reader that checks them refuses earlier: either way an error
    pq.ParquetFile(pa.BufferReader(out))  # still a readable Parquet file
    return out


READ = _read_cases()
REFUSE = _bad_number_cases() + _structure_cases()


def _write(tmp: Path, name: str, data: bytes) -> Path:
    p = tmp / name
    p.write_bytes(data)
    return p


def _pair(tmp: Path, role: str, path: Path) -> tuple[Path, Path | None]:
    if role == "run":
        return _write(tmp, "good_qrels.txt", QRELS_TXT), path
    if role == "qrels":
        return path, _write(tmp, "good_run.txt", RUN_TXT)
    return path, None


def _cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return code, out.getvalue(), err.getvalue()


def test_the_corpus_is_large_and_names_are_unique():
    names = [c[0] for c in READ + REFUSE]
    assert len(names) == len(set(names))
    assert len(names) >= 300


@pytest.mark.parametrize("case", READ, ids=[c[0] for c in READ])
def test_readable_files_give_the_hand_computed_number(case, tmp_path):
    _, role, name, data = case
    judgments, run = _pair(tmp_path, role, _write(tmp_path, name, data))
    res = ranklens.evaluate(str(judgments), str(run), ["ndcg", "num_ret"])
    assert res.aggregate["ndcg"] == pytest.approx(NDCG, abs=1e-12)
    assert res.aggregate["num_ret"] == 5  # both ranked lists read whole, as many lines as there are
    code, out, err = _cli(["eval", str(judgments), str(run), "-m", "ndcg", "--format", "json"])
    assert code == 0, err
    assert json.loads(out)["aggregate"]["ndcg"] == pytest.approx(NDCG, abs=1e-12)


def _check_refused(tmp: Path, role: str, path: Path) -> None:
    judgments, run = _pair(tmp, role, path)
    args = [str(judgments)] + ([str(run)] if run is not None else [])
    with pytest.raises(RanklensError) as info:
        ranklens.evaluate(*args, measures=["ndcg"])
    assert path.name in str(info.value), str(info.value)
    assert "\n" not in str(info.value)
    for cmd in (["eval", *args, "-m", "ndcg"],
                ["compare", str(judgments), *(args[1:] or [str(judgments)]),
                 _write(tmp, "other_run.txt", RUN_TXT).as_posix(), "-m", "ndcg", "--resamples", "100"]):
        code, _, err = _cli(cmd)
        assert code == 2, (cmd[0], err)
        lines = err.strip("\n").split("\n")
        assert len(lines) == 1 and lines[0], (cmd[0], err)
        assert "Traceback" not in err
        assert path.name in err, (cmd[0], err)


@pytest.mark.parametrize("case", REFUSE, ids=[c[0] for c in REFUSE])
def test_malformed_files_are_refused_in_one_line(case, tmp_path):
    _, role, name, data = case
    _check_refused(tmp_path, role, _write(tmp_path, name, data))


def test_a_symlink_loop_is_refused(tmp_path):
    loop = tmp_path / "run.txt"
    os.symlink(loop, loop)
    _check_refused(tmp_path, "run", loop)


def test_a_file_name_with_a_nul_byte_is_refused(tmp_path):
    qrels = str(_write(tmp_path, "q.txt", QRELS_TXT))
    with pytest.raises(RanklensError, match="NUL byte"):
        ranklens.evaluate(qrels, str(tmp_path / "run.txt") + "\x00x", ["ndcg"])


def test_a_directory_is_refused(tmp_path):
    d = tmp_path / "run.txt.d"
    d.mkdir()
    with pytest.raises(RanklensError, match="run.txt.d"):
        ranklens.evaluate(str(_write(tmp_path, "q.txt", QRELS_TXT)), str(d), ["ndcg"])


def test_errors_name_the_line_and_its_text(tmp_path):
    run = _write(tmp_path, "run.txt", RUN_TXT.replace(b"d1 3 1.0", b"d1 3 nan", 1))
    with pytest.raises(RanklensError, match=r"run\.txt, line 3: score is nan.*'q1 Q0 d1 3 nan sys'"):
        ranklens.evaluate(str(_write(tmp_path, "q.txt", QRELS_TXT)), str(run), ["ndcg"])
    # old-Mac line endings count lines as trec_eval's newline would
    run = _write(tmp_path, "run_cr.txt", RUN_TXT.replace(b"d1 3 1.0", b"d1 3 inf", 1).replace(b"\n", b"\r"))
    with pytest.raises(RanklensError, match=r"line 3: score is inf"):
        ranklens.evaluate(str(_write(tmp_path, "q.txt", QRELS_TXT)), str(run), ["ndcg"])
    csv = _write(tmp_path, "run.csv", RUN_CSV.replace(b"d1,1.0", b"d1,-inf", 1))
    with pytest.raises(RanklensError, match=r"run\.csv, line 4: score \('score'\) is -inf.*'q1,d1,-inf'"):
        ranklens.evaluate(str(_write(tmp_path, "q.txt", QRELS_TXT)), str(csv), ["ndcg"])
    bad = _write(tmp_path, "bad.txt", RUN_TXT.replace(b"q2 Q0 d4", b"q2 Q0 d\xff4", 1))
    with pytest.raises(RanklensError, match=r"bad\.txt, line 4: not UTF-8"):
        ranklens.evaluate(str(_write(tmp_path, "q.txt", QRELS_TXT)), str(bad), ["ndcg"])


def test_run_lines_past_six_fields_are_read_as_trec_eval_reads_them(tmp_path):
    # get_trec_results.c skips the rest of a run line after the tag ("Skip over rest of line"); its own
    # test run results.trunc has such lines. Fewer than six fields is "Malformed line" there and here.
    run = _write(tmp_path, "run.txt", RUN_TXT.replace(b"sys\n", b"sys more junk\there\n"))
    res = ranklens.evaluate(str(_write(tmp_path, "q.txt", QRELS_TXT)), str(run), ["ndcg", "num_ret"])
    assert res.aggregate["ndcg"] == pytest.approx(NDCG, abs=1e-12)
    assert res.aggregate["num_ret"] == 5


def test_a_bom_does_not_become_part_of_the_first_query(tmp_path):
    run = _write(tmp_path, "run.txt", b"\xef\xbb\xbf" + RUN_TXT)
    res = ranklens.evaluate(str(_write(tmp_path, "q.txt", QRELS_TXT)), str(run), ["ndcg"])
    assert sorted(map(str, res.per_query_dict("ndcg"))) == ["q1", "q2"]


def test_one_table_with_both_columns_keeps_empty_cells_as_unjudged_and_unranked(tmp_path):
    # d2 unjudged (ranked first), d4 judged relevant but not ranked: DCG = 1/log2(3), ideal 1 + 1/log2(3)
    both = _write(tmp_path, "both.csv", b"query,item,relevance,score\nq1,d2,,3.0\nq1,d1,1,2.0\nq1,d4,1,\n")
    with pytest.raises(ranklens.FormatError, match=r"both.csv, line 2: relevance \('relevance'\) is missing"):
        ranklens.evaluate(str(both), None, ["ndcg"])  # empty cells are refused unless asked for
    res = ranklens.evaluate(str(both), None, ["ndcg"], missing="exclude")
    assert res.aggregate["ndcg"] == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)), abs=1e-12)
    assert [(e.count, e.examples) for e in res.excluded] == [(1, ("query q1 item d2",)), (1, ("query q1 item d4",))]


@pytest.mark.parametrize("kind", ["pandas", "polars", "arrow"])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, None])
def test_in_memory_tables_refuse_non_finite_values_naming_the_row(kind, bad):
    rows = {"query": ["q1", "q1", "q1"], "item": ["a", "b", "c"], "score": [1.0, bad, 0.5]}
    if kind == "pandas":
        pd = pytest.importorskip("pandas")
        table = pd.DataFrame(rows)
    elif kind == "polars":
        pl = pytest.importorskip("polars")
        table = pl.DataFrame(rows, strict=False)
    else:
        pa = pytest.importorskip("pyarrow")
        table = pa.Table.from_pydict(rows)
    with pytest.raises(RanklensError, match=r"row 1: score \('score'\) is (nan|inf|-inf|missing)"):
        ranklens.evaluate({"q1": {"a": 1, "b": 0}}, table, ["ndcg"])


# ---- fuzzing: mutations of valid files, through every reader ------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

#: (role, file name, valid bytes) for every reader
FUZZ_BASES = [
    ("run", "run.txt", RUN_TXT), ("qrels", "qrels.txt", QRELS_TXT), ("run", "run.csv", RUN_CSV),
    ("qrels", "qrels.csv", QRELS_CSV), ("run", "run.tsv", RUN_CSV.replace(b",", b"\t")),
    ("run", "run.jsonl", RUN_JSONL),
    ("qrels", "qrels.jsonl", QRELS_JSONL), ("run", "run.json", RUN_JSON), ("run", "list.json", RUN_JSON_LIST),
    ("run", "run.parquet", _parquet([{"query": q, "item": d, "score": s} for q, d, _, s in RUN])),
    ("qrels", "train.svmlight", b"1 qid:1 1:0.5\n0 qid:1 1:0.3\n2 qid:2 1:0.1\n0 qid:2 1:0.9\n"),
    ("run", "run.txt.gz", gzip.compress(RUN_TXT)), ("run", "run", RUN_TXT), ("qrels", "qrels", QRELS_CSV),
]
SPECIAL = [b"nan", b"inf", b"-inf", b"", b"1e999", b"\r", b"\r\n", b"\xef\xbb\xbf", b"\xff", b"\x00", b"#", b'"',
           b",", b"\t", b" ", b"\n", b"null", b"[", b"{", b"9" * 400, b"-0", b"1e-400", b"\xc3", b"qid:", b"Q0"]


@st.composite
def _mutated(draw: st.DrawFn) -> tuple[str, str, bytes]:
    role, name, data = draw(st.sampled_from(FUZZ_BASES))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "cut", "insert", "special", "dup", "drop"]))
        n = len(data)
        i = draw(st.integers(0, max(n - 1, 0)))
        if op == "flip" and n:
            data = data[:i] + bytes([draw(st.integers(0, 255))]) + data[i + 1:]
        elif op == "cut":
            data = data[:i]
        elif op == "insert":
            data = data[:i] + draw(st.binary(max_size=8)) + data[i:]
        elif op == "special":
            j = draw(st.integers(i, min(n, i + 6)))
            data = data[:i] + draw(st.sampled_from(SPECIAL)) + data[j:]
        elif op in ("dup", "drop"):
            lines = data.split(b"\n")
            k = draw(st.integers(0, len(lines) - 1))
            lines[k:k + 1] = [lines[k], lines[k]] if op == "dup" else []
            data = b"\n".join(lines)
    return role, name, data


def _number_or_one_line(tmp: Path, role: str, name: str, data: bytes, cli: bool) -> None:
    path = _write(tmp, name, data)
    judgments, run = _pair(tmp, role, path)
    try:
        res = ranklens.evaluate(str(judgments), str(run), measures=["ndcg", "num_ret"])
    except RanklensError as exc:
        msg = str(exc)
        assert "\n" not in msg and (name in msg or "good_" in msg), msg
    else:
        v = res.aggregate["ndcg"]
        assert (math.isfinite(v) and 0 <= v <= 1) or res.excluded, v
    if cli:
        code, _, err = _cli(["eval", str(judgments), str(run), "-m", "ndcg"])
        assert code in (0, 2), err
        assert "Traceback" not in err
        if code == 2:
            assert len(err.strip("\n").split("\n")) == 1, err


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(case=_mutated())
def test_fuzzed_files_give_a_number_or_one_clear_error(case, tmp_path_factory):
    role, name, data = case
    _number_or_one_line(tmp_path_factory.mktemp("fuzz"), role, name, data, cli=True)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(case=_mutated())
def test_fuzzed_files_long_run(case, tmp_path_factory):
    role, name, data = case
    _number_or_one_line(tmp_path_factory.mktemp("fuzz"), role, name, data, cli=True)


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(data=st.binary(max_size=300), name=st.sampled_from([b[1] for b in FUZZ_BASES]),
       role=st.sampled_from(["run", "qrels"]))
def test_random_bytes_give_a_number_or_one_clear_error(data, name, role, tmp_path_factory):
    _number_or_one_line(tmp_path_factory.mktemp("bytes"), role, name, data, cli=False)


def test_line_endings_across_the_slices_of_a_large_file(tmp_path):
    # over 4 MiB: the bare-CR search works slice by slice; a CRLF or a bare CR may straddle a slice's end
    lines = [f"q{i % 97} Q0 d{i} {i} {(i * 7919) % 1000 / 10} sys" for i in range(250_000)]
    lf = ("\n".join(lines) + "\n").encode()
    assert len(lf) > 1 << 22
    ref = ranklens.read_rankings(str(_write(tmp_path, "lf.txt", lf)))
    for name, data in (("cr.txt", lf.replace(b"\n", b"\r")), ("crlf.txt", lf.replace(b"\n", b"\r\n"))):
        got = ranklens.read_rankings(str(_write(tmp_path, name, data)))
        assert len(got) == 250_000
        assert got.score.tolist() == ref.score.tolist()
        assert list(map(str, got.item.to_pylist()))[-1] == "d249999"
