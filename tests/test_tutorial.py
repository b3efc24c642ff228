"""The tutorial notebook runs from top to bottom, and each training example script runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.slow
def test_tutorial_notebook_runs_without_errors():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(EXAMPLES / "tutorial.ipynb", as_version=4)
    for cell in nb.cells:  # run from scratch: no stored output counts
        if cell.cell_type == "code":
            cell.outputs = []
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(EXAMPLES)}})
    client.execute()  # raises CellExecutionError on the first failing cell
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    # the reprs the notebook shows: a Result, a Comparison and an Explanation as tables
    assert "ranklens Result: 50 queries, convention &#x27;sklearn&#x27;" in html
    assert "ranklens Comparison: 2 runs" in html and "ndcg@10  (baseline: ridge)" in html
    assert "under convention &#x27;lightgbm&#x27;" in html and "ideal item</th>" in html
    assert any("image/png" in o.get("data", {}) for o in outputs)  # the forest plots
    text = "".join(o.get("text", "") for o in outputs)
    assert "largest gap between LightGBM's ndcg@10 and ranklens': " in text
    gap = float(text.split("ranklens': ")[1].split()[0])
    assert gap <= 1e-12  # LightGBM's own ndcg@10 and ranklens', every iteration


@pytest.mark.slow
@pytest.mark.parametrize("script", ["train_lightgbm.py", "train_xgboost.py", "train_catboost.py",
                                    "sklearn_gridsearch.py"])
def test_example_script_runs(script, tmp_path):
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    res = subprocess.run([sys.executable, str(EXAMPLES / script)], capture_output=True, text=True, cwd=tmp_path,
                         env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip()
    assert list(tmp_path.iterdir()) == []  # writes nothing where it runs (CatBoost's catboost_info...)
    if "gap" in res.stdout:  # the scripts that log the peer's own metric beside ranklens'
        gaps = [float(part.split(":")[-1].strip().split()[0]) for part in res.stdout.split("\n")
                if "largest gap" in part]
        assert gaps and max(gaps) <= 1e-6
