"""Exceptions raised by ranklens, and how the command line reports one.

::

    RanklensError
    ├── InvalidParameterError (also ValueError and TypeError)
    ├── InputError (also ValueError)     bad data: NaN scores, duplicates, empty input
    │   └── FormatError                  a file that cannot be parsed (file, line, text)
    ├── EmptyQueryError (also ValueError) a query without relevant items under ``empty="error"``
    ├── MissingDependencyError (also ImportError) an optional extra is not installed
    ├── StoreBusyError                   the monitoring store is locked by another writer
    └── ResourceError                    the machine ran out of something (disk space under the store...)

On the command line every failure is one line on stderr (:func:`report`) and its own exit status
(:data:`EXIT_STATUSES`; 1 is never a failure: it means a gate failed or an alert fired):

* 2, ``ranklens: error: ...``: the user's input or usage (any :class:`RanklensError` but a
  :class:`ResourceError`, an operating-system error on a path the user gave: missing file, permission, a
  directory, a symlink loop...);
* 70, ``ranklens: internal error: ...``: a bug of ranklens (``EX_SOFTWARE`` of ``sysexits.h``);
* 71, ``ranklens: error: out of ...``: the machine ran out of a resource: memory, disk space or quota, open
  files, or an input/output error of the device (:class:`ResourceError`, ``MemoryError``; ``EX_OSERR``);
* 130 an interrupt (Ctrl-C), 141 a closed pipe (``ranklens ... | head``: 128 + SIGPIPE, what a shell reports
  for a program SIGPIPE ends).

``ranklens --debug`` or ``RANKLENS_DEBUG=1`` print the traceback too.
"""

from __future__ import annotations

import errno
import os
import sys
import traceback
from typing import NoReturn

__all__ = [
    "DEBUG_ENV",
    "EXIT_STATUSES",
    "EmptyQueryError",
    "FormatError",
    "InputError",
    "InvalidParameterError",
    "MissingDependencyError",
    "RanklensError",
    "ResourceError",
    "StoreBusyError",
    "debug_enabled",
    "describe",
    "fail",
    "one_line",
    "report",
    "set_debug",
]

#: The environment variable that turns the tracebacks on (any value but "", "0", "false", "no", "off").
DEBUG_ENV = "RANKLENS_DEBUG"

_state = {"debug": False}


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


class ResourceError(RanklensError):
    """The machine ran out of a resource (disk space or quota under the store, memory): not the input's fault,
    not a bug; the command line exits with its own status (71)."""


#: The command line's exit statuses (``docs/cli.md``): what each means.
EXIT_STATUSES: dict[int, str] = {
    0: "success",
    1: "a gate failed (--fail-under, --fail-if-worse) or an alert fired (monitor check): never an error",
    2: "the input or the usage is wrong (a missing file, a malformed line, an unknown measure, a damaged store...)",
    70: "internal error: a bug of ranklens (please report it)",
    71: "the machine ran out of a resource: memory, disk space or quota, open files, or a device's I/O error",
    130: "interrupted (Ctrl-C)",
    141: "the output's reader went away (a closed pipe: ranklens ... | head)",
}

#: Operating-system errors that say the machine ran out of something (or its device failed), not the path given.
_RESOURCE_ERRNOS = frozenset(getattr(errno, n) for n in ("ENOSPC", "EDQUOT", "EFBIG", "EMFILE", "ENFILE", "ENOMEM",
                                                         "EIO", "ENOBUFS") if hasattr(errno, n))


def set_debug(debug: bool = True) -> None:
    """Print the traceback of every failure (``ranklens --debug``)."""
    _state["debug"] = bool(debug)


def debug_enabled() -> bool:
    """Whether tracebacks are printed: ``--debug`` given or ``RANKLENS_DEBUG`` set.

    >>> set_debug(True); debug_enabled()
    True
    >>> set_debug(False)
    """
    env = os.environ.get(DEBUG_ENV, "").strip().lower()
    return _state["debug"] or env not in ("", "0", "false", "no", "off")


def one_line(message: object) -> str:
    """A message on one line: every run of whitespace (newlines too) becomes one space."""
    return " ".join(str(message).split())


def fail(message: object, code: int = 2) -> NoReturn:
    """Print ``ranklens: error: MESSAGE`` on stderr (on one line) and exit with ``code``."""
    print(f"ranklens: error: {one_line(message)}", file=sys.stderr, flush=True)
    sys.exit(code)


def describe(exc: BaseException) -> tuple[str, int]:
    """``(message, exit status)`` of an exception that ends a command.

    Examples
    --------
    >>> describe(FileNotFoundError(2, "No such file or directory", "runs/a.txt"))
    ('runs/a.txt: No such file or directory', 2)
    >>> describe(ZeroDivisionError("division by zero"))[1]
    70
    >>> describe(OSError(28, "No space left on device", "out.json"))
    ('out of disk space or another resource: out.json: No space left on device', 71)
    """
    if isinstance(exc, ResourceError):
        return str(exc) or type(exc).__name__, 71
    if isinstance(exc, RanklensError):
        return str(exc) or type(exc).__name__, 2
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted", 130
    if isinstance(exc, MemoryError):
        return ("out of memory (the input, or a parameter such as the number of resamples, is too large for "
                "this machine)"), 71
    if isinstance(exc, OSError):
        what = exc.strerror or str(exc) or type(exc).__name__
        names = [n for n in (exc.filename, exc.filename2) if n is not None]
        where = " -> ".join(os.fsdecode(n) if isinstance(n, (str, bytes)) else str(n) for n in names)
        text = f"{where}: {what}" if where else what
        if exc.errno in _RESOURCE_ERRNOS:
            return f"out of disk space or another resource: {text}", 71
        return text, 2
    if isinstance(exc, ValueError) and str(exc) in ("embedded null byte", "embedded null character"):
        return "a file name holds a NUL byte: not a path", 2  # os.stat's refusal, e.g. in click's Path check
    if isinstance(exc, UnicodeDecodeError):
        return f"the input is not valid UTF-8 ({exc.reason} at byte {exc.start})", 2
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return (f"internal error: {detail} (a bug in ranklens: please report it; run with --debug or "
            f"{DEBUG_ENV}=1 for the traceback)"), 70


def report(exc: BaseException) -> NoReturn:
    """End the command on ``exc``: its traceback when :func:`debug_enabled`, then one line and the exit
    status of :func:`describe`."""
    if isinstance(exc, BrokenPipeError):
        # the reader of our output went away (`ranklens ... | head`): stop quietly, as Unix tools do, with the
        # status a shell reports for a program SIGPIPE ends (128 + 13), never 1 (a failed gate); the rest of
        # the output has nowhere to go
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        sys.exit(141)
    message, code = describe(exc)
    if debug_enabled():
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    if message.startswith("internal error: "):
        print(f"ranklens: {one_line(message)}", file=sys.stderr, flush=True)
        sys.exit(code)
    fail(message, code)
