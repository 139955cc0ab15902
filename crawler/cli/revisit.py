"""``webcrawl revisit --db crawl.db --budget R/s --policy P ...``: keep a collection fresh."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from webcrawl.crawler.cli._common import (
    add_politeness_options,
    add_settings_options,
    add_warc_option,
    in_options,
    nonneg_float,
    politeness_settings,
    positive_float,
    positive_int,
    settings_layers,
    settings_options,
    warc_settings,
)
from webcrawl.storage.errors import ConfigError

__all__ = ["parse_budget", "read_true_rates", "register", "run"]

_BUDGET = re.compile(r"^\s*([0-9.eE+-]+)\s*(?:/\s*(s|sec|second|m|min|minute|h|hour))?\s*$")
_PER = {None: 1.0, "s": 1.0, "sec": 1.0, "second": 1.0, "m": 60.0, "min": 60.0,
        "minute": 60.0, "h": 3600.0, "hour": 3600.0}
_POLICIES = ("uniform", "proportional", "optimal", "optimal-age", "polite-optimal")


def parse_budget(text: str) -> float:
    """``10``, ``10/s``, ``600/min``, ``36000/h`` -> fetches per second (ConfigError if bad)."""
    match = _BUDGET.match(text)
    try:
        value = float(match.group(1)) / _PER[match.group(2)] if match else float("nan")
    except ValueError:
        value = float("nan")
    if not (value > 0 and value != float("inf")):
        raise ConfigError(f"--budget must be a positive rate like 10/s, got {text!r}")
    return value


def read_true_rates(path: Path) -> dict[str, float]:
    """URL -> rate per day from a fixture truth ``pages.tsv`` (columns url, lambda;
    a ``final_url`` column maps too)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read --true-rates {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"--true-rates {path}: not UTF-8 text (byte {exc.start}); need a "
                          "TSV with 'url' and 'lambda' columns") from exc
    header = lines[0].split("\t") if lines else []
    if "url" not in header or "lambda" not in header:
        raise ConfigError(f"--true-rates {path}: need a TSV with 'url' and 'lambda' columns")
    iu, il = header.index("url"), header.index("lambda")
    ifin = header.index("final_url") if "final_url" in header else None
    rates: dict[str, float] = {}
    for n, line in enumerate(lines[1:], start=2):
        cells = line.split("\t")
        try:
            lam, url = float(cells[il]), cells[iu]
        except (IndexError, ValueError):
            raise ConfigError(f"--true-rates {path}, line {n}: bad lambda") from None
        rates[url] = lam
        if ifin is not None and len(cells) > ifin and cells[ifin]:
            rates.setdefault(cells[ifin], lam)
    return rates


