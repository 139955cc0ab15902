"""Event-driven politeness scheduling: a host's own timer starts it when its wait ends.

Driven by a fake clock and a fake event loop that only records ``call_at``: no real
time passes and nothing depends on thread scheduling.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.settings import CrawlSettings


@dataclass
class FakeTimer:
    when: float
    callback: Callable[..., None]
    args: tuple[Any, ...]
    cancelled: bool = False
    fired: bool = False

    def cancel(self) -> None:
        self.cancelled = True

    def fire(self) -> None:
        assert not self.cancelled and not self.fired
        self.fired = True
        self.callback(*self.args)


@dataclass
class FakeLoop:
    timers: list[FakeTimer] = field(default_factory=list)

    def call_at(self, when: float, callback: Callable[..., None], *args: Any) -> FakeTimer:
        timer = FakeTimer(when, callback, args)
        self.timers.append(timer)
        return timer

    def live(self) -> list[FakeTimer]:
        return [t for t in self.timers if not t.cancelled and not t.fired]


@dataclass
class FakeStore:
    backlogged: bool = False


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    return now


def _crawler(tmp_path: Path) -> tuple[Crawler, FakeLoop, list[tuple[int, float]]]:
    crawler = Crawler(tmp_path / "c.db", ["http://a.test/"],
                      CrawlSettings(polite_min_delay=0.02, concurrency=4))
    loop = FakeLoop()
    crawler.store = FakeStore()  # type: ignore[assignment]
    crawler.dispatch.open(loop)  # type: ignore[arg-type]
    started: list[tuple[int, float]] = []
    crawler.start_host = lambda host, now: started.append((host, now))  # type: ignore[method-assign]
    return crawler, loop, started


def test_a_host_is_started_by_its_own_timer_never_early(tmp_path: Path,
                                                         clock: list[float]) -> None:
    crawler, loop, started = _crawler(tmp_path)
    frontier = crawler.frontier
    frontier.add(0, host_id=0, priority=1.0)
    frontier.add(1, host_id=0, priority=1.0)
    assert [(t.when, t.args) for t in loop.live()] == [(0.0, (0, 0.0))]
    loop.live()[0].fire()                       # the timer's callback alone starts it
    assert started == [(0, 100.0)]
    # The fetch ends and the host waits 20 ms: one timer at exactly that time.
    assert frontier.take(0) is not None
    frontier.release(0, ready_at=100.02)
    (timer,) = loop.live()
    assert timer.when == 100.02
    clock[0] = 100.02 - 1e-9                    # asyncio may fire a timer a hair early
    timer.fire()
    assert started == [(0, 100.0)]             # not started: re-armed for the same time
    (timer,) = loop.live()
    assert timer.when == 100.02
    clock[0] = 100.02
    timer.fire()
    assert started == [(0, 100.0), (0, 100.02)]
    assert loop.live() == []


def test_a_timer_starts_the_best_ready_host_and_respects_backpressure(
        tmp_path: Path, clock: list[float]) -> None:
    """A timer fills free slots best-first among every ready host (the strategy's
    order), and starts nothing while the store is backlogged or a recomputation is
    pending; the dispatcher then fills once they clear."""
    crawler, loop, started = _crawler(tmp_path)
    frontier = crawler.frontier
    frontier.add(0, host_id=0, priority=1.0)
    frontier.add(1, host_id=1, priority=5.0)
    frontier.add(2, host_id=2, priority=3.0)
    crawler.store.backlogged = True  # type: ignore[union-attr]
    for timer in loop.live():
        timer.fire()
    assert started == []
    crawler.store.backlogged = False  # type: ignore[union-attr]
    crawler.feedback.task = object()  # type: ignore[assignment]
    crawler.dispatch.fill()
    assert started == []
    crawler.feedback.task = None
    crawler.dispatch.fill()
    assert started == [(1, 100.0), (2, 100.0), (0, 100.0)]
