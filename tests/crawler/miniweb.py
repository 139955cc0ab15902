"""A tiny multi-host aiohttp web for crawler tests (one server, virtual hosts by Host header).

Every request is logged with its monotonic start and end, so tests can audit politeness
(one request in flight per host, gaps between requests, robots.txt first).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from webcrawl.crawler.settings import CrawlSettings


@dataclass
class Page:
    body: bytes | str = b""
    status: int = 200
    content_type: str | None = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    fail_first: int = 0              # answer fail_status this many times first
    fail_status: int = 500
    reset: bool = False              # close the connection without an answer
    chunked: bool = False            # no Content-Length
    etag: str | None = None          # answer 304 to a matching If-None-Match


@dataclass
class Hit:
    host: str
    path: str
    start: float
    end: float
    status: int
    raw: str = ""                    # the request target as sent (escapes undecoded)


def html(*links: str, extra: str = "") -> str:
    anchors = "".join(f'<a href="{href}">x</a>' for href in links)
    return f"<!doctype html><html><head>{extra}</head><body>{anchors}</body></html>"


class MiniWeb:
    """Pages keyed by (host, path-with-query); unknown paths are 404 (robots.txt too)."""

    def __init__(self) -> None:
        self.pages: dict[tuple[str, str], Page] = {}
        self.hits: list[Hit] = []
        self.port = 0
        self._runner: web.AppRunner | None = None
        self._served: dict[tuple[str, str], int] = {}
        self.in_flight: dict[str, int] = {}
        self.max_in_flight: dict[str, int] = {}
        self.headers: list[dict[str, str]] = []

    def add(self, host: str, path: str, page: Page | str) -> None:
        self.pages[(host, path)] = page if isinstance(page, Page) else Page(body=page)

    def url(self, host: str, path: str = "/") -> str:
        return f"http://{host}:{self.port}{path}"

    def settings(self, **overrides: Any) -> CrawlSettings:
        base: dict[str, Any] = dict(resolve=("*.test=127.0.0.1",), retry_backoff=0.01,
                                    retry_jitter=0.0, fetch_total_timeout=2.0,
                                    fetch_read_timeout=1.0)
        base.update(overrides)
        return CrawlSettings.polite_off(**base)

    def page_hits(self, host: str | None = None) -> list[Hit]:
        return [h for h in self.hits
                if h.path != "/robots.txt" and (host is None or h.host == host)]

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        host = request.host.split(":")[0]
        key = (host, request.path_qs)
        start = time.monotonic()
        self.in_flight[host] = self.in_flight.get(host, 0) + 1
        self.max_in_flight[host] = max(self.max_in_flight.get(host, 0), self.in_flight[host])
        status = 0
        try:
            page = self.pages.get(key)
            if page is None:
                status = 404
                return web.Response(status=404, text="not found")
            self.headers.append(dict(request.headers))
            if page.delay:
                await asyncio.sleep(page.delay)
            if page.etag and request.headers.get("If-None-Match") == page.etag:
                status = 304
                return web.Response(status=304, headers={"ETag": page.etag})
            served = self._served[key] = self._served.get(key, 0) + 1
            if served <= page.fail_first:
                status = page.fail_status
                return web.Response(status=page.fail_status, headers=page.headers)
            if page.reset:
                assert request.transport is not None
                request.transport.close()
                status = -1
                return web.Response()  # written to a closed transport: dropped
            body = page.body.encode() if isinstance(page.body, str) else page.body
            status = page.status
            headers = dict(page.headers)
            if page.etag:
                headers["ETag"] = page.etag
            if page.content_type:
                headers["Content-Type"] = page.content_type
            if page.chunked:
                resp = web.StreamResponse(status=page.status, headers=headers)
                resp.enable_chunked_encoding()
                await resp.prepare(request)
                for i in range(0, len(body), 8192):
                    await resp.write(body[i:i + 8192])
                await resp.write_eof()
                return resp
            return web.Response(status=page.status, body=body, headers=headers)
        finally:
            self.in_flight[host] -= 1
            self.hits.append(Hit(host, request.path_qs, start, time.monotonic(), status,
                                 request.raw_path))

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


def read_db(path: Any) -> dict[str, Any]:
    """Outcomes, fetch rows and the edge set (URL pairs) of a crawl database."""
    import sqlite3

    from webcrawl.storage._sqlite import decode_ids

    conn = sqlite3.connect(path)
    try:
        urls = dict(conn.execute("SELECT id, url FROM urls"))
        outcomes = {urls[i]: o for i, o in conn.execute("SELECT id, outcome FROM urls")}
        fetches = conn.execute(
            "SELECT u.url, f.seq, f.outcome, f.status, f.attempt, f.priority, f.rank, f.error"
            " FROM fetches f JOIN urls u ON u.id = f.url_id ORDER BY f.seq, f.attempt").fetchall()
        edges = set()
        for src, blob in conn.execute("SELECT src, dst FROM links"):
            for dst in decode_ids(blob):
                edges.add((urls[src], urls[int(dst)]))
        hosts = conn.execute("SELECT name, robots_status FROM hosts").fetchall()
    finally:
        conn.close()
    return {"urls": urls, "outcomes": outcomes, "fetches": fetches, "edges": edges,
            "hosts": hosts}


Runner = Callable[..., Any]
