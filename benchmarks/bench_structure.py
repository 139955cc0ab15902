"""Time and peak memory of the structure measurements on a 100k-page fixture web.

Builds a zipf fixture web (in-degree exponent 2.1, out-degree 2.72, 100 hosts), keeps
what a crawl from site0's root reaches, takes breadth-first order as the crawl order,
and times each measurement of :mod:`analysis.graph.smallworld_alg`, :mod:`analysis.graph.cores` and
:mod:`webcrawl.analysis.sampling.walks`.  Peak memory is the peak of traced allocations (numpy
buffers included) above the level before the measurement (tracemalloc).

    .venv/bin/python benchmarks/bench_structure.py [--pages 100000] [--sources 100]
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from scipy.sparse import csgraph

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.graph.cores import CoreConfig, bipartite_cores
from webcrawl.analysis.graph.smallworld_alg import (
    clustering,
    path_lengths,
    smallworld_along_order,
)
from webcrawl.analysis.sampling.walks import METHODS, SamplerConfig, sample_pages
from webcrawl.fixtures.config import FixtureConfig
from webcrawl.fixtures.web import FixtureWeb


def fixture_graph(pages: int, seed: int) -> CapturedGraph:
    web = FixtureWeb.build(FixtureConfig(model="zipf", pages=pages, hosts=max(pages // 1000, 1),
                                         seed=seed))
    keep = web.reachable()
    index = np.cumsum(keep) - 1
    edge = keep[web.src] & keep[web.dst]
    src, dst, n = index[web.src[edge]], index[web.dst[edge]], int(keep.sum())
    root = int(index[web.roots[0]])
    tmp = CapturedGraph.from_edges(src, dst, n)
    order = csgraph.breadth_first_order(tmp.adjacency, root, return_predecessors=False)
    return CapturedGraph.from_edges(src, dst, n, hosts=web.host_of[keep], seeds=[root],
                                    fetch_order=order)


def measure(label: str, fn: Callable[[], Any], describe: Callable[[Any], str]) -> None:
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    result = fn()
    secs = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    print(f"{label:<34} {secs:8.2f} s {peak / 2**20:9.1f} MiB  {describe(result)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--sources", type=int, default=100)
    parser.add_argument("--size", type=int, default=1000, help="sample size")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    g = fixture_graph(args.pages, args.seed)
    print(f"fixture web (zipf): {g.n} pages, {g.m} links, built in "
          f"{time.perf_counter() - start:.1f} s")
    print(f"{'measurement':<34} {'time':>10} {'peak mem':>13}  result")
    measure("clustering (exact)", lambda: clustering(g),
            lambda c: f"avg {c.average:.4f}, transitivity {c.transitivity:.4f}")
    for directed in (True, False):
        kind = "directed" if directed else "undirected"
        measure(f"paths {kind}, {args.sources} sources",
                lambda d=directed: path_lengths(g, directed=d, sources=args.sources,
                                                seed=args.seed),
                lambda p: f"mean {p.characteristic_length:.3f}, diameter >= {p.diameter}, "
                          f"connected {p.reachable_fraction:.1%}")
    measure("along crawl order, 5 checkpoints",
            lambda: smallworld_along_order(g, checkpoints=5, sources=20, seed=args.seed),
            lambda s: "clustering " + " ".join(f"{v:.3f}" for v in s.average_clustering))
    # All links: templates and same-host hubs give millions of small center sets, so
    # only i = 4 and j <= 3 here; the diverse cores (the paper's) get the full range.
    measure("cores i=4, j in 2..3",
            lambda: bipartite_cores(g, CoreConfig(min_i=4, max_j=3)),
            lambda r: f"(4,2) {r.count(4, 2)}, (4,3) {r.count(4, 3)}")
    measure("cores i,j in 2..4 diverse",
            lambda: bipartite_cores(g, CoreConfig(diverse=True)),
            lambda r: f"(2,2) {r.count(2, 2)}, (3,3) {r.count(3, 3)}, "
                      f"(4,4) {r.count(4, 4)}")
    for method in METHODS:
        measure(f"sample {method}, size {args.size}",
                lambda m=method: sample_pages(g, args.size, m, SamplerConfig(), seed=args.seed),
                lambda s: f"{s.distinct} distinct, {s.traversals} link traversals")


if __name__ == "__main__":
    main()
