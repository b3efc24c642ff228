"""Every code block of the documentation site runs, and the output a page shows is the output it gets.

The site (`make docs`, docs/conf.py) is built from docs/**/*.md. Each fenced block of those pages is one of:

* ```python: executed, the blocks of one page in order in one namespace, in a temporary directory where
  `examples/` (the bundled TREC DL 2019 files and ranklens.toml) is reachable as in the repository root;
* ```console: lines starting with `$ ` are shell commands (a trailing `\\` continues one), run with this
  environment's `ranklens` first on PATH; the lines after a command are its expected standard output;
* ```sh / ```bash: every line is a command, run the same way;
* ```toml / ```json: parsed (tomllib / json), so a configuration shown is at least well formed;
* ```text right after `<!-- output -->`: the expected standard output of the block before it;
* anything else, or a block that cannot run here (a `pip install`, a cluster, a server): preceded by
  `<!-- not-run: REASON -->`. A block that is none of these fails the test: no silent skips.

A command exits with status 0 unless a comment on its line says `exit status N`. Outputs are compared
line by line with whitespace runs made one space; a line `...` in the expected text stands for any
number of lines. Blocks whose page is in SLOW_PAGES run in tests marked slow.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the monitor extra installs tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if not ({"_build", "_ext", "_static"} & set(p.relative_to(DOCS).parts)))

RUN_LANGS = {"python", "console", "sh", "bash"}
PARSED_LANGS = {"toml", "json"}
DIRECTIVES = {"{toctree}", "{eval-rst}"}
# pages whose blocks take more than a few seconds (a simulated event stream ingested into a store; ranx compiling)
SLOW_PAGES = {"monitoring.md", "simulator.md", "migration/ranx.md", "counterfactual.md"}

FENCE = re.compile(r"^(`{3,})(.*)$")
MARKER = re.compile(r"^<!--\s*(not-run|output)\s*(?::\s*(.*?))?\s*-->$")
EXIT = re.compile(r"#.*\bexit status (\d+)\b")


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    marker: str | None  # "not-run" or "output"
    reason: str | None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page, each with the `<!-- ... -->` marker on the line before it, if any."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group(1), m.group(2).strip()
        j = i + 1
        while j < len(lines) and not (lines[j].startswith(fence) and lines[j].strip() == fence):
            j += 1
        assert j < len(lines), f"{page}:{i + 1}: fence never closed"
        prev = next((lines[k].strip() for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        mk = MARKER.match(prev)
        out.append(Block(page, i + 1, info.split()[0] if info else "", "\n".join(lines[i + 1:j]) + "\n",
                         mk.group(1) if mk else None, (mk.group(2) or "").strip() if mk else None))
        i = j + 1
    return out


ALL_BLOCKS = [b for page in PAGES for b in blocks(page)]


def normalise(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def matches(expected: list[str], actual: list[str]) -> bool:
    """Line-by-line equality, where an expected line `...` stands for any number of actual lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and expected[0] == actual[0] and matches(expected[1:], actual[1:])


def assert_output(block: Block, expected: str, actual: str) -> None:
    want, got = normalise(expected), normalise(actual)
    assert matches(want, got), (
        f"{block.where}: the output shown is not the output got\n--- shown\n{expected}\n--- got\n{actual}")


def commands(block: Block) -> list[tuple[str, str]]:
    """(command, expected output) pairs of a console or sh block."""
    out: list[tuple[str, str]] = []
    lines = block.code.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if block.lang == "console" and not line.startswith("$ "):
            assert not out, f"{block.where}: console block must start with a '$ ' command line"
            raise AssertionError(f"{block.where}: text before the first command: {line!r}")
        cmd = line[2:] if block.lang == "console" else line
        while cmd.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            cmd = cmd.rstrip()[:-1] + " " + lines[i].strip()
        i += 1
        expected = []
        if block.lang == "console":
            while i < len(lines) and not lines[i].startswith("$ "):
                expected.append(lines[i])
                i += 1
        if cmd.strip() and not cmd.strip().startswith("#"):
            out.append((cmd, "\n".join(expected)))
    return out


def run_command(block: Block, cmd: str, cwd: Path) -> str:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.setdefault("COLUMNS", "120")
    m = EXIT.search(cmd)
    status = int(m.group(1)) if m else 0
    proc = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == status, (
        f"{block.where}: `{cmd}` exited with status {proc.returncode}, the page says {status}\n"
        f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}")
    return proc.stdout


def run_python(block: Block, namespace: dict) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(block.code, block.where, "exec"), namespace)  # the page's own code
    return buf.getvalue()


