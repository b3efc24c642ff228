"""The set-up contract: `make demo` and `make test` install everything they need on a machine that has nothing.

This machine (and CI's) may already have Chromium, the virtual environments and warm caches, so a set-up step that
goes missing from the Makefile stays green here and breaks for every new user (it happened: the `browser` recipe
vanished in an edit). These tests read what make *would* run on a machine without any of it, by pointing the
Makefile's variables at paths that do not exist (`make -n ... VENV=/nonexistent CHROMIUM=/nonexistent`), and read
make's own database for prerequisites that do nothing. They fail here too when a step is lost.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "web"))
from web_support import CHROMIUM, INSTALL_BROWSER

ROOT = Path(__file__).resolve().parents[1]


def _make(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), *args], capture_output=True, text=True,
                          timeout=60, check=False)


def _fresh(tmp_path: Path) -> list[str]:
    """Variables that make this checkout look like a machine where nothing is installed yet."""
    return [f"VENV={tmp_path}/venv", f"EVENV={tmp_path}/venv-evidently", f"BVENV={tmp_path}/venv-bench",
            f"CVENV={tmp_path}/venv-confidence",
            f"CHROMIUM={tmp_path}/no-chromium"]


def _dry_run(target: str, tmp_path: Path) -> str:
    r = _make("-n", target, *_fresh(tmp_path))
    assert r.returncode == 0, f"make -n {target} failed on a fresh machine:\n{r.stderr}"
    return r.stdout


def _rules() -> dict[str, tuple[list[str], bool, bool]]:
    """make's database of this Makefile: target -> (prerequisites, has a recipe, is phony)."""
    r = subprocess.run(["make", "-pRrq", "-f", "Makefile", "--no-print-directory"], cwd=ROOT, capture_output=True,
                       text=True, timeout=60, check=False)
    assert "# Files" in r.stdout, r.stderr
    files = r.stdout.split("# Files", 1)[1]
    rules: dict[str, tuple[list[str], bool, bool]] = {}
    for block in files.split("\n\n"):
        lines = [ln for ln in block.splitlines() if ln.strip()]
        head = next((ln for ln in lines if not ln.startswith("#") and re.match(r"^[^\s:#][^:]*::?(\s|$)", ln)), None)
        if head is None or head.startswith((".", "%")) and not head.startswith(".venv"):
            continue
        target, _, deps = head.partition(":")
        deps = deps.lstrip(":").replace("|", " ")
        recipe = any(ln.startswith("#  recipe to execute") for ln in lines)
        phony = any("Phony target" in ln for ln in lines)
        rules[target.strip()] = (deps.split(), recipe, phony)
    return rules


@pytest.mark.parametrize("top", ["test", "demo", "test-fast", "lint"])
def test_every_prerequisite_does_something(top: str) -> None:
    """A prerequisite of `make test` / `make demo` with no recipe and no prerequisites installs nothing."""
    rules = _rules()
    assert top in rules, f"make {top} is not a target"
    seen, todo, idle = set(), [top], []
    while todo:
        t = todo.pop()
        if t in seen:
            continue
        seen.add(t)
        if t not in rules:
            assert (ROOT / t).exists(), f"'{t}' (needed by make {top}) is neither a rule nor a file of the checkout"
            continue
        deps, recipe, phony = rules[t]
        if not recipe and not deps and (phony or not (ROOT / t).exists()):
            idle.append(t)
        todo.extend(deps)
    assert idle == [], f"make {top} depends on {idle}, which have no recipe and no prerequisites"


def test_the_browser_database_entry_has_a_recipe() -> None:
    deps, recipe, phony = _rules()["browser"]
    assert recipe and phony, "the browser target lost its recipe"
    assert "browser" in _rules()["test"][0], "make test no longer installs the browser first"


def test_make_test_on_a_fresh_machine_installs_everything(tmp_path: Path) -> None:
    out = _dry_run("test", tmp_path)
    steps = {
        "the virtual environment": f"-m venv {tmp_path}/venv",
        "ranklens with its runtime extras": 'install -e ".[stats,monitor,web]"',
        "the kernels compiled before the tests": "warmup",
        "torch's local CPU build": "install torch==2.13.0",
        "the test requirements": "-r requirements-test.txt",
        "the Evidently environment": f"-m venv {tmp_path}/venv-evidently",
        "Evidently itself": '"evidently==',
        "the spotify-confidence environment": f"-m venv {tmp_path}/venv-confidence",
        "spotify-confidence itself": '"spotify-confidence==',
        "Chromium (apt-get)": "apt-get install",
        "ruff (make lint)": "/venv/bin/ruff check .",
        "mypy (make lint)": "/venv/bin/mypy src/",
        "the suite": "-m pytest",
        "the suite on two processes (pytest-xdist, a module to a process)": "-m pytest -q -n 2 --dist loadgroup",
    }
    missing = [what for what, text in steps.items() if text not in out]
    assert missing == [], f"make test on a fresh machine would not install: {missing}\n{out}"
    install = next(ln for ln in out.splitlines() if "apt-get install" in ln)
    assert re.search(r"\bchromium\b", install) and "fonts-" in install, install
    # every step runs before the suite
    assert out.rindex("apt-get install") < out.index("-m pytest")
    assert out.index("-r requirements-test.txt") < out.index("-m pytest")
    # make lint runs with the pinned tools installed, and before the suite
    assert out.index("-r requirements-test.txt") < out.index("/venv/bin/ruff check .") < out.index("-m pytest")
    assert out.index("/venv/bin/mypy src/") < out.index("-m pytest")


