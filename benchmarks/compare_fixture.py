"""Every crawl ordering on the zipf fixture web (100k pages): docs/results/ordering-quality.md.

Builds the fixture web's full link graph (``FixtureWeb.build``, no server), replays
each strategy over it with a virtual crawl from the seed page 0, scores every order
with the quality metrics (PageRank of the full graph), prints the summary table and
the time each step took, and writes one PNG per metric plus ``comparison.json``.

Run::

    .venv/bin/python benchmarks/compare_fixture.py                 # 100k pages
    .venv/bin/python benchmarks/compare_fixture.py --pages 5000    # quick look

Expected (Najork and Wiener 2001; Bennouas and de Montgolfier 2007): bfs, backlink
and pagerank capture PageRank much faster than random; dfs is worst.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.ordering.compare import Comparison, compare_orders
from webcrawl.analysis.ordering.quality import QualitySettings
from webcrawl.analysis.ordering.virtual import virtual_crawl
from webcrawl.analysis.report.comparison_files import write_comparison
from webcrawl.crawler.cli._common import print_table
from webcrawl.fixtures.config import FixtureConfig
from webcrawl.fixtures.web import FixtureWeb

STRATEGIES = ("bfs", "dfs", "random", "backlink", "pagerank", "opic")
DEFAULT_OUT = Path(__file__).parent / "results" / "compare_fixture"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--slices", type=int, default=20)
    parser.add_argument("--checkpoints", type=int, default=10)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()

    t0 = time.perf_counter()
    config = FixtureConfig(model="zipf", pages=args.pages, hosts=args.hosts, seed=args.seed)
    web = FixtureWeb.build(config)
    graph = CapturedGraph.from_edges(web.src, web.dst, web.pages, hosts=web.host_of,
                                     seeds=[0])
    t_build = time.perf_counter() - t0
    print(f"fixture web: zipf model (in 2.1, out 2.72), {graph.n} pages, {graph.m} links, "
          f"{args.hosts} hosts, seed {args.seed}; built in {t_build:.2f} s", file=sys.stderr)

    orders, timings = {}, {}
    for name in args.strategies.split(","):
        t = time.perf_counter()
        orders[name] = virtual_crawl(graph, name, seed=args.seed).order
        timings[name] = time.perf_counter() - t
        print(f"virtual crawl {name}: {orders[name].size} pages in {timings[name]:.2f} s",
              file=sys.stderr)
    t = time.perf_counter()
    settings = QualitySettings(slices=args.slices, checkpoints=args.checkpoints)
    reports = compare_orders(graph, orders, settings=settings)
    t_metrics = time.perf_counter() - t
    reachable = int(np.unique(np.concatenate(list(orders.values()))).size)

    method = (f"virtual crawls from page 0 over the full graph of the zipf fixture web "
              f"({graph.n} pages, {graph.m} links, {args.hosts} hosts, seed {args.seed}; "
              f"{reachable} pages reachable), PageRank of the full graph")
    comparison = Comparison(reports, method)
    headers, rows = comparison.summary_table()
    for row, name in zip(rows, reports, strict=True):
        row.append(f"{timings[name]:.2f}")
    print_table([*headers, "crawl s"], rows, title=f"How it was made: {method}")
    print(f"(PR@x: fraction of the total PageRank held by the first x of the {graph.n} "
          f"pages; topN@x: fraction of the top-N pages by PageRank fetched by "
          f"then; meanPR: average PageRank, mean 1 over all pages)")
    print(f"metrics for {len(reports)} orders: {t_metrics:.2f} s "
          f"({args.checkpoints} partial-graph PageRank checkpoints each)")
    for path in write_comparison(comparison, args.out):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
