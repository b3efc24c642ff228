"""docs/architecture.md's layer table is true: every module is placed, and no import goes up a layer.

The table is read from the document itself (the ``text`` block after its ``layer table`` marker), so the
page and the code cannot drift apart. Imports inside functions count (a lazy import up a layer is still
an upward dependency); imports under ``if TYPE_CHECKING:`` do not.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "ranklens"
DOC = ROOT / "docs" / "architecture.md"


def _layers() -> dict[str, int]:
    text = DOC.read_text(encoding="utf-8")
    m = re.search(r"<!-- not-run: the layer table[^>]*-->\s*```text\n(.*?)```", text, re.S)
    assert m, "docs/architecture.md has no layer table block"
    out: dict[str, int] = {}
    for line in m.group(1).splitlines():
        head, _, mods = line.partition(":")
        level = int(head.split()[0])
        for name in mods.split():
            assert name not in out, f"{name} is placed twice in the layer table"
            out[name] = level
    return out


def _module_names(src: Path = SRC) -> dict[str, Path]:
    mods = {}
    for p in src.rglob("*.py"):
        parts = list(p.relative_to(src.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = p
    return mods


def _unit(module: str, layers: dict[str, int]) -> str:
    """The table's entry for a dotted module name: itself, or the package that holds it."""
    rel = module.split(".")[1:]
    if not rel:
        return "ranklens"
    for n in range(len(rel), 0, -1):
        if ".".join(rel[:n]) in layers:
            return ".".join(rel[:n])
    return ".".join(rel)


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                for inner in ast.walk(sub):
                    if hasattr(inner, "lineno"):
                        lines.add(inner.lineno)
    return lines


def _imports(module: str, path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_lines(tree)
    is_pkg = path.name == "__init__.py"
    out = []
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_pkg else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("ranklens"):
                out += [(node.lineno, f"{target}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("ranklens")]
    return out


def _upward(layers: dict[str, int], src: Path = SRC) -> list[str]:
    mods = _module_names(src)
    bad = []
    for module, path in sorted(mods.items()):
        unit_from = _unit(module, layers)
        for line, target in _imports(module, path):
            # `from .x import name` names either a module (x.name) or an object of x
            dest = target if target in mods else target.rsplit(".", 1)[0]
            unit_to = _unit(dest, layers)
            if unit_to in layers and unit_from in layers and layers[unit_to] > layers[unit_from]:
                bad.append(f"{path.relative_to(src.parent)}:{line} ({unit_from}, layer {layers[unit_from]}) "
                           f"imports {dest} ({unit_to}, layer {layers[unit_to]})")
    return bad


def test_every_module_is_placed_in_a_layer():
    layers = _layers()
    units = {_unit(m, layers) for m in _module_names()}
    missing = sorted(units - set(layers))
    assert not missing, f"modules docs/architecture.md's layer table does not place: {missing}"
    stale = sorted(set(layers) - units)
    assert not stale, f"the layer table names modules that do not exist: {stale}"


def test_no_import_goes_up_a_layer():
    bad = _upward(_layers())
    assert not bad, "imports up a layer:\n" + "\n".join(bad)


def test_the_check_sees_an_upward_import(tmp_path):
    """A low layer importing a high one, even lazily, is found (here errors.py importing cli)."""
    fake = tmp_path / "ranklens"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "errors.py").write_text("def f():\n    from .cli import main\n")
    (fake / "cli.py").write_text("from .errors import f\n")
    bad = _upward(_layers(), fake)
    assert len(bad) == 1 and "errors, layer 0) imports ranklens.cli (cli, layer 6)" in bad[0]


@pytest.mark.parametrize("name", ["render", "_plan", "options", "records"])
def test_the_new_modules_of_the_redesign_are_placed(name):
    assert name in _layers()
