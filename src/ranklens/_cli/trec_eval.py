"""``ranklens trec_eval`` and the ``ranklens-trec_eval`` script: trec_eval's command line, trec_eval's output.

The public face of this module is :mod:`ranklens.trec_eval_cli`.
"""

from __future__ import annotations

import getopt
import os
import re
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import click
import numpy as np

from .._defs.trec_eval import NICKNAMES, TREC_EVAL_VERSION, TREC_MEASURES, Line, mark_measure, measure_lines
from ..errors import InvalidParameterError, RanklensError, report

__all__ = ["main", "parse_args", "run", "trec_eval_cmd"]

_USAGE = ("usage: ranklens trec_eval [-q] [-c] [-n] [-J] [-l N] [-M N] {-m measure[.params]}* qrels run "
          "(see 'ranklens trec_eval -h')")

_LONG_OPTIONS = ["help", "version", "query_eval_wanted", "measure=", "complete_rel_info_wanted", "level_for_rel=",
                 "nosummary", "Debug_level=", "Judged_docs_only", "Number_docs_in_coll=",
                 "Max_retrieved_per_topic=", "Rel_info_format=", "Results_format=", "Output_old_results_format",
                 "Zscore="]
_LONG_TO_SHORT = {"help": "-h", "version": "-v", "query_eval_wanted": "-q", "measure": "-m",
                  "complete_rel_info_wanted": "-c", "level_for_rel": "-l", "nosummary": "-n", "Debug_level": "-D",
                  "Judged_docs_only": "-J", "Number_docs_in_coll": "-N", "Max_retrieved_per_topic": "-M",
                  "Rel_info_format": "-R", "Results_format": "-T", "Output_old_results_format": "-o",
                  "Zscore": "-Z"}


@dataclass
class _Args:
    """The command line, read as trec_eval reads it."""

    per_query: bool = False
    complete: bool = False
    summary: bool = True
    judged_only: bool = False
    level: int = 1
    max_docs: int | None = None
    docs_in_coll: int = 0
    marked: tuple[str, ...] = ()
    params: dict[str, str] = field(default_factory=dict)
    qrels: str = ""
    run: str = ""


def _integer(text: str, flag: str, minimum: int) -> int:
    if not re.fullmatch(r"\s*[+-]?\d+\s*", text):
        raise InvalidParameterError(f"{flag} takes an integer; got {text!r}.")
    value = int(text)
    if value < minimum:
        raise InvalidParameterError(f"{flag} takes an integer of at least {minimum}; got {text!r}.")
    return value


def parse_args(argv: Sequence[str]) -> _Args | str:
    """trec_eval's options and arguments (GNU getopt, as trec_eval's ``getopt_long``); a string for
    ``-h`` / ``-v`` (the text to print).

    Examples
    --------
    >>> args = parse_args(["-q", "-c", "-M100", "-mP.5,10", "-m", "map", "qrels", "run"])
    >>> args.per_query, args.complete, args.max_docs, args.marked, args.params
    (True, True, 100, ('P', 'map'), {'P': '5,10'})
    """
    try:
        opts, rest = getopt.gnu_getopt(list(argv), "hvqm:cl:nD:JN:M:R:T:oZ:", _LONG_OPTIONS)
    except getopt.GetoptError as exc:
        raise InvalidParameterError(f"{exc}; {_USAGE}") from None
    args = _Args()
    marked: list[str] = []
    for opt, value in opts:
        opt = _LONG_TO_SHORT.get(opt.lstrip("-"), opt)
        if opt == "-h":
            return _help()
        if opt == "-v":
            from .._version import __version__

            return (f"ranklens trec_eval: trec_eval {TREC_EVAL_VERSION}'s command line and output, computed by "
                    f"ranklens {__version__}")
        if opt == "-q":
            args.per_query = True
        elif opt == "-c":
            args.complete = True
        elif opt == "-n":
            args.summary = False
        elif opt == "-J":
            args.judged_only = True
        elif opt == "-l":
            args.level = _integer(value, "-l (the relevance level)", -(2**62))
        elif opt == "-M":
            args.max_docs = _integer(value, "-M (the number of documents kept per query)", 1)
        elif opt == "-m":
            marked.extend(mark_measure(value, args.params))
        elif opt in ("-R", "-T"):
            wanted = "qrels" if opt == "-R" else "trec_results"
            if value != wanted:
                raise InvalidParameterError(f"{opt} {value}: ranklens trec_eval reads only the {wanted} format.")
        elif opt == "-N":
            args.docs_in_coll = _integer(value, "-N (the number of documents in the collection)", 0)  # utility
        elif opt == "-o":
            pass  # obsolete in trec_eval too: it changes nothing
        else:  # -D, -Z
            raise InvalidParameterError(f"{opt} ({'debug output' if opt == '-D' else 'Z scores'}) is not supported by "
                                        "ranklens trec_eval.")
    if len(rest) != 2:
        raise InvalidParameterError(f"expected 2 arguments, the qrels and the run; got {len(rest)}. {_USAGE}")
    args.qrels, args.run = rest
    args.marked = tuple(dict.fromkeys(marked or NICKNAMES["official"]))
    return args


