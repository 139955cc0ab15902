"""``webcrawl crawl SEED_URL... --db crawl.db [--resume] ...``: run a polite crawl."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from storage.errors import ConfigError

__all__ = ["register", "run"]


def _nonneg_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text}")
    return value


def _pos_float(text: str) -> float:
    value = _nonneg_float(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be > 0")
    return value


def _pos_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text}")
    return value


def _nonneg_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


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
    p.add_argument("--seed", type=_nonneg_int, default=d.frontier_seed,
                   help="seed of randomised strategies (default %(default)s)")
    p.add_argument("--resolve", action="append", default=[], metavar="PATTERN=ADDR",
                   help="resolve hosts matching a glob to ADDR (PATTERN:PORT=ADDR:PORT remaps "
                        "the port); repeatable, e.g. '*.test=127.0.0.1'")
    p.add_argument("--allow-host", action="append", default=[], metavar="GLOB",
                   help="crawl hosts matching GLOB (default: the seeds' hosts); repeatable")
    p.add_argument("--allow-domain", action="append", default=[], metavar="DOMAIN",
                   help="crawl DOMAIN and its subdomains; repeatable")
    p.add_argument("--max-pages", type=_nonneg_int, default=None, metavar="N")
    p.add_argument("--max-depth", type=_nonneg_int, default=None, metavar="N")
    p.add_argument("--max-per-host", type=_nonneg_int, default=None, metavar="N")
    p.add_argument("--delay-factor", type=_nonneg_float, default=d.polite_delay_factor,
                   metavar="F", help="wait F times the last fetch time (default %(default)s)")
    p.add_argument("--min-delay", type=_nonneg_float, default=d.polite_min_delay, metavar="S",
                   help="minimum seconds between requests to a host (default %(default)s)")
    p.add_argument("--max-delay", type=_nonneg_float, default=d.polite_max_delay, metavar="S",
                   help="cap of the computed wait (default %(default)s)")
    p.add_argument("--concurrency", type=_pos_int, default=d.concurrency, metavar="C",
                   help="requests in flight over all hosts (default %(default)s)")
    p.add_argument("--retries", type=_pos_int, default=d.retry_attempts, metavar="N",
                   help="attempts per URL for transient errors (default %(default)s)")
    p.add_argument("--timeout", type=_pos_float, default=d.fetch_total_timeout, metavar="S",
                   help="total seconds per request (default %(default)s)")
    p.add_argument("--user-agent", default=d.fetch_user_agent, metavar="UA")
    p.add_argument("--ca-file", default=None, metavar="PEM", help="extra trusted CA bundle")
    p.add_argument("--insecure", action="store_true",
                   help="do not verify TLS certificates (warned about)")
    p.add_argument("--ignore-robots", action="store_true",
                   help="do not obey robots.txt (only for your own sites)")
    p.add_argument("--quiet", action="store_true", help="no progress line, no summary")
    p.set_defaults(func=run)


def _settings(args: argparse.Namespace, strategy: str) -> Any:
    from crawler.settings import CrawlSettings

    if args.min_delay > args.max_delay:
        raise ConfigError(f"--min-delay ({args.min_delay}) exceeds --max-delay ({args.max_delay})")
    return CrawlSettings(
        polite_delay_factor=args.delay_factor, polite_min_delay=args.min_delay,
        polite_max_delay=args.max_delay, concurrency=args.concurrency,
        retry_attempts=args.retries, fetch_total_timeout=args.timeout,
        fetch_user_agent=args.user_agent, tls_ca_file=args.ca_file, tls_insecure=args.insecure,
        resolve=tuple(args.resolve), scope_hosts=tuple(args.allow_host),
        scope_domains=tuple(args.allow_domain), scope_max_pages=args.max_pages,
        scope_max_depth=args.max_depth, scope_max_per_host=args.max_per_host,
        frontier_strategy=strategy, frontier_seed=args.seed, robots_obey=not args.ignore_robots,
    )


def run(args: argparse.Namespace) -> int:
    """Handler of ``webcrawl crawl``."""
    import asyncio
    import signal
    import sqlite3

    from crawler.engine import Crawler
    from crawler.progress import Progress, format_summary
    from crawler.strategies import get_strategy

    if not args.seeds and not args.resume:
        raise ConfigError("give at least one SEED_URL (or --resume)")
    if args.resume and not args.db.exists():
        raise ConfigError(f"nothing to resume: no crawl database at {args.db}")
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
        loop = asyncio.get_running_loop()
        handled = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, crawler.stop)
                handled.append(sig)
            except (ValueError, RuntimeError):  # not the main thread: no handlers
                pass
        progress = Progress(crawler.stats, interval=settings.progress_interval)
        if not args.quiet:
            progress.start()
        try:
            await crawler.run()
        finally:
            await progress.stop()
            for sig in handled:
                loop.remove_signal_handler(sig)

    asyncio.run(main())
    if not args.quiet:
        print(format_summary(crawler.stats), file=sys.stderr)
    if crawler.stats.stopped == "stopped":
        if not args.quiet:
            print(f"stopped; continue with: webcrawl crawl --db {args.db} --resume",
                  file=sys.stderr)
        return 130
    return 0
