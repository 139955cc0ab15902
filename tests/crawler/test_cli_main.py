"""The ``webcrawl`` dispatcher's edge: usage errors, no command, a reader closing the pipe."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from crawler.cli import EXIT_BROKEN_PIPE, main
from storage.records import FetchRecord, Outcome
from storage.store import CrawlStore, HostRow, UrlRow

WEBCRAWL = [sys.executable, "-m", "crawler.cli"]


def test_unknown_command_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["frobnicate"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid choice" in err


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().out


async def _star_crawl(path: Path, n: int) -> None:
    """Page 0 links to pages 1..n-1, each of which links back: a long PageRank table."""
    store = await CrawlStore.open(path)
    try:
        store.add_host(HostRow(0, "s.test", robots_status=404))
        for i in range(n):
            store.add_url(UrlRow(i, f"http://s.test/p{i}", 0, min(i, 1), -1 if i == 0 else 0))
            store.add_fetch(FetchRecord(i, i, 1000.0 + i, 1000.5 + i, Outcome.FETCHED, 200,
                                        "text/html"))
            store.add_links(i, list(range(1, n)) if i == 0 else [0])
            store.set_outcome(i, Outcome.FETCHED, i)
    finally:
        await store.aclose()


def test_reader_closing_the_pipe_stops_quietly(tmp_path: Path) -> None:
    """``webcrawl ... | head -1``: exit 141 and nothing on stderr, not an error message."""
    db = tmp_path / "crawl.db"
    asyncio.run(_star_crawl(db, 5000))
    proc = subprocess.Popen([*WEBCRAWL, "analyze", "pagerank", "--db", str(db), "--top", "5000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b"PageRank of 5,000 pages")
    proc.stdout.close()  # the reader goes away long before 5000 rows are written
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == EXIT_BROKEN_PIPE
    assert "error" not in err and "Traceback" not in err, err