def _requested(args: _Args) -> list[tuple[str, list[Line], dict[float, float] | None]]:
    """The marked measures in trec_eval's order: (name as asked, printed lines, ndcg gains or None)."""
    out = []
    for name, tm in TREC_MEASURES.items():
        if name in args.marked:
            param = args.params.get(name)
            lines, gains = measure_lines(tm, param)
            if name == "num_rel" and args.complete:
                # trec_eval's summary num_rel under -c counts every label above 0 of every judged query,
                # whatever -l says (m_num_rel.c, te_calc_avg_num_rel); its per-query lines follow -l
                lines = [Line(line.name, line.key, line.kind, total="num_rel(rel=1)") for line in lines]
            out.append((name if param is None else f"{name}.{param}", lines, gains))
    return out


def _convention(args: _Args, gains: dict[float, float] | None) -> Any:
    from .._defs.presets import get_convention

    fields: dict[str, Any] = {"relevance_level": float(args.level)}
    if args.complete:
        fields.update(queries="judged", missing_ranking="zero")
    if gains is not None:
        fields["gain"] = gains
    return get_convention("trec_eval10", **fields)


def _refuse_missing(asked: list[tuple[str, list[Line], dict[float, float] | None]], args: _Args) -> None:
    """One line naming every asked measure ranklens does not compute under trec_eval's rules."""
    missing = [name for name, lines, gains in asked if not _computed(lines, _convention(args, gains))]
    if not missing:
        return
    have = [n for n, tm in TREC_MEASURES.items() if n in NICKNAMES["all_trec"] and _computed(measure_lines(tm, None)[0],
                                                                                           _convention(args, None))]
    raise InvalidParameterError(
        f"ranklens does not compute trec_eval's {', '.join(missing)}: nothing printed (trec_eval prints "
        f"{'them' if len(missing) > 1 else 'it'}). The trec_eval measures ranklens computes: {', '.join(have)}; "
        "ask for those with -m.")


def _computed(lines: list[Line], conv: Any) -> bool:
    from .._defs.measures import check_measures, parse_measure

    for line in lines:
        if line.kind in ("runid", "count", "relstring"):
            continue
        if line.key is None:
            return False
        try:
            check_measures(parse_measure(line.key), conv)
        except InvalidParameterError:
            return False
    return True


def _ids(ids: Any) -> np.ndarray:
    from .._input.ids import IdColumn

    return np.asarray(IdColumn.of(ids).to_numpy()).astype(str)


def _trec_order(qid: np.ndarray, item: np.ndarray, rankings: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                          np.ndarray]:
    """The run's rows in trec_eval's order (per query: score descending, ties by document id descending, as
    the ``trec_eval10`` convention ranks them): the query names (sorted), each row's query code, the rows in
    that order, and each ordered row's position in its query (0 first)."""
    q_names, q_code = np.unique(qid, return_inverse=True)
    _, item_code = np.unique(item, return_inverse=True)  # code point order: UTF-8 byte order, as strcmp
    order = np.lexsort((-item_code, -rankings.order_key(), q_code))
    sq = q_code[order]
    starts = np.flatnonzero(np.r_[True, sq[1:] != sq[:-1]])
    position = np.arange(sq.size) - np.repeat(starts, np.diff(np.r_[starts, sq.size]))
    return q_names, q_code, order, position


