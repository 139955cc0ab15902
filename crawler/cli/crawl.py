"""``webcrawl crawl SEED_URL... --db crawl.db [--resume] ...``: run a polite crawl."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from webcrawl.crawler.cli._common import (
    add_politeness_options,
    add_settings_options,
    add_warc_option,
    nonneg_int,
    politeness_settings,
    positive_int,
    print_json,
    settings_layers,
    size_arg,
    warc_settings,
)
from webcrawl.crawler.cli._help import add_deprecated_alias
from webcrawl.storage.errors import ConfigError

if TYPE_CHECKING:
    from webcrawl.crawler.engine import CrawlStats

__all__ = ["register", "run"]


def register(sub: Any) -> None:
    from webcrawl.crawler.settings import CrawlSettings

    d = CrawlSettings()
    p = sub.add_parser("crawl", help="crawl from seed URLs into a crawl database",
                       description="Crawl politely from SEED_URLs, writing every fetch, URL "
                                   "and link to --db.  Ctrl-C stops cleanly; --resume "
                                   "continues an interrupted (or page-limited) crawl with "
                                   "its stored settings and strategy; options given again "
                                   "replace them, with a note.")
    p.add_argument("seeds", nargs="*", metavar="SEED_URL",
                   help="start URLs (optional with --resume or --input-file)")
    p.add_argument("-i", "--input-file", type=Path, default=None, metavar="FILE",
                   help="read more start URLs from FILE, one a line (blank lines and lines "
                        "starting with '#' are skipped); '-' reads standard input")
    p.add_argument("--db", required=True, type=Path, metavar="PATH", help="the crawl database")
    p.add_argument("--resume", action="store_true",
                   help="continue the crawl stored in --db, with its stored settings")
    p.add_argument("--strategy", default=None, metavar="NAME",
                   help="crawl ordering: bfs (default), dfs, random, backlink, pagerank, opic, "
                        "batch-pagerank, partial-pagerank, larger-sites-first, historical, "
                        "or a registered custom one (a resume keeps the stored one)")
    p.add_argument("--strategy-opt", action="append", default=[], metavar="KEY=VALUE",
                   help="an option of --strategy, e.g. every=500 for batch-pagerank; "
                        "stored with the crawl; repeatable")
    p.add_argument("--history", type=Path, default=None, metavar="DB",
                   help="the previous crawl database --strategy historical ranks by")
    p.add_argument("--random-seed", dest="seed", type=nonneg_int, default=None, metavar="N",
                   help=f"seed of randomised strategies (default {d.frontier_seed})")
    add_deprecated_alias(p, "--seed", "--random-seed")
    p.add_argument("--allow-host", action="append", default=[], metavar="GLOB",
                   help="crawl hosts matching GLOB (default: the seeds' hosts); repeatable")
    p.add_argument("--allow-domain", action="append", default=[], metavar="DOMAIN",
                   help="crawl DOMAIN and its subdomains; repeatable")
    p.add_argument("--max-fetches", "--max-pages", dest="max_pages", type=nonneg_int,
                   default=None, metavar="N",
                   help="stop after N URLs were fetched, over resumes: every URL whose "
                        "request ended counts, whatever the answer (an HTML page, another "
                        "file, a redirect, an HTTP error) or the failure; robots.txt and "
                        "sitemap files do not (default: no limit); the rest stays queued "
                        "for a resume with a higher limit")
    p.add_argument("--max-depth", type=nonneg_int, default=None, metavar="N",
                   help="follow links at most N steps from a seed (default: no limit)")
    p.add_argument("--max-per-host", type=nonneg_int, default=None, metavar="N",
                   help="enqueue at most N URLs of each host (default: no limit)")
    p.add_argument("--max-links-per-page", type=positive_int, default=None, metavar="N",
                   help="distinct link targets kept per page; a page with more is recorded as "
                        f"cut (default {d.links_max_per_page:,})")
    p.add_argument("--sitemaps", action="store_const", const=True, default=None,
                   help="also take URLs from each host's sitemaps (robots.txt Sitemap: lines, "
                        "else /sitemap.xml), within scope and robots.txt")
    p.add_argument("--links-from-duplicates", action="store_const", const=True, default=None,
                   help="also read the links of a page whose body repeats an earlier page's "
                        "(default: a duplicate is recorded, its links are not read, so a "
                        "mirror such as the same site over http and https is not crawled "
                        "twice)")
    p.add_argument("--workers", type=positive_int, default=None, metavar="N",
                   help="worker processes that fetch and extract links, each owning the "
                        "hosts a stable hash gives it; one coordinator writes the database "
                        f"(default {d.workers}: the single-process engine, which is as fast "
                        "on a small crawl and starts quicker; 2 uses both cores of a "
                        "2-core machine; see the user guide, 'Clusters')")
    p.add_argument("--ray", default=None, metavar="ADDRESS",
                   help="run the workers as actors of the Ray cluster whose head is at "
                        "ADDRESS (HOST:PORT); this process stays the coordinator and the "
                        "only database writer (--workers actors, default one per CPU of "
                        "the cluster; needs pip install 'webcrawl[cluster]'; see the user "
                        "guide, 'Clusters')")
    p.add_argument("--memory-limit", type=size_arg, default=None, metavar="SIZE",
                   help="memory the crawl state may hold (URL-seen set, URL tables, "
                        "frontier), e.g. 2G or 512M: past it the frontier spills its "
                        "queues to a file beside the database, and if that is not enough "
                        "the crawl stops cleanly, to resume with a higher limit (default: "
                        "half of the machine's memory); the process's resident memory "
                        "stays under its start-up size (about 85 MB) plus the limit plus "
                        "160 MB of bounded caches and buffers")
    p.add_argument("--retries", type=positive_int, default=None, metavar="N",
                   help=f"attempts per URL for transient errors (default {d.retry_attempts})")
    p.add_argument("--proxy", default=None, metavar="URL",
                   help="send every request through this HTTP proxy (http://[USER:PASS@]HOST"
                        "[:PORT]; https through CONNECT); default: the http_proxy/https_proxy "
                        "environment variables; '' for none; no_proxy applies either way")
    add_politeness_options(p, robots_help="do not obey robots.txt (only for your own sites)")
    add_settings_options(p)
    add_warc_option(p)
    p.add_argument("--json", action="store_true",
                   help="print the final statistics as JSON on stdout")
    p.set_defaults(func=run)


#: Options of ``crawl`` itself (destination -> CrawlSettings field).
_CRAWL_FIELDS = {"retries": "retry_attempts", "seed": "frontier_seed",
                 "max_pages": "scope_max_pages", "max_depth": "scope_max_depth",
                 "max_per_host": "scope_max_per_host", "strategy": "frontier_strategy",
                 "max_links_per_page": "links_max_per_page", "sitemaps": "sitemaps_follow",
                 "workers": "workers", "proxy": "proxy",
                 "links_from_duplicates": "links_from_duplicates",
                 "memory_limit": "memory_limit"}


def _given_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings the command line gives (``--config`` < options < ``--set``)."""
    from webcrawl.crawler.config import merge_layers

    options = {**politeness_settings(args), **warc_settings(args)}
    options.update({name: getattr(args, dest) for dest, name in _CRAWL_FIELDS.items()
                    if getattr(args, dest) is not None})
    if args.allow_host:
        options["scope_hosts"] = tuple(args.allow_host)
    if args.allow_domain:
        options["scope_domains"] = tuple(args.allow_domain)
    return merge_layers(*settings_layers(args, options))


