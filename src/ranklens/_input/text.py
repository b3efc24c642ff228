"""Text formats parsed by the compiled scanners: TREC qrels and runs, LETOR/svmlight, predictions.

Each reader takes a file's bytes and gives :class:`~ranklens.records.Records`;
every parse error names the file, the line number and the offending text. The rules shared with
every other reader (byte-order mark, line endings, UTF-8, finite values, TREC field counts) are
:mod:`ranklens._input.validate`'s.
Opening files, detecting formats and the tabular formats are in :mod:`ranklens.io`.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FormatError, InputError
from .buffers import StrIds, arrow_to_numpy
from .records import Records
from .validate import TREC_FIELDS, check_values, text_buffer, utf8_text

__all__ = ["is_float", "read_predictions", "read_svmlight", "read_trec_columns", "read_trec_eval_qrels",
           "read_trec_qrels", "read_trec_run", "text_lines"]


def is_float(tok: str) -> bool:
    """Whether ``tok`` parses as a float."""
    try:
        float(tok)
    except ValueError:
        return False
    return True


def text_lines(data: bytes, path: str) -> list[str]:
    """The lines of UTF-8 text (a byte-order mark dropped; an error names the line of the first bad byte)."""
    return utf8_text(data, path).splitlines()


def _split(data: bytes, path: str, max_fields: int) -> tuple[np.ndarray, ...]:
    """Fields of every data line (compiled; no Python object per line)."""
    from .._kernels.api import split_fields

    buf = text_buffer(data, path)
    if buf.size == 0:
        buf = np.zeros(1, np.uint8)
    return (buf, *split_fields(buf, max_fields))


def _line_text(buf: np.ndarray, ls: np.ndarray, le: np.ndarray, i: int) -> str:
    return bytes(buf[ls[i]:le[i]]).decode("utf-8", errors="replace")


def _str_column(buf: np.ndarray, st: np.ndarray, en: np.ndarray, c: int) -> Any:
    """Column ``c`` as an Arrow large_string array (the buffer's UTF-8 was checked by :func:`text_buffer`)."""
    import pyarrow as pa

    from .._kernels.api import gather

    data, offs = gather(buf, st[:, c], en[:, c])
    return pa.LargeStringArray.from_buffers(len(offs) - 1, pa.py_buffer(offs.astype(np.int64)), pa.py_buffer(data))


def _finish_numbers(vals: np.ndarray, ok: np.ndarray, buf: np.ndarray,
                    spans: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], what: str, path: str,
                    error: Callable[[str, int], FormatError], finite: bool) -> np.ndarray:
    """Complete a column parsed by the compiled parser (``vals`` where ``ok``): the other rows (more
    than 19 significant digits, subnormal or overflowing values, inf/nan, bad text) through Arrow's
    parser; ``spans(rows)`` gives their byte spans, ``error(message, row)`` the error to raise."""
    from .._kernels.api import gather

    rest = np.flatnonzero(~ok)
    if rest.size:
        import pyarrow as pa
        import pyarrow.compute as pc

        st, en = spans(rest)
        data, offs = gather(buf, st, en)
        arr = pa.LargeStringArray.from_buffers(rest.size, pa.py_buffer(offs), pa.py_buffer(data))
        try:
            vals[rest] = arrow_to_numpy(pc.cast(arr, pa.float64()))
        except pa.ArrowInvalid:
            for x, r in enumerate(rest):  # error path only
                tok = bytes(buf[st[x]:en[x]]).decode("utf-8", errors="replace")
                if not is_float(tok):
                    raise error(f"{what} {tok!r} is not a number", int(r)) from None
            raise FormatError(f"cannot read the {what} column", path=path) from None  # pragma: no cover
    if finite:
        def locate(i: int) -> tuple[str, int | None, str | None]:
            err = error("", i)
            return "", err.line, err.text

        check_values(vals, what, path, locate=locate)
    return vals


