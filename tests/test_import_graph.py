"""docs/_static/imports.svg (the picture in docs/architecture.md) is the one the code draws now.

tools/import_graph.py reads the layers, modules and imports as tests/test_layers.py reads them; this test
first shows the drawing reacts to the code (a new import between two folders adds an arrow), then that the
committed file is current (`make graph` redraws it).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "tools" / "import_graph.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["import_graph"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_the_graph_follows_the_imports(monkeypatch):
    tool = _tool()
    boxes, sizes, edges = tool.graph()
    assert boxes["_kernels"] == 1 and boxes["_cli"] == 9 and boxes["monitor"] == 7
    assert edges[("_core", "_kernels")] > 0          # the core calls the kernels
    assert ("_kernels", "_core") not in edges        # never the other way
    assert not any(b == "evaluate" for b in boxes)   # faces are not boxes
    real = tool._imports

    def one_more(module, path):
        extra = [(1, "ranklens._cli.main.main")] if module == "ranklens._output.render" else []
        return real(module, path) + extra

    monkeypatch.setattr(tool, "_imports", one_more)
    _, _, more = tool.graph()
    assert more[("_output", "_cli")] == 1
    assert "_output imports _cli: 1 lines" in tool.svg()


def test_the_committed_picture_is_current():
    tool = _tool()
    assert tool.OUT.read_text(encoding="utf-8") == tool.svg(), "docs/_static/imports.svg is stale: run `make graph`"
