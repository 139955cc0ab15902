"""Cho, Garcia-Molina and Page's hot-page comparison on a recorded crawl.

    python benchmarks/hot_pages.py --db crawl.db [--hot 100,10] [--strategies ...]

Loads the crawl's page graph (the fetched HTML pages and the links among them), marks
a page *hot* when at least G pages of that graph link to it (their ``IB(P) >= G``), and
replays each ordering one page at a time from the crawl's seeds
(:func:`webcrawl.analysis.ordering.country.hot_page_comparison`): the share of the hot
pages crawled after 1/10/25/50% of the pages, their ``P_ST`` of the crawl-and-stop
model.  ``ideal (ceiling)`` takes the hot pages first.  Prints one table per G; no
timing, so the figures depend on the database alone.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from webcrawl.analysis.graph.loader import load_graph
from webcrawl.analysis.ordering.country import hot_page_comparison

CHO_STRATEGIES = "bfs,backlink,pagerank,random"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--hot", default="100,10",
                        help="thresholds G, comma-separated (default 100,10)")
    parser.add_argument("--strategies", default=CHO_STRATEGIES)
    args = parser.parse_args()
    graph = load_graph(args.db)
    names = [n.strip() for n in args.strategies.split(",") if n.strip()]
    print(f"{args.db.name}: {graph.n:,} pages, {graph.m:,} links, "
          f"{len(graph.seeds)} seeds")
    for threshold in (int(g) for g in args.hot.split(",")):
        result = hot_page_comparison(graph, names, threshold)
        print(f"\nG = {threshold}: {result['hot']:,} hot pages of {result['pages']:,}")
        print("| ordering | hot@1% | hot@10% | hot@25% | hot@50% |")
        print("|---|---|---|---|---|")
        rows = [*result["orderings"].items(), ("ideal (ceiling)", result["ideal (ceiling)"])]
        for label, values in rows:
            print(f"| {label} | " + " | ".join(f"{v:.3f}" for v in values) + " |")


if __name__ == "__main__":
    main()