def _strategy_spec(args: argparse.Namespace, given: dict[str, Any]) -> None:
    """Fold ``--strategy-opt`` and ``--history`` into the strategy's spec (stored with
    the crawl as its strategy, see ``analysis.ordering.strategies.registry``)."""
    from webcrawl.analysis.ordering.strategies import strategy_spec

    options = {}
    for opt in args.strategy_opt:
        key, eq, value = opt.partition("=")
        if not eq or not key:
            raise ConfigError(f"--strategy-opt {opt!r}: KEY=VALUE expected")
        options[key] = value
    if args.history is not None:
        options["history"] = str(args.history.resolve())
    if not options:
        return
    if "frontier_strategy" not in given:
        raise ConfigError("--strategy-opt and --history apply to --strategy NAME: give it")
    given["frontier_strategy"] = strategy_spec(given["frontier_strategy"], options)


def run(args: argparse.Namespace) -> int:
    """Handler of ``webcrawl crawl``."""
    from webcrawl.crawler import eventloop
    from webcrawl.storage.lock import WriterLock

    if args.input_file is not None:
        args.seeds = [*args.seeds, *read_seed_file(args.input_file)]
    if not args.seeds and not args.resume:
        raise ConfigError("give at least one SEED_URL (or --input-file FILE, or --resume)")
    if args.resume and not args.db.exists():
        raise ConfigError(f"nothing to resume: no crawl database at {args.db}")
    if args.db.exists():
        WriterLock.probe(args.db)  # a second writer is refused before the heavy imports

    from webcrawl.analysis.ordering.strategies import get_strategy
    from webcrawl.crawler.engine import Crawler
    from webcrawl.crawler.progress import Progress, format_summary, stop_on_signals

    given = _given_settings(args)
    _strategy_spec(args, given)
    if "frontier_strategy" in given:
        get_strategy(given["frontier_strategy"])  # unknown -> ConfigError listing known ones
    # The library layers the settings (a resumed crawl's stored ones first) and picks
    # the downloader: worker processes when they ask for workers > 1.
    if args.ray is not None:
        from webcrawl.crawler.shard.ray_transport import open_ray_crawler

        crawler = open_ray_crawler(args.db, args.seeds, address=args.ray, resume=args.resume,
                                   overrides=given)
    else:
        crawler = Crawler(args.db, args.seeds, resume=args.resume, overrides=given)
    settings = crawler.settings
    for note in crawler.notes:
        print(f"webcrawl: note: {note}", file=sys.stderr)
    if settings.tls_insecure:
        print("webcrawl: warning: TLS certificate verification is disabled (--insecure)",
              file=sys.stderr)

    async def main() -> None:
        from webcrawl.crawler.scope import describe_scope

        used = crawler.settings  # a resumed crawl's stored settings, with any overrides
        progress = Progress(crawler.stats, interval=used.progress_interval,
                            log_interval=used.progress_log_interval,
                            max_pages=used.scope_max_pages,
                            scope=describe_scope(used, crawler.seeds))
        if not args.quiet:
            progress.start()
        with stop_on_signals(crawler.stop):
            try:
                await crawler.run()
            finally:
                await progress.stop()

    eventloop.run(main())
    if args.json:
        print_json(crawler.stats.as_dict())
    elif not args.quiet:
        print(format_summary(crawler.stats), file=sys.stderr)
    if crawler.memory_full is not None:
        print(f"webcrawl: error: {crawler.memory_full}; stopped cleanly, continue with: "
              f"webcrawl crawl --db {args.db} --resume --memory-limit LARGER",
              file=sys.stderr)
        return 1
    if crawler.stats.stopped == "stopped":
        if not args.quiet:
            print(f"stopped; continue with: webcrawl crawl --db {args.db} --resume",
                  file=sys.stderr)
        return 130
    if not args.resume and not answered(crawler.stats.outcomes):
        print(f"webcrawl: error: no seed could be fetched {no_seed_reason(crawler.stats)}",
              file=sys.stderr)
        return EXIT_NO_SEED_FETCHED
    return 0