def workdir(tmp_path: Path) -> Path:
    """A directory where `examples/...` resolves as from the repository root, and nothing else exists."""
    (tmp_path / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    return tmp_path


def run_page(page: Path, tmp_path: Path, monkeypatch) -> int:
    cwd = workdir(tmp_path)
    monkeypatch.chdir(cwd)
    namespace: dict = {"__name__": f"docs_{page.stem.replace('-', '_')}"}
    last: Block | None = None
    last_output = ""
    ran = 0
    for b in blocks(page):
        if b.marker == "not-run":
            continue
        if b.marker == "output":
            assert last is not None, f"{b.where}: an output block follows no block that ran"
            assert_output(b, b.code, last_output)
            last = None
            continue
        if b.lang == "python":
            last_output, last = run_python(b, namespace), b
            ran += 1
        elif b.lang in ("console", "sh", "bash"):
            last_output = ""
            for cmd, expected in commands(b):
                got = run_command(b, cmd, cwd)
                if expected.strip():
                    assert_output(b, expected, got)
                last_output += got
            last = b
            ran += 1
    return ran


def page_params():
    for page in PAGES:
        rel = str(page.relative_to(DOCS))
        if not any(b.lang in RUN_LANGS and b.marker is None for b in blocks(page)):
            continue
        marks = [pytest.mark.slow] if rel in SLOW_PAGES else []
        yield pytest.param(page, id=rel, marks=marks)


# ---------------------------------------------------------------------------------------------------------


def test_pages_found():
    names = {str(p.relative_to(DOCS)) for p in PAGES}
    for name in ("index.md", "getting-started.md", "conventions.md", "cli.md", "api/index.md", "monitoring.md",
                 "dashboard.md", "benchmarks.md", "architecture.md", "migration/trec_eval.md",
                 "migration/pytrec_eval.md", "migration/ranx.md", "migration/ir_measures.md",
                 "migration/sklearn.md"):
        assert name in names
    assert len(ALL_BLOCKS) > 50


def test_every_block_runs_or_says_why():
    """No silent skips: a block that is not run carries its reason; markers are used as documented."""
    problems = []
    for b in ALL_BLOCKS:
        if b.lang in DIRECTIVES:
            continue
        if b.marker == "not-run":
            if not b.reason:
                problems.append(f"{b.where}: <!-- not-run --> without a reason")
        elif b.marker == "output":
            if b.lang != "text":
                problems.append(f"{b.where}: an output block must be ```text")
        elif b.lang not in RUN_LANGS | PARSED_LANGS:
            problems.append(f"{b.where}: ```{b.lang} is neither run nor checked: give it a language that runs,"
                            " or put <!-- not-run: REASON --> before it")
    assert not problems, "\n".join(problems)


def test_shown_outputs_follow_a_block_that_runs():
    for page in PAGES:
        bs = blocks(page)
        for prev, b in zip([None, *bs], bs):
            if b.marker == "output":
                assert prev is not None and prev.marker is None and prev.lang in RUN_LANGS, b.where


@pytest.mark.parametrize("block", [b for b in ALL_BLOCKS if b.lang in PARSED_LANGS and b.marker is None],
                         ids=lambda b: b.where)
def test_config_blocks_parse(block):
    if block.lang == "toml":
        tomllib.loads(block.code)
    else:
        json.loads(block.code)


@pytest.mark.parametrize("page", list(page_params()))
def test_page_blocks_run(page, tmp_path, monkeypatch):
    assert run_page(page, tmp_path, monkeypatch) > 0


def test_output_matching():
    assert matches(["a b", "...", "z"], ["a b", "c", "d", "z"])
    assert matches(["a", "..."], ["a"])
    assert not matches(["a", "z"], ["a", "c", "z"])
    assert not matches(["0.5058"], ["0.5059"])
    assert normalise("x   1\n\n  y\t2 \n") == ["x 1", "y 2"]


def test_markers_parsed(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("text\n\n<!-- not-run: needs a cluster -->\n```python\nx\n```\n\n```text\ny\n```\n"
                    "<!-- output -->\n````text\nz\n````\n")
    bs = blocks(page)
    assert [(b.lang, b.marker, b.reason) for b in bs] == [
        ("python", "not-run", "needs a cluster"), ("text", None, None), ("text", "output", "")]


# ---------------------------------------------------------------------------------------------------------
# the site itself: built as `make docs` builds it, offline, warnings as errors


@pytest.mark.build
def test_site_builds_offline(tmp_path):
    out = tmp_path / "html"
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-q", "-b", "html",
                           str(DOCS), str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-5000:]
    pages = {p.relative_to(out).as_posix() for p in out.rglob("*.html")}
    for page in PAGES:
        assert page.relative_to(DOCS).with_suffix(".html").as_posix() in pages
    # the CLI reference holds the lazily registered commands too; the API reference the public functions
    cli = (out / "cli.html").read_text(encoding="utf-8")
    for cmd in ("ranklens eval", "ranklens compare", "ranklens monitor ingest", "ranklens serve", "ranklens report",
                "ranklens conventions", "ranklens warmup"):
        assert f'id="{cmd.replace(" ", "-")}"' in cli, cmd  # a section per command
    assert 'id="cmdoption-ranklens-eval-m"' in cli and ".. option::" not in cli  # options rendered, not raw text
    api = "".join((out / "api").joinpath(p).read_text(encoding="utf-8") for p in os.listdir(out / "api"))
    for name in ("ranklens.evaluate", "ranklens.compare", "ranklens.stats.paired_t", "ranklens.monitor.Store",
                 "ranklens.spark.evaluate", "ranklens.sklearn.make_ranking_scorer"):
        assert f'id="{name}"' in api, name
    # nothing outside the site: no remote script, style, font or image, no mailto from "ndcg@10"
    external = []
    for p in out.rglob("*"):
        if p.suffix not in (".html", ".css", ".js"):
            continue
        text = p.read_text(encoding="utf-8", errors="replace")
        refs = re.findall(r"""<(?:script|link|img|iframe|source)\b[^>]*?(?:src|href)\s*=\s*["']([^"']+)""", text)
        refs += re.findall(r"""@import\s+(?:url\()?["']?([^"')\s;]+)""", text)
        refs += re.findall(r"url\(\s*['\"]?((?:https?:)?//[^'\")]+)", text)
        external += [(p.name, r) for r in refs if re.match(r"(https?:)?//", r.strip())]
        if p.suffix == ".html":
            external += [(p.name, m) for m in re.findall(r'href="(mailto:[^"]+)"', text)]
    assert not external, external[:20]
    shutil.rmtree(out)
