"""Writers of a run (:class:`~ranklens.records.Rankings`) in the formats ranklens reads.

``write_run(run, path)`` writes a TREC run (``query Q0 item rank score tag``), CSV, TSV (columns ``query,
item, score, rank``), JSON Lines (one ``{"query", "item", "score", "rank"}`` object a line), JSON
(``{query: {item: score}}``, as ranx and pytrec_eval write it) or Parquet; every one is read back by
:func:`ranklens.read_rankings` (and so by every command) to the same ids and the same scores, bit for bit:
numbers are written with the shortest text that reads back to the same float (Arrow's, as ``1.5``, ``3``,
``1e+300``; Python's ``repr`` in JSON). Rows are
written query by query (queries in order of first appearance), each query's rows by descending score (the
score decides, as in every reader; tied rows keep their order) with ranks 1, 2, ... in that order. A run of
ranks only is written with its ranks and, where a score is needed, minus the rank.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from .._base.runs import run_positions
from .._input.ids import IdColumn, take_ids
from .._input.records import Rankings
from ..errors import InputError, InvalidParameterError

__all__ = ["RUN_FORMATS", "run_format", "write_run"]

#: The formats a run is written in (the first is the default).
RUN_FORMATS = ("trec", "csv", "tsv", "jsonl", "json", "parquet")

_SUFFIXES = {".trec": "trec", ".txt": "trec", ".run": "trec", ".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl",
             ".ndjson": "jsonl", ".json": "json", ".parquet": "parquet", ".parq": "parquet"}


def run_format(path: str | os.PathLike[str] | None, format: str | None = None) -> str:
    """The format a run is written in: ``format`` (checked), else the file's suffix, else ``"trec"``.

    >>> run_format("fused.parquet"), run_format(None, "CSV"), run_format("fused.out")
    ('parquet', 'csv', 'trec')
    """
    if format is not None:
        f = str(format).lower()
        if f == "ndjson":
            f = "jsonl"
        if f not in RUN_FORMATS:
            raise InvalidParameterError(f"a run is written as {', '.join(RUN_FORMATS)}; got format {format!r}.")
        return f
    if path is None:
        return "trec"
    name = str(path).lower()
    return _SUFFIXES.get(os.path.splitext(name[:-3] if name.endswith(".gz") else name)[1], "trec")


def _ordered(run: Rankings) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(rows, query codes, scores, ranks)``: the rows in written order."""
    from .._input.factorize import factorize_unsorted

    codes, _, _ = factorize_unsorted(run.qid)
    key = run.order_key()
    rows = np.lexsort((-key, codes))  # stable: tied rows keep their order
    c = codes[rows]
    ranks = run_positions(c)[2] + 1
    scores = run.score[rows] if run.score is not None else -run.rank[rows].astype(np.float64)  # type: ignore[index]
    return rows, c, scores, ranks


def _table(run: Rankings, rows: np.ndarray, scores: np.ndarray, ranks: np.ndarray) -> Any:
    import pyarrow as pa

    q = IdColumn.of(take_ids(run.qid, rows)).to_arrow()
    d = IdColumn.of(take_ids(run.item, rows)).to_arrow()
    return pa.table({"query": q, "item": d, "score": pa.array(scores, pa.float64()),
                     "rank": pa.array(ranks, pa.int64())})


def _strings(ids: Any) -> Any:
    """Ids as an Arrow large_string array (integers in decimal)."""
    import pyarrow as pa

    return IdColumn.of(IdColumn.of(ids).as_strings()).to_arrow().cast(pa.large_string())


