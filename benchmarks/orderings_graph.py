"""A generated web graph with hosts, for comparing crawl orderings at scale.

Edges come from ``bench_import.generate`` (heavy-tailed in- and out-degrees, sources
in ascending order, as published edge lists are); pages are then grouped into hosts of
heavy-tailed sizes (Pareto, shape 1.2: a few hosts hold many pages, most hold a few),
each host a run of consecutive ids, and named ``http://hK.test/pI`` in a vertices file
that ``webcrawl import edges --vertices`` reads, so orderings that look at sites
(larger-sites-first) and politeness (one connection per host) have sites to see.

    PYTHONPATH=. python benchmarks/orderings_graph.py --pages 2000000 --links 10000000 \
        --hosts 20000 --dir /tmp/big
    webcrawl import edges /tmp/big/edges.tsv --vertices /tmp/big/vertices.tsv --db /tmp/big/g.db
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_import import generate


def host_sizes(pages: int, hosts: int, seed: int = 0) -> np.ndarray:
    """``hosts`` positive sizes summing to ``pages``, Pareto-distributed (shape 1.2)."""
    rng = np.random.default_rng(seed + 1)
    weights = rng.pareto(1.2, hosts) + 1.0
    sizes = np.maximum(1, np.floor(weights / weights.sum() * pages)).astype(np.int64)
    sizes[np.argmax(sizes)] += pages - sizes.sum()
    return sizes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=2_000_000)
    ap.add_argument("--links", type=int, default=10_000_000)
    ap.add_argument("--hosts", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dir", type=Path, required=True)
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    generate(args.dir / "edges.tsv", args.pages, args.links, args.seed)
    sizes = host_sizes(args.pages, args.hosts, args.seed)
    host = np.repeat(np.arange(sizes.size), sizes)
    with open(args.dir / "vertices.tsv", "w", encoding="ascii") as out:
        for start in range(0, args.pages, 100_000):
            ids = np.arange(start, min(start + 100_000, args.pages))
            out.write("".join(f"{i}\thttp://h{h}.test/p{i}\n"
                              for i, h in zip(ids.tolist(), host[ids].tolist(), strict=True)))
    print(f"{args.pages:,} pages on {sizes.size:,} hosts (largest {sizes.max():,} pages, "
          f"median {int(np.median(sizes))}), {args.links:,} links -> {args.dir}")


if __name__ == "__main__":
    main()
