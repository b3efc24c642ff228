"""Packaging of the dashboard: the wheel carries every static file; importing the package loads no web stack."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "src" / "ranklens" / "web" / "static"


@pytest.mark.build
def test_wheel_contains_the_static_files(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
                       check=False, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    wheel = next(tmp_path.glob("ranklens-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"ranklens/web/static/{p.relative_to(STATIC).as_posix()}" for p in STATIC.rglob("*") if p.is_file()}
    assert {"ranklens/web/static/index.html", "ranklens/web/static/charts.js", "ranklens/web/static/app.js"} <= expected
    assert expected <= names, expected - names


def test_importing_the_web_package_loads_no_web_stack() -> None:
    code = ("import sys, ranklens.web, ranklens._cli.serve, ranklens._cli.report; "
            "print([m for m in ('starlette', 'uvicorn', 'duckdb', 'httpx') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    assert out == "[]"


def test_static_files_reference_nothing_outside() -> None:
    """No CDN: every script, style and font of the dashboard is a packaged file."""
    import re

    for p in STATIC.rglob("*"):
        if p.suffix in (".html", ".js", ".css"):
            text = p.read_text()
            refs = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)""", text) + re.findall(r"url\(([^)]*)\)", text)
            for ref in refs:
                assert not re.match(r"(https?:)?//", ref.strip("'\" ")), (p.name, ref)
            assert "@import" not in text and "fonts.googleapis" not in text
