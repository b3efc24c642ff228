"""ir_datasets ids on the command line: ``irds:<dataset id>`` as judgments (its qrels) or as a run (its scoreddocs).

ir_datasets (an optional dependency) downloads a dataset's files the first time they are read. ranklens never
lets it: while the records are read, every way ir_datasets has to fetch a file from the network refuses, so a
dataset whose files are not already on this machine (``IR_DATASETS_HOME``, default ``~/.ir_datasets``, or
local files a dataset was registered with) gives one line saying so instead of a download or a hang.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .._base.deps import require
from ..errors import InputError

__all__ = ["PREFIX", "is_irds", "load_irds"]

#: What marks an argument as an ir_datasets id.
PREFIX = "irds:"

_WHAT = {"judgments": ("qrels", "has_qrels", "qrels_iter"), "run": ("scoreddocs", "has_scoreddocs", "scoreddocs_iter")}


class _WouldDownload(Exception):
    """Raised inside ir_datasets where it would fetch a file from the network."""


def is_irds(arg: Any) -> bool:
    """Whether a command-line argument names an ir_datasets dataset (``irds:<id>``)."""
    return isinstance(arg, str) and arg.startswith(PREFIX)


def load_irds(arg: str, what: str) -> list[Any]:
    """The records of ``irds:<id>``: its qrels (``what="judgments"``) or scoreddocs (``what="run"``).

    Raises :class:`~ranklens.errors.InputError` (one line) for an unknown id, a dataset without that part, or
    files that are not on this machine (no download is attempted); MissingDependencyError without ir_datasets.
    """
    ds_id = arg[len(PREFIX):]
    part, has, iterate = _WHAT[what]
    irds = require("ir_datasets")
    try:
        dataset = irds.load(ds_id)
    except KeyError:
        raise InputError(f"{arg}: no ir_datasets dataset has the id {ds_id!r} (see `ir_datasets list`).") from None
    if not getattr(dataset, has)():
        raise InputError(f"{arg}: the ir_datasets dataset {ds_id!r} has no {part}.")
    try:
        with _no_download():
            return list(getattr(dataset, iterate)())
    except _WouldDownload:
        raise InputError(
            f"{arg}: the {part} of ir_datasets {ds_id!r} are not on this machine and ranklens does not download "
            f"them; fetch them once with ir_datasets (e.g. python -c \"import ir_datasets; "
            f"ir_datasets.load('{ds_id}').{iterate}().__next__()\") or set IR_DATASETS_HOME to where they are."
        ) from None
    except RuntimeError as e:  # "All download sources failed", with our refusal among the errors
        if "download" in str(e).lower():
            raise InputError(f"{arg}: the {part} of ir_datasets {ds_id!r} are not on this machine and ranklens "
                             "does not download them.") from None
        raise


@contextlib.contextmanager
def _no_download() -> Iterator[None]:
    """Every network source of ``ir_datasets.util.download`` refuses while the block runs; local files and
    files already in ir_datasets' cache are read as usual."""
    dl = require("ir_datasets.util.download")

    def refuse(*_a: Any, **_k: Any) -> Any:
        raise _WouldDownload

    def path(self: Any, force: bool = True) -> Any:
        if force and self._path is None and not _present(self, dl):
            raise _WouldDownload
        return original_path(self, force)

    original_path = dl.Download.path
    patches = [(dl.Download, "path", path)]
    for name in ("RequestsDownload", "GoogleCloudBucketStream", "GoogleDriveDownload"):
        cls = getattr(dl, name, None)
        if cls is not None:
            patches += [(cls, "stream", refuse)] + ([(cls, "__iter__", refuse)] if "__iter__" in vars(cls) else [])
    saved = [(cls, attr, vars(cls)[attr]) for cls, attr, _ in patches]
    try:
        for cls, attr, new in patches:
            setattr(cls, attr, new)
        yield
    finally:
        for cls, attr, old in saved:
            setattr(cls, attr, old)


def _present(download: Any, dl: Any) -> bool:
    """Whether a ``Download`` can be had without the network: its cache file exists or a local mirror does."""
    import os

    cache = download._cache_path
    if cache is not None and cache != os.devnull and os.path.exists(cache):
        return True
    return any(isinstance(m, dl.LocalDownload) and m.path(force=False).exists() for m in download.mirrors)
