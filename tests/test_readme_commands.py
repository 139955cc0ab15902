"""The README's shell examples run as written (sqlite-utils' docs tests, for a shell).

Every ```bash block is parsed into commands and run in a fresh folder, in order, with
three substitutions only: ``.venv/bin/webcrawl`` and ``.venv/bin/python`` become this
interpreter, a ``fixture serve`` on port 8400 listens on a free port (and later commands
use that port), and the demo runs small through its ``WEBCRAWL_DEMO_*`` variables.
Steps that need the network or are this suite itself are listed in :data:`NOT_RUN` with
the reason; CI runs them exactly (command 2, ruff, mypy).  The Python blocks are run by
``tests/test_readme_library.py``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```bash\n(.*?)^```", re.MULTILINE | re.DOTALL)
SMALL_DEMO = {"WEBCRAWL_DEMO_PAGES": "200", "WEBCRAWL_DEMO_HOSTS": "4",
              "WEBCRAWL_DEMO_REVISIT_SECONDS": "1"}
#: Steps not run here, and why.
NOT_RUN = {
    "python3 -m venv .venv": "CI and the fresh-clone check make the venv",
    ".venv/bin/pip install": "installing needs the package index; CI runs it",
    ".venv/bin/python -m pytest": "this suite itself (CI runs it exactly)",
    ".venv/bin/mypy": "CI runs it exactly; a minute of work that proves nothing new here",
}
TIMEOUT = 300


def _blocks() -> list[str]:
    return BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8"))


def _commands(block: str) -> list[str]:
    """Non-comment lines, continuation lines joined, each split on ``&&``."""
    text = block.replace("\\\n", " ")
    steps = []
    for line in text.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith("#"):
            steps += [part.strip() for part in line.split("&&")]
    return steps


def _skipped(step: str) -> str | None:
    return next((why for prefix, why in NOT_RUN.items() if step.startswith(prefix)), None)


def _argv(step: str, port: int | None) -> list[str]:
    if port is not None:
        step = step.replace(":8400", f":{port}")
    argv = shlex.split(step)
    if argv[0] == ".venv/bin/webcrawl":
        argv = [sys.executable, "-m", "webcrawl.crawler.cli", *argv[1:]]
    elif argv[0] == ".venv/bin/python":
        argv = [sys.executable, *argv[1:]]
    elif argv[0].startswith(".venv/bin/"):
        tool = Path(sys.executable).parent / argv[0].removeprefix(".venv/bin/")
        if not tool.exists():
            pytest.skip(f"{tool.name} is not installed here")
        argv = [str(tool), *argv[1:]]
    return argv


def _workdir(tmp_path: Path) -> Path:
    """A fresh folder that looks like a clone: the sources are links into the repository."""
    for name in ("crawler", "analysis", "storage", "fixtures", "tests", "benchmarks",
                 "pyproject.toml"):
        (tmp_path / name).symlink_to(ROOT / name)
    return tmp_path


def test_the_readme_has_the_shell_examples_we_expect() -> None:
    blocks = _blocks()
    assert len(blocks) >= 3
    assert _commands(blocks[0])[2] == ".venv/bin/webcrawl demo"  # README command 1
    assert any("fixture serve" in b and "crawl http" in b for b in blocks)


@pytest.mark.timeout(3 * TIMEOUT)
@pytest.mark.parametrize("index", range(len(_blocks())),
                         ids=[_commands(b)[-1][:40] for b in _blocks()])
def test_readme_shell_block_runs(index: int, tmp_path: Path) -> None:
    work = _workdir(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT), **SMALL_DEMO}
    server: subprocess.Popen[str] | None = None
    port: int | None = None
    served_hosts: int | None = None
    ran = 0
    try:
        for step in _commands(_blocks()[index]):
            if _skipped(step):
                continue
            argv = _argv(step, port)
            if argv[3:5] == ["fixture", "serve"]:
                # The first terminal: listen on a free port instead of 8400.
                argv[argv.index("--port") + 1] = "0"
                served_hosts = int(argv[argv.index("--hosts") + 1])
                server = subprocess.Popen(argv, cwd=work, env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, text=True)
                assert server.stdout is not None
                seed = server.stdout.readline().strip()
                assert seed.startswith("http://site0.test:"), seed
                port = int(seed.rsplit(":", 1)[1].strip("/"))
                ran += 1
                continue
            out = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True,
                                 timeout=TIMEOUT, stdin=subprocess.DEVNULL)
            assert out.returncode == 0, f"{step}\n{out.stderr[-3000:]}"
            assert "Traceback" not in out.stderr, out.stderr
            ran += 1
            if argv[3:4] == ["demo"]:
                assert (work / "demo-out" / "report.html").stat().st_size > 10_000
                assert "politeness audit: 0 violations" in out.stdout
    finally:
        if server is not None:
            server.terminate()
            server.communicate(timeout=30)  # also closes its pipes
    assert ran, "every step of this block was skipped"
    if served_hosts is not None:
        # The crawl reaches every host the server serves.
        with sqlite3.connect(work / "crawl.db") as conn:
            hosts = conn.execute("SELECT COUNT(DISTINCT u.host_id) FROM urls u "
                                 "WHERE u.outcome = 'fetched'").fetchone()[0]
        assert hosts == served_hosts


def test_not_run_steps_are_only_the_listed_ones() -> None:
    """A new README step is run unless it is listed with a reason."""
    steps = [s for b in _blocks() for s in _commands(b)]
    skipped = {s for s in steps if _skipped(s)}
    assert all(s.split()[0].startswith((".venv/bin/", "python3")) for s in skipped)
    assert shutil.which("sh")  # the blocks are shell; nothing else is assumed
