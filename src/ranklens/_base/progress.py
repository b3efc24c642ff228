"""A small progress line on stderr for work that takes more than a couple of seconds.

Shown only when stderr is a terminal, nothing turned it off (``--quiet``, :func:`set_quiet`, the
environment variable ``RANKLENS_PROGRESS=0``) and the work has already run for ``delay`` seconds;
redrawn at most ten times a second, and every half second by a small thread while one long step runs
(reading a large file, a bootstrap), so that the elapsed time moves. No dependency: one carriage-return line.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, TextIO

__all__ = ["Progress", "set_quiet"]

_STATE = {"quiet": False}


def set_quiet(quiet: bool = True) -> None:
    """Turn progress lines off (``True``) or back on for this process."""
    _STATE["quiet"] = bool(quiet)


def _wanted(stream: Any) -> bool:
    if _STATE["quiet"] or os.environ.get("RANKLENS_PROGRESS", "").strip().lower() in ("0", "false", "no", "off"):
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # a closed stream
        return False


class Progress:
    """``with Progress(total, "bootstrap") as p: ... p.advance()`` - a line such as
    ``ranklens: bootstrap 3/10 (30%) 4.1s`` once the work has taken ``delay`` seconds.

    Parameters
    ----------
    total : int or None
        Steps in all (``None``: show the step count and time only).
    what : str
        What is being done.
    delay : float, default=2.0
        Seconds before the line first appears (short work shows nothing).
    stream : file, optional
        Where to write (default ``sys.stderr``).
    enabled : bool, optional
        Force on or off (default: stderr is a terminal and progress is not turned off).

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> with Progress(2, "runs", delay=0, stream=out, enabled=True) as p:
    ...     p.advance(); p.advance()
    >>> out.getvalue().split("\\r")[-1].strip()
    'ranklens: runs 2/2 (100%) 0.0s'
    """

    def __init__(self, total: int | None, what: str, *, delay: float = 2.0, stream: TextIO | None = None,
                 enabled: bool | None = None) -> None:
        self.total = total
        self.what = what
        self.delay = delay
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _wanted(self.stream) if enabled is None else enabled
        self.done = 0
        self.start = time.monotonic()
        self._last = -1.0
        self._shown = False
        self._width = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if self.enabled:  # only on a terminal: redraw while a long step runs (the kernels release the GIL)
            self._ticker = threading.Thread(target=self._tick, name="ranklens-progress", daemon=True)
            self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(0.5):
            self._draw()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def advance(self, n: int = 1, what: str | None = None) -> None:
        """``n`` more steps done (and, optionally, a new description)."""
        self.done += n
        if what is not None:
            self.what = what
        self._draw()

    def _line(self, now: float) -> str:
        elapsed = f"{now - self.start:.1f}s"
        if self.total:
            pct = min(100, int(100 * self.done / self.total))
            return f"ranklens: {self.what} {self.done}/{self.total} ({pct}%) {elapsed}"
        return f"ranklens: {self.what} {self.done} {elapsed}"

    def _draw(self, final: bool = False) -> None:
        if not self.enabled:
            return
        with self._lock:
            now = time.monotonic()
            if now - self.start < self.delay or (not final and now - self._last < 0.1):
                return
            self._last = now
            line = self._line(now)
            self.stream.write("\r" + line.ljust(self._width))
            self._width = len(line)
            self.stream.flush()
            self._shown = True

    def close(self) -> None:
        """Stop redrawing, draw the last state and end the line (only if anything was shown)."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        self._draw(final=True)
        with self._lock:
            if self._shown:
                self.stream.write("\n")
                self.stream.flush()
                self._shown = False
