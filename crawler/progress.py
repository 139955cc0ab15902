"""Progress while a job runs (a live line on a terminal, a log line every 10 s elsewhere)
and the final summary."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from collections.abc import Callable, Iterator
from typing import TextIO

from webcrawl.crawler.engine import CrawlStats

__all__ = ["Progress", "format_clock", "format_line", "format_summary", "stop_on_signals"]


@contextlib.contextmanager
def stop_on_signals(stop: Callable[[], None]) -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM call ``stop`` (a clean stop that flushes the
    store) instead of raising KeyboardInterrupt; needs a running loop in the main thread
    (elsewhere signals keep their default handling)."""
    loop = asyncio.get_running_loop()
    handled = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop)
            handled.append(sig)
        except (ValueError, RuntimeError, NotImplementedError):  # not the main thread
            pass
    try:
        yield
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)


def format_clock(seconds: float) -> str:
    """``h:mm:ss`` for a duration."""
    whole = max(0, int(seconds))
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def format_line(stats: CrawlStats, rate: float, *, max_pages: int | None = None,
                scope: str | None = None) -> str:
    """The crawl's progress: pages, recent rate, elapsed time, the ETA when the crawl is
    bounded by ``max_pages``, the frontier, hosts and the scope.

    Hosts: ``fetching`` have a request in flight (or wait inside a retry), ``queued``
    hold URLs in the frontier, ``seen`` is every host discovered (in scope or not).
    The ETA divides the pages left by this run's average rate.
    """
    parts = [f"{stats.pages:>8,} pages", f"{rate:7.1f} pages/s",
             f"elapsed {format_clock(stats.elapsed)}"]
    if max_pages is not None:
        left = max(0, max_pages - stats.pages)
        eta = format_clock(left / stats.rate) if stats.rate > 0 else "?"
        parts.append(f"ETA {eta} ({stats.pages:,} of {max_pages:,})")
    parts += [f"frontier {stats.frontier:,}",
              f"hosts {stats.busy_hosts} fetching, {stats.queued_hosts} queued, "
              f"{stats.hosts} seen", f"errors {stats.errors}"]
    if scope:
        parts.append(f"scope {scope}")
    return "  ".join(parts)


def format_summary(stats: CrawlStats) -> str:
    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(stats.outcomes.items()))
    traps = ", ".join(f"{k} {v}" for k, v in sorted(stats.traps.items()) if v)
    return (f"crawl {stats.stopped}: {stats.pages} pages in {stats.elapsed:.1f} s "
            f"({stats.rate:.1f} pages/s), {stats.urls} URLs on {stats.hosts} hosts, "
            f"{stats.frontier} left in the frontier, {stats.requests} requests "
            f"({stats.retries} retries, {stats.robots_fetches} robots.txt); {outcomes}"
            + (f"; {stats.links_cut_pages} pages with links cut at --max-links-per-page"
               if stats.links_cut_pages else "")
            + (f"; {stats.sitemap_fetches} sitemap files read" if stats.sitemap_fetches
               else "")
            + (f"; URL-trap bounds kept out {traps}" if traps else ""))


class Progress:
    """Shows a job's progress on ``stream`` (stderr by default) while it runs.

    On a terminal one status line is redrawn every ``interval`` seconds; elsewhere
    (a pipe, a file, ``nohup``, CI) one time-stamped line is written every
    ``log_interval`` seconds (0: nothing), so a long job is never silent.  ``line``
    makes the text from the rate since the last one (default: :func:`format_line` of
    ``stats`` with ``max_pages`` and ``scope``) and ``count`` the units done (default:
    ``stats.pages``); a job without :class:`CrawlStats` passes ``None`` and both.
    ``force`` draws the terminal line on any stream.
    """

    def __init__(self, stats: CrawlStats | None, *, interval: float = 0.5,
                 stream: TextIO | None = None, force: bool = False,
                 log_interval: float = 10.0, max_pages: int | None = None,
                 scope: str | None = None, line: Callable[[float], str] | None = None,
                 count: Callable[[], int] | None = None) -> None:
        self.stats = stats
        self.stream = stream or sys.stderr
        self.terminal = force or _isatty(self.stream)
        self.interval = interval if self.terminal else log_interval
        self.enabled = self.interval > 0
        if stats is not None:
            crawl = stats
            line = line or (lambda rate: format_line(crawl, rate, max_pages=max_pages,
                                                     scope=scope))
            count = count or (lambda: crawl.pages)
        if line is None or count is None:
            raise TypeError("Progress without stats needs line and count")
        self._line, self._count = line, count
        self._task: asyncio.Task[None] | None = None
        self._last = (time.monotonic(), 0)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            self.render()

    def render(self) -> None:
        now, done = time.monotonic(), self._count()
        t0, d0 = self._last
        rate = (done - d0) / (now - t0) if now > t0 else 0.0
        self._last = (now, done)
        text = self._line(rate)
        if self.terminal:
            self.stream.write("\r\x1b[K" + text)
        else:
            self.stream.write(time.strftime("%Y-%m-%d %H:%M:%S ") + " ".join(text.split())
                              + "\n")
        self.stream.flush()

    def start(self) -> None:
        if self.enabled and self._task is None:
            self._last = (time.monotonic(), self._count())
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
            if self.terminal:
                self.stream.write("\r\x1b[K")
                self.stream.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or not a real file
        return False
