"""Rate-limited hosts must not starve the others (issue 19).

A host waiting for a retry, a ``Retry-After`` or a Crawl-delay parks without a fetch
slot (``Crawler._wait``); the dispatcher resumes it when its time has come.  Checked on
the server's request log (one monotonic clock shared with the crawler): the healthy
host is fetched as soon as politeness allows while two hosts sit out a 600 s
Retry-After under ``concurrency=2``, no more than ``concurrency`` requests are ever in
flight, and a parked host is resumed and honoured.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest
from miniweb import Hit, MiniWeb, Page, html, read_db
from webcrawl.crawler.engine import Crawler
from webcrawl.storage.records import Outcome

pytestmark = pytest.mark.timeout(90)

DELAY = 0.2          # the healthy host's politeness wait (min = max delay)
PAGES = 8


def max_overlap(hits: list[Hit]) -> int:
    """Most requests in flight at once on the server."""
    events = sorted([(h.start, 1) for h in hits] + [(h.end, -1) for h in hits],
                    key=lambda e: (e[0], e[1]))
    level = top = 0
    for _, step in events:
        level += step
        top = max(top, level)
    return top


async def test_two_429_hosts_do_not_starve_a_healthy_one(mini_web: MiniWeb,
                                                          tmp_path: Path) -> None:
    w = mini_web
    for host in ("r1.test", "r2.test"):
        w.add(host, "/", Page(body="slow down", status=429, headers={"Retry-After": "600"}))
    w.add("h.test", "/", html(*(f"/{i}" for i in range(PAGES))))
    for i in range(PAGES):
        w.add("h.test", f"/{i}", html())
    seeds = [w.url("r1.test"), w.url("r2.test"), w.url("h.test")]
    crawler = Crawler(tmp_path / "c.db", seeds, w.settings(
        concurrency=2, polite_min_delay=DELAY, polite_max_delay=DELAY))
    run = asyncio.create_task(crawler.run())
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60  # far below the 600 s Retry-After
    while crawler.stats.outcomes[Outcome.FETCHED] < PAGES + 1 and loop.time() < deadline:
        await asyncio.sleep(0.05)
    crawler.stop()
    await run

    data = read_db(tmp_path / "c.db")
    healthy = [w.url("h.test", "/")] + [w.url("h.test", f"/{i}") for i in range(PAGES)]
    assert all(data["outcomes"][u] == "fetched" for u in healthy), data["outcomes"]
    # both rate-limited hosts were asked once and are still sitting out their 600 s
    for host in ("r1.test", "r2.test"):
        assert [h.path for h in w.hits if h.host == host and h.path == "/"] == ["/"]
        assert data["outcomes"][w.url(host)] is None
    # every healthy request starts no earlier than its politeness time and within a
    # second after it (the previous request's end + DELAY, server clock)
    h_hits = sorted((h for h in w.hits if h.host == "h.test"), key=lambda h: h.start)
    assert len(h_hits) == PAGES + 2  # robots.txt and the nine pages
    for before, after in itertools.pairwise(h_hits):
        lateness = after.start - (before.end + DELAY)
        assert 0.0 <= lateness < 1.0, (before, after, lateness)
    assert max_overlap(w.hits) <= 2


async def test_parked_host_is_resumed_after_retry_after(mini_web: MiniWeb,
                                                        tmp_path: Path) -> None:
    w = mini_web
    w.add("r.test", "/", Page(body=html(), fail_first=1, fail_status=429,
                              headers={"Retry-After": "1"}))
    w.add("h.test", "/", html(*(f"/{i}" for i in range(4))))
    for i in range(4):
        w.add("h.test", f"/{i}", html())
    seeds = [w.url("r.test"), w.url("h.test")]
    await Crawler(tmp_path / "c.db", seeds,
                  w.settings(concurrency=1)).run()
    data = read_db(tmp_path / "c.db")
    assert set(data["outcomes"].values()) == {"fetched"}
    r_hits = [h for h in w.hits if h.host == "r.test" and h.path == "/"]
    assert [h.status for h in r_hits] == [429, 200]
    assert r_hits[1].start - r_hits[0].end >= 1.0  # Retry-After honoured
    # while r.test was parked, h.test used the only slot (its pages came in between)
    between = [h for h in w.hits if h.host == "h.test"
               and r_hits[0].end <= h.start <= r_hits[1].start]
    assert len(between) >= 1
    assert max_overlap(w.hits) <= 1
