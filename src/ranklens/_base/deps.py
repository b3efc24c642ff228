"""Optional dependencies, imported only when used, with a helpful error when missing."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import MissingDependencyError

__all__ = ["require"]

_EXTRAS = {
    "pandas": "pandas",
    "polars": "polars",
    "pyarrow": "arrow",
    "duckdb": "monitor",
    "pyspark": "spark",
    "matplotlib": "plot",
    "starlette": "web",
    "uvicorn": "web",
    "scipy": "stats",
}
# optional dependencies that are no extra of ranklens (the library being plugged into): pip names
_PACKAGES = {"sklearn": "scikit-learn", "lightgbm": "lightgbm", "xgboost": "xgboost", "catboost": "catboost",
             "mlflow": "mlflow", "ir_datasets": "ir_datasets"}


def require(name: str) -> ModuleType:
    """Import an optional dependency or raise MissingDependencyError saying how to install it."""
    try:
        return importlib.import_module(name)
    except ImportError:
        if name in _PACKAGES:
            how = f"pip install {_PACKAGES[name]}"
        else:
            how = f"pip install 'ranklens[{_EXTRAS.get(name, name)}]'"
        raise MissingDependencyError(f"this needs the optional dependency {name!r}; install it with: {how}") from None
