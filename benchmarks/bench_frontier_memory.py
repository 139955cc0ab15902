"""Memory and speed of the crawl state per discovered URL, for every crawl ordering.

Usage::

    python benchmarks/bench_frontier_memory.py --urls 10000000
    python benchmarks/bench_frontier_memory.py --urls 100000000 --orderings bfs,opic
    python benchmarks/bench_crawl.py --memory 10000000      # the same, all orderings

Each ordering runs in a child process of its own, which discovers ``--urls`` distinct
URLs on ``--hosts`` hosts (URL ``i`` on host ``i % hosts``), ``--links`` at a time as
one page's links, the way the crawl engine registers a page's link targets
(``Discovery.register_many``): the registry's batch look-up and add (one fingerprint pass
and one vectorised search per sorted run; ids, hosts, depths, URL texts to the side
file), the strategy's ``discovered_many`` (its per-URL state), the budget's tick for the
page and the frontier's ``add_many``; the engine's scope test and the rows it writes to the
database are left out (they are not crawl state).  The rank index is off
(``frontier_record_rank``; its cost, about 12 B a frontier URL, is measured with
``--rank``).  Every URL stays in the frontier, the worst case; a page's
links are on ``--links`` different hosts, also the worst case for the frontier.
The clocks run around the registration only: each page's URL strings are made outside
them (they are the link extractor's output, not crawl state).  With numba installed the
compiled loops of the URL-seen test and the frontier are loaded before the clocks start
(their fixed ~140 MiB is not counted per URL); ``--numpy-only`` measures without them,
``--split`` prints each step's CPU time a URL too.
Printed per ordering: the growth of the process's resident memory (RSS, from
``/proc/self/status``) per URL at the end and at its peak (``ru_maxrss``), the crawl
state the budget accounts (:mod:`webcrawl.crawler.budget`), adds per second of wall
time and per second of the process's CPU time (the fairer figure on a shared, loaded
machine), and then look-ups per CPU second of known URLs, by pages of ``--links``
(a fingerprint hit confirmed by one ``pread`` of the text).
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


def child(ordering: str, n: int, hosts: int, links: int, rank: bool, spill_dir: str,
          numpy_only: bool, split: bool) -> None:
    import numpy as np
    from webcrawl.analysis.ordering.strategies import StrategyContext, get_strategy
    from webcrawl.crawler import frontier as frontier_module
    from webcrawl.crawler import seen
    from webcrawl.crawler.budget import MemoryBudget
    from webcrawl.crawler.frontier import Frontier
    from webcrawl.crawler.registry import CrawlRegistry

    if numpy_only:
        seen.COMPILED_MIN = frontier_module.COMPILED_MIN = 1 << 62
    else:  # once per install: numba caches the machine code on disk
        seen.compile_loops()
        frontier_module.compile_loops()

    registry = CrawlRegistry(spill_dir=spill_dir)
    strategy = get_strategy(ordering)(seed=0)
    strategy.bind(StrategyContext(url_of=registry.url))
    frontier = Frontier(record_rank=rank, host_order=strategy.host_order)
    budget = MemoryBudget(2**62, registry, frontier)
    gc.collect()
    before = rss_bytes()
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    add_many, discovered_many, enqueue, tick = (registry.add_many, strategy.discovered_many,
                                                frontier.add_many, budget.tick)
    wall, cpu = time.perf_counter, time.process_time
    elapsed = used = 0.0
    parts = [0.0, 0.0, 0.0, 0.0]  # registry, strategy, budget, frontier (CPU-s)
    for page, start in enumerate(range(0, n, links)):
        # The page's links, made outside the clocks: the link extractor's output.
        urls = [f"http://site{i % hosts}.example.org/section{i % 97}/page{i}.html"
                for i in range(start, min(n, start + links))]
        depth = page % 20
        t0, c0 = wall(), cpu()
        # The engine's registration of a page's links (Discovery.register_many), less
        # the scope test and the rows written to the database.
        batch = add_many(urls, depth)
        new_ids = np.arange(batch.first_id, batch.first_id + len(batch.new))
        if split:
            c1 = cpu()
        priorities = discovered_many(new_ids, depth)
        if split:
            c2 = cpu()
        tick(len(batch.new))
        if split:
            c3 = cpu()
        enqueue(new_ids, batch.host_ids, priorities)
        elapsed += wall() - t0
        used += cpu() - c0
        if split:
            parts[0] += c1 - c0
            parts[1] += c2 - c1
            parts[2] += c3 - c2
            parts[3] += cpu() - c3
    gc.collect()
    after = rss_bytes()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    state = budget.used()
    rng = random.Random(0)
    probes = [rng.randrange(n) for _ in range(min(n, 1_000_000))]
    urls = [f"http://site{i % hosts}.example.org/section{i % 97}/page{i}.html" for i in probes]
    c1 = time.process_time()
    found = sum(int((add_many(urls[k:k + links], 1).ids >= 0).sum())
                for k in range(0, len(urls), links))
    hits = len(urls) / (time.process_time() - c1)
    assert found == len(urls) and len(registry) == n and len(frontier) == n
    print(f"{ordering:20} {n:>11,} {(after - before) / n:>9.1f} "
          f"{(max(peak, peak_before) - before) / n:>9.1f} {state / n:>9.1f} "
          f"{n / elapsed:>9,.0f} {n / used:>9,.0f} {hits:>9,.0f}", flush=True)
    if split:
        print(f"{'':20} CPU us a URL: registry {parts[0] / n * 1e6:.2f}, strategy "
              f"{parts[1] / n * 1e6:.2f}, budget {parts[2] / n * 1e6:.2f}, frontier "
              f"{parts[3] / n * 1e6:.2f}", flush=True)


def loops(numpy_only: bool) -> str:
    """Which loops the URL-seen test and the frontier run: compiled (numba) or numpy."""
    if numpy_only:
        return "numpy loops (--numpy-only)"
    try:
        import numba
    except ImportError:
        return "numpy loops: numba is not installed"
    return f"compiled loops, numba {numba.__version__}"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--urls", type=int, default=1_000_000, help="URLs discovered")
    p.add_argument("--hosts", type=int, default=1000)
    p.add_argument("--links", type=int, default=50,
                   help="URLs registered together, as one page's links")
    p.add_argument("--orderings", default=",".join(ORDERINGS))
    p.add_argument("--rank", action="store_true", help="with the rank index on")
    p.add_argument("--spill-dir", default=".", help="folder of the URL text side file")
    p.add_argument("--split", action="store_true",
                   help="also the CPU time of each step (registry, strategy, budget, frontier)")
    p.add_argument("--numpy-only", action="store_true",
                   help="without the compiled loops (as without the fast extra)")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args.child, args.urls, args.hosts, args.links, args.rank, args.spill_dir,
              args.numpy_only, args.split)
        return 0
    load = os.getloadavg()
    print(f"crawl state for {args.urls:,} discovered URLs on {args.hosts:,} hosts, "
          f"{args.links} a page, all in the frontier (rank index "
          f"{'on' if args.rank else 'off'}; {loops(args.numpy_only)}); load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
    print(f"{'ordering':20} {'URLs':>11} {'RSS B/URL':>9} {'peak B/U':>9} {'state B/U':>9} "
          f"{'adds/s':>9} {'adds/cpu-s':>9} {'hits/cpu-s':>9}", flush=True)
    with tempfile.TemporaryDirectory(dir=args.spill_dir) as spill:
        for ordering in args.orderings.split(","):
            cmd = [sys.executable, __file__, "--child", ordering, "--urls", str(args.urls),
                   "--hosts", str(args.hosts), "--links", str(args.links),
                   "--spill-dir", spill]
            if args.rank:
                cmd.append("--rank")
            for flag in ("numpy_only", "split"):
                if getattr(args, flag):
                    cmd.append("--" + flag.replace("_", "-"))
            subprocess.run(cmd, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