def _select(judgments: Any, rankings: Any, args: _Args) -> Any:
    """The run's rows trec_eval evaluates: with ``-M N`` each query's first N in its order (score
    descending, ties by document id descending, as the ``trec_eval10`` convention ranks them), then with
    ``-J`` the judged ones (a qrels line with a label of 0 or more)."""
    from .._input.ids import filter_ids
    from .._input.records import Rankings

    keep = np.ones(len(rankings), dtype=bool)
    qid = _ids(rankings.qid)
    item = _ids(rankings.item)
    if args.max_docs is not None:
        _, _, order, position = _trec_order(qid, item, rankings)
        keep[:] = False
        keep[order[position < args.max_docs]] = True
    if args.judged_only:
        judged = judgments.label >= 0
        j_keys = np.char.add(np.char.add(_ids(judgments.qid)[judged], " "), _ids(judgments.item)[judged])
        keep &= np.isin(np.char.add(np.char.add(qid, " "), item), j_keys)
    if keep.all():
        return rankings
    # a query whose documents -J removed stays ranked, with an empty list (trec_eval scores it, num_ret 0)
    first = np.r_[True, qid[1:] != qid[:-1]] if qid.size else np.zeros(0, dtype=bool)
    emptied = first & ~np.isin(qid, np.unique(qid[keep]))
    return Rankings(filter_ids(rankings.qid, keep), filter_ids(rankings.item, keep),
                    score=None if rankings.score is None else rankings.score[keep],
                    rank=None if rankings.rank is None else rankings.rank[keep], source=rankings.source,
                    empty_qids=filter_ids(rankings.qid, emptied) if emptied.any() else None)


def _runid(path: str) -> str:
    """The run tag (6th field) of the run's last line, which trec_eval prints as ``runid``."""
    import gzip

    with open(path, "rb") as f:
        if f.read(2) == b"\x1f\x8b":
            with gzip.open(path, "rb") as g:
                lines = [ln for ln in g if ln.strip() and not ln.startswith(b"#")][-1:]
        else:
            size = f.seek(0, os.SEEK_END)
            tail = b""
            lines = []
            while size > 0 and not lines:
                step = min(size, 1 << 16)
                size -= step
                f.seek(size)
                tail = f.read(step) + tail
                complete = tail.splitlines()[1:] if size > 0 else tail.splitlines()
                lines = [ln for ln in complete if ln.strip() and not ln.startswith(b"#")][-1:]
    fields = lines[0].split() if lines else []
    return fields[5].decode("utf-8", "replace") if len(fields) > 5 else ""


