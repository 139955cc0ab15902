"""A web in memory for the downloader seam: requests answered with no socket (httpx's
``MockTransport`` habit).

:class:`MockFetcher` is a :class:`~webcrawl.crawler.fetcher.FetchTransport`.  Given to a
:class:`~webcrawl.crawler.downloader.LocalDownloader` (``fetcher=``), it answers every GET
from a :class:`FakeWeb` (URL -> :class:`Reply`, a list of replies served in turn, or an
exception to raise), so the real downloader -- its politeness clocks, retries, outcome
rule and link extraction -- and everything above it (the crawl engine, the revisit
loop, the shard coordinator) run without a server.  Every request is recorded with the
clock time it started, so tests audit politeness exactly.

:class:`FakeClock` is virtual time for the downloader alone: its ``sleep`` advances the
clock, so politeness waits take no real time and their lengths are exact.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from webcrawl.crawler.downloader import LocalDownloader
from webcrawl.crawler.fetcher import FetchResult
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.errors import FetchTimeoutError, NetworkError


@dataclass
class Reply:
    """One HTTP answer of the fake web."""

    status: int = 200
    body: bytes | str = b""
    content_type: str = "text/html"
    charset: str | None = None
    location: str | None = None
    retry_after: float | None = None
    etag: str | None = None
    last_modified: str | None = None


def page(*links: str, extra: str = "") -> Reply:
    """An HTML page linking to ``links``."""
    anchors = "".join(f'<a href="{href}">x</a>' for href in links)
    return Reply(body=f"<!doctype html><html><head>{extra}</head><body>{anchors}</body></html>")


def refused(url: str = "http://x.test/") -> NetworkError:
    """The transport's error for a refused connection (an OS error as its cause)."""
    return _chained(ConnectionRefusedError(111, "Connection refused"), url)


def no_address(url: str = "http://x.test/") -> NetworkError:
    return _chained(socket.gaierror(socket.EAI_NONAME, "Name or service not known"), url)


def tls_failure(url: str = "http://x.test/") -> NetworkError:
    error = ssl.SSLCertVerificationError(1, "certificate verify failed")
    error.verify_message = "unable to get local issuer certificate"
    return _chained(error, url)


def _chained(cause: OSError, url: str) -> NetworkError:
    try:
        raise NetworkError(f"{type(cause).__name__} fetching {url}: {cause}") from cause
    except NetworkError as error:
        return error


def read_timeout(url: str = "http://x.test/") -> FetchTimeoutError:
    return FetchTimeoutError(f"read timeout fetching {url}")


Answer = Reply | BaseException

A, B, C = "http://a.test", "http://b.test", "http://c.test"


@dataclass
class FakeWeb:
    """URL -> answer; a list is served in turn (its last answer repeats); unknown URLs
    answer 404 (robots.txt too: allow all)."""

    answers: dict[str, Answer | list[Answer]] = field(default_factory=dict)
    #: called with each URL as it is requested (a test may stop a crawl there)
    on_request: Callable[[str], None] | None = None
    served: dict[str, int] = field(default_factory=dict)

    def add(self, url: str, *answers: Answer) -> None:
        self.answers[url] = list(answers) if len(answers) > 1 else answers[0]

    def __call__(self, url: str) -> Answer:
        if self.on_request is not None:
            self.on_request(url)
        n = self.served[url] = self.served.get(url, 0) + 1
        found = self.answers.get(url)
        if found is None:
            return Reply(404, "not found", "text/plain")
        if isinstance(found, list):
            return found[min(n, len(found)) - 1]
        return found


