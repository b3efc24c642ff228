"""Command line: ``ranklens eval``, ``explain``, ``compare``, ``conventions``, ``warmup``.

A user's mistake (a missing file, a malformed line, an unknown measure...)
prints one line on stderr and exits with status 2; never a traceback.
"""

from ._cli.compare import compare_cmd
from ._cli.conventions import conventions_cmd
from ._cli.eval import eval_cmd
from ._cli.explain import explain_cmd
from ._cli.main import (
    COMMANDS,
    INPUT_KEYS,
    OutputFormat,
    cli,
    column_options,
    comparison_options,
    format_option,
    gate_failed,
    input_options,
    integer,
    main,
    number,
    quiet_option,
)
from ._cli.trec_eval import trec_eval_cmd
from ._cli.warmup import warmup_cmd

__all__ = [
    "COMMANDS",
    "INPUT_KEYS",
    "OutputFormat",
    "cli",
    "column_options",
    "compare_cmd",
    "comparison_options",
    "conventions_cmd",
    "eval_cmd",
    "explain_cmd",
    "format_option",
    "gate_failed",
    "input_options",
    "integer",
    "main",
    "number",
    "quiet_option",
    "trec_eval_cmd",
    "warmup_cmd",
]

if __name__ == "__main__":  # pragma: no cover
    main()
