"""Sphinx helpers of the ranklens docs: the ``ranklens`` click group with every subcommand resolved.

``ranklens.cli`` registers every command lazily (its module in ``ranklens._cli``, and duckdb or the web
stack, load only when it is invoked). sphinx-click walks ``group.commands``, which holds none of them, so
the CLI reference documents ``cli`` below: a copy of the group whose ``commands`` holds every command
``ranklens --help`` lists, each resolved by the group itself.
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import re
import sys
from functools import cache

import click
from sphinx.pycode import ModuleAnalyzer

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


# The public modules at the package's root are faces: they re-export names of the modules of a layer folder
# (ranklens.render re-exports ranklens._output.render's). autodoc reads the `#:` comment that documents a constant
# from the source of the module it documents, the face, which holds none: the API pages name such constants with
# `autodata` and this hook reads the comment from the module that defines the constant.
@cache
def _defining_module(module: str, name: str) -> str:
    """The module that assigns ``name``, following the ``from .x import name`` lines from ``module``."""
    package = module if hasattr(sys.modules[module], "__path__") else module.rpartition(".")[0]
    for node in ast.parse(inspect.getsource(sys.modules[module])).body:
        if isinstance(node, ast.ImportFrom) and node.level and any(a.name == name for a in node.names):
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
            importlib.import_module(source)
            return _defining_module(source, name)
    return module


def constant_docstring(app, what, name, obj, options, lines):  # Sphinx's signature
    """A constant of a face documented by the `#:` comment where it is assigned."""
    module, _, attr = name.rpartition(".")
    if what == "data" and module in sys.modules:
        doc = ModuleAnalyzer.for_module(_defining_module(module, attr)).find_attr_docs().get(("", attr))
        if doc:
            lines[:] = doc


def setup(app):
    app.connect("autodoc-process-docstring", constant_docstring, priority=90)
    app.connect("autodoc-process-docstring", escape_default_underscores, priority=100)
    app.connect("sphinx-click-process-description", escape_help)
    app.connect("sphinx-click-process-options", escape_help)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
