"""Counters, the progress line and the summary of a revisit run (:mod:`crawler.revisit.loop`)."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from webcrawl.crawler.progress import warc_text

if TYPE_CHECKING:
    from webcrawl.crawler.archive import WarcCounts

__all__ = ["RevisitStats", "run_with_progress"]


@dataclass(slots=True)
class RevisitStats:
    """Live counters and the final summary of a revisit run."""

    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    budget: float = 0.0
    pages: int = 0            # pages in the collection being revisited
    excluded: int = 0         # collection pages left out (gone earlier, robots)
    fetches: int = 0          # completed revisits (any outcome)
    changed: int = 0
    unchanged: int = 0        # includes not_modified
    not_modified: int = 0
    unknown: int = 0          # 2xx not comparable with the previous digest
    gone: int = 0
    errors: int = 0
    added: int = 0            # pages that joined the collection (page window)
    outcomes: Counter[str] = field(default_factory=Counter)
    stopped: str = "running"  # 'duration', 'max_visits', 'stopped'
    #: this run's WARC output (``--warc``), as the crawl's summary counts it; None: none
    warc: WarcCounts | None = None

    @property
    def elapsed(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    @property
    def rate(self) -> float:
        return self.fetches / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def budget_use(self) -> float:
        """Fraction of the budget spent (completed fetches / (budget * elapsed))."""
        return self.rate / self.budget if self.budget > 0 else 0.0

    def line(self) -> str:
        return (f"{self.fetches:>8} revisits  {self.changed} changed  {self.unchanged} unchanged"
                f" ({self.not_modified} 304)  {self.gone} gone  {self.errors} errors  "
                f"{self.rate:6.1f}/s of {self.budget:g}/s ({100 * self.budget_use:3.0f}%)")

    def summary(self) -> str:
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items()))
        return (f"revisit {self.stopped}: {self.fetches} revisits of {self.pages} pages in "
                f"{self.elapsed:.1f} s ({self.rate:.1f}/s, {100 * self.budget_use:.0f}% of the "
                f"{self.budget:g}/s budget); {self.changed} changed, {self.unchanged} unchanged "
                f"({self.not_modified} not modified), {self.unknown} unknown, {self.gone} gone, "
                f"{self.errors} errors; {self.excluded} pages excluded"
                + (f"; {self.added} new pages joined" if self.added else "")
                + (f"; {outcomes}" if outcomes else "") + warc_text(self.warc))

    def as_dict(self) -> dict[str, Any]:
        return {"pages": self.pages, "excluded": self.excluded, "fetches": self.fetches,
                "changed": self.changed, "unchanged": self.unchanged,
                "not_modified": self.not_modified, "unknown": self.unknown,
                "gone": self.gone, "errors": self.errors, "added": self.added,
                "seconds": round(self.elapsed, 3),
                "rate": round(self.rate, 3), "budget": self.budget,
                "budget_use": round(self.budget_use, 4), "stopped": self.stopped,
                "outcomes": dict(sorted(self.outcomes.items())),
                "warc": None if self.warc is None else self.warc.as_dict()}


class _HasProgressInterval(Protocol):
    @property
    def progress_interval(self) -> float: ...

    @property
    def progress_log_interval(self) -> float: ...

    @property
    def duration(self) -> float | None: ...

    @property
    def max_visits(self) -> int | None: ...


class RevisitRun(Protocol):
    """What :func:`run_with_progress` needs of a :class:`~crawler.revisit.RevisitCrawler`."""

    @property
    def settings(self) -> _HasProgressInterval: ...

    @property
    def stats(self) -> RevisitStats: ...

    def stop(self) -> None: ...

    async def run(self) -> RevisitStats: ...


async def run_with_progress(crawler: RevisitRun, *, show: bool = True,
                            stream: TextIO | None = None) -> RevisitStats:
    """Run ``crawler`` with signal handling and its progress: a live line on a terminal,
    a log line every ``progress_log_interval`` seconds elsewhere (see
    :class:`webcrawl.crawler.progress.Progress`), with the ETA of a run bounded by ``duration``
    or ``max_visits``."""
    from webcrawl.crawler.progress import Progress, format_clock, stop_on_signals

    settings, stats = crawler.settings, crawler.stats

    def line(rate: float) -> str:
        text = f"{stats.line()}  elapsed {format_clock(stats.elapsed)}"
        etas = []
        if settings.duration is not None:
            etas.append(settings.duration - stats.elapsed)
        if settings.max_visits is not None and stats.rate > 0:
            etas.append((settings.max_visits - stats.fetches) / stats.rate)
        if etas:
            text += f"  ETA {format_clock(max(0.0, min(etas)))}"
        return text

    progress = Progress(None, interval=settings.progress_interval,
                        log_interval=settings.progress_log_interval, stream=stream,
                        line=line, count=lambda: stats.fetches)
    if show:
        progress.start()
    with stop_on_signals(crawler.stop):
        try:
            return await crawler.run()
        finally:
            await progress.stop()


