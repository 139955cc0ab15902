"""The README's "Use as a library" snippets run as written, in order, in a fresh folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _library_snippets() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Use as a library", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_library_section_has_the_three_snippets() -> None:
    snippets = _library_snippets()
    assert len(snippets) == 3
    assert "crawl(" in snippets[0] and "pagerank(" in snippets[1]
    assert "estimate_rates(" in snippets[2]


def test_library_snippets_run(tmp_path: Path) -> None:
    script = tmp_path / "snippets.py"
    script.write_text("\n\n".join(_library_snippets()))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    fetched = int(lines[0].split()[0])
    assert fetched > 0 and lines[0].endswith("pages fetched")
    assert lines[1].startswith("top page: http://site")
    assert re.fullmatch(r"\d+ of \d+ pages changed; their median rate [\d.]+/day", lines[3])
