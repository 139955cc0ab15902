"""``webcrawl crawl SEED_URL... --db crawl.db [--resume] ...``: run a polite crawl."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from crawler.cli._common import (
    add_politeness_options,
    add_warc_option,
    nonneg_int,
    politeness_settings,
    positive_int,
    print_json,
    warc_settings,
)
from storage.errors import ConfigError

__all__ = ["register", "run"]


def register(sub: Any) -> None:
    from crawler.settings import CrawlSettings

    d = CrawlSettings()
    p = sub.add_parser("crawl", help="crawl from seed URLs into a crawl database",
                       description="Crawl politely from SEED_URLs, writing every fetch, URL "
                                   "and link to --db.  Ctrl-C stops cleanly; --resume "
                                   "continues an interrupted (or page-limited) crawl with "
                                   "its stored options; options given again replace them.")
    p.add_argument("seeds", nargs="*", metavar="SEED_URL",
                   help="start URLs (optional with --resume)")
    p.add_argument("--db", required=True, type=Path, metavar="PATH", help="the crawl database")
    p.add_argument("--resume", action="store_true",
                   help="continue the crawl stored in --db, with its stored options")
    p.add_argument("--strategy", default=None, metavar="NAME",
                   help="crawl ordering: bfs (default), dfs, random, backlink, pagerank, opic, "
                        "or a registered custom one (a resume keeps the stored one)")
    p.add_argument("--seed", type=nonneg_int, default=None,
                   help=f"seed of randomised strategies (default {d.frontier_seed})")
    p.add_argument("--allow-host", action="append", default=None, metavar="GLOB",
                   help="crawl hosts matching GLOB (default: the seeds' hosts); repeatable")
    p.add_argument("--allow-domain", action="append", default=None, metavar="DOMAIN",
                   help="crawl DOMAIN and its subdomains; repeatable")
    p.add_argument("--max-pages", type=nonneg_int, default=None, metavar="N",
                   help="pages fetched in total, over resumes (default: no limit)")
    p.add_argument("--max-depth", type=nonneg_int, default=None, metavar="N",
                   help="link depth from a seed (default: no limit)")
    p.add_argument("--max-per-host", type=nonneg_int, default=None, metavar="N",
                   help="URLs enqueued per host (default: no limit)")
    p.add_argument("--retries", type=positive_int, default=None, metavar="N",
                   help=f"attempts per URL for transient errors (default {d.retry_attempts})")
    p.add_argument("--ca-file", default=None, metavar="PEM", help="extra trusted CA bundle")
    p.add_argument("--insecure", action="store_true", default=None,
                   help="do not verify TLS certificates (warned about)")
    add_politeness_options(p, robots_help="do not obey robots.txt (only for your own sites)",
                           given_only=True)
    add_warc_option(p)
    p.add_argument("--json", action="store_true",
                   help="print the final statistics as JSON on stdout")
    p.add_argument("--quiet", action="store_true", help="no progress line, no summary")
    p.set_defaults(func=run)


def _given_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The ``CrawlSettings`` fields of the options given on the command line."""
    values = {
        "retry_attempts": args.retries, "tls_ca_file": args.ca_file,
        "tls_insecure": args.insecure,
        "scope_hosts": None if args.allow_host is None else tuple(args.allow_host),
        "scope_domains": None if args.allow_domain is None else tuple(args.allow_domain),
        "scope_max_pages": args.max_pages, "scope_max_depth": args.max_depth,
        "scope_max_per_host": args.max_per_host, "frontier_strategy": args.strategy,
        "frontier_seed": args.seed,
    }
    given = {k: v for k, v in values.items() if v is not None}
    given.update(politeness_settings(args))
    given.update(warc_settings(args))
    return given


def run(args: argparse.Namespace) -> int:
    """Handler of ``webcrawl crawl``."""
    import asyncio

    from storage.lock import WriterLock

    if not args.seeds and not args.resume:
        raise ConfigError("give at least one SEED_URL (or --resume)")
    if args.db.exists():
        WriterLock.probe(args.db)  # a second writer is refused before the heavy imports

    from analysis.ordering.strategies import get_strategy
    from crawler.engine import Crawler
    from crawler.progress import Progress, format_summary, stop_on_signals

    if args.strategy is not None:
        get_strategy(args.strategy)  # unknown names -> ConfigError listing the known ones
    crawler = Crawler(args.db, args.seeds, resume=args.resume, overrides=_given_settings(args))
    settings = crawler.settings
    for note in crawler.notes:
        print(f"webcrawl: {note}", file=sys.stderr)
    if settings.tls_insecure:
        print("webcrawl: warning: TLS certificate verification is disabled (--insecure)",
              file=sys.stderr)

    async def main() -> None:
        progress = Progress(crawler.stats, interval=settings.progress_interval)
        if not args.quiet:
            progress.start()
        with stop_on_signals(crawler.stop):
            try:
                await crawler.run()
            finally:
                await progress.stop()

    asyncio.run(main())
    if args.json:
        print_json(crawler.stats.as_dict())
    elif not args.quiet:
        print(format_summary(crawler.stats), file=sys.stderr)
    if crawler.stats.stopped == "stopped":
        if not args.quiet:
            print(f"stopped; continue with: webcrawl crawl --db {args.db} --resume",
                  file=sys.stderr)
        return 130
    return 0
