"""The one set of rules every reader and every in-memory form applies to what it reads.

* **Bytes of a text file** (:func:`text_buffer`): a UTF-8 byte-order mark is dropped; line endings
  ``\\n``, ``\\r\\n`` and a bare ``\\r`` (old Mac) all end a line (``\\r`` before ``\\n`` is a space to the
  scanners, as it is to trec_eval's ``isspace``; a bare ``\\r`` becomes ``\\n``, so a file of ``\\r`` lines is
  not read as one line); bytes that are not UTF-8 are refused with the line of the first bad byte.
* **Values** (:func:`numeric`, :func:`check_values`): relevance labels, scores and ranks must be numbers
  (text such as ``"1.5"`` is refused, not read) and finite: a missing value (a null of Arrow or polars,
  ``None``, pandas' ``NA``, an empty CSV cell, a JSON ``null``), NaN and infinities are refused with the form,
  the file and line (or the row, or the query and item) and the column, in every input form alike. Only
  where the user asks, with ``missing="exclude"`` (:data:`MISSING`), is a row whose label or score is
  missing or NaN left out of that side instead (a row without a label is no judgment, a row without a score
  or rank is not ranked) and counted in ``Result.excluded``; infinities are refused even then.
* **TREC field counts** (:data:`TREC_FIELDS`): as trec_eval's ``get_qrels.c`` and ``get_trec_results.c``
  read them, a qrels line has exactly 4 fields and a run line at least 6 (fewer is "Malformed line"
  there); past the sixth, the rest of a run line is skipped, as trec_eval does (its own test run
  ``results.trunc`` has such lines).

:mod:`ranklens._input.text`, :mod:`ranklens.io` and :mod:`ranklens._input.coerce` use these and nothing else, so the
readers cannot drift apart.
"""

from __future__ import annotations

import codecs
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import FormatError, InputError, InvalidParameterError

__all__ = ["BLOCK", "BOM", "MISSING", "TREC_FIELDS", "any_where", "check_missing", "check_utf8", "check_values",
           "is_number", "numeric", "strip_bom", "text_buffer", "utf8_text"]

#: What a missing label, score or rank is (``missing=``): refused (``"error"``, the default), or its row left out
#: of that side and counted in ``Result.excluded`` (``"exclude"``).
MISSING = ("error", "exclude")

#: The UTF-8 byte-order mark, dropped from the start of every text file.
BOM = b"\xef\xbb\xbf"

#: Fields of a TREC line: ``query iteration item relevance`` (exactly) and ``query Q0 item rank score tag``
#: (at least: trec_eval skips the rest of a run line).
TREC_FIELDS = {"qrels": 4, "run": 6}


def strip_bom(data: bytes) -> bytes:
    """``data`` without a leading UTF-8 byte-order mark.

    Examples
    --------
    >>> strip_bom(b"\\xef\\xbb\\xbfq1 0 d1 1")
    b'q1 0 d1 1'
    """
    return data[3:] if data[:3] == BOM else data


def check_utf8(buf: np.ndarray, path: str) -> None:
    """Refuse bytes that are not UTF-8, naming the line of the first bad byte (ASCII is checked by numpy
    alone, in one vectorised pass).

    Examples
    --------
    >>> import numpy as np
    >>> check_utf8(np.frombuffer(b"q1 0 d\\xe9 1\\n", np.uint8), "qrels")
    Traceback (most recent call last):
    ...
    ranklens.errors.FormatError: qrels, line 1: not UTF-8 text (byte 6): 'q1 0 d\\ufffd 1'
    """
    if buf.size == 0 or int(buf.max()) < 128:
        return
    n, step, lo = buf.shape[0], 1 << 24, 0
    while lo < n:  # in slices cut before a character's first byte: memory bounded, no loop per line
        hi = end = min(lo + step, n)
        while hi < n and end - hi < 3 and 0x80 <= buf[hi] < 0xC0:  # a character has at most 3 continuations
            hi -= 1
        if hi < n and 0x80 <= buf[hi] < 0xC0:
            hi = end  # no character starts here: the bytes are not UTF-8, found within this slice
        try:
            codecs.utf_8_decode(buf[lo:hi].data, "strict", True)
        except UnicodeDecodeError as exc:
            raise _utf8_error(buf, lo + exc.start, path) from None
        lo = hi


def _utf8_error(buf: np.ndarray, pos: int, path: str) -> FormatError:
    line = int(np.count_nonzero(buf[:pos] == 10)) + 1
    start = int(np.flatnonzero(buf[:pos] == 10)[-1]) + 1 if line > 1 else 0
    nl = np.flatnonzero(buf[pos:] == 10)
    end = pos + int(nl[0]) if nl.size else buf.shape[0]
    text = bytes(buf[start:end]).decode("utf-8", errors="replace")
    return FormatError(f"not UTF-8 text (byte {pos - start})", path=path, line=line, text=text)


