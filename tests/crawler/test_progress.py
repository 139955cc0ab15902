"""Progress: elapsed time, ETA of a bounded crawl, hosts and scope; a log line when the
stream is not a terminal; the frontier's count of hosts with work."""

from __future__ import annotations

import io
import re
import time

from webcrawl.crawler.engine import CrawlStats
from webcrawl.crawler.frontier import Frontier
from webcrawl.crawler.progress import Progress, format_clock, format_line
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
    assert all(re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \s*50 pages", line) for line in lines)
    assert "ETA" in lines[0]
    # log_interval 0: nothing at all off a terminal.
    assert not Progress(_stats(1, 1.0), stream=io.StringIO(), log_interval=0).enabled


def test_a_terminal_gets_one_redrawn_line() -> None:
    stream = io.StringIO()
    progress = Progress(_stats(5, 1.0), stream=stream, force=True)
    assert progress.terminal and progress.interval == 0.5
    progress.render()
    assert stream.getvalue().startswith("\r\x1b[K") and "\n" not in stream.getvalue()


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
