"""``ranklens trec_eval`` and the ``ranklens-trec_eval`` script: trec_eval's command line, trec_eval's output.

The public face of this module is :mod:`ranklens.trec_eval_cli`.
"""

from __future__ import annotations

import getopt
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import click

from .._defs.trec_eval import (
    NICKNAMES,
    TREC_EVAL_VERSION,
    TREC_MEASURES,
    Line,
    TrecEvalError,
    c_atol,
    c_fixed,
    mark_measure,
    measure_lines,
    whole_number,
)
from ..errors import InvalidParameterError, fail, report

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
    """The command line, read as trec_eval reads it; ``notes``: numbers read otherwise than written."""

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
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Message:
    """What ``-h`` (stdout) and ``-v`` (stderr, as trec_eval prints it) print."""

    text: str
    stream: str


def _integer(text: str, flag: str, notes: list[str]) -> int:
    """A flag's integer as trec_eval reads it (C's ``atol``), with a note when it is not what is written."""
    value, used = c_atol(text)
    if not used:
        notes.append(f"{flag} {text}: read as 0 (C's atol: no number)")
    elif used < len(text) or value != whole_number(text[:used]):
        how = f"stops at {text[used:used + 1]!r}" if used < len(text) else "saturates"
        notes.append(f"{flag} {text}: read as {value} (C's atol {how})")
    return value


def parse_args(argv: Sequence[str]) -> _Args | _Message:
    """trec_eval's options and arguments (GNU getopt, as trec_eval's ``getopt_long``); a :class:`_Message` for
    ``-h`` / ``-v``. A usage error raises :class:`~ranklens.trec_eval_measures.TrecEvalError` with status 1.

    Examples
    --------
    >>> args = parse_args(["-q", "-c", "-M100", "-mP.5,10", "-m", "map", "qrels", "run"])
    >>> args.per_query, args.complete, args.max_docs, args.marked, args.params
    (True, True, 100, ('P', 'map'), {'P': '5,10'})
    >>> parse_args(["-M", "1.5", "qrels", "run"]).notes
    ["-M 1.5: read as 1 (C's atol stops at '.')"]
    """
    try:
        opts, rest = getopt.gnu_getopt(list(argv), "hvqm:cl:nD:JN:M:R:T:oZ:", _LONG_OPTIONS)
    except getopt.GetoptError as exc:
        raise TrecEvalError(f"{exc}; {_USAGE}", 1) from None
    args = _Args()
    marked: list[str] = []
    for opt, value in opts:
        opt = _LONG_TO_SHORT.get(opt.lstrip("-"), opt)
        if opt == "-h":
            return _Message(_help(), "stdout")
        if opt == "-v":
            from .._version import __version__

            return _Message(f"ranklens trec_eval: trec_eval {TREC_EVAL_VERSION}'s command line and output, computed "
                            f"by ranklens {__version__}", "stderr")
        if opt == "-q":
            args.per_query = True
        elif opt == "-c":
            args.complete = True
        elif opt == "-n":
            args.summary = False
        elif opt == "-J":
            args.judged_only = True
        elif opt == "-l":
            args.level = _integer(value, "-l", args.notes)
            if args.level < 0:
                raise InvalidParameterError(
                    f"-l {value}: ranklens trec_eval does not reproduce a negative relevance level (trec_eval then "
                    "counts the unjudged documents it ranks as relevant); give 0 or more.")
        elif opt == "-M":
            args.max_docs = _integer(value, "-M", args.notes)
            if args.max_docs < 0:
                raise InvalidParameterError(f"-M {value}: the number of documents kept per query must be 0 or "
                                            "more (trec_eval crashes on a negative one).")
        elif opt == "-m":
            marked.extend(mark_measure(value, args.params))
        elif opt in ("-R", "-T"):
            wanted = "qrels" if opt == "-R" else "trec_results"
            if value != wanted:
                raise InvalidParameterError(f"{opt} {value}: ranklens trec_eval reads only the {wanted} format.")
        elif opt == "-N":
            args.docs_in_coll = _integer(value, "-N", args.notes)  # utility's collection size
        elif opt == "-o":
            pass  # obsolete in trec_eval too: it changes nothing
        else:  # -D, -Z
            raise InvalidParameterError(f"{opt} ({'debug output' if opt == '-D' else 'Z scores'}) is not supported by "
                                        "ranklens trec_eval.")
    if len(rest) != 2:
        raise TrecEvalError(f"expected 2 arguments, the qrels and the run; got {len(rest)}. {_USAGE}", 1)
    args.qrels, args.run = rest
    args.marked = tuple(dict.fromkeys(marked or NICKNAMES["official"]))
    return args


