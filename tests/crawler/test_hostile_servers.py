"""Every fault mode of the fixture web on one crawl, plus never-ending responses and traps.

The crawl must complete with exactly one outcome per URL, retries within
``retry_attempts`` (counted in the database and on the server), Retry-After and
robots.txt obeyed (server-side audit), slow, dripping and endless responses cut by the
(small) timeouts, oversized bodies cut at the cap, redirect loops ended, and the
calendar trap bounded by the trap rules.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import sqlite3
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web as aioweb
from miniweb import MiniWeb, html, read_db
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.fixtures import FaultSpec, FixtureConfig, FixtureServer, FixtureWeb

pytestmark = pytest.mark.timeout(90)

FAULTS = ("5xx:0.02,429:0.01,503:0.01,slow:0.02,drip:0.02,reset:0.02,redirect:0.03,"
          "loop:0.02,oversize:0.02,ctype:0.02,nocharset:0.02,badcharset:0.02,"
          "malformed:0.03,trap@1,robots5xx@2,robots404@3")
RETRY_AFTER = 1.0
MAX_BODY = 100_000
TOTAL_TIMEOUT = 0.6
MAX_DEPTH = 8


class RecordingServer(FixtureServer):
    """A fixture server that also logs (host, path, start, end, status) per request."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.hits: list[tuple[str, str, float, float, int]] = []

    async def _handle(self, request: Any) -> Any:
        start, status = time.monotonic(), -1
        try:
            resp = await super()._handle(request)
            status = resp.status
            return resp
        finally:
            if not request.raw_path.startswith("/__fixture__/"):
                self.hits.append((request.host.split(":")[0], request.raw_path, start,
                                  time.monotonic(), status))


