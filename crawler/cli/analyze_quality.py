"""``webcrawl analyze quality``: quality over time of one crawl's recorded order.

A thin layer over :func:`webcrawl.analysis.ordering.quality.crawl_quality` on the graph loaded by
:func:`webcrawl.analysis.graph.loader.load_graph`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from webcrawl.crawler.cli._common import (
    add_db_option,
    add_graph_option,
    add_json_option,
    existing_db,
    int_range,
    print_json,
    print_table,
)


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "quality", help="crawl quality over time (PageRank capture, top-N, discovery)",
        description="How fast the recorded crawl found the important pages: PageRank "
                    "of each slice, PageRank captured, top-N found, discovery rate, sinks.")
    add_db_option(parser)
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="write one PNG per metric and quality.json here")
    parser.add_argument("--remote-only", action="store_true",
                        help="PageRank over links between different hosts only")
    parser.add_argument("--slices", type=int_range(1, 10**6), default=20, metavar="K",
                        help="number of slices (default 20)")
    parser.add_argument("--by", choices=("pages", "time"), default="pages",
                        help="slices of equal page counts (default) or equal duration")
    parser.add_argument("--checkpoints", type=int_range(0, 10**6), default=10, metavar="C",
                        help="partial-graph PageRank checkpoints (default 10; 0 skips)")
    add_graph_option(parser)
    parser.add_argument("--along", metavar="LIST",
                        help="also measure the crawl graph as the crawl progressed: 'all' or "
                             "some of degrees,sinks,discovery,bowtie,cores,clustering,pagerank "
                             "(Bennouas and de Montgolfier's figures)")
    parser.add_argument("--along-points", type=int_range(1, 10**6), default=8, metavar="P",
                        help="log-spaced points for --along (default 8)")
    add_json_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from webcrawl.analysis.graph.loader import load_graph
    from webcrawl.analysis.ordering.quality import QualitySettings, crawl_quality
    from webcrawl.analysis.report.plots import quality_figures, save_png

    settings = QualitySettings(slices=args.slices, by=args.by, checkpoints=args.checkpoints,
                               remote_only=args.remote_only)
    graph = load_graph(existing_db(args.db), graph=args.graph, duplicates=args.duplicates)
    report = crawl_quality(graph, settings=settings)
    along = None if args.along is None else _along(graph, args)
    written: list[Path] = []
    if args.out:
        written = [save_png(fig, args.out / f"{key}.png")
                   for key, fig in quality_figures({"recorded": report}).items()]
        json_path = args.out / "quality.json"
        json_path.write_text(json.dumps(report.to_dict(), indent=2) + "\n")
        written.append(json_path)
        if along is not None:
            from webcrawl.analysis.ordering.randomweb_figures import PAPER_RANGES
            from webcrawl.analysis.report.along_figures import along_figure
            written.append(save_png(along_figure(along, PAPER_RANGES), args.out / "along.png"))
    result = report.to_dict()
    if along is not None:
        result["along"] = along.to_dict()
    if args.json:
        print_json(result)
        return 0
    _print_report(report)
    if along is not None:
        from webcrawl.analysis.ordering.randomweb_figures import PAPER_RANGES
        from webcrawl.crawler.cli.simulate import print_along
        print()
        print_along(along, PAPER_RANGES, title="The crawl graph as the crawl progressed "
                    "(columns: pages fetched)")
    for path in written:
        print(f"wrote {path}")
    return 0


def _along(graph: Any, args: argparse.Namespace) -> Any:
    from webcrawl.analysis.ordering.along import measure_along
    from webcrawl.crawler.cli.simulate import parse_measures

    return measure_along(graph, max(args.along_points, 1), parse_measures(args.along))


def _print_report(report: Any) -> None:
    from webcrawl.analysis.ordering.quality import summary_label

    pr = "remote-links PageRank" if report.remote_only else "PageRank"
    print_table(["figure", "value"],
                [[summary_label(k), v] for k, v in report.summary.items()],
                title=f"Crawl quality of the recorded order, {report.pages:,} fetches "
                      f"({pr} of the {report.graph['description']})")
    print()
    tops = [n for n in report.top_fetched if n <= 1000]
    headers = ["slice", "pages", "meanPR", "captured", *(f"top{n}" for n in tops),
               "disc.known", "disc.crawled", "sinks"]
    rows = [[i + 1, int(end), report.mean_pagerank[i], float(report.capture[end]),
             *(float(report.top_fetched[n][i]) for n in tops),
             report.discovery_known[i], report.discovery_crawled[i], report.sinks[i]]
            for i, end in enumerate(report.slice_ends)]
    print_table(headers, rows, title="Per slice (meanPR: mean 1 over all pages; top-N and "
                                     "captured: cumulative)")
    print()
    print_table(["top N", "mean slice", "fetched"],
                [[n, mean, f"{count} of {n}"]
                 for n, (mean, count) in report.top_mean_slice.items()],
                title=f"Average slice on which the top-N pages were fetched (Najork and "
                      f"Wiener; slice 1 = first 1/{report.slice_ends.size} of the crawl)")
