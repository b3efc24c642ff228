"""``ranklens trec_eval`` and the ``ranklens-trec_eval`` script: trec_eval's command line, trec_eval's output.

The arguments are trec_eval 10.0's (``-q``, ``-c``, ``-n``, ``-l N``, ``-M N``, ``-J``, ``-m measure[.params]``
repeated, the nicknames ``official`` (the default), ``all_trec`` and ``set``, then ``qrels run``) and the
output is trec_eval's, byte for byte: ``%-22s\\t%s\\t%6.4f`` lines, the counts as integers, the per-query
lines (``-q``) query by query before the ``all`` lines, measures in trec_eval's own order.

This module only translates: a trec_eval measure and its parameters become ranklens measures
(:data:`ranklens.trec_eval_measures.TREC_MEASURES`), the flags become fields of the ``trec_eval10``
convention (``-l``: its ``relevance_level``; ``-c``: ``queries="judged"`` with a missing run scored 0)
or a selection of the run's rows (``-M``: each query's first N items in trec_eval's order, score
descending and ties by document id descending; ``-J``: only the judged items), and every number comes
from :func:`ranklens.evaluate`. A measure ranklens does not compute is refused by name, never left out:
``-m all_trec`` names every missing one.

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
