"""``webcrawl report --db crawl.db --output report.html``: one self-contained HTML report.

Crawl summary, top pages by PageRank and HITS authority, the bow-tie (numbers and a
drawing), degree laws, quality over time and, when the crawl was revisited, change
rates and freshness; every plot embedded as a PNG data URI (see :mod:`analysis.report.document`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from webcrawl.crawler.cli._common import (
    add_db_option,
    add_graph_option,
    check_output,
    existing_db,
    positive_float,
    positive_int,
)
from webcrawl.crawler.cli._help import add_deprecated_alias
from webcrawl.crawler.cli._output import end_stages, is_stdout, stage_display
from webcrawl.storage.errors import ConfigError

if TYPE_CHECKING:
    from webcrawl.analysis.report import ReportSummary

__all__ = ["register", "run"]


def register(sub: Any) -> None:
    p = sub.add_parser("report", help="write a self-contained HTML report of a crawl",
                       description="Write one self-contained HTML file about a crawl: "
                                   "how it was made, its summary, top pages by PageRank "
                                   "and HITS, the bow-tie, degree laws, quality over time "
                                   "and, when the crawl was revisited, change rates and "
                                   "freshness.")
    add_db_option(p)
    p.add_argument("-o", "--output", dest="out", type=Path, default=Path("report.html"),
                   metavar="FILE",
                   help="the HTML file to write ('-': standard output; default %(default)s)")
    p.add_argument("--compare", default="", metavar="NAMES",
                   help="also replay these orderings virtually over the captured graph "
                        "(comma-separated, e.g. bfs,dfs,random,backlink,pagerank,opic)")
    p.add_argument("--top", type=positive_int, default=20, metavar="K",
                   help="rows of the top-pages tables (default %(default)s)")
    p.add_argument("--day-seconds", dest="seconds_per_day", type=positive_float,
                   default=None, metavar="S",
                   help="length of a day on the crawl's clock for change rates (default: "
                        "the revisit run's, else 86400)")
    add_graph_option(p)
    p.add_argument("--json", action="store_true",
                   help="print what was written as JSON on stdout")
    add_deprecated_alias(p, "--out", "--output")
    add_deprecated_alias(p, "--seconds-per-day", "--day-seconds")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Handler of ``webcrawl report``."""
    from webcrawl.analysis.report import ReportInputs, ReportSettings, build_report

    compare = tuple(name.strip() for name in args.compare.split(",") if name.strip())
    if compare:
        import webcrawl.analysis.ordering.strategies  # noqa: F401  (registers the built-in orderings)
        from webcrawl.analysis.ordering.strategies.registry import get_strategy

        for name in compare:
            get_strategy(name)  # unknown names: one line listing the known ones
    settings = ReportSettings(top_k=args.top, compare=compare,
                              seconds_per_day=args.seconds_per_day, graph=args.graph,
                              duplicates=args.duplicates)
    # The report lists the crawl settings that differ from these defaults.
    from webcrawl.crawler.config import settings_dict
    from webcrawl.crawler.settings import CrawlSettings

    inputs = ReportInputs(setting_defaults=settings_dict(CrawlSettings()))

    if args.json and is_stdout(args.out):
        raise ConfigError("--json and -o - both want standard output")
    db = existing_db(args.db)
    show = stage_display(args)
    if is_stdout(args.out):
        import shutil
        import tempfile

        with tempfile.TemporaryDirectory(prefix="webcrawl-report-") as folder:
            written = Path(folder) / "report.html"
            summary = build_report(db, written, settings=settings, inputs=inputs,
                                   progress=show)
            end_stages(show)
            with open(written, "rb") as html:
                shutil.copyfileobj(html, sys.stdout.buffer)
            sys.stdout.flush()
        out = sys.stderr  # standard output holds the report
    else:
        from webcrawl.storage.output import Way, output_way

        check_output(args.out)
        summary = build_report(db, args.out, settings=settings, inputs=inputs,
                               progress=show)
        end_stages(show)
        # Written through a device, a FIFO or /dev/stdout: the summary goes apart from it.
        out = sys.stderr if output_way(args.out)[0] is Way.THROUGH else sys.stdout
    if args.json:
        from webcrawl.crawler.cli._common import print_json

        print_json({"path": str(summary.path), "size_bytes": summary.size_bytes,
                    "images": summary.images, "pages": summary.pages, "urls": summary.urls,
                    "hosts": summary.hosts, "sections": summary.sections,
                    "rate_error": summary.rate_error, "rate_pages": summary.rate_pages})
        return _no_page(summary, db)
    if args.quiet:
        return _no_page(summary, db)
    missing = ", ".join(f"{k} ({'no data' if k != 'comparison' else 'not requested'})"
                        for k in summary.missing)
    where = "standard output" if is_stdout(args.out) else summary.path
    print(f"wrote {where} ({summary.size_bytes / 1e6:.1f} MB, {summary.images} plots; "
          f"{summary.pages:,} pages, {summary.urls:,} URLs, {summary.hosts} hosts; measured "
          f"on the {summary.graph['description']})"
          + (f"; without: {missing}" if missing else ""), file=out)
    return _no_page(summary, db)


def _no_page(summary: ReportSummary, db: Path) -> int:
    """1, said in one line, when the crawl holds no page: the report written says only
    that every section has nothing to show."""
    if summary.pages:
        return 0
    print(f"webcrawl: error: no page to report: {db} holds {summary.urls:,} URLs and no "
          "fetched HTML page (see webcrawl export pages --db FILE)", file=sys.stderr)
    return 1
