"""The crawl engine driven through its downloader seam, over a web in memory: no socket.

The engine decides, the downloader fetches: with a :class:`~fakeweb.MockFetcher` under
the crawl's own :class:`~webcrawl.crawler.downloader.LocalDownloader`, every outcome,
retry, wait and resume is checked against the fake web's script, including the one
politeness clock per host per process.
"""

from __future__ import annotations

import io
import itertools
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from fakeweb import (
    A,
    B,
    C,
    FakeWeb,
    MockFetcher,
    Reply,
    every_outcome_web,
    fake_downloader,
    fast_settings,
    page,
    refused,
)
from miniweb import read_db
from webcrawl.crawler import politeness
from webcrawl.crawler.engine import Crawler, CrawlStats
from webcrawl.storage.export import export_pages


def _settings(**kw: Any) -> Any:
    base: dict[str, Any] = dict(scope_hosts=("*.test",), fetch_max_body=1000,
                                retry_attempts=2, robots_max_attempts=2)
    base.update(kw)
    if base.get("polite_min_delay"):
        base["polite_max_delay"] = 30.0
    return fast_settings(**base)


async def _crawl(tmp_path: Path, web: FakeWeb, **kw: Any) -> tuple[CrawlStats, MockFetcher]:
    fetchers: list[MockFetcher] = []
    stats = await Crawler(tmp_path / "c.db", [f"{A}/"], _settings(**kw),
                          downloader=fake_downloader(web, fetchers)).run()
    return stats, fetchers[0]


async def test_every_outcome_and_attempt_is_recorded(tmp_path: Path) -> None:
    web = every_outcome_web()
    stats, fetcher = await _crawl(tmp_path, web)
    data = read_db(tmp_path / "c.db")
    outcome = {url.split(".test")[1] if url.startswith(A) else url: o
               for url, o in data["outcomes"].items()}
    assert outcome == {
        "/": "fetched", "/ok": "fetched", "/missing": "http_error", "/moved": "redirect",
        "/ok2": "fetched", "/data": "not_html", "/big": "too_large", "/down": "network_error",
        "/slow": "timeout", "/flaky": "fetched", "/doc.pdf": "out_of_scope",
        f"{B}/": "robots_unreachable", f"{C}/": "robots_excluded"}
    rows = {(url.split(".test")[1], attempt): (o, err) for url, _seq, o, _st, attempt, _p, _r, err
            in data["fetches"] if url.startswith(A)}
    assert rows[("/down", 1)] == rows[("/down", 2)] == (
        "network_error", "NetworkError: connection refused")
    assert rows[("/slow", 2)] == ("timeout", "FetchTimeoutError: read timeout")
    assert rows[("/flaky", 1)] == ("http_error", "HTTPStatusError")
    assert rows[("/flaky", 2)] == ("fetched", None)
    assert (A + "/ok", A + "/") in data["edges"] and (A + "/moved", A + "/ok2") in data["edges"]
    # Every request made is counted, but for robots.txt fetches that got no answer
    # (b.test's two refused attempts).
    assert stats.requests == len(fetcher.requests) - 2
    assert stats.retries == 3
    assert stats.unreachable == {"b.test": "connection refused"}
    assert stats.failed_seeds == {}
    assert fetcher.max_in_flight == 1


async def test_a_dead_host_is_named_in_the_page_export(tmp_path: Path) -> None:
    await _crawl(tmp_path, every_outcome_web())
    out = io.StringIO()
    export_pages(tmp_path / "c.db", out, "jsonl")
    import json

    rows = {r["url"]: r for r in map(json.loads, out.getvalue().splitlines())}
    assert rows[f"{B}/"]["outcome"] == "robots_unreachable"
    assert rows[f"{B}/"]["error"] == "connection refused"
    assert rows[f"{C}/"]["error"] is None
    with sqlite3.connect(tmp_path / "c.db") as conn:
        meta = dict(conn.execute("SELECT key, value FROM meta WHERE key LIKE 'robots_%'"))
    assert meta == {"robots_unreachable:b.test": "connection refused"}


async def test_a_failed_seed_is_named_with_its_cause(tmp_path: Path) -> None:
    web = FakeWeb()
    web.add(f"{A}/", refused(f"{A}/"))
    stats, _ = await _crawl(tmp_path, web)
    assert stats.failed_seeds == {f"{A}/": "connection refused"}
    assert stats.outcomes == {"network_error": 1}


