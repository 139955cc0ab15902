"""The shard protocol: the messages between the crawl coordinator and its workers.

Every message is a plain frozen dataclass of builtins (and one
:class:`~webcrawl.crawler.settings.CrawlSettings`), so any transport that pickles can carry it:
pipes to child processes (:mod:`webcrawl.crawler.shard.transport`) or Ray actors.  Messages
travel in batches: one ``list[WorkerOrder]`` per send to a worker, one ``list[WorkerDone]`` per
send back.  The full contract (roles, exactness after a kill) is in the package
docstring (:mod:`webcrawl.crawler.shard`).

Coordinator to worker: :class:`StartWorker` (first), then batches of :class:`FetchPage` and
:class:`FetchRobots`; :class:`StopWorker` ends the worker.  Worker to coordinator: batches
of :class:`PageDone` and :class:`RobotsDone`, each naming the ``order`` it answers.

The messages sent once per page (:class:`FetchPage`, :class:`PageDone` and its
:class:`Attempt`) pickle as plain tuples (``__reduce__``): a slotted dataclass's default
pickling looks its fields up on every message.

Times crossing the boundary are *relative* (``wait``, ``ready_in``: seconds from the
moment the message is handled) or wall clock (``Attempt.started_at``), never
``time.monotonic()`` values, so coordinator and workers need not share a clock.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from webcrawl.crawler.links import PageLinks
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.records import Outcome

__all__ = [
    "Attempt",
    "FetchPage",
    "FetchRobots",
    "OnDone",
    "PageDone",
    "RobotsDone",
    "StartWorker",
    "StopWorker",
    "WorkerDone",
    "WorkerOrder",
    "await_answer",
    "shard_of",
]


def shard_of(host: str, workers: int) -> int:
    """The worker owning ``host`` (``host[:port]``): a stable hash, as in Mercator/BUbiNG.

    CRC-32 rather than :func:`hash`, which is salted per process.
    """
    return zlib.crc32(host.encode()) % workers


@dataclass(frozen=True, slots=True)
class StartWorker:
    """The first message to a worker: who it is and how to crawl."""

    worker: int
    workers: int
    settings: CrawlSettings
    seeds: tuple[str, ...]
    #: incarnation of this worker (0 first; a restart after a loss counts up)
    generation: int = 0


@dataclass(frozen=True, slots=True)
class FetchPage:
    """Fetch one page (with the retry policy) and extract its links."""

    order: int
    url: str
    host: str
    #: seconds to wait at least before contacting the host (the coordinator's view)
    wait: float
    #: the host's robots.txt Crawl-delay, already clamped (0: none)
    crawl_delay: float

    def __reduce__(self) -> tuple[Any, ...]:
        return FetchPage, (self.order, self.url, self.host, self.wait, self.crawl_delay)


@dataclass(frozen=True, slots=True)
class FetchRobots:
    """Fetch a host's robots.txt (redirects followed within scope)."""

    order: int
    url: str
    host: str
    wait: float


@dataclass(frozen=True, slots=True)
class StopWorker:
    """End the worker once the orders in flight are answered or dropped."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """One HTTP request for a page: its response's metadata, or its transport error."""

    started_at: float            # wall clock
    ended_at: float
    #: the outcome of a failed attempt (None for the response that ends the URL)
    outcome: Outcome | None = None
    #: HTTP status; None when the request failed (``error`` names the exception)
    status: int | None = None
    error: str | None = None
    content_type: str = ""
    size: int = 0
    digest: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    location: str | None = None
    too_large: bool = False
    is_html: bool = False
    retry_after: float | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        return Attempt, (self.started_at, self.ended_at, self.outcome, self.status,
                         self.error, self.content_type, self.size, self.digest, self.etag,
                         self.last_modified, self.location, self.too_large, self.is_html,
                         self.retry_after)


@dataclass(frozen=True, slots=True)
class PageDone:
    """The answer to :class:`FetchPage`."""

    order: int
    #: the attempts that failed and were retried or gave up, in order (each gets a row)
    failed: tuple[Attempt, ...]
    #: the response that ends the URL; None when the retry loop ended with an error
    result: Attempt | None
    #: the page's links (:func:`webcrawl.crawler.links.extract_links`) when ``result`` is a
    #: 2xx HTML page within the size cap
    links: PageLinks | None
    #: seconds from now before the host may be contacted again
    ready_in: float

    def __reduce__(self) -> tuple[Any, ...]:
        links = self.links
        values = None if links is None else tuple(getattr(links, f) for f in _LINK_FIELDS)
        return _page_done, (self.order, self.failed, self.result, values, self.ready_in)


_LINK_FIELDS = tuple(f.name for f in fields(PageLinks))


def _page_done(order: int, failed: tuple[Attempt, ...], result: Attempt | None,
               links: tuple[Any, ...] | None, ready_in: float) -> PageDone:
    """Unpickle a :class:`PageDone` (its links travel as a tuple of field values)."""
    page = None if links is None else PageLinks(**dict(zip(_LINK_FIELDS, links, strict=True)))
    return PageDone(order, failed, result, page, ready_in)


@dataclass(frozen=True, slots=True)
class RobotsDone:
    """The answer to :class:`FetchRobots` (``status`` None: unreachable)."""

    order: int
    status: int | None
    body: str | None
    #: seconds the whole fetch took (redirects included)
    elapsed: float
    ready_in: float
    requests: int


WorkerOrder = StartWorker | FetchPage | FetchRobots | StopWorker
WorkerDone = PageDone | RobotsDone


#: What a worker or the pool calls with an order's answer (or the error that ended it).
OnDone = Callable[[WorkerDone | BaseException], None]

_Order = TypeVar("_Order")


async def await_answer(submit: Callable[[_Order, OnDone], None], order: _Order) -> WorkerDone:
    """``submit(order, on_done)`` as a coroutine: the answer to ``order``, once.

    The callback form is the fast path (no future per page); this adapter serves the
    callers that await one order at a time (the Ray actor, robots.txt fetches).
    """
    fut: asyncio.Future[WorkerDone] = asyncio.get_running_loop().create_future()

    def done(result: WorkerDone | BaseException) -> None:
        if fut.done():
            return
        if isinstance(result, BaseException):
            fut.set_exception(result)
        else:
            fut.set_result(result)

    submit(order, done)
    return await fut
