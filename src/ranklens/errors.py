"""Exceptions raised by ranklens.

::

    RanklensError
    ├── InvalidParameterError (also ValueError and TypeError)
    ├── InputError (also ValueError)     bad data: NaN scores, duplicates, empty input
    │   └── FormatError                  a file that cannot be parsed (file, line, text)
    ├── EmptyQueryError (also ValueError) a query without relevant items under ``empty="error"``
    ├── MissingDependencyError (also ImportError) an optional extra is not installed
    └── StoreBusyError                   the monitoring store is locked by another writer
"""

from __future__ import annotations

__all__ = [
    "EmptyQueryError",
    "FormatError",
    "InputError",
    "InvalidParameterError",
    "MissingDependencyError",
    "RanklensError",
    "StoreBusyError",
]


class RanklensError(Exception):
    """Root of every error ranklens raises on purpose."""


class InvalidParameterError(RanklensError, ValueError, TypeError):
    """A parameter has a wrong type or value (like scikit-learn's, both a ValueError and a TypeError)."""


class InputError(RanklensError, ValueError):
    """The data given cannot be evaluated as it is."""


class FormatError(InputError):
    """A file does not have the expected format; the message names file, line and text."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None, text: str | None = None):
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f", line {line}"
            where += ": "
        shown = ""
        if text is not None:
            t = text.rstrip("\n")
            if len(t) > 120:
                t = t[:117] + "..."
            shown = f": {t!r}"
        super().__init__(f"{where}{message}{shown}")
        self.path = path
        self.line = line
        self.text = text


class EmptyQueryError(RanklensError, ValueError):
    """A query has no relevant item and the convention says that is an error."""


class MissingDependencyError(RanklensError, ImportError):
    """An optional dependency is needed for what was asked."""


class StoreBusyError(RanklensError):
    """The monitoring store is held by another process for longer than we were asked to wait."""
