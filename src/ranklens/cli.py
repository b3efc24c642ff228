"""Command line: ``ranklens eval``, ``explain``, ``compare``, ``conventions``, ``warmup``.

A user's mistake (a missing file, a malformed line, an unknown measure...)
prints one line on stderr and exits with status 2; never a traceback.
"""

from ._cli.main import (
    INPUT_KEYS,
    OutputFormat,
    cli,
    column_options,
    compare_cmd,
    comparison_options,
    conventions_cmd,
    eval_cmd,
    explain_cmd,
    format_option,
    input_options,
    integer,
    main,
    number,
    quiet_option,
    trec_eval_cmd,
    warmup_cmd,
)

__all__ = [
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
