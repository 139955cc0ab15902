"""The sharded crawl's coordinator: its CPU per page, its profile, and a global strategy's cost.

Runs :class:`webcrawl.crawler.engine.Crawler` with a
:class:`webcrawl.crawler.shard.ShardDownloader` in this process against the nginx static
export of ``bench_crawl.py`` (zero delay, every feature on) and prints, per run, the wall time, the
coordinator's CPU (this process), the workers' CPU (waited-for children), pages, the
orders and batches exchanged, and the load average.  ``--profile`` adds a pyinstrument
profile of the coordinator.

Usage: ``python benchmarks/bench_shard_coordinator.py [--pages 4000] [--hosts 20]
[--workers 2] [--strategies bfs,pagerank,bfs,pagerank] [--profile]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_crawl
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.shard import ShardDownloader


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pages", type=int, default=4000)
    p.add_argument("--hosts", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--strategies", default="bfs,pagerank,bfs,pagerank")
    p.add_argument("--profile", action="store_true")
    args = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-shard-"))
    server, port, kind = bench_crawl.start_server(args, work)
    print(f"site: {args.pages} pages on {args.hosts} hosts, served by {kind}")
    try:
        urls = bench_crawl.seeds(args, port)
        for i, strategy in enumerate(args.strategies.split(",")):
            settings = CrawlSettings(
                resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",), concurrency=64,
                polite_delay_factor=0, polite_min_delay=0, polite_max_delay=0,
                workers=args.workers, frontier_strategy=strategy)
            crawler = Crawler(work / f"c{i}.db", urls, settings)
            kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            profiler = None
            if args.profile:
                from pyinstrument import Profiler

                profiler = Profiler(async_mode="enabled")
                profiler.start()
            t0, c0 = time.perf_counter(), time.process_time()
            asyncio.run(crawler.run())
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            if profiler is not None:
                profiler.stop()
                print(profiler.output_text(unicode=False, color=False))
            kids = resource.getrusage(resource.RUSAGE_CHILDREN)
            workers_cpu = (kids.ru_utime + kids.ru_stime) - (kids0.ru_utime + kids0.ru_stime)
            assert isinstance(crawler.downloader, ShardDownloader)
            pool = crawler.downloader.pool
            sent, received = pool.exchanged_bytes
            pages = max(1, crawler.stats.pages)
            print(f"{strategy:9} wall {wall:6.2f} s  coordinator CPU {cpu:5.2f} s "
                  f"({1000 * cpu / max(1, crawler.stats.pages):.2f} ms/page)  workers CPU "
                  f"{workers_cpu:5.2f} s  pages {crawler.stats.pages}  orders "
                  f"{pool.orders_sent} in {pool.batches_sent} batches, results in "
                  f"{pool.batches_received}  bytes/page out {sent / pages:.0f} back "
                  f"{received / pages:.0f}  load {os.getloadavg()[0]:.1f}")
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