def _num_column(buf: np.ndarray, st: np.ndarray, en: np.ndarray, c: int, what: str, path: str,
                ln: np.ndarray, ls: np.ndarray, le: np.ndarray, finite: bool = True) -> np.ndarray:
    """Column ``c`` of split lines parsed as float64, correctly rounded; errors name the line."""
    from .._kernels.api import parse_floats

    vals, ok = parse_floats(buf, st[:, c], en[:, c])
    return _finish_numbers(
        vals, ok, buf, lambda rows: (st[rows, c], en[rows, c]), what, path,
        lambda msg, i: FormatError(msg, path=path, line=int(ln[i]), text=_line_text(buf, ls, le, i)), finite)


def _release(data: Any) -> None:
    """Give back the resident pages of a mapped file once it is scanned (read again from the file only if
    an error's line is shown): its columns are copies."""
    if isinstance(data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        try:
            data.madvise(mmap.MADV_DONTNEED)
        except (OSError, ValueError):  # pragma: no cover - a platform without it: the pages stay
            pass


class _Columns:
    """The data lines of a TREC file scanned into columns (:func:`_kernels.api.scan_columns`)."""

    def __init__(self, data: bytes | mmap.mmap, path: str, fields: dict[int, str], compact: bool = False):
        from .._kernels.api import scan_columns

        self.path = path
        self.buf = text_buffer(data, path)
        if self.buf.size == 0:
            self.buf = np.full(1, 10, np.uint8)
        kind = np.zeros(max(fields) + 1, np.int64)
        col = np.zeros_like(kind)
        self.str_col: dict[int, int] = {}
        self.num_col: dict[int, int] = {}
        for f, what in sorted(fields.items()):
            table = self.str_col if what == "str" else self.num_col
            kind[f] = {"str": 1, "num": 2, "atol": 3}[what]
            col[f] = table[f] = len(table)
        (self.lstart, self.nf, soffs, sdata, self.nvals,
         self.nok) = scan_columns(self.buf, kind, col, len(self.str_col), len(self.num_col))
        _release(data)
        # ``compact``: each string column copied into arrays of its own and of its size (the scanner's shared
        # buffer holds every column at the width of the file, partly written twice, chunk by chunk then closed
        # up), so that a column can be freed alone (the query ids, once they are codes): less memory, more time
        self.soffs = [soffs[j].copy() if compact else soffs[j] for j in range(soffs.shape[0])]
        self.sdata = [sdata[j, :int(soffs[j, -1])].copy() if compact else sdata[j, :int(soffs[j, -1])]
                      for j in range(soffs.shape[0])]

    def __len__(self) -> int:
        return int(self.lstart.shape[0])

    def line_no(self, i: int) -> int:
        return int(np.count_nonzero(self.buf[:self.lstart[i]] == 10)) + 1

    def line_text(self, i: int) -> str:
        s = int(self.lstart[i])
        nl = np.flatnonzero(self.buf[s:] == 10)
        e = s + int(nl[0]) if nl.size else self.buf.shape[0]
        return bytes(self.buf[s:e]).decode("utf-8", errors="replace")

    def error(self, message: str, i: int) -> FormatError:
        return FormatError(message, path=self.path, line=self.line_no(i), text=self.line_text(i))

    def strings(self, f: int) -> StrIds:
        """Field ``f`` as :class:`~ranklens.data.StrIds` over the scanned bytes (UTF-8 checked by
        :func:`~ranklens._input.validate.text_buffer`)."""
        j = self.str_col[f]
        return StrIds(self.soffs[j], self.sdata[j])

    def numbers(self, f: int, what: str, finite: bool = True) -> np.ndarray:
        """Field ``f`` as float64, correctly rounded (:func:`_finish_numbers`)."""
        from .._kernels.api import field_spans

        j = self.num_col[f]
        return _finish_numbers(self.nvals[j], self.nok[j], self.buf,
                               lambda rows: field_spans(self.buf, self.lstart[rows], f), what, self.path,
                               self.error, finite)


def _qrels_columns(data: bytes | mmap.mmap, path: str, label: str, compact: bool = False) -> _Columns:
    """A qrels file's columns (the label read as ``label``: "num" or "atol"), its lines checked."""
    c = _Columns(data, path, {0: "str", 2: "str", 3: label}, compact)
    if len(c) == 0:
        raise InputError(f"{path}: no judgments in the file.")
    bad = c.nf != TREC_FIELDS["qrels"]
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        # trec_eval refuses such lines too ("Malformed line"); a run given as judgments lands here
        hint = " (this looks like a run line: give the judgments first, the run second)" if c.nf[i] >= 6 else ""
        raise c.error(f"expected 4 fields 'query iteration item relevance', got {_count(c.nf[i])}{hint}", i)
    return c


def read_trec_qrels(data: bytes | mmap.mmap, path: str) -> Records:
    c = _qrels_columns(data, path, "num")
    labels = c.numbers(3, "relevance")
    return Records(c.strings(0), c.strings(2), label=labels, source=path)


def read_trec_eval_qrels(data: bytes | mmap.mmap, path: str) -> tuple[Records, str | None]:
    """A qrels file as trec_eval 10 reads it (``get_qrels.c``): each label is C's ``atol`` of its text, the
    integer it starts with (``1.5`` is 1, ``2x`` 2, ``x`` 0), for ``ranklens trec_eval`` (its columns compact).
    Returns the records and, when some label is read as another number than the one written, a line saying how
    many and the first.
    """
    c = _qrels_columns(data, path, "atol", compact=True)
    j = c.num_col[3]
    value, whole = c.nvals[j], c.nok[j]
    odd = np.flatnonzero(~whole)  # not a plain [+-]digits integer (the scanner read its leading digits)
    note = None
    if odd.size:
        from .._defs.trec_eval import c_atol
        from .._kernels.api import field_spans, parse_floats

        st, en = field_spans(c.buf, c.lstart[odd], 3)
        for t in np.flatnonzero(en - st > 19).tolist():  # more digits than the scanner reads: C saturates
            value[odd[t]] = c_atol(bytes(c.buf[st[t]:en[t]]).decode("utf-8", "replace"))[0]
        written, ok = parse_floats(c.buf, st, en)
        differ = np.flatnonzero(~ok | (written != value[odd]))
        if differ.size:
            t = int(differ[0])
            tok = bytes(c.buf[st[t]:en[t]]).decode("utf-8", "replace")
            many = differ.size > 1
            note = (f"{path}: {differ.size} relevance label{'s are' if many else ' is'} read as trec_eval reads "
                    f"{'them' if many else 'it'} (C's atol: the integer a label starts with), e.g. line "
                    f"{c.line_no(int(odd[t]))}: {tok!r} as {int(value[odd[t]])}")
    return Records(c.strings(0), c.strings(2), label=value, source=path), note


def read_trec_run(data: bytes | mmap.mmap, path: str, compact: bool = False) -> Records:
    """A TREC run (``compact``: each column held alone, see :class:`_Columns`)."""
    # the rank column is not read: the score orders the list, and trec_eval ignores the rank too
    c = _Columns(data, path, {0: "str", 2: "str", 4: "num"}, compact)
    if len(c) == 0:
        raise InputError(f"{path}: no ranked items in the file.")
    bad = c.nf < TREC_FIELDS["run"]
    if bad.any():
        # trec_eval refuses such lines ("Malformed line"); past the sixth field it skips the rest, as here
        i = int(np.flatnonzero(bad)[0])
        raise c.error(f"expected 6 fields 'query Q0 item rank score tag', got {_count(c.nf[i])}", i)
    return Records(c.strings(0), c.strings(2), score=c.numbers(4, "score"), source=path)


def read_trec_columns(data: bytes | mmap.mmap, path: str, fields: dict[int, str], n_fields: int,
                      what: str) -> list[Any]:
    """Some fields of a whitespace-separated file of ``n_fields`` fields a line (``fields``: index -> ``"str"``
    or ``"num"``), in index order: strings as :class:`~ranklens.data.StrIds`, numbers as float64. For the
    TREC-like files whose other columns carry meaning: a stochastic run's sample ids, ndeval's subtopics."""
    c = _Columns(data, path, fields)
    if len(c) == 0:
        raise InputError(f"{path}: no {what} in the file.")
    bad = c.nf != n_fields
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise c.error(f"expected {n_fields} fields ({what}), got {_count(c.nf[i])}", i)
    return [c.strings(f) if kind == "str" else c.numbers(f, what) for f, kind in sorted(fields.items())]


def _count(nf: Any) -> str:
    """A line's field count as the scanner gives it (it counts up to 255)."""
    return "255 or more" if int(nf) >= 255 else str(int(nf))


def _group_file(path: Path) -> Path | None:
    for suffix in (".query", ".group", ".qid"):
        cand = Path(str(path) + suffix)
        if cand.exists():
            return cand
        cand = path.with_suffix(suffix)
        if cand.exists():
            return cand
    return None


def read_svmlight(data: bytes, path: str, groups: str | os.PathLike[str] | None,
                  open_bytes: Callable[[Path], Any]) -> Records:
    buf, st, en, nf, ln, ls, le = _split(data, path, 2)
    # a line whose first field starts a comment is no data
    keep = buf[st[:, 0]] != ord("#")
    if not keep.all():
        st, en, nf, ln, ls, le = st[keep], en[keep], nf[keep], ln[keep], ls[keep], le[keep]
    if nf.size == 0:
        raise InputError(f"{path}: no rows in the file.")
    labels = _num_column(buf, st, en, 0, "label", path, ln, ls, le)
    n = labels.shape[0]
    s1 = st[:, 1]
    has2 = (nf >= 2) & (en[:, 1] - s1 >= 4)
    s1c = np.where(has2, s1, 0)
    last = buf.shape[0] - 1  # rows without a second field look at byte 0 (and what follows, in bounds)
    is_qid = has2 & (buf[s1c] == ord("q")) & (buf[np.minimum(s1c + 1, last)] == ord("i")) & (
        buf[np.minimum(s1c + 2, last)] == ord("d")) & (buf[np.minimum(s1c + 3, last)] == ord(":"))
    if is_qid.any():
        if not is_qid.all():
            i = int(np.flatnonzero(~is_qid)[0])
            raise FormatError("line without qid: in a file that uses qid:", path=path, line=int(ln[i]),
                              text=_line_text(buf, ls, le, i))
        empty = en[:, 1] - s1 == 4
        if empty.any():
            i = int(np.flatnonzero(empty)[0])
            raise FormatError("empty qid:", path=path, line=int(ln[i]), text=_line_text(buf, ls, le, i))
        st2 = st.copy()
        st2[:, 1] += 4
        qid_arr: Any = _str_column(buf, st2, en, 1)
    else:
        first = buf[np.where(nf >= 2, s1, 0)]
        bad = (nf >= 2) & (first != ord("#")) & ((first < ord("0")) | (first > ord("9")))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            tok = bytes(buf[s1[i]:en[i, 1]]).decode("utf-8", "replace")
            raise FormatError(f"expected 'qid:Q' or 'index:value', got {tok!r}", path=path, line=int(ln[i]),
                              text=_line_text(buf, ls, le, i))
        gpath = Path(groups) if groups is not None else _group_file(Path(path))
        if gpath is None:
            raise FormatError(
                "no qid: fields and no group file (.query or .group beside it); pass groups=FILE", path=path
            )
        sizes = []
        for gl, gline in enumerate(text_lines(open_bytes(gpath), str(gpath)), 1):
            if not gline.strip():
                continue
            try:
                sizes.append(int(gline.strip()))
            except ValueError:
                raise FormatError("group size is not an integer", path=str(gpath), line=gl, text=gline) from None
        if sum(sizes) != n:
            raise InputError(f"{gpath}: group sizes add up to {sum(sizes)} but {path} has {n} rows.")
        qid_arr = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    # items are the row numbers of the file (0-based), so predictions align by row
    return Records(qid_arr, np.arange(n, dtype=np.int64), label=labels, source=path)


def read_predictions(data: bytes, path: str) -> Records:
    buf, st, en, nf, ln, ls, le = _split(data, path, 2)
    if nf.size == 0:
        raise InputError(f"{path}: no scores in the file.")
    bad = nf != 1
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise FormatError("expected one score per line", path=path, line=int(ln[i]), text=_line_text(buf, ls, le, i))
    return Records(None, None, score=_num_column(buf, st, en, 0, "score", path, ln, ls, le), source=path)
