"""docs/architecture.md's layer table is true: every module is placed, no import goes up a layer, and the
public modules at the package's root are faces (re-exports of a layer folder, nothing else).

The table is read from the document itself (the ``text`` block after its ``layer table`` marker), so the
page and the code cannot drift apart. Imports inside functions count (a lazy import up a layer is still
an upward dependency); imports under ``if TYPE_CHECKING:`` do not.

A face (``ranklens/evaluate.py``: ``from ._core.evaluate import evaluate, evaluate_arrays`` and ``__all__``)
keeps a public import path while the code lives in its layer's folder. Every module at the root is a face
except the package's own: ``__init__`` (the top-level names), ``errors`` (the exception tree, layer 0) and
``_version``. A face holds a docstring, imports from the modules of layer folders, an ``__all__`` naming
exactly what it imports, and, for a command's module, the ``if __name__ == "__main__":`` call of its
``main``; it sits in the layer of the folders it re-exports.

Each check first runs on a small package written by the test (so it is seen to fail), then on src/ranklens.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "ranklens"
DOC = ROOT / "docs" / "architecture.md"
#: the modules at the root that are the package's own, not faces
OWN = ("__init__", "errors", "_version")


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


def _unplaced(layers: dict[str, int], src: Path = SRC) -> tuple[list[str], list[str]]:
    """Modules the table does not place, and entries of the table that name no module."""
    units = {_unit(m, layers) for m in _module_names(src)}
    return sorted(units - set(layers)), sorted(set(layers) - units)


def _face_problems(layers: dict[str, int], src: Path = SRC) -> list[str]:
    """What makes a module at the root other than the package's own (:data:`OWN`) more than a face."""
    bad = []
    for path in sorted(src.glob("*.py")):
        if path.stem in OWN:
            continue
        name = path.stem
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported: list[str] = []
        exported: list[str] | None = None
        folders = set()
        for i, node in enumerate(tree.body):
            if i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # the docstring
            if (isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
                    and node.module.startswith("_") and "." in node.module):
                folders.add(node.module.split(".")[0])
                for a in node.names:
                    if a.asname not in (None, a.name):
                        bad.append(f"{name}: renames {a.name} as {a.asname} (a face keeps the names)")
                    imported.append(a.name)
                continue
            if (isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["__all__"]
                    and isinstance(node.value, (ast.List, ast.Tuple))
                    and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.value.elts)):
                exported = [e.value for e in node.value.elts]  # type: ignore[attr-defined]
                continue
            if (isinstance(node, ast.If) and ast.unparse(node.test) == "__name__ == '__main__'"
                    and not node.orelse and [ast.unparse(s) for s in node.body] == ["main()"]):
                continue
            bad.append(f"{name}:{node.lineno}: holds more than re-exports: {ast.unparse(node).splitlines()[0]}")
        if exported is None:
            bad.append(f"{name}: no explicit __all__")
        elif sorted(exported) != sorted(imported):
            bad.append(f"{name}: __all__ is not what it imports (only in __all__: "
                       f"{sorted(set(exported) - set(imported))}; not in __all__: "
                       f"{sorted(set(imported) - set(exported))})")
        if not folders:
            bad.append(f"{name}: re-exports nothing from a layer folder")
        for folder in sorted(folders):
            if folder in layers and name in layers and layers[folder] != layers[name]:
                bad.append(f"{name} (layer {layers[name]}) re-exports {folder} (layer {layers[folder]})")
    return bad


# ---- the checks on a package made for the purpose ----

def _fake(tmp_path: Path, files: dict[str, str]) -> Path:
    fake = tmp_path / "ranklens"
    for rel, text in {"__init__.py": "", **files}.items():
        path = fake / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return fake


def test_the_check_sees_an_upward_import(tmp_path):
    """A low layer importing a high one, even lazily, is found (here errors.py importing cli)."""
    fake = _fake(tmp_path, {"errors.py": "def f():\n    from .cli import main\n", "cli.py": "from .errors import f\n",
                            "_core/__init__.py": "", "_core/a.py": "from .._cli.main import x\n",
                            "_cli/__init__.py": "", "_cli/main.py": "from .._core import a\nx = 1\n"})
    bad = _upward(_layers(), fake)
    assert len(bad) == 2
    assert "_core/a.py:1 (_core, layer 4) imports ranklens._cli.main (_cli, layer 9)" in bad[0]
    assert "errors.py:2 (errors, layer 0) imports ranklens.cli (cli, layer 9)" in bad[1]


def test_the_check_sees_a_module_the_table_does_not_place(tmp_path):
    fake = _fake(tmp_path, {"errors.py": "", "_core/__init__.py": "", "_core/a.py": "", "_helpers.py": "",
                            "_fresh/__init__.py": ""})
    missing, stale = _unplaced(_layers(), fake)
    assert missing == ["_fresh", "_helpers"]
    assert "_core" not in stale and "errors" not in stale and "_defs" in stale


def test_the_check_sees_a_face_that_holds_more_than_re_exports(tmp_path):
    ok = '"""The face."""\n\nfrom ._core.evaluate import evaluate, evaluate_arrays\n\n' \
         '__all__ = ["evaluate", "evaluate_arrays"]\n'
    fake = _fake(tmp_path, {
        "errors.py": "class E(Exception):\n    pass\n",  # the package's own: not a face
        "evaluate.py": ok,
        "cli.py": 'from ._cli.main import main\n\n__all__ = ["main"]\n\nif __name__ == "__main__":\n    main()\n',
        "result.py": 'from ._core.result import Result\n\n__all__ = ["Result"]\n\ndef helper():\n    pass\n',
        "stats.py": 'from ._core.stats import t\nfrom ._core.stats import u as v\n\n__all__ = ["t", "v", "w"]\n',
        "render.py": 'from ._core.schema import plain\n',
        "options.py": 'import numpy as np\n\nfrom ._input.options import split_options\n\n'
                      '__all__ = ["split_options"]\n',
        "_helpers.py": "X = 1\n",  # a private module at the root: not a face, so more than re-exports
    })
    bad = _face_problems(_layers(), fake)
    assert bad == [
        "_helpers:1: holds more than re-exports: X = 1",
        "_helpers: no explicit __all__",
        "_helpers: re-exports nothing from a layer folder",
        "options:1: holds more than re-exports: import numpy as np",
        "render: no explicit __all__",
        "render (layer 5) re-exports _core (layer 4)",
        "result:5: holds more than re-exports: def helper():",
        "stats: renames u as v (a face keeps the names)",
        "stats: __all__ is not what it imports (only in __all__: ['v', 'w']; not in __all__: ['u'])",
    ]


# ---- the rules on ranklens ----

def test_every_module_is_placed_in_a_layer():
    missing, stale = _unplaced(_layers())
    assert not missing, f"modules docs/architecture.md's layer table does not place: {missing}"
    assert not stale, f"the layer table names modules that do not exist: {stale}"


def test_no_import_goes_up_a_layer():
    bad = _upward(_layers())
    assert not bad, "imports up a layer:\n" + "\n".join(bad)


def test_the_root_holds_faces_only():
    bad = _face_problems(_layers())
    assert not bad, "modules at the package's root that are not thin faces:\n" + "\n".join(bad)
