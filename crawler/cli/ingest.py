"""``webcrawl import edges|warc``: bring your own data into a crawl database.

A thin layer over :func:`webcrawl.storage.edgelist.import_edges` (published web graphs) and
:func:`webcrawl.crawler.ingest.import_warc` (WARC files from any crawler).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from webcrawl.crawler.cli._common import add_json_option
from webcrawl.crawler.cli._output import end_stages, stage_display
from webcrawl.storage.edgelist import PAGE_RULES

__all__ = ["register"]


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "import", help="import a WARC or a web-graph edge list into a crawl database",
        description="Import data made elsewhere into a new crawl database that every "
                    "analysis, compare and export reads.  Examples: webcrawl import edges "
                    "web-Google.txt.gz --db google.db; webcrawl import warc site.warc.gz "
                    "--db site.db")
    kinds = parser.add_subparsers(dest="kind", metavar="KIND", required=True)
    edges = kinds.add_parser(
        "edges", help="an edge list: 'src dst' lines (ids or names), # comments, gzip",
        description="Import 'src dst' lines (space or tab; # comments; gzip by content) "
                    "with integer ids (named by --vertices 'id name' lines, Common Crawl's "
                    "'id<TAB>reversed.host' included) or names directly.")
    edges.add_argument("file", type=Path, metavar="FILE",
                       help="the edge list ('src dst' lines; .gz or plain)")
    edges.add_argument("--vertices", type=Path, metavar="FILE",
                       help="'id name' lines naming the integer ids (or one name a line: "
                            "the line number is the id)")
    edges.add_argument("--seed", action="append", default=[], metavar="NAME",
                       help="a seed node for virtual crawls, as named in the files "
                            "(default: the first source node); repeatable")
    edges.add_argument("--pages", choices=PAGE_RULES, default="all",
                       help="which nodes are fetched pages, the nodes every analysis "
                            "measures by default: all (every node of the file, as in a "
                            "published graph or a crawl's 'export edges'; default) or "
                            "sources (only nodes with out-links in the file; the others "
                            "are URLs nobody fetched, e.g. 'export edges --graph all' or "
                            "a frontier you mean to crawl with 'crawl --resume')")
    edges.add_argument("--db", required=True, type=Path, metavar="PATH",
                       help="the crawl database to create")
    add_json_option(edges)
    edges.set_defaults(func=run_edges)
    warc = kinds.add_parser(
        "warc", help="WARC files (1.0/1.1, gzip per record or not) from any crawler",
        description="Import WARC files: every response record is a fetch (in record "
                    "order), HTML pages give links through the crawler's own extractor, "
                    "redirects their target, revisit records unchanged refetches, "
                    "robots.txt records the hosts' robots.")
    warc.add_argument("files", nargs="+", type=Path, metavar="FILE",
                      help="WARC files (.warc or .warc.gz), imported in order")
    warc.add_argument("--db", required=True, type=Path, metavar="PATH",
                      help="the crawl database to create")
    warc.add_argument("--skip-bad", action="store_true",
                      help="skip a damaged record (reported) instead of stopping there; "
                           "an input with no readable fetch is still refused")
    warc.add_argument("--links-from-duplicates", action="store_true",
                      help="also read the links of a page whose body repeats an earlier "
                           "page's, as 'crawl --links-from-duplicates' does (default: the "
                           "page is recorded as a duplicate and its links are not read)")
    warc.add_argument("--near-duplicates", action="store_true",
                      help="test every page's text for near copies of an earlier page's, "
                           "as 'crawl --near-duplicates' does, for --duplicates near "
                           "(default off)")
    add_json_option(warc)
    warc.set_defaults(func=run_warc)


def run_edges(args: argparse.Namespace) -> int:
    from webcrawl.storage.edgelist import import_edges

    show = None if args.json else stage_display(args)
    result = import_edges(args.file, args.db, vertices=args.vertices, seeds=args.seed,
                          pages=args.pages, progress=show)
    end_stages(show)
    if args.json:
        print(json.dumps(result.as_dict(), indent=2))
    else:
        print(f"imported {result.edges:,} links between {result.nodes:,} nodes "
              f"({result.pages:,} pages, {result.pages_with_links:,} with out-links, "
              f"{result.hosts:,} "
              f"host{'' if result.hosts == 1 else 's'}) "
              f"in {result.seconds:.1f} s ({result.edges_per_second:,.0f} links/s)")
    return 0


def run_warc(args: argparse.Namespace) -> int:
    from webcrawl.crawler.ingest import import_warc
    from webcrawl.crawler.settings import CrawlSettings

    settings = CrawlSettings(links_from_duplicates=args.links_from_duplicates,
                             near_duplicates=args.near_duplicates)
    result = import_warc(args.files, args.db, skip_bad=args.skip_bad, settings=settings,
                         progress=not (args.quiet or args.json))
    if args.json:
        print(json.dumps(result.as_dict(), indent=2))
    else:
        print(result.summary())
    return 0