def text_buffer(data: Any, path: str) -> np.ndarray:
    """The bytes of a text file as a uint8 array, under the rules above (BOM, line endings, UTF-8).

    No copy unless the file has a byte-order mark only (a view) or a bare ``\\r`` (then one copy).

    Examples
    --------
    >>> text_buffer(b"\\xef\\xbb\\xbfa 1\\rb 2\\r\\n", "f").tobytes()
    b'a 1\\nb 2\\r\\n'
    """
    buf = np.frombuffer(data, dtype=np.uint8) if len(data) else np.zeros(0, np.uint8)
    if buf.shape[0] >= 3 and buf[0] == 0xEF and buf[1] == 0xBB and buf[2] == 0xBF:
        buf = buf[3:]
    if _has_cr(data):
        bare = _bare_cr(buf)
        if bare.size:
            buf = buf.copy()
            buf[bare] = 10
    check_utf8(buf, path)
    return buf


def _bare_cr(buf: np.ndarray, step: int = 1 << 22) -> np.ndarray:
    """Positions of the carriage returns not followed by a line feed (vectorised, in slices of ``step``
    bytes so the temporaries stay small: a Python step per 4 MiB, none per line)."""
    n = buf.shape[0]
    out = []
    for lo in range(0, n, step):
        chunk = buf[lo:lo + step + 1]  # one byte past the slice: is its last CR followed by LF?
        cr = chunk[:step] == 13
        if np.count_nonzero(cr) == np.count_nonzero(cr[:chunk.shape[0] - 1] & (chunk[1:] == 10)):
            continue  # every CR of the slice ends a CRLF (or there is none): the common case, counted only
        cr = np.flatnonzero(cr) + lo
        if cr.size:
            nxt = cr + 1
            ok = nxt < n
            bare = cr[~ok | (buf[np.where(ok, nxt, 0)] != 10)]
            if bare.size:
                out.append(bare)
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def _has_cr(data: Any) -> bool:
    """Whether the bytes hold a carriage return (``memchr`` speed; no copy of a mapped file)."""
    find = getattr(data, "find", None)
    if find is not None:
        return bool(find(b"\r") >= 0)
    return bool((np.frombuffer(data, np.uint8) == 13).any())


