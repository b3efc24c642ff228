"""Sphinx helpers of the ranklens docs: the ``ranklens`` click group with every subcommand resolved.

``ranklens.cli`` registers ``monitor``, ``serve`` and ``report`` lazily (their modules, and duckdb or the
web stack, load only when invoked). sphinx-click walks ``group.commands``, which holds only the eager
ones, so the CLI reference documents ``cli`` below: a copy of the group whose ``commands`` holds every
command ``ranklens --help`` lists, each resolved by the group itself.
"""

from __future__ import annotations

import copy
import re

import click

from ranklens import cli as _cli


def resolved_group(group: click.Group) -> click.Group:
    """A copy of ``group`` whose ``commands`` holds every listed command, lazy ones imported."""
    ctx = click.Context(group, info_name="ranklens")
    full = copy.copy(group)
    full.commands = {}
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if cmd is None:
            raise RuntimeError(f"ranklens {name}: listed by 'ranklens --help' but cannot be imported")
        full.commands[name] = cmd
    return full


cli = resolved_group(_cli.cli)


# A numpydoc parameter line such as `prefix : str, default="ranklens_"`: its type text is read as
# reStructuredText, where a word ending in "_" is a link to a target of that name (none exists), and
# `default=("ndcg@10",)` holds what docutils takes for an e-mail address (a mailto: link).
_PARAM_LINE = re.compile(r"^\s*\*{0,2}\w+\s+:\s")
_TRAILING_UNDERSCORE = re.compile(r"(?<=\w)_(?=[\"'])")


def escape_default_underscores(app, what, name, obj, options, lines):  # Sphinx's signature
    """Escape, in numpydoc parameter lines, a quoted default's final underscore and every "@" (before numpydoc)."""
    for i, line in enumerate(lines):
        if _PARAM_LINE.match(line) and "default" in line:
            lines[i] = _TRAILING_UNDERSCORE.sub(r"\\_", line).replace("@", r"\@")


# Click help is plain text; sphinx-click hands it to reStructuredText, where a lone "*" ("marked with *.")
# opens an emphasis that never closes and "ndcg@10" becomes a mailto: link.
_LONE_STAR = re.compile(r"(?<!\S)\*(?=[\s.,;:)]|$)")


def escape_help(app, ctx, lines):  # sphinx-click's signature
    """Escape the asterisks of a command's or option's help that stand alone (not emphasis), and every "@"."""
    for i, line in enumerate(lines):
        lines[i] = _LONE_STAR.sub(r"\\*", line).replace("@", r"\@")


def setup(app):
    app.connect("autodoc-process-docstring", escape_default_underscores, priority=100)
    app.connect("sphinx-click-process-description", escape_help)
    app.connect("sphinx-click-process-options", escape_help)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