def _requested(args: _Args) -> list[tuple[str, list[Line], dict[float, float] | None]]:
    """The marked measures in trec_eval's order: (name as asked, printed lines, ndcg gains or None)."""
    out = []
    for name, tm in TREC_MEASURES.items():
        if name in args.marked:
            param = args.params.get(name)
            lines, gains = measure_lines(tm, param, args.notes)
            if name == "num_rel" and args.complete:
                # trec_eval's summary num_rel under -c counts every label above 0 of every judged query,
                # whatever -l says (m_num_rel.c, te_calc_avg_num_rel); its per-query lines follow -l
                lines = [replace(line, total="num_rel(rel=1)") for line in lines]
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
    missing = [name for name, lines, gains in asked
               if any(line.key is None and line.kind not in ("runid", "count", "relstring") for line in lines)
               or not _computed(lines, _convention(args, gains))]
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


def _format(name: str, qid: str, value: float, kind: str) -> str:
    if kind in ("long", "count"):
        return f"{name:<22}\t{qid}\t{int(value)}\n"  # trec_eval's %ld of (long) value
    return f"{name:<22}\t{qid}\t{c_fixed(value, 4, 6)}\n"  # trec_eval's %-22s\t%s\t%6.4f


def _render(args: _Args, asked: list[tuple[str, list[Line], dict[float, float] | None]], out: Any,
            runid: str) -> str:
    """trec_eval's output: with ``-q`` each query's lines (query by query, measures in trec_eval's order),
    then unless ``-n`` the ``all`` lines; where trec_eval stops at a query, the ``-q`` lines before it only."""
    measures = [(TREC_MEASURES[name.partition(".")[0]], lines) for name, lines, _ in asked]
    text: list[str] = []
    if args.per_query:
        for qi, qid in enumerate(out.queries[:out.stop]):
            for tm, lines in measures:
                if tm.per_query:
                    text.extend(f"{line.name:<22}\t{qid}\t'{out.values[line.name][qi]}'\n"
                                if line.kind == "relstring" else
                                _format(line.name, qid, float(out.values[line.name][qi]), line.kind) for line in lines)
    if args.summary and out.stop is None:
        for _, lines in measures:
            for line in lines:
                if line.kind == "relstring":
                    continue  # printed per query only
                if line.kind == "runid":
                    text.append(f"{'runid':<22}\tall\t{runid}\n")
                else:
                    text.append(_format(line.name, "all", out.aggregate[line.name], line.kind))
    return "".join(text)


def run(argv: Sequence[str]) -> None:
    """Run the command on trec_eval's arguments ``argv`` (without the program name) and print its output.

    A mistake prints one line on stderr and exits with trec_eval's status (1: usage; 2: a file or a
    parameter; 4: trec_eval stops at a query, after the ``-q`` lines of the queries before it); a measure
    ranklens does not compute, or a bad file, exits with status 2 and prints nothing.

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
    from .._core.trec_run import evaluate_lines

    try:
        args = parse_args(argv)
        if isinstance(args, _Message):
            (sys.stdout if args.stream == "stdout" else sys.stderr).write(args.text + "\n")
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
            out = evaluate_lines(args, asked, run_path, lambda gains: _convention(args, gains), args.notes)
            text = _render(args, asked, out, _runid(run_path))
        finally:
            if temporary is not None:
                os.unlink(temporary)
        for note in dict.fromkeys(args.notes):
            print(f"ranklens trec_eval: {note}", file=sys.stderr)
        sys.stdout.write(text)
        sys.stdout.flush()
        if out.stop is not None:
            fail(out.why, 4)
    except TrecEvalError as exc:  # one line, with trec_eval's status (its message says what was read)
        fail(str(exc), exc.status)
    except (Exception, KeyboardInterrupt) as exc:
        report(exc)


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

Numbers are read as trec_eval reads them (C's atol/atof: a qrels label 1.5 is 1, -M 1.5 is 1, P.1e99 is P_1);
stderr says so whenever a number is read as something else than written. Exit status as trec_eval's: 1 a
usage error, 2 a file or parameter it cannot read, 4 it stops at a query (a judged query missing from the run
without -c, a document twice in a query, a first query whose judgments are all negative) after the -q lines
of the queries before it.

trec_eval measures ranklens computes: {supported}.
A measure it does not compute is refused by name (nothing is printed), never left out."""


@click.command("trec_eval", add_help_option=False,
               context_settings={"ignore_unknown_options": True, "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def trec_eval_cmd(args: tuple[str, ...]) -> None:
    """trec_eval's own command line (-q, -c, -m P.5,10, -M, -l, -J ... qrels run): its output, byte for byte.
    Here -c is trec_eval's (every judged query), not --convention. 'ranklens trec_eval -h' for more."""
    run(args)
