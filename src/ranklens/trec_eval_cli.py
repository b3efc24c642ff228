"""``ranklens trec_eval`` and the ``ranklens-trec_eval`` script: trec_eval's command line, trec_eval's output.

The arguments are trec_eval 10.0's (``-q``, ``-c``, ``-n``, ``-l N``, ``-M N``, ``-J``, ``-m measure[.params]``
repeated, the nicknames ``official`` (the default), ``all_trec`` and ``set``, then ``qrels run``) and the
output is trec_eval's, byte for byte: ``%-22s\\t%s\\t%6.4f`` lines, the counts as integers, the per-query
lines (``-q``) query by query before the ``all`` lines, measures in trec_eval's own order.

Numbers are read as trec_eval's C reads them (``atol`` / ``atof``): a qrels label ``1.5`` is 1, ``-M 1.5`` is 1,
``-m P.1e99`` is ``P_1``, a full-width digit is no digit; each time a number is read as something else than
written, a line on stderr says so. The exit statuses are trec_eval's: 1 for a usage error (an unknown flag or
measure, a wrong number of arguments), 2 for a file or a measure parameter it cannot read, 4 where it stops at
a query (a judged query missing from the run without ``-c``, a document twice in a query, a first query whose
judgments are all negative), after printing the
``-q`` lines of the queries before it; ranklens' own refusals (a measure it does not compute) are 2.

This module translates the command line (a trec_eval measure and its parameters become ranklens measures,
:data:`ranklens.trec_eval_measures.TREC_MEASURES`; the flags become fields of the ``trec_eval10`` convention,
``-l`` its ``relevance_level``, ``-c`` ``queries="judged"`` with a missing run scored 0) and prints; the
numbers, and the rows ``-M`` and ``-J`` keep, come from :mod:`ranklens._core.trec_run`. A measure ranklens
does not compute is refused by name, never left out: ``-m all_trec`` names every missing one.

Inside this command ``-c`` is trec_eval's "average over every judged query", not ranklens' ``-c/--convention``.
"""

from ._cli.trec_eval import (
    main,
    parse_args,
    run,
)

__all__ = [
    "main",
    "parse_args",
    "run",
]

if __name__ == "__main__":  # pragma: no cover
    main()
