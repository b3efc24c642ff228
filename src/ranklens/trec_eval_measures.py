"""trec_eval's measures: their names, parameters and nicknames, and the ranklens measure computing each.

:data:`TREC_MEASURES` lists every measure of trec_eval 10.0's qrels format in the order trec_eval computes
and prints them (its ``measures.c``), with the parameters ``-m name.params`` takes, their defaults, how a
value is printed, and the ranklens spelling computing it (``None`` where ranklens has none).
:func:`mark_measure` reads one ``-m`` argument as trec_eval does; :func:`measure_lines` gives the lines a
measure prints (``P.5,10`` -> ``P_5``, ``P_10``) with the ranklens measure of each. Used by
:mod:`ranklens.trec_eval_cli`; data and parsing only, no arithmetic.
"""

from ._defs.trec_eval import (
    NICKNAMES,
    OTHER_FORMATS,
    TREC_EVAL_VERSION,
    TREC_MEASURES,
    Line,
    TrecEvalError,
    TrecMeasure,
    c_atof,
    c_atol,
    c_fixed,
    c_long,
    c_lround,
    mark_measure,
    measure_lines,
)

__all__ = [
    "Line",
    "NICKNAMES",
    "OTHER_FORMATS",
    "TREC_EVAL_VERSION",
    "TREC_MEASURES",
    "TrecEvalError",
    "TrecMeasure",
    "c_atof",
    "c_atol",
    "c_fixed",
    "c_long",
    "c_lround",
    "mark_measure",
    "measure_lines",
]
