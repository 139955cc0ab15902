"""Test helpers: crawl a fixture web, write a WARC of it with warcio, read databases back."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import io
import random
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.urls import normalize_url
from webcrawl.fixtures import FaultSpec, FixtureConfig, FixtureWeb


def fixture_web(pages: int = 120, hosts: int = 4, seed: int = 11) -> FixtureWeb:
    """A multi-host site with redirects, transient 503s, non-HTML pages and nofollow."""
    faults = FaultSpec(fractions=(("503", 0.04), ("redirect", 0.05), ("ctype", 0.04)),
                       transient_failures=1, retry_after=0.0, redirect_chain=2)
    return FixtureWeb.build(FixtureConfig(pages=pages, hosts=hosts, seed=seed, faults=faults,
                                          nofollow_fraction=0.05))


def crawl_settings(**kw: Any) -> CrawlSettings:
    return CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",),
                                    concurrency=8, retry_backoff=0.01, retry_jitter=0.0, **kw)


def crawl(db: Path, seed_url: str, **kw: Any) -> None:
    asyncio.run(Crawler(db, [seed_url], crawl_settings(**kw)).run())


def fetched_urls(db: Path) -> list[str]:
    """Every fetch attempt's URL, in the order the crawl recorded them."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return [u for (u,) in conn.execute(
            "SELECT u.url FROM fetches f JOIN urls u ON u.id = f.url_id ORDER BY f.id")]


def write_warc(path: Path, port: int, urls: Iterable[str], *, gzip: bool = True) -> int:
    """GET each URL from the loopback server with http.client (not our fetcher) and
    write its response with warcio: an independent WARC of the same requests."""
    count = 0
    with open(path, "wb") as out:
        writer = WARCWriter(out, gzip=gzip)
        for url in urls:
            parts = urlsplit(url)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            target = parts.path + (f"?{parts.query}" if parts.query else "")
            conn.request("GET", target, headers={"Host": parts.netloc})
            resp = conn.getresponse()
            body = resp.read()
            conn.close()
            # http.client removed any chunking: the record says what its payload is.
            headers = [(k, v) for k, v in resp.getheaders()
                       if k.lower() not in ("transfer-encoding", "content-length")]
            headers.append(("Content-Length", str(len(body))))
            http_headers = StatusAndHeaders(f"{resp.status} {resp.reason}", headers,
                                            protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(
                url, "response", payload=io.BytesIO(body), length=len(body),
                http_headers=http_headers))
            count += 1
    return count


def crawl_view(db: Path, port_map: tuple[str, str] | None = None) -> dict[str, Any]:
    """What must survive crawl -> WARC -> import: fetches, outcomes, links, URLs
    (``port_map``: replace one port in every URL by another)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        url = dict(conn.execute("SELECT id, url FROM urls"))
        if port_map is not None:
            url = {i: u.replace(*port_map, 1) for i, u in url.items()}
        fetches = [(url[u], a, s, o) for u, a, s, o in conn.execute(
            "SELECT url_id, attempt, status, outcome FROM fetches WHERE kind = 'crawl'"
            " ORDER BY id")]
        # Outcomes of the URLs requested (a WARC does not say which were robots-excluded).
        outcomes = {url[i]: o for i, o in conn.execute(
            "SELECT id, outcome FROM urls WHERE id IN (SELECT url_id FROM fetches)")}
        links = {}
        from webcrawl.storage._sqlite import decode_ids

        for src, dst, nofollow in conn.execute("SELECT src, dst, nofollow FROM links"):
            links[url[src]] = ([url[d] for d in decode_ids(dst)],
                               sorted(url[d] for d in decode_ids(nofollow)))
    return {"fetches": fetches, "outcomes": outcomes, "links": links,
            "urls": set(url.values())}


class _Forward(BaseHTTPRequestHandler):
    """A forward HTTP proxy to the loopback fixture server (for wget's absolute-form
    requests to the *.test hosts, which do not resolve).  It forwards the normalised
    URL: wget requests the percent-escaped spellings the fixture writes on purpose
    ('/a0/%7032.html') as they are, and the fixture server serves canonical paths only."""

    port = 0
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        parts = urlsplit(normalize_url(self.path) or self.path)
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("proxy-connection", "connection", "host")}
        headers["Host"] = parts.netloc
        conn.request("GET", target or "/", headers=headers)
        resp = conn.getresponse()
        body = resp.read()
        conn.close()
        self.send_response(resp.status, resp.reason)
        for key, value in resp.getheaders():
            if key.lower() not in ("transfer-encoding", "connection", "content-length",
                                   "date", "server"):
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def forward_proxy(port: int) -> Iterator[int]:
    """Run :class:`_Forward` to ``127.0.0.1:port`` in a thread; yields the proxy's port."""
    with serve_http(type("Forward", (_Forward,), {"port": port})) as proxy:
        yield proxy


@contextlib.contextmanager
def serve_http(handler: Callable[..., BaseHTTPRequestHandler]) -> Iterator[int]:
    """Serve ``handler`` on a free loopback port in a thread; yields the port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


#: Records of :func:`write_synthetic_warc`; records 0, 100, 200, ... carry a 100 KB page.
N = 1100
BIG_EVERY = 100


@dataclass(frozen=True)
class Warc:
    path: Path
    urls: list[str]      # record i's URL
    offsets: list[int]   # record i's first byte (its gzip member's)
    size: int


def _page(i: int, rnd: random.Random, words: list[str]) -> bytes:
    count = 14000 if i % BIG_EVERY == 0 else 150
    text = " ".join(rnd.choice(words) for _ in range(count))
    links = "".join(f'<a href="/p{(i * 7 + k) % N}">l</a>' for k in range(3))
    return f"<html><body><p>{i} {text}</p>{links}</body></html>".encode()


def write_synthetic_warc(path: Path, *, gz: bool) -> Warc:
    """``N`` response records of HTML pages on 5 hosts (every ``BIG_EVERY``-th page
    100 KB, the others 1-2 KB), the same each time."""
    rnd = random.Random(7)
    words = ["".join(rnd.choice("abcdefghijklmnop") for _ in range(rnd.randint(3, 9)))
             for _ in range(500)]
    urls, offsets = [], []
    with open(path, "wb") as out:
        writer = WARCWriter(out, gzip=gz)
        for i in range(N):
            body = _page(i, rnd, words)
            url = f"http://h{i % 5}.test/p{i}"
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")],
                                       protocol="HTTP/1.1")
            offsets.append(out.tell())
            urls.append(url)
            writer.write_record(writer.create_warc_record(
                url, "response", payload=io.BytesIO(body), length=len(body),
                http_headers=headers))
    return Warc(path, urls, offsets, path.stat().st_size)
