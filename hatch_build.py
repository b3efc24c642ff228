"""Build hook: compile the kernels ahead of time into ``ranklens/_kernels/_aot`` (numba.pycc).

Where the module is written depends on the build:

* a wheel (``pip wheel``, ``python -m build``, ``make wheel``): into a temporary directory, stripped of
  its debug information, and packed into the wheel from there; the source tree is not written to. A
  module beside the kernel sources that is still current (its stamp is the digest of the sources) is
  reused instead of compiling again.
* an editable install (``pip install -e .``): beside the kernel sources, like ``build_ext --inplace``,
  where the editable package imports it; rebuilt only when the kernel sources changed.

When it cannot be built (no working C compiler, say), the wheel is built without it and ranklens runs
every kernel on numba's JIT: slower to start (it says so, once), same numbers. ``RANKLENS_REQUIRE_AOT=1``
turns that into a failed build (release builds: ``make wheel``, cibuildwheel).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

# import the kernel package without running ranklens/__init__.py (the build environment has only
# numba, numpy and setuptools)
_BOOT = textwrap.dedent("""
    import sys, types
    src = sys.argv[1]
    pkg = types.ModuleType("ranklens")
    pkg.__path__ = [src]
    sys.modules["ranklens"] = pkg
    from ranklens._kernels import api
    if sys.argv[2] == "check":
        print(api.aot_status())
    else:
        from ranklens._kernels._build import build
        build(sys.argv[3], verbose=True)
""")


def _modules(folder: Path) -> list[Path]:
    return sorted(folder.glob("_aot.*.so")) + sorted(folder.glob("_aot.*.pyd"))


def _strip(module: Path) -> None:
    """Drop the debug information (half the module's size) where a ``strip`` tool is at hand."""
    tool = shutil.which("strip")
    if tool is None or module.suffix != ".so":
        return
    flag = "-x" if sys.platform == "darwin" else "--strip-unneeded"
    subprocess.run([tool, flag, str(module)], check=False, capture_output=True)


class CustomBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return
        pkg = Path(self.root) / "src" / "ranklens"
        kernels = pkg / "_kernels"
        run = [sys.executable, "-c", _BOOT, str(pkg)]
        status = subprocess.run([*run, "check"], capture_output=True, text=True)
        current = status.returncode == 0 and status.stdout.strip() == "ok" and _modules(kernels)
        editable = version == "editable"
        if editable:
            out = kernels
        else:
            self._tmp = out = Path(tempfile.mkdtemp(prefix="ranklens-aot-"))
        if current:
            if not editable:
                shutil.copy2(_modules(kernels)[-1], out / _modules(kernels)[-1].name)
                self.app.display_info("ranklens: the ahead-of-time kernels beside the sources are current: reused")
        else:
            if editable:
                for old in kernels.glob("_aot.*"):
                    old.unlink()
            self.app.display_info("ranklens: compiling the kernels ahead of time (numba.pycc, about a minute)")
            built = subprocess.run([*run, "build", str(out)], capture_output=True, text=True)
            if built.returncode != 0:
                tail = "\n".join((built.stderr or built.stdout).strip().splitlines()[-5:])
                if os.environ.get("RANKLENS_REQUIRE_AOT", "").strip() not in ("", "0"):
                    raise RuntimeError(f"ranklens: the ahead-of-time kernels could not be built "
                                       f"(RANKLENS_REQUIRE_AOT is set):\n{tail}")
                self.app.display_warning(
                    "ranklens: the ahead-of-time kernels could not be built; ranklens will compile them with "
                    f"numba's JIT on first use instead (it says so; `ranklens warmup` does it beforehand).\n{tail}"
                )
                return
            self.app.display_info(built.stdout.strip())
            if "Deprecation" in built.stderr:  # numba.pycc's pending deprecation: see docs/architecture.md
                self.app.display_warning("ranklens: " + " ".join(
                    line.strip() for line in built.stderr.splitlines() if "Deprecation" in line)[:400])
        modules = _modules(out)
        if not modules:
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        if not editable:
            _strip(modules[-1])
            build_data["force_include"][str(modules[-1])] = f"ranklens/_kernels/{modules[-1].name}"

    def finalize(self, version: str, build_data: dict, artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
