"""``webcrawl compare``: which crawl ordering finds the important pages first?

A thin layer over :func:`webcrawl.analysis.ordering.compare.compare_crawl`: prints the summary table
(or ``--json``), writes one PNG per metric and ``comparison.json`` into ``--out``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from webcrawl.crawler.cli._common import (
    add_graph_option,
    add_json_option,
    existing_db,
    int_range,
    positive_int,
    print_json,
    print_table,
    seed_int,
)
from webcrawl.crawler.cli._help import add_deprecated_alias
from webcrawl.crawler.cli._output import end_stages, stage_display

DEFAULT_STRATEGIES = "bfs,dfs,random,backlink,pagerank,opic"


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "compare", help="compare crawl orderings (quality over time, plots)",
        description="Compare how fast crawl orderings capture PageRank and find the top "
                    "pages: replay strategies over one crawl (--virtual) or compare the "
                    "recorded orders of one crawl database per strategy.")
    parser.add_argument("--db", required=True, type=Path, action="append", metavar="PATH",
                        help="crawl database (must exist); repeat it, one per strategy, "
                             "to compare recorded crawls")
    parser.add_argument("--strategies", default=DEFAULT_STRATEGIES, metavar="LIST",
                        help=f"comma-separated strategy names (default {DEFAULT_STRATEGIES})")
    parser.add_argument("--virtual", action="store_true",
                        help="replay each strategy over the graph captured in the one --db "
                             "(no network); its recorded order is added as 'recorded'")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="write one PNG per metric and comparison.json here")
    parser.add_argument("--slices", type=int_range(1, 10**6), default=20, metavar="K",
                        help="cut each crawl into K slices of equal page counts (default 20)")
    parser.add_argument("--checkpoints", type=int_range(0, 10**6), default=10, metavar="C",
                        help="partial-graph PageRank checkpoints for the top-N overlap "
                             "(default 10; 0 skips it)")
    parser.add_argument("--remote-only", action="store_true",
                        help="PageRank over links between different hosts only")
    parser.add_argument("--max-fetches", "--max-pages", dest="max_pages", type=positive_int,
                        metavar="N",
                        help="stop virtual crawls after N URLs fetched, as crawl's "
                             "--max-fetches counts them (default: the whole fetchable set, "
                             "the URLs the recorded crawl got an answer for)")
    parser.add_argument("--random-seed", dest="seed", type=seed_int, default=0, metavar="N",
                        help="random seed of randomised strategies (default 0)")
    add_deprecated_alias(parser, "--seed", "--random-seed")
    add_graph_option(parser)
    add_json_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from webcrawl.analysis.ordering.compare import CompareSettings, compare_crawl
    from webcrawl.analysis.ordering.quality import QualitySettings
    from webcrawl.analysis.report.comparison_files import write_comparison

    paths = [existing_db(p) for p in args.db]
    settings = CompareSettings(
        quality=QualitySettings(slices=args.slices, checkpoints=args.checkpoints,
                                remote_only=args.remote_only),
        virtual=args.virtual, max_pages=args.max_pages, seed=args.seed, graph=args.graph)
    show = stage_display(args)
    comparison = compare_crawl(paths, args.strategies.split(","), settings=settings,
                               progress=show)
    end_stages(show)
    written = write_comparison(comparison, args.out) if args.out else []
    if args.json:
        print_json(comparison.to_dict())
    else:
        if comparison.reach is not None:
            print("\n".join(comparison.reach.lines()))
            print()
        headers, rows = comparison.summary_table()
        print_table(headers, rows, title=f"Crawl orderings compared: {comparison.method}")
        for title, nw_headers, nw_rows in comparison.najork_wiener_tables():
            print()
            print_table(nw_headers, nw_rows, title=title)
        for path in written:
            print(f"wrote {path}")
    return 0
