"""Progress: elapsed time, ETA of a bounded crawl, hosts and scope; a log line when the
stream is not a terminal; the frontier's count of hosts with work."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

from miniweb import MiniWeb
from terminal import ERASE_LINE, Terminal, redraws, visible
from webcrawl.crawler.engine import CrawlStats
from webcrawl.crawler.frontier import Frontier
from webcrawl.crawler.progress import Progress, fit_line, format_clock, format_line
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.records import Outcome


def _stats(pages: int, seconds: float) -> CrawlStats:
    stats = CrawlStats(started=time.monotonic() - seconds)
    stats.outcomes[Outcome.FETCHED] = pages
    stats.frontier, stats.busy_hosts, stats.queued_hosts, stats.hosts = 70, 2, 4, 20
    return stats


def test_clock() -> None:
    assert [format_clock(s) for s in (0, 59.9, 61, 3600 * 5 + 62)] == \
        ["0:00:00", "0:00:59", "0:01:01", "5:01:02"]


def test_line_has_elapsed_eta_hosts_and_scope() -> None:
    # 50 pages in 10 s: 5 pages/s, so 50 more pages of a 100-page crawl take 10 s.
    line = format_line(_stats(50, 10.0), 4.0, max_pages=100, scope="domain test")
    assert "elapsed 0:00:10" in line
    assert "ETA 0:00:10 (50 of 100)" in line
    assert "hosts 2 fetching, 4 queued, 20 seen" in line
    assert line.endswith("scope domain test")
    # An unbounded crawl has no ETA.
    assert "ETA" not in format_line(_stats(50, 10.0), 4.0)


def test_not_a_terminal_gets_time_stamped_log_lines() -> None:
    stream = io.StringIO()
    settings = CrawlSettings()
    progress = Progress(_stats(50, 10.0), interval=settings.progress_interval,
                        log_interval=settings.progress_log_interval, stream=stream,
                        max_pages=100)
    assert not progress.terminal and progress.interval == 10.0 and progress.enabled
    progress.render()
    progress.render()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and "\r" not in stream.getvalue()
    assert all(re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d 50 fetched, 50 pages, ", line)
               for line in lines)
    assert "ETA" in lines[0]
    # log_interval 0: nothing at all off a terminal.
    assert not Progress(_stats(1, 1.0), stream=io.StringIO(), log_interval=0).enabled


def test_a_terminal_gets_one_redrawn_line() -> None:
    stream = io.StringIO()
    progress = Progress(_stats(5, 1.0), stream=stream, force=True)
    assert progress.terminal and progress.interval == 0.5
    progress.render()
    text = stream.getvalue()
    assert text.startswith("\r") and text.endswith("\x1b[K") and "\n" not in text


def test_frontier_counts_hosts_with_queued_urls() -> None:
    frontier = Frontier()
    for url_id, host in enumerate([0, 0, 1]):
        frontier.add(url_id, host, 1.0)
    assert frontier.queued_hosts == 2
    host = frontier.pop_ready(0.0)
    assert host is not None
    while frontier.take(host) is not None:
        pass
    assert frontier.queued_hosts == 1


def test_fit_line_drops_whole_fields_from_the_end() -> None:
    line = format_line(_stats(50, 10.0), 4.0, max_pages=100, scope="domain test")
    assert len(line) > 100
    fitted = fit_line(line, 99)
    assert len(fitted) <= 99 and line.startswith(fitted)
    assert fitted.split("  ") == line.split("  ")[:len(fitted.split("  "))]
    assert fit_line("x" * 50, 10) == "x" * 9 + "…"


async def _crawl_on(stream: object, mini_web: MiniWeb, tmp_path: Path, *options: str) -> str:
    """``webcrawl crawl`` of 16 pages, one host, 0.06 s apart, its stderr on ``stream``."""
    import asyncio
    import sys

    from miniweb import html
    from webcrawl.crawler.cli import main

    mini_web.add("a.test", "/", html(*[f"/p{i}" for i in range(15)]))
    for i in range(15):
        mini_web.add("a.test", f"/p{i}", html())
    argv = ["crawl", mini_web.url("a.test"), "--db", str(tmp_path / "c.db"), "--resolve",
            "*.test=127.0.0.1", "--allow-domain", "test", "--min-delay", "0.06",
            "--delay-factor", "0", *options]
    saved = sys.stderr
    sys.stderr = stream  # type: ignore[assignment]
    try:
        assert await asyncio.to_thread(main, argv) == 0
    finally:
        sys.stderr = saved
    return str(tmp_path / "c.db")


async def test_crawl_progress_redraws_in_place_on_a_100_column_terminal(
        mini_web: MiniWeb, tmp_path: Path) -> None:
    """On a terminal 100 columns wide every redraw fits in 99 columns, starts with a
    carriage return and erases the rest of the row, so nothing scrolls: the only line
    ends are the summary's."""
    with Terminal(columns=100) as term:
        await _crawl_on(term.stream, mini_web, tmp_path, "-s", "progress_interval=0.05")
    drawn = redraws(term.output)
    assert len(drawn) >= 5, term.output
    assert all(len(visible(text)) <= 99 for text in drawn), drawn
    assert all(text.lstrip().split("  ")[0].endswith("fetched") for text in drawn)
    # Everything before the summary is one row of redraws; the summary then follows on a
    # cleared row and is the only line end.
    assert term.output.count("\n") == 1
    assert term.output.split("\n")[0].split("\r")[-1].startswith(ERASE_LINE + "crawl done:")
    # Whole fields were dropped from the end: the full line (with the hosts and the
    # scope) is about 136 columns.
    assert all("scope" not in text for text in drawn)


async def test_crawl_progress_into_a_pipe_is_plain_lines(mini_web: MiniWeb,
                                                         tmp_path: Path) -> None:
    import os

    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as pipe:
        await _crawl_on(pipe, mini_web, tmp_path, "-s", "progress_log_interval=0.2")
    with os.fdopen(read_end) as reader:
        text = reader.read()
    lines = text.splitlines()
    assert "\r" not in text and "\x1b" not in text
    assert len(lines) >= 3 and lines[-1].startswith("crawl done:")
    assert all(re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \d+ fetched, \d+ pages, ", line)
               for line in lines[:-1]), lines
