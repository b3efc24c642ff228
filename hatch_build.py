"""Build hook: compile the kernels ahead of time into ``ranklens/_kernels/_aot`` (numba.pycc) for the wheel.

The module is written beside the kernel sources (like ``build_ext --inplace``), so an editable install
uses it too, and it is rebuilt only when the kernel sources changed (its stamp is their digest). When
it cannot be built (no C compiler, say), the wheel is built without it and ranklens runs every kernel
on numba's JIT: slower to start, same numbers.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

# import the kernel package without running ranklens/__init__.py (the build environment has only
# numba and numpy)
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


class CustomBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return
        pkg = Path(self.root) / "src" / "ranklens"
        kernels = pkg / "_kernels"
        run = [sys.executable, "-c", _BOOT, str(pkg)]
        status = subprocess.run([*run, "check"], capture_output=True, text=True)
        if status.returncode != 0 or status.stdout.strip() != "ok":
            for old in kernels.glob("_aot.*"):
                old.unlink()
            self.app.display_info("ranklens: compiling the kernels ahead of time (numba.pycc, about a minute)")
            built = subprocess.run([*run, "build", str(kernels)], capture_output=True, text=True)
            if built.returncode != 0:
                tail = "\n".join((built.stderr or built.stdout).strip().splitlines()[-5:])
                self.app.display_warning(
                    "ranklens: the ahead-of-time kernels could not be built; ranklens will compile them with "
                    f"numba's JIT on first use instead.\n{tail}"
                )
                return
            self.app.display_info(built.stdout.strip())
        modules = sorted(kernels.glob("_aot.*.so")) + sorted(kernels.glob("_aot.*.pyd"))
        if not modules:
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        if version != "editable":
            build_data["force_include"][str(modules[-1])] = f"ranklens/_kernels/{modules[-1].name}"
