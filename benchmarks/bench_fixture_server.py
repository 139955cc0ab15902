"""Requests per second of `webcrawl fixture serve` on loopback.

Starts the server as a subprocess (``python -m webcrawl.crawler.cli fixture serve``), then drives it
with an aiohttp client pool (keep-alive, several hosts, random pages) and prints the figures.
Nothing to install beyond the project itself (nginx is not used here).

    .venv/bin/python benchmarks/bench_fixture_server.py --pages 20000 --hosts 50 \
        --requests 20000 --concurrency 2 8 64
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import subprocess
import sys
import time

import aiohttp
import numpy as np


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _drive(port: int, paths: list[tuple[str, str]], concurrency: int) -> tuple[float, int]:
    connector = aiohttp.TCPConnector(limit=concurrency)
    queue = iter(paths)
    errors = 0

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal errors
        for host, path in queue:
            async with session.get(f"http://127.0.0.1:{port}{path}",
                                   headers={"Host": host}) as resp:
                await resp.read()
                errors += resp.status != 200

    async with aiohttp.ClientSession(connector=connector) as session:
        start = time.perf_counter()
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
        return time.perf_counter() - start, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20000)
    parser.add_argument("--hosts", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[2, 8, 64])
    args = parser.parse_args()

    sys.path.insert(0, ".")
    from webcrawl.fixtures import FixtureConfig, FixtureWeb

    web = FixtureWeb.build(FixtureConfig(pages=args.pages, hosts=args.hosts, seed=1))
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "webcrawl.crawler.cli", "fixture", "serve",
                             "--port", str(port), "--pages", str(args.pages),
                             "--hosts", str(args.hosts), "--random-seed", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        proc.stdout.readline()  # the seed URL: the server is up
        rng = np.random.default_rng(0)
        allowed = np.flatnonzero(web.kind != 1)
        pages = rng.choice(allowed, size=args.requests)
        paths = [(f"site{web.host_of[p]}.test:{port}", web.path_of(int(p))) for p in pages]
        print(f"fixture server: {args.pages} pages, {args.hosts} hosts, "
              f"{args.requests} GETs per run (random pages, keep-alive)")
        # warm-up: render every requested page once
        asyncio.run(_drive(port, paths, 8))
        for conc in args.concurrency:
            elapsed, errors = asyncio.run(_drive(port, paths, conc))
            print(f"  concurrency {conc:3d}: {args.requests / elapsed:8.0f} requests/s "
                  f"({elapsed:.2f} s, {errors} non-200)")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
