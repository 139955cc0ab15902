"""The Python examples of the README ("Use as a library") and of the library guide
(docs/guide/library.md) run as written: each document's snippets in order, as one script,
in a fresh folder, with the package as installed (nothing of the repository on the path)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
LIBRARY_GUIDE = ROOT / "docs" / "guide" / "library.md"


def _snippets(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    if path == README:
        text = text.split("## Use as a library", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def _run(path: Path, tmp_path: Path) -> list[str]:
    script = tmp_path / "snippets.py"
    script.write_text("\n\n".join(_snippets(path)))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.splitlines()


def test_every_python_block_of_the_docs_is_run_here() -> None:
    """Only these two pages hold Python examples, so none goes untested."""
    holding = {p.relative_to(ROOT).as_posix() for p in [README, *(ROOT / "docs").rglob("*.md")]
               if "```python" in p.read_text(encoding="utf-8")}
    assert holding == {"README.md", "docs/guide/library.md"}
    assert len(_snippets(README)) == 1 and len(_snippets(LIBRARY_GUIDE)) == 4


def test_readme_library_example_runs(tmp_path: Path) -> None:
    lines = _run(README, tmp_path)
    assert re.fullmatch(r"\d+ HTML pages; top page http://site\d\.test:\d+/\S+ "
                        r"\([\d.]+x the mean\)", lines[0]), lines
    shares = eval(lines[1], {})  # a dict of region -> share, as printed
    assert set(shares) >= {"SCC", "IN", "OUT"} and abs(sum(shares.values()) - 1) < 0.01


@pytest.mark.timeout(240)
def test_library_guide_snippets_run(tmp_path: Path) -> None:
    assert "crawl(" in _snippets(LIBRARY_GUIDE)[0]
    lines = _run(LIBRARY_GUIDE, tmp_path)
    match = re.fullmatch(r"(\d+) URLs fetched, (\d+) of them HTML pages", lines[0])
    assert match is not None and 0 < int(match[2]) <= int(match[1]), lines[0]
    html_pages = int(match[2])
    assert lines[1].startswith("top page: http://site")
    assert re.fullmatch(r"\d+ of \d+ pages changed; their median rate [\d.]+/day", lines[3])
    # The networkx and pandas hand-off of the same crawl's graph: its fetched pages (the
    # HTML pages, a duplicate body merged into its first page), linked across three hosts.
    match = re.fullmatch(r"(\d+) pages, (\d+) links; most linked: http://site\d\.test:\d+/\S* "
                         r"\((\d+) links in\)", lines[4])
    assert match is not None, lines[4]
    pages, links, most = int(match[1]), int(match[2]), int(match[3])
    assert 0.9 * html_pages <= pages <= html_pages and links > pages and 1 < most < pages
    core = re.fullmatch(r"largest strongly connected component: (\d+) pages", lines[5])
    assert core is not None and 1 < int(core[1]) <= pages, lines[5]
    share = re.fullmatch(r"(\d+)% of the links leave their host", lines[6])
    assert share is not None and 0 < int(share[1]) < 100, lines[6]