class MockFetcher:
    """A :class:`~webcrawl.crawler.fetcher.FetchTransport` answering from ``handler``
    (a :class:`FakeWeb` or any ``url -> Reply | exception``) on ``clock``."""

    def __init__(self, handler: Callable[[str], Answer],
                 clock: Callable[[], float] = time.monotonic, *,
                 max_body: int = 5 * 1024 * 1024) -> None:
        self.handler = handler
        self.clock = clock
        self.max_body = max_body  # the settings' fetch_max_body, as a Fetcher has it
        #: (clock time, URL, If-None-Match) of every request, in the order made
        self.requests: list[tuple[float, str, str | None]] = []
        self.open = False
        self.in_flight: dict[str, int] = {}
        self.max_in_flight = 0

    async def __aenter__(self) -> MockFetcher:
        self.open = True
        return self

    async def aclose(self) -> None:
        self.open = False

    def urls(self) -> list[str]:
        return [url for _, url, _ in self.requests]

    async def fetch(self, url: str, *, etag: str | None = None,
                    last_modified: str | None = None,
                    max_body: int | None = None) -> FetchResult:
        assert self.open, "fetch outside the transport's lifetime"
        host = url.split("/")[2]
        self.in_flight[host] = self.in_flight.get(host, 0) + 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight[host])
        self.requests.append((self.clock(), url, etag))
        wall, mono = time.time(), time.monotonic()
        try:
            await asyncio.sleep(0)  # an answer never arrives in the turn it was asked
            answer = self.handler(url)
        finally:
            self.in_flight[host] -= 1
        if isinstance(answer, BaseException):
            raise answer
        body = answer.body.encode() if isinstance(answer.body, str) else answer.body
        cap = self.max_body if max_body is None else max_body
        if etag is not None and etag == answer.etag:
            return _result(url, Reply(304, b"", "", etag=etag), b"", False, wall, mono)
        return _result(url, answer, body[:cap], len(body) > cap, wall, mono)


def _result(url: str, r: Reply, body: bytes, too_large: bool, wall: float,
            mono: float) -> FetchResult:
    end = time.monotonic()
    return FetchResult(
        url=url, status=r.status, content_type=r.content_type, charset=r.charset, body=body,
        too_large=too_large, location=r.location if 300 <= r.status < 400 else None,
        etag=r.etag, last_modified=r.last_modified,
        retry_after=r.retry_after if r.status in (429, 503) else None, started_at=wall,
        ended_at=wall + (end - mono), elapsed=end - mono, ended_mono=end)


def every_outcome_web() -> FakeWeb:
    """One page of every outcome on a.test; b.test's robots.txt refuses connections;
    c.test disallows everything."""
    web = FakeWeb()
    web.add(f"{A}/", page("/ok", "/missing", "/moved", "/data", "/big", "/down", "/slow",
                          "/flaky", f"{B}/", f"{C}/", "/doc.pdf"))
    web.add(f"{A}/ok", page("/"))
    web.add(f"{A}/missing", Reply(404, "gone", "text/plain"))
    web.add(f"{A}/moved", Reply(301, location="/ok2"))
    web.add(f"{A}/ok2", page())
    web.add(f"{A}/data", Reply(200, "{}", "application/json"))
    web.add(f"{A}/big", Reply(200, "<html>" + "x" * 5000))
    web.add(f"{A}/down", refused(f"{A}/down"))
    web.add(f"{A}/slow", read_timeout(f"{A}/slow"))
    web.add(f"{A}/flaky", Reply(503), page("/ok"))
    web.add(f"{B}/robots.txt", refused(f"{B}/robots.txt"))
    web.add(f"{B}/", page())
    web.add(f"{C}/robots.txt", Reply(200, "User-agent: *\nDisallow: /\n", "text/plain"))
    web.add(f"{C}/", page())
    return web


class FakeClock:
    """Virtual seconds: :meth:`sleep` advances them (give it as the link's ``sleep``)."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.slept.append(seconds)
            self.now += seconds
        await asyncio.sleep(0)


def fake_downloader(web: Callable[[str], Answer], fetchers: list[MockFetcher] | None = None
                    ) -> Callable[[CrawlSettings, Sequence[str]], LocalDownloader]:
    """A crawl's downloader factory (``Crawler(downloader=...)``) fetching from ``web``;
    each fetcher made is appended to ``fetchers``."""
    def make(settings: CrawlSettings, seeds: Sequence[str] = ()) -> LocalDownloader:
        fetcher = MockFetcher(web, max_body=settings.fetch_max_body)
        if fetchers is not None:
            fetchers.append(fetcher)
        return LocalDownloader(settings, fetcher=fetcher)

    return make


def fast_settings(**overrides: Any) -> CrawlSettings:
    """Zero politeness delays and quick retries (one request per host still holds)."""
    base: dict[str, Any] = dict(retry_backoff=0.0, retry_jitter=0.0, robots_retry_delay=0.0)
    base.update(overrides)
    return CrawlSettings.polite_off(**base)
