"""The documentation: the README is a front door, user documents carry no issue numbers or
work diaries, the generated references cover every command and setting, every page has a
title, the README's links resolve, and (with the docs extra) ``mkdocs build --strict``
passes."""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("webcrawl_docs",
                                                  DOCS / "hooks" / "webcrawl_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _user_documents() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted(DOCS.rglob("*.md"))]


def test_the_readme_is_a_front_door() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    for heading in ("## Quick start", "## A tour", "## Use as a library", "## Read on"):
        assert heading in text


@pytest.mark.parametrize("path", _user_documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_issue_numbers_or_work_diary(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    for pattern in (r"\(issues? \d", r"\bissues? \d+\b", r"\bsession \d", r"\bthe lead\b",
                    r"\bthis session\b"):
        assert not re.search(pattern, text, re.IGNORECASE), (pattern, path)


def test_readme_links_resolve() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if not t.startswith(("http://", "https://"))]
    assert len(local) >= 15
    for target in local:
        assert (ROOT / target).exists(), target


def test_every_page_has_a_title() -> None:
    for path in DOCS.rglob("*.md"):
        first = path.read_text(encoding="utf-8").lstrip().splitlines()[0]
        assert first.startswith("# "), path


def test_the_cli_reference_covers_every_command_and_exit_status() -> None:
    from webcrawl.crawler.cli import EXIT_STATUSES, build_parser
    from webcrawl.crawler.cli._help import iter_parsers

    reference = _hooks().cli_reference()
    for path, parser in iter_parsers(build_parser()):
        assert f"`webcrawl {path}`".replace(" `", "`") in reference or \
            f"`{f'webcrawl {path}'.strip()}`" in reference, path
        for action in parser._actions:
            for flag in action.option_strings:
                if action.help != argparse.SUPPRESS:
                    assert flag in reference, (path, flag)
    table = _hooks().exit_statuses()
    for status in EXIT_STATUSES:
        assert f"| {status} |" in table
    assert 4 in EXIT_STATUSES


def test_the_settings_reference_covers_every_setting() -> None:
    import dataclasses

    from webcrawl.crawler.settings import CrawlSettings

    reference = _hooks().settings_reference()
    rows = [line for line in reference.splitlines() if line.startswith("| `")]
    names = [f.name for f in dataclasses.fields(CrawlSettings)]
    assert [row.split("`")[1] for row in rows] == names
    assert all(row.rstrip(" |").count("|") >= 3 and not row.endswith("|  |") for row in rows)


def test_folder_index_lists_every_page(tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    for name, title in (("a.md", "# Alpha"), ("b.md", "# Beta"), ("index.md", "# Index")):
        (tmp_path / "results" / name).write_text(f"{title}\n")
    assert _hooks().folder_index(tmp_path, "results") == "- [Alpha](a.md)\n- [Beta](b.md)"


def test_mkdocs_build_is_strict_clean(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed")
    pytest.importorskip("material", reason="the docs extra is not installed")
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                          str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr[-3000:]
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    assert "--input-file" in cli and "Exit statuses" in cli