def _trec(run: Rankings, tag: str) -> bytes:
    """The lines ``query Q0 item rank score tag``, built column-wise by Arrow (numbers as the shortest text that
    reads back to the same float), as one buffer."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rows, _, scores, ranks = _ordered(run)
    q, d = _strings(take_ids(run.qid, rows)), _strings(take_ids(run.item, rows))
    for name, col in (("query", q), ("item", d)):
        bad = pc.or_(pc.equal(pc.binary_length(col), 0), pc.match_substring_regex(col, r"[ \t\n\r\f\v]"))
        if pc.any(bad).as_py():
            first = col[int(np.flatnonzero(np.asarray(bad.to_numpy(zero_copy_only=False)))[0])].as_py()
            raise InputError(f"{name} id {first!r} is empty or holds white space: a TREC run cannot hold it "
                             "(write CSV, JSON Lines or Parquet).")
    large = pa.large_string()
    lines = pc.binary_join_element_wise(q, pa.scalar("Q0", large), d, pa.array(ranks).cast(large),
                                        pa.array(scores, pa.float64()).cast(large), pa.scalar(tag + "\n", large),
                                        pa.scalar(" ", large))
    offs, data = IdColumn.of(lines).buffers()
    return data[offs[0]:offs[-1]].tobytes() if len(lines) else b""


def _csv(run: Rankings, fmt: str) -> bytes:
    import pyarrow.csv as pcsv

    rows, _, scores, ranks = _ordered(run)
    out = io.BytesIO()
    pcsv.write_csv(_table(run, rows, scores, ranks), out,
                   pcsv.WriteOptions(delimiter="," if fmt == "csv" else "\t", quoting_style="needed"))
    return out.getvalue()


def _text(run: Rankings, fmt: str, tag: str) -> bytes:
    if fmt == "trec":
        return _trec(run, tag)
    if fmt in ("csv", "tsv"):
        return _csv(run, fmt)
    rows, _, scores, ranks = _ordered(run)
    qs = IdColumn.of(take_ids(run.qid, rows)).to_numpy().tolist()
    ds = IdColumn.of(take_ids(run.item, rows)).to_numpy().tolist()
    if fmt == "jsonl":
        return "".join(json.dumps({"query": _py(q), "item": _py(d), "score": float(s), "rank": r}) + "\n"
                       for q, d, s, r in zip(qs, ds, scores.tolist(), ranks.tolist())).encode()
    nested: dict[str, dict[str, float]] = {}
    for q, d, s in zip(qs, ds, scores.tolist()):
        nested.setdefault(str(q), {})[str(d)] = float(s)
    return (json.dumps(nested, indent=1) + "\n").encode()


def _py(x: Any) -> Any:
    return x.item() if isinstance(x, np.generic) else x


def write_run(run: Rankings, path: str | os.PathLike[str] | None = None, format: str | None = None, *,
              tag: str = "ranklens") -> str | None:
    """Write a run in one of :data:`RUN_FORMATS`; every reader of ranklens reads it back.

    Parameters
    ----------
    run : Rankings
        The run (``ranklens.fuse`` returns one; :func:`ranklens.as_rankings` makes one of any input).
    path : str or path, optional
        The file; without it the text is returned (``parquet`` needs a file).
    format : str, optional
        ``trec`` (default), ``csv``, ``tsv``, ``jsonl``, ``json`` or ``parquet``; by default from the
        file's suffix (``.csv``, ``.tsv``, ``.jsonl``, ``.json``, ``.parquet``; anything else: TREC).
    tag : str, default="ranklens"
        The last column of a TREC run.

    Returns
    -------
    str or None
        The text, when no ``path`` is given.

    Examples
    --------
    >>> import ranklens
    >>> from ranklens.render import write_run
    >>> print(write_run(ranklens.as_rankings({"q1": {"a": 0.5, "b": 2.0}}), tag="demo"), end="")
    q1 Q0 b 1 2 demo
    q1 Q0 a 2 0.5 demo
    """
    if not isinstance(run, Rankings):
        raise InvalidParameterError(f"`run` must be a Rankings object (ranklens.as_rankings makes one); got "
                                    f"{type(run).__name__}.")
    if run.qid is None or run.item is None:
        raise InvalidParameterError("this run is a bare vector of scores without query and item ids: it cannot be "
                                    "written as a run.")
    if not tag or any(c.isspace() for c in tag):
        raise InvalidParameterError(f"`tag` must be one word without white space; got {tag!r}.")
    fmt = run_format(path, format)
    if fmt == "parquet":
        if path is None:
            raise InvalidParameterError("a Parquet run is written to a file: give `path`.")
        import pyarrow.parquet as pq

        rows, _, scores, ranks = _ordered(run)
        pq.write_table(_table(run, rows, scores, ranks), str(path))
        return None
    text = _text(run, fmt, tag)
    if path is None:
        return text.decode("utf-8")
    try:
        Path(path).write_bytes(text)
    except OSError as exc:
        raise InputError(f"{path}: cannot write the run ({exc.strerror or exc}).") from None
    return None
