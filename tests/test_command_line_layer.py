"""Only the command line imports click or the command modules (issue #28): library code never does.

The command line is ``ranklens.cli`` and ``ranklens.trec_eval_cli`` (the entry points) and the ``ranklens._cli``
package (one module per command). Every other module (the monitor, the dashboard, the simulator...) is
library code: it neither imports click nor a command-line module, lazily inside a function included (an
import under ``if TYPE_CHECKING:`` is for annotations only and is left out). The check first runs on a small
package written here, so it is seen to find each kind of violation.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "ranklens"
COMMAND_LINE = ("cli", "trec_eval_cli", "_cli")  # relative to the package


def _modules(root: Path) -> dict[str, ast.Module]:
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        name = ".".join(parts) + (".__init__" if is_package else "")
        out[name] = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return out


def _imported(name: str, tree: ast.Module) -> list[tuple[int, str]]:
    """(line, module imported) of every import of ``tree``, the names of a ``from`` import as submodules too."""
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(sub) for child in node.body for sub in ast.walk(child))
    package = name.rsplit(".", 1)[0].split(".")
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out += [(node.lineno, target)] + [(node.lineno, f"{target}.{a.name}") for a in node.names]
    return out


def violations(root: Path) -> list[str]:
    top = root.name
    command_line = tuple(f"{top}.{m}" for m in COMMAND_LINE)

    def is_command_line(module: str) -> bool:
        return any(module == c or module.startswith(c + ".") for c in command_line)

    bad = []
    for name, tree in _modules(root).items():
        if is_command_line(name):
            continue
        for line, target in _imported(name, tree):
            if target == "click" or target.startswith("click."):
                bad.append(f"{name}:{line} imports click")
            elif is_command_line(target):
                bad.append(f"{name}:{line} imports the command line ({target})")
    return sorted(set(bad))


def test_the_check_finds_click_and_command_imports_in_library_code(tmp_path: Path) -> None:
    files = {
        "__init__.py": "",
        "cli.py": "import click\nfrom .lib import f\n",
        "_cli/__init__.py": "",
        "_cli/run.py": "import click\nfrom ..cli import main\n",
        "lib/__init__.py": "",
        "lib/ok.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import click\n",
        "lib/eager.py": "import click\n",
        "lib/lazy.py": "def f():\n    from .. import cli\n",
        "lib/command.py": "def g():\n    from .._cli.run import command\n",
    }
    root = tmp_path / "pkg"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text), encoding="utf-8")
    assert violations(root) == [
        "pkg.lib.command:2 imports the command line (pkg._cli.run)",
        "pkg.lib.command:2 imports the command line (pkg._cli.run.command)",
        "pkg.lib.eager:1 imports click",
        "pkg.lib.lazy:2 imports the command line (pkg.cli)",
    ]


def test_library_code_imports_neither_click_nor_the_command_line() -> None:
    bad = violations(SRC)
    assert not bad, "library code that imports the command line (move it into ranklens/_cli/):\n" + "\n".join(bad)