def register(sub: Any) -> None:
    p = sub.add_parser(
        "revisit", help="keep a crawled collection fresh within a fetch budget",
        description="Revisit the pages of --db (those the crawl fetched as HTML) with "
                    "conditional GETs, at most --budget fetch starts per second, under the "
                    "crawl's politeness rules, scheduling by --policy from change rates "
                    "estimated as it goes.  It connects as the crawl did: the crawl's stored "
                    "settings (resolve rules, CA file or --insecure, User-Agent, scope, "
                    "politeness) apply, and options given here override them with a note.  "
                    "Ctrl-C stops cleanly; running it again continues.")
    p.add_argument("--db", required=True, type=Path, metavar="PATH", help="the crawl database")
    p.add_argument("--budget", required=True, metavar="R/s",
                   help="fetch starts per second over all hosts (10, 10/s, 600/min)")
    p.add_argument("--policy", default="optimal", metavar="P",
                   help="uniform, proportional, optimal (default: the optimum for the "
                        "budget alone, Cho and Garcia-Molina), polite-optimal (the optimum "
                        "under the budget and every host's politeness limit, Kolobov et "
                        "al.) or optimal-age (optimal with --objective age)")
    p.add_argument("--objective", default="freshness", choices=("freshness", "age", "harmonic"),
                   help="what the optimal policies maximise: freshness (default), minus "
                        "age, or minus harmonic staleness")
    p.add_argument("--importance", default="uniform", metavar="W",
                   help="the pages' weights in the objective: uniform (default), pagerank, "
                        "inlinks, or a TSV file with url and weight columns")
    p.add_argument("--duration", type=nonneg_float, default=None, metavar="S",
                   help="seconds to run (default: until Ctrl-C)")
    p.add_argument("--max-visits", type=positive_int, default=None, metavar="N",
                   help="stop after N revisits (the last ones finish first; default: no "
                        "limit)")
    p.add_argument("--day-seconds", type=positive_float, default=None, metavar="S",
                   help="wall seconds per planner day, stored for the analyses (default: "
                        "the one an earlier revisit of --db stored, else 86400; an "
                        "accelerated fixture web's day_seconds)")
    p.add_argument("--volatile", default=None, metavar="REGEX",
                   help="delete matches from each body before comparing digests (default: "
                        "none, the raw body)")
    p.add_argument("--true-rates", type=Path, default=None, metavar="PAGES_TSV",
                   help="plan with known rates (a fixture truth pages.tsv: url, lambda)")
    p.add_argument("--min-frequency", type=nonneg_float, default=0.0, metavar="F",
                   help="revisit every page at least F times per day, out of the budget "
                        "(default 0)")
    p.add_argument("--add-new", action="store_true",
                   help="Cho's page window: pages that revisited pages link to, on the "
                        "collection's hosts, join the collection")
    add_politeness_options(
        p, robots_help="do not obey the stored robots.txt (only for your own sites)")
    p.add_argument("--sitemaps", action=argparse.BooleanOptionalAction, default=None,
                   help="read each host's sitemaps (lastmod, changefreq) as change signals, "
                        "at the start and every --sitemap-interval days (default: when "
                        "the crawl read sitemaps)")
    p.add_argument("--sitemap-interval", type=positive_float, default=1.0, metavar="DAYS",
                   help="planner days between two reads of a host's sitemaps "
                        "(default %(default)s)")
    add_settings_options(p)
    add_warc_option(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    p.set_defaults(func=run, option_of=settings_options(p))


def _given_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The crawl settings the command line gives (``--config`` < options < ``--set``);
    the library layers them over the crawl's stored ones."""
    from webcrawl.crawler.config import merge_layers

    return merge_layers(*settings_layers(
        args, {**politeness_settings(args), **warc_settings(args)}))


def _day_seconds(args: argparse.Namespace) -> float:
    """``--day-seconds``, else the day length an earlier revisit stored, else 86400."""
    from webcrawl.analysis.change.fetch_history import resolve_day_seconds
    from webcrawl.storage.reader import CrawlReader

    with CrawlReader(args.db) as reader:
        return resolve_day_seconds(reader.meta(), args.day_seconds)[0]


def run(args: argparse.Namespace) -> int:
    """Handler of ``webcrawl revisit``."""
    from webcrawl.crawler.cli._common import check_output, existing_db, print_json
    from webcrawl.storage.lock import WriterLock

    budget = parse_budget(args.budget)
    if args.policy not in _POLICIES:
        raise ConfigError(f"unknown policy {args.policy!r}; choose from {', '.join(_POLICIES)}")
    existing_db(args.db)
    WriterLock.probe(args.db)  # a second writer is refused before the heavy imports
    true_rates = read_true_rates(args.true_rates) if args.true_rates else None
    if args.warc is not None:
        check_output(args.warc, folder=True)

    from webcrawl.crawler.revisit.loop import RevisitCrawler, RevisitSettings, run_with_progress

    settings = RevisitSettings(policy=args.policy.replace("-", "_"), budget=budget,
                               objective=args.objective, importance=args.importance,
                               duration=args.duration, max_visits=args.max_visits,
                               day_seconds=_day_seconds(args),
                               volatile=args.volatile, min_frequency=args.min_frequency,
                               add_new=args.add_new, sitemaps=args.sitemaps,
                               sitemap_interval=args.sitemap_interval)
    from webcrawl.crawler import eventloop

    crawler = RevisitCrawler(args.db, settings, true_rates=true_rates,
                             overrides=_given_settings(args))
    for note in crawler.notes:
        print(f"webcrawl: note: {in_options(note, args.option_of)}", file=sys.stderr)
    if crawler.crawl_settings.tls_insecure:
        print("webcrawl: warning: TLS certificate verification is disabled (--insecure)",
              file=sys.stderr)
    stats = eventloop.run(run_with_progress(crawler, show=not args.quiet))
    if args.json:
        print_json(stats.as_dict())
    elif not args.quiet:
        print(stats.summary(), file=sys.stderr)
    if stats.stopped != "stopped":
        return 0
    if args.quiet or args.json:  # a non-zero exit says why (the summary did otherwise)
        print(f"webcrawl: revisit stopped; run it again to continue ({args.db})",
              file=sys.stderr)
    return 130