def utf8_text(data: bytes, path: str) -> str:
    """``data`` decoded as UTF-8 without a byte-order mark (an error names the line of the first bad byte).

    Examples
    --------
    >>> utf8_text(b"\\xef\\xbb\\xbf[1]", "f.json")
    '[1]'
    """
    data = strip_bom(data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _utf8_error(np.frombuffer(data, np.uint8), exc.start, path) from None


def check_missing(missing: Any) -> str:
    """``missing`` checked against :data:`MISSING`.

    >>> check_missing("exclude")
    'exclude'
    """
    if not isinstance(missing, str) or missing not in MISSING:
        raise InvalidParameterError(f"`missing` must be 'error' (refuse a missing label or score, the default) or "
                                    f"'exclude' (leave its row out of that side, counted); got {missing!r}.")
    return missing


#: Rows per block when a whole column is checked or rounded block by block: no temporary as large as the column
#: (its fresh pages cost the first call of a process more than the check itself), and temporaries of a megabyte at
#: most (float64), which the allocator hands back for the next block instead of mapping fresh memory for each.
BLOCK = 1 << 17


def any_where(test: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> bool:
    """Whether ``test(block)`` holds somewhere in ``x``, block by block (:data:`BLOCK` rows), stopping at the first
    block where it does.

    Examples
    --------
    >>> import numpy as np
    >>> any_where(lambda b: ~np.isfinite(b), np.array([1.0, np.inf])), any_where(lambda b: b < 0, np.arange(3.0))
    (True, False)
    """
    return any(bool(test(x[a:a + BLOCK]).any()) for a in range(0, x.shape[0], BLOCK))


def numeric(a: np.ndarray, what: str, where: str, *,
            locate: Callable[[int], tuple[str, int | None, str | None]] | None = None) -> np.ndarray:
    """``a`` as float64; text (``"1.5"``) and other objects that are no number are refused, naming ``what`` in
    ``where``, the first of them and where it is (``locate(i)``, as for :func:`check_values`); missing values
    (``None``, pandas' ``NA``) become NaN, for :func:`check_values` to judge.

    Examples
    --------
    >>> import numpy as np
    >>> numeric(np.array([1, None, 2.5], dtype=object), "scores", "the dict").tolist()
    [1.0, nan, 2.5]
    >>> numeric(np.array([1.0, "1.5"], dtype=object), "scores", "the dict")
    Traceback (most recent call last):
    ...
    ranklens.errors.InputError: the dict, row 1: scores must be numbers; found '1.5' (text).
    """
    if a.dtype.kind in "iufb":
        return a.astype(np.float64, copy=False)
    flat = a.reshape(-1) if a.ndim else a.reshape(1)
    types = set(map(type, flat))  # distinct types: the check below loops over them, not over the values
    if all(map(_numeric_type, types)):
        nulls = np.array([t for t in types if _null_type(t)], dtype=object)
        if nulls.size:
            flat = np.where(np.isin(np.fromiter(map(type, flat), dtype=object, count=flat.size), nulls), np.nan, flat)
        try:
            return np.asarray(flat, dtype=np.float64).reshape(a.shape)
        except (TypeError, ValueError, OverflowError):
            pass
    i = next(i for i, x in enumerate(flat) if not _numeric_type(type(x)) or not is_number(x))  # the error path only
    first = flat[i]
    shown = repr(first.item() if isinstance(first, np.generic) else first)
    kind = " (text)" if isinstance(first, (str, bytes)) else (
        " (too large for a float)" if isinstance(first, int) else "")
    at, line, text = locate(i) if locate is not None else (f"row {i}", None, None)
    msg = f"{what} must be numbers; found {shown[:57] + '...' if len(shown) > 60 else shown}{kind}"
    if line is not None:
        raise FormatError(msg, path=where, line=line, text=text)
    raise InputError(f"{where}, {at}: {msg}.")


def _numeric_type(t: type) -> bool:
    """A number type (bools and numpy scalars too), or a missing value's (None, pandas' NA)."""
    return (issubclass(t, (numbers.Number, np.number, np.bool_)) and not issubclass(t, (complex, np.complexfloating))
            ) or _null_type(t)


def _null_type(t: type) -> bool:
    return t is type(None) or t.__name__ in ("NAType", "NaTType")


def is_number(x: Any) -> bool:
    """Whether ``float(x)`` works: a number, or a text of one (the one test of it; :func:`numeric` still refuses
    text in a numeric column, this names what a bad value could have meant).

    >>> is_number(2), is_number(" 1.5e3 "), is_number("x"), is_number(None)
    (True, True, False, False)
    """
    try:
        float(x)
    except (TypeError, ValueError, OverflowError):
        return False
    return True


def check_values(values: np.ndarray, what: str, where: str, *,
                 locate: Callable[[int], tuple[str, int | None, str | None]] | None = None,
                 null: np.ndarray | None = None, missing: str = "error",
                 excludable: bool = False) -> np.ndarray | None:
    """Refuse NaN and infinite ``values`` (and ``null`` rows, when given) of the column ``what``; with
    ``missing="exclude"``, return the rows whose value is missing or NaN instead (None when there is none), for
    the caller to leave out and count: infinities are refused either way.

    ``excludable``: the input form takes ``missing="exclude"`` (tables, dicts, records, matrices), which the
    refusal of a missing or NaN value then says. ``locate(i)`` gives, for the first bad row ``i``, where it is
    (``"row 3"``, ``"query q1, item d2"``),
    its line in the file ``where`` (or None) and its text (or None); without it the row is named.
    With a line the error is a :class:`~ranklens.errors.FormatError` (file, line, text).

    Examples
    --------
    >>> import numpy as np
    >>> check_values(np.array([1.0, np.inf]), "score", "run.csv", locate=lambda i: ("", i + 2, "q1,d2,inf"))
    Traceback (most recent call last):
    ...
    ranklens.errors.FormatError: run.csv, line 3: score is inf: missing, NaN or infinite values are refused: 'q1,d2,inf'
    >>> check_values(np.array([np.nan]), "label", "the judgments dict")
    Traceback (most recent call last):
    ...
    ranklens.errors.InputError: the judgments dict, row 0: label is nan: missing, NaN or infinite values are refused
    >>> check_values(np.array([1.0, np.nan]), "label", "the judgments dict", missing="exclude").tolist()
    [False, True]
    """
    floats = values.dtype.kind in "fc"
    if missing == "exclude":
        gone = np.isnan(values) if floats else np.zeros(values.shape[0], dtype=bool)
        if null is not None:
            gone = gone | null
        check_values(np.where(gone, 0.0, values) if floats else values, what, where, locate=locate)
        return gone if gone.any() else None
    if not floats:
        if null is None or not null.any():
            return None
        bad = null
    else:
        ok = np.isfinite(values)
        if ok.all() and (null is None or not null.any()):
            return None
        bad = ~ok if null is None else (~ok | null)
    i = int(np.flatnonzero(bad)[0])
    n = int(np.count_nonzero(bad))
    shown = "missing" if null is not None and null[i] else f"{values[i]}"
    at, line, text = locate(i) if locate is not None else (f"row {i}", None, None)
    more = f" ({n} such values)" if n > 1 else ""
    hint = "" if not excludable or (np.isinf(values[i]) and not (null is not None and null[i])) else _EXCLUDE_HINT
    msg = f"{what} is {shown}{more}: missing, NaN or infinite values are refused{hint}"
    if line is not None:
        raise FormatError(msg, path=where, line=line, text=text)
    shown_text = ""
    if text is not None:
        t = text.rstrip("\r\n")
        shown_text = f": {(t[:117] + '...') if len(t) > 120 else t!r}"
    raise InputError(f"{where}, {at}: {msg}{shown_text}")


#: Said with a refused missing or NaN value: the way to leave such rows out instead.
_EXCLUDE_HINT = " (missing='exclude', --missing exclude: leave such rows out, counted)"
