"""Fetch orders and answers: the messages of the downloader seam survive the trip to a
worker process unchanged (pickle, as the shard transports send them), and the
callback-to-coroutine adapter answers once."""

from __future__ import annotations

import asyncio
import pickle
from dataclasses import fields

import numpy as np
import pytest
from webcrawl.crawler import orders
from webcrawl.crawler.links import PageLinks
from webcrawl.storage.records import Outcome

FAILED = orders.Attempt(1.0, 1.5, Outcome.HTTP_ERROR, 503, "HTTPStatusError", "text/html",
                        10, "d" * 32, '"e"', "Mon, 01 Jan 2024 00:00:00 GMT", None, False,
                        True, 2.0)
OK = orders.Attempt(2.0, 2.25, None, 200, None, "text/html", 99, "f" * 32, is_html=True)
LINKS = PageLinks(urls=["http://a.test/x", "http://b.test/"], nofollow={"http://b.test/"},
                  meta_nofollow=True, meta_noindex=False, cut=3)

MESSAGES: list[orders.FetchOrder | orders.FetchedAnswer] = [
    orders.FetchPage(7, "http://a.test/p", "a.test", 0.25, 2.0, '"e"', "a date", 1, False),
    orders.FetchRobots(-1, "http://a.test/robots.txt", "a.test", 0.0),
    orders.FetchFile(-2, "http://a.test/sitemap.xml", "a.test", 1.5, 0.0, 1024),
    orders.PageDone(7, (FAILED,), OK, LINKS, 0.75),
    orders.PageDone(8, (FAILED, FAILED), None, None, -0.5),
    orders.RobotsDone(-1, None, None, 0.1, 1.0, 0, "connection refused"),
    orders.FileDone(-2, 200, b"<urlset/>", 0.01, 1.0, 1),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: type(m).__name__)
def test_every_message_pickles_to_an_equal_one(
        message: orders.FetchOrder | orders.FetchedAnswer) -> None:
    assert pickle.loads(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)) == message


def test_every_field_of_a_pages_links_travels() -> None:
    """Each field of :class:`PageLinks` set apart from its default comes back in its
    own field (they travel as a tuple of field values)."""
    sketch = np.arange(5, dtype=np.uint64) * 7
    links = PageLinks(urls=["http://a.test/1", "http://a.test/2"],
                      nofollow={"http://a.test/2"}, meta_nofollow=True, meta_noindex=True,
                      cut=4, sketch=sketch, text="the page's words",
                      html="<p>the page's words</p>")
    back = pickle.loads(pickle.dumps(orders.PageDone(3, (), OK, links, 0.5)))
    assert back.links is not None and back.links.sketch is not None
    assert np.array_equal(back.links.sketch, sketch)
    assert {f.name: getattr(back.links, f.name) for f in fields(PageLinks)
            if f.name != "sketch"} == {
        "urls": ["http://a.test/1", "http://a.test/2"], "nofollow": {"http://a.test/2"},
        "meta_nofollow": True, "meta_noindex": True, "cut": 4, "text": "the page's words",
        "html": "<p>the page's words</p>"}


def test_a_kept_response_never_travels() -> None:
    done = orders.PageDone(1, (), OK, None, 0.0, response=object())  # type: ignore[arg-type]
    back = pickle.loads(pickle.dumps(done))
    assert back.response is None and back.result == OK


def test_requests_count_every_attempt_on_the_wire() -> None:
    assert orders.PageDone(1, (FAILED, FAILED), OK, None, 0.0).requests == 3
    assert orders.PageDone(1, (FAILED,), None, None, 0.0).requests == 1


async def test_await_answer_takes_the_first_answer_only() -> None:
    callbacks: list[orders.OnDone] = []

    def submit(order: int, on_done: orders.OnDone) -> None:
        callbacks.append(on_done)

    first = orders.RobotsDone(-1, 200, "", 0.0, 0.0, 1)
    task = asyncio.ensure_future(orders.await_answer(submit, -1))
    await asyncio.sleep(0)
    callbacks[0](first)
    callbacks[0](orders.RobotsDone(-1, 500, None, 0.0, 0.0, 1))  # a late second answer: ignored
    assert await task is first


async def test_await_answer_raises_the_error_that_ended_the_order() -> None:
    def submit(order: int, on_done: orders.OnDone) -> None:
        asyncio.get_running_loop().call_soon(on_done, RuntimeError("worker lost"))

    with pytest.raises(RuntimeError, match="worker lost"):
        await orders.await_answer(submit, 1)
