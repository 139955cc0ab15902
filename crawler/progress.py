"""A live one-line progress display (stderr, only on a terminal) and the final summary."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from collections.abc import Callable, Iterator
from typing import TextIO

from crawler.engine import CrawlStats

__all__ = ["Progress", "format_line", "format_summary", "stop_on_signals"]


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


def format_line(stats: CrawlStats, rate: float) -> str:
    return (f"{stats.pages:>8} pages  {rate:7.1f} pages/s  frontier {stats.frontier:>7}  "
            f"busy hosts {stats.busy_hosts:>4}/{stats.hosts:<4}  errors {stats.errors}")


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
    """Refreshes one status line every ``interval`` seconds while a crawl runs.

    Quiet when ``stream`` is not a terminal (pipes, files, CI logs).
    """

    def __init__(self, stats: CrawlStats, *, interval: float = 0.5,
                 stream: TextIO | None = None, force: bool = False) -> None:
        self.stats = stats
        self.interval = interval
        self.stream = stream or sys.stderr
        self.enabled = force or self.stream.isatty()
        self._task: asyncio.Task[None] | None = None
        self._last = (time.monotonic(), 0)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            self.render()

    def render(self) -> None:
        now, pages = time.monotonic(), self.stats.pages
        t0, p0 = self._last
        rate = (pages - p0) / (now - t0) if now > t0 else 0.0
        self._last = (now, pages)
        self.stream.write("\r\x1b[K" + format_line(self.stats, rate))
        self.stream.flush()

    def start(self) -> None:
        if self.enabled and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
            self.stream.write("\r\x1b[K")
            self.stream.flush()
