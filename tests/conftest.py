"""Shared fixtures."""

from __future__ import annotations

import pytest

import ranklens._threads
from ranklens._kernels import api


@pytest.fixture(params=["one call", "chunks"])
def cut(request, monkeypatch):
    """The ahead-of-time kernels in one call, or cut into small chunks run on three threads."""
    if request.param == "chunks":
        monkeypatch.setattr(api, "SPLIT_MIN_WORK", 8)
        monkeypatch.setattr(ranklens._threads, "_requested", [3])
    return request.param
