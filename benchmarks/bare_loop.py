"""The yardstick: a bare crawl loop with nothing but aiohttp + selectolax + batched sqlite3.

One worker per host (one connection per host, no delay), ``<a href>`` links resolved with
``urljoin`` against the page or its ``<base href>`` and fragments cut, a global seen-set,
rows written to sqlite3 in batches of 1000.  It does the least it must to fetch the same
pages as ``webcrawl crawl`` on the fixture web, so that pages per second compare the same
work: each host's robots.txt read with the standard library's parser, the crawl's skipped
(binary) extensions not fetched, and the two spellings the fixture writes (an upper-case
host, a needless percent-escape of an unreserved character) folded.  No further
normalisation, no scope rules beyond "host is in the list", no retries, no politeness
clock, no progress: what a crawler costs at minimum.  ``bench_crawl.py`` checks that both
fetched the same URLs.

Run: ``python benchmarks/bare_loop.py SEED_URL... --db /tmp/bare.db --resolve-all 127.0.0.1``
(prints one JSON line: pages, seconds, pages_per_second).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import socket
import sqlite3
import time
from collections import deque
from urllib.parse import urldefrag, urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from selectolax.lexbor import LexborHTMLParser
from webcrawl.crawler.settings import CrawlSettings

#: the extensions the crawl records as ``out_of_scope`` without fetching them
SKIP_EXTENSIONS = CrawlSettings().scope_skip_extensions
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _unescape(match: re.Match[str]) -> str:
    char = chr(int(match.group(1), 16))
    return char if char in _UNRESERVED else match.group(0)


def fold(url: str, netloc: str) -> str:
    """``url`` with its host lower-cased and needless escapes decoded (the fixture's forms)."""
    if netloc != netloc.lower():
        scheme, _, rest = url.partition("://")
        url = f"{scheme}://{netloc.lower()}{rest[len(netloc):]}"
    return _ESCAPE.sub(_unescape, url) if "%" in url else url


def skipped(url: str) -> bool:
    return url.split("?", 1)[0].lower().endswith(SKIP_EXTENSIONS)


class FixedResolver(AbstractResolver):
    """Every host resolves to one address (the local mirror)."""

    def __init__(self, addr: str) -> None:
        self.addr = addr

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        return [ResolveResult(hostname=host, host=self.addr, port=port, family=socket.AF_INET,
                              proto=0, flags=socket.AI_NUMERICHOST)]

    async def close(self) -> None:
        pass


async def bare_crawl(seeds: list[str], db: str, addr: str, max_pages: int | None = None) -> dict:
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE IF NOT EXISTS pages (url TEXT PRIMARY KEY, status INT)")
    conn.execute("CREATE TABLE IF NOT EXISTS links (src TEXT, dst BLOB)")
    hosts = {urlsplit(s).netloc for s in seeds}
    queues: dict[str, deque[str]] = {h: deque() for h in hosts}
    seen: set[str] = set()
    for s in seeds:
        seen.add(s)
        queues[urlsplit(s).netloc].append(s)
    rows: list[tuple[str, int]] = []
    links: list[tuple[str, str]] = []
    state = {"busy": 0, "pages": 0}
    wake = asyncio.Event()
    robots: dict[str, RobotFileParser] = {}

    def flush() -> None:
        conn.executemany("INSERT OR REPLACE INTO pages VALUES (?, ?)", rows)
        conn.executemany("INSERT INTO links VALUES (?, ?)", links)
        conn.commit()
        rows.clear()
        links.clear()

    async def read_robots(host: str, session: aiohttp.ClientSession) -> None:
        rules = robots[host] = RobotFileParser()
        try:
            async with session.get(f"http://{host}/robots.txt", allow_redirects=False) as resp:
                text = await resp.text() if resp.status == 200 else ""
        except (aiohttp.ClientError, TimeoutError):
            text = ""
        rules.parse(text.splitlines())
        q = queues[host]
        queues[host] = deque(u for u in q if rules.can_fetch("*", u))

    async def worker(host: str, session: aiohttp.ClientSession) -> None:
        await read_robots(host, session)
        q = queues[host]
        while True:
            if not q:
                if state["busy"] == 0 and not any(queues.values()):
                    wake.set()
                    return
                wake.clear()
                await wake.wait()
                continue
            if max_pages is not None and state["pages"] >= max_pages:
                wake.set()
                return
            url = q.popleft()
            state["busy"] += 1
            try:
                async with session.get(url, allow_redirects=False) as resp:
                    body = await resp.read()
                    status = resp.status
                    ctype = resp.headers.get("Content-Type", "")
            except (aiohttp.ClientError, TimeoutError):
                status, body, ctype = 0, b"", ""
            state["pages"] += 1
            rows.append((url, status))
            if status == 200 and "html" in ctype:
                out = []
                tree = LexborHTMLParser(body.decode("utf-8", "replace"))
                base_node = tree.css_first("base[href]")
                base = urljoin(url, base_node.attributes.get("href") or "") if base_node else url
                for node in tree.css("a[href]"):
                    href = node.attributes.get("href")
                    if not href:
                        continue
                    target = urldefrag(urljoin(base, href))[0]
                    netloc = urlsplit(target).netloc
                    target = fold(target, netloc)
                    out.append(target)
                    if target not in seen:
                        seen.add(target)
                        netloc = netloc.lower()
                        rules = robots.get(netloc)
                        if (netloc in queues and not skipped(target)
                                and (rules is None or rules.can_fetch("*", target))):
                            queues[netloc].append(target)
                links.append((url, "\n".join(out)))
            if len(rows) >= 1000:
                flush()
            state["busy"] -= 1
            wake.set()

    connector = aiohttp.TCPConnector(limit=0, limit_per_host=1, resolver=FixedResolver(addr))
    t0 = time.monotonic()
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(worker(h, session) for h in hosts))
    flush()
    elapsed = time.monotonic() - t0
    conn.close()
    return {"pages": state["pages"], "seconds": round(elapsed, 3),
            "pages_per_second": round(state["pages"] / elapsed, 1)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("seeds", nargs="+")
    p.add_argument("--db", required=True)
    p.add_argument("--resolve-all", default="127.0.0.1")
    p.add_argument("--max-pages", type=int, default=None)
    a = p.parse_args()
    print(json.dumps(asyncio.run(bare_crawl(a.seeds, a.db, a.resolve_all, a.max_pages))))


if __name__ == "__main__":
    main()