def test_make_demo_on_a_fresh_machine_installs_then_runs(tmp_path: Path) -> None:
    out = _dry_run("demo", tmp_path)
    for text in (f"-m venv {tmp_path}/venv", 'install -e ".[stats,monitor,web]"', "ranklens eval",
                 "ranklens compare", "ranklens monitor ingest"):
        assert text in out, f"make demo on a fresh machine: no '{text}'\n{out}"
    assert out.index("-m venv") < out.index("ranklens eval")


def test_the_browser_install_is_skipped_only_when_chromium_is_there(tmp_path: Path) -> None:
    missing = _dry_run("browser", tmp_path)
    assert "apt-get update" in missing and re.search(r"apt-get install .*\bchromium\b", missing), missing
    assert re.search(r'\[ "\$\(id -u\)" -eq 0 \] \|\| echo sudo', missing), "sudo only when not root"
    present = _make("-n", "browser", f"CHROMIUM={sys.executable}")
    assert present.returncode == 0 and "apt-get" not in present.stdout, present.stdout


def test_the_hint_of_the_browser_tests_names_the_target_that_installs_chromium(tmp_path: Path) -> None:
    """The failure a contributor sees without Chromium names a command that installs it, at the path tests use."""
    m = re.fullmatch(r"make ([\w-]+)", INSTALL_BROWSER)
    assert m, INSTALL_BROWSER
    out = _dry_run(m.group(1), tmp_path)
    assert re.search(r"apt-get install .*\bchromium\b", out), out
    r = _make("-pRrq")
    default = re.search(r"^CHROMIUM :?= (\S+)$", r.stdout, re.M)
    assert default and default.group(1) == CHROMIUM, "the Makefile installs Chromium elsewhere than tests look"


def test_make_lint_installs_then_runs_the_pinned_ruff_and_mypy(tmp_path: Path) -> None:
    """`make lint` on a fresh machine installs the test requirements, whose exact ruff and mypy it then runs."""
    out = _dry_run("lint", tmp_path)
    ruff = re.search(rf"^{re.escape(str(tmp_path))}/venv/bin/ruff check \.$", out, re.M)
    mypy = re.search(rf"^{re.escape(str(tmp_path))}/venv/bin/mypy src/$", out, re.M)
    assert ruff and mypy, f"make lint runs no ruff check or no mypy of the virtual environment:\n{out}"
    assert out.index("-r requirements-test.txt") < ruff.start() < mypy.start(), out
    pins = re.findall(r"^(ruff|mypy)==\d+(?:\.\d+)+$", (ROOT / "requirements-test.txt").read_text(), re.M)
    assert sorted(pins) == ["mypy", "ruff"], "ruff and mypy are pinned to exact versions in requirements-test.txt"


def test_test_fast_needs_no_browser_nor_evidently(tmp_path: Path) -> None:
    out = _dry_run("test-fast", tmp_path)
    assert "-m pytest" in out and '-m "not slow"' in out, out
    assert "apt-get" not in out and "evidently" not in out, out


def test_ci_runs_the_full_suite() -> None:
    assert re.search(r"^make test\s*$", (ROOT / ".ci" / "run").read_text(), re.M)
    readme = (ROOT / "README.md").read_text()
    assert "make demo" in readme and "make test" in readme


def test_the_suite_runs_without_pytest_xdist_too() -> None:
    """`make test` runs the suite on two processes (pytest-xdist, in requirements-test.txt); a run without the plugin
    (`make test-numba-latest`'s environment, `-p no:xdist`) must still work: conftest.py adds no group marker then,
    which --strict-markers would refuse."""
    assert re.search(r"^pytest-xdist[=>]=", (ROOT / "requirements-test.txt").read_text(), re.M)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                        "tests/test_structure.py::test_no_module_is_too_long"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]


def test_test_fast_leaves_out_every_slow_kind() -> None:
    """`-m "not slow"` selects no Spark, browser, Evidently or build test (conftest.py adds `slow` to them)."""
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "not slow",
                        "-p", "no:cacheprovider", "tests/test_spark.py", "tests/web/test_browser.py",
                        "tests/web/test_report.py", "tests/web/test_package.py", "tests/conformance/test_presets.py"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    ids = [ln for ln in r.stdout.splitlines() if "::" in ln]
    assert ids, r.stdout  # the selection still holds the quick tests of these files
    leaked = [i for i in ids if i.startswith(("tests/test_spark.py", "tests/web/test_browser.py"))
              or "evidently" in i or "chromium" in i or "wheel" in i or "hostile" in i]
    assert leaked == [], leaked


def test_make_install_test_installs_obp_without_its_pins(tmp_path: Path) -> None:
    """obp 0.4.1 (the slate estimators' peer, tests/counterfactual/test_slate.py) pins old releases of its
    dependencies: the Makefile installs it with --no-deps after the test requirements, which pin what it imports;
    the benchmarks' environment gets it the same way (benchmarks/counterfactual_bench.py)."""
    out = _dry_run("install-test", tmp_path)
    obp = re.search(r'^\S+/venv/bin/python -m pip .*install --no-deps "obp==0\.4\.1"$', out, re.M)
    assert obp, f"make install-test on a fresh machine does not install obp with --no-deps:\n{out}"
    assert out.index("-r requirements-test.txt") < obp.start(), "obp before the modules it imports"
    reqs = (ROOT / "requirements-test.txt").read_text()
    for module in ("tqdm", "seaborn", "pyyaml", "mypy-extensions", "scikit-learn", "pandas", "scipy", "matplotlib"):
        assert re.search(rf"^{module}[=>]=", reqs, re.M | re.I), f"obp imports {module}: pin it in requirements-test"
    bench = _dry_run(f"{tmp_path}/venv-bench/.installed", tmp_path)
    assert re.search(r'install --no-deps "obp==0\.4\.1"$', bench, re.M), bench
