"""Peak memory of a crawl fetching gzip bombs (issue 19: under 200 MB whatever the ratio).

Usage::

    python benchmarks/bench_bombs.py                 # 100 MiB and 1 GiB inflating pages
    python benchmarks/bench_bombs.py --sizes 100,1024,4096

A loopback server in this process (a background thread) serves gzip pages that inflate
to SIZE MiB of zeros (about SIZE KiB on the wire, see :mod:`webcrawl.fixtures.bombs`), and a
4 KiB page as the baseline.  Each case is a real ``webcrawl crawl`` subprocess seeded
with that one page and the default body cap (5 MiB); its peak RSS comes from the kernel
(``wait4`` rusage of that child only).
The script also prints the bomb's outcome and stored size from the database.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from aiohttp import web
from webcrawl.fixtures.bombs import gzip_bomb

MiB = 1 << 20


def serve(bodies: dict[str, bytes]) -> tuple[int, threading.Event]:
    """Serve each body gzip-encoded as text/html; return the port and a stop event."""
    ready = threading.Event()
    stop = threading.Event()
    port_box: list[int] = []

    async def handle(request: web.Request) -> web.Response:
        body = bodies.get(request.path)
        if body is None:
            return web.Response(status=404)
        return web.Response(body=body, headers={"Content-Type": "text/html",
                                                "Content-Encoding": "gzip"})

    async def main() -> None:
        app = web.Application()
        app.router.add_get("/{tail:.*}", handle)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port_box.append(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        await runner.cleanup()

    threading.Thread(target=asyncio.run, args=(main(),), daemon=True).start()
    ready.wait()
    return port_box[0], stop


def crawl(seed: str, db: Path) -> tuple[float, float]:
    """One ``webcrawl crawl`` of ``seed`` alone; (seconds, peak RSS MiB) of the child."""
    cmd = [sys.executable, "-m", "webcrawl.crawler.cli", "crawl", seed,
           "--db", str(db), "--resolve", "bomb.test=127.0.0.1", "--delay-factor", "0",
           "--min-delay", "0", "--max-delay", "0", "--quiet"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"crawl of {seed} failed with status {status}")
    return time.perf_counter() - t0, usage.ru_maxrss / 1024


def outcome(db: Path, path: str) -> tuple[str, int]:
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT u.outcome, f.size FROM urls u JOIN fetches f"
                           " ON f.url_id = u.id WHERE u.url LIKE ?", (f"%{path}",)).fetchone()
    return str(row[0]), int(row[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1024",
                        help="MiB each bomb inflates to, comma-separated (default %(default)s)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    bodies = {"/small": gzip_bomb(4096)}
    for size in sizes:
        bodies[f"/bomb{size}"] = gzip_bomb(size * MiB)
    print(f"{'case':>14} {'wire bytes':>12} {'outcome':>10} {'stored':>10} "
          f"{'seconds':>8} {'peak RSS MiB':>13}")
    with tempfile.TemporaryDirectory() as tmp:
        port, stop = serve(bodies)
        try:
            for path, body in bodies.items():
                db = Path(tmp) / f"{path[1:]}.db"
                seconds, peak = crawl(f"http://bomb.test:{port}{path}", db)
                what, stored = outcome(db, path)
                print(f"{path[1:]:>14} {len(body):>12,} {what:>10} {stored:>10,} "
                      f"{seconds:>8.2f} {peak:>13.1f}")
        finally:
            stop.set()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
