"""The shell examples of the README and of the documentation run as written
(sqlite-utils' docs tests, for a shell).

Every ```bash block of README.md and of docs/**/*.md is cut into steps (continuation lines
joined, ``&&`` split) and run by ``sh`` in a fresh, empty folder, in order, as a user would:
``.venv/bin/webcrawl`` and ``.venv/bin/python`` there are two-line scripts that run this
interpreter (with the package as installed, never the repository's folders on the path).
A ``fixture serve`` or ``python3 -m http.server`` step is the user's first terminal: it
listens on a free port instead of the one written (8400, 8765 ...), and later steps use
that port; the demo runs small through its
``WEBCRAWL_DEMO_*`` variables. Steps that need the package index or are this suite itself
are listed in :data:`NOT_RUN` with the reason; CI runs them exactly (README commands 1
and 2). ```text blocks are shown, never run; the README's sample outputs among them are
held to the form of what its blocks printed (``tests/readme_samples.py``). The Python
blocks are run by ``tests/test_readme_library.py``.
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
import readme_samples

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```bash\n(.*?)^```", re.MULTILINE | re.DOTALL)
SMALL_DEMO = {"WEBCRAWL_DEMO_PAGES": "200", "WEBCRAWL_DEMO_HOSTS": "4",
              "WEBCRAWL_DEMO_REVISIT_SECONDS": "1"}
#: Steps not run here, and why.
NOT_RUN = {
    "python3 -m venv .venv": "CI and the fresh-clone check make the venv",
    ".venv/bin/pip install": "installing needs the package index; CI runs it",
    ".venv/bin/python -m pytest": "this suite itself (CI runs it exactly)",
}
TIMEOUT = 300


def documents() -> list[Path]:
    """README.md and every page of the documentation."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _blocks(path: Path) -> list[str]:
    return BLOCK.findall(path.read_text(encoding="utf-8"))


def _all_blocks() -> list[tuple[Path, int]]:
    return [(path, i) for path in documents() for i in range(len(_blocks(path)))]


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


def _workdir(tmp_path: Path) -> Path:
    """An empty folder with ``.venv/bin/webcrawl`` and ``.venv/bin/python`` that run this
    interpreter (the installed package; nothing of the repository on the path)."""
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name, tail in (("webcrawl", "-m webcrawl.crawler.cli "), ("python", "")):
        script = bin_dir / name
        script.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {tail}"$@"\n')
        script.chmod(0o755)
    return tmp_path


def _start_server(argv: list[str], work: Path,
                  env: dict[str, str]) -> tuple[subprocess.Popen[str], str, int]:
    """Start a serving step (the user's first terminal) on a free port: the process, the
    port the document wrote and the one it listens on."""
    if argv[:3] == [".venv/bin/webcrawl", "fixture", "serve"]:
        at = argv.index("--port") + 1
    else:  # python3 -m http.server PORT: it prints the port it got on its first line
        at = 3
        env = {**env, "PYTHONUNBUFFERED": "1"}
    written, argv = argv[at], [*argv[:at], "0", *argv[at + 1:]]
    server = subprocess.Popen(argv, cwd=work, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    assert server.stdout is not None
    first = server.stdout.readline().strip()
    if argv[0].startswith("python"):
        port = re.match(r"Serving HTTP on \S+ port (\d+) ", first)
        assert port is not None, first
        return server, written, int(port[1])
    assert first.startswith("http://site0.test:"), first
    return server, written, int(first.rsplit(":", 1)[1].strip("/"))


def _is_server(argv: list[str]) -> bool:
    return argv[:3] in ([".venv/bin/webcrawl", "fixture", "serve"],
                        ["python3", "-m", "http.server"])


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, **SMALL_DEMO}


def test_the_readme_starts_with_its_two_commands() -> None:
    """CI reads README command 1 and 2 from the first block; they must be those two."""
    first = _commands(_blocks(ROOT / "README.md")[0])
    assert first == [
        "python3 -m venv .venv", ".venv/bin/pip install -q .", ".venv/bin/webcrawl demo",
        "python3 -m venv .venv", ".venv/bin/pip install -q -e '.[test]'",
        ".venv/bin/python -m pytest -n auto"]
    assert any("fixture serve" in b and "crawl http" in b for b in _blocks(ROOT / "README.md"))


@pytest.mark.timeout(3 * TIMEOUT)
@pytest.mark.parametrize(("path", "index"), _all_blocks(),
                         ids=[f"{p.relative_to(ROOT)}:{i}" for p, i in _all_blocks()])
def test_shell_block_runs(path: Path, index: int, tmp_path: Path) -> None:
    work = _workdir(tmp_path)
    env = _clean_env()
    server: subprocess.Popen[str] | None = None
    ports: tuple[str, int] | None = None  # the port written, the one served
    served_hosts: int | None = None
    served_dir: Path | None = None
    ran = 0
    steps: list[readme_samples.Step] = []
    try:
        for step in _commands(_blocks(path)[index]):
            if _skipped(step):
                continue
            if ports is not None:
                step = step.replace(f":{ports[0]}", f":{ports[1]}")
            argv = shlex.split(step)
            if _is_server(argv):
                assert server is None, "one serving step a block"
                server, written, served = _start_server(argv, work, env)
                ports = (written, served)
                if "--hosts" in argv:
                    served_hosts = int(argv[argv.index("--hosts") + 1])
                if "--directory" in argv:
                    served_dir = work / argv[argv.index("--directory") + 1]
                ran += 1
                continue
            out = subprocess.run(["sh", "-c", step], cwd=work, env=env, capture_output=True,
                                 text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
            assert out.returncode == 0, f"{step}\n{out.stderr[-3000:]}"
            assert "Traceback" not in out.stderr, out.stderr
            steps.append(readme_samples.Step(argv, out.stdout, out.stderr))
            ran += 1
            if argv[1:2] == ["demo"]:
                assert (work / "demo-out" / "report.html").stat().st_size > 10_000
                assert "politeness audit: 0 violations" in out.stdout
    finally:
        if server is not None:
            server.terminate()
            server.communicate(timeout=30)  # also closes its pipes
    assert ran, "every step of this block was skipped"
    if path.name == "README.md":
        # The README's sample outputs of this block have the form of what it printed.
        readme_samples.check(path.read_text(encoding="utf-8"), index, steps, work)
    if served_hosts is not None and (work / "crawl.db").exists():
        # The crawl reaches every host the server serves.
        with sqlite3.connect(work / "crawl.db") as conn:
            hosts = conn.execute("SELECT COUNT(DISTINCT u.host_id) FROM urls u "
                                 "WHERE u.outcome = 'fetched'").fetchone()[0]
        assert hosts == served_hosts
    if served_dir is not None:
        # A folder served with its listing as the seed: the crawl fetches every page of it.
        pages = {p.name for p in served_dir.glob("*.html")}
        crawled = {p for db in work.glob("*.db") for p in _fetched_paths(db)}
        assert len(pages) > 5 and pages <= crawled, sorted(pages - crawled)


def _fetched_paths(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        urls = conn.execute("SELECT url FROM urls WHERE outcome = 'fetched'").fetchall()
    return [url.rsplit("/", 1)[1] for (url,) in urls]


def test_not_run_steps_are_only_the_listed_ones() -> None:
    """A new shell step is run unless it is listed with a reason."""
    steps = [s for path in documents() for b in _blocks(path) for s in _commands(b)]
    skipped = {s for s in steps if _skipped(s)}
    assert all(s.split()[0].startswith((".venv/bin/", "python3")) for s in skipped)
    assert shutil.which("sh")  # the blocks are shell; nothing else is assumed