def _evaluate(args: _Args, asked: list[tuple[str, list[Line], dict[float, float] | None]],
              run_path: str) -> tuple[list[str], dict[str, np.ndarray], dict[str, float]]:
    """Per-query values and aggregates of every printed line, from :func:`ranklens.evaluate`: the queries
    (in trec_eval's order: byte order of the ids), per line name its values, per line name its aggregate."""
    from .._core.evaluate import evaluate
    from .._input.files import read_judgments, read_rankings

    judgments = read_judgments(args.qrels, format="trec")
    rankings = read_rankings(run_path, format="trec")
    if args.max_docs is not None or args.judged_only:
        rankings = _select(judgments, rankings, args)
    by_gains: dict[str, tuple[dict[float, float] | None, list[Line]]] = {}
    for _, lines, gains in asked:
        group = by_gains.setdefault(repr(gains), (gains, []))
        group[1].extend(line for line in lines if line.key is not None)
        if any(line.coefficients for line in lines):  # utility's other coefficients: from the counts
            group[1].extend(Line(f"\0{k}", k, "long") for k in ("num_ret", "num_rel", "num_rel_ret"))
        # (computed for those lines only: named apart from the printed lines)
        group[1].extend(Line(f"\0{k}", k, "double") for line in lines for k in line.mean_of)
    queries: list[str] | None = None
    values: dict[str, np.ndarray] = {}
    aggregate: dict[str, float] = {}
    n_queries = 0
    for gains, lines in by_gains.values():
        keys = list(dict.fromkeys(k for line in lines for k in (line.key, line.total) if k is not None))
        res = evaluate(judgments, rankings, keys or ["num_ret"], convention=_convention(args, gains))
        ids = [str(q) for q in res.queries.tolist()]
        order = sorted(range(len(ids)), key=lambda i: ids[i].encode("utf-8"))
        queries = [ids[i] for i in order]
        n_queries = len(ids)
        for line in lines:
            if line.coefficients:
                values[line.name], aggregate[line.name] = _utility(res, order, line.coefficients, args.docs_in_coll,
                                                                   _stand_in(args, queries, rankings))
                continue
            if line.mean_of:
                values[line.name] = _mean_of(res, order, line.mean_of)
                aggregate[line.name] = float(np.cumsum(values[line.name])[-1] / len(order)) if order else 0.0
                continue
            column = np.asarray(res.values)[:, res.keys.index(str(line.key))][order]
            if line.stand_in:  # a value trec_eval gives a missing query under -c: the mean added again
                column[_stand_in(args, queries, rankings) > 0] = line.stand_in
                values[line.name] = column
                aggregate[line.name] = float(np.cumsum(column)[-1] / column.size) if column.size else 0.0
                continue
            if np.isnan(column).any():
                raise RanklensError(f"{line.name}: query {queries[int(np.flatnonzero(np.isnan(column))[0])]!r} "
                                    "has no value under trec_eval's rules.")
            values[line.name] = column
            aggregate[line.name] = float(res[line.total or str(line.key)])
    aggregate["num_q"] = float(n_queries)
    for _, lines, _ in asked:
        for line in lines:
            if line.kind == "relstring":
                values[line.name] = _relstrings(judgments, rankings, queries or [], line.width)
                if line.name != "relstring" and line.width > 0:  # trec_eval clears its stand-in by that name only
                    values[line.name][_stand_in(args, queries or [], rankings) > 0] = "-"
    return queries or [], values, aggregate


def _mean_of(res: Any, order: list[int], keys: tuple[str, ...]) -> np.ndarray:
    """Per query the mean of the measures ``keys``, added in their order (as trec_eval adds them)."""
    total = np.zeros(len(order))
    for key in keys:
        total += np.asarray(res.values)[:, res.keys.index(key)][order]
    return total / len(keys)


def _stand_in(args: _Args, queries: list[str] | None, rankings: Any) -> np.ndarray:
    """Per query (trec_eval's order), the number of stand-in documents trec_eval ranks for it: under ``-c`` a
    judged query missing from the run is evaluated on one unjudged document (``ceci_nest_pas_un_docno``;
    none under ``-J``, which removes it), and trec_eval then zeroes num_ret, unj, rbp_resid, and utility and
    relstring by those exact names, but not ``utility_p1,...`` nor ``relstring_N``."""
    ids = np.asarray(queries or [], dtype=str)
    if not args.complete or args.judged_only or not ids.size:
        return np.zeros(ids.size, dtype=np.int64)
    return (~np.isin(ids, np.unique(_ids(rankings.qid)))).astype(np.int64)


def _utility(res: Any, order: list[int], coefficients: tuple[float, ...], docs: int,
             stand_in: np.ndarray) -> tuple[np.ndarray, float]:
    """trec_eval's utility with coefficients p1..p4 (``m_utility.c``): ``p1 a + p2 b + p3 c + p4 d`` of the
    query's counts (a relevant ranked, b non-relevant ranked, c relevant not ranked, d the rest of the ``-N``
    documents; a query missing from the run under ``-c`` has trec_eval's stand-in document ranked), and
    their mean added query by query as trec_eval adds it."""
    ret, rel, rel_ret = (np.asarray(res.values)[:, res.keys.index(k)][order] for k in ("num_ret", "num_rel",
                                                                                        "num_rel_ret"))
    ret = ret + stand_in
    p1, p2, p3, p4 = coefficients
    column = p1 * rel_ret + p2 * (ret - rel_ret) + p3 * (rel - rel_ret) + p4 * (docs + rel_ret - ret - rel)
    return column, float(np.cumsum(column)[-1] / column.size) if column.size else 0.0


