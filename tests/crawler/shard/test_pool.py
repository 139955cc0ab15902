"""The worker pool: every worker starts on the crawl's first order, all at once; a worker
lost too often ends the crawl with one error.

A worker started on its own first order began its start-up (imports: seconds on a
loaded machine) only once the first page had named the hosts it owns, and every one of
them waited that long.  A fake ``spawn`` records the starts: no process, no timing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from webcrawl.crawler.orders import FetchOrder, FetchPage
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.shard.pool import WorkerPool
from webcrawl.crawler.shard.protocol import StartWorker, WorkerDone, WorkerOrder
from webcrawl.crawler.shard.transport import Transport
from webcrawl.storage.errors import CrawlError


class FakeTransport:
    def __init__(self, lost: bool = False) -> None:
        self.sent: list[WorkerOrder] = []
        self.ended = asyncio.Event()
        if lost:  # the worker is gone as soon as it starts
            self.ended.set()

    async def send(self, orders: Sequence[WorkerOrder]) -> None:
        self.sent.extend(orders)

    async def receive(self) -> list[WorkerDone] | None:
        await self.ended.wait()
        return None

    async def close(self) -> None:
        self.ended.set()


async def test_the_first_order_starts_every_worker() -> None:
    spawned: dict[int, FakeTransport] = {}

    async def spawn(worker: int, generation: int) -> Transport:
        spawned[worker] = FakeTransport()
        return spawned[worker]

    settings = CrawlSettings()
    pool = WorkerPool(3, lambda w, g: StartWorker(w, 3, settings, (), g), spawn,
                      lambda order: order, route=lambda host: 0)
    order: FetchOrder = FetchPage(1, "http://a.test/", "a.test:80", 0.0, 0.0)
    pool.submit(order, lambda done: None)
    for _ in range(10):  # the launches are tasks: let them run
        await asyncio.sleep(0)
    try:
        assert sorted(spawned) == [0, 1, 2]
        # each got its start order; only the owner of a.test got the page
        assert [type(m) for m in spawned[1].sent] == [StartWorker]
        assert spawned[0].sent[1:] == [order]
        pool.submit(FetchPage(2, "http://a.test/b", "a.test:80", 0.0, 0.0), lambda done: None)
        await asyncio.sleep(0)
        assert sorted(spawned) == [0, 1, 2]  # no second start
    finally:
        await pool.close()


async def test_a_worker_lost_too_often_ends_the_crawl_with_one_error() -> None:
    starts: list[int] = []

    async def spawn(worker: int, generation: int) -> Transport:
        starts.append(generation)
        return FakeTransport(lost=True)

    settings = CrawlSettings()
    pool = WorkerPool(1, lambda w, g: StartWorker(w, 1, settings, (), g), spawn,
                      lambda order: order, route=lambda host: 0, max_restarts=2)
    answers: list[object] = []
    pool.submit(FetchPage(1, "http://a.test/", "a.test:80", 0.0, 0.0), answers.append)
    for _ in range(50):
        await asyncio.sleep(0)
    try:
        assert starts == [0, 1, 2]  # the first start and two restarts
        assert len(answers) == 1 and isinstance(answers[0], CrawlError)
        assert "lost 3 times" in str(answers[0]) and "resumed" in str(answers[0])
        with pytest.raises(CrawlError):
            pool.submit(FetchPage(2, "http://a.test/b", "a.test:80", 0.0, 0.0), answers.append)
    finally:
        await pool.close()
