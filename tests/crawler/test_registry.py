"""The crawl's URL and host tables (crawler.registry) and its task group (crawler.tasks)."""

from __future__ import annotations

import asyncio

import pytest
from webcrawl.crawler.registry import CrawlRegistry, _host_keys
from webcrawl.crawler.tasks import FetchTasks
from webcrawl.crawler.urls import host_key
from webcrawl.storage.store import HostRow, UrlRow


def test_ids_are_dense_in_discovery_order_and_hosts_are_shared() -> None:
    reg = CrawlRegistry()
    a = reg.add("https://a.test/", 0)
    b = reg.add("http://b.test:8080/x", 1)
    c = reg.add("https://a.test/y", 2)
    assert (a.url_id, b.url_id, c.url_id) == (0, 1, 2)
    assert (a.host_id, b.host_id, c.host_id) == (0, 1, 0)
    assert (a.new_host, b.new_host, c.new_host) == (True, True, False)
    assert b.hostport == "b.test:8080"
    assert len(reg) == 3 and reg.host_count == 2
    assert reg.id_of("https://a.test/y") == 2 and reg.id_of("https://a.test/z") is None
    assert "http://b.test:8080/x" in reg
    assert [reg.url(i) for i in range(3)] == ["https://a.test/", "http://b.test:8080/x",
                                              "https://a.test/y"]
    assert [reg.depth(i) for i in range(3)] == [0, 1, 2]
    assert [reg.host_of(i) for i in range(3)] == [0, 1, 0]
    # The host keeps the scheme of its first URL.
    assert reg.robots_url(0) == "https://a.test/robots.txt"
    assert reg.origin(1) == "http://b.test:8080"
    assert list(reg.host_names()) == ["a.test", "b.test:8080"]
    assert reg.host_name(1) == "b.test:8080" and reg.host_id("b.test:8080") == 1


def test_redirect_hops() -> None:
    reg = CrawlRegistry()
    reg.add("http://a.test/", 0)
    reg.add("http://a.test/r", 0)
    assert reg.hops(1) == 0
    reg.set_hops(1, 3)
    assert reg.hops(1) == 3 and reg.hops(0) == 0


def test_load_rebuilds_the_tables_of_a_stored_crawl() -> None:
    live = CrawlRegistry()
    urls = ["https://a.test/", "http://b.test/", "https://a.test/p", "http://b.test/q"]
    rows = [live.add(u, d) for d, u in enumerate(urls)]
    loaded = CrawlRegistry()
    loaded.load([HostRow(1, "b.test"), HostRow(0, "a.test")],
                [UrlRow(r.url_id, u, r.host_id, d, -1) for d, (u, r) in
                 enumerate(zip(urls, rows, strict=True))])
    for i, url in enumerate(urls):
        assert loaded.id_of(url) == i
        assert (loaded.url(i), loaded.depth(i), loaded.host_of(i)) == (
            live.url(i), live.depth(i), live.host_of(i))
    assert [loaded.robots_url(h) for h in (0, 1)] == [live.robots_url(h) for h in (0, 1)]
    # New URLs continue the stored ids.
    nxt = loaded.add("http://c.test/", 1)
    assert (nxt.url_id, nxt.host_id, nxt.new_host) == (4, 2, True)


def test_load_refuses_gaps_and_a_used_registry() -> None:
    with pytest.raises(ValueError, match="dense"):
        CrawlRegistry().load([HostRow(0, "a.test")], [UrlRow(1, "http://a.test/", 0, 0, -1)])
    with pytest.raises(ValueError, match="dense"):
        CrawlRegistry().load([HostRow(1, "a.test")], [])
    reg = CrawlRegistry()
    reg.add("http://a.test/", 0)
    with pytest.raises(RuntimeError):
        reg.load([], [])


async def test_task_group_wakes_the_loop_and_stops_on_the_first_escaping_error() -> None:
    tasks = FetchTasks()
    done: list[int] = []

    async def ok(n: int) -> None:
        await asyncio.sleep(0)
        done.append(n)

    async def broken() -> None:
        raise OSError("disk full")

    tasks.spawn(ok(1))
    assert len(tasks) == 1
    await tasks.wait()  # woken by the task's end
    assert done == [1] and len(tasks) == 0 and not tasks.stopping
    tasks.spawn(broken())
    tasks.spawn(broken())
    await tasks.wait()
    while len(tasks):
        await tasks.wait()
    assert tasks.stopping and isinstance(tasks.fatal, OSError)


async def test_task_group_wait_until_a_deadline_and_cancel() -> None:
    tasks = FetchTasks()
    await tasks.wait(until=0.0)  # a deadline in the past: returns at once
    never = asyncio.Event()

    async def forever() -> None:
        await never.wait()

    tasks.spawn(forever())
    tasks.wake()
    await tasks.wait()  # woken by wake(), not by the task
    assert len(tasks) == 1
    await tasks.cancel()
    assert len(tasks) == 0 and tasks.fatal is None


@pytest.mark.parametrize("urls", [
    ["http://a.test/x", "https://b.test:8443", "http://[::1]:8080/p//q", "http://c.test/"],
    ["http://a.test/x", "mailto:a/b//c"],   # first "/" not a "//": one at a time
    ["http://a.test/x", "urn:x"],           # no "/" at all
    ["http://a.test/x", "a:/"],
    [],
], ids=["urls", "late-slashes", "no-slash", "one-slash", "none"])
def test_host_keys_of_a_batch_are_host_key(urls: list[str]) -> None:
    want = []
    for url in urls:
        try:
            want.append(host_key(url))
        except ValueError:
            with pytest.raises(ValueError):
                _host_keys(urls)
            return
    assert _host_keys(urls) == want