def _relstrings(judgments: Any, rankings: Any, queries: list[str], length: int) -> np.ndarray:
    """trec_eval's relstring per query (``m_relstring.c``): the labels of its first N items in trec_eval's
    order (score descending, ties by document id descending), one character each: the label 0-9, ``>``
    above 9, ``-`` not in the qrels, ``.`` in the qrels with a negative label; '' for a query not ranked."""
    out = np.full(len(queries), "", dtype=object)
    if length <= 0 or len(rankings) == 0:
        return out
    qid, item = _ids(rankings.qid), _ids(rankings.item)
    q_names, q_code, order, position = _trec_order(qid, item, rankings)
    first = order[position < length]
    j_keys = np.char.add(np.char.add(_ids(judgments.qid), "\t"), _ids(judgments.item))
    by_key = np.argsort(j_keys)
    keys = np.char.add(np.char.add(qid[first], "\t"), item[first])
    at = np.minimum(np.searchsorted(j_keys[by_key], keys), max(len(j_keys) - 1, 0))
    found = j_keys[by_key][at] == keys if len(j_keys) else np.zeros(len(keys), dtype=bool)
    label = np.where(found, np.asarray(judgments.label, dtype=np.float64)[by_key][at] if len(j_keys) else 0.0, np.nan)
    chars = np.where(np.isnan(label), ord("-"), np.where(label < 0, ord("."), np.where(
        label > 9, ord(">"), ord("0") + np.clip(np.nan_to_num(label), 0, 9).astype(np.int64))))
    grid = np.zeros((q_names.size, length), dtype=np.uint8)
    grid[q_code[first], position[position < length]] = chars
    strings = np.char.decode(grid.view(f"S{length}").ravel(), "ascii")
    asked = np.asarray(queries, dtype=str)
    at = np.minimum(np.searchsorted(q_names, asked), q_names.size - 1)
    ranked = q_names[at] == asked
    out[ranked] = strings[at[ranked]]
    return out


def _format(name: str, qid: str, value: float, kind: str) -> str:
    if kind in ("long", "count"):
        return f"{name:<22}\t{qid}\t{int(value)}\n"  # trec_eval's %ld of (long) value
    return f"{name:<22}\t{qid}\t{value:6.4f}\n"  # trec_eval's %-22s\t%s\t%6.4f


def _render(args: _Args, asked: list[tuple[str, list[Line], dict[float, float] | None]],
                     queries: list[str], values: dict[str, np.ndarray], aggregate: dict[str, float],
                     runid: str) -> str:
    """trec_eval's output: with ``-q`` each query's lines (query by query, measures in trec_eval's order),
    then unless ``-n`` the ``all`` lines."""
    measures = [(TREC_MEASURES[name.partition(".")[0]], lines) for name, lines, _ in asked]
    out: list[str] = []
    if args.per_query:
        for qi, qid in enumerate(queries):
            for tm, lines in measures:
                if tm.per_query:
                    out.extend(f"{line.name:<22}\t{qid}\t'{values[line.name][qi]}'\n" if line.kind == "relstring"
                               else _format(line.name, qid, float(values[line.name][qi]), line.kind) for line in lines)
    if args.summary:
        for _, lines in measures:
            for line in lines:
                if line.kind == "relstring":
                    continue  # printed per query only
                if line.kind == "runid":
                    out.append(f"{'runid':<22}\tall\t{runid}\n")
                else:
                    out.append(_format(line.name, "all", aggregate[line.name], line.kind))
    return "".join(out)


