"""The LightGBM lambdarank sample (MIT, microsoft/LightGBM examples/lambdarank), as the examples load it.

The files live in the repository's tests/data/lightgbm-lambdarank (see SOURCE.md there): svmlight rows
``label idx:val ...`` (labels 0-4, 300 features) and a ``.query`` file of consecutive query sizes.
train: 3005 rows / 201 queries; test: 768 rows / 50 queries.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "lightgbm-lambdarank"


def load(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``X`` (dense), labels ``y`` and group sizes of ``rank.<name>`` (``"train"`` or ``"test"``)."""
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(str(DATA / f"rank.{name}.gz"), n_features=300)
    group = np.loadtxt(DATA / f"rank.{name}.query", dtype=np.int64)
    return X.toarray(), y, group
