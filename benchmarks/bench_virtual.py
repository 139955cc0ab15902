"""Virtual crawl speed: replay every strategy over a 100k-page graph, seconds each.

The graph is a complete crawl of the random-web-crawls model (Zipf 2.1 / 2.72 degrees),
so every page is crawled and its out-links are known.  Usage::

    .venv/bin/python benchmarks/bench_virtual.py [--pages 100000] [--seed 0]

Prints one line per strategy: seconds, pages fetched, priority updates, and the
fraction of the graph's PageRank captured by the first 10% of pages (a sanity check
that the orderings differ as the literature says).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from webcrawl.analysis.graph.pagerank_alg import pagerank
from webcrawl.analysis.ordering.randomweb import random_web_crawl
from webcrawl.analysis.ordering.strategies import available_strategies
from webcrawl.analysis.ordering.virtual import virtual_crawl

STRATEGIES = ["bfs", "dfs", "random", "backlink", "pagerank", "opic"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    t0 = time.perf_counter()
    graph = random_web_crawl(args.pages, "BFS", seed=args.seed).graph
    print(
        f"graph: {graph.n} nodes, {graph.m} distinct links, {int(graph.crawled.sum())} crawled "
        f"(generated in {time.perf_counter() - t0:.1f} s)",
        file=sys.stderr,
    )
    scores = pagerank(graph.adjacency).scores
    names = [s for s in STRATEGIES if s in available_strategies()]
    print(f"{'strategy':<10} {'seconds':>8} {'pages':>8} {'pages/s':>9} {'PR@10%':>7}")
    for name in names:
        start = time.perf_counter()
        crawl = virtual_crawl(graph, name, seed=args.seed)
        seconds = time.perf_counter() - start
        k = max(1, crawl.fetched // 10)
        captured = float(scores[crawl.order[:k]].sum())
        print(
            f"{name:<10} {seconds:>8.2f} {crawl.fetched:>8} "
            f"{crawl.fetched / seconds:>9.0f} {captured:>7.3f}"
        )
    return 0


if __name__ == "__main__":
    np.seterr(all="raise")
    raise SystemExit(main())
