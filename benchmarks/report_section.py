"""The command line of a benchmark that prints one section of the report: ``--append FILE`` adds it there."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def run(make_lines: Callable[[], list[str]]) -> None:
    """Print the section ``make_lines()`` gives, and append it to ``--append FILE`` when given."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--append", default=None, help="The report (Markdown) to append the section to.")
    a = ap.parse_args()
    lines = make_lines()
    print("\n".join(lines))
    if a.append:
        with open(a.append, "a") as f:
            f.write("\n".join(lines) + "\n")
