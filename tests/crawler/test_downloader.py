"""The downloader seam: :class:`LocalDownloader` over a web in memory, on virtual time.

Every order kind is answered as the contract says -- one host at a time in arrival
order, each request on the host's one politeness clock, retries and their waits,
failures classified with their cause -- with no socket and no real waiting: the
downloader's clock and sleep are a :class:`~fakeweb.FakeClock`.
"""

from __future__ import annotations

from typing import Any

import pytest
from fakeweb import FakeClock, FakeWeb, MockFetcher, Reply, no_address, page, read_timeout, refused
from webcrawl.crawler.downloader import DownloaderLink, LocalDownloader
from webcrawl.crawler.orders import (
    Attempt,
    FetchedAnswer,
    FetchFile,
    FetchPage,
    FetchRobots,
    FileDone,
    PageDone,
    RobotsDone,
    await_answer,
)
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.errors import ReusedConnectionLost
from webcrawl.storage.records import Outcome

A, B = "http://a.test", "http://b.test"


async def _open(web: FakeWeb, clock: FakeClock, *, failed: list[Any] | None = None,
                allowed: tuple[str, ...] = ("a.test", "b.test"),
                **settings: Any) -> tuple[LocalDownloader, MockFetcher]:
    base: dict[str, Any] = dict(polite_min_delay=1.0, polite_delay_factor=10.0,
                                retry_backoff=0.5, retry_jitter=0.0)
    base.update(settings)
    fetcher = MockFetcher(web, clock)
    downloader = LocalDownloader(CrawlSettings(**base), clock=clock, fetcher=fetcher)
    await downloader.open(DownloaderLink(
        sleep=clock.sleep, host_allowed=lambda host: host in allowed,
        on_failed=None if failed is None else (lambda order, a: failed.append((order, a)))))
    return downloader, fetcher


def _page(order: int, url: str, **kw: Any) -> FetchPage:
    return FetchPage(order, url, url.split("/")[2], 0.0, kw.pop("crawl_delay", 0.0), **kw)


async def test_a_hosts_orders_run_one_at_a_time_in_arrival_order_on_its_clock() -> None:
    web = FakeWeb()
    clock = FakeClock(1000.0)
    downloader, fetcher = await _open(web, clock)
    answers: list[tuple[int, float]] = []

    def done(answer: FetchedAnswer | BaseException) -> None:
        assert isinstance(answer, PageDone)
        answers.append((answer.order, clock()))

    for order, url in enumerate([f"{A}/1", f"{B}/1", f"{A}/2", f"{A}/3", f"{B}/2"]):
        downloader.submit(_page(order, url), done)
    while len(answers) < 5:
        await clock.sleep(0)
    await downloader.aclose()
    # Each host's requests one second apart (the floor: a request takes no virtual
    # time), in the order they arrived; the two hosts interleave.
    by_host: dict[str, list[tuple[float, str]]] = {}
    for when, url, _ in fetcher.requests:
        by_host.setdefault(url.split("/")[2], []).append((when, url))
    assert by_host["a.test"] == [(1000.0, f"{A}/1"), (1001.0, f"{A}/2"), (1002.0, f"{A}/3")]
    assert by_host["b.test"] == [(1000.0, f"{B}/1"), (1001.0, f"{B}/2")]
    assert fetcher.max_in_flight == 1
    assert downloader.ready_at("a.test") == 1003.0 and downloader.ready_at("c.test") == 0.0


async def test_retries_wait_for_retry_after_and_report_each_failed_attempt() -> None:
    web = FakeWeb()
    web.add(f"{A}/p", Reply(503, retry_after=7.0), Reply(429, retry_after=2.0), page("/q"))
    clock = FakeClock(0.0)
    failed: list[tuple[int, Attempt]] = []
    downloader, fetcher = await _open(web, clock, failed=failed)
    done = await await_answer(downloader.submit, _page(5, f"{A}/p"))
    await downloader.aclose()
    assert isinstance(done, PageDone)
    # Retry-After is honoured (above the backoff), and the next request of the host
    # waits for it too: it is part of the host's clock.
    assert [when for when, *_ in fetcher.requests] == [0.0, 7.0, 9.0]
    assert [a.status for a in done.failed] == [503, 429]
    assert all(a.outcome is Outcome.HTTP_ERROR and a.error == "HTTPStatusError"
               for a in done.failed)
    assert [(order, a.status) for order, a in failed] == [(5, 503), (5, 429)]  # as they happened
    assert done.result is not None and done.result.status == 200 and done.requests == 3
    assert done.links is not None and done.links.urls == [f"{A}/q"]
    assert done.ready_in == pytest.approx(1.0)


