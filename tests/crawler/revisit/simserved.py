"""A fixture web served on a revisit's simulated clock (the live simulated-clock tests)."""

from __future__ import annotations

from webcrawl.crawler import CrawlSettings
from webcrawl.crawler.revisit.clock import SimulatedClock

EPOCH = 1_000_000_000.0


class ServerClock:
    """What the fixture server reads: the current run's simulated clock."""

    def __init__(self) -> None:
        self.current = SimulatedClock(epoch=EPOCH)

    def monotonic(self) -> float:
        return self.current.monotonic()


def sim_settings(**extra: object) -> CrawlSettings:
    """Crawl settings for the fixture's ``*.test`` hosts on loopback, one request at a time."""
    return CrawlSettings.polite_off(scope_hosts=("*.test",), resolve=("*.test=127.0.0.1",),
                                    concurrency=1, **extra)
