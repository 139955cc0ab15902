"""Peak RSS of a real crawl once it has discovered about 1M URLs (issue 4: under 1 GB).

Usage::

    python benchmarks/bench_crawler_memory.py                       # bfs and pagerank
    python benchmarks/bench_crawler_memory.py --strategies opic --max-pages 50000

A 1M-page zipf fixture web is served from this process (a background thread); each
strategy runs as a real ``webcrawl crawl`` subprocess with zero politeness delays and
``--max-pages`` so that it stops once about 1M URLs are discovered (the rest of the
frontier stays queued in the database, resumable).  The crawler's peak RSS comes from
the kernel (``wait4`` rusage of that child only); discovered URLs are counted in its
database.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread


def crawl(seed: str, db: Path, strategy: str, max_pages: int) -> tuple[float, float]:
    """Run one crawl; return (seconds, peak RSS in MiB) of the crawler process."""
    cmd = [sys.executable, "-m", "webcrawl.crawler.cli", "crawl", seed, "--db", str(db),
           "--strategy", strategy, "--max-pages", str(max_pages),
           "--resolve", "*.test=127.0.0.1", "--allow-host", "*.test",
           "--delay-factor", "0", "--min-delay", "0", "--max-delay", "0", "--quiet"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"crawl with {strategy} failed with status {status}")
    return seconds, usage.ru_maxrss / 1024  # KiB on Linux


def counts(db: Path) -> tuple[int, int]:
    with sqlite3.connect(db) as conn:
        urls = conn.execute("SELECT count(*) FROM urls").fetchone()[0]
        fetched = conn.execute("SELECT count(*) FROM urls WHERE seq IS NOT NULL").fetchone()[0]
    return int(urls), int(fetched)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1_000_000, help="fixture web size")
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--max-pages", type=int, default=150_000,
                        help="pages fetched before the crawl stops (default %(default)s)")
    parser.add_argument("--strategies", default="bfs,pagerank")
    args = parser.parse_args()

    t0 = time.perf_counter()
    web = FixtureWeb.build(FixtureConfig(pages=args.pages, hosts=args.hosts, seed=1))
    print(f"fixture web: {args.pages} pages, {args.hosts} hosts, built in "
          f"{time.perf_counter() - t0:.1f} s", flush=True)
    print(f"{'strategy':10} {'fetched':>8} {'discovered':>10} {'seconds':>8} {'pages/s':>8} "
          f"{'peak RSS MiB':>12}", flush=True)
    with serve_in_thread(web) as server, tempfile.TemporaryDirectory() as tmp:
        for strategy in args.strategies.split(","):
            db = Path(tmp) / f"{strategy}.db"
            seconds, rss = crawl(server.seed_url, db, strategy, args.max_pages)
            urls, fetched = counts(db)
            print(f"{strategy:10} {fetched:>8} {urls:>10} {seconds:>8.1f} "
                  f"{fetched / seconds:>8.0f} {rss:>12.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
