"""The shard coordinator through the downloader seam, with no process and no socket.

Each worker runs the real worker loop (:func:`webcrawl.crawler.shard.worker.serve`)
in this event loop, behind the pipe transport's own framing (pickled batches), with a
:class:`LocalDownloader` over the fake web: the coordinator, its worker pool and the
protocol are the real ones.  A sharded crawl must record what an unsharded one does;
a lost worker's orders are sent again, re-timed so that its hosts still wait their
politeness delay from the loss.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fakeweb import A, FakeWeb, MockFetcher, every_outcome_web, fake_downloader, fast_settings, page
from miniweb import read_db
from webcrawl.crawler.downloader import DownloaderLink, LocalDownloader
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.scope import Scope
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.shard import ShardDownloader
from webcrawl.crawler.shard.protocol import StartWorker, WorkerDone, WorkerOrder
from webcrawl.crawler.shard.transport import Transport, encode_frame, read_frame
from webcrawl.crawler.shard.worker import serve


class LoopTransport:
    """A worker in this event loop behind pickled frames; ``lose_after`` batches of
    answers received, it is lost (its loop ends, nothing more is answered)."""

    def __init__(self, web: FakeWeb, fetchers: list[MockFetcher], lose_after: int | None) -> None:
        self._to_worker = asyncio.StreamReader()
        self._from_worker = asyncio.StreamReader()
        self._lose_after = lose_after
        self._received = 0
        self._dead = False

        def make(start: StartWorker) -> tuple[LocalDownloader, DownloaderLink]:
            fetcher = MockFetcher(web, max_body=start.settings.fetch_max_body)
            fetchers.append(fetcher)
            return (LocalDownloader(start.settings, fetcher=fetcher),
                    DownloaderLink(host_allowed=Scope(start.settings, start.seeds).host_allowed))

        self._task = asyncio.get_running_loop().create_task(
            serve(self._to_worker, self._write, make=make))

    def _write(self, data: bytes) -> None:
        if not self._dead:
            self._from_worker.feed_data(data)

    async def send(self, orders: Sequence[WorkerOrder]) -> None:
        if not self._dead:
            self._to_worker.feed_data(encode_frame(orders))

    async def receive(self) -> list[WorkerDone] | None:
        if self._lose_after is not None and self._received >= self._lose_after:
            await self._lose()
            return None
        batch = await read_frame(self._from_worker)
        self._received += batch is not None
        return batch

    async def _lose(self) -> None:
        self._dead = True
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._task

    async def close(self) -> None:
        if not self._dead:
            self._to_worker.feed_eof()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._task, 5)
        self._dead = True


def _sharded(web: FakeWeb, fetchers: list[MockFetcher], *, lose: dict[tuple[int, int], int]
             ) -> Callable[[CrawlSettings, Sequence[str]], ShardDownloader]:
    async def spawn(worker: int, generation: int) -> Transport:
        return LoopTransport(web, fetchers, lose.get((worker, generation)))

    def make(settings: CrawlSettings, seeds: Sequence[str]) -> ShardDownloader:
        return ShardDownloader(settings, seeds, spawn=spawn)

    return make


def _settings(**kw: Any) -> CrawlSettings:
    return fast_settings(scope_hosts=("*.test",), fetch_max_body=1000, retry_attempts=2,
                         robots_max_attempts=2, **kw)


async def test_a_sharded_crawl_records_what_one_process_does(tmp_path: Path) -> None:
    await Crawler(tmp_path / "one.db", [f"{A}/"], _settings(),
                  downloader=fake_downloader(every_outcome_web())).run()
    fetchers: list[MockFetcher] = []
    crawler = Crawler(tmp_path / "two.db", [f"{A}/"], _settings(workers=2),
                      downloader=_sharded(every_outcome_web(), fetchers, lose={}))
    stats = await crawler.run()
    one, two = read_db(tmp_path / "one.db"), read_db(tmp_path / "two.db")
    assert two["outcomes"] == one["outcomes"] and two["edges"] == one["edges"]
    # The same attempts with the same answers (a windowed turn may number them apart).
    def attempts(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        return sorted((url, outcome, status, attempt, error)
                      for url, _seq, outcome, status, attempt, _p, _r, error in rows)

    assert attempts(two["fetches"]) == attempts(one["fetches"])
    assert stats.unreachable == {"b.test": "connection refused"}
    assert isinstance(crawler.downloader, ShardDownloader)
    assert set(crawler.downloader.assignment.values()) == {0, 1}
    assert len(fetchers) == 2 and all(f.max_in_flight == 1 for f in fetchers)


async def test_a_lost_workers_hosts_still_wait_their_delay(tmp_path: Path) -> None:
    web = FakeWeb()
    web.add(f"{A}/", page(*(f"/p{i}" for i in range(8))))
    for i in range(8):
        web.add(f"{A}/p{i}", page())
    fetchers: list[MockFetcher] = []
    delay = 0.05
    settings = _settings(workers=2, polite_min_delay=delay, polite_max_delay=delay,
                         shard_window=4)
    crawler = Crawler(tmp_path / "c.db", [f"{A}/"], settings,
                      downloader=_sharded(web, fetchers, lose={(0, 0): 2}))
    stats = await crawler.run()
    assert isinstance(crawler.downloader, ShardDownloader)
    assert crawler.downloader.pool.restarts == 1
    outcomes = read_db(tmp_path / "c.db")["outcomes"]
    assert sorted(outcomes.values()) == ["fetched"] * 9 and stats.stopped == "done"
    # Every request to a.test, over both incarnations of its worker, at least the
    # politeness delay after the one before: the re-sent orders counted the host as
    # contacted at the loss.  (Real time: only "never early" is asserted.)
    times = sorted(when for f in fetchers for when, url, _ in f.requests if url.startswith(A))
    assert len(times) >= 10
    assert min(b - a for a, b in itertools.pairwise(times)) >= delay * 0.999
