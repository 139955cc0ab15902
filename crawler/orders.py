"""Fetch orders and their answers: what the crawl hands a downloader, and what comes back.

The code that decides *what* to fetch (the crawl engine, the revisit loop) hands
orders to a downloader (:mod:`webcrawl.crawler.downloader`), which *fetches*, retries and
classifies; the answer says what happened, attempt by attempt.  The same messages
cross a process boundary in a sharded crawl (:mod:`webcrawl.crawler.shard`), so every one
is a plain frozen dataclass of builtins that pickles; those sent once per page
(:class:`FetchPage`, :class:`PageDone` and its :class:`Attempt`) pickle as plain tuples
(``__reduce__``): a slotted dataclass's default pickling looks its fields up on every
message.

Times crossing the boundary are *relative* (``wait``, ``ready_in``: seconds from the
moment the message is handled) or wall clock (``Attempt.started_at``), never
``time.monotonic()`` values, so the two sides need not share a clock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar

from webcrawl.crawler.links import PageLinks
from webcrawl.storage.records import Outcome

if TYPE_CHECKING:
    from webcrawl.crawler.fetcher import FetchResult

__all__ = [
    "Attempt",
    "FetchFile",
    "FetchOrder",
    "FetchPage",
    "FetchRobots",
    "FetchedAnswer",
    "FileDone",
    "OnDone",
    "PageDone",
    "RobotsDone",
    "await_answer",
]


@dataclass(frozen=True, slots=True)
class FetchPage:
    """Fetch one page (with the retry policy) and extract its links."""

    order: int
    url: str
    host: str
    #: seconds to wait at least before contacting the host: what the sender knows of
    #: the host's clock that the receiver may not (a worker process started again)
    wait: float
    #: the host's robots.txt Crawl-delay (0: none; the downloader clamps it)
    crawl_delay: float
    #: conditional GET (a revisit): ``If-None-Match`` and ``If-Modified-Since``
    etag: str | None = None
    last_modified: str | None = None
    #: attempts at most (0: the settings' ``retry_attempts``; a revisit asks 1)
    attempts: int = 0
    #: hand the whole response back in :attr:`PageDone.response` (in process only), at
    #: once: the caller parses the body itself (no link extraction, no extra event-loop
    #: turn between the response and its answer, so nothing can stop in between)
    keep_body: bool = False

    def __reduce__(self) -> tuple[Any, ...]:
        return FetchPage, (self.order, self.url, self.host, self.wait, self.crawl_delay,
                           self.etag, self.last_modified, self.attempts, self.keep_body)


@dataclass(frozen=True, slots=True)
class FetchRobots:
    """Fetch a host's robots.txt (redirects followed within scope)."""

    order: int
    url: str
    host: str
    wait: float


@dataclass(frozen=True, slots=True)
class FetchFile:
    """Fetch one file whole, once, and hand its body back (a sitemap): no retry, no
    redirect followed, the body capped at ``max_body`` bytes (decoded)."""

    order: int
    url: str
    host: str
    wait: float
    crawl_delay: float
    max_body: int


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
    #: the whole response, body included, when the order asked for it (never pickled:
    #: it stays in the process that fetched)
    response: FetchResult | None = None

    @property
    def requests(self) -> int:
        """HTTP requests the order cost (every attempt that reached the wire)."""
        return len(self.failed) + (self.result is not None)

    def __reduce__(self) -> tuple[Any, ...]:
        links = self.links
        values = None if links is None else _link_values(links)
        return _page_done, (self.order, self.failed, self.result, values, self.ready_in)


#: a :class:`PageLinks`' field values in the order of its fields (one C call)
_link_values = attrgetter(*(f.name for f in fields(PageLinks)))


def _page_done(order: int, failed: tuple[Attempt, ...], result: Attempt | None,
               links: tuple[Any, ...] | None, ready_in: float) -> PageDone:
    """Unpickle a :class:`PageDone` (its links travel as a tuple of field values,
    in the order of :class:`PageLinks`' fields)."""
    page = None if links is None else PageLinks(*links)
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
    #: why the file is unreachable (:func:`webcrawl.crawler.outcomes.error_cause`), when
    #: it is for a failed request ("connection refused", "no address", "TLS: ...")
    error: str | None = None


@dataclass(frozen=True, slots=True)
class FileDone:
    """The answer to :class:`FetchFile` (``status`` None: the request failed, ``error``
    says why)."""

    order: int
    status: int | None
    body: bytes
    elapsed: float
    ready_in: float
    requests: int
    error: str | None = None
    #: the server's Date header, verbatim (a sitemap's lastmod is read against it)
    date: str | None = None


FetchOrder = FetchPage | FetchRobots | FetchFile
FetchedAnswer = PageDone | RobotsDone | FileDone

#: What a downloader calls with an order's answer (or the error that ended it).
OnDone = Callable[[FetchedAnswer | BaseException], None]

_Order = TypeVar("_Order")


async def await_answer(submit: Callable[[_Order, OnDone], None], order: _Order
                       ) -> FetchedAnswer:
    """``submit(order, on_done)`` as a coroutine: the answer to ``order``, once.

    The callback form is the fast path (no future per page); this adapter serves the
    callers that await one order at a time (robots.txt fetches, revisits, Ray actors).
    """
    fut: asyncio.Future[FetchedAnswer] = asyncio.get_running_loop().create_future()

    def done(result: FetchedAnswer | BaseException) -> None:
        if fut.done():
            return
        if isinstance(result, BaseException):
            fut.set_exception(result)
        else:
            fut.set_result(result)

    submit(order, done)
    return await fut
