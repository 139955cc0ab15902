"""The ``webcrawl`` dispatcher's edge: usage errors, no command, a reader closing the pipe."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from crawldb import write_crawl
from webcrawl.crawler.cli import EXIT_BROKEN_PIPE, main

WEBCRAWL = [sys.executable, "-m", "webcrawl.crawler.cli"]


def test_unknown_command_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["frobnicate"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid choice" in err


@pytest.mark.parametrize("argv", [[], ["analyze"], ["fixture"], ["import"]],
                         ids=["webcrawl", "analyze", "fixture", "import"])
def test_a_missing_command_is_one_line_naming_the_choices(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert "choose a command" in err or "required" in err, err


def test_reader_closing_the_pipe_stops_quietly(tmp_path: Path) -> None:
    """``webcrawl ... | head -1``: exit 141 and nothing on stderr, not an error message."""
    # A star: page 0 links to pages 1..4999, each of which links back.
    n = 5000
    db = write_crawl(tmp_path / "crawl.db", [f"http://s.test/p{i}" for i in range(n)],
                     {0: range(1, n), **{i: [0] for i in range(1, n)}})
    proc = subprocess.Popen([*WEBCRAWL, "analyze", "pagerank", "--db", str(db), "--top", "5000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b"PageRank over the graph of fetched pages: 5,000")
    proc.stdout.close()  # the reader goes away long before 5000 rows are written
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == EXIT_BROKEN_PIPE
    assert "error" not in err and "Traceback" not in err, err
