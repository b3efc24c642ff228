"""numba is ours to control: one pin, with an upper bound, that the numba in use satisfies."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def _numba_pins() -> tuple[Requirement, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    [run] = [Requirement(r) for r in project["project"]["dependencies"] if Requirement(r).name == "numba"]
    [build] = [Requirement(r) for r in project["build-system"]["requires"] if Requirement(r).name == "numba"]
    return run, build


def test_numba_has_one_bounded_pin():
    run, build = _numba_pins()
    assert run.specifier == build.specifier  # the kernels are compiled and run with the same numba range
    assert any(s.operator == "<" for s in run.specifier), f"no upper bound on numba: {run}"


def test_installed_numba_is_within_the_tested_bound():
    # make test-numba-latest installs the newest release: this fails there the day it leaves the bound
    import numba

    run, _ = _numba_pins()
    installed = Version(re.sub(r"\+.*", "", numba.__version__))
    assert installed in run.specifier, (
        f"numba {installed} is outside {run.specifier}: run the kernel tests with it (make test-numba-latest) "
        "and move the bound in pyproject.toml when they pass")
