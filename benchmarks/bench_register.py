"""The crawl's registration of a page's links, replayed: CPU per page outside the crawl.

A crawl registers each fetched page's links in one call
(:meth:`webcrawl.crawler.engine.discovery.Discovery.register_many`: the URL-seen test,
the registry's tables, the scope and trap rules, the ``urls`` rows and the frontier's
admission).  Inside a crawl that call is a small part of a noisy whole; replayed alone,
its cost per page is measured to a few percent.

The script serves the static site of ``bench_crawl.py`` with nginx, crawls it once in
this process (one worker, zero delay) recording every ``register_many`` call, then
replays the calls ``--replays`` times, each in a fresh process on a fresh crawl state,
and prints the CPU microseconds per call and digests of what the replay produced: the
ids returned, the ``urls`` and ``hosts`` rows and the order the frontier then gives
each host's URLs.  Two trees give the same digests if they register the same way.

Usage: ``python benchmarks/bench_register.py [--pages 20000] [--hosts 20] [--replays 5]``;
``--calls FILE`` keeps (or, if it exists, reuses) the recorded calls, so that another
tree can replay the same ones: ``python /other/tree/benchmarks/bench_register.py
--calls FILE``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import pickle
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_crawl import seeds, start_server

Call = tuple[list[str], int, int, list[bool]]


def _settings() -> Any:
    from webcrawl.crawler.settings import CrawlSettings

    return CrawlSettings(resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",),
                         polite_delay_factor=0.0, polite_min_delay=0.0,
                         polite_max_delay=0.0)


def record(args: argparse.Namespace, work: Path) -> tuple[list[str], list[Call]]:
    """Crawl the site once, in this process; every ``register_many`` call's arguments."""
    from webcrawl.crawler.engine import Crawler
    from webcrawl.crawler.engine.discovery import Discovery

    server, port, _ = start_server(args, work)
    calls: list[Call] = []
    original = Discovery.register_many

    def recording(self: Discovery, urls: Any, depth: int, found_by: int, follow: Any) -> Any:
        calls.append((list(urls), depth, found_by, list(follow)))
        return original(self, urls, depth, found_by, follow)

    urls = seeds(args, port)
    try:
        Discovery.register_many = recording  # type: ignore[method-assign]
        crawler = Crawler(work / "record.db", urls, _settings())
        asyncio.run(crawler.run())
    finally:
        Discovery.register_many = original  # type: ignore[method-assign]
        server.terminate()
        server.wait()
    return urls, calls


def replay(calls_file: str, db: str) -> None:
    """In a child process: the recorded calls on a fresh crawl state; one line."""
    from webcrawl.crawler.engine import Crawler
    from webcrawl.storage.store import CrawlStore

    with open(calls_file, "rb") as f:
        urls, calls = pickle.load(f)  # safe: written by this script

    async def run() -> tuple[float, list[Any], Crawler]:
        crawler = Crawler(db, urls, _settings())
        crawler.store = await CrawlStore.open(crawler.db_path)
        crawler._start()
        register = crawler.discovery.register_many
        start = time.process_time()
        out = [register(*call) for call in calls]
        cpu = time.process_time() - start
        await crawler.store.aclose()
        return cpu, out, crawler

    cpu, out, crawler = asyncio.run(run())
    order = []
    for host in range(crawler.registry.host_count):
        while (taken := crawler.frontier.take(host)) is not None:
            order.append(taken.url_id)
    with sqlite3.connect(db) as con:
        rows = (str(con.execute("SELECT * FROM urls ORDER BY id").fetchall())
                + str(con.execute("SELECT * FROM hosts ORDER BY id").fetchall()))
    digest = {"ids": hashlib.sha1(b"".join(a.tobytes() for a in out)).hexdigest()[:12],
              "rows": hashlib.sha1(rows.encode()).hexdigest()[:12],
              "order": hashlib.sha1(str(order).encode()).hexdigest()[:12]}
    print(f"{1e6 * cpu / len(calls):.1f} us a call ({len(calls)} calls, "
          f"{len(crawler.registry)} URLs); digests {digest}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child-replay":
        replay(sys.argv[2], sys.argv[3])
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pages", type=int, default=20000)
    p.add_argument("--hosts", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--replays", type=int, default=5)
    p.add_argument("--calls", help="file of recorded calls (kept; reused if it exists)")
    args = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-register-"))
    try:
        calls_file = Path(args.calls) if args.calls else work / "calls.pickle"
        if not calls_file.exists():
            urls, calls = record(args, work)
            with open(calls_file, "wb") as f:
                pickle.dump((urls, calls), f)
            print(f"recorded {len(calls)} calls, {sum(len(c[0]) for c in calls)} links")
        for r in range(args.replays):
            db = work / f"replay{r}.db"
            subprocess.run([sys.executable, __file__, "--child-replay", str(calls_file),
                            str(db)], check=True)
            for path in work.glob(f"replay{r}.db*"):
                path.unlink()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
