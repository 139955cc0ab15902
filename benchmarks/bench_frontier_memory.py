"""Memory and speed of the crawl state per discovered URL, for every crawl ordering.

Usage::

    python benchmarks/bench_frontier_memory.py --urls 10000000
    python benchmarks/bench_frontier_memory.py --urls 100000000 --orderings bfs,opic
    python benchmarks/bench_crawl.py --memory 10000000      # the same, all orderings

Each ordering runs in a child process of its own, which discovers ``--urls`` distinct
URLs on ``--hosts`` hosts the way the crawl engine registers a new link target: the
URL-seen test (a miss), the registry's add (id, host, depth, URL text to the side
file), the strategy's ``discovered`` (its per-URL state) and the frontier's add, with
the rank index off (``frontier_record_rank``; its cost, about 120 B a frontier URL, is
printed separately on request with ``--rank``).  Every URL stays in the frontier, the
worst case.  Printed per ordering: the growth of the process's resident memory (RSS,
from ``/proc/self/status``) per URL at the end and at its peak (``ru_maxrss``: the
sorted fingerprint arrays are copied when a batch is merged in), the crawl state the
budget accounts (:mod:`webcrawl.crawler.budget`), adds per second of wall time and
per second of the process's CPU time (the fairer figure on a shared, loaded machine),
and then lookups per CPU second of known URLs (a fingerprint hit confirmed by one
``pread`` of the text).
The URL text file lives in ``--spill-dir`` (the current directory by default: not a
memory-backed /tmp).
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

ORDERINGS = ("bfs", "dfs", "random", "backlink", "opic", "pagerank", "batch-pagerank",
             "partial-pagerank", "larger-sites-first")


def rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def child(ordering: str, n: int, hosts: int, rank: bool, spill_dir: str) -> None:
    from webcrawl.analysis.ordering.strategies import StrategyContext, get_strategy
    from webcrawl.crawler.budget import MemoryBudget
    from webcrawl.crawler.frontier import Frontier
    from webcrawl.crawler.registry import CrawlRegistry

    registry = CrawlRegistry(spill_dir=spill_dir)
    strategy = get_strategy(ordering)(seed=0)
    strategy.bind(StrategyContext(url_of=registry.url))
    frontier = Frontier(record_rank=rank, host_order=strategy.host_order)
    budget = MemoryBudget(2**62, registry, frontier)
    gc.collect()
    before = rss_bytes()
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    id_of, add, discovered, enqueue = (registry.id_of, registry.add, strategy.discovered,
                                       frontier.add)
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(n):
        url = f"http://site{i % hosts}.example.org/section{i % 97}/page{i}.html"
        if id_of(url) is None:
            depth = i % 20
            new = add(url, depth)
            enqueue(new.url_id, new.host_id, discovered(new.url_id, depth))
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    gc.collect()
    after = rss_bytes()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    state = budget.used()
    rng = random.Random(0)
    probes = [rng.randrange(n) for _ in range(min(n, 1_000_000))]
    urls = [f"http://site{i % hosts}.example.org/section{i % 97}/page{i}.html" for i in probes]
    c1 = time.process_time()
    found = sum(1 for url in urls if id_of(url) is not None)
    hits = len(urls) / (time.process_time() - c1)
    assert found == len(urls) and len(registry) == n and len(frontier) == n
    print(f"{ordering:20} {n:>11,} {(after - before) / n:>9.1f} "
          f"{(max(peak, peak_before) - before) / n:>9.1f} {state / n:>9.1f} "
          f"{n / elapsed:>9,.0f} {n / cpu:>9,.0f} {hits:>9,.0f}", flush=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--urls", type=int, default=1_000_000, help="URLs discovered")
    p.add_argument("--hosts", type=int, default=1000)
    p.add_argument("--orderings", default=",".join(ORDERINGS))
    p.add_argument("--rank", action="store_true", help="with the rank index on")
    p.add_argument("--spill-dir", default=".", help="folder of the URL text side file")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args.child, args.urls, args.hosts, args.rank, args.spill_dir)
        return 0
    load = os.getloadavg()
    print(f"crawl state for {args.urls:,} discovered URLs on {args.hosts:,} hosts, all in "
          f"the frontier (rank index {'on' if args.rank else 'off'}); load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
    print(f"{'ordering':20} {'URLs':>11} {'RSS B/URL':>9} {'peak B/U':>9} {'state B/U':>9} "
          f"{'adds/s':>9} {'adds/cpu-s':>9} {'hits/cpu-s':>9}", flush=True)
    with tempfile.TemporaryDirectory(dir=args.spill_dir) as spill:
        for ordering in args.orderings.split(","):
            cmd = [sys.executable, __file__, "--child", ordering, "--urls", str(args.urls),
                   "--hosts", str(args.hosts), "--spill-dir", spill]
            if args.rank:
                cmd.append("--rank")
            subprocess.run(cmd, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
