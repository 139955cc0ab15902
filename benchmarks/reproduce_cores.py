"""Bennouas and de Montgolfier's figure 8 (small cores over 1,000 crawled pages), ours.

    PYTHONPATH=. python benchmarks/reproduce_cores.py [--pages 1000000] [--crawl 1000]

A BFS random web crawl with the paper's exponents; (i, j) cores of the graph of the
crawled pages counted as the paper counts them, cores "of a given minimal size" (section
5.4: at least i hubs and j authorities), beside the paper's table, and, as a labelled
diagnostic, the cores of exactly i hubs and j authorities (Kumar et al.'s bicliques in no
larger one, by exact size).
"""

from __future__ import annotations

import argparse

import numpy as np
from webcrawl.analysis.graph.cores import CoreConfig, bipartite_cores
from webcrawl.analysis.ordering.randomweb import random_web_crawl

#: Figure 8 of the paper: (hubs, authorities) -> cores, over 1000 pages.
PAPER_FIG8 = {(2, 2): 220, (2, 3): 83, (2, 4): 37, (2, 5): 14, (2, 6): 14, (2, 7): 14,
              (3, 3): 84, (3, 4): 37, (3, 5): 14, (3, 6): 5, (3, 7): 2, (4, 4): 40,
              (4, 5): 14, (4, 6): 5, (4, 7): 2, (5, 5): 12, (5, 6): 3, (6, 6): 3}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=1_000_000)
    parser.add_argument("--crawl", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=5, help="random seeds averaged")
    args = parser.parse_args()
    found = np.zeros((6, 6))
    exact = np.zeros((6, 6))
    for seed in range(args.seeds):
        web = random_web_crawl(args.pages, "BFS", max_pages=args.crawl, seed=seed)
        order = web.graph.fetch_order
        sub = web.graph.adjacency.tocsr()[order][:, order]
        r = bipartite_cores(sub, CoreConfig(min_i=2, max_i=7, min_j=2, max_j=7, examples=0))
        found += r.counts
        exact += r.maximal
    found /= args.seeds
    exact /= args.seeds
    print(f"(i, j) cores of at least i hubs and j authorities over {args.crawl} crawled "
          f"pages of a random web of {args.pages} pages (BFS, mean of {args.seeds} seeds) "
          "vs Bennouas fig. 8; diagnostic: cores of exactly i and j")
    print(f"{'i':>3} {'j':>3} {'ours':>8} {'paper':>6} {'exactly':>8}")
    for (i, j), paper in PAPER_FIG8.items():
        print(f"{i:>3} {j:>3} {found[i - 2, j - 2]:>8.1f} {paper:>6} {exact[i - 2, j - 2]:>8.1f}")


if __name__ == "__main__":
    main()
