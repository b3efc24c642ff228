"""ranklens as PyPI users meet it: `make wheel` (sdist + manylinux wheel), each installed into a fresh
virtual environment with no C compiler on PATH, then timed and checked from outside.

One wheel and one sdist are built for the module (about a minute); the sdist's install compiles the
kernels with numba's JIT on its first evaluation (a minute or two), once. Time bounds are the ones the
packaging issue (#20) sets, measured here with wide margins (reported in the messages): import 0.09 s,
the bundled example's first evaluation 0.12 s, 10M rows' first call 1.05 s.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.build

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "src" / "ranklens" / "_kernels"
DATA = ROOT / "examples" / "data"
QRELS, RUN = DATA / "qrels.dl19-passage.txt", DATA / "run.bm25.dl19.txt"
NOTICE = "ranklens: compiling the kernels with numba's JIT"

# 10M rows, 100 per query; every query's labels are 0..3 (25 of each) and the scores are the labels, so
# each list is ranked ideally: NDCG@10 = 1 and P@10 = 1 (its top 10 all have label 3) by the definitions
BIG = """
import sys, time, numpy as np, pyarrow as pa
import ranklens
n = 10_000_000
lab = np.tile(np.arange(100) % 4, n // 100).astype(np.float64)
t = pa.table({"query": np.repeat(np.arange(n // 100), 100), "item": np.arange(n), "score": lab, "label": lab})
t0 = time.perf_counter()
r = ranklens.evaluate(t, None, ["ndcg@10", "P@10"])
first = time.perf_counter() - t0
print(json.dumps({"first": first, "ndcg": r.aggregate["ndcg@10"], "p10": r.aggregate["P@10"],
                  "numba": "numba" in sys.modules}))
""".replace("import sys,", "import json, sys,")

IMPORT = ("import sys, time; t = time.perf_counter(); import ranklens; took = time.perf_counter() - t; "
          "print(took, *sorted(m for m in ('numba', 'llvmlite', 'pandas', 'polars', 'pyarrow', 'scipy', 'duckdb') "
          "if m in sys.modules))")


def _sources() -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in KERNELS.iterdir() if p.is_file()}


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    out = tmp_path_factory.mktemp("dist")
    before = _sources()
    r = subprocess.run(["make", "-s", "wheel", f"DIST={out}"], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert _sources() == before, "building the wheel wrote beside the kernel sources"
    wheels, sdists = sorted(out.glob("*.whl")), sorted(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in out.iterdir())
    return {"wheel": wheels[0], "sdist": sdists[0], "log": r.stdout + r.stderr}


def _no_compiler_env(venv: Path) -> dict[str, str]:
    """The environment of a user without build tools: PATH holds the virtual environment only."""
    keep = ("HOME", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE")
    env = {k: v for k, v in os.environ.items()
           if k in keep or k.startswith("PIP_") or k.lower() in ("http_proxy", "https_proxy", "no_proxy")}
    env["PATH"] = str(venv / "bin")
    for tool in ("cc", "gcc", "clang", "c++"):
        assert shutil.which(tool, path=env["PATH"]) is None, tool
    return env


def _install(venv: Path, target: Path) -> dict[str, str]:
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = _no_compiler_env(venv)
    r = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "install", "-q",
                        str(target)], env=env, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-4000:]
    return env


def _timed(args: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.perf_counter()
    r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=1800)
    return r, time.perf_counter() - t0


def _eval_args(venv: Path) -> list[str]:
    return [str(venv / "bin" / "ranklens"), "eval", str(QRELS), str(RUN), "-m", "ndcg@10", "-m", "map",
            "-c", "trec_eval", "-f", "json"]


@pytest.fixture(scope="module")
def trec_eval_values() -> dict[str, float]:
    """pytrec_eval's (trec_eval's C code) means over the bundled example's queries."""
    import pytrec_eval

    def read(path: Path, run: bool) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for line in path.read_text().splitlines():
            f = line.split()
            out.setdefault(f[0], {})[f[2]] = float(f[4]) if run else int(f[3])
        return out

    per_q = pytrec_eval.RelevanceEvaluator(read(QRELS, False), {"ndcg_cut.10", "map"}).evaluate(read(RUN, True))
    return {m: sum(v[k] for v in per_q.values()) / len(per_q) for m, k in (("ndcg@10", "ndcg_cut_10"), ("map", "map"))}


def _check_values(stdout: str, expected: dict[str, float]) -> None:
    got = json.loads(stdout)["aggregate"]
    for m, v in expected.items():
        assert got[m] == pytest.approx(v, abs=1e-12), (m, got[m], v)


def test_wheel_is_publishable(dist):
    wheel = dist["wheel"]
    assert re.fullmatch(r"ranklens-[\w.]+-cp3\d+-cp3\d+-manylinux_2_\d+_x86_64\.whl", wheel.name), wheel.name
    show = subprocess.run([str(ROOT / ".venv-build" / "bin" / "auditwheel"), "show", str(wheel)], capture_output=True,
                          text=True, check=True).stdout
    assert re.search(r'consistent\s+with the following platform tag:\s+"manylinux_2_\d+_x86_64"', show), show
    assert re.search(r"PASSED", dist["log"]) and "FAILED" not in dist["log"]  # twine check --strict, by make
    with zipfile.ZipFile(wheel) as z:
        [ext] = [i for i in z.infolist() if re.fullmatch(r"ranklens/_kernels/_aot\..+\.so", i.filename)]
        so = z.read(ext)
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    # stripped: no symbol table and no debug sections among the ELF section names (a size bound stopped holding
    # as the kernels grew: 764 kB stripped with the fusion and per-family kernels)
    assert so[:4] == b"\x7fELF" and b".symtab" not in so and b".debug_info" not in so, \
        f"{ext.file_size} bytes: not stripped"
    requires = re.findall(r"^Requires-Dist: (.+)$", meta, re.M)
    assert any(re.fullmatch(r"numba\s*[<>=,.\d\s]*<\s*[\d.]+.*", r) for r in requires), requires
    assert not any(r.split(";")[0].strip().startswith(("pytest", "scikit-learn", "lightgbm")) for r in requires)


@pytest.fixture(scope="module")
def wheel_venv(dist, tmp_path_factory) -> tuple[Path, dict[str, str]]:
    venv = tmp_path_factory.mktemp("wheel") / "venv"
    return venv, _install(venv, dist["wheel"])


def test_wheel_first_evaluations_are_fast(wheel_venv, trec_eval_values):
    venv, env = wheel_venv
    r, took = _timed(_eval_args(venv), env)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "", r.stderr  # nothing compiled, nothing announced
    _check_values(r.stdout, trec_eval_values)
    assert took < 2.0, f"the bundled example's first evaluation took {took:.2f} s (0.12 s measured here)"

    # what import loads is the check (a compiler or a data-frame library would cost seconds); the time bound
    # only catches a stall, with room for a loaded machine (0.09 s measured on a quiet one, 0.35 s under load)
    r, took = _timed([str(venv / "bin" / "python"), "-c", IMPORT], env)
    seconds, *heavy = r.stdout.split()
    assert heavy == [], f"import ranklens loads {heavy}"
    assert float(seconds) < 1.5, f"import ranklens took {float(seconds):.3f} s (0.09 s measured on a quiet machine)"

    r, took = _timed([str(venv / "bin" / "python"), "-c", BIG], env)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    out = json.loads(r.stdout)
    assert out["ndcg"] == pytest.approx(1.0, abs=1e-12) and out["p10"] == 1.0 and out["numba"] is False
    assert out["first"] < 3.0, f"first 10M-row call {out['first']:.2f} s, {took:.2f} s as a whole process (1.05 s)"


def test_wheel_warmup_has_nothing_to_do(wheel_venv):
    venv, env = wheel_venv
    r = subprocess.run([str(venv / "bin" / "ranklens"), "warmup"], env=env, capture_output=True, text=True)
    assert r.returncode == 0 and "nothing to compile" in r.stdout, r.stdout + r.stderr


def test_sdist_without_compiler_says_once_that_it_compiles(dist, tmp_path_factory, trec_eval_values):
    venv = tmp_path_factory.mktemp("sdist") / "venv"
    env = _install(venv, dist["sdist"])
    status = subprocess.run([str(venv / "bin" / "python"), "-c", "from ranklens._kernels import api; "
                             "print(api.aot_status())"], env=env, capture_output=True, text=True, check=True).stdout
    assert status.startswith("missing"), status  # no compiler: the wheel built from the sdist has no module

    r, first = _timed(_eval_args(venv), env)
    assert r.returncode == 0, r.stderr[-2000:]
    _check_values(r.stdout, trec_eval_values)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(NOTICE), r.stderr
    assert "kernels are missing: they could not be compiled when ranklens was built" in lines[0], lines[0]
    assert "ranklens warmup" in lines[0]

    r, again = _timed(_eval_args(venv), env)
    assert r.returncode == 0 and r.stderr == "", r.stderr  # compiled and cached: nothing to say
    _check_values(r.stdout, trec_eval_values)
    assert again < first / 3, f"first run {first:.1f} s, second {again:.1f} s: the compilation was not cached"

    r, _ = _timed([str(venv / "bin" / "python"), "-c", IMPORT], env)
    assert float(r.stdout) < 0.3, f"import ranklens took {float(r.stdout):.3f} s"
