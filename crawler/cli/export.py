"""``webcrawl export edges|pages|fetches|rates --db crawl.db [--format F] [--output FILE]``.

``export edges --graph pages|all|stored`` (default ``pages``, the graph the analyses
measure, from :func:`webcrawl.analysis.graph.loader.graph_edges`; ``stored``: every
stored link as recorded).  A thin layer over :func:`storage.export.export_edges`,
:func:`~storage.export.export_edges_parquet`, :func:`~storage.export.export_pages`,
:func:`~storage.export.export_fetches` and :func:`webcrawl.analysis.change.rate_table.export_rates`
(columns and formats documented there).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any, TextIO

from webcrawl.crawler.cli._common import (
    add_db_option,
    add_duplicates_option,
    check_output,
    existing_db,
    positive_float,
)
from webcrawl.crawler.cli._help import add_deprecated_alias
from webcrawl.crawler.cli._output import is_stdout
from webcrawl.storage.errors import ConfigError
from webcrawl.storage.formats import EXPORT_FORMATS, formats_of
from webcrawl.storage.output import open_output, output_path

__all__ = ["register"]

_GRAPHS = ("pages", "all", "stored")


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "export",
        help="write a crawl's edges, pages, fetches or change rates (TSV, JSONL, ...)",
        description="Write a crawl's links (edges: src, dst, nofollow), its URLs (pages: "
                    "url, status, seq, fetched_at, depth, outcome, host, ...), every fetch "
                    "attempt (fetches, revisits included) or each page's change-rate "
                    "estimate (rates: visits, changes, estimator, rate per day and its 95% "
                    "interval, day length).  Edges are those of the graph the analyses "
                    "measure (--graph pages, the default; all; or stored: every stored "
                    "link, duplicates and self-loops kept).  Example: webcrawl export edges "
                    "--db crawl.db --format edgelist --output graph.txt",
    )
    parser.add_argument("what", choices=("edges", "pages", "fetches", "rates"),
                        help="what to export")
    add_db_option(parser)
    # The formats are storage's one list (which applies to what: checked in run).
    parser.add_argument("--format", choices=EXPORT_FORMATS, default="tsv",
                        help="tsv (header row; default), jsonl (one JSON object a line); "
                             "edges also: edgelist ('src dst', no header: networkx "
                             "read_edgelist, igraph Read_Ncol), graphml and parquet (needs "
                             "--output; the graph's policies in the file metadata)")
    parser.add_argument("--graph", choices=_GRAPHS, default="pages",
                        help="edges: pages (fetched pages and the links among them, as "
                             "every analysis measures them; default), all (every discovered "
                             "URL), or stored (every stored link: duplicates, self-loops, "
                             "redirects)")
    add_duplicates_option(parser)
    parser.add_argument("--ids", action="store_true",
                        help="edges: integer URL ids instead of URLs, with --nodes FILE")
    parser.add_argument("--nodes", type=Path, metavar="FILE",
                        help="with --ids: write 'id<TAB>url' for every URL here")
    parser.add_argument("--day-seconds", dest="seconds_per_day", type=positive_float,
                        default=None, metavar="S",
                        help="rates: length of a day on the crawl's clock (default: the one "
                             "the revisit stored, else 86400)")
    parser.add_argument("-o", "--output", dest="out", type=Path, metavar="FILE",
                        help="output file ('-' or none: standard output)")
    add_deprecated_alias(parser, "--seconds-per-day", "--day-seconds")
    add_deprecated_alias(parser, "--out", "--output")
    parser.set_defaults(func=run)


def _exporter(args: argparse.Namespace) -> Any:
    if (args.ids or args.nodes) and args.what != "edges":
        raise ConfigError("--ids and --nodes apply to edges only")
    if args.ids != (args.nodes is not None):
        raise ConfigError("--ids and --nodes FILE go together")
    if args.what == "edges":
        from webcrawl.storage.export import export_edges

        def edges(db: Path, out: TextIO) -> int:
            arrays = _graph_edges(db, args.graph, args.duplicates)
            if not args.ids:
                return export_edges(db, out, args.format, edges=arrays)
            with open_output(args.nodes, newline="") as nodes:
                return export_edges(db, out, args.format, ids=True, nodes_out=nodes,
                                    edges=arrays)
        return edges
    if args.what == "rates":
        from webcrawl.analysis.change.rate_table import export_rates

        return lambda db, out: export_rates(db, out, args.format,
                                            seconds_per_day=args.seconds_per_day)
    from webcrawl.storage.export import export_fetches, export_pages

    export = export_pages if args.what == "pages" else export_fetches
    return lambda db, out: export(db, out, args.format)


def _graph_edges(db: Path, graph: str, duplicates: str) -> Any:
    """The edges of ``graph`` (None: every stored link, the storage default)."""
    if graph == "stored":
        return None
    from webcrawl.analysis.graph.loader import graph_edges

    return graph_edges(db, graph, duplicates)  # type: ignore[arg-type]


def _parquet(args: argparse.Namespace, db: Path) -> int:
    from webcrawl.storage.export import export_edges_parquet

    if args.ids != (args.nodes is not None):
        raise ConfigError("--ids and --nodes FILE go together")
    if args.out is None:
        raise ConfigError("--format parquet writes a file: give --output FILE")
    check_output(args.out)
    with contextlib.ExitStack() as files:
        out = files.enter_context(output_path(args.out))
        nodes = None if args.nodes is None else files.enter_context(output_path(args.nodes))
        rows = export_edges_parquet(db, out, ids=args.ids, nodes_path=nodes,
                                    edges=_graph_edges(db, args.graph, args.duplicates))
    print(f"webcrawl: {_exported(rows, 'edges')}", file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    db = existing_db(args.db)
    formats = formats_of(args.what)
    if args.format not in formats:
        raise ConfigError(f"--format {args.format} does not apply to {args.what} "
                          f"(choose from {', '.join(formats)})")
    if args.nodes is not None:
        check_output(args.nodes)
    if args.format == "parquet":
        return _parquet(args, db)
    export = _exporter(args)
    if args.out is None or is_stdout(args.out):
        # A reader that goes away (`| head`) ends the command quietly: BrokenPipeError
        # is handled where every command's is, in webcrawl.crawler.cli.main.
        rows = export(db, sys.stdout)
        sys.stdout.flush()
    else:
        check_output(args.out)
        # A regular file is replaced whole (a failure, a full disk, leaves no partial
        # file); a device, a FIFO or /dev/stdout is written through, never replaced.
        with open_output(args.out, newline="") as out:
            rows = export(db, out)
    print(f"webcrawl: {_exported(rows, args.what)}", file=sys.stderr)
    return 0


_ROW_NAMES = {"edges": ("link", "links"), "pages": ("page", "pages"),
              "fetches": ("fetch", "fetches"), "rates": ("change rate", "change rates")}


def _exported(rows: int, what: str) -> str:
    """``exported 1 page``, ``exported 2,701 links``: the rows in the user's words."""
    one, many = _ROW_NAMES[what]
    return f"exported {rows:,} {one if rows == 1 else many}"