async def test_waits_are_never_shorter_than_the_hosts_clock(tmp_path: Path) -> None:
    """Real time, so only what always holds is asserted: no request early."""
    web = FakeWeb()
    web.add(f"{A}/", page(*(f"/p{i}" for i in range(6)), "/busy"))
    web.add(f"{A}/busy", Reply(429, retry_after=0.3), page())
    for i in range(6):
        web.add(f"{A}/p{i}", page())
    stats, fetcher = await _crawl(tmp_path, web, polite_min_delay=0.02, retry_attempts=3)
    times = [when for when, *_ in fetcher.requests]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(times) == 10 and min(gaps) >= 0.02  # robots.txt, 8 pages, 1 retry
    busy = [when for when, url, _ in fetcher.requests if url.endswith("/busy")]
    assert busy[1] - busy[0] >= 0.3
    assert stats.outcomes["fetched"] == 8


async def test_a_stopped_crawl_resumes_to_the_uninterrupted_crawls_result(tmp_path: Path) -> None:
    whole_dir, part_dir = tmp_path / "whole", tmp_path / "part"
    whole_dir.mkdir()
    part_dir.mkdir()
    await _crawl(whole_dir, every_outcome_web())
    web = every_outcome_web()
    requests: list[str] = []
    crawler: Crawler | None = None

    def stop_at_the_fifth(url: str) -> None:
        requests.append(url)
        if len(requests) == 5 and crawler is not None:
            crawler.stop()

    web.on_request = stop_at_the_fifth
    crawler = Crawler(part_dir / "c.db", [f"{A}/"], _settings(),
                      downloader=fake_downloader(web))
    first = await crawler.run()
    assert first.stopped == "stopped"
    web.on_request = requests.append
    resumed = await Crawler(part_dir / "c.db", resume=True,
                            downloader=fake_downloader(web)).run()
    assert resumed.stopped == "done"
    whole, part = read_db(whole_dir / "c.db"), read_db(part_dir / "c.db")
    assert part["outcomes"] == whole["outcomes"] and part["edges"] == whole["edges"]
    # The request in flight at the stop was answered (and recorded) in the grace
    # period: no page was asked for twice (robots.txt is asked again, being unknown).
    pages = [u for u in requests if not u.endswith("/robots.txt")]
    assert sorted(pages) == sorted(u for _t, u, _e in _whole_requests(whole_dir)
                                   if not u.endswith("/robots.txt"))


def _whole_requests(folder: Path) -> list[tuple[float, str, None]]:
    with sqlite3.connect(folder / "c.db") as conn:
        return [(0.0, url, None) for (url,) in conn.execute(
            "SELECT u.url FROM fetches f JOIN urls u ON u.id = f.url_id")]


async def test_one_politeness_clock_per_host_per_process(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[object] = []
    real = politeness.HostSlots.__init__

    def counting(self: politeness.HostSlots, *args: Any, **kw: Any) -> None:
        made.append(self)
        real(self, *args, **kw)

    monkeypatch.setattr(politeness.HostSlots, "__init__", counting)
    web = FakeWeb()
    web.add(f"{A}/", page(f"{B}/", "/x"))
    web.add(f"{A}/x", page())
    web.add(f"{B}/", page())
    stats, _ = await _crawl(tmp_path, web, polite_min_delay=0.01)
    assert stats.outcomes["fetched"] == 3
    assert len(made) == 1  # the downloader's; the engine asks it


async def test_a_wait_is_asked_of_the_downloader(tmp_path: Path) -> None:
    """The frontier releases a host at the time the downloader's clock gives."""
    web = FakeWeb()
    web.add(f"{A}/robots.txt", Reply(200, "User-agent: *\nCrawl-delay: 0.2\n", "text/plain"))
    web.add(f"{A}/", page("/x"))
    web.add(f"{A}/x", page())
    t0 = time.monotonic()
    stats, fetcher = await _crawl(tmp_path, web)
    times = [when for when, *_ in fetcher.requests]
    assert [url.split(".test")[1] for _, url, _ in fetcher.requests] == ["/robots.txt", "/", "/x"]
    assert times[1] - times[0] >= 0.2 and times[2] - times[1] >= 0.2
    assert stats.outcomes["fetched"] == 2 and times[0] >= t0