def run(argv: Sequence[str]) -> None:
    """Run the command on trec_eval's arguments ``argv`` (without the program name) and print its output.

    A mistake (unknown flag or measure, a measure ranklens does not compute, a missing or malformed file,
    a bad ``-M``) prints one line on stderr and exits with status 2.

    Examples
    --------
    The relevant d1 is ranked second (AP 1/2); ``P.1,2`` gives trec_eval's ``P_1`` and ``P_2``:

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> qrels, run_file = os.path.join(d, "qrels"), os.path.join(d, "run")
    >>> _ = open(qrels, "w").write("q1 0 d1 1\\nq1 0 d2 0\\n")
    >>> _ = open(run_file, "w").write("q1 Q0 d2 1 2.0 bm25\\nq1 Q0 d1 2 1.0 bm25\\n")
    >>> run(["-m", "runid", "-m", "map", "-m", "P.2,1", qrels, run_file])  # doctest: +NORMALIZE_WHITESPACE
    runid                   all     bm25
    map                     all     0.5000
    P_1                     all     0.0000
    P_2                     all     0.5000
    """
    try:
        args = parse_args(argv)
        if isinstance(args, str):
            sys.stdout.write(args + "\n")
            return
        asked = _requested(args)
        _refuse_missing(asked, args)
        run_path, temporary = args.run, None
        if args.run == "-":  # trec_eval 10 reads the run from stdin
            with tempfile.NamedTemporaryFile("wb", suffix=".run", delete=False) as tmp:
                tmp.write(sys.stdin.buffer.read())
            run_path = temporary = tmp.name
        try:
            for path in (args.qrels, run_path):
                if not os.path.isfile(path):
                    raise FileNotFoundError(2, "No such file" if not os.path.exists(path) else "Not a file", path)
            queries, values, aggregate = _evaluate(args, asked, run_path)
            text = _render(args, asked, queries, values, aggregate, _runid(run_path))
        finally:
            if temporary is not None:
                os.unlink(temporary)
        sys.stdout.write(text)
        sys.stdout.flush()
    except (Exception, KeyboardInterrupt) as exc:
        report(exc)


@click.command("trec_eval", add_help_option=False,
               context_settings={"ignore_unknown_options": True, "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def trec_eval_cmd(args: tuple[str, ...]) -> None:
    """trec_eval's own command line (-q, -c, -m P.5,10, -M, -l, -J ... qrels run): its output, byte for byte.
    Here -c is trec_eval's (every judged query), not --convention. 'ranklens trec_eval -h' for more."""
    run(args)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``ranklens-trec_eval`` script: trec_eval's arguments, trec_eval's output."""
    run(sys.argv[1:] if argv is None else argv)


def _help() -> str:
    supported = ", ".join(n for n, tm in TREC_MEASURES.items() if n in NICKNAMES["all_trec"]
                          and _computed(measure_lines(tm, None)[0], _convention(_Args(), None)))
    return f"""ranklens trec_eval [-h] [-v] [-q] [-c] [-n] [-J] [-l N] [-M N] {{-m measure[.params]}}* qrels run

trec_eval {TREC_EVAL_VERSION}'s command line and output, byte for byte, the numbers computed by ranklens under
its trec_eval10 convention. RUN may be '-' (standard input).

  -q          each query's values too, before the 'all' lines
  -c          average over every judged query, a query missing from the run scoring 0 (trec_eval's -c;
              NOT ranklens' -c/--convention)
  -n          no summary ('all') lines
  -l N        relevance level of the binary measures (default 1)
  -M N        only each query's first N documents (score descending, ties by document id descending)
  -J          only judged documents (unjudged ones removed before ranking)
  -m NAME[.P] a measure, with its parameters (P.5,10; ndcg_cut.10; ndcg.1=3,2=9), or a set: official
              (the default), all_trec, set
  -R qrels, -T trec_results, -N N and -o are accepted (the only formats read); -D, -Z and the preference
  formats are refused.

trec_eval measures ranklens computes: {supported}.
A measure it does not compute is refused by name (nothing is printed), never left out."""
