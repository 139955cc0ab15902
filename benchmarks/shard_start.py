"""``crawl --workers 2``: how long the hosts named by the seed page wait for a first request.

Serves a fixture web (``--pages`` pages on 8 hosts ``site0.test`` ...) and, with
``--hostile``, a never-ending server (``endless.test``: 40 links to bodies streamed
forever, fast or trickling) and a silent one (``silent.test``: accepts, never answers),
both among the seeds.  Each run is a real ``webcrawl crawl`` subprocess; the figure is,
on the fixture server's clock, the time from the seed page's answer to each other
healthy host's first request (its robots.txt).  Prints one line per run.

Usage::

    nice -n 10 .venv/bin/python benchmarks/shard_start.py [--runs 3] [--workers 2]
        [--hostile]
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from aiohttp import web as aioweb
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread

_CHUNK = b"<p>" + b"x" * 8189


async def _endless(request: aioweb.Request) -> aioweb.StreamResponse:
    if request.path == "/":
        links = "".join(f'<a href="/{kind}{i}">x</a>'
                        for kind in ("fast", "slow") for i in range(20))
        return aioweb.Response(text=f"<html><body>{links}</body></html>",
                               content_type="text/html")
    if request.path == "/robots.txt":
        return aioweb.Response(status=404)
    resp = aioweb.StreamResponse(headers={"Content-Type": "text/html"})
    resp.enable_chunked_encoding()
    await resp.prepare(request)
    try:
        while True:
            await resp.write(_CHUNK)
            await asyncio.sleep(0.05 if request.path.startswith("/slow") else 0)
    except (ConnectionError, asyncio.CancelledError):
        pass
    return resp


def _serve_hostile(ports: list[int], ready: threading.Event) -> None:
    async def main() -> None:
        app = aioweb.Application()
        app.router.add_route("GET", "/{tail:.*}", _endless)
        runner = aioweb.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        await aioweb.TCPSite(runner, "127.0.0.1", 0).start()
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen(128)
        silent.setblocking(False)
        ports.extend([runner.addresses[0][1], silent.getsockname()[1]])
        ready.set()
        held = []
        while True:  # accept and keep every connection, answer nothing
            conn, _ = await asyncio.get_running_loop().sock_accept(silent)
            held.append(conn)

    asyncio.run(main())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--pages", type=int, default=400)
    ap.add_argument("--hostile", action="store_true")
    args = ap.parse_args()
    web = FixtureWeb.build(FixtureConfig(pages=args.pages, hosts=8, seed=3))
    ports: list[int] = []
    ready = threading.Event()
    threading.Thread(target=_serve_hostile, args=(ports, ready), daemon=True).start()
    ready.wait()
    with serve_in_thread(web) as server:
        port = server.port
        seeds = [server.seed_url]
        resolve = ["--resolve", "*.test=127.0.0.1"]
        if args.hostile:
            seeds += [f"http://endless.test:{port}/", f"http://silent.test:{port}/"]
            resolve = ["--resolve", f"endless.test:{port}=127.0.0.1:{ports[0]}",
                       "--resolve", f"silent.test:{port}=127.0.0.1:{ports[1]}", *resolve]
        for run in range(args.runs):
            db = Path(tempfile.mkdtemp(prefix="shard-start-")) / "c.db"
            since = len(server.server.log)
            started = time.monotonic()
            done = subprocess.run(
                [sys.executable, "-m", "webcrawl.crawler.cli", "crawl", *seeds, "--db", str(db),
                 *resolve, "--allow-host", "*.test", "--workers", str(args.workers),
                 "--max-pages", "150", "--min-delay", "0.05", "--delay-factor", "0",
                 "--max-delay", "1", "--timeout", "20", "--quiet"],
                capture_output=True, text=True, check=False)
            log = server.server.log
            first: dict[str, float] = {}
            seed_host: list[float] = []
            for i in range(since, len(log)):
                host = log.hosts[log.host[i]]
                first.setdefault(host, log.start[i])
                if host == "site0.test":
                    seed_host.append(log.end[i])
            seed_answered = seed_host[1]  # robots.txt, then the seed page
            waits = sorted(t - seed_answered for h, t in first.items() if h != "site0.test")
            print(f"run {run}: exit {done.returncode}, seed page answered "
                  f"{seed_answered - started:.2f} s after the start; the other {len(waits)} "
                  f"hosts' first request after it: median {statistics.median(waits):.2f} s, "
                  f"max {waits[-1]:.2f} s", flush=True)


if __name__ == "__main__":
    main()
