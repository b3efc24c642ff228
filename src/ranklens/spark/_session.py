"""The Spark side of the engine that is not about rows: the session, the dependency check, and errors
raised inside the executors brought back as ranklens errors."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .._base.deps import require
from ..errors import InputError, RanklensError

__all__ = ["collect", "is_dataframe", "require_pyspark", "reraise", "session"]

_ERROR_LINE = re.compile(r"ranklens\.errors\.(\w+): (.*)")


def require_pyspark() -> None:
    """Raise :class:`ranklens.errors.MissingDependencyError` (saying ``pip install 'ranklens[spark]'``)
    when pyspark cannot be imported."""
    require("pyspark")


def session(master: str = "local[*]", app_name: str = "ranklens", config: dict[str, Any] | None = None,
            **conf: Any) -> Any:
    """A SparkSession whose Python workers run this interpreter (``PYSPARK_PYTHON``).

    Parameters
    ----------
    master : str, default="local[*]"
        Spark master URL (``local[2]``, ``yarn``, ``spark://host:7077``...).
    app_name : str, default="ranklens"
        Application name.
    config : dict, optional
        Spark settings by their exact names (``{"spark.executorEnv.PYSPARK_PYTHON": ...}``).
    **conf
        Spark settings; ``_`` in a keyword stands for ``.`` (``spark_sql_shuffle_partitions=4``).

    Returns
    -------
    pyspark.sql.SparkSession

    Examples
    --------
    Starting a JVM is not done in a doctest; the tests run it::

        spark = ranklens.spark.session("local[2]", spark_ui_enabled="false")
    """
    require_pyspark()
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    b = SparkSession.builder.master(master).appName(app_name)
    settings = {k.replace("_", "."): v for k, v in conf.items()}
    settings.update(config or {})
    for k, v in settings.items():
        b = b.config(k, str(v))
    return b.getOrCreate()


def is_dataframe(obj: Any) -> bool:
    """Whether ``obj`` is a pyspark DataFrame (classic or Spark Connect), without importing pyspark."""
    mod = type(obj).__module__ or ""
    return mod.startswith("pyspark.sql") and type(obj).__name__ == "DataFrame"


@contextmanager
def reraise() -> Iterator[None]:
    """Turn a Spark-wrapped ranklens error (raised in an executor) back into the ranklens error.

    Examples
    --------
    >>> from ranklens.errors import InputError
    >>> try:
    ...     with reraise():
    ...         raise RuntimeError("Py4JJavaError ... ranklens.errors.InputError: 2 scores are NaN")
    ... except InputError as e:
    ...     print(e)
    2 scores are NaN
    """
    try:
        yield
    except RanklensError:
        raise
    except Exception as exc:
        found = _ERROR_LINE.findall(str(exc))
        if not found:
            raise
        from .. import errors

        name, message = found[-1]
        cls = getattr(errors, name, InputError)
        raise cls(message.strip()) from None


def collect(df: Any) -> list[Any]:
    """``df.collect()``, an executor's ranklens error raised as itself."""
    with reraise():
        return df.collect()
