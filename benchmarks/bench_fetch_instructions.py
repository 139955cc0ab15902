"""Instructions per request of the fetch path, counted by callgrind.

CPU times on a shared machine move by tens of percent from one round to the next
(``bench_fetch.py``); an instruction count does not, so a change of a few per cent in the
client's cost per request shows.  The script runs itself twice under ``valgrind
--tool=callgrind``, fetching ``--requests`` and five times as many 1 KB pages from one
loopback origin, one at a time on one kept-alive connection, and prints the difference
divided by the extra requests: the instructions of one request, start-up and connecting
cancelled out.  The server is ``bench_fetch.py``'s, in a child process valgrind does not
follow.

* ``--client http1``: :class:`webcrawl.crawler.http1.Http1Client` (``--http1-file PATH``
  loads another version instead, to compare with: a copy of the ``crawler/http1/``
  folder, or the one file ``crawler/http1.py`` of older versions);
* ``--client Fetcher``: :meth:`webcrawl.crawler.fetcher.Fetcher.fetch` (``--python`` runs
  another checkout's interpreter, to compare whole trees).

Usage::

    PYTHONPATH=. python benchmarks/bench_fetch_instructions.py --client http1 --loop uvloop
    mkdir /tmp/main && git archive main crawler/http1 | tar -x -C /tmp/main
    PYTHONPATH=. python benchmarks/bench_fetch_instructions.py --http1-file /tmp/main/crawler/http1

Valgrind slows Python about fifty times: the defaults take a minute or two.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
#: the factor between the two runs' request counts
SPAN = 5


def _client_module(http1_file: str | None) -> Any:
    if http1_file is None:
        from webcrawl.crawler import http1

        return http1
    from bench_fetch import load_http1  # this script's folder is on sys.path

    return load_http1(http1_file)


async def _fetch(url: str, requests: int, client: str, http1_file: str | None) -> None:
    if client == "Fetcher":
        from webcrawl.crawler.fetcher import Fetcher
        from webcrawl.crawler.settings import CrawlSettings

        async with Fetcher(CrawlSettings.polite_off(concurrency=1)) as fetcher:
            for _ in range(requests):
                await fetcher.fetch(url)
        return
    http1 = _client_module(http1_file)
    c = http1.Http1Client(limit=9, keepalive=30, connect_timeout=10, read_timeout=30,
                          total_timeout=60)
    headers = (("User-Agent", "bench/1"), ("Accept", "*/*"))
    try:
        for _ in range(requests):
            resp = await c.request("GET", url, headers)
            while await resp.read():
                pass
            resp.close()
    finally:
        await c.close()


def _child(args: argparse.Namespace) -> int:
    server = subprocess.Popen([sys.executable, str(HERE.with_name("bench_fetch.py")),
                               "--serve", "1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{int(server.stdout.readline().split()[0])}/page"
        if args.loop == "uvloop":
            import uvloop

            loop = uvloop.new_event_loop()
        else:
            loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(_fetch(url, args.child, args.client, args.http1_file))
        finally:
            loop.close()
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(10)
    return 0


def _instructions(args: argparse.Namespace, requests: int) -> int:
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", args.python,
           str(HERE), "--child", str(requests), "--client", args.client, "--loop", args.loop]
    if args.http1_file:
        cmd += ["--http1-file", args.http1_file]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode != 0 or found is None:
        raise SystemExit(f"bench_fetch_instructions: the measured run failed: "
                         f"{out.stderr.strip().splitlines()[-1:] or out.returncode}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--client", choices=("http1", "Fetcher"), default="http1")
    ap.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio")
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--http1-file", metavar="PATH",
                    help="measure this version of crawler/http1/ or crawler/http1.py "
                         "(--client http1)")
    ap.add_argument("--python", default=sys.executable,
                    help="the interpreter to measure (another checkout's venv)")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child is not None:
        return _child(args)
    if shutil.which("valgrind") is None:
        print("bench_fetch_instructions: valgrind is not installed", file=sys.stderr)
        return 1
    if args.http1_file and args.client != "http1":
        print("bench_fetch_instructions: --http1-file goes with --client http1",
              file=sys.stderr)
        return 2
    low = _instructions(args, args.requests)
    high = _instructions(args, SPAN * args.requests)
    per = (high - low) / ((SPAN - 1) * args.requests)
    what = args.http1_file or args.python
    print(f"{args.client} on {args.loop} ({what}): {per:,.0f} instructions per request "
          f"(callgrind, {args.requests} and {SPAN * args.requests} requests)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
