"""The revisit loop's clock: the wall clock, or simulated time independent of machine speed.

:class:`~webcrawl.crawler.revisit.loop.RevisitCrawler` reads the time only through its
clock: ``monotonic()`` for waits, the budget's token bucket and politeness,
``time()`` for visit times (planner days and the stored ``started_at``/``ended_at``),
``wait(tasks, until)`` to sleep, ``stamp(result, wall, mono)`` to date a response and
``span(started, ended, wall)`` a failed request.

* :class:`WallClock` (the default): ``time.monotonic``, ``time.time``, and a real sleep.
* :class:`SimulatedClock`: simulated seconds that stand still while a fetch is in
  flight and jump straight to the next moment the loop waits for once nothing is.  A
  fetch takes no simulated time (its visit time is its start) and runs to its end
  before the clock moves, so the visits, their order and their times depend only on
  the settings, the budget and what the server answers, never on how fast the machine
  is.  A server that reads the same clock (the fixture server's ``clock`` argument:
  pass ``clock.monotonic``) answers each request at the simulated time it was made.
  A run with nothing in flight and nothing to wait for (no page ever due, no
  ``duration``) ends.  Fetches run one at a time in effect: a second one starts only
  when the budget allows at the same simulated instant (``burst`` above 1).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from webcrawl.crawler.fetcher import FetchResult
    from webcrawl.crawler.tasks import FetchTasks

__all__ = ["RevisitClock", "SimulatedClock", "WallClock"]


class RevisitClock(Protocol):
    """What the revisit loop asks of a clock."""

    def monotonic(self) -> float:
        """Seconds on a monotonic scale."""

    def time(self) -> float:
        """Seconds since the Unix epoch."""

    async def wait(self, tasks: FetchTasks, until: float | None) -> None:
        """Return when a task ends, the loop is woken or ``monotonic()`` reaches ``until``."""

    def stamp(self, result: FetchResult, wall: float, mono: float) -> FetchResult:
        """The response dated on this clock (the request started at ``wall``/``mono``)."""

    def span(self, started: float, ended: float, wall: float) -> tuple[float, float]:
        """A failed request's (start, end) on this clock (it started at ``wall``)."""


class WallClock:
    """The machine's clocks: what a live revisit uses."""

    def monotonic(self) -> float:
        return time.monotonic()

    def time(self) -> float:
        return time.time()

    async def wait(self, tasks: FetchTasks, until: float | None) -> None:
        await tasks.wait(until)

    def stamp(self, result: FetchResult, wall: float, mono: float) -> FetchResult:
        return result

    def span(self, started: float, ended: float, wall: float) -> tuple[float, float]:
        return started, ended


class SimulatedClock:
    """Simulated seconds, advanced by the loop's own waits (see the module docstring).

    Parameters
    ----------
    start : float, default 0
        Simulated ``monotonic()`` at creation.
    epoch : float, default 0
        ``time()`` when ``monotonic()`` is 0: simulated wall time is ``epoch + now``.
    """

    def __init__(self, start: float = 0.0, epoch: float = 0.0) -> None:
        self.now = float(start)
        self.epoch = float(epoch)

    def monotonic(self) -> float:
        return self.now

    def time(self) -> float:
        return self.epoch + self.now

    def advance_to(self, when: float) -> None:
        """Move the clock forward to ``when`` (never back)."""
        self.now = max(self.now, float(when))

    async def wait(self, tasks: FetchTasks, until: float | None) -> None:
        if len(tasks):
            await tasks.wait(None)        # the fetch ends at this same simulated instant
        elif until is None:
            tasks.stop()                  # nothing in flight, nothing to wait for
        else:
            self.advance_to(until)
            await asyncio.sleep(0)        # let the store and the server take their turn

    def stamp(self, result: FetchResult, wall: float, mono: float) -> FetchResult:
        return dataclasses.replace(result, started_at=wall, ended_at=wall, elapsed=0.0,
                                   ended_mono=mono)

    def span(self, started: float, ended: float, wall: float) -> tuple[float, float]:
        return wall, wall
