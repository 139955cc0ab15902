"""CPU per request of the fetch path: aiohttp against :mod:`crawler.http1`, asyncio and uvloop.

A tiny asyncio server in a child process (so its CPU is not counted) answers every GET
with the same 1 KB keep-alive response, on one loopback port per client worker (one
origin each: both clients keep one connection per origin).  In this process, each
client fetches ``--requests`` pages with ``--workers`` concurrent workers, after a
warm-up, and the script prints the CPU seconds of this process per request
(``time.process_time``) and the requests per second, the median of ``--rounds``
alternating rounds:

* ``aiohttp``: a ``ClientSession`` configured as the old fetcher's (one connection per
  host, no decompression, no cookies, timeouts) reading the body in chunks;
* ``http1``: :class:`webcrawl.crawler.http1.Http1Client`, the body read in chunks;
* ``Fetcher``: the crawler's whole :meth:`webcrawl.crawler.fetcher.Fetcher.fetch` on http1
  (headers, decoding, :class:`~webcrawl.crawler.fetcher.FetchResult`);
* ``baseline`` (with ``--baseline PATH``): another version of the client (a copy of the
  ``crawler/http1/`` folder, or the one file ``crawler/http1.py`` of older versions),
  loaded from PATH, in the same rounds as ``http1``, so a change is measured against the
  code it replaces under the same load (the ratio is printed).

Usage::

    PYTHONPATH=. python benchmarks/bench_fetch.py [--requests 20000] [--workers 8] [--rounds 3]
    mkdir /tmp/main && git archive main crawler/http1 | tar -x -C /tmp/main
    PYTHONPATH=. python benchmarks/bench_fetch.py --baseline /tmp/main/crawler/http1 --rounds 9

The machine may be shared: keep sizes small while developing, and read the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

BODY = b"<!doctype html><p>" + b"x" * (1024 - 22) + b"</p>"
RESPONSE = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
            b"Content-Length: %d\r\nDate: Mon, 01 Jan 2024 00:00:00 GMT\r\n\r\n%s"
            % (len(BODY), BODY))


# -- the server (child process) ----------------------------------------------------------
class _Answer(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport: Any = transport
        self.pending = b""

    def data_received(self, data: bytes) -> None:
        data = self.pending + data
        heads = data.count(b"\r\n\r\n")
        self.pending = data[data.rfind(b"\r\n\r\n") + 4:] if heads else data
        if heads:
            self.transport.write(RESPONSE * heads)


async def _serve(ports: int) -> None:
    loop = asyncio.get_running_loop()
    servers = [await loop.create_server(_Answer, "127.0.0.1", 0) for _ in range(ports)]
    print(" ".join(str(s.sockets[0].getsockname()[1]) for s in servers), flush=True)
    await loop.run_in_executor(None, sys.stdin.read)  # until the parent closes stdin


# -- the clients --------------------------------------------------------------------------
Fetch = Callable[[str], Awaitable[None]]


async def _aiohttp(workers: int) -> tuple[Fetch, Callable[[], Awaitable[None]]]:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=workers + 8, limit_per_host=1, keepalive_timeout=30)
    session = aiohttp.ClientSession(
        connector=connector, auto_decompress=False, cookie_jar=aiohttp.DummyCookieJar(),
        timeout=aiohttp.ClientTimeout(total=60, sock_connect=10, sock_read=30),
        headers={"User-Agent": "bench/1", "Accept": "*/*", "Accept-Encoding": "gzip"})

    async def fetch(url: str) -> None:
        async with session.get(url, allow_redirects=False) as resp:
            async for _ in resp.content.iter_chunked(1 << 16):
                pass

    return fetch, session.close


#: the module of ``--baseline`` (another version of the client)
_BASELINE: Any = None


def load_http1(path: str) -> Any:
    """Another version of the client, loaded from ``path`` as its own module: the one
    file ``crawler/http1.py`` of versions before the package, or a copy of the
    ``crawler/http1/`` folder (its imports of itself are pointed at the copy)."""
    import importlib
    import importlib.util
    import tempfile
    from pathlib import Path

    name = "bench_http1_baseline"
    source = Path(path)
    if source.is_dir():
        folder = Path(tempfile.mkdtemp(prefix="bench_http1_")) / name
        folder.mkdir()
        for module in source.glob("*.py"):
            text = module.read_text(encoding="utf-8")
            (folder / module.name).write_text(text.replace("webcrawl.crawler.http1", name),
                                              encoding="utf-8")
        sys.path.insert(0, str(folder.parent))
        return importlib.import_module(name)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


async def _http1(workers: int, module: Any = None) -> tuple[Fetch, Callable[[], Awaitable[None]]]:
    if module is None:
        from webcrawl.crawler import http1 as module

    client = module.Http1Client(limit=workers + 8, keepalive=30, connect_timeout=10,
                                read_timeout=30, total_timeout=60)
    headers = (("User-Agent", "bench/1"), ("Accept", "*/*"), ("Accept-Encoding", "gzip"))

    async def fetch(url: str) -> None:
        resp = await client.request("GET", url, headers)
        try:
            while await resp.read():
                pass
        finally:
            resp.close()

    return fetch, client.close


async def _fetcher(workers: int) -> tuple[Fetch, Callable[[], Awaitable[None]]]:
    from webcrawl.crawler.fetcher import Fetcher
    from webcrawl.crawler.settings import CrawlSettings

    fetcher = await Fetcher(CrawlSettings.polite_off(concurrency=workers)).__aenter__()

    async def fetch(url: str) -> None:
        await fetcher.fetch(url)

    return fetch, fetcher.aclose


async def _baseline(workers: int) -> tuple[Fetch, Callable[[], Awaitable[None]]]:
    return await _http1(workers, _BASELINE)


CLIENTS = {"aiohttp": _aiohttp, "http1": _http1, "Fetcher": _fetcher, "baseline": _baseline}


async def _run(client: str, ports: list[int], requests: int) -> tuple[float, float]:
    fetch, close = await CLIENTS[client](len(ports))
    try:
        async def worker(port: int, n: int) -> None:
            url = f"http://127.0.0.1:{port}/page"
            for _ in range(n):
                await fetch(url)

        await asyncio.gather(*(worker(p, 200) for p in ports))  # warm-up
        per = requests // len(ports)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        await asyncio.gather(*(worker(p, per) for p in ports))
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    finally:
        await close()
    n = per * len(ports)
    return cpu / n * 1e6, n / wall


def _loop(name: str) -> asyncio.AbstractEventLoop:
    if name == "uvloop":
        import uvloop

        return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=20_000)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baseline", metavar="PATH",
                    help="also measure this version of crawler/http1/ (a folder) or of "
                         "crawler/http1.py (as 'baseline')")
    ap.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.serve:
        asyncio.run(_serve(args.serve))
        return 0
    global _BASELINE
    clients = ["aiohttp", "Fetcher", "http1"]
    if args.baseline:
        _BASELINE = load_http1(args.baseline)
        clients.append("baseline")
    try:
        import uvloop  # noqa: F401
        loops = ["asyncio", "uvloop"]
    except ImportError:
        loops = ["asyncio"]
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(args.workers)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        ports = [int(p) for p in server.stdout.readline().split()]
        figures: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for round_ in range(args.rounds):
            if args.baseline and round_:  # alternate: neither always runs first
                clients[-2:] = clients[-1], clients[-2]
            for loop_name in loops:
                for client in clients:
                    loop = _loop(loop_name)
                    try:
                        figure = loop.run_until_complete(_run(client, ports, args.requests))
                    finally:
                        loop.close()
                    figures.setdefault((client, loop_name), []).append(figure)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(10)
    print(f"{args.requests} requests of 1 KB, {args.workers} origins, median of "
          f"{args.rounds} rounds (client process CPU only)")
    print(f"{'client':<10}{'loop':<9}{'CPU us/request':>16}{'requests/s':>12}")
    for (client, loop_name), runs in figures.items():
        cpu = statistics.median(r[0] for r in runs)
        rate = statistics.median(r[1] for r in runs)
        print(f"{client:<10}{loop_name:<9}{cpu:>16.1f}{rate:>12,.0f}")
    if args.baseline:
        for loop_name in loops:
            # per round (the same load for both), then the median of the rounds
            ratios = [new[0] / old[0] for new, old in zip(figures[("http1", loop_name)],
                                                          figures[("baseline", loop_name)],
                                                          strict=True)]
            print(f"http1 / baseline CPU per request, {loop_name}: median "
                  f"{statistics.median(ratios):.3f} (rounds: "
                  f"{', '.join(f'{r:.2f}' for r in ratios)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
