"""Shared fixtures."""

from __future__ import annotations

import pytest

import ranklens._base.threads
from ranklens._kernels import dispatch


@pytest.fixture(params=["one call", "chunks"])
def cut(request, monkeypatch):
    """The ahead-of-time kernels in one call, or cut into small chunks run on three threads."""
    if request.param == "chunks":
        monkeypatch.setattr(dispatch, "SPLIT_MIN_WORK", 8)
        monkeypatch.setattr(ranklens._base.threads, "_requested", [3])
    return request.param


@pytest.fixture()
def run_cli(capsys):
    """``run_cli(args)``: ``ranklens ARGS`` in this process, as ``(exit status, stdout, stderr)``."""
    from ranklens.cli import main

    def run(args):
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


# Markers of tests that `make test-fast` leaves out: a test carrying any of them is slow too (pyproject.toml).
SLOW_KINDS = ("spark", "browser", "evidently", "build")


# `make test` runs the suite on two processes (pytest-xdist, `--dist loadgroup`): each module goes whole to one of
# them, so that a module's fixtures are made once; the tests that build wheels, sites or venvs from the working tree
# run one after the other on one process (two builds in one tree at once could meet), and those that start Spark
# share one JVM.
SHARED_GROUPS = ("build", "spark")


def pytest_collection_modifyitems(config, items):
    # without pytest-xdist (`make test-numba-latest`'s environment, a serial run with `-p no:xdist`) no group marker
    # is added: --strict-markers would refuse it as unknown
    xdist = config.pluginmanager.hasplugin("xdist")
    for item in items:
        if any(item.get_closest_marker(kind) for kind in SLOW_KINDS) and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)
        if xdist and not item.get_closest_marker("xdist_group"):
            group = next((kind for kind in SHARED_GROUPS if item.get_closest_marker(kind)), None)
            item.add_marker(pytest.mark.xdist_group(group or item.nodeid.split("::")[0]))