@pytest.mark.parametrize(("error", "outcome", "cause"), [
    (refused(), Outcome.NETWORK_ERROR, "NetworkError: connection refused"),
    (no_address(), Outcome.NETWORK_ERROR, "NetworkError: no address"),
    (read_timeout(), Outcome.TIMEOUT, "FetchTimeoutError: read timeout"),
], ids=["refused", "no-address", "timeout"])
async def test_a_failed_request_is_classified_with_its_cause(error: Exception, outcome: Outcome,
                                                              cause: str) -> None:
    web = FakeWeb()
    web.add(f"{A}/p", error)
    clock = FakeClock(0.0)
    downloader, fetcher = await _open(web, clock, retry_attempts=3)
    done = await await_answer(downloader.submit, _page(1, f"{A}/p"))
    await downloader.aclose()
    assert isinstance(done, PageDone) and done.result is None and done.links is None
    assert [(a.outcome, a.error) for a in done.failed] == [(outcome, cause)] * 3
    # Backoff 0.5 then 1.0, but never sooner than the host's 1 s politeness floor.
    assert [when for when, *_ in fetcher.requests] == [0.0, 1.0, 2.0]


def _lost() -> ReusedConnectionLost:
    return ReusedConnectionLost("connection reset before any response fetching "
                                "http://a.test/p")


async def test_a_request_lost_on_a_reused_connection_waits_for_the_hosts_next_slot() -> None:
    """The server may have read it: it goes again after the host's politeness wait
    (counted from the lost request), never at once, and within the same attempt -- no
    failed attempt, no retry backoff, and the host's next order waits behind it."""
    web = FakeWeb()
    web.add(f"{A}/p", _lost(), page("/q"))
    clock = FakeClock(0.0)
    failed: list[tuple[int, Attempt]] = []
    downloader, fetcher = await _open(web, clock, failed=failed, polite_min_delay=3.0)
    done = await await_answer(downloader.submit, _page(1, f"{A}/p"))
    await await_answer(downloader.submit, _page(2, f"{A}/r"))
    await downloader.aclose()
    assert isinstance(done, PageDone) and done.failed == () and failed == []
    assert done.result is not None and done.result.status == 200 and done.requests == 1
    assert done.links is not None and done.links.urls == [f"{A}/q"]
    assert [(when, url) for when, url, _ in fetcher.requests] == [
        (0.0, f"{A}/p"), (3.0, f"{A}/p"), (6.0, f"{A}/r")]


async def test_a_request_lost_twice_is_one_failed_attempt_then_retried() -> None:
    """Put back once per attempt: lost again, the attempt fails as a network error and
    the retry policy takes over (its backoff, never sooner than the host's slot)."""
    web = FakeWeb()
    web.add(f"{A}/p", _lost(), _lost(), page())
    clock = FakeClock(0.0)
    downloader, fetcher = await _open(web, clock, retry_attempts=2)
    done = await await_answer(downloader.submit, _page(1, f"{A}/p"))
    await downloader.aclose()
    assert isinstance(done, PageDone) and done.result is not None
    assert [(a.outcome, a.error) for a in done.failed] == [
        (Outcome.NETWORK_ERROR, "ReusedConnectionLost: connection reset before any response")]
    assert [when for when, *_ in fetcher.requests] == [0.0, 1.0, 2.0]


async def test_robots_order_follows_redirects_within_scope_only() -> None:
    web = FakeWeb()
    web.add(f"{A}/robots.txt", Reply(301, location=f"{B}/robots.txt"))
    web.add(f"{B}/robots.txt", Reply(200, "User-agent: *\nDisallow: /x\n", "text/plain"))
    web.add("http://c.test/robots.txt", Reply(302, location="http://elsewhere.example/r"))
    web.add("http://d.test/robots.txt", refused())
    clock = FakeClock(0.0)
    downloader, _ = await _open(web, clock, allowed=("a.test", "b.test", "c.test", "d.test"))
    got = {}
    for n, host in enumerate(["a.test", "c.test", "d.test"]):
        done = await await_answer(downloader.submit, FetchRobots(
            -1 - n, f"http://{host}/robots.txt", host, 0.0))
        assert isinstance(done, RobotsDone)
        got[host] = (done.status, done.body, done.requests, done.error)
    await downloader.aclose()
    assert got["a.test"] == (200, "User-agent: *\nDisallow: /x\n", 2, None)
    assert got["c.test"][:3] == (None, None, 1)
    assert got["c.test"][3] == "redirect out of scope to http://elsewhere.example/r"
    assert got["d.test"] == (None, None, 0, "connection refused")