class EndlessServer:
    """``endless.test``: ``/fast`` streams forever at full speed, ``/slow`` trickles forever."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.port = 0
        self._runner: aioweb.AppRunner | None = None

    async def _handle(self, request: aioweb.Request) -> aioweb.StreamResponse:
        self.hits[request.path] += 1
        if request.path == "/":
            return aioweb.Response(text=html("/fast", "/slow"), content_type="text/html")
        if request.path not in ("/fast", "/slow"):
            return aioweb.Response(status=404)
        resp = aioweb.StreamResponse(headers={"Content-Type": "text/html"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        chunk = b"<p>" + b"x" * 8189
        try:
            while True:  # never ends: only the client's cap or timeout stops it
                await resp.write(chunk)
                await asyncio.sleep(0.05 if request.path == "/slow" else 0)
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        return resp

    async def __aenter__(self) -> EndlessServer:
        app = aioweb.Application()
        app.router.add_route("GET", "/{tail:.*}", self._handle)
        self._runner = aioweb.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = aioweb.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()


def hostile_settings(**kw: Any) -> CrawlSettings:
    base: dict[str, Any] = dict(
        resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",), concurrency=16,
        retry_attempts=3, retry_backoff=0.01, retry_jitter=0.0,
        fetch_total_timeout=TOTAL_TIMEOUT, fetch_read_timeout=0.3, fetch_connect_timeout=1.0,
        fetch_max_body=MAX_BODY, robots_retry_delay=0.1, robots_max_attempts=2)
    base.update(kw)
    return CrawlSettings.polite_off(**base)


@pytest.fixture
async def endless() -> AsyncIterator[EndlessServer]:
    async with EndlessServer() as server:
        yield server


@contextlib.asynccontextmanager
async def loop_lateness() -> AsyncIterator[list[tuple[float, float]]]:
    """``(wall time, seconds late)`` of the event loop waking a 10 ms sleep, sampled
    while the block runs: on a busy machine the loop waits for a core, and a timeout
    fires that much after its time (the servers and the crawl share this loop)."""
    late: list[tuple[float, float]] = []

    async def sample() -> None:
        loop = asyncio.get_running_loop()
        while True:
            t = loop.time()
            await asyncio.sleep(0.01)
            late.append((time.time(), loop.time() - t - 0.01))

    task = asyncio.create_task(sample())
    try:
        yield late
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def fetch_rows(db: Path) -> list[tuple[str, int, str, float, float, int | None, int]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT u.url, f.attempt, f.outcome, f.started_at, f.ended_at, f.size, u.depth"
            " FROM fetches f JOIN urls u ON u.id = f.url_id").fetchall()


async def test_every_fault_mode_on_one_crawl(tmp_path: Path, endless: EndlessServer) -> None:
    spec = FaultSpec.parse(FAULTS)
    spec = FaultSpec(fractions=spec.fractions, hosts=spec.hosts, retry_after=RETRY_AFTER,
                     slow_seconds=1.0, drip_seconds=2.0, oversize_bytes=300_000)
    web = FixtureWeb.build(FixtureConfig(pages=300, hosts=5, seed=3, faults=spec))
    settings = hostile_settings(scope_max_depth=MAX_DEPTH)
    db = tmp_path / "c.db"
    async with RecordingServer(web) as server:
        endless_seed = f"http://endless.test:{endless.port}/"
        t0 = time.monotonic()
        async with loop_lateness() as late:
            stats = await Crawler(db, [server.seed_url, endless_seed], settings).run()
        elapsed = time.monotonic() - t0
        report = server.audit(max_concurrency=1)
    assert stats.stopped == "done" and elapsed < 60
    data = read_db(db)
    outcomes = data["outcomes"]
    # Exactly one recorded outcome per URL (urls.url is unique), none left open.
    assert None not in outcomes.values() and len(outcomes) == len(data["urls"])

    # Politeness and robots.txt, audited by the server.
    violations = report["violations"]
    # site3's robots.txt is a 404 (allow all): its /private/ pages may be fetched.
    allowed_private = len(report["hosts"]["site3.test"]["disallowed_fetched"])
    assert violations["disallowed"] == allowed_private, report["hosts"]
    assert report["violation_count"] == allowed_private, violations
    assert report["hosts"]["site2.test"]["requests"] == settings.robots_max_attempts

    # Retries within bounds, in the database and on the wire.
    rows = fetch_rows(db)
    per_url = Counter(r[0] for r in rows)
    assert max(per_url.values()) <= settings.retry_attempts
    on_wire = Counter((h, p) for h, p, *_ in server.hits)
    for (host, path), n in on_wire.items():
        bound = settings.robots_max_attempts if path == "/robots.txt" else settings.retry_attempts
        assert n <= bound, (host, path, n)
    assert max(endless.hits.values()) <= settings.retry_attempts

    # Retry-After: after a 429/503 the host is left alone for the announced time.
    by_host: dict[str, list[tuple[float, float, int]]] = defaultdict(list)
    for host, _path, start, end, status in server.hits:
        by_host[host].append((start, end, status))
    waited = 0
    for hits in by_host.values():
        hits.sort()
        for (_, end, status), (nxt, _, _) in itertools.pairwise(hits):
            if status in (429, 503):
                assert nxt - end >= RETRY_AFTER - 0.02
                waited += 1
    assert waited >= 2

    pages = web.truth_pages(server.port)
    by_fault: dict[str, set[str]] = defaultdict(set)
    for i, p in enumerate(pages):
        if p.url in outcomes and web.host_of[i] != 2:
            by_fault[p.fault].add(outcomes[p.url])
    fixed = {"robots_excluded", "out_of_scope"}  # disallowed, or beyond the depth cap
    expect = {"5xx": "http_error", "429": "fetched", "503": "fetched", "slow": "timeout",
              "drip": "timeout", "reset": "network_error", "redirect": "redirect",
              "loop": "redirect", "oversize": "too_large", "ctype": "fetched",
              "nocharset": "fetched", "badcharset": "fetched", "malformed": "fetched",
              "trap": "fetched", "": "fetched"}
    for kind, outcome in expect.items():
        assert outcome in by_fault[kind] and by_fault[kind] <= {outcome} | fixed, kind
    # The robots5xx host: nothing but robots.txt was requested; its robots.txt stayed
    # unreachable (RFC 9309: disallow all), so its URLs were never requested.
    host2 = {p.url for i, p in enumerate(pages) if web.host_of[i] == 2 and p.url in outcomes}
    assert host2 and {outcomes[u] for u in host2} == {"robots_unreachable"}

    # Timeouts cut slow, dripping and endless responses (within the loop's own lateness
    # while the fetch ran: a busy machine's, not the crawler's); the cap cuts bodies.
    for url, _attempt, _outcome, started, ended, size, _depth in rows:
        waited = sum(lag for at, lag in late if started <= at <= ended + 0.02)
        assert ended - started <= TOTAL_TIMEOUT + 0.5 + waited, url
        assert size is None or size <= MAX_BODY
    assert outcomes[endless_seed + "slow"] == "timeout"
    assert outcomes[endless_seed + "fast"] == "too_large"
    fast_sizes = {size for url, *_, size, _d in rows if url == endless_seed + "fast"}
    assert fast_sizes == {MAX_BODY}

    # Redirect loops end: each loop URL is fetched once, within the hop limit.
    loop_urls = [u for u in outcomes if "/__loop/" in u]
    assert loop_urls and all(per_url[u] == 1 for u in loop_urls if u in per_url)

    # The calendar trap is bounded by the depth cap: months at distance <= depth.
    calendar = [r for r in rows if "/calendar/" in r[0]]
    assert calendar
    assert max(r[6] for r in rows) <= MAX_DEPTH
    assert len({r[0] for r in calendar}) <= 2 * MAX_DEPTH + 1


async def test_calendar_trap_bounded_by_max_per_host(tmp_path: Path) -> None:
    spec = FaultSpec.parse("trap@0")
    web = FixtureWeb.build(FixtureConfig(pages=30, hosts=1, seed=3, faults=spec))
    cap = 60
    async with RecordingServer(web) as server:
        stats = await Crawler(tmp_path / "c.db", [server.seed_url],
                              hostile_settings(scope_max_per_host=cap)).run()
    assert stats.stopped == "done"
    page_requests = [h for h in server.hits if h[1] != "/robots.txt"]
    calendar = [h for h in page_requests if h[1].startswith("/calendar/")]
    assert calendar and len(page_requests) <= cap


@pytest.mark.parametrize(("names_path", "hits"), [
    (True, ["/", "/x/", "/x/x/", "/x/x/x/"]),   # bounded by scope_max_path_repeat=3
    (False, ["/", "/x/"]),                      # /x/ repeats /'s body: its links unread
])
async def test_relative_link_trap_bounded_by_path_repeat(mini_web: MiniWeb, tmp_path: Path,
                                                         names_path: bool,
                                                         hits: list[str]) -> None:
    # Every folder links to 'x/' below itself: /x/, /x/x/, /x/x/x/ ... forever.  When each
    # folder's page names its path the scope rule ends the trap; when every page is the
    # same document the content-seen test ends it first.
    from miniweb import Page

    class Trap(dict[tuple[str, str], Any]):
        def get(self, key: Any, default: Any = None) -> Any:
            host, path = key
            if host == "site.test" and path.startswith("/") and path.endswith("/"):
                title = f"<title>{path}</title>" if names_path else ""
                return Page(body=html("x/", extra=title))
            return default

    mini_web.pages = Trap()
    settings = mini_web.settings(scope_max_path_repeat=3)
    stats = await Crawler(tmp_path / "c.db", [mini_web.url("site.test", "/")], settings).run()
    assert stats.stopped == "done"
    paths = [h.path for h in mini_web.page_hits()]
    assert paths == hits

