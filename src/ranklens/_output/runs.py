"""The writers of a run (:class:`~ranklens.records.Rankings`) in the formats ranklens reads, the registry's kind
``run`` (:mod:`ranklens._output.formats`; :func:`ranklens.render.write_run` writes through it).

Each writer is ``write(run, tag) -> bytes``: a TREC run (``query Q0 item rank score tag``), CSV, TSV (columns ``query,
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
from typing import Any

import numpy as np

from .._base.runs import run_positions
from .._input.ids import IdColumn, take_ids
from .._input.records import Rankings
from ..errors import InputError

__all__ = ["csv_run", "json_run", "jsonl_run", "parquet_run", "trec_run", "tsv_run"]


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


def trec_run(run: Rankings, tag: str = "ranklens") -> bytes:
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


def csv_run(run: Rankings, tag: str = "ranklens") -> bytes:
    """The columns ``query, item, score, rank``, comma-separated."""
    return _delimited(run, ",")


def tsv_run(run: Rankings, tag: str = "ranklens") -> bytes:
    """The columns ``query, item, score, rank``, tab-separated."""
    return _delimited(run, "\t")


def _delimited(run: Rankings, delimiter: str) -> bytes:
    import pyarrow.csv as pcsv

    rows, _, scores, ranks = _ordered(run)
    out = io.BytesIO()
    pcsv.write_csv(_table(run, rows, scores, ranks), out,
                   pcsv.WriteOptions(delimiter=delimiter, quoting_style="needed"))
    return out.getvalue()


def json_run(run: Rankings, tag: str = "ranklens") -> bytes:
    """``{query: {item: score}}``, as ranx and pytrec_eval write it."""
    rows, _, scores, _ = _ordered(run)
    qs = IdColumn.of(take_ids(run.qid, rows)).to_numpy().tolist()
    ds = IdColumn.of(take_ids(run.item, rows)).to_numpy().tolist()
    nested: dict[str, dict[str, float]] = {}
    for q, d, s in zip(qs, ds, scores.tolist()):
        nested.setdefault(str(q), {})[str(d)] = float(s)
    return (json.dumps(nested, indent=1) + "\n").encode()


def jsonl_run(run: Rankings, tag: str = "ranklens") -> bytes:
    """One ``{"query", "item", "score", "rank"}`` object a line."""
    rows, _, scores, ranks = _ordered(run)
    qs = IdColumn.of(take_ids(run.qid, rows)).to_numpy().tolist()
    ds = IdColumn.of(take_ids(run.item, rows)).to_numpy().tolist()
    return "".join(json.dumps({"query": _py(q), "item": _py(d), "score": float(s), "rank": r}) + "\n"
                   for q, d, s, r in zip(qs, ds, scores.tolist(), ranks.tolist())).encode()


def parquet_run(run: Rankings, tag: str = "ranklens") -> bytes:
    """The columns ``query, item, score, rank`` as a Parquet file's bytes."""
    import pyarrow.parquet as pq

    rows, _, scores, ranks = _ordered(run)
    out = io.BytesIO()
    pq.write_table(_table(run, rows, scores, ranks), out)
    return out.getvalue()


def _py(x: Any) -> Any:
    return x.item() if isinstance(x, np.generic) else x