async def test_a_file_order_is_one_capped_request_on_the_hosts_clock() -> None:
    web = FakeWeb()
    web.add(f"{A}/sitemap.xml", Reply(200, b"x" * 100, "application/xml"))
    web.add(f"{A}/busy.xml", Reply(503, b"busy", "text/plain"))
    web.add(f"{A}/gone.xml", refused())
    clock = FakeClock(0.0)
    downloader, fetcher = await _open(web, clock)
    answers = []
    for n, path in enumerate(["/sitemap.xml", "/busy.xml", "/gone.xml"]):
        done = await await_answer(downloader.submit, FetchFile(
            -2 - n, f"{A}{path}", "a.test", 0.0, 0.0, max_body=64))
        assert isinstance(done, FileDone)
        answers.append((done.status, len(done.body), done.requests, done.error))
    await downloader.aclose()
    assert answers == [(200, 64, 1, None), (503, 4, 1, None), (None, 0, 1, "connection refused")]
    assert [when for when, *_ in fetcher.requests] == [0.0, 1.0, 2.0]  # never retried


async def test_a_crawl_delay_told_after_robots_counts_from_that_request() -> None:
    web = FakeWeb()
    web.add(f"{A}/robots.txt", Reply(200, "User-agent: *\nCrawl-delay: 5\n", "text/plain"))
    clock = FakeClock(0.0)
    downloader, fetcher = await _open(web, clock)
    robots = await await_answer(downloader.submit, FetchRobots(-1, f"{A}/robots.txt",
                                                               "a.test", 0.0))
    assert isinstance(robots, RobotsDone) and robots.ready_in == pytest.approx(1.0)
    downloader.set_crawl_delay("a.test", 5.0)  # what the orderer parsed
    assert downloader.ready_at("a.test") == 5.0
    await await_answer(downloader.submit, _page(1, f"{A}/p", crawl_delay=5.0))
    # A new value with an order counts before that order's request, from the last one,
    # clamped to polite_max_crawl_delay (60 s).
    await await_answer(downloader.submit, _page(2, f"{A}/q", crawl_delay=500.0))
    await downloader.aclose()
    assert [when for when, *_ in fetcher.requests] == [0.0, 5.0, 65.0]
    assert downloader.ready_at("a.test") == 125.0


async def test_contacts_unknown_make_each_host_wait_before_its_first_request() -> None:
    web = FakeWeb()
    clock = FakeClock(50.0)
    downloader, fetcher = await _open(web, clock, polite_min_delay=2.0)
    downloader.contacts_unknown()  # a resume: the last contacts were not recorded
    await await_answer(downloader.submit, _page(1, f"{A}/p", crawl_delay=3.0))
    await await_answer(downloader.submit, _page(2, f"{B}/p"))
    await downloader.aclose()
    assert [(when, url) for when, url, _ in fetcher.requests] == [(53.0, f"{A}/p"),
                                                                   (53.0, f"{B}/p")]


async def test_an_orders_wait_is_a_floor_for_its_host() -> None:
    """A worker started again learns its host's last contact from the order's wait."""
    web = FakeWeb()
    clock = FakeClock(0.0)
    downloader, fetcher = await _open(web, clock)
    await await_answer(downloader.submit, FetchPage(1, f"{A}/p", "a.test", 4.0, 0.0))
    await downloader.aclose()
    assert [when for when, *_ in fetcher.requests] == [4.0]


async def test_keep_body_hands_the_response_back_unparsed() -> None:
    web = FakeWeb()
    web.add(f"{A}/p", Reply(200, page("/x").body, etag='"v1"'))
    clock = FakeClock(0.0)
    downloader, fetcher = await _open(web, clock)
    done = await await_answer(downloader.submit, _page(
        1, f"{A}/p", attempts=1, keep_body=True))
    again = await await_answer(downloader.submit, _page(
        1, f"{A}/p", etag='"v1"', attempts=1, keep_body=True))
    await downloader.aclose()
    assert isinstance(done, PageDone) and done.links is None
    assert done.response is not None and b'href="/x"' in done.response.body
    assert isinstance(again, PageDone) and again.result is not None
    assert again.result.status == 304 and fetcher.requests[1][2] == '"v1"'


@pytest.mark.parametrize(("reply", "links"), [
    (page("/a", "b"), ["http://a.test/a", "http://a.test/b"]),
    (Reply(404, page("/a").body), None),
    (Reply(200, "<a href='/a'>", "text/plain"), None),
    (Reply(301, location="/elsewhere"), None),
], ids=["html", "404", "not-html", "redirect"])
async def test_links_are_extracted_for_2xx_html_only(reply: Reply, links: list[str] | None) -> None:
    web = FakeWeb()
    web.add(f"{A}/", reply)
    clock = FakeClock(0.0)
    downloader, _ = await _open(web, clock)
    done = await await_answer(downloader.submit, _page(1, f"{A}/"))
    await downloader.aclose()
    assert isinstance(done, PageDone)
    assert (done.links.urls if done.links is not None else None) == links
