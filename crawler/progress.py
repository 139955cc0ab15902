"""Progress while a job runs, and the crawl's final summary: the one progress display of
every long command (crawl, revisit, import, compare, report).

:class:`StatusLine` is the display.  On a terminal it redraws one line in place: the
text is fitted to the terminal's width (less one column, so the cursor never wraps),
whole ``"  "``-separated fields dropped from the end first, and drawn after a carriage
return and followed by an erase-to-end-of-line, so a redraw never scrolls.  Anywhere
else (a pipe, a file, ``nohup``, CI) it writes one plain, time-stamped line per
``log_interval`` seconds and no control characters.  :class:`Progress` drives a
StatusLine from an asyncio task; synchronous jobs call :meth:`StatusLine.update`.

Why not rich or tqdm (``benchmarks/bench_progress.py``, 2-core machine at load 18,
2026-11-27): into a file or a pipe, rich's progress writes nothing until the end (one
line: a crawl under ``nohup`` is silent for hours) and tqdm writes its carriage-return
redraws into the file, while a long crawl needs one plain time-stamped line per
interval there; a redraw costs 2.5 µs here against 35 µs (tqdm) and 391 µs (rich);
importing any of the three took 0.2-0.3 s on that loaded machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TextIO

from webcrawl.storage.records import Outcome

if TYPE_CHECKING:
    from webcrawl.crawler.archive import WarcCounts
    from webcrawl.crawler.engine import CrawlStats

# StatusLine and fit_line are public too (every long command's display); the package
# facade does not list them yet, so neither does __all__.
__all__ = ["Progress", "dead_hosts_text", "format_clock", "format_line", "format_summary",
           "stop_on_signals", "warc_text"]


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


#: How the summary names the answers that are no HTML page (the answered outcomes,
#: :data:`webcrawl.crawler.outcomes.ANSWERED`, but ``fetched`` and ``http_error``, which
#: are named apart).
_OTHER_ANSWERS = ((Outcome.REDIRECT, "redirects"), (Outcome.NOT_HTML, "other files"),
                  (Outcome.NOT_MODIFIED, "not modified"), (Outcome.TOO_LARGE, "too large"))
#: Hosts and seeds named in the summary at most (the rest are counted).
_NAMED = 5


def format_line(stats: CrawlStats, rate: float, *, max_pages: int | None = None,
                scope: str | None = None) -> str:
    """The crawl's progress: URLs fetched and the HTML pages among them, the recent rate,
    elapsed time, the ETA when the crawl is bounded by ``max_pages`` (a number of URLs
    fetched, see ``--max-pages``), the frontier, hosts and the scope.

    Words: a *page* is an HTML page (outcome ``fetched``); a URL is *fetched* when its
    request ended, whatever the answer (a page, another file, a redirect, an error) or
    the failure.  Hosts: ``fetching`` have a request in flight (or wait inside a retry),
    ``queued`` hold URLs in the frontier, ``seen`` is every host discovered (in scope or
    not).  The ETA divides the URLs left by this run's average rate.
    """
    parts = [f"{stats.pages:>8,} fetched", f"{stats.outcomes[Outcome.FETCHED]:,} pages",
             f"{rate:.1f} fetches/s", f"elapsed {format_clock(stats.elapsed)}"]
    if max_pages is not None:
        left = max(0, max_pages - stats.pages)
        eta = format_clock(left / stats.rate) if stats.rate > 0 else "?"
        parts.append(f"ETA {eta} ({stats.pages:,} of {max_pages:,})")
    parts += [f"frontier {stats.frontier:,}", f"errors {stats.errors}",
              f"hosts {stats.busy_hosts} fetching, {stats.queued_hosts} queued, "
              f"{stats.hosts} seen"]
    if scope:
        parts.append(f"scope {scope}")
    return "  ".join(parts)


#: How a crawl ended (:attr:`CrawlStats.stopped`), in the words of the options typed.
_HOW_STOPPED = {"max_fetches": "stopped at --max-fetches",
                "memory_limit": "stopped at --memory-limit"}


def format_summary(stats: CrawlStats) -> str:
    """The crawl's last line: URLs fetched, what they were (HTML pages, other answers,
    errors), what was discovered, the requests made and every outcome's count."""
    o = stats.outcomes
    answers = [f"{o[Outcome.FETCHED]:,} HTML pages"]
    answers += [f"{o[k]:,} {name}" for k, name in _OTHER_ANSWERS if o[k]]
    answers.append(f"{stats.errors:,} errors")
    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(o.items()))
    traps = ", ".join(f"{k} {v}" for k, v in sorted(stats.traps.items()) if v)
    how = _HOW_STOPPED.get(stats.stopped, stats.stopped)
    return (f"crawl {how}: {stats.pages:,} URLs fetched in {stats.elapsed:.1f} s "
            f"({stats.rate:.1f}/s): {', '.join(answers)}; {stats.urls:,} URLs known on "
            f"{stats.hosts} host{'' if stats.hosts == 1 else 's'}, "
            f"{stats.frontier:,} left in the frontier; "
            f"{stats.requests:,} requests ({stats.retries} retries, {stats.robots_fetches} "
            f"robots.txt); outcomes: {outcomes}"
            + (f"; {stats.links_cut_pages} pages with links cut at --max-links-per-page"
               if stats.links_cut_pages else "")
            + (f"; {stats.sitemap_fetches} sitemap files read" if stats.sitemap_fetches
               else "")
            + warc_text(stats.warc)
            + (f"; URL-trap bounds kept out {traps}" if traps else "")
            + (f"; {dead}" if (dead := dead_hosts_text(stats)) else ""))


