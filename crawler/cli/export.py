"""`webcrawl export edges|pages --db crawl.db [--out FILE]`: TSV for other tools.

A thin layer over :func:`storage.export.export_edges` and
:func:`storage.export.export_pages` (columns documented there).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from crawler.cli._common import add_db_option, existing_db

__all__ = ["register"]


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "export",
        help="write a crawl's edges or pages as TSV",
        description="Write a crawl's links (edges: src, dst, nofollow) or its URLs "
                    "(pages: url, status, seq, fetched_at, depth, outcome, host, ...) "
                    "as tab-separated values with a header row.",
    )
    parser.add_argument("what", choices=("edges", "pages"), help="what to export")
    add_db_option(parser)
    parser.add_argument("--out", type=Path, metavar="FILE",
                        help="output file (default: standard output)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from storage.export import export_edges, export_pages

    db = existing_db(args.db)
    export = export_edges if args.what == "edges" else export_pages
    if args.out is None:
        try:
            rows = export(db, sys.stdout)
            sys.stdout.flush()
        except BrokenPipeError:
            # The reader went away (`| head`): not an error; silence the final flush.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
    else:
        with open(args.out, "w", encoding="utf-8", newline="") as out:
            rows = export(db, out)
    print(f"webcrawl: exported {rows:,} {args.what} rows", file=sys.stderr)
    return 0