#: Exit status of a crawl none of whose seeds got an HTTP answer (wget's 4, "network
#: failure"); the statuses are listed in ``webcrawl.crawler.cli``.
EXIT_NO_SEED_FETCHED = 4


def answered(outcomes: Mapping[str, int]) -> int:
    """URLs that got an HTTP answer (any status), among ``outcomes``' counts."""
    from webcrawl.crawler.outcomes import ANSWERED

    return sum(outcomes.get(k, 0) for k in ANSWERED)


def no_seed_reason(stats: CrawlStats) -> str:
    """Why no seed got an answer: the outcomes' counts, then each unreachable host's
    robots.txt and each failed seed with its cause (as the summary line says them)."""
    from webcrawl.crawler.progress import dead_hosts_text

    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(stats.outcomes.items()) if v)
    dead = dead_hosts_text(stats)
    return f"({outcomes or 'no request made'})" + (f": {dead}" if dead else "")


def read_seed_file(path: Path) -> list[str]:
    """Seed URLs from ``path`` (``-``: standard input): one a line, blank lines and
    ``#`` comments skipped."""
    try:
        text = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"no seed file at {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read seeds from {path}: {exc}") from None
    seeds = [line.strip() for line in text.splitlines()]
    return [s for s in seeds if s and not s.startswith("#")]
