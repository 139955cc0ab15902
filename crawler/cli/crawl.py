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
                                   "continues an interrupted crawl.")
    p.add_argument("seeds", nargs="*", metavar="SEED_URL",
                   help="start URLs (optional with --resume)")
    p.add_argument("--db", required=True, type=Path, metavar="PATH", help="the crawl database")
    p.add_argument("--resume", action="store_true", help="continue the crawl stored in --db")
    p.add_argument("--strategy", default=None, metavar="NAME",
                   help="crawl ordering: bfs (default), dfs, random, backlink, pagerank, opic, "
                        "or a registered custom one")
    p.add_argument("--seed", type=nonneg_int, default=d.frontier_seed,
                   help="seed of randomised strategies (default %(default)s)")
    p.add_argument("--allow-host", action="append", default=[], metavar="GLOB",
                   help="crawl hosts matching GLOB (default: the seeds' hosts); repeatable")
    p.add_argument("--allow-domain", action="append", default=[], metavar="DOMAIN",
                   help="crawl DOMAIN and its subdomains; repeatable")
    p.add_argument("--max-pages", type=nonneg_int, default=None, metavar="N")
    p.add_argument("--max-depth", type=nonneg_int, default=None, metavar="N")
    p.add_argument("--max-per-host", type=nonneg_int, default=None, metavar="N")
    p.add_argument("--max-links-per-page", type=positive_int, default=d.links_max_per_page,
                   metavar="N", help="distinct link targets kept per page; a page with more is "
                                     "recorded as cut (default %(default)s)")
    p.add_argument("--sitemaps", action="store_true",
                   help="also take URLs from each host's sitemaps (robots.txt Sitemap: lines, "
                        "else /sitemap.xml), within scope and robots.txt")
    p.add_argument("--retries", type=positive_int, default=d.retry_attempts, metavar="N",
                   help="attempts per URL for transient errors (default %(default)s)")
    p.add_argument("--ca-file", default=None, metavar="PEM", help="extra trusted CA bundle")
    p.add_argument("--insecure", action="store_true",
                   help="do not verify TLS certificates (warned about)")
    add_politeness_options(p, robots_help="do not obey robots.txt (only for your own sites)")
    add_warc_option(p)
    p.add_argument("--json", action="store_true",
                   help="print the final statistics as JSON on stdout")
    p.add_argument("--quiet", action="store_true", help="no progress line, no summary")
    p.set_defaults(func=run)


def _settings(args: argparse.Namespace, strategy: str) -> Any:
    from crawler.settings import CrawlSettings

    return CrawlSettings(
        **politeness_settings(args), **warc_settings(args), retry_attempts=args.retries,
        tls_ca_file=args.ca_file, tls_insecure=args.insecure,
        scope_hosts=tuple(args.allow_host),
        scope_domains=tuple(args.allow_domain), scope_max_pages=args.max_pages,
        scope_max_depth=args.max_depth, scope_max_per_host=args.max_per_host,
        links_max_per_page=args.max_links_per_page, sitemaps_follow=args.sitemaps,
        frontier_strategy=strategy, frontier_seed=args.seed,
    )


def run(args: argparse.Namespace) -> int:
    """Handler of ``webcrawl crawl``."""
    import asyncio
    import sqlite3

    from storage.lock import WriterLock

    if not args.seeds and not args.resume:
        raise ConfigError("give at least one SEED_URL (or --resume)")
    if args.resume and not args.db.exists():
        raise ConfigError(f"nothing to resume: no crawl database at {args.db}")
    if args.db.exists():
        WriterLock.probe(args.db)  # a second writer is refused before the heavy imports

    from analysis.ordering.strategies import get_strategy
    from crawler.engine import Crawler
    from crawler.progress import Progress, format_summary, stop_on_signals

    strategy = args.strategy
    if strategy is None and args.resume:
        try:
            with sqlite3.connect(f"file:{args.db}?mode=ro", uri=True) as conn:
                row = conn.execute("SELECT value FROM meta WHERE key = 'strategy'").fetchone()
            strategy = row[0] if row else None
        except sqlite3.Error:
            strategy = None
    strategy = strategy or "bfs"
    get_strategy(strategy)  # unknown names -> ConfigError listing the known ones
    if args.insecure:
        print("webcrawl: warning: TLS certificate verification is disabled (--insecure)",
              file=sys.stderr)
    settings = _settings(args, strategy)
    crawler = Crawler(args.db, args.seeds, settings, resume=args.resume)

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
