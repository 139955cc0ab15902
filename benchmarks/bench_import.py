"""Bring-your-own-graph pipeline: ``import edges``, then PageRank, bow-tie and three virtual
orderings on the imported graph, with times and peak memory.

The graph is generated with numpy: ``--pages`` pages, ``--links`` links; out-degrees and
in-degrees heavy-tailed (Zipf-like, as on the web), sources in ascending order (as
SNAP, LAW and Common Crawl files are), written as a tab-separated edge list by
pyarrow (not timed).  Phases run in one process; peak RSS is the process's maximum
resident set after each phase (``ru_maxrss``), so the last figure is the whole
pipeline's peak.

    PYTHONPATH=. python benchmarks/bench_import.py                      # 2M pages, 20M links
    PYTHONPATH=. python benchmarks/bench_import.py --pages 200000 --links 2000000
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

STRATEGIES = ("bfs", "random", "backlink")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def generate(path: Path, pages: int, links: int, seed: int = 0) -> None:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed)
    # Heavy tails: Pareto weights for "who links" and "who is linked to".
    out_w = rng.pareto(1.7, pages) + 1.0
    in_w = rng.pareto(1.1, pages) + 1.0
    src = np.sort(rng.choice(pages, size=links, p=out_w / out_w.sum()))
    dst = rng.choice(pages, size=links, p=in_w / in_w.sum())
    table = pa.table({"src": src.astype(np.int64), "dst": dst.astype(np.int64)})
    pacsv.write_csv(table, str(path), pacsv.WriteOptions(include_header=False, delimiter="\t"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=2_000_000)
    ap.add_argument("--links", type=int, default=20_000_000)
    ap.add_argument("--dir", type=Path, default=None, help="work folder (default: a temp one)")
    args = ap.parse_args()

    from analysis.graph import bowtie, load_graph, pagerank
    from analysis.ordering import virtual_crawl
    from storage.edgelist import import_edges

    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        edges, db = Path(tmp) / "edges.tsv", Path(tmp) / "graph.db"
        t = time.perf_counter()
        generate(edges, args.pages, args.links)
        size = edges.stat().st_size / 1e6
        print(f"generated {args.links:,} links on {args.pages:,} pages "
              f"({size:,.0f} MB TSV) in {time.perf_counter() - t:.1f} s (not counted)")
        total = 0.0

        def phase(name: str, seconds: float, extra: str = "") -> None:
            nonlocal total
            total += seconds
            print(f"{name:22s} {seconds:7.2f} s  peak RSS {peak_mb():7,.0f} MB  {extra}")

        t = time.perf_counter()
        result = import_edges(edges, db)
        phase("import edges", time.perf_counter() - t,
              f"{result.edges / (time.perf_counter() - t):,.0f} links/s "
              f"({result.nodes:,} nodes, {result.pages_with_links:,} with out-links)")
        t = time.perf_counter()
        graph = load_graph(db)
        phase("load graph", time.perf_counter() - t, f"{graph.n:,} nodes, {graph.m:,} links")
        t = time.perf_counter()
        pr = pagerank(graph.adjacency)
        phase("pagerank", time.perf_counter() - t, f"{pr.iterations} iterations")
        t = time.perf_counter()
        bt = bowtie(graph.adjacency)
        phase("bow-tie", time.perf_counter() - t,
              f"largest SCC {bt.scc_nodes.size:,} nodes")
        for name in STRATEGIES:
            t = time.perf_counter()
            crawl = virtual_crawl(graph, name)
            phase(f"virtual {name}", time.perf_counter() - t, f"{crawl.order.size:,} pages")
        print(f"{'whole pipeline':22s} {total:7.2f} s  peak RSS {peak_mb():7,.0f} MB")


if __name__ == "__main__":
    main()