def warc_text(counts: WarcCounts | None) -> str:
    """A summary's WARC clause (crawl and revisit): ``; WARC: 412 records, 200 revisits
    of stored payloads (3,145,728 bytes not stored again)``; "" without a WARC."""
    if counts is None:
        return ""
    return (f"; WARC: {counts.records:,} records, {counts.revisits:,} revisits of "
            f"stored payloads ({counts.bytes_not_stored:,} bytes not stored again)")


def dead_hosts_text(stats: CrawlStats) -> str:
    """The hosts whose robots.txt is unreachable and the seeds that failed, each with
    its cause: ``robots.txt unreachable on 1 host: a.test:9 (connection refused)``."""
    parts = []
    for items, what in ((stats.unreachable, "robots.txt unreachable on {n} host{s}"),
                        (stats.failed_seeds, "{n} seed{s} failed")):
        if not items:
            continue
        named = ", ".join(f"{k} ({v})" for k, v in sorted(items.items())[:_NAMED])
        more = f" and {len(items) - _NAMED} more" if len(items) > _NAMED else ""
        n = len(items)
        parts.append(what.format(n=n, s="" if n == 1 else "s") + f": {named}{more}")
    return "; ".join(parts)


def fit_line(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters: whole ``"  "``-separated fields dropped
    from the end first, then the first field cut with an ellipsis.

    >>> fit_line("12 fetched  3 pages  elapsed 0:00:01", 20)
    '12 fetched  3 pages'
    >>> fit_line("a very long first field", 10)
    'a very lo…'
    """
    if len(text) <= width:
        return text
    fields = text.split("  ")
    while len(fields) > 1 and len("  ".join(fields)) > width:
        fields.pop()
    line = "  ".join(fields)
    return line if len(line) <= width else line[:max(0, width - 1)] + "…"


def log_fields(text: str) -> str:
    """A status line for a log: its ``"  "``-separated fields joined by ``", "`` (one
    space would run "2,593 fetched" into "2,593 pages"), runs of spaces inside a field
    made one.

    >>> log_fields("12 fetched  3 pages   elapsed 0:00:01")
    '12 fetched, 3 pages, elapsed 0:00:01'
    """
    fields = (" ".join(field.split()) for field in text.split("  "))
    return ", ".join(field for field in fields if field)


class StatusLine:
    """One job's status on ``stream`` (stderr by default): redrawn in place on a terminal,
    one time-stamped plain line per ``log_interval`` seconds elsewhere (0: nothing).

    :meth:`update` draws when the last draw is ``interval`` (terminal) or
    ``log_interval`` seconds old; :meth:`show` draws now; :meth:`message` writes a line
    of its own above the status (a warning, a stage); :meth:`clear` erases the status
    (terminal) at the end.  ``force`` treats any stream as a terminal, ``width`` fixes
    the width (default: the terminal's, else ``$COLUMNS``, else 80).
    """

    def __init__(self, stream: TextIO | None = None, *, interval: float = 0.5,
                 log_interval: float = 10.0, force: bool = False,
                 width: int | None = None) -> None:
        self.stream = stream or sys.stderr
        self.terminal = force or _isatty(self.stream)
        self.interval = interval if self.terminal else log_interval
        self.enabled = self.interval > 0
        self._width = width
        self._drawn = False
        self._last = -float("inf")

    @property
    def width(self) -> int:
        """Columns available to the line (one less than the terminal's)."""
        if self._width is not None:
            return max(1, self._width - 1)
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = int(os.environ.get("COLUMNS", "") or 80)
        return max(1, columns - 1)

    def due(self) -> bool:
        return self.enabled and time.monotonic() - self._last >= self.interval

    def update(self, text: str | Callable[[], str]) -> None:
        """Draw ``text`` (or what the callable returns) if a draw is due."""
        if self.due():
            self.show(text() if callable(text) else text)

    def show(self, text: str) -> None:
        if not self.enabled:
            return
        self._last = time.monotonic()
        if self.terminal:
            self.stream.write("\r" + fit_line(text, self.width) + "\x1b[K")
            self._drawn = True
        else:
            self.stream.write(time.strftime("%Y-%m-%d %H:%M:%S ") + log_fields(text) + "\n")
        self.stream.flush()

    def message(self, text: str) -> None:
        """A line of its own (kept on screen), written above the status line."""
        if self.terminal and self._drawn:
            self.stream.write("\r\x1b[K")
            self._drawn = False
        self.stream.write(text + "\n")
        self.stream.flush()

    def clear(self) -> None:
        if self.terminal and self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False


class Progress:
    """Shows a job's progress through a :class:`StatusLine` from an asyncio task.

    On a terminal the line is redrawn every ``interval`` seconds; elsewhere one
    time-stamped line is written every ``log_interval`` seconds (0: nothing), so a long
    job is never silent.  ``line`` makes the text from the rate since the last one
    (default: :func:`format_line` of ``stats`` with ``max_pages`` and ``scope``) and
    ``count`` the units done (default: ``stats.pages``, URLs fetched); a job without
    :class:`CrawlStats` passes ``None`` and both.  ``force`` draws the terminal line on
    any stream; ``width`` fixes the terminal's width (see :class:`StatusLine`).
    """

    def __init__(self, stats: CrawlStats | None, *, interval: float = 0.5,
                 stream: TextIO | None = None, force: bool = False,
                 log_interval: float = 10.0, max_pages: int | None = None,
                 scope: str | None = None, line: Callable[[float], str] | None = None,
                 count: Callable[[], int] | None = None, width: int | None = None) -> None:
        self.stats = stats
        self.status = StatusLine(stream, interval=interval, log_interval=log_interval,
                                 force=force, width=width)
        self.stream = self.status.stream
        self.terminal = self.status.terminal
        self.interval = self.status.interval
        self.enabled = self.status.enabled
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
        self.status.show(self._line(rate))

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
            self.status.clear()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or not a real file
        return False
